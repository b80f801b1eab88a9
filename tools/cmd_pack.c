/* xpack pack: replay every XNNPACK delegate through one recording weights cache and write the cache file. */
#include <fcntl.h>
#include <stdarg.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "cli_common.h"
#include "commands.h"
#include "pack_models.h"
#include "progress.h"
#include "common/temp_files.h"
#include "json.h"
#include "xpack.h"

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

/* With --zstd the writer makes the mappable file under a temporary name beside OUT, and
 * xpack_compress_file turns it into OUT; the mappable file is then removed. */
static char* mappable_temp_path(const char* out_path) {
  char* dir_copy = strdup(out_path);
  char* base_copy = strdup(out_path);
  size_t n = strlen(out_path) + 32;
  char* tmp = malloc(n);
  if (dir_copy && base_copy && tmp) {
    snprintf(tmp, n, "%s/.%s.XXXXXX", dirname(dir_copy), basename(base_copy));
    int fd = xp_temp_create(tmp); /* named as the target's temporary files: a killed pack's is removed later */
    if (fd >= 0) close(fd);
    else {
      free(tmp);
      tmp = NULL;
    }
  } else {
    free(tmp);
    tmp = NULL;
  }
  free(dir_copy);
  free(base_copy);
  return tmp;
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
static void report_nothing(int as_json, const char* fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static void report_nothing(int as_json, const char* fmt, ...) {
  char why[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(why, sizeof why, fmt, ap);
  va_end(ap);
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

int cmd_pack(int argc, char** argv) {
  const char* out_path = NULL;
  uint32_t page = 0;
  int as_json = 0;
  int level = 0; /* 0: the mappable form; else the zstd level of the transport form */
  long online = sysconf(_SC_NPROCESSORS_ONLN);
  int jobs = online > 0 ? (int)online : 1; /* delegates replayed at once (pack_model_set_jobs) */
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
  model_set set;
  int rc = model_set_open(&set, argc, argv, takes_value, is_flag);
  if (rc) {
    model_set_close(&set);
    return rc;
  }
  if (set.program_count == 0) {
    report_nothing(as_json, "no program given");
    model_set_close(&set);
    return XPACK_EXIT_OK;
  }
  char* default_path = out_path ? NULL : default_output(set.program_files[0].path);
  if (!out_path) out_path = default_path;

  xpack_error err;
  xpack_writer_options options = {page};
  pack_counts job;
  xpack_writer* writer;
  char* mappable_path = level ? mappable_temp_path(out_path) : NULL;
  if (level && mappable_path == NULL) {
    cli_error("%s: cannot create a temporary file beside it", out_path);
    model_set_close(&set);
    free(default_path);
    return XPACK_EXIT_FAILED;
  }
  if (xpack_writer_create(level ? mappable_path : out_path, &options, &writer, &err) != XPACK_OK) {
    cli_error("%s", err.message);
    if (mappable_path) unlink(mappable_path);
    free(mappable_path);
    model_set_close(&set);
    free(default_path);
    return XPACK_EXIT_FAILED;
  }
  progress* bar = progress_start("xpack pack", "delegates", !as_json); /* a terminal only, and not with -q */
  rc = pack_model_set_jobs(&set, writer, bar, jobs, &job);
  progress_finish(bar);
  xpack_writer_stats stats;
  xpack_writer_stats_get(writer, &stats);
  if (rc == 0 && !job.bad_input && xpack_writer_check(writer, &err) != XPACK_OK) {
    cli_error("%s", err.message); /* e.g. the first write failed: not "nothing to pack" */
    rc = XPACK_EXIT_FAILED;
  }
  if (mappable_path && (rc != 0 || job.bad_input || job.xnnpack == 0 || job.packed == 0 ||
                        (stats.entries == 0 && stats.unbound == 0))) {
    unlink(mappable_path); /* nothing will be written: see below */
    free(mappable_path);
  }
  if (rc != 0 || job.bad_input) {
    xpack_writer_abort(writer);
    model_set_close(&set);
    free(default_path);
    return rc ? rc : XPACK_EXIT_BAD_INPUT;
  }
  if (job.packed > 0 && stats.entries == 0 && stats.unbound == 0) {
    xpack_writer_abort(writer);
    if (stats.no_family > 0) {
      report_nothing(as_json, "the %llu weight%s XNNPACK packs belong to no packing family a loader could check "
                     "(e.g. batch matrix multiply)", (unsigned long long)stats.no_family, stats.no_family == 1 ? "" : "s");
    } else {
      report_nothing(as_json, "the %zu XNNPACK delegate%s hold%s no weights that XNNPACK packs", job.packed,
                     job.packed == 1 ? "" : "s", job.packed == 1 ? "s" : "");
    }
    model_set_close(&set);
    free(default_path);
    return XPACK_EXIT_OK;
  }
  if (job.xnnpack == 0 || job.packed == 0) {
    xpack_writer_abort(writer);
    if (job.xnnpack == 0) {
      report_nothing(as_json, "no XNNPACK delegate in the given program%s", set.program_count > 1 ? "s" : "");
      rc = XPACK_EXIT_OK;
    } else {
      cli_error("no delegate could be packed; first error: %s", job.first_error.message);
      rc = XPACK_EXIT_FAILED;
    }
    model_set_close(&set);
    free(default_path);
    return rc;
  }
  xpack_status finished = xpack_writer_finish(writer, &err);
  xpack_transport_stats transport = {0};
  if (finished == XPACK_OK && level) {
    /* Locked, so that the output's temporary-file cleanup (temp_files.h) does not take it for a leftover. */
    int hold = open(mappable_path, O_RDONLY | O_CLOEXEC);
    if (hold >= 0) flock(hold, LOCK_EX | LOCK_NB);
    finished = xpack_compress_file_threads(mappable_path, out_path, level, jobs, &transport, &err);
    unlink(mappable_path);
    if (hold >= 0) close(hold);
  } else if (mappable_path) {
    unlink(mappable_path);
  }
  free(mappable_path);
  if (finished != XPACK_OK) {
    cli_error("%s", err.message);
    model_set_close(&set);
    free(default_path);
    return XPACK_EXIT_FAILED;
  }
  char b1[32], b2[32], b3[32], b4[32];
  if (as_json) {
    json j;
    json_init(&j, stdout);
    json_object(&j);
    json_key(&j, "output"); json_string(&j, out_path);
    json_key(&j, "xnnpack_delegates"); json_uint(&j, job.xnnpack);
    json_key(&j, "packed_delegates"); json_uint(&j, job.packed);
    json_key(&j, "not_packed_delegates"); json_uint(&j, job.not_packed);
    json_key(&j, "skipped_delegates"); json_uint(&j, job.skipped);
    json_key(&j, "entries"); json_uint(&j, stats.entries);
    json_key(&j, "regions"); json_uint(&j, stats.regions);
    json_key(&j, "packed_bytes"); json_uint(&j, stats.packed_bytes);
    json_key(&j, "stored_bytes"); json_uint(&j, stats.stored_bytes);
    json_key(&j, "shared_reuses"); json_uint(&j, stats.reused);
    json_key(&j, "shared_bytes"); json_uint(&j, stats.reused_bytes);
    json_key(&j, "dedup_saved_bytes"); json_uint(&j, stats.packed_bytes - stats.stored_bytes);
    json_key(&j, "unbound"); json_uint(&j, stats.unbound);
    json_key(&j, "no_family"); json_uint(&j, stats.no_family);
    if (level) {
      json_key(&j, "zstd_level"); json_uint(&j, (uint64_t)level);
      json_key(&j, "mappable_size"); json_uint(&j, transport.input_size);
      json_key(&j, "transport_size"); json_uint(&j, transport.output_size);
      json_key(&j, "frame_bytes"); json_uint(&j, transport.frame_bytes);
    }
    json_end_object(&j);
    json_finish(&j);
  } else if (g_verbosity >= 0) {
    printf("wrote %s: %zu of %zu XNNPACK delegate%s packed", out_path, job.packed, job.xnnpack,
           job.xnnpack == 1 ? "" : "s");
    if (job.skipped) printf(", %zu other delegate%s skipped", job.skipped, job.skipped == 1 ? "" : "s");
    printf("\n  %llu entries, %llu regions, %s stored\n", (unsigned long long)stats.entries,
           (unsigned long long)stats.regions, cli_bytes(stats.stored_bytes, b1));
    printf("  shared by methods/programs: %llu re-uses, %s not packed again; identical packed bytes: %s saved\n",
           (unsigned long long)stats.reused, cli_bytes(stats.reused_bytes, b2),
           cli_bytes(stats.packed_bytes - stats.stored_bytes, b3));
    if (level) {
      printf("  transport form, zstd level %d: %s of regions in %s of frames (%.3f); file %s, mappable %s\n", level,
             cli_bytes(transport.region_bytes, b1), cli_bytes(transport.frame_bytes, b2),
             transport.region_bytes ? (double)transport.frame_bytes / (double)transport.region_bytes : 1.0,
             cli_bytes(transport.output_size, b3), cli_bytes(transport.input_size, b4));
      printf("  the loader needs the mappable form: xpack inflate %s OUT.xpc\n", out_path);
    }
    if (stats.unbound) {
      printf("  %llu packed weight%s had no identity and are not in the cache\n", (unsigned long long)stats.unbound,
             stats.unbound == 1 ? "" : "s");
    }
    if (stats.no_family) {
      printf("  %llu packed weight%s belong to no packing family a loader could check and are not in the cache\n",
             (unsigned long long)stats.no_family, stats.no_family == 1 ? "" : "s");
    }
  }
  if (job.not_packed) {
    fprintf(stderr, "warning: %zu XNNPACK delegate%s not packed (see above)\n", job.not_packed,
            job.not_packed == 1 ? "" : "s");
  }
  model_set_close(&set);
  free(default_path);
  return XPACK_EXIT_OK;
}
