/* A model set in, a cache file out: xpack_pack_set and xpack_pack_files (what `xpack pack` does). */
#include <fcntl.h>
#include <libgen.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>
#include <xnnpack.h>

#include "common/error.h"
#include "common/temp_files.h"
#include "xpack_pipeline.h"

/* With a zstd level the writer makes the mappable file under a temporary name beside the output, and
 * xpack_compress_file_threads turns it into the output; the mappable file is then removed. NULL when it
 * cannot be created. */
static char* mappable_temp_path(const char* out_path) {
  char* dir_copy = strdup(out_path);
  char* base_copy = strdup(out_path);
  size_t n = strlen(out_path) + 32;
  char* tmp = malloc(n);
  if (dir_copy && base_copy && tmp) {
    snprintf(tmp, n, "%s/.%s.XXXXXX", dirname(dir_copy), basename(base_copy));
    int fd = xp_temp_create(tmp); /* named as the target's temporary files: a killed pack's is removed later */
    if (fd >= 0) close(fd);
    else {
      free(tmp);
      tmp = NULL;
    }
  } else {
    free(tmp);
    tmp = NULL;
  }
  free(dir_copy);
  free(base_copy);
  return tmp;
}

static void nothing_to_pack(xpack_pack_report* report, const char* fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static void nothing_to_pack(xpack_pack_report* report, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(report->nothing_to_pack, sizeof report->nothing_to_pack, fmt, ap);
  va_end(ap);
  report->result = XPACK_PACK_NOTHING;
}

/* After the delegates: whether there is a file to write. Sets the report's result when there is not;
 * returns an error when every XNNPACK delegate failed. */
static xpack_status something_to_write(const xpack_model_set* set, xpack_pack_report* r, int* write,
                                       xpack_error* err) {
  const xpack_writer_stats* stats = &r->stats;
  *write = 0;
  if (r->packed > 0 && stats->entries == 0 && stats->unbound == 0) {
    if (stats->no_family > 0) {
      nothing_to_pack(r, "the %llu weight%s XNNPACK packs belong to no packing family a loader could check "
                      "(e.g. batch matrix multiply)", (unsigned long long)stats->no_family,
                      stats->no_family == 1 ? "" : "s");
    } else {
      nothing_to_pack(r, "the %zu XNNPACK delegate%s hold%s no weights that XNNPACK packs", r->packed,
                      r->packed == 1 ? "" : "s", r->packed == 1 ? "s" : "");
    }
    return XPACK_OK;
  }
  if (r->xnnpack == 0) {
    nothing_to_pack(r, "no XNNPACK delegate in the given program%s", set->program_count > 1 ? "s" : "");
    return XPACK_OK;
  }
  if (r->packed == 0) {
    return xp_fail(err, r->first_error.status, "no delegate could be packed; first error: %s",
                      r->first_error.message);
  }
  *write = 1;
  return XPACK_OK;
}

/* The mappable file at mappable_path becomes the transport form at out_path. */
static xpack_status compress(const char* mappable_path, const char* out_path, const xpack_pack_options* options,
                             xpack_pack_report* report, xpack_error* err) {
  /* Locked, so that the output's temporary-file cleanup (temp_files.h) does not take it for a leftover. */
  int hold = open(mappable_path, O_RDONLY | O_CLOEXEC);
  if (hold >= 0) flock(hold, LOCK_EX | LOCK_NB);
  const int threads = options->jobs > 1 ? options->jobs : 1;
  xpack_status st =
      xpack_compress_file_threads(mappable_path, out_path, options->zstd_level, threads, &report->transport, err);
  if (hold >= 0) close(hold);
  return st;
}

xpack_status xpack_pack_set(const xpack_model_set* set, const xpack_pack_options* options, xpack_pack_report* report,
                            xpack_error* err) {
  if (report) memset(report, 0, sizeof *report);
  if (set == NULL || options == NULL || report == NULL) {
    return xp_fail(err, XPACK_ERR_ARG, "xpack_pack_set: NULL argument");
  }
  if (set->program_count == 0) {
    nothing_to_pack(report, "no program given");
    return XPACK_OK;
  }
  if (options->output_path == NULL) return xp_fail(err, XPACK_ERR_ARG, "xpack_pack_set: no output path");
  if (options->page_alignment != 0 && options->page_alignment != 4096 && options->page_alignment != 16384) {
    return xp_fail(err, XPACK_ERR_ARG, "xpack_pack_set: page alignment %u is not 4096 or 16384",
                      options->page_alignment);
  }
  if (options->zstd_level != 0 &&
      (options->zstd_level < XPACK_ZSTD_LEVEL_MIN || options->zstd_level > XPACK_ZSTD_LEVEL_MAX)) {
    return xp_fail(err, XPACK_ERR_ARG, "xpack_pack_set: zstd level %d is not 0 or %d to %d", options->zstd_level,
                      XPACK_ZSTD_LEVEL_MIN, XPACK_ZSTD_LEVEL_MAX);
  }
  if (xnn_initialize(NULL) != xnn_status_success) {
    return xp_fail(err, XPACK_ERR_XNNPACK, "xnn_initialize failed: this CPU is not supported by XNNPACK");
  }
  const char* out_path = options->output_path;
  char* mappable_path = NULL;
  if (options->zstd_level != 0 && (mappable_path = mappable_temp_path(out_path)) == NULL) {
    return xp_fail(err, XPACK_ERR_IO, "%s: cannot create a temporary file beside it", out_path);
  }
  xpack_writer_options writer_options = {options->page_alignment};
  xpack_writer* writer = NULL;
  xpack_status st = xpack_writer_create(mappable_path ? mappable_path : out_path, &writer_options, &writer, err);
  int write = 0;
  if (st == XPACK_OK) st = xpack_pack_into_writer(set, writer, options, report, err);
  if (st == XPACK_OK) st = xpack_writer_check(writer, err); /* e.g. the first write failed: not "nothing to pack" */
  if (st == XPACK_OK) st = something_to_write(set, report, &write, err);
  if (writer && !write) xpack_writer_abort(writer);
  if (write) st = xpack_writer_finish(writer, err);
  if (write && st == XPACK_OK && mappable_path) st = compress(mappable_path, out_path, options, report, err);
  if (mappable_path) unlink(mappable_path);
  free(mappable_path);
  return st;
}

xpack_status xpack_pack_files(const xpack_model_input* inputs, size_t count, const xpack_pack_options* options,
                              xpack_pack_report* report, xpack_error* err) {
  if (report) memset(report, 0, sizeof *report);
  if ((inputs == NULL && count > 0) || options == NULL || report == NULL) {
    return xp_fail(err, XPACK_ERR_ARG, "xpack_pack_files: NULL argument");
  }
  xpack_model_set set;
  xpack_model_set_init(&set, 1);
  xpack_status st = XPACK_OK;
  for (size_t i = 0; i < count && st == XPACK_OK; i++) {
    st = xpack_model_set_add(&set, &inputs[i], options->on_message, options->message_context, err);
  }
  if (st != XPACK_OK) report->failed_on_input = 1;
  else st = xpack_pack_set(&set, options, report, err);
  xpack_model_set_close(&set);
  return st;
}
