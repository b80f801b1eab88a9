#include "verify_model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli_common.h"
#include "xpack_pipeline.h"

typedef struct compare_job {
  xpack_cache* cache;
  xpack_problem_fn fn;
  void* context;
  uint64_t* problems;
  model_verdict* verdict;
  int failed; /* an exit code once a comparison could not be made: the machine's limits (memory, descriptors), or a
                 model that does not run without the cache either */
} compare_job;

/* Memory, descriptors or I/O this process lacks say nothing of the cache: verify stops (exit 4), it does not
 * report the cache unsound. */
static int machine_short(xpack_status st) { return st == XPACK_ERR_NOMEM || st == XPACK_ERR_IO; }

/* Says what the machine lacked; returns the exit code of a verify that could not finish. */
static int stop_short(const xpack_error* err) {
  cli_error("%s", err->message);
  return XPACK_EXIT_FAILED;
}

static void report(compare_job* job, const char* where, const char* what) {
  (*job->problems)++;
  job->fn(job->context, where, what);
}

static int compare_outputs(void* context, const xpack_model_set* set, const xpack_delegate_ref* ref) {
  compare_job* job = context;
  if (!ref->info->is_xnnpack) return 0;
  char where[256];
  snprintf(where, sizeof where, "%s: method '%s' delegate %zu", ref->file, ref->method_name, ref->delegate);
  xpack_run_result plain, cached;
  xpack_error err;
  const xpack_bind_target none = {.kind = XPACK_BIND_NONE}, cache = {.kind = XPACK_BIND_CACHE, .object = job->cache};
  /* The run without the cache involves no cache: its failure is the model's or the machine's, never a problem of
   * the cache (a program refused as one whose values outgrow their dims made verify call its cache unsound). */
  xpack_status st = xpack_run_delegate(set, ref, &none, true, &plain, &err);
  if (st == XPACK_ERR_UNSUPPORTED) { /* what pack passes over ("not packed"): nothing of the cache to compare */
    if (g_verbosity >= 0) cli_line(stderr, "note: %s: not run: %s", where, err.message);
    return 0;
  }
  if (st != XPACK_OK) {
    cli_error("%s", err.message);
    job->failed = machine_short(st) ? XPACK_EXIT_FAILED : cli_exit_for_status(st);
    return 1;
  }
  xpack_stats before, after;
  xpack_cache_stats(job->cache, &before);
  st = xpack_run_delegate(set, ref, &cache, true, &cached, &err);
  if (st != XPACK_OK && machine_short(st)) {
    job->failed = stop_short(&err);
    return 1;
  }
  if (st != XPACK_OK) {
    report(job, where, err.message);
    return 0;
  }
  xpack_cache_stats(job->cache, &after);
  job->verdict->delegates_run++;
  if (plain.num_outputs != cached.num_outputs ||
      memcmp(plain.output_hash, cached.output_hash, plain.num_outputs * sizeof plain.output_hash[0]) != 0) {
    report(job, where, "outputs with the cache differ from outputs without it");
  } else {
    job->verdict->delegates_identical++;
  }
  if (after.misses != before.misses && g_verbosity >= 0) {
    cli_line(stderr, "note: %s: %llu look-up%s missed the cache (XNNPACK packed them)", where,
            (unsigned long long)(after.misses - before.misses), after.misses - before.misses == 1 ? "" : "s");
  }
  return 0;
}

static void compare_entries(const xpack_file* fresh, const xpack_file* cache, compare_job* job) {
  xpack_file_info info;
  xpack_file_get_info(fresh, &info);
  for (uint64_t i = 0; i < info.entry_count; i++) {
    xpack_file_entry e;
    xpack_file_get_entry(fresh, i, &e);
    char where[512];
    snprintf(where, sizeof where, "entry seed %08x kernel %s bias %s", e.seed, e.kernel, e.bias ? e.bias : "(none)");
    job->verdict->weights_compared++;
    int64_t j = xpack_file_find(cache, e.seed, e.kernel, e.bias);
    if (j < 0) {
      report(job, where, "XNNPACK packs this weight for the model but the cache has no sound entry for it");
      continue;
    }
    xpack_file_entry ce;
    xpack_file_get_entry(cache, (uint64_t)j, &ce);
    xpack_file_region fr, cr;
    xpack_file_get_region(fresh, e.region, &fr);
    xpack_file_get_region(cache, ce.region, &cr);
    const uint8_t* fb = xpack_file_region_bytes(fresh, e.region);
    const uint8_t* cb = xpack_file_region_bytes(cache, ce.region);
    if (fr.size != cr.size) {
      char what[128];
      snprintf(what, sizeof what, "packed size is %llu bytes on this machine, %llu in the cache",
               (unsigned long long)fr.size, (unsigned long long)cr.size);
      report(job, where, what);
    } else if (fb == NULL || cb == NULL || memcmp(fb, cb, (size_t)fr.size) != 0) {
      report(job, where, "packed bytes differ from what this machine's XNNPACK packs from the files given");
    } else {
      job->verdict->weights_agreeing++;
    }
  }
}

/* The inputs the cache was packed from that differ from the files given (same name and kind, other size or
 * XXH3, as PROV records them): where packed bytes differ, these say why better than the machine does. A weight
 * changed in place under a key naming its old content keeps its key, and the cache serves its old packing. */
static void report_changed_inputs(const xpack_file* fresh, const xpack_file* cache, compare_job* job,
                                  const char* cache_path) {
  xpack_file_info fi, ci;
  xpack_file_get_info(fresh, &fi);
  xpack_file_get_info(cache, &ci);
  for (uint64_t i = 0; i < fi.input_count; i++) {
    xpack_file_input given;
    xpack_file_get_input(fresh, i, &given);
    for (uint64_t k = 0; k < ci.input_count; k++) {
      xpack_file_input packed;
      xpack_file_get_input(cache, k, &packed);
      if (packed.kind != given.kind || strcmp(packed.name, given.name) != 0) continue;
      if (packed.file_size == given.file_size && packed.file_hash == given.file_hash) break;
      char what[768];
      snprintf(what, sizeof what, "packed from another %s (%llu bytes, xxh3 %016llx; the one given has %llu bytes, "
               "xxh3 %016llx): weights changed under the same keys keep their old packing in the cache; re-pack",
               cli_name(given.name), (unsigned long long)packed.file_size, (unsigned long long)packed.file_hash,
               (unsigned long long)given.file_size, (unsigned long long)given.file_hash);
      report(job, cache_path, what);
      break;
    }
  }
}

/* A re-pack without a weight compares nothing and agrees with any cache: say so, and why. */
static void note_nothing_compared(const xpack_file* fresh, const xpack_model_set* set, const xpack_pack_report* packed) {
  xpack_file_info info;
  xpack_file_get_info(fresh, &info);
  if (info.entry_count > 0 || g_verbosity < 0) return;
  const char* why = set->program_count == 0 ? "no program was given (a .ptd goes with --data)"
                    : packed->xnnpack == 0  ? "the programs hold no XNNPACK delegate"
                                            : "XNNPACK packs no weight of theirs that a cache holds";
  cli_line(stderr, "note: --model: nothing compared: %s", why);
}

int verify_against_model(const cli_cache_source* source, const xpack_model_set* set, xpack_problem_fn fn, void* context,
                         uint64_t* problems, model_verdict* out) {
  memset(out, 0, sizeof *out);
  const char* cache_path = source->arg;
  compare_job job = {NULL, fn, context, problems, out, 0};
  /* The re-pack has no name at any moment, in $TMPDIR (or /tmp): however this process ends, it leaves
   * nothing behind. */
  xpack_error err;
  xpack_writer* writer;
  if (xpack_writer_create_unnamed(NULL, NULL, &writer, &err) != XPACK_OK) return stop_short(&err);
  const xpack_pack_options options = {.jobs = 1, .on_message = cli_message};
  xpack_pack_report packed;
  xpack_status st = xpack_pack_into_writer(set, writer, &options, &packed, &err);
  if (st != XPACK_OK) {
    cli_error("%s", err.message);
    xpack_writer_abort(writer);
    return packed.failed_on_input ? cli_exit_for_status(st) : XPACK_EXIT_FAILED;
  }
  int fresh_fd = -1;
  if (xpack_writer_finish_fd(writer, &fresh_fd, &err) != XPACK_OK) return stop_short(&err);
  const uint64_t problems_before_compare = *problems;
  xpack_file *fresh = NULL, *cache = NULL;
  xpack_file_info cache_info = {0};
  xpack_status opened = xpack_file_open_fd(fresh_fd, &fresh, &err);
  if (opened != XPACK_OK) { /* the re-pack is this process's own file: whatever failed is the machine's */
    cli_error("this machine's re-pack: %s", err.message);
    close(fresh_fd);
    return XPACK_EXIT_FAILED;
  }
  if ((opened = cli_cache_source_open_file(source, &cache, &err)) == XPACK_OK) {
    xpack_file_get_info(cache, &cache_info);
    /* Frames are not packed bytes: compare after `xpack inflate` (the run below reports the refusal). */
    if (!(cache_info.flags & 1)) {
      compare_entries(fresh, cache, &job);
      if (*problems != problems_before_compare) report_changed_inputs(fresh, cache, &job, cache_path);
    }
    note_nothing_compared(fresh, set, &packed);
  } else if (!machine_short(opened)) {
    report(&job, cache_path, err.message);
  }
  xpack_file_close(fresh);
  xpack_file_close(cache);
  close(fresh_fd);
  if (opened != XPACK_OK && machine_short(opened)) return stop_short(&err);
  /* A cache whose packed bytes are not what this XNNPACK produces may hold anything, sizes that lie
   * included: comparing stops here, and nothing of it reaches XNNPACK. */
  if (*problems != problems_before_compare) {
    report(&job, cache_path, "not run with the model: the cache differs from what this machine packs (above)");
    return 0;
  }

  if ((opened = cli_cache_source_open_cache(source, 0, &job.cache, &err)) != XPACK_OK) {
    if (machine_short(opened)) return stop_short(&err);
    report(&job, cache_path, err.message);
    return 0;
  }
  if (xpack_cache_refusal(job.cache)) report(&job, cache_path, xpack_cache_refusal(job.cache));
  out->ran = 1;
  xpack_for_each_delegate(set, NULL, compare_outputs, &job);
  if (job.failed) {
    xpack_cache_close(job.cache);
    return job.failed;
  }
  xpack_stats stats;
  xpack_cache_stats(job.cache, &stats);
  out->lookups = stats.lookups;
  out->hits = stats.hits;
  out->misses = stats.misses;
  xpack_cache_close(job.cache);
  return 0;
}
