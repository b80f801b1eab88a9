/* A model set in, a cache file out: xpack_pack_set and xpack_pack_files (what `xpack pack` does). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <xnnpack.h>

#include "common/error.h"
#include "common/output_check.h"
#include "common/temp_files.h"
#include "pipeline/shared_keys.h"
#include "xpack_pipeline.h"

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
                      "(a batch matrix multiply's, or a constant XNNPACK reaches through a reshape or transpose it folds away)", (unsigned long long)stats->no_family,
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

/* The writer's mappable file, unnamed in the output's folder and open as mappable_fd, becomes the transport
 * form at out_path. */
static xpack_status compress(int mappable_fd, const char* out_path, const xpack_pack_options* options,
                             xpack_pack_report* report, xpack_error* err) {
  char mappable_path[XP_FD_PATH_SIZE];
  xp_fd_path(mappable_fd, mappable_path);
  const int threads = options->jobs > 1 ? options->jobs : 1;
  xpack_status st =
      xpack_compress_file_threads(mappable_path, out_path, options->zstd_level, threads, &report->transport, err);
  /* Messages name the file read by its descriptor's path, which means nothing to the caller. */
  const size_t named = strlen(mappable_path);
  if (st != XPACK_OK && err != NULL && strncmp(err->message, mappable_path, named) == 0) {
    char message[sizeof err->message];
    snprintf(message, sizeof message, "%s (its mappable form, before compression)", out_path);
    const size_t used = strlen(message), rest = strlen(err->message + named);
    const size_t kept = rest < sizeof message - 1 - used ? rest : sizeof message - 1 - used; /* cut, as any message */
    memcpy(message + used, err->message + named, kept);
    message[used + kept] = '\0';
    memcpy(err->message, message, used + kept + 1);
  }
  return st;
}

/* Refuses an output that is one of the set's files, or that is not a regular file, before anything is written. */
static xpack_status check_output(const xpack_model_set* set, const char* out_path, xpack_error* err) {
  const char* inputs[2 * XPACK_MODEL_SET_MAX_FILES];
  size_t n = 0;
  /* A member of an archive: the archive is the file an output must spare. */
  for (size_t i = 0; i < set->program_count; i++) {
    const xpack_model_file* f = &set->program_files[i];
    inputs[n++] = f->archive ? f->archive : f->path;
  }
  for (size_t i = 0; i < set->ptd_count; i++) {
    const xpack_model_file* f = &set->ptd_files[i];
    inputs[n++] = f->archive ? f->archive : f->path;
  }
  return xp_check_output(out_path, inputs, n, err);
}

xpack_status xpack_pack_check_output(const char* output_path, const char* const* inputs, size_t count,
                                     xpack_error* err) {
  if (output_path == NULL || (inputs == NULL && count > 0)) {
    return xp_fail(err, XPACK_ERR_ARG, "xpack_pack_check_output: NULL argument");
  }
  return xp_check_output(output_path, inputs, count, err);
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
  xpack_status st = xpack_initialize_xnnpack(err);
  if (st != XPACK_OK) return st;
  const char* out_path = options->output_path;
  st = check_output(set, out_path, err);
  if (st != XPACK_OK) return st;
  if ((st = xp_check_shared_content_keys(set, err)) != XPACK_OK) {
    report->failed_on_input = st == XPACK_ERR_BAD_INPUT;
    return st;
  }
  xpack_writer_options writer_options = {options->page_alignment};
  xpack_writer* writer = NULL;
  /* With a zstd level the mappable file has no name: made beside the output, compressed into it, gone. */
  st = options->zstd_level != 0 ? xpack_writer_create_unnamed(out_path, &writer_options, &writer, err)
                                : xpack_writer_create(out_path, &writer_options, &writer, err);
  int write = 0;
  if (st == XPACK_OK) st = xpack_pack_into_writer(set, writer, options, report, err);
  if (st == XPACK_OK) st = xpack_writer_check(writer, err); /* e.g. the first write failed: not "nothing to pack" */
  if (st == XPACK_OK) st = something_to_write(set, report, &write, err);
  if (writer && !write) xpack_writer_abort(writer);
  if (write && options->zstd_level == 0) st = xpack_writer_finish(writer, err);
  if (write && options->zstd_level != 0) {
    int mappable_fd = -1;
    st = xpack_writer_finish_fd(writer, &mappable_fd, err);
    if (st == XPACK_OK) st = compress(mappable_fd, out_path, options, report, err);
    if (mappable_fd >= 0) close(mappable_fd);
  }
  return st;
}

xpack_status xpack_pack_files(const xpack_model_input* inputs, size_t count, const xpack_pack_options* options,
                              xpack_pack_report* report, xpack_error* err) {
  if (report) memset(report, 0, sizeof *report);
  if ((inputs == NULL && count > 0) || options == NULL || report == NULL) {
    return xp_fail(err, XPACK_ERR_ARG, "xpack_pack_files: NULL argument");
  }
  xpack_model_set set;
  xpack_model_set_init(&set, XPACK_MODEL_SET_HASH_PROGRAMS);
  xpack_status st = XPACK_OK;
  for (size_t i = 0; i < count && st == XPACK_OK; i++) {
    st = xpack_model_set_add(&set, &inputs[i], options->on_message, options->message_context, err);
  }
  if (st != XPACK_OK) report->failed_on_input = true;
  else st = xpack_pack_set(&set, options, report, err);
  xpack_model_set_close(&set);
  return st;
}
