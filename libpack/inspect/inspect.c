/* Read-only access to every field of a cache file, for `xpack dump` and tests. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <xnnpack.h>

#include "cachefile/cache_open.h"
#include "common/error.h"
#include "common/le.h"
#include "common/target.h"
#include "common/temp_files.h"
#include "xpack.h"
#include "xpc_format.h"

struct xpack_file {
  xp_file file;
};

static const char kBadString[] = "<bad string>";

static const char* string_at(const xp_view* v, uint32_t offset) {
  const char* s;
  uint32_t len;
  return xp_view_string(v, offset, &s, &len) == 0 ? s : kBadString;
}

xpack_status xpack_file_open(const char* path, xpack_file** out, xpack_error* err) {
  if (out != NULL) *out = NULL; /* on every failure, a caller error included */
  if (path == NULL || out == NULL) return xp_fail(err, XPACK_ERR_ARG, "xpack_file_open: NULL path or output");
  xpack_file* f = calloc(1, sizeof *f);
  if (f == NULL) return xp_fail(err, XPACK_ERR_NOMEM, "%s: out of memory", path);
  xpack_status st = xp_file_open(&f->file, path, 1, err);
  if (st != XPACK_OK) {
    free(f);
    return st;
  }
  *out = f;
  return XPACK_OK;
}

xpack_status xpack_file_open_fd(int fd, xpack_file** out, xpack_error* err) {
  if (out != NULL) *out = NULL; /* on every failure, a caller error included */
  char name[XP_FD_PATH_SIZE];
  xp_fd_path(fd, name);
  /* The descriptor itself, not its /proc path opened again: that needs one more descriptor, a mode that lets the
   * process read the file again (an unnamed file under umask 0477 did not) and a dumpable process. */
  struct stat info;
  if (fd < 0 || fstat(fd, &info) != 0) {
    return xp_fail(err, fd < 0 ? XPACK_ERR_ARG : XPACK_ERR_IO, "%s: cannot open: %s", name,
                   fd < 0 ? "negative descriptor" : strerror(errno));
  }
  return xpack_file_open_range(fd, 0, (uint64_t)info.st_size, name, out, err);
}

xpack_status xpack_file_open_range(int fd, uint64_t offset, uint64_t size, const char* name, xpack_file** out,
                                   xpack_error* err) {
  if (out != NULL) *out = NULL; /* on every failure, a caller error included */
  if (fd < 0 || name == NULL || out == NULL) {
    return xp_fail(err, XPACK_ERR_ARG, "xpack_file_open_range: negative fd, or NULL name or output");
  }
  xpack_file* f = calloc(1, sizeof *f);
  if (f == NULL) return xp_fail(err, XPACK_ERR_NOMEM, "%s: out of memory", name);
  xpack_status st = xp_file_open_range(&f->file, fd, offset, size, name, 1, err);
  if (st != XPACK_OK) {
    free(f);
    return st;
  }
  *out = f;
  return XPACK_OK;
}

void xpack_file_close(xpack_file* f) {
  if (f == NULL) return;
  xp_file_close(&f->file);
  free(f);
}

void xpack_file_get_info(const xpack_file* f, xpack_file_info* o) {
  if (o == NULL) return;
  memset(o, 0, sizeof *o);
  if (f == NULL) return;
  const xp_view* v = &f->file.view;
  o->major = v->major;
  o->minor = v->minor;
  o->flags = v->flags;
  o->page_alignment = v->page_alignment;
  o->xnn_alignment = v->xnn_alignment;
  o->arch = v->arch;
  o->arch_name = xp_arch_name(v->arch);
  o->file_size = v->size;
  o->data_offset = v->data_offset;
  o->data_size = v->data_size;
  o->metadata_offset = v->metadata_offset;
  o->metadata_size = v->metadata_size;
  o->region_count = v->regions.count;
  o->entry_count = v->entries.count;
  o->input_count = v->provenance.count;
  o->info_count = v->info.count;
  o->family_count = v->families.count;
  o->build_id = v->base + v->build_id.offset;
  o->build_id_size = (size_t)v->build_id.count;
  o->build_id_matches = o->build_id_size == xnn_experimental_get_build_identifier_size() &&
                        xnn_experimental_check_build_identifier(o->build_id, o->build_id_size);
  o->stored_bytes = xp_view_region_bytes(v);
  for (uint64_t i = 0; i < v->entries.count; i++) {
    xp_entry e;
    xp_view_entry(v, i, &e);
    if (e.region < v->regions.count) {
      xp_region r;
      xp_view_region(v, e.region, &r);
      o->referenced_bytes += r.size;
    }
  }
}

void xpack_file_get_region(const xpack_file* f, uint64_t index, xpack_file_region* out) {
  if (out == NULL) return;
  memset(out, 0, sizeof *out);
  if (f == NULL) return;
  xp_region r;
  xp_view_region(&f->file.view, index, &r);
  *out = (xpack_file_region){r.offset, r.stored_size, r.size, r.hash};
}

const uint8_t* xpack_file_region_bytes(const xpack_file* f, uint64_t index) {
  xp_region r;
  if (f == NULL || index >= f->file.view.regions.count) return NULL;
  xp_view_region(&f->file.view, index, &r);
  return xp_region_is_sound(&f->file.view, &r) ? f->file.view.base + r.offset : NULL;
}

void xpack_file_get_entry(const xpack_file* f, uint64_t index, xpack_file_entry* out) {
  if (out == NULL) return;
  memset(out, 0, sizeof *out);
  if (f == NULL) return;
  const xp_view* v = &f->file.view;
  xp_entry e;
  xp_view_entry(v, index, &e);
  out->seed = e.seed;
  out->kernel = string_at(v, e.kernel);
  out->bias = e.bias == XPC_NONE ? NULL : string_at(v, e.bias);
  out->region = e.region;
  out->family = e.family;
  out->flags = e.flags;
  if (e.region < v->regions.count) {
    xp_region r;
    xp_view_region(v, e.region, &r);
    out->sound = xp_entry_check(v, index, &r) == e.check && xp_region_is_sound(v, &r);
  }
}

bool xpack_file_entry_servable(const xpack_file* f, uint64_t index) {
  return f != NULL && xp_view_entry_findable(&f->file.view, index, XPACK_IDENTITY_MAX_LEN);
}

void xpack_file_get_family(const xpack_file* f, uint64_t index, xpack_file_family* out) {
  if (out == NULL) return;
  memset(out, 0, sizeof *out);
  if (f == NULL) return;
  xp_family m;
  xp_view_family(&f->file.view, index, &m);
  out->name = string_at(&f->file.view, m.name);
  out->flags = m.flags;
  out->probe_hash = m.probe_hash;
  out->probe_keys = m.probe_keys;
}

void xpack_file_get_input(const xpack_file* f, uint64_t index, xpack_file_input* out) {
  if (out == NULL) return;
  memset(out, 0, sizeof *out);
  if (f == NULL) return;
  const xp_view* v = &f->file.view;
  const uint8_t* p = v->base + v->provenance.offset + index * v->provenance.record_size;
  out->name = string_at(v, xp_le32(p + XPC_P_NAME));
  out->kind = xp_le32(p + XPC_P_KIND);
  out->file_size = xp_le64(p + XPC_P_FILE_SIZE);
  out->file_hash = xp_le64(p + XPC_P_FILE_HASH);
  out->program_size = xp_le64(p + XPC_P_PROGRAM_SIZE);
  out->program_hash = xp_le64(p + XPC_P_PROGRAM_HASH);
}

void xpack_file_get_info_pair(const xpack_file* f, uint64_t index, const char** key, const char** value) {
  if (key == NULL || value == NULL) return;
  *key = *value = NULL;
  if (f == NULL) return;
  const xp_view* v = &f->file.view;
  const uint8_t* p = v->base + v->info.offset + index * v->info.record_size;
  *key = string_at(v, xp_le32(p + XPC_I_KEY));
  *value = string_at(v, xp_le32(p + XPC_I_VALUE));
}

const char* xpack_file_info_value(const xpack_file* f, const char* key) {
  if (f == NULL || key == NULL) return NULL;
  for (uint64_t i = 0; i < f->file.view.info.count; i++) {
    const char *k, *value;
    xpack_file_get_info_pair(f, i, &k, &value);
    if (k != NULL && strcmp(k, key) == 0) return value;
  }
  return NULL;
}

int64_t xpack_file_find(const xpack_file* f, uint32_t seed, const char* kernel, const char* bias) {
  xp_entry e;
  xp_region r;
  uint64_t index;
  if (f == NULL || kernel == NULL) return -1;
  if (xp_view_find(&f->file.view, seed, kernel, strlen(kernel), bias, bias ? strlen(bias) : 0, &e, &r, &index) !=
      XPC_FOUND) {
    return -1;
  }
  return (int64_t)index;
}
