/* Damage a transport-form cache on purpose and inflate every damaged copy through the public API:
 * inflate must either fail with a message naming the file (and, for frame bytes, the region and its
 * offset), leaving the previous output untouched and no temporary file behind, or succeed with exactly
 * the expected mappable bytes (damage to bytes nothing reads, such as padding). Never a crash, never a
 * partial or wrong output.
 *
 * usage: inflate_flip TRANSPORT.xpc EXPECTED.xpc WORKDIR [FRAME_STEP]
 *   every byte of the header, of the metadata area and of the footer is flipped, and every FRAME_STEP-th
 *   byte (default 1) of the data area; then truncations and an appended byte.
 * Links only the xpack_inflate library: it also shows that inflate needs neither XNNPACK nor the packer. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "xpack_transport.h"

static const char kSentinel[] = "the previous output, which a failed inflate must leave alone\n";

static uint8_t* read_file(const char* path, size_t* size) {
  FILE* f = fopen(path, "rb");
  if (f == NULL) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  uint8_t* b = malloc(n > 0 ? (size_t)n : 1);
  if (b != NULL && fread(b, 1, (size_t)n, f) != (size_t)n) {
    free(b);
    b = NULL;
  }
  fclose(f);
  *size = (size_t)n;
  return b;
}

static int write_file(const char* path, const void* bytes, size_t n) {
  FILE* f = fopen(path, "wb");
  if (f == NULL) return -1;
  int ok = fwrite(bytes, 1, n, f) == n;
  return (fclose(f) == 0 && ok) ? 0 : -1;
}

static int count_entries(const char* dir) {
  DIR* d = opendir(dir);
  int n = 0;
  for (struct dirent* e; d != NULL && (e = readdir(d)) != NULL;) {
    if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) n++;
  }
  if (d) closedir(d);
  return n;
}

typedef struct run {
  const char* dir;
  char bad[4096], out[4096];
  const uint8_t* expected;
  size_t expected_size;
  long detected, harmless, failures;
} run;

static uint64_t le64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; i--) v = (v << 8) | p[i];
  return v;
}

/* Inflates the damaged copy already written to r->bad and checks the outcome. */
static void check(run* r, const char* what, long at, int in_frame) {
  if (write_file(r->out, kSentinel, sizeof kSentinel - 1) != 0) {
    fprintf(stderr, "FAIL: cannot write %s\n", r->out);
    exit(1);
  }
  xpack_error err;
  xpack_status st = xpack_inflate_file(r->bad, r->out, NULL, &err);
  size_t n = 0;
  uint8_t* got = read_file(r->out, &n);
  if (st == XPACK_OK) {
    if (got == NULL || n != r->expected_size || memcmp(got, r->expected, n) != 0) {
      printf("WRONG OUTPUT: %s at %ld: inflate succeeded with bytes that differ from the expected file\n", what, at);
      r->failures++;
    } else {
      r->harmless++;
    }
  } else {
    r->detected++;
    if (got == NULL || n != sizeof kSentinel - 1 || memcmp(got, kSentinel, n) != 0) {
      printf("CLOBBERED: %s at %ld: a failed inflate changed the output file\n", what, at);
      r->failures++;
    }
    if (strstr(err.message, r->bad) == NULL) {
      printf("UNNAMED: %s at %ld: the message does not name the input: %s\n", what, at, err.message);
      r->failures++;
    }
    if (in_frame && st == XPACK_ERR_CORRUPT && strstr(err.message, "region ") == NULL) {
      printf("UNNAMED REGION: %s at %ld: %s\n", what, at, err.message);
      r->failures++;
    }
    if (st == XPACK_ERR_NOMEM || st == XPACK_ERR_ARG) {
      printf("WRONG STATUS: %s at %ld: %s: %s\n", what, at, xpack_status_name(st), err.message);
      r->failures++;
    }
  }
  free(got);
  if (count_entries(r->dir) != 2) {
    printf("LEFTOVER: %s at %ld: the work directory holds a temporary file\n", what, at);
    r->failures++;
  }
}

int main(int argc, char** argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: inflate_flip TRANSPORT.xpc EXPECTED.xpc WORKDIR [FRAME_STEP]\n");
    return 2;
  }
  size_t size = 0;
  run r = {.dir = argv[3]};
  uint8_t* good = read_file(argv[1], &size);
  uint8_t* expected = read_file(argv[2], &r.expected_size);
  long step = argc > 4 ? strtol(argv[4], NULL, 10) : 1;
  if (good == NULL || expected == NULL || size < 144 || step < 1 || count_entries(r.dir) != 0) {
    fprintf(stderr, "FAIL: unreadable inputs or a work directory that is not empty\n");
    return 1;
  }
  r.expected = expected;
  snprintf(r.bad, sizeof r.bad, "%s/bad.xpc", r.dir);
  snprintf(r.out, sizeof r.out, "%s/out.xpc", r.dir);
  /* The intact file inflates to the expected bytes. */
  write_file(r.bad, good, size);
  check(&r, "intact", 0, 0);
  if (r.failures || r.harmless != 1) {
    printf("FAIL: the intact transport file does not inflate to the expected file\n");
    return 1;
  }
  r.harmless = 0;
  const long data_end = (long)(le64(good + 32) + le64(good + 40));
  uint8_t* copy = malloc(size + 1);
  for (long at = 0; at < (long)size; at++) {
    int in_frame = at >= 64 && at < data_end;
    if (in_frame && (at - 64) % step != 0) continue;
    memcpy(copy, good, size);
    copy[at] ^= in_frame ? 0x80 : 0x10;
    write_file(r.bad, copy, size);
    check(&r, in_frame ? "frame byte flipped" : "byte flipped", at, in_frame);
  }
  const long lengths[] = {0, 1, 8, 63, 64, 65, 100, data_end / 2, data_end - 1, data_end, (long)size / 2,
                          (long)size - 81, (long)size - 80, (long)size - 1};
  for (size_t i = 0; i < sizeof lengths / sizeof lengths[0]; i++) {
    if (lengths[i] < 0 || lengths[i] >= (long)size) continue;
    write_file(r.bad, good, (size_t)lengths[i]);
    check(&r, "truncated to", lengths[i], 0);
  }
  memcpy(copy, good, size);
  copy[size] = 0;
  write_file(r.bad, copy, size + 1);
  check(&r, "one byte appended", (long)size, 0);
  printf("inflate_flip: %ld damaged copies refused, %ld harmless (inflated to the expected bytes), %ld failures\n",
         r.detected, r.harmless, r.failures);
  unlink(r.bad);
  unlink(r.out);
  free(copy);
  free(good);
  free(expected);
  return r.failures ? 1 : 0;
}
