/* Full structural verification of a cache file: everything open checks, every check of cache_checks.h,
 * and every region's bytes (hashed, or in the transport form decoded and hashed). Every problem is
 * reported, not only the first. */
#include "inspect/verify.h"

#include <stdio.h>
#include <string.h>

#include "cachefile/cache_checks.h"
#include "cachefile/cache_open.h"
#include "common/error.h"
#include "common/file_map.h"
#include "transport/transport.h"
#include "xpack.h"
#include "xpc_format.h"

typedef struct listener {
  xpack_problem_fn fn;
  void* context;
} listener;

static int report(void* context, const char* where, const char* what) {
  const listener* l = context;
  if (l->fn) l->fn(l->context, where, what);
  return 0; /* go on: verify lists every problem */
}

/* A region's bytes: hashed, or (transport form) its zstd frame decoded into nothing and the result hashed. */
static void check_region_bytes(void* context, xp_checker* c, uint64_t index, const xp_region* r,
                               const char* where) {
  (void)index;
  xp_transport_decoder* decoder = context;
  const xp_view* v = c->v;
  if (v->flags & XPC_FLAG_TRANSPORT) {
    if (decoder->dctx == NULL) {
      xp_problem(c, where, r->offset, "not decoded: no memory for a zstd decompression context");
      return;
    }
    char what[256];
    if (xp_transport_decode_region(decoder, v, r, NULL, 0, what, sizeof what, NULL) != XPACK_OK) {
      xp_problem(c, where, r->offset, "%s", what);
    }
    return;
  }
  char what[160];
  if (!xp_region_bytes_match(v, r, what, sizeof what)) xp_problem(c, where, r->offset, "%s", what);
}

/* The checks after an open (status st, from xp_file_open or xp_file_open_range) of the file named name. */
static xpack_status verify_opened(xp_file* file, xpack_status st, const char* name, xpack_problem_fn fn, void* context,
                                  uint64_t* problem_count, xpack_error* err) {
  if (st != XPACK_OK) {
    if (st != XPACK_ERR_IO) { /* the file was read: what is wrong with it is its one problem */
      const char* what = err ? err->message : xpack_status_name(st);
      const size_t name_len = strlen(name);
      /* Open's messages start with the file's name, which is already the problem's place. */
      if (strncmp(what, name, name_len) == 0 && strncmp(what + name_len, ": ", 2) == 0) what += name_len + 2;
      if (fn) fn(context, name, what);
      if (problem_count) *problem_count = 1;
    }
    return st;
  }
  uint64_t problems = xp_verify_view(&file->view, fn, context);
  if (problem_count) *problem_count = problems;
  xp_file_close(file);
  return XPACK_OK;
}

xpack_status xpack_verify_file(const char* path, xpack_problem_fn fn, void* context, uint64_t* problem_count,
                               xpack_error* err) {
  if (problem_count) *problem_count = 0;
  if (path == NULL) return xp_fail(err, XPACK_ERR_ARG, "xpack_verify_file: NULL path");
  xp_file file;
  xpack_status st = xp_file_open(&file, path, 1, err);
  return verify_opened(&file, st, path, fn, context, problem_count, err);
}

xpack_status xpack_verify_range(int fd, uint64_t offset, uint64_t size, const char* name, xpack_problem_fn fn,
                                void* context, uint64_t* problem_count, xpack_error* err) {
  if (problem_count) *problem_count = 0;
  if (fd < 0 || name == NULL) return xp_fail(err, XPACK_ERR_ARG, "xpack_verify_range: negative fd or NULL name");
  /* A range that does not fit its file is the caller's account of where the cache lies, not the cache's fault. */
  xpack_status st = xp_check_range(fd, offset, size, name, err);
  if (st != XPACK_OK) return st;
  xp_file file;
  st = xp_file_open_range(&file, fd, offset, size, name, 1, err);
  return verify_opened(&file, st, name, fn, context, problem_count, err);
}

uint64_t xp_verify_view(const xp_view* v, xpack_problem_fn fn, void* context) {
  listener l = {fn, context};
  xp_checker c;
  xp_checker_init(&c, v, report, &l);
  xp_transport_decoder decoder = {0};
  if (v->flags & XPC_FLAG_TRANSPORT) xp_transport_decoder_init(&decoder, NULL);
  xp_check_tables(&c);
  xp_check_regions(&c, check_region_bytes, &decoder);
  xp_transport_decoder_free(&decoder);
  xp_check_entries(&c);
  xp_check_small_tables(&c);
  return c.problems;
}
