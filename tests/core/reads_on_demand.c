/* xpack_et_reads_on_demand, which the replay asks before it collects what to read ahead
 * (libpack/replay/replay_read_ahead.c): true exactly when a program or .ptd of the sources was opened with
 * XPACK_ET_OPEN_WEIGHTS_ON_DEMAND and is large enough to be read on demand (512 KiB and more); false for the
 * same files opened without the flag, for a small file with it, for bytes opened from memory, for NULL.
 *   reads_on_demand LARGE.pte SMALL.pte SPLIT.pte SPLIT.ptd
 * LARGE.pte holds its weights (over 512 KiB); SMALL.pte is under 512 KiB; SPLIT.pte is small and keeps its
 * weights in SPLIT.ptd, which is large. */
#include <stdio.h>
#include <stdlib.h>

#include "expect.h"
#include "xpack_executorch.h"

static xpack_et_program* open_program(const char* path, unsigned flags) {
  xpack_et_program* p = NULL;
  xpack_error err;
  const xpack_status st = xpack_et_program_open_flags(path, flags, &p, &err);
  EXPECT_MSG(st == XPACK_OK, "%s: %s", path, err.message);
  return p;
}

static xpack_et_ptd* open_ptd(const char* path, unsigned flags) {
  xpack_et_ptd* t = NULL;
  xpack_error err;
  const xpack_status st = xpack_et_ptd_open_flags(path, flags, &t, &err);
  EXPECT_MSG(st == XPACK_OK, "%s: %s", path, err.message);
  return t;
}

static int program_alone(const xpack_et_program* p) {
  const xpack_et_named_sources sources = {p, NULL, 0};
  return xpack_et_reads_on_demand(&sources);
}

/* The whole file, read into memory (the caller frees it); NULL on failure. */
static void* read_whole(const char* path, size_t* size) {
  FILE* f = fopen(path, "rb");
  if (f == NULL) return NULL;
  void* bytes = NULL;
  if (fseek(f, 0, SEEK_END) == 0) {
    const long n = ftell(f);
    if (n > 0 && fseek(f, 0, SEEK_SET) == 0 && (bytes = malloc((size_t)n)) != NULL &&
        fread(bytes, 1, (size_t)n, f) != (size_t)n) {
      free(bytes);
      bytes = NULL;
    }
    *size = (size_t)n;
  }
  fclose(f);
  return bytes;
}

int main(int argc, char** argv) {
  if (argc != 5) {
    fprintf(stderr, "usage: reads_on_demand LARGE.pte SMALL.pte SPLIT.pte SPLIT.ptd\n");
    return 2;
  }
  const unsigned on_demand = XPACK_ET_OPEN_WEIGHTS_ON_DEMAND;
  EXPECT(!xpack_et_reads_on_demand(NULL));
  const xpack_et_named_sources empty = {NULL, NULL, 0};
  EXPECT(!xpack_et_reads_on_demand(&empty));

  xpack_et_program* large = open_program(argv[1], on_demand);
  EXPECT_MSG(large && program_alone(large), "%s, over 512 KiB, opened on demand", argv[1]);
  xpack_et_program_close(large);
  large = open_program(argv[1], 0);
  EXPECT_MSG(large && !program_alone(large), "%s opened without the flag", argv[1]);
  xpack_et_program_close(large);

  xpack_et_program* small = open_program(argv[2], on_demand);
  EXPECT_MSG(small && !program_alone(small), "%s, under 512 KiB: read whole despite the flag", argv[2]);
  xpack_et_program_close(small);

  size_t size = 0;
  void* bytes = read_whole(argv[1], &size);
  EXPECT_MSG(bytes != NULL, "%s: read", argv[1]);
  if (bytes != NULL) {
    xpack_et_program* in_memory = NULL;
    xpack_error err;
    EXPECT_MSG(xpack_et_program_open_memory(bytes, size, argv[1], &in_memory, &err) == XPACK_OK, "%s", err.message);
    EXPECT_MSG(in_memory && !program_alone(in_memory), "%s from memory", argv[1]);
    xpack_et_program_close(in_memory);
    free(bytes);
  }

  /* A small program whose large .ptd is read on demand: the .ptd decides, wherever it stands in the list. */
  xpack_et_program* split = open_program(argv[3], on_demand);
  xpack_et_ptd* weights = open_ptd(argv[4], on_demand);
  xpack_et_ptd* weights_whole = open_ptd(argv[4], 0);
  EXPECT_MSG(split && !program_alone(split), "%s, small", argv[3]);
  const xpack_et_ptd* both[2] = {weights_whole, weights};
  const xpack_et_named_sources with_ptd = {split, both, 2};
  EXPECT_MSG(xpack_et_reads_on_demand(&with_ptd), "%s opened on demand, second of two .ptd", argv[4]);
  const xpack_et_named_sources whole_only = {split, both, 1};
  EXPECT_MSG(!xpack_et_reads_on_demand(&whole_only), "%s opened without the flag", argv[4]);
  const xpack_et_ptd* with_null[2] = {NULL, weights};
  const xpack_et_named_sources null_first = {NULL, with_null, 2};
  EXPECT(xpack_et_reads_on_demand(&null_first));
  xpack_et_ptd_close(weights_whole);
  xpack_et_ptd_close(weights);
  xpack_et_program_close(split);
  return failures != 0;
}
