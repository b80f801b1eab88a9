/* xpack pack: replay every XNNPACK delegate through one recording weights cache and write the cache file. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli_common.h"
#include "commands.h"
#include "json.h"
#include "model_args.h"
#include "progress.h"
#include "xpack_pipeline.h"

static int takes_value(const char* a) {
  return strcmp(a, "-o") == 0 || strcmp(a, "--page-size") == 0 || strcmp(a, "--jobs") == 0;
}
static int is_zstd(const char* a) { return strcmp(a, "--zstd") == 0 || strncmp(a, "--zstd=", 7) == 0; }
static int is_flag(const char* a) { return strcmp(a, "--json") == 0 || is_zstd(a); }

/* --zstd[=LEVEL]: the zstd level, or -1 when LEVEL is not a whole number in range. */
static int zstd_level(const char* a) {
  if (a[6] == 0) return XPACK_ZSTD_LEVEL_DEFAULT;
  char* end;
  long level = strtol(a + 7, &end, 10);
  if (a[7] == 0 || *end != 0 || level < XPACK_ZSTD_LEVEL_MIN || level > XPACK_ZSTD_LEVEL_MAX) return -1;
  return (int)level;
}

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
    json_init(&j, stdout);
    json_object(&j);
    json_key(&j, "output"); json_null(&j);
    json_key(&j, "written"); json_bool(&j, 0);
    json_key(&j, "nothing_to_pack"); json_string(&j, why);
    json_end_object(&j);
    json_finish(&j);
  } else if (g_verbosity >= 0) {
    printf("nothing to pack: %s\n", why);
  }
}

static void report_written(int as_json, const char* out_path, int level, const xpack_pack_report* r) {
  const xpack_writer_stats* stats = &r->stats;
  const xpack_transport_stats* transport = &r->transport;
  char b1[32], b2[32], b3[32], b4[32];
  if (as_json) {
    json j;
    json_init(&j, stdout);
    json_object(&j);
    json_key(&j, "output"); json_string(&j, out_path);
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
    if (level) {
      json_key(&j, "zstd_level"); json_uint(&j, (uint64_t)level);
      json_key(&j, "mappable_size"); json_uint(&j, transport->input_size);
      json_key(&j, "transport_size"); json_uint(&j, transport->output_size);
      json_key(&j, "frame_bytes"); json_uint(&j, transport->frame_bytes);
    }
    json_end_object(&j);
    json_finish(&j);
  } else if (g_verbosity >= 0) {
    printf("wrote %s: %zu of %zu XNNPACK delegate%s packed", out_path, r->packed, r->xnnpack,
           r->xnnpack == 1 ? "" : "s");
    if (r->skipped) printf(", %zu other delegate%s skipped", r->skipped, r->skipped == 1 ? "" : "s");
    printf("\n  %llu entries, %llu regions, %s stored\n", (unsigned long long)stats->entries,
           (unsigned long long)stats->regions, cli_bytes(stats->stored_bytes, b1));
    printf("  shared by methods/programs: %llu re-uses, %s not packed again; identical packed bytes: %s saved\n",
           (unsigned long long)stats->reused, cli_bytes(stats->reused_bytes, b2),
           cli_bytes(stats->packed_bytes - stats->stored_bytes, b3));
    if (level) {
      printf("  transport form, zstd level %d: %s of regions in %s of frames (%.3f); file %s, mappable %s\n", level,
             cli_bytes(transport->region_bytes, b1), cli_bytes(transport->frame_bytes, b2),
             transport->region_bytes ? (double)transport->frame_bytes / (double)transport->region_bytes : 1.0,
             cli_bytes(transport->output_size, b3), cli_bytes(transport->input_size, b4));
      printf("  the loader needs the mappable form: xpack inflate %s OUT.xpc\n", out_path);
    }
    if (stats->unbound) {
      printf("  %llu packed weight%s had no identity and are not in the cache\n", (unsigned long long)stats->unbound,
             stats->unbound == 1 ? "" : "s");
    }
    if (stats->no_family) {
      printf("  %llu packed weight%s belong to no packing family a loader could check and are not in the cache\n",
             (unsigned long long)stats->no_family, stats->no_family == 1 ? "" : "s");
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

int cmd_pack(int argc, char** argv) {
  const char* out_path = NULL;
  uint32_t page = 0;
  int as_json = 0;
  int level = 0; /* 0: the mappable form; else the zstd level of the transport form */
  long online = sysconf(_SC_NPROCESSORS_ONLN);
  int jobs = online > 0 ? (int)online : 1; /* delegates replayed at once (xpack_pack_options.jobs) */
  for (int i = 0; i < argc; i++) {
    if (strcmp(argv[i], "-o") == 0 && i + 1 < argc) out_path = argv[++i];
    else if (is_zstd(argv[i])) {
      level = zstd_level(argv[i]);
      if (level < 0) {
        cli_error("pack: %s: LEVEL must be a whole number from %d to %d (default %d)", argv[i], XPACK_ZSTD_LEVEL_MIN,
                  XPACK_ZSTD_LEVEL_MAX, XPACK_ZSTD_LEVEL_DEFAULT);
        return XPACK_EXIT_USAGE;
      }
    }
    else if (strcmp(argv[i], "--page-size") == 0 && i + 1 < argc) page = (uint32_t)strtoul(argv[++i], NULL, 10);
    else if (strcmp(argv[i], "--json") == 0) as_json = 1;
    else if (strcmp(argv[i], "--jobs") == 0 && i + 1 < argc) {
      char* end = NULL;
      long n = strtol(argv[++i], &end, 10);
      if (end == argv[i] || *end != 0 || n < 1 || n > 1024) {
        cli_error("pack: --jobs %s: N must be a whole number from 1 to 1024", argv[i]);
        return XPACK_EXIT_USAGE;
      }
      jobs = (int)n;
    }
    else if (takes_value(argv[i])) {
      cli_error("pack: %s needs a value", argv[i]);
      return XPACK_EXIT_USAGE;
    }
  }
  if (page != 0 && page != 4096 && page != 16384) {
    cli_error("pack: --page-size must be 4096 or 16384");
    return XPACK_EXIT_USAGE;
  }
  xpack_model_set set;
  int rc = model_args_open(&set, argc, argv, takes_value, is_flag, 1);
  char* default_path = NULL;
  if (rc == 0 && set.program_count > 0 && out_path == NULL) {
    out_path = default_path = default_output(set.program_files[0].path);
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
      rc = report.failed_on_input ? cli_exit_for_status(st) : XPACK_EXIT_FAILED;
    } else if (report.result == XPACK_PACK_NOTHING) {
      report_nothing(as_json, report.nothing_to_pack);
    } else {
      report_written(as_json, out_path, level, &report);
    }
  }
  xpack_model_set_close(&set);
  free(default_path);
  return rc;
}
