#include "model_args.h"

#include <string.h>

#include "cli_common.h"

static int add(xpack_model_set* set, const char* path, xpack_model_kind kind) {
  const xpack_model_input input = {path, kind};
  xpack_error err;
  xpack_status st = xpack_model_set_add(set, &input, cli_message, NULL, &err);
  if (st == XPACK_OK) return 0;
  cli_error("%s", err.message);
  return cli_exit_for_status(st);
}

int model_args_open(xpack_model_set* set, int argc, char** argv, int (*is_option_with_value)(const char*),
                    int (*is_flag)(const char*), int hash_programs) {
  xpack_model_set_init(set, hash_programs);
  for (int i = 0; i < argc; i++) {
    const char* a = argv[i];
    int rc = 0;
    if (strcmp(a, "--data") == 0) {
      if (i + 1 >= argc) {
        cli_error("--data needs a .ptd file");
        return XPACK_EXIT_USAGE;
      }
      rc = add(set, argv[++i], XPACK_MODEL_DATA);
    } else if (is_option_with_value && is_option_with_value(a)) {
      i++;
    } else if (a[0] == '-' && a[1] != 0) {
      if (!(is_flag && is_flag(a))) {
        cli_error("unknown option %s", a);
        return XPACK_EXIT_USAGE;
      }
    } else {
      rc = add(set, a, XPACK_MODEL_PROGRAM);
    }
    if (rc) return rc;
  }
  if (set->program_count == 0 && set->ptd_count == 0) {
    cli_error("no program (.pte) given");
    return XPACK_EXIT_USAGE;
  }
  return 0;
}
