/* A region's zstd frame must need at most an 8 MiB window (docs/FORMAT.md 9.2), whatever its content size.
 * zstd's own limit holds only where it decodes in steps, so a frame declaring a 1 GiB window over 9 KiB of content
 * was decoded in one go, and verify called the file sound. Frames built by hand (one raw block), decoded with
 * xp_transport_decode_region (what verify and inflate call for every region): windows of 2^30 and 2^24 bytes are
 * refused naming the window, 2^23 decodes. And a frame whose header declares 1 TiB over one 128 KiB RLE block (a 1.2 KB
 * transport file once had inflate ask the file system for a terabyte): xp_transport_check_region, which inflate runs
 * on every region before asking for room, refuses it from its blocks; the raw frames pass it. Blocks larger than the
 * frame's Block_Maximum_Size, min(window, 128 KiB) (RFC 8878), which libzstd decodes without a word (an 18-byte frame
 * of a 1 KiB window decoded 1 MiB from one RLE block), and a header setting its reserved bit, are refused naming
 * them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "../core/expect.h"
#include "cachefile/cache_view.h"
#include "transport/transport.h"

enum { CONTENT = 9344 };

/* Magic, a header with a Window_Descriptor (not single-segment) and a 4-byte Frame_Content_Size, one raw block. */
static size_t build_frame(uint8_t* out, const uint8_t* content, unsigned window_log) {
  size_t n = 0;
  const uint8_t magic[4] = {0x28, 0xB5, 0x2F, 0xFD};
  memcpy(out, magic, 4), n += 4;
  out[n++] = 0x80;                                  /* Frame_Content_Size_flag 2 (4 bytes), nothing else */
  out[n++] = (uint8_t)((window_log - 10) << 3);     /* Window_Descriptor: exponent, mantissa 0 */
  for (int i = 0; i < 4; i++) out[n++] = (uint8_t)(CONTENT >> (8 * i));
  const uint32_t block = 1u | (0u << 1) | ((uint32_t)CONTENT << 3); /* last, raw, size */
  for (int i = 0; i < 3; i++) out[n++] = (uint8_t)(block >> (8 * i));
  memcpy(out + n, content, CONTENT), n += CONTENT;
  return n;
}

/* Magic, a header with a Window_Descriptor and an 8-byte Frame_Content_Size, one RLE block. */
static size_t build_rle_frame(uint8_t* out, unsigned window_log, uint64_t declared, uint32_t rle_size) {
  size_t n = 0;
  const uint8_t magic[4] = {0x28, 0xB5, 0x2F, 0xFD};
  memcpy(out, magic, 4), n += 4;
  out[n++] = 0xC0;                                  /* Frame_Content_Size_flag 3 (8 bytes) */
  out[n++] = (uint8_t)((window_log - 10) << 3);
  for (int i = 0; i < 8; i++) out[n++] = (uint8_t)(declared >> (8 * i));
  const uint32_t block = 1u | (1u << 1) | (rle_size << 3); /* last, RLE, size */
  for (int i = 0; i < 3; i++) out[n++] = (uint8_t)(block >> (8 * i));
  out[n++] = 0x5A;
  return n;
}

/* check_region and decode_region of a frame both refuse it, with a message holding `expected`. */
static void expect_refused(xp_transport_decoder* d, const uint8_t* frame, size_t n, uint64_t content, uint64_t hash,
                           const char* expected, const char* label) {
  xp_view v;
  memset(&v, 0, sizeof v);
  v.base = frame;
  v.size = n;
  const xp_region r = {0, n, content, hash};
  char what[512] = "";
  xpack_status st = xp_transport_check_region(&v, &r, what, sizeof what);
  EXPECT_MSG(st == XPACK_ERR_CORRUPT && strstr(what, expected) != NULL, "%s: check_region status %d, '%s'", label,
             (int)st, what);
  printf("%s: %s\n", label, what);
  xpack_error err;
  what[0] = 0;
  st = xp_transport_decode_region(d, &v, &r, NULL, 0, what, sizeof what, &err);
  EXPECT_MSG(st == XPACK_ERR_CORRUPT && strstr(what, expected) != NULL, "%s: decode_region status %d, '%s'", label,
             (int)st, what);
}

int main(void) {
  static uint8_t content[CONTENT], frame[CONTENT + 64];
  for (size_t i = 0; i < CONTENT; i++) content[i] = (uint8_t)(i * 131 + 7);
  xp_transport_decoder d;
  xpack_error err;
  if (xp_transport_decoder_init(&d, &err) != XPACK_OK) {
    fprintf(stderr, "%s\n", err.message);
    return 2;
  }
  const unsigned logs[] = {30, 24, 23};
  for (size_t i = 0; i < sizeof logs / sizeof logs[0]; i++) {
    xp_view v;
    memset(&v, 0, sizeof v);
    v.base = frame;
    const size_t n = build_frame(frame, content, logs[i]);
    v.size = n;
    const xp_region r = {0, n, CONTENT, XXH3_64bits(content, CONTENT)};
    char what[512] = "";
    const xpack_status st = xp_transport_decode_region(&d, &v, &r, NULL, 0, what, sizeof what, &err);
    if (logs[i] > 23) {
      EXPECT_MSG(st == XPACK_ERR_CORRUPT && strstr(what, "window") != NULL,
                 "a window of 2^%u bytes over %d bytes of content: status %d, '%s'", logs[i], CONTENT, (int)st, what);
    } else {
      EXPECT_MSG(st == XPACK_OK, "a window of 2^23 bytes: status %d, '%s'", (int)st, what);
    }
    printf("window 2^%u: %s%s\n", logs[i], st == XPACK_OK ? "decoded" : "refused: ", what);
    const xpack_status checked = xp_transport_check_region(&v, &r, what, sizeof what);
    EXPECT_MSG((checked == XPACK_OK) == (logs[i] <= 23), "check_region of the window 2^%u frame: status %d, '%s'",
               logs[i], (int)checked, what);
  }
  size_t n = build_rle_frame(frame, 17, 1ull << 40, 128 * 1024);
  expect_refused(&d, frame, n, 1ull << 40, 0, "hold at most 131072 bytes", "2^40 bytes declared over 128 KiB");
  n = build_rle_frame(frame, 10, 1 << 20, 1 << 20);
  expect_refused(&d, frame, n, 1 << 20, 0, "is 1048576 bytes, more than the frame's block maximum 1024",
                 "one RLE block of 1 MiB in a 1 KiB window");
  n = build_rle_frame(frame, 23, 256 * 1024, 256 * 1024);
  expect_refused(&d, frame, n, 256 * 1024, 0, "is 262144 bytes, more than the frame's block maximum 131072",
                 "one RLE block of 256 KiB in an 8 MiB window");
  const uint64_t hash = XXH3_64bits(content, CONTENT);
  n = build_frame(frame, content, 10);
  expect_refused(&d, frame, n, CONTENT, hash, "is 9344 bytes, more than the frame's block maximum 1024",
                 "one raw block of 9344 bytes in a 1 KiB window");
  n = build_frame(frame, content, 23);
  frame[4] |= 0x08;
  expect_refused(&d, frame, n, CONTENT, hash, "reserved bit", "a frame header setting its reserved bit");
  xp_transport_decoder_free(&d);
  printf("frame_window: %d failure(s)\n", failures);
  return failures ? 1 : 0;
}
