/* Statuses the public headers promise, in the situations a review of the headers against the code found
 * broken (2026-11-29):
 *  - xpack_writer_finish_fd on a writer made with a target: XPACK_ERR_ARG naming the target (its message was
 *    built from the writer after freeing it: the sanitized build reports the use after free);
 *  - xpack_et_summary_print into a buffered stream on a full disk (/dev/full): XPACK_ERR_IO (it returned OK,
 *    the text still in stdio's buffer);
 *  - no descriptor left (EMFILE): NOMEM from the writer's creation as from the loader's open
 *    (xpack_status.h: "also file descriptors"), not IO;
 *  - a short file without the magic: NOT_XPACK from every opener, of a path or of a range of a descriptor (the
 *    loader's said TRUNCATED), and TRUNCATED from all when it starts with the magic;
 *  - a cache with bytes appended: refused with its size and the size its footer gives (xpack_loader.h), by
 *    every opener;
 *  - every function that creates an object sets *out to NULL on every failure, a caller error included (xpack_status.h;
 *    the loader's openers left it as it was on a caller error);
 *  - a writer beside a missing folder is a caller error from both creators (the unnamed one said IO), and an
 *    input named by a folder's path ("folder/") is refused (its empty name was recorded);
 *  - and that the format's reserved identity (xpc_format.h) is the public XPACK_IDENTITY_AMBIGUOUS. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>
#include <xnnpack.h>

#include "expect.h"
#include "xpack.h"
#include "xpack_executorch.h"
#include "xpack_loader.h"
#include "xpc_format.h"

static void write_bytes(const char* path, const void* bytes, size_t n) {
  FILE* f = fopen(path, "wb");
  EXPECT(f != NULL && fwrite(bytes, 1, n, f) == n && fclose(f) == 0);
}

/* One fp32 weight under one seed, finished into path. */
static void write_cache(const char* path) {
  static float kernel[16], bias[4];
  xpack_error err;
  xpack_writer* w = NULL;
  EXPECT_MSG(xpack_writer_create(path, NULL, &w, &err) == XPACK_OK, "%s", err.message);
  EXPECT(xpack_writer_bind(w, kernel, "k", 1, &err) == XPACK_OK);
  EXPECT(xpack_writer_bind(w, bias, "b", 1, &err) == XPACK_OK);
  const xpack_family fc = {XPACK_OP_FULLY_CONNECTED, xnn_datatype_fp32, xnn_datatype_fp32, xnn_datatype_fp32,
                           xnn_datatype_fp32, 0, 0};
  EXPECT_MSG(xpack_writer_bind_family(w, kernel, &fc, &err) == XPACK_OK, "%s", err.message);
  struct xnn_weights_cache_provider* p = xpack_writer_provider(w);
  struct xnn_weights_cache_look_up_key key = {.seed = 1, .kernel = kernel, .bias = bias};
  unsigned char* packed = p->reserve_space(p->context, 64);
  EXPECT(packed != NULL);
  memset(packed, 0xAB, 64);
  EXPECT(p->look_up_or_insert(p->context, &key, packed, 64) != SIZE_MAX);
  EXPECT_MSG(xpack_writer_finish(w, &err) == XPACK_OK, "%s", err.message);
}

/* Both openers give `expected`, with a message holding `words`. */
static void expect_both(const char* path, xpack_status expected, const char* words, const char* label) {
  xpack_error err;
  xpack_cache* cache = NULL;
  xpack_status st = xpack_cache_open(path, 0, &cache, &err);
  EXPECT_MSG(st == expected && strstr(err.message, words) != NULL, "%s: xpack_cache_open: %s '%s'", label,
             xpack_status_name(st), st == XPACK_OK ? "" : err.message);
  printf("%s: xpack_cache_open: %s: %s\n", label, xpack_status_name(st), st == XPACK_OK ? "" : err.message);
  xpack_cache_close(cache);
  xpack_file* file = NULL;
  st = xpack_file_open(path, &file, &err);
  EXPECT_MSG(st == expected && strstr(err.message, words) != NULL, "%s: xpack_file_open: %s '%s'", label,
             xpack_status_name(st), st == XPACK_OK ? "" : err.message);
  xpack_file_close(file);
  /* The openers of a cache stored inside another file, over the whole file as the range. */
  const int fd = open(path, O_RDONLY);
  const off_t size = fd >= 0 ? lseek(fd, 0, SEEK_END) : -1;
  EXPECT(fd >= 0 && size >= 0);
  st = xpack_cache_open_fd(fd, 0, (uint64_t)size, path, 0, NULL, &cache, &err);
  EXPECT_MSG(st == expected && strstr(err.message, words) != NULL, "%s: xpack_cache_open_fd: %s '%s'", label,
             xpack_status_name(st), st == XPACK_OK ? "" : err.message);
  xpack_cache_close(cache);
  const xpack_cache_range range = {fd, 0, (uint64_t)size, path};
  size_t chosen = 0;
  st = xpack_cache_open_best_fd(&range, 1, 0, NULL, &cache, &chosen, NULL, &err);
  EXPECT_MSG(st == expected && strstr(err.message, words) != NULL, "%s: xpack_cache_open_best_fd: %s '%s'", label,
             xpack_status_name(st), st == XPACK_OK ? "" : err.message);
  xpack_cache_close(cache);
  st = xpack_file_open_range(fd, 0, (uint64_t)size, path, &file, &err);
  EXPECT_MSG(st == expected && strstr(err.message, words) != NULL, "%s: xpack_file_open_range: %s '%s'", label,
             xpack_status_name(st), st == XPACK_OK ? "" : err.message);
  xpack_file_close(file);
  if (fd >= 0) close(fd);
}

static void writer_with_target(const char* dir) {
  char path[512];
  snprintf(path, sizeof path, "%s/named.xpc", dir);
  xpack_error err;
  xpack_writer* w = NULL;
  EXPECT_MSG(xpack_writer_create(path, NULL, &w, &err) == XPACK_OK, "%s", err.message);
  int fd = 7;
  const xpack_status st = xpack_writer_finish_fd(w, &fd, &err);
  EXPECT_MSG(st == XPACK_ERR_ARG && fd == -1 && strstr(err.message, path) != NULL,
             "finish_fd of a writer with a target: %s '%s'", xpack_status_name(st), err.message);
  EXPECT(access(path, F_OK) != 0); /* aborted: nothing written */
}

static void summary_on_full_disk(void) {
  FILE* full = fopen("/dev/full", "w");
  if (full == NULL) {
    printf("no /dev/full: the summary's write failure is not checked\n");
    return;
  }
  setvbuf(full, NULL, _IOFBF, 1 << 16); /* the text stays in the buffer until a flush */
  const xpack_et_summary empty = {0};
  xpack_error err;
  const xpack_status st = xpack_et_summary_print(&empty, NULL, false, full, &err);
  EXPECT_MSG(st == XPACK_ERR_IO, "summary_print onto /dev/full: %s", xpack_status_name(st));
  fclose(full);
}

static void no_descriptor_left(const char* dir, const char* cache) {
  struct rlimit before;
  EXPECT(getrlimit(RLIMIT_NOFILE, &before) == 0);
  struct rlimit few = before;
  few.rlim_cur = 64;
  if (setrlimit(RLIMIT_NOFILE, &few) != 0) {
    printf("cannot lower RLIMIT_NOFILE: descriptors are not checked\n");
    return;
  }
  int held[64], n = 0;
  for (int fd; n < 64 && (fd = open("/dev/null", O_RDONLY)) >= 0;) held[n++] = fd;
  char path[512];
  snprintf(path, sizeof path, "%s/nofd.xpc", dir);
  xpack_error err;
  xpack_writer* w = NULL;
  xpack_status st = xpack_writer_create(path, NULL, &w, &err);
  EXPECT_MSG(st == XPACK_ERR_NOMEM, "xpack_writer_create without a descriptor: %s '%s'", xpack_status_name(st),
             err.message);
  if (st == XPACK_OK) xpack_writer_abort(w);
  st = xpack_writer_create_unnamed(dir, NULL, &w, &err);
  EXPECT_MSG(st == XPACK_ERR_NOMEM, "xpack_writer_create_unnamed without a descriptor: %s '%s'",
             xpack_status_name(st), err.message);
  if (st == XPACK_OK) xpack_writer_abort(w);
  xpack_cache* c = NULL;
  st = xpack_cache_open(cache, 0, &c, &err);
  EXPECT_MSG(st == XPACK_ERR_NOMEM, "xpack_cache_open without a descriptor: %s '%s'", xpack_status_name(st),
             err.message);
  xpack_cache_close(c);
  while (n > 0) close(held[--n]);
  setrlimit(RLIMIT_NOFILE, &before);
}

/* *out is set to NULL by a failing call: `out` is first given a value no call returns. */
#define EXPECT_OUT_CLEARED(out, call)                                                                    \
  do {                                                                                                   \
    out = (void*)&sentinel;                                                                             \
    xpack_error e_;                                                                                      \
    const xpack_status st_ = (call);                                                                     \
    EXPECT_MSG(st_ != XPACK_OK && out == NULL, "%s: %s, out %s", #call, xpack_status_name(st_),          \
               out == NULL ? "NULL" : "left as it was");                                                 \
  } while (0)

static void outputs_cleared(const char* dir) {
  static int sentinel;
  char missing[512];
  snprintf(missing, sizeof missing, "%s/missing.xpc", dir);
  const char* paths[1] = {missing};
  const xpack_cache_range ranges[1] = {{-1, 0, 0, "none"}};
  const uint8_t junk[16] = {0};
  xpack_writer* w;
  xpack_file* f;
  xpack_cache* c;
  xpack_et_program* p;
  xpack_et_ptd* t;
  xpack_et_xnn_graph* g;
  xpack_et_summary* sum;
  EXPECT_OUT_CLEARED(w, xpack_writer_create(NULL, NULL, &w, &e_));
  EXPECT_OUT_CLEARED(w, xpack_writer_create("/nonexistent-folder/x.xpc", NULL, &w, &e_));
  EXPECT_OUT_CLEARED(w, xpack_writer_create_unnamed("/nonexistent-folder/x", NULL, &w, &e_));
  xpack_error err;
  xpack_status st = xpack_writer_create_unnamed("/nonexistent-folder/x", NULL, &w, &err);
  EXPECT_MSG(st == XPACK_ERR_ARG, "create_unnamed beside a missing folder: %s (xpack_writer_create says ARG)",
             xpack_status_name(st));
  w = NULL;
  char target[512];
  snprintf(target, sizeof target, "%s/inputs.xpc", dir);
  EXPECT(xpack_writer_create(target, NULL, &w, &err) == XPACK_OK);
  st = xpack_writer_add_input(w, "folder/", XPACK_INPUT_PTE, 1, 1, 0, 0, &err);
  EXPECT_MSG(st == XPACK_ERR_ARG, "add_input of a folder's name: %s", xpack_status_name(st));
  xpack_writer_abort(w);
  EXPECT_OUT_CLEARED(f, xpack_file_open(NULL, &f, &e_));
  EXPECT_OUT_CLEARED(f, xpack_file_open(missing, &f, &e_));
  EXPECT_OUT_CLEARED(f, xpack_file_open_fd(-1, &f, &e_));
  EXPECT_OUT_CLEARED(f, xpack_file_open_range(-1, 0, 0, "x", &f, &e_));
  EXPECT_OUT_CLEARED(p, xpack_et_program_open(NULL, &p, &e_));
  EXPECT_OUT_CLEARED(p, xpack_et_program_open(missing, &p, &e_));
  EXPECT_OUT_CLEARED(p, xpack_et_program_open_flags(missing, 0xFFFFFFFFu, &p, &e_));
  EXPECT_OUT_CLEARED(p, xpack_et_program_open_memory(junk, sizeof junk, "junk", &p, &e_));
  EXPECT_OUT_CLEARED(t, xpack_et_ptd_open(NULL, &t, &e_));
  EXPECT_OUT_CLEARED(t, xpack_et_ptd_open_flags(missing, 0xFFFFFFFFu, &t, &e_));
  EXPECT_OUT_CLEARED(t, xpack_et_ptd_open_memory(junk, sizeof junk, "junk", &t, &e_));
  EXPECT_OUT_CLEARED(g, xpack_et_xnn_graph_parse(junk, sizeof junk, "junk", &g, &e_));
  EXPECT_OUT_CLEARED(g, xpack_et_xnn_graph_open(NULL, 0, 0, &g, &e_));
  EXPECT_OUT_CLEARED(sum, xpack_et_summarize(NULL, NULL, &sum, &e_));
  EXPECT_OUT_CLEARED(c, xpack_cache_open(NULL, 0, &c, &e_));
  EXPECT_OUT_CLEARED(c, xpack_cache_open(missing, 0xFFFFFFFFu, &c, &e_));
  EXPECT_OUT_CLEARED(c, xpack_cache_open(missing, 0, &c, &e_));
  EXPECT_OUT_CLEARED(c, xpack_cache_open_limits(NULL, 0, NULL, &c, &e_));
  EXPECT_OUT_CLEARED(c, xpack_cache_open_fd(-1, 0, 0, "x", 0, NULL, &c, &e_));
  EXPECT_OUT_CLEARED(c, xpack_cache_open_best(NULL, 1, 0, &c, NULL, NULL, &e_));
  EXPECT_OUT_CLEARED(c, xpack_cache_open_best(paths, 1, 0xFFFFFFFFu, &c, NULL, NULL, &e_));
  EXPECT_OUT_CLEARED(c, xpack_cache_open_best_limits(paths, 0, 0, NULL, &c, NULL, NULL, &e_));
  EXPECT_OUT_CLEARED(c, xpack_cache_open_best_fd(NULL, 1, 0, NULL, &c, NULL, NULL, &e_));
  EXPECT_OUT_CLEARED(c, xpack_cache_open_best_fd(ranges, 1, 0xFFFFFFFFu, NULL, &c, NULL, NULL, &e_));
}

int main(void) {
  if (xnn_initialize(NULL) != xnn_status_success) return 1;
  EXPECT(strcmp(XPC_IDENTITY_AMBIGUOUS, XPACK_IDENTITY_AMBIGUOUS) == 0);
  char dir[] = "/tmp/xpack-status-promises-XXXXXX";
  EXPECT(mkdtemp(dir) != NULL);
  char cache[512], bad[512];
  snprintf(cache, sizeof cache, "%s/c.xpc", dir);
  snprintf(bad, sizeof bad, "%s/bad.xpc", dir);
  write_cache(cache);

  writer_with_target(dir);
  outputs_cleared(dir);
  summary_on_full_disk();
  no_descriptor_left(dir, cache);

  uint8_t bytes[100];
  for (size_t i = 0; i < sizeof bytes; i++) bytes[i] = (uint8_t)(i * 37 + 11);
  write_bytes(bad, bytes, sizeof bytes);
  expect_both(bad, XPACK_ERR_NOT_XPACK, "", "100 bytes without the magic");
  FILE* f = fopen(cache, "rb");
  EXPECT(f != NULL && fread(bytes, 1, sizeof bytes, f) == sizeof bytes);
  if (f) fclose(f);
  write_bytes(bad, bytes, sizeof bytes);
  expect_both(bad, XPACK_ERR_TRUNCATED, "100 bytes", "the first 100 bytes of a cache");

  /* The cache and 10 bytes more. */
  f = fopen(cache, "rb");
  EXPECT(f != NULL && fseek(f, 0, SEEK_END) == 0);
  const long size = f ? ftell(f) : 0;
  uint8_t* whole = malloc((size_t)size + 10);
  EXPECT(whole != NULL && fseek(f, 0, SEEK_SET) == 0 && fread(whole, 1, (size_t)size, f) == (size_t)size);
  if (f) fclose(f);
  memset(whole + size, 0x5A, 10);
  write_bytes(bad, whole, (size_t)size + 10);
  char words[160];
  snprintf(words, sizeof words, "the file has %ld bytes, but its footer (at offset %ld) says it has %ld: 10 bytes were "
           "appended", size + 10, size - 80, size);
  expect_both(bad, XPACK_ERR_CORRUPT, words, "10 bytes appended");
  free(whole);

  unlink(cache);
  unlink(bad);
  rmdir(dir);
  printf("status_promises: %d failure(s)\n", failures);
  return failures ? 1 : 0;
}
