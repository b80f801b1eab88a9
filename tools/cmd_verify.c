/* xpack verify FILE [--json]: structure, bounds and every checksum; exit 1 when anything is wrong. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_common.h"
#include "commands.h"
#include "json.h"
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

int cmd_verify(int argc, char** argv) {
  const char* path = NULL;
  int as_json = 0;
  for (int i = 0; i < argc; i++) {
    if (strcmp(argv[i], "--json") == 0) as_json = 1;
    else if (argv[i][0] == '-' && argv[i][1] != 0) {
      cli_error("verify: unknown option %s", argv[i]);
      return XPACK_EXIT_USAGE;
    } else if (path == NULL) path = argv[i];
    else {
      cli_error("verify: one file at a time");
      return XPACK_EXIT_USAGE;
    }
  }
  if (path == NULL) {
    cli_error("verify: missing FILE (usage: xpack verify FILE [--json])");
    return XPACK_EXIT_USAGE;
  }
  json j;
  json_init(&j, stdout);
  report r = {as_json, &j};
  if (as_json) {
    json_object(&j);
    json_key(&j, "file"); json_string(&j, path);
    json_key(&j, "problems"); json_array(&j);
  }
  uint64_t problems = 0;
  xpack_error err;
  xpack_status st = xpack_verify_file(path, on_problem, &r, &problems, &err);
  if (as_json) {
    json_end_array(&j);
    json_key(&j, "problem_count"); json_uint(&j, problems);
    json_key(&j, "status"); json_string(&j, st == XPACK_OK ? "checked" : xpack_status_name(st));
    json_key(&j, "sound"); json_bool(&j, st == XPACK_OK && problems == 0);
    json_end_object(&j);
    json_finish(&j);
  } else if (st == XPACK_OK && problems == 0) {
    printf("%s: sound\n", path);
  } else if (st == XPACK_OK) {
    printf("%s: %llu problem%s\n", path, (unsigned long long)problems, problems == 1 ? "" : "s");
  }
  if (st == XPACK_ERR_IO || st == XPACK_ERR_NOMEM) {
    if (!as_json) cli_error("%s", err.message);
    return XPACK_EXIT_BAD_INPUT;
  }
  return (st == XPACK_OK && problems == 0) ? XPACK_EXIT_OK : XPACK_EXIT_CHECK_FAILED;
}
