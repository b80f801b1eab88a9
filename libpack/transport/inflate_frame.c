/* Decoding one region of a transport-form file: one zstd frame, streamed through a fixed buffer, its bytes
 * hashed and handed on as they come, so memory does not grow with the region. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>
#define XXH_STATIC_LINKING_ONLY /* XXH3_state_t on the stack */
#include <xxhash.h>
#define ZSTD_STATIC_LINKING_ONLY /* ZSTD_getFrameHeader: the frame's window and block maximum */
#include <zstd.h>

#include "common/error.h"
#include "common/le.h"
#include "transport/transport.h"

xpack_status xp_transport_decoder_init(xp_transport_decoder* d, xpack_error* err) {
  d->dctx = ZSTD_createDCtx();
  d->buffer = malloc(XT_BUFFER_SIZE);
  if (d->dctx == NULL || d->buffer == NULL ||
      ZSTD_isError(ZSTD_DCtx_setParameter(d->dctx, ZSTD_d_windowLogMax, XT_WINDOW_LOG_MAX))) {
    xp_transport_decoder_free(d);
    return xp_fail(err, XPACK_ERR_NOMEM, "out of memory for a zstd decompression context");
  }
  return XPACK_OK;
}

void xp_transport_decoder_free(xp_transport_decoder* d) {
  ZSTD_freeDCtx(d->dctx);
  free(d->buffer);
  d->dctx = NULL;
  d->buffer = NULL;
}

/* Drops the whole pages of [p, p + n) from this process's read-only file mapping: zstd has read them and
 * never goes back (matches refer to its window, not to the input). They stay in the page cache. */
static void release_pages(const uint8_t* p, size_t n) {
  const uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
  uintptr_t start = ((uintptr_t)p + page - 1) / page * page, end = ((uintptr_t)p + n) / page * page;
  if (end > start) madvise((void*)start, end - start, MADV_DONTNEED);
}

#define FAULT(...) (snprintf(what, what_size, __VA_ARGS__), XPACK_ERR_CORRUPT)

/* The frame's header and extent, before any byte is decoded. */
static xpack_status check_frame(const uint8_t* frame, const xp_region* r, ZSTD_frameHeader* header, char* what,
                                size_t what_size) {
  const size_t n = (size_t)r->stored_size;
  if (n < 4 || xp_le32(frame) != ZSTD_MAGICNUMBER) {
    return FAULT("does not start with the zstd frame magic 28 b5 2f fd");
  }
  if (n >= 5 && (frame[4] & 0x08)) {
    return FAULT("the zstd frame header descriptor (byte 4, %02x) sets its reserved bit (RFC 8878 3.1.1.1.1)", frame[4]);
  }
  unsigned long long content = ZSTD_getFrameContentSize(frame, n);
  if (content == ZSTD_CONTENTSIZE_ERROR) return FAULT("the zstd frame header is malformed or cut short");
  if (content == ZSTD_CONTENTSIZE_UNKNOWN) return FAULT("the zstd frame header does not declare its content size");
  if (content != r->size) {
    return FAULT("the zstd frame declares %llu bytes of content, the region record says %llu", content,
                 (unsigned long long)r->size);
  }
  /* zstd's own limit (ZSTD_d_windowLogMax) holds only where it decodes in steps: a frame whose content fits the
   * output buffer is decoded in one go whatever window it declares, and verify called such a file sound. */
  if (ZSTD_getFrameHeader(header, frame, n) != 0) return FAULT("the zstd frame header is malformed or cut short");
  if (header->windowSize > (1ull << XT_WINDOW_LOG_MAX)) {
    return FAULT("the zstd frame needs a window of %llu bytes, more than the %llu FORMAT.md 9.2 allows",
                 (unsigned long long)header->windowSize, 1ull << XT_WINDOW_LOG_MAX);
  }
  unsigned dict = ZSTD_getDictID_fromFrame(frame, n);
  if (dict != 0) return FAULT("the zstd frame needs dictionary %u; regions use none", dict);
  size_t extent = ZSTD_findFrameCompressedSize(frame, n);
  if (ZSTD_isError(extent)) {
    return FAULT("the zstd frame is damaged or longer than the %llu bytes stored: %s",
                 (unsigned long long)r->stored_size, ZSTD_getErrorName(extent));
  }
  if (extent != n) {
    return FAULT("the zstd frame is %zu bytes, stored_size says %llu (one frame and nothing after it)", extent,
                 (unsigned long long)r->stored_size);
  }
  return XPACK_OK;
}

/* Every block within the frame's Block_Maximum_Size, min(window, 128 KiB) (RFC 8878 3.1.1.2.3), and the most
 * content they can decode to: a raw or RLE block its block size, a compressed one the block maximum. libzstd
 * decodes oversized raw and RLE blocks without a word (one 18-byte frame declaring a 1 KiB window decoded 1 MiB),
 * and ZSTD_decompressBound answers the header's content size where there is one, which is what is in question. */
static xpack_status check_blocks(const uint8_t* frame, const xp_region* r, const ZSTD_frameHeader* header,
                                 char* what, size_t what_size) {
  const size_t n = (size_t)r->stored_size;
  const unsigned long long block_max = header->blockSizeMax;
  unsigned long long bound = 0;
  for (size_t at = header->headerSize;;) {
    if (n - at < 3) return FAULT("the zstd frame's block header at frame offset %zu is cut short", at);
    const uint32_t block = (uint32_t)frame[at] | (uint32_t)frame[at + 1] << 8 | (uint32_t)frame[at + 2] << 16;
    const uint32_t type = (block >> 1) & 3, size = block >> 3;
    const size_t stored = type == 1 ? 1 : size; /* an RLE block stores its one byte */
    if (type == 3) return FAULT("the zstd block at frame offset %zu is of the reserved type 3", at);
    if (stored > n - at - 3) {
      return FAULT("the zstd block at frame offset %zu stores %zu bytes, past the frame's end", at, stored);
    }
    if (size > block_max) {
      return FAULT("the zstd block at frame offset %zu is %u bytes, more than the frame's block maximum %llu "
                   "(RFC 8878 3.1.1.2.3)", at, size, block_max);
    }
    bound += type == 2 ? block_max : size;
    at += 3 + stored;
    if (block & 1) break;
  }
  /* A 1.2 KB frame declaring 1 TiB once had inflate ask the file system for a terabyte, and report no room, before
   * a byte was decoded. */
  if (bound < r->size) {
    return FAULT("the zstd frame's blocks hold at most %llu bytes, its header and the region record say %llu", bound,
                 (unsigned long long)r->size);
  }
  return XPACK_OK;
}

xpack_status xp_transport_check_region(const xp_view* v, const xp_region* r, char* what, size_t what_size) {
  const uint8_t* frame = v->base + r->offset;
  ZSTD_frameHeader header;
  xpack_status st = check_frame(frame, r, &header, what, what_size);
  if (st != XPACK_OK) return st;
  return check_blocks(frame, r, &header, what, what_size);
}

xpack_status xp_transport_decode_region(xp_transport_decoder* d, const xp_view* v, const xp_region* r, const xp_transport_sink* sink,
                                        uint64_t out_offset, char* what, size_t what_size, xpack_error* err) {
  const uint8_t* frame = v->base + r->offset;
  xpack_status st = xp_transport_check_region(v, r, what, what_size);
  if (st != XPACK_OK) return st;
  ZSTD_DCtx* dctx = d->dctx;
  ZSTD_DCtx_reset(dctx, ZSTD_reset_session_only);
  XXH3_state_t hash;
  XXH3_64bits_reset(&hash);
  ZSTD_inBuffer in = {frame, (size_t)r->stored_size, 0};
  uint64_t produced = 0;
  size_t released = 0;
  for (;;) {
    ZSTD_outBuffer out = {d->buffer, XT_BUFFER_SIZE, 0};
    size_t more = ZSTD_decompressStream(dctx, &out, &in);
    if (ZSTD_isError(more)) {
      return FAULT("zstd: %s (after %llu of %llu bytes)", ZSTD_getErrorName(more), (unsigned long long)produced,
                   (unsigned long long)r->size);
    }
    if (out.pos > r->size - produced) {
      return FAULT("the zstd frame decodes to more than %llu bytes", (unsigned long long)r->size);
    }
    if (out.pos > 0) {
      XXH3_64bits_update(&hash, d->buffer, out.pos);
      if (sink != NULL) {
        st = sink->write(sink->context, d->buffer, out.pos, out_offset + produced, err);
        if (st != XPACK_OK) return st;
      }
      produced += out.pos;
    }
    if (d->release_input && in.pos - released >= XT_BUFFER_SIZE) {
      release_pages(frame + released, in.pos - released);
      released = in.pos;
    }
    if (more == 0) break; /* the frame is complete */
    if (in.pos == in.size && out.pos < out.size) {
      return FAULT("the zstd frame ends after %llu of its %llu bytes of content", (unsigned long long)produced,
                   (unsigned long long)r->size);
    }
  }
  if (d->release_input) release_pages(frame + released, in.pos - released);
  if (produced != r->size) {
    return FAULT("the zstd frame decodes to %llu bytes, the region record says %llu", (unsigned long long)produced,
                 (unsigned long long)r->size);
  }
  uint64_t h = XXH3_64bits_digest(&hash);
  if (h != r->hash) {
    return FAULT("XXH3-64 of its %llu decoded bytes is %016llx, the record says %016llx", (unsigned long long)r->size,
                 (unsigned long long)h, (unsigned long long)r->hash);
  }
  return XPACK_OK;
}
