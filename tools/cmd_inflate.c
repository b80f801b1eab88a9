/* xpack inflate IN OUT [--json]: a transport-form cache (zstd regions) back into the mappable form. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cli_cache_source.h"
#include "cli_common.h"
#include "commands.h"
#include "json.h"
#include "xpack.h"

static double seconds_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static const cli_option kOptions[] = {{"--json", 0, 0, 0}};
static const cli_options kInflateOptions = {"inflate", kOptions, sizeof kOptions / sizeof kOptions[0]};

int cmd_inflate(int argc, char** argv) {
  const char* paths[2] = {NULL, NULL};
  int npaths = 0, as_json = 0;
  int rc = cli_check_options(&kInflateOptions, argc, argv);
  if (rc != 0) return rc;
  for (int i = 0; i < argc; i++) {
    if (strcmp(argv[i], "--json") == 0) as_json = 1;
    else if (npaths < 2) paths[npaths++] = argv[i];
    else {
      cli_error("inflate: one input and one output (usage: xpack inflate IN OUT [--json])");
      return XPACK_EXIT_USAGE;
    }
  }
  if (npaths != 2) {
    cli_error("inflate: missing %s (usage: xpack inflate IN OUT [--json])", npaths == 0 ? "IN and OUT" : "OUT");
    return XPACK_EXIT_USAGE;
  }
  /* IN may be a member of an APK (ARCHIVE!/MEMBER): inflated from where it lies, as an app does at install. */
  cli_cache_source source;
  rc = cli_cache_source_open("inflate", paths[0], &source);
  const char* unusable = rc == 0 ? cli_cache_source_unusable(&source) : NULL;
  if (unusable) {
    cli_line(stderr, "%s: inflate: %s: %s", g_program, paths[0], unusable);
    rc = XPACK_EXIT_BAD_INPUT;
  }
  if (rc != 0) {
    cli_cache_source_close(&source);
    return rc;
  }
  xpack_transport_stats stats;
  xpack_error err;
  double start = seconds_now();
  xpack_status st = source.archive ? xpack_inflate_range(source.fd, source.where.data_offset, source.where.stored_size,
                                                         paths[0], paths[1], &stats, &err)
                                   : xpack_inflate_file(paths[0], paths[1], &stats, &err);
  double seconds = seconds_now() - start;
  cli_cache_source_close(&source);
  if (st != XPACK_OK) {
    cli_error("%s", err.message);
    /* Messages start with the file they are about: an I/O error on OUT is "could not complete" (4). The longer
     * of the two names that starts the message is the one (IN "o.xpc: x" and OUT "o.xpc" both start one). */
    const size_t in_len = strlen(paths[0]), out_len = strlen(paths[1]);
    const int about_input = strncmp(err.message, paths[0], in_len) == 0 && err.message[in_len] == ':';
    const int about_output = strncmp(err.message, paths[1], out_len) == 0 && err.message[out_len] == ':' &&
                             !(about_input && in_len > out_len);
    return st == XPACK_ERR_IO && about_output ? XPACK_EXIT_FAILED : cli_exit_for_status(st);
  }
  /* Throughput in bytes of mappable file produced per second (10^6 bytes = 1 MB). */
  double mb_per_s = seconds > 0 ? (double)stats.output_size / seconds / 1e6 : 0.0;
  if (as_json) {
    json j;
    json_init(&j, cli_out());
    json_object(&j);
    json_key(&j, "input"); json_string(&j, paths[0]);
    json_key(&j, "output"); json_string(&j, paths[1]);
    json_key(&j, "regions"); json_uint(&j, stats.regions);
    json_key(&j, "region_bytes"); json_uint(&j, stats.region_bytes);
    json_key(&j, "frame_bytes"); json_uint(&j, stats.frame_bytes);
    json_key(&j, "input_size"); json_uint(&j, stats.input_size);
    json_key(&j, "output_size"); json_uint(&j, stats.output_size);
    json_key(&j, "seconds"); json_double(&j, seconds);
    json_key(&j, "output_mb_per_s"); json_double(&j, mb_per_s);
    json_end_object(&j);
    json_finish(&j);
  } else if (g_verbosity >= 0) {
    char b1[32], b2[32];
    fprintf(cli_out(), "inflated %s (%s) into %s (%s): %llu regions, %.3f s, %.1f MB/s\n", paths[0],
            cli_bytes(stats.input_size, b1), paths[1], cli_bytes(stats.output_size, b2),
            (unsigned long long)stats.regions, seconds, mb_per_s);
  }
  return XPACK_EXIT_OK;
}
