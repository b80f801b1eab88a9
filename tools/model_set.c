#include "model_set.h"

#include <stdio.h>
#include <string.h>
#include <xxhash.h>

#include "cli_common.h"
#include "common/file_map.h"

const char* model_base_name(const char* path) {
  const char* slash = strrchr(path, '/');
  return slash ? slash + 1 : path;
}

/* Opens the file to learn its size; the bytes are not read (run and inspect never need the weights). */
static int measure_file(const char* path, model_file* f) {
  xp_file_map map;
  xpack_error err;
  if (xp_map_file(path, &map, &err) != XPACK_OK) {
    cli_error("%s", err.message);
    return XPACK_EXIT_BAD_INPUT;
  }
  f->path = path;
  f->size = map.size;
  xp_unmap_file(&map);
  return 0;
}

uint64_t model_set_file_hash(const model_set* set, int ptd, size_t i) {
  size_t size = 0;
  const uint8_t* bytes = ptd ? xpack_et_ptd_bytes(set->ptds[i], &size) : xpack_et_program_bytes(set->programs[i], &size);
  return XXH3_64bits(bytes, size);
}

int model_set_open(model_set* set, int argc, char** argv, int (*is_option_with_value)(const char*),
                   int (*is_flag)(const char*)) {
  memset(set, 0, sizeof *set);
  for (int i = 0; i < argc; i++) {
    const char* a = argv[i];
    xpack_error err;
    if (strcmp(a, "--data") == 0) {
      if (i + 1 >= argc) {
        cli_error("--data needs a .ptd file");
        return XPACK_EXIT_USAGE;
      }
      const char* path = argv[++i];
      if (set->ptd_count == MODEL_SET_MAX_FILES) {
        cli_error("at most %d .ptd files", MODEL_SET_MAX_FILES);
        return XPACK_EXIT_USAGE;
      }
      int rc = measure_file(path, &set->ptd_files[set->ptd_count]);
      if (rc) return rc;
      xpack_status st = xpack_et_ptd_open(path, &set->ptds[set->ptd_count], &err);
      if (st != XPACK_OK) {
        cli_error("%s", err.message);
        return cli_exit_for_status(st);
      }
      set->ptd_count++;
    } else if (is_option_with_value && is_option_with_value(a)) {
      i++;
    } else if (a[0] == '-' && a[1] != 0) {
      if (!(is_flag && is_flag(a))) {
        cli_error("unknown option %s", a);
        return XPACK_EXIT_USAGE;
      }
    } else {
      if (set->program_count == MODEL_SET_MAX_FILES) {
        cli_error("at most %d programs", MODEL_SET_MAX_FILES);
        return XPACK_EXIT_USAGE;
      }
      model_file* f = &set->program_files[set->program_count];
      int rc = measure_file(a, f);
      if (rc) return rc;
      xpack_status st = xpack_et_program_open(a, &set->programs[set->program_count], &err);
      if (st != XPACK_OK) {
        xpack_et_ptd* ptd = NULL;
        if (st == XPACK_ERR_BAD_INPUT && set->ptd_count < MODEL_SET_MAX_FILES &&
            xpack_et_ptd_open(a, &ptd, NULL) == XPACK_OK) { /* a weights file where a program was expected */
          if (g_verbosity >= 0) fprintf(stderr, "note: %s is a .ptd weight file, not a program; use --data for it\n", a);
          set->ptd_files[set->ptd_count] = *f;
          set->ptds[set->ptd_count++] = ptd;
          continue;
        }
        cli_error("%s", err.message);
        return cli_exit_for_status(st);
      }
      const xpack_et_program_info* info = xpack_et_program_get_info(set->programs[set->program_count]);
      size_t bytes_size = 0;
      const uint8_t* bytes = xpack_et_program_bytes(set->programs[set->program_count], &bytes_size);
      f->program_size = info->program_size <= bytes_size ? info->program_size : bytes_size;
      f->program_hash = XXH3_64bits(bytes, (size_t)f->program_size);
      set->program_count++;
    }
  }
  if (set->program_count == 0 && set->ptd_count == 0) {
    cli_error("no program (.pte) given");
    return XPACK_EXIT_USAGE;
  }
  return 0;
}

void model_set_close(model_set* set) {
  for (size_t i = 0; i < set->program_count; i++) xpack_et_program_close(set->programs[i]);
  for (size_t i = 0; i < set->ptd_count; i++) xpack_et_ptd_close(set->ptds[i]);
  memset(set, 0, sizeof *set);
}

xpack_et_named_sources model_set_sources(const model_set* set, size_t program) {
  xpack_et_named_sources s = {set->programs[program], (const xpack_et_ptd* const*)set->ptds, set->ptd_count};
  return s;
}
