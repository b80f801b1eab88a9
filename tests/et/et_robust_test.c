/* Damaged copies of every real file (truncated at many lengths, bit-flipped, byte-smashed) never
 * crash the readers: each parse either succeeds or returns an error with a message. Every copy is an
 * exactly-sized heap block so a sanitizer build sees any overread; some copies are also written to a
 * temporary directory and opened by path to exercise the mmap route.
 * usage: et_robust_test <real-testdata-dir> [iterations-per-file]   (exit 77 when the folder is absent) */
#include <dirent.h>
#include <stdbool.h>
#include <stdint.h>
#include <unistd.h>

#include "et_test_util.h"
#include "xpack_executorch.h"

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint64_t rng(void) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return rng_state;
}

static unsigned long parses, failures_reported;
/* Reads land here so the compiler cannot drop them; a bad pointer faults under ASan. */
static volatile unsigned sink;
static char tmpdir[256];

/* A failed parse must say something: every error has a message. */
static void expect_message(xpack_status st, const xpack_error* err, const char* what) {
  if (st == XPACK_OK) return;
  failures_reported++;
  EXPECT_MSG(err->status == st && err->message[0] != 0, "%s: status %s without a message", what, xpack_status_name(st));
  EXPECT_MSG(st == XPACK_ERR_BAD_INPUT || st == XPACK_ERR_UNSUPPORTED, "%s: unexpected status %s: %s", what,
        xpack_status_name(st), err->message);
}

/* Parses a candidate .pte or .ptd fully: program, every XNNPACK graph, every constant. */
static void exercise(const unsigned char* data, size_t size, bool is_ptd, const char* what) {
  xpack_error err = {0};
  parses++;
  if (is_ptd) {
    xpack_et_ptd* t = NULL;
    xpack_status st = xpack_et_ptd_open_memory(data, size, what, &t, &err);
    expect_message(st, &err, what);
    if (st == XPACK_OK) {
      const xpack_et_ptd_info* info = xpack_et_ptd_get_info(t);
      for (size_t i = 0; i < info->entry_count; i++) {
        if (info->entries[i].size) sink += info->entries[i].data[info->entries[i].size - 1];
        sink += (unsigned)info->entries[i].key[info->entries[i].key_len];
      }
      xpack_et_ptd_close(t);
    }
    return;
  }
  xpack_et_program* p = NULL;
  xpack_status st = xpack_et_program_open_memory(data, size, what, &p, &err);
  expect_message(st, &err, what);
  if (st != XPACK_OK) return;
  xpack_et_summary* s = NULL;
  st = xpack_et_summarize(p, NULL, &s, &err);
  expect_message(st, &err, what);
  xpack_et_summary_free(s);
  /* Also walk each graph directly, touching every array the structs expose. */
  const xpack_et_program_info* info = xpack_et_program_get_info(p);
  for (size_t m = 0; m < info->method_count; m++) {
    for (size_t d = 0; d < info->methods[m].delegate_count; d++) {
      const xpack_et_delegate* del = &info->methods[m].delegates[d];
      if (del->size) sink += del->data[del->size - 1];
      if (!del->is_xnnpack) continue;
      xpack_et_xnn_graph* g = NULL;
      st = xpack_et_xnn_graph_open(p, m, d, &g, &err);
      expect_message(st, &err, what);
      if (st != XPACK_OK) continue;
      for (size_t i = 0; i < g->value_count; i++) {
        for (uint32_t k = 0; k < g->values[i].num_dims; k++) sink += g->values[i].dims[k];
        for (uint32_t k = 0; k < g->values[i].quant.scale_count; k++) {
          uint32_t bits;
          memcpy(&bits, &g->values[i].quant.scales[k], sizeof bits);
          sink += bits;
        }
      }
      xpack_et_xnn_graph_free(g);
    }
  }
  xpack_et_program_close(p);
}

/* Same bytes through the path/mmap route. */
static void exercise_via_file(const unsigned char* data, size_t size, bool is_ptd) {
  char path[320];
  snprintf(path, sizeof path, "%s/damaged.%s", tmpdir, is_ptd ? "ptd" : "pte");
  FILE* f = fopen(path, "wb");
  if (!f) return;
  if (size) fwrite(data, 1, size, f);
  fclose(f);
  xpack_error err = {0};
  if (is_ptd) {
    xpack_et_ptd* t = NULL;
    xpack_status st = xpack_et_ptd_open(path, &t, &err);
    expect_message(st, &err, path);
    xpack_et_ptd_close(t);
  } else {
    xpack_et_program* p = NULL;
    xpack_status st = xpack_et_program_open(path, &p, &err);
    expect_message(st, &err, path);
    if (st == XPACK_OK) {
      xpack_et_summary* s = NULL;
      st = xpack_et_summarize(p, NULL, &s, &err);
      expect_message(st, &err, path);
      xpack_et_summary_free(s);
    }
    xpack_et_program_close(p);
  }
  unlink(path);
}

/* Byte ranges worth damaging: the program flatbuffer and every delegate blob's header + flatbuffer
 * (weights are opaque bytes: flipping them proves nothing). */
typedef struct range {
  size_t begin, end;
} range;

static size_t structure_ranges(const unsigned char* data, size_t size, bool is_ptd, range* out, size_t max) {
  size_t n = 0;
  if (is_ptd) {
    out[n++] = (range){0, size < 4096 ? size : 4096};
    return n;
  }
  xpack_et_program* p;
  xpack_error err;
  if (xpack_et_program_open_memory(data, size, "ranges", &p, &err) != XPACK_OK) {
    out[n++] = (range){0, size};
    return n;
  }
  const xpack_et_program_info* info = xpack_et_program_get_info(p);
  out[n++] = (range){0, (size_t)info->program_size};
  for (size_t m = 0; m < info->method_count; m++) {
    for (size_t d = 0; d < info->methods[m].delegate_count && n < max; d++) {
      const xpack_et_delegate* del = &info->methods[m].delegates[d];
      xpack_et_xnn_graph* g;
      if (!del->is_xnnpack || xpack_et_xnn_graph_open(p, m, d, &g, &err) != XPACK_OK) continue;
      size_t begin = (size_t)del->file_offset;
      size_t end = (size_t)(g->flatbuffer - data) + g->flatbuffer_size;
      out[n++] = (range){begin, end};
      xpack_et_xnn_graph_free(g);
    }
  }
  xpack_et_program_close(p);
  return n;
}

static void damage_file(const char* dir, const char* name, unsigned iterations) {
  char* path = et_path(dir, name);
  size_t size = 0;
  unsigned char* orig = et_read_file(path, &size);
  free(path);
  if (!orig) {
    EXPECT_MSG(0, "cannot read %s", name);
    return;
  }
  size_t n = strlen(name);
  bool is_ptd = n > 4 && strcmp(name + n - 4, ".ptd") == 0;
  char what[300];

  /* Truncations: every length up to 4 KiB, then a spread over the rest of the file. */
  size_t cuts = 0;
  for (size_t len = 0; len < size; len += (len < 4096 ? 1 : 1 + size / 256)) {
    unsigned char* copy = malloc(len ? len : 1);
    memcpy(copy, orig, len);
    snprintf(what, sizeof what, "%s truncated to %zu", name, len);
    exercise(copy, len, is_ptd, what);
    if ((cuts++ & 63) == 0) exercise_via_file(copy, len, is_ptd);
    free(copy);
  }

  range ranges[64];
  size_t nr = structure_ranges(orig, size, is_ptd, ranges, 64);
  unsigned char* copy = malloc(size);
  for (unsigned it = 0; it < iterations; it++) {
    memcpy(copy, orig, size);
    const range* r = &ranges[rng() % nr];
    size_t span = r->end > r->begin ? r->end - r->begin : 1;
    unsigned edits = 1 + (unsigned)(rng() % 4);
    for (unsigned e = 0; e < edits; e++) {
      size_t at = r->begin + (size_t)(rng() % span);
      if (at >= size) continue;
      switch (rng() % 4) {
        case 0: case 1: copy[at] ^= (unsigned char)(1u << (rng() % 8)); break;   /* bit flip */
        case 2: copy[at] = (unsigned char)rng(); break;                        /* random byte */
        default: copy[at] = (rng() & 1) ? 0xff : 0x00; break;                /* extremes */
      }
    }
    snprintf(what, sizeof what, "%s damaged #%u", name, it);
    exercise(copy, size, is_ptd, what);
    if ((it & 255) == 0) exercise_via_file(copy, size, is_ptd);
  }
  free(copy);
  free(orig);
}

int main(int argc, char** argv) {
  const char* dir = argc > 1 ? argv[1] : NULL;
  et_require_dir(dir);
  unsigned iterations = argc > 2 ? (unsigned)strtoul(argv[2], NULL, 10) : 3000;
  const char* base = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
  snprintf(tmpdir, sizeof tmpdir, "%s/xpack-et-robust-XXXXXX", base);
  if (!mkdtemp(tmpdir)) {
    perror("mkdtemp");
    return 1;
  }
  DIR* d = opendir(dir);
  if (!d) return 1;
  struct dirent* ent;
  while ((ent = readdir(d)) != NULL) {
    size_t n = strlen(ent->d_name);
    if (n > 4 && (strcmp(ent->d_name + n - 4, ".pte") == 0 || strcmp(ent->d_name + n - 4, ".ptd") == 0)) {
      damage_file(dir, ent->d_name, iterations);
    }
  }
  closedir(d);
  rmdir(tmpdir);
  printf("%lu parses of damaged files, %lu rejected with a message, no crash\n", parses, failures_reported);
  if (failures) {
    fprintf(stderr, "%d check(s) failed\n", failures);
    return 1;
  }
  return 0;
}
