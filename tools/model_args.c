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

int model_args_open(xpack_model_set* set, int argc, char** argv, const cli_options* options, unsigned set_flags) {
  xpack_model_set_init(set, set_flags);
  int rc = cli_check_options(options, argc, argv);
  for (int i = 0; rc == 0 && i < argc; i++) {
    const char* a = argv[i];
    if (strcmp(a, "--data") == 0) {
      rc = add(set, argv[++i], XPACK_MODEL_DATA);
    } else if (cli_is_option(a)) {
      if (cli_option_of(options, a)->takes_value && strchr(a, '=') == NULL) i++;
    } else {
      rc = add(set, a, XPACK_MODEL_PROGRAM);
    }
  }
  if (rc == 0 && set->program_count == 0 && set->ptd_count == 0) {
    cli_error("%s: no program (.pte) given", options->command);
    return XPACK_EXIT_USAGE;
  }
  return rc;
}
