/* The recording weights cache's life: created over a temporary file beside its output, told its inputs and
 * INFO records, checked and finished into the cache file (or aborted). What it records comes through the
 * provider of recording_provider.c, which streams every packed weight to the temporary file. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "common/error.h"
#include "loader/xnn_compat.h"
#include "writer/writer_internal.h"
#include "xpc_format.h"

void xp_writer_fail(xpack_writer* w, const char* fmt, const char* detail) {
  if (!w->failed) {
    w->failed = 1;
    w->failed_status = XPACK_ERR_IO;
    snprintf(w->failure, sizeof w->failure, fmt, detail);
  }
}

void xp_writer_fail_nomem(xpack_writer* w, const char* what) {
  if (!w->failed) {
    w->failed = 1;
    w->failed_status = XPACK_ERR_NOMEM;
    snprintf(w->failure, sizeof w->failure, "out of memory %s", what);
  }
}

/* Whether the stored region holds exactly bytes[0, size). Reads the file that holds it back in chunks, or
 * compares with the bytes still being written. Lock held. */
xpack_status xp_writer_create(const char* out_path, const char* unnamed_folder, const xpack_writer_options* options,
                              xpack_writer** out, xpack_error* err) {
  *out = NULL;
  uint32_t page = options && options->page_alignment ? options->page_alignment : XPC_DEFAULT_PAGE_ALIGNMENT;
  if (page < 4096 || page > XPC_MAX_PAGE_ALIGNMENT || (page & (page - 1)) != 0) {
    return xp_fail(err, XPACK_ERR_ARG, "page alignment %u must be a power of two from 4096 to %u", page,
                   (unsigned)XPC_MAX_PAGE_ALIGNMENT);
  }
  xpack_writer* w = calloc(1, sizeof *w);
  if (w == NULL) return xp_fail(err, XPACK_ERR_NOMEM, "out of memory");
  w->file.fd = -1;
  w->spool_fd = -1;
  w->out_path = strdup(out_path);
  if (!w->out_path || xp_writer_index_init(&w->region_index) || xp_writer_index_init(&w->entry_index) ||
      xp_writer_index_init(&w->string_index)) {
    xpack_writer_abort(w);
    return xp_fail(err, XPACK_ERR_NOMEM, "out of memory");
  }
  /* Locked while we write; leftovers of killed writers in this folder are removed (temp_files.h). */
  xpack_status st = unnamed_folder == NULL ? xp_safe_create(&w->file, out_path, err)
                             : xp_safe_create_unnamed(&w->file, unnamed_folder, out_path, err);
  if (st != XPACK_OK) {
    xpack_writer_abort(w);
    return st;
  }
  pthread_mutex_init(&w->lock, NULL);
  pthread_cond_init(&w->packed, NULL);
  pthread_cond_init(&w->io_done, NULL);
  if (pthread_key_create(&w->session_key, NULL) != 0) {
    pthread_mutex_destroy(&w->lock);
    pthread_cond_destroy(&w->packed);
    pthread_cond_destroy(&w->io_done);
    xpack_writer_abort(w);
    return xp_fail(err, XPACK_ERR_NOMEM, "no thread-specific key left for the writer's sessions");
  }
  w->has_session_key = 1;
  xp_heap_init(&w->heap, xp_xnn_alignment(), WR_HEAP_OFFSET_BASE);
  w->page_alignment = page;
  w->region_alignment = (uint32_t)xp_small_region_alignment(xp_xnn_alignment());
  w->data_offset = page; /* the first page holds only the header */
  w->data_end = w->data_offset;
  xp_writer_provider_init(w);
  *out = w;
  return XPACK_OK;
}

struct xnn_weights_cache_provider* xpack_writer_provider(xpack_writer* w) { return w ? &w->provider : NULL; }

/* The public kinds are the on-disk PROV kinds (xpack.h restates xpc_format.h, which is not installed). */
_Static_assert(XPACK_INPUT_PTE == XPC_INPUT_PTE && XPACK_INPUT_PTD == XPC_INPUT_PTD &&
               XPACK_INPUT_OTHER == XPC_INPUT_OTHER,
               "xpack.h's XPACK_INPUT_* must be format/xpc_format.h's XPC_INPUT_*");

xpack_status xpack_writer_add_input(xpack_writer* w, const char* name, uint32_t kind, uint64_t file_size,
                                    uint64_t file_hash, uint64_t program_size, uint64_t program_hash,
                                    xpack_error* err) {
  if (w == NULL || name == NULL) {
    return xp_fail(err, XPACK_ERR_ARG, "xpack_writer_add_input: %s is NULL", w == NULL ? "the writer" : "the name");
  }
  if (kind < XPC_INPUT_PTE || kind > XPC_INPUT_OTHER) {
    return xp_fail(err, XPACK_ERR_ARG,
                   "xpack_writer_add_input: %s: kind %u (expected XPACK_INPUT_PTE, _PTD or _OTHER)", name, kind);
  }
  const char* slash = strrchr(name, '/');
  const char* path = name;
  if (slash != NULL) name = slash + 1; /* a file name, no folder (FORMAT.md 5.5) */
  if (name[0] == 0) {
    return xp_fail(err, XPACK_ERR_ARG, "xpack_writer_add_input: \"%s\" names no file (empty, or a folder)", path);
  }
  pthread_mutex_lock(&w->lock);
  xpack_status st = XPACK_ERR_NOMEM;
  w->intern_ticket = w->outside_events++;
  uint32_t s = xp_writer_intern(w, name, strlen(name));
  if (s != XPC_NONE &&
      xp_writer_reserve((void**)&w->inputs, &w->input_cap, w->input_count + 1, sizeof *w->inputs) == 0) {
    w->inputs[w->input_count++] = (xp_writer_input){s, kind, file_size, file_hash, program_size, program_hash};
    st = XPACK_OK;
  }
  pthread_mutex_unlock(&w->lock);
  if (st != XPACK_OK) return xp_fail(err, st, "xpack_writer_add_input: out of memory recording input %s", name);
  return XPACK_OK;
}

xpack_status xpack_writer_add_info(xpack_writer* w, const char* key, const char* value, xpack_error* err) {
  if (w == NULL || key == NULL || value == NULL) {
    return xp_fail(err, XPACK_ERR_ARG, "xpack_writer_add_info: %s is NULL",
                   w == NULL ? "the writer" : key == NULL ? "the key" : "the value");
  }
  pthread_mutex_lock(&w->lock);
  xpack_status st = XPACK_ERR_NOMEM;
  w->intern_ticket = w->outside_events++;
  uint32_t k = xp_writer_intern(w, key, strlen(key));
  w->intern_ticket = w->outside_events++;
  uint32_t v = xp_writer_intern(w, value, strlen(value));
  if (k != XPC_NONE && v != XPC_NONE &&
      xp_writer_reserve((void**)&w->info, &w->info_cap, 2 * (w->info_count + 1), sizeof *w->info) == 0) {
    w->info[2 * w->info_count] = k;
    w->info[2 * w->info_count + 1] = v;
    w->info_count++;
    st = XPACK_OK;
  }
  pthread_mutex_unlock(&w->lock);
  if (st != XPACK_OK) return xp_fail(err, st, "xpack_writer_add_info: out of memory recording '%s'", key);
  return XPACK_OK;
}

void xpack_writer_stats_get(xpack_writer* w, xpack_writer_stats* out) {
  if (out == NULL) return;
  if (w == NULL) {
    memset(out, 0, sizeof *out);
    return;
  }
  pthread_mutex_lock(&w->lock);
  *out = w->stats;
  pthread_mutex_unlock(&w->lock);
}

xpack_status xpack_writer_check(xpack_writer* w, xpack_error* err) {
  if (w == NULL) return xp_fail(err, XPACK_ERR_ARG, "xpack_writer_check: NULL writer");
  pthread_mutex_lock(&w->lock);
  xpack_status st = w->failed ? xp_fail(err, w->failed_status, "%s: %s", w->out_path, w->failure) : XPACK_OK;
  pthread_mutex_unlock(&w->lock);
  return st;
}

static void destroy(xpack_writer* w) {
  for (size_t i = 0; i < w->region_count; i++) {
    if (w->regions[i].map) munmap(w->regions[i].map, w->regions[i].map_len);
  }
  for (size_t i = 0; i < w->string_count; i++) free(w->strings[i].text);
  xp_safe_abort(&w->file); /* nothing left to remove once committed */
  xp_writer_spool_close(w);
  if (w->has_session_key) {
    xp_writer_sessions_destroy(w);
    pthread_key_delete(w->session_key);
  }
  if (w->provider.context != NULL) {
    xp_heap_destroy(&w->heap);
    pthread_mutex_destroy(&w->lock);
    pthread_cond_destroy(&w->packed);
    pthread_cond_destroy(&w->io_done);
  }
  xp_writer_index_free(&w->region_index);
  xp_writer_index_free(&w->entry_index);
  xp_writer_index_free(&w->string_index);
  free(w->slots);
  free(w->regions);
  free(w->entries);
  free(w->strings);
  free(w->inputs);
  free(w->info);
  free(w->families);
  free(w->out_path);
  free(w);
}

void xpack_writer_abort(xpack_writer* w) {
  if (w == NULL) return;
  destroy(w); /* removes the temporary file */
}

xpack_status xpack_writer_create(const char* out_path, const xpack_writer_options* options, xpack_writer** out,
                                 xpack_error* err) {
  if (out != NULL) *out = NULL; /* on every failure, a caller error included */
  if (out_path == NULL || out == NULL) return xp_fail(err, XPACK_ERR_ARG, "xpack_writer_create: NULL argument");
  return xp_writer_create(out_path, NULL, options, out, err);
}

xpack_status xp_writer_finish(xpack_writer* w, int* kept_fd, xpack_error* err) {
  if (w->failed) {
    xpack_status st = xp_fail(err, w->failed_status, "%s: %s", w->out_path, w->failure);
    xpack_writer_abort(w);
    return st;
  }
  uint64_t file_size = 0;
  xpack_status st = xp_writer_canonical_regions(w, err);
  if (st == XPACK_OK) st = xp_writer_write_metadata(w, &file_size, err);
  if (st == XPACK_OK) {
    st = kept_fd ? xp_safe_keep(&w->file, file_size, kept_fd, err) : xp_safe_commit(&w->file, file_size, err);
  }
  destroy(w); /* removes the temporary file when the commit did not happen */
  return st;
}

xpack_status xpack_writer_finish(xpack_writer* w, xpack_error* err) {
  if (w == NULL) return xp_fail(err, XPACK_ERR_ARG, "xpack_writer_finish: NULL writer");
  if (w->file.unnamed) {
    xpack_writer_abort(w);
    return xp_fail(err, XPACK_ERR_ARG, "xpack_writer_finish: an unnamed writer: use xpack_writer_finish_fd");
  }
  return xp_writer_finish(w, NULL, err);
}
