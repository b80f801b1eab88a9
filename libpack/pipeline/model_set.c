/* The ExecuTorch files one pack or run works on: programs (.pte) and weight files (.ptd), opened in order. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include "common/error.h"
#include "common/file_map.h"
#include "xpack_pipeline.h"

const char* xpack_model_base_name(const char* path) {
  if (path == NULL) return NULL;
  const char* slash = strrchr(path, '/');
  return slash ? slash + 1 : path;
}

void xpack_model_set_init(xpack_model_set* set, unsigned flags) {
  memset(set, 0, sizeof *set);
  set->flags = flags;
}

void xpack_model_set_read_weights_ahead(const xpack_model_set* set) {
  if (set == NULL || !(set->flags & XPACK_MODEL_SET_WEIGHTS_ON_DEMAND)) return;
  for (size_t i = 0; i < set->program_count; i++) xpack_et_program_read_weights_ahead(set->programs[i]);
  for (size_t i = 0; i < set->ptd_count; i++) xpack_et_ptd_read_weights_ahead(set->ptds[i]);
}

static unsigned open_flags(const xpack_model_set* set) {
  return (set->flags & XPACK_MODEL_SET_WEIGHTS_ON_DEMAND) ? XPACK_ET_OPEN_WEIGHTS_ON_DEMAND : 0u;
}

/* What the set holds of a file besides its program or weights: a member's archive path and mapping. */
static void release_file(xpack_model_file* f) {
  if (f->mapping != NULL) {
    xp_file_map map = {f->mapping, f->mapping_size};
    xp_unmap_file(&map);
  }
  free(f->archive);
  memset(f, 0, sizeof *f);
}

/* Opens the file to learn its size and identity; the bytes are not read (run and inspect never need the
 * weights). A member of an archive is mapped where it lies. A file the set already holds is refused
 * (xpack_model_set_add). */
static xpack_status measure_file(const xpack_model_set* set, const xpack_model_input* input, xpack_model_file* f,
                                 xpack_error* err) {
  const char* file = input->archive ? input->archive : input->path;
  int fd = -1;
  uint64_t size = 0;
  struct stat sb;
  xpack_status st = xp_open_regular(file, &fd, &size, &sb, err);
  if (st != XPACK_OK) return st;
  *f = (xpack_model_file){.path = input->path, .size = size, .device = (uint64_t)sb.st_dev, .inode = (uint64_t)sb.st_ino};
  if (input->archive != NULL) {
    f->size = input->archive_size;
    f->archive_offset = input->archive_offset;
    st = xp_check_range(fd, input->archive_offset, input->archive_size, input->path, err);
    if (st == XPACK_OK && !(f->archive = strdup(input->archive))) st = xp_fail(err, XPACK_ERR_NOMEM, "%s: out of memory", input->path);
    uint64_t delta = 0;
    xp_file_map map = {NULL, 0};
    if (st == XPACK_OK) st = xp_map_range(fd, input->archive_offset, input->archive_size, input->path, &map, &delta, err);
    f->mapping = map.data;
    f->mapping_size = map.size;
    if (st != XPACK_OK) {
      close(fd);
      release_file(f);
      return st;
    }
  }
  close(fd);
  for (int kind = 0; kind < 2; kind++) {
    const xpack_model_file* held = kind ? set->ptd_files : set->program_files;
    const size_t count = kind ? set->ptd_count : set->program_count;
    for (size_t i = 0; i < count; i++) {
      if (held[i].device == f->device && held[i].inode == f->inode && held[i].archive_offset == f->archive_offset &&
          (held[i].archive != NULL) == (f->archive != NULL)) {
        xpack_status twice = xp_fail(err, XPACK_ERR_ARG, "%s: given twice (the same file as %s): give each file once",
                                     input->path, held[i].path);
        release_file(f);
        return twice;
      }
    }
  }
  return XPACK_OK;
}

/* A member's bytes, where its mapping holds them (NULL and 0 for an empty member). */
static const uint8_t* member_bytes(const xpack_model_file* f) {
  if (f->mapping == NULL) return NULL;
  return (const uint8_t*)f->mapping + (f->mapping_size - f->size);
}

static xpack_status open_ptd(const xpack_model_set* set, const xpack_model_file* f, xpack_et_ptd** out,
                             xpack_error* err) {
  if (f->archive != NULL) return xpack_et_ptd_open_memory(member_bytes(f), (size_t)f->size, f->path, out, err);
  return xpack_et_ptd_open_flags(f->path, open_flags(set), out, err);
}

static xpack_status add_ptd(xpack_model_set* set, const xpack_model_input* input, xpack_error* err) {
  if (set->ptd_count == XPACK_MODEL_SET_MAX_FILES) {
    return xp_fail(err, XPACK_ERR_ARG, "at most %d .ptd files", XPACK_MODEL_SET_MAX_FILES);
  }
  xpack_model_file* f = &set->ptd_files[set->ptd_count];
  xpack_status st = measure_file(set, input, f, err);
  if (st != XPACK_OK) return st;
  st = open_ptd(set, f, &set->ptds[set->ptd_count], err);
  if (st != XPACK_OK) {
    release_file(f);
    return st;
  }
  set->ptd_count++;
  return XPACK_OK;
}

static xpack_status add_program(xpack_model_set* set, const xpack_model_input* input, xpack_message_fn on_message,
                                void* message_context, xpack_error* err) {
  if (set->program_count == XPACK_MODEL_SET_MAX_FILES) {
    return xp_fail(err, XPACK_ERR_ARG, "at most %d programs", XPACK_MODEL_SET_MAX_FILES);
  }
  xpack_model_file* f = &set->program_files[set->program_count];
  xpack_status st = measure_file(set, input, f, err);
  if (st != XPACK_OK) return st;
  xpack_et_program** program = &set->programs[set->program_count];
  st = f->archive != NULL ? xpack_et_program_open_memory(member_bytes(f), (size_t)f->size, f->path, program, err)
                          : xpack_et_program_open_flags(f->path, open_flags(set), program, err);
  if (st != XPACK_OK) {
    xpack_et_ptd* ptd = NULL;
    if (st == XPACK_ERR_BAD_INPUT && set->ptd_count < XPACK_MODEL_SET_MAX_FILES &&
        open_ptd(set, f, &ptd, NULL) == XPACK_OK) { /* a weights file where a program was expected */
      if (on_message) {
        char text[XPACK_ERROR_MESSAGE_SIZE];
        snprintf(text, sizeof text, "%s is a .ptd weight file, not a program; use --data for it", f->path);
        on_message(message_context, XPACK_MESSAGE_NOTE, text);
      }
      set->ptd_files[set->ptd_count] = *f;
      set->ptds[set->ptd_count++] = ptd;
      memset(f, 0, sizeof *f); /* the mapping and the archive's path moved with it */
      return XPACK_OK;
    }
    release_file(f);
    return st;
  }
  const xpack_et_program_info* info = xpack_et_program_get_info(*program);
  size_t bytes_size = 0;
  const uint8_t* bytes = xpack_et_program_bytes(*program, &bytes_size);
  f->program_size = info->program_size <= bytes_size ? info->program_size : bytes_size;
  if (set->flags & XPACK_MODEL_SET_HASH_PROGRAMS) f->program_hash = XXH3_64bits(bytes, (size_t)f->program_size);
  set->program_count++;
  return XPACK_OK;
}

xpack_status xpack_model_set_add(xpack_model_set* set, const xpack_model_input* input, xpack_message_fn on_message,
                                 void* message_context, xpack_error* err) {
  if (set == NULL || input == NULL || input->path == NULL) {
    return xp_fail(err, XPACK_ERR_ARG, "xpack_model_set_add: NULL argument");
  }
  if (input->kind == XPACK_MODEL_DATA) return add_ptd(set, input, err);
  return add_program(set, input, on_message, message_context, err);
}

void xpack_model_set_close(xpack_model_set* set) {
  if (set == NULL) return;
  for (size_t i = 0; i < set->program_count; i++) {
    xpack_et_program_close(set->programs[i]);
    release_file(&set->program_files[i]);
  }
  for (size_t i = 0; i < set->ptd_count; i++) {
    xpack_et_ptd_close(set->ptds[i]);
    release_file(&set->ptd_files[i]);
  }
  xpack_model_set_init(set, set->flags);
}

xpack_et_named_sources xpack_model_set_sources(const xpack_model_set* set, size_t program) {
  xpack_et_named_sources s = {NULL, NULL, 0};
  if (set == NULL || program >= set->program_count) return s;
  s = (xpack_et_named_sources){set->programs[program], (const xpack_et_ptd* const*)set->ptds, set->ptd_count};
  return s;
}
