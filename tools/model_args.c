#include "model_args.h"

#include <string.h>

#include "cli_cache_source.h"
#include "cli_common.h"

/* A file, or a member of an archive (ARCHIVE!/MEMBER, cli_cache_source.h), into the set. */
static int add(xpack_model_set* set, const char* command, const char* path, xpack_model_kind kind) {
  cli_cache_source source;
  int rc = cli_model_source_open(command, path, &source);
  if (rc == 0) {
    xpack_model_input input = {.path = path, .kind = kind};
    if (source.archive != NULL) {
      input.archive = source.archive;
      input.archive_offset = source.where.data_offset;
      input.archive_size = source.where.stored_size;
    }
    xpack_error err;
    xpack_status st = xpack_model_set_add(set, &input, cli_message, NULL, &err);
    if (st != XPACK_OK) {
      cli_error("%s", err.message);
      rc = cli_exit_for_status(st);
    }
  }
  cli_cache_source_close(&source);
  return rc;
}

/* The next model file on the command line at or after argv[*i] (a positional argument, or the value of
 * --data), or NULL; *i is left past it. */
static const char* next_file(int argc, char** argv, const cli_options* options, int* i, xpack_model_kind* kind) {
  while (*i < argc) {
    const char* a = argv[(*i)++];
    if (strcmp(a, "--data") == 0) {
      *kind = XPACK_MODEL_DATA;
      return argv[(*i)++];
    }
    if (!cli_is_option(a)) {
      *kind = XPACK_MODEL_PROGRAM;
      return a;
    }
    if (cli_option_of(options, a)->takes_value && strchr(a, '=') == NULL) (*i)++;
  }
  return NULL;
}

int model_args_check(int argc, char** argv, const cli_options* options) {
  int rc = cli_check_options(options, argc, argv);
  int i = 0;
  xpack_model_kind kind;
  if (rc == 0 && next_file(argc, argv, options, &i, &kind) == NULL) {
    cli_error("%s: no program (.pte) given", options->command);
    return XPACK_EXIT_USAGE;
  }
  return rc;
}

size_t model_args_paths(int argc, char** argv, const cli_options* options, const char** paths, size_t max) {
  int i = 0;
  size_t n = 0;
  xpack_model_kind kind;
  const char* path;
  while (n < max && (path = next_file(argc, argv, options, &i, &kind)) != NULL) paths[n++] = path;
  return n;
}

int model_args_open(xpack_model_set* set, int argc, char** argv, const cli_options* options, unsigned set_flags) {
  xpack_model_set_init(set, set_flags);
  int rc = model_args_check(argc, argv, options);
  int i = 0;
  xpack_model_kind kind;
  const char* path;
  while (rc == 0 && (path = next_file(argc, argv, options, &i, &kind)) != NULL) rc = add(set, options->command, path, kind);
  return rc;
}
