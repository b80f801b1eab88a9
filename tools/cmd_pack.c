/* xpack pack: replay every XNNPACK delegate through one recording weights cache and write the cache file. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli_common.h"
#include "commands.h"
#include "json.h"
#include "model_args.h"
#include "progress.h"
#include "xpack_loader.h"
#include "xpack_pipeline.h"

static const cli_option kOptions[] = {{"-o", 1, 0, 0},     {"--page-size", 1, 0, 0}, {"--jobs", 1, 0, 0},
                                      {"--zstd", 0, 1, 0}, {"--json", 0, 0, 0},      {"--data", 1, 0, 1}};
static const cli_options kPackOptions = {"pack", kOptions, sizeof kOptions / sizeof kOptions[0]};

static char* default_output(const char* model) {
  size_t n = strlen(model);
  char* out = malloc(n + 5);
  if (out == NULL) return NULL;
  memcpy(out, model, n + 1);
  char* dot = strrchr(out, '.');
  char* slash = strrchr(out, '/');
  if (dot && (!slash || dot > slash)) *dot = 0;
  strcat(out, ".xpc");
  return out;
}

/* "Nothing to pack" is a result, not an error (exit 0, no file): text, or with --json
 * {"output": null, "written": false, "nothing_to_pack": why}. */
static void report_nothing(int as_json, const char* why) {
  if (as_json) {
    json j;
    json_init(&j, cli_out());
    json_object(&j);
    json_key(&j, "output"); json_null(&j);
    json_key(&j, "written"); json_bool(&j, 0);
    json_key(&j, "nothing_to_pack"); json_string(&j, why);
    json_end_object(&j);
    json_finish(&j);
  } else if (g_verbosity >= 0) {
    fprintf(cli_out(), "nothing to pack: %s\n", why);
  }
}

/* The size of the mappable file, as the loader sees it (the transport form is inflated first), or UINT64_MAX. */
static uint64_t mappable_size(const char* out_path, int level, const xpack_transport_stats* transport) {
  struct stat st;
  if (level) return transport->input_size;
  return stat(out_path, &st) == 0 ? (uint64_t)st.st_size : UINT64_MAX;
}

static void report_written(int as_json, const char* out_path, int level, const xpack_pack_report* r) {
  const xpack_writer_stats* stats = &r->stats;
  const xpack_transport_stats* transport = &r->transport;
  /* Under XPACK_SMALL_CACHE_BYTES, XNNPACK packs a program's weights at load in less time than the loader takes to
   * open a cache and probe its packing families: the cache cannot make the app start sooner (XPACK_OPEN_SKIP_SMALL
   * skips it). Under XPACK_COLD_CACHE_BYTES it wins only from the page cache: read from storage it costs about
   * what packing does (XPACK_OPEN_SKIP_COLD skips it then). docs/BENCHMARKS.md, "Never slower", measures both. */
  const uint64_t size = mappable_size(out_path, level, transport);
  const int small = size < XPACK_SMALL_CACHE_BYTES;
  const int warm_only = !small && size < XPACK_COLD_CACHE_BYTES;
  char b1[32], b2[32], b3[32], b4[32];
  if (as_json) {
    json j;
    json_init(&j, cli_out());
    json_object(&j);
    json_key(&j, "output"); json_string(&j, out_path);
    json_key(&j, "written"); json_bool(&j, 1); /* as with nothing to pack (false there), for pipelines that test it */
    json_key(&j, "xnnpack_delegates"); json_uint(&j, r->xnnpack);
    json_key(&j, "packed_delegates"); json_uint(&j, r->packed);
    json_key(&j, "not_packed_delegates"); json_uint(&j, r->not_packed);
    json_key(&j, "skipped_delegates"); json_uint(&j, r->skipped);
    json_key(&j, "entries"); json_uint(&j, stats->entries);
    json_key(&j, "regions"); json_uint(&j, stats->regions);
    json_key(&j, "packed_bytes"); json_uint(&j, stats->packed_bytes);
    json_key(&j, "stored_bytes"); json_uint(&j, stats->stored_bytes);
    json_key(&j, "shared_reuses"); json_uint(&j, stats->reused);
    json_key(&j, "shared_bytes"); json_uint(&j, stats->reused_bytes);
    json_key(&j, "dedup_saved_bytes"); json_uint(&j, stats->packed_bytes - stats->stored_bytes);
    json_key(&j, "unbound"); json_uint(&j, stats->unbound);
    json_key(&j, "no_family"); json_uint(&j, stats->no_family);
    json_key(&j, "likely_slower_than_packing"); json_bool(&j, small);
    json_key(&j, "wins_only_warm"); json_bool(&j, warm_only);
    if (level) {
      json_key(&j, "zstd_level"); json_uint(&j, (uint64_t)level);
      json_key(&j, "mappable_size"); json_uint(&j, transport->input_size);
      json_key(&j, "transport_size"); json_uint(&j, transport->output_size);
      json_key(&j, "frame_bytes"); json_uint(&j, transport->frame_bytes);
    }
    json_end_object(&j);
    json_finish(&j);
  } else if (g_verbosity >= 0) {
    fprintf(cli_out(), "wrote %s: %zu of %zu XNNPACK delegate%s packed", out_path, r->packed, r->xnnpack,
            r->xnnpack == 1 ? "" : "s");
    if (r->skipped) fprintf(cli_out(), ", %zu other delegate%s skipped", r->skipped, r->skipped == 1 ? "" : "s");
    fprintf(cli_out(), "\n  %llu entries, %llu regions, %s stored\n", (unsigned long long)stats->entries,
            (unsigned long long)stats->regions, cli_bytes(stats->stored_bytes, b1));
    fprintf(cli_out(), "  shared by methods/programs: %llu re-uses, %s not packed again; identical packed bytes: %s saved\n",
            (unsigned long long)stats->reused, cli_bytes(stats->reused_bytes, b2),
            cli_bytes(stats->packed_bytes - stats->stored_bytes, b3));
    if (level) {
      fprintf(cli_out(), "  transport form, zstd level %d: %s of regions in %s of frames (%.3f); file %s, mappable %s\n", level,
              cli_bytes(transport->region_bytes, b1), cli_bytes(transport->frame_bytes, b2),
              transport->region_bytes ? (double)transport->frame_bytes / (double)transport->region_bytes : 1.0,
             cli_bytes(transport->output_size, b3), cli_bytes(transport->input_size, b4));
      fprintf(cli_out(), "  the loader needs the mappable form: xpack inflate %s OUT.xpc\n", out_path);
    }
    if (stats->unbound) {
      fprintf(cli_out(), "  %llu packed weight%s had no identity and are not in the cache\n", (unsigned long long)stats->unbound,
              stats->unbound == 1 ? "" : "s");
    }
    if (stats->no_family) {
      fprintf(cli_out(), "  %llu packed weight%s belong to no packing family a loader could check and are not in the cache\n",
              (unsigned long long)stats->no_family, stats->no_family == 1 ? "" : "s");
    }
    if (small || warm_only) {
      cli_line(stderr, "note: %s is under %s (%s of packed weights); %s", out_path,
              cli_bytes(small ? XPACK_SMALL_CACHE_BYTES : XPACK_COLD_CACHE_BYTES, b2), cli_bytes(stats->stored_bytes, b1),
              small ? "XNNPACK packs that few at load faster than a cache is opened and its packing families checked, "
                      "so shipping it will not make the app start sooner, and an app opening it with "
                      "XPACK_OPEN_SKIP_SMALL skips it (docs/BENCHMARKS.md, \"Never slower\")"
                    : "from the page cache it makes a start sooner, but read from storage it costs about what packing "
                      "does: apps should open it with XPACK_OPEN_SKIP_COLD and call xpack_cache_warm_up after the "
                      "first inference (docs/INTEGRATION.md)");
    }
  }
  if (r->not_packed) {
    fprintf(stderr, "warning: %zu XNNPACK delegate%s not packed (see above)\n", r->not_packed,
            r->not_packed == 1 ? "" : "s");
  }
}

/* The pipeline's progress drives the progress line. */
static void on_progress(void* context, uint64_t done, uint64_t total, uint64_t packed_bytes) {
  if (done == 0) progress_set_total(context, total);
  else progress_item_done(context, packed_bytes);
}

/* The options' values: a usage error (exit 2) names the option and what it accepts. */
static int parse_options(int argc, char** argv, const char** out_path, uint32_t* page, int* level, int* jobs,
                         int* as_json) {
  int rc = cli_check_options(&kPackOptions, argc, argv);
  for (int i = 0; rc == 0 && i < argc; i++) {
    const char* a = argv[i];
    uint64_t v = 0;
    if (strcmp(a, "-o") == 0) *out_path = argv[++i];
    else if (strcmp(a, "--json") == 0) *as_json = 1;
    else if (strcmp(a, "--zstd") == 0) *level = XPACK_ZSTD_LEVEL_DEFAULT;
    else if (strncmp(a, "--zstd=", 7) == 0) {
      rc = cli_parse_number("pack", "--zstd=", a + 7, XPACK_ZSTD_LEVEL_MIN, XPACK_ZSTD_LEVEL_MAX, NULL, &v);
      *level = (int)v;
    } else if (strcmp(a, "--jobs") == 0) {
      rc = cli_parse_number("pack", a, argv[++i], 1, 1024, NULL, &v);
      *jobs = (int)v;
    } else if (strcmp(a, "--page-size") == 0) {
      const char* accepted = "4096 or 16384";
      rc = cli_parse_number("pack", a, argv[++i], 4096, 16384, accepted, &v);
      if (rc == 0 && v != 4096 && v != 16384) rc = cli_bad_value("pack", a, argv[i], accepted);
      *page = (uint32_t)v;
    } else if (strcmp(a, "--data") == 0) i++;
  }
  return rc;
}

int cmd_pack(int argc, char** argv) {
  const char* out_path = NULL;
  uint32_t page = 0;
  int as_json = 0;
  int level = 0; /* 0: the mappable form; else the zstd level of the transport form */
  long online = sysconf(_SC_NPROCESSORS_ONLN);
  int jobs = online > 0 ? (int)online : 1; /* delegates replayed at once (xpack_pack_options.jobs) */
  int rc = parse_options(argc, argv, &out_path, &page, &level, &jobs, &as_json);
  if (rc != 0) return rc;
  rc = model_args_check(argc, argv, &kPackOptions);
  if (rc == 0 && out_path != NULL) { /* a bad output is refused before the inputs are read and hashed */
    const char* inputs[2 * XPACK_MODEL_SET_MAX_FILES];
    const size_t n = model_args_paths(argc, argv, &kPackOptions, inputs, sizeof inputs / sizeof inputs[0]);
    xpack_error err;
    const xpack_status st = xpack_pack_check_output(out_path, inputs, n, &err);
    if (st != XPACK_OK) { /* as xpack_pack_set's own check: a folder not writable is "could not complete" */
      cli_error("%s", err.message);
      return st == XPACK_ERR_ARG ? XPACK_EXIT_USAGE : XPACK_EXIT_FAILED;
    }
  }
  if (rc != 0) return rc;
  xpack_model_set set;
  rc = model_args_open(&set, argc, argv, &kPackOptions, XPACK_MODEL_SET_HASH_PROGRAMS);
  char* default_path = NULL;
  if (rc == 0 && set.program_count > 0 && out_path == NULL) {
    /* A program inside an archive: its cache beside the archive would be inside it, so in this folder. */
    const xpack_model_file* first = &set.program_files[0];
    out_path = default_path = default_output(first->archive ? xpack_model_base_name(first->path) : first->path);
  }
  if (rc == 0) {
    progress* bar = set.program_count ? progress_start("xpack pack", "delegates", !as_json) : NULL;
    xpack_pack_options options = {.output_path = out_path, .page_alignment = page, .jobs = jobs,
                                  .zstd_level = level, .on_message = cli_message,
                                  .on_progress = bar ? on_progress : NULL, .progress_context = bar};
    xpack_pack_report report;
    xpack_error err;
    xpack_status st = xpack_pack_set(&set, &options, &report, &err);
    progress_finish(bar);
    if (st != XPACK_OK) {
      cli_error("%s", err.message);
      rc = report.failed_on_input || st == XPACK_ERR_ARG ? cli_exit_for_status(st) : XPACK_EXIT_FAILED;
    } else if (report.result == XPACK_PACK_NOTHING) {
      report_nothing(as_json, report.nothing_to_pack);
    } else {
      report_written(as_json, out_path, level, &report);
    }
    for (size_t i = 0; st == XPACK_OK && i < set.ptd_count && g_verbosity >= 0; i++) {
      if (xpack_et_ptd_was_named(set.ptds[i])) continue;
      cli_line(stderr, "note: %s: no XNNPACK delegate of the programs given names any of its %zu entries; it adds "
               "nothing to the cache (the .ptd of another export?)", set.ptd_files[i].path,
               xpack_et_ptd_get_info(set.ptds[i])->entry_count);
    }
  }
  xpack_model_set_close(&set);
  free(default_path);
  return rc;
}
