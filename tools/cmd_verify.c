/* xpack verify FILE [--json]: structure, bounds and every checksum, then whether this machine's loader
 * would serve the entries (file compatibility and every packing family's probe); exit 1 when anything is
 * wrong or any entry would be refused here. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_cache_source.h"
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
    fprintf(cli_out(), "%s: %s\n", cli_name(where), cli_name(what));
  }
}

/* A clean report with --model says how much it rests on: a model that packs nothing compares nothing. */
static void print_model_text(const char* path, const model_verdict* m) {
  fprintf(cli_out(), "%s: with the models: %llu of %llu packed weights as this machine packs them; ", cli_name(path),
          (unsigned long long)m->weights_agreeing, (unsigned long long)m->weights_compared);
  if (!m->ran) {
    fprintf(cli_out(), "not run with the cache\n");
    return;
  }
  fprintf(cli_out(), "%llu of %llu delegates give the same outputs with and without it (%llu look-ups: %llu hits, %llu misses)\n",
          (unsigned long long)m->delegates_identical, (unsigned long long)m->delegates_run,
          (unsigned long long)m->lookups, (unsigned long long)m->hits, (unsigned long long)m->misses);
}

static void print_model_json(json* j, const model_verdict* m) {
  json_object(j);
  json_key(j, "weights_compared"); json_uint(j, m->weights_compared);
  json_key(j, "weights_agreeing"); json_uint(j, m->weights_agreeing);
  json_key(j, "ran_with_cache"); json_bool(j, m->ran);
  json_key(j, "delegates_run"); json_uint(j, m->delegates_run);
  json_key(j, "delegates_identical"); json_uint(j, m->delegates_identical);
  json_key(j, "lookups"); json_uint(j, m->lookups);
  json_key(j, "hits"); json_uint(j, m->hits);
  json_key(j, "misses"); json_uint(j, m->misses);
  json_end_object(j);
}

/* Where an archive's member lies and whether the loader maps it there, which the cache's own XNNPACK alignment
 * decides (cache_read: the cache was read whole and sound, so that alignment can be taken from it). */
static void report_archive(const cli_cache_source* s, int cache_read, json* j) {
  uint32_t alignment = 0, page = 0;
  xpack_file* f = NULL;
  if (cache_read && cli_cache_source_open_file(s, &f, NULL) == XPACK_OK) {
    xpack_file_info info;
    xpack_file_get_info(f, &info);
    alignment = info.xnn_alignment;
    page = info.page_alignment;
  }
  xpack_file_close(f);
  const int mappable = alignment != 0 && cli_cache_source_mappable(s, alignment);
  if (j) {
    json_key(j, "archive"); json_object(j);
    json_key(j, "path"); json_string(j, s->archive);
    json_key(j, "member"); json_string(j, s->member);
    json_key(j, "data_offset"); json_uint(j, s->where.data_offset);
    json_key(j, "stored_size"); json_uint(j, s->where.stored_size);
    json_key(j, "stored"); json_bool(j, s->where.method == XPACK_ARCHIVE_STORED);
    json_key(j, "method"); json_uint(j, s->where.method);
    json_key(j, "mapped_in_place");
    if (alignment) json_bool(j, mappable);
    else json_null(j);
    json_key(j, "page_aligned");
    if (page) json_bool(j, s->where.data_offset % page == 0);
    else json_null(j);
    json_end_object(j);
    return;
  }
  if (alignment == 0) return; /* the problems above say why */
  if (mappable) {
    cli_line(cli_out(), "%s: member of %s at offset %llu: the loader maps it where it lies%s", s->arg, s->archive,
             (unsigned long long)s->where.data_offset,
             s->where.data_offset % page == 0 ? " (page-aligned: its pages are shared with every process mapping the archive)"
                                              : "");
  } else {
    cli_line(cli_out(),
             "%s: note: member of %s at offset %llu, not a multiple of the cache's XNNPACK alignment (%u): the loader "
             "reads its %llu bytes into the app's memory instead of mapping them; place it at a multiple of %u (4096 "
             "shares its pages)",
             s->arg, s->archive, (unsigned long long)s->where.data_offset, alignment,
             (unsigned long long)s->where.stored_size, alignment);
  }
}

static const cli_option kOptions[] = {{"--json", 0, 0, 0}, {"--model", 1, 0, 1}, {"--data", 1, 0, 1}};
static const cli_options kVerifyOptions = {"verify", kOptions, sizeof kOptions / sizeof kOptions[0]};

int cmd_verify(int argc, char** argv) {
  int rc = cli_check_options(&kVerifyOptions, argc, argv);
  if (rc != 0) return rc;
  const char* path = NULL;
  int as_json = 0;
  int with_model = 0;
  int model_argc = 0;
  char* model_argv[2 * XPACK_MODEL_SET_MAX_FILES + 2];
  const int model_room = (int)(sizeof model_argv / sizeof model_argv[0]);
  for (int i = 0; i < argc; i++) {
    if (strcmp(argv[i], "--json") == 0) as_json = 1;
    else if (cli_is_option(argv[i])) { /* --model or --data, with its value (cli_check_options) */
      if (model_argc + 2 > model_room) {
        cli_error("verify: at most %d programs and .ptd files", XPACK_MODEL_SET_MAX_FILES);
        return XPACK_EXIT_USAGE;
      }
      with_model |= strcmp(argv[i], "--model") == 0;
      if (strcmp(argv[i], "--data") == 0) model_argv[model_argc++] = argv[i];
      model_argv[model_argc++] = argv[++i];
    } else if (path == NULL) {
      path = argv[i];
    } else if (with_model && model_argc + 1 <= model_room) {
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
  if (model_argc > 0 && !with_model) {
    cli_error("verify: --data needs --model");
    return XPACK_EXIT_USAGE;
  }
  cli_cache_source source;
  rc = cli_cache_source_open("verify", path, &source);
  if (rc != 0) {
    cli_cache_source_close(&source);
    return rc;
  }
  json j;
  json_init(&j, cli_out());
  report r = {as_json, &j};
  if (as_json) {
    json_object(&j);
    json_key(&j, "file"); json_string(&j, path);
    json_key(&j, "problems"); json_array(&j);
  }
  uint64_t problems = 0;
  xpack_error err;
  cli_file_identity identity;
  const char* const file_path = source.archive ? source.archive : path; /* the file the checks open */
  cli_file_identity_take(file_path, &identity);
  const char* unusable = cli_cache_source_unusable(&source);
  xpack_status st = XPACK_OK;
  if (unusable) {
    on_problem(&r, path, unusable);
    problems = 1;
  } else {
    st = cli_cache_source_verify(&source, on_problem, &r, &problems, &err);
  }
  model_verdict model;
  const int model_checked = st == XPACK_OK && problems == 0 && with_model;
  if (model_checked) {
    xpack_model_set set;
    rc = model_args_open(&set, model_argc, model_argv, &kVerifyOptions, XPACK_MODEL_SET_HASH_PROGRAMS);
    if (rc == 0) rc = verify_against_model(&source, &set, on_problem, &r, &problems, &model);
    xpack_model_set_close(&set);
    if (rc != 0) { /* the models could not be read: an error, no report (cli_out) */
      cli_cache_source_close(&source);
      return rc;
    }
  }
  if (st == XPACK_OK && !as_json) {
    if (problems == 0) fprintf(cli_out(), "%s: sound\n", cli_name(path));
    else fprintf(cli_out(), "%s: %llu problem%s\n", cli_name(path), (unsigned long long)problems, problems == 1 ? "" : "s");
    if (model_checked) print_model_text(path, &model);
  }
  if (as_json) {
    json_end_array(&j);
    json_key(&j, "model");
    if (model_checked) print_model_json(&j, &model);
    else json_null(&j);
  }
  if (source.archive) report_archive(&source, !unusable && st == XPACK_OK && problems == 0, as_json ? &j : NULL);
  machine_verdict machine = {0};
  if (st == XPACK_OK && !unusable) verify_for_this_machine(&source, as_json ? &j : NULL, &machine);
  if (machine.error.status != XPACK_OK) {
    st = machine.error.status;
    err = machine.error;
  }
  const int refused_here = machine.checked && machine.entries_refused > 0;
  if (as_json) {
    json_key(&j, "served_here"); json_bool(&j, machine.checked && !refused_here);
    json_key(&j, "problem_count"); json_uint(&j, problems);
    json_key(&j, "status"); json_string(&j, st == XPACK_OK ? "checked" : xpack_status_name(st));
    json_key(&j, "sound"); json_bool(&j, st == XPACK_OK && problems == 0);
    json_end_object(&j);
    json_finish(&j);
  }
  if (st == XPACK_ERR_IO || st == XPACK_ERR_NOMEM) {
    cli_error("%s", err.message);
    cli_cache_source_close(&source);
    return cli_exit_for_status(st);
  }
  /* Each check opened the file by name: they are one report only if they saw one file. */
  const int one_file = cli_file_identity_still(file_path, &identity, "verify",
                                               "its checks may have seen different files, so nothing is reported");
  cli_cache_source_close(&source);
  if (!one_file) return XPACK_EXIT_FAILED;
  return (st == XPACK_OK && problems == 0 && !refused_here) ? XPACK_EXIT_OK : XPACK_EXIT_CHECK_FAILED;
}
