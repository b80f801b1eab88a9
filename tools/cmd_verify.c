/* xpack verify FILE [--json]: structure, bounds and every checksum, then whether this machine's loader
 * would serve the entries (file compatibility and every packing family's probe); exit 1 when anything is
 * wrong or any entry would be refused here. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_common.h"
#include "commands.h"
#include "json.h"
#include "verify_machine.h"
#include "model_args.h"
#include "verify_model.h"
#include "xpack.h"

typedef struct report {
  int as_json;
  json* j;
} report;

static void on_problem(void* context, const char* where, const char* what) {
  report* r = context;
  if (r->as_json) {
    json_object(r->j);
    json_key(r->j, "where"); json_string(r->j, where);
    json_key(r->j, "what"); json_string(r->j, what);
    json_end_object(r->j);
  } else {
    printf("%s: %s\n", where, what);
  }
}

static int takes_value(const char* a) { return strcmp(a, "--model") == 0; }
static int is_flag(const char* a) { return strcmp(a, "--json") == 0; }

int cmd_verify(int argc, char** argv) {
  const char* path = NULL;
  int as_json = 0;
  int with_model = 0;
  int model_argc = 0;
  char* model_argv[2 * XPACK_MODEL_SET_MAX_FILES + 2];
  for (int i = 0; i < argc; i++) {
    if (strcmp(argv[i], "--json") == 0) as_json = 1;
    else if ((strcmp(argv[i], "--model") == 0 || strcmp(argv[i], "--data") == 0) && i + 1 < argc &&
             model_argc + 2 <= (int)(sizeof model_argv / sizeof model_argv[0])) {
      with_model |= strcmp(argv[i], "--model") == 0;
      if (strcmp(argv[i], "--data") == 0) model_argv[model_argc++] = argv[i];
      model_argv[model_argc++] = argv[++i];
    } else if (argv[i][0] == '-' && argv[i][1] != 0) {
      cli_error("verify: unknown option %s", argv[i]);
      return XPACK_EXIT_USAGE;
    } else if (path == NULL) {
      path = argv[i];
    } else if (with_model && model_argc + 1 <= (int)(sizeof model_argv / sizeof model_argv[0])) {
      model_argv[model_argc++] = argv[i]; /* more programs after --model */
    } else {
      cli_error("verify: one file at a time");
      return XPACK_EXIT_USAGE;
    }
  }
  if (path == NULL) {
    cli_error("verify: missing FILE (usage: xpack verify FILE [--json])");
    return XPACK_EXIT_USAGE;
  }
  /* The JSON report is held back until the end: when FILE cannot be read, stdout stays empty and the
   * error goes to stderr, as for every command. */
  char* held = NULL;
  size_t held_size = 0;
  FILE* held_out = as_json ? open_memstream(&held, &held_size) : NULL;
  if (as_json && held_out == NULL) {
    cli_error("verify: out of memory");
    return XPACK_EXIT_FAILED;
  }
  json j;
  json_init(&j, as_json ? held_out : stdout);
  report r = {as_json, &j};
  if (as_json) {
    json_object(&j);
    json_key(&j, "file"); json_string(&j, path);
    json_key(&j, "problems"); json_array(&j);
  }
  if (model_argc > 0 && !with_model) {
    cli_error("verify: --data needs --model");
    if (held_out) fclose(held_out);
    free(held);
    return XPACK_EXIT_USAGE;
  }
  uint64_t problems = 0;
  xpack_error err;
  xpack_status st = xpack_verify_file(path, on_problem, &r, &problems, &err);
  if (st == XPACK_OK && problems == 0 && with_model) {
    xpack_model_set set;
    int rc = model_args_open(&set, model_argc, model_argv, takes_value, is_flag, 1);
    if (rc == 0) rc = verify_against_model(path, &set, on_problem, &r, &problems);
    xpack_model_set_close(&set);
    if (rc != 0) {
      if (held_out) fclose(held_out);
      free(held); /* the models could not be read: an error, no report */
      return rc;
    }
  }
  if (st == XPACK_OK && !as_json) {
    if (problems == 0) printf("%s: sound\n", path);
    else printf("%s: %llu problem%s\n", path, (unsigned long long)problems, problems == 1 ? "" : "s");
  }
  if (as_json) json_end_array(&j);
  machine_verdict machine = {0};
  if (st == XPACK_OK) verify_for_this_machine(path, as_json ? &j : NULL, &machine);
  const int refused_here = machine.checked && machine.entries_refused > 0;
  if (as_json) {
    json_key(&j, "served_here"); json_bool(&j, machine.checked && !refused_here);
    json_key(&j, "problem_count"); json_uint(&j, problems);
    json_key(&j, "status"); json_string(&j, st == XPACK_OK ? "checked" : xpack_status_name(st));
    json_key(&j, "sound"); json_bool(&j, st == XPACK_OK && problems == 0);
    json_end_object(&j);
    json_finish(&j);
    fclose(held_out);
  }
  if (st == XPACK_ERR_IO || st == XPACK_ERR_NOMEM) {
    free(held);
    cli_error("%s", err.message);
    return XPACK_EXIT_BAD_INPUT;
  }
  if (held) {
    fwrite(held, 1, held_size, stdout);
    free(held);
  }
  return (st == XPACK_OK && problems == 0 && !refused_here) ? XPACK_EXIT_OK : XPACK_EXIT_CHECK_FAILED;
}
