/* xpack run: build and run every XNNPACK delegate, with or without a cache, and report per delegate.
 *
 * JSON: {"cache": path|null, "cache_refused": reason|null,
 *        "programs": [{"file", "built_from": bool, "message"?}] (with --cache: model identity check),
 *        "delegates": N, "lookups": N, "hits": N, "misses": N,
 *        "heap_fallback_bytes": N, "misses_reused": N, "failed": N, "refused_incompatible": N,
 *        "refused_corrupt": N, "refused_probe": N, "refused_no_family": N,
 *        "refused_mismatch": N, "refused_size": N, "refused_unsized": N,
 *        "families": [{"name", "status": "served"|"refused", "reason": code|null, "message": text|null,
 *                      "packed_probe", "local_probe", "packed_keys", "local_keys": "16 hex", "hits",
 *                      "refused"}] (with --cache),
 *        "packed_on_cpu": INFO "cpu" of the cache|null, "this_cpu": text (with --cache),
 *        "delegates_detail": [{"file", "method", "index", "create_ms", "first_inference_ms", "lookups", "hits",
 *                              "misses", "misses_reused", "heap_fallback_bytes", "output_xxh3": ["16 hex", ...],
 *                              "missed": [{"reason", "seed", "kernel", "bias", "family", "why"}] (with --cache),
 *                              "error"?}]} */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli_cache_source.h"
#include "cli_common.h"
#include "commands.h"
#include "json.h"
#include "model_args.h"
#include "run_misses.h"
#include "xpack.h"

/* --cache may be given this many times: the caches of one program packed for as many classes of CPU. */
#define RUN_MAX_CACHES 16

typedef struct run_job {
  xpack_cache* cache;
  run_misses* misses; /* which weights missed, and why */
  int as_json;
  json* j;
  size_t delegates, failed;
  int bad_input;
} run_job;


static int run_one(void* context, const xpack_model_set* set, const xpack_delegate_ref* ref) {
  run_job* job = context;
  if (!ref->info->is_xnnpack) return 0;
  job->delegates++;
  xpack_stats before, after;
  xpack_cache_stats(job->cache, &before);
  run_misses_clear(job->misses);
  xpack_run_result r;
  xpack_error err;
  const xpack_bind_target target = {.kind = job->cache ? XPACK_BIND_CACHE : XPACK_BIND_NONE, .object = job->cache};
  xpack_status st = xpack_run_delegate(set, ref, &target, true, &r, &err);
  xpack_cache_stats(job->cache, &after);
  if (st != XPACK_OK) {
    job->failed++;
    cli_error("%s", err.message);
    if (st == XPACK_ERR_BAD_INPUT || st == XPACK_ERR_IO) job->bad_input = 1;
  }
  const uint64_t lookups = after.lookups - before.lookups, hits = after.hits - before.hits,
                 misses = after.misses - before.misses, reused = after.misses_reused - before.misses_reused,
                 heap = after.heap_fallback_bytes - before.heap_fallback_bytes;
  if (job->as_json) {
    json* j = job->j;
    json_object(j);
    json_key(j, "file"); json_string(j, ref->file);
    json_key(j, "method"); json_string(j, ref->method_name);
    json_key(j, "index"); json_uint(j, ref->delegate);
    json_key(j, "create_ms"); json_double(j, r.create_ms);
    json_key(j, "first_inference_ms"); json_double(j, r.first_inference_ms);
    json_key(j, "lookups"); json_uint(j, lookups);
    json_key(j, "hits"); json_uint(j, hits);
    json_key(j, "misses"); json_uint(j, misses);
    json_key(j, "misses_reused"); json_uint(j, reused);
    json_key(j, "heap_fallback_bytes"); json_uint(j, heap);
    json_key(j, "output_xxh3"); json_array(j);
    for (size_t i = 0; i < r.num_outputs; i++) json_hex64(j, r.output_hash[i]);
    json_end_array(j);
    run_misses_json(job->misses, j);
    if (st != XPACK_OK) {
      json_key(j, "error"); json_string(j, err.message);
    }
    json_end_object(j);
  } else if (st == XPACK_OK) {
    fprintf(cli_out(), "%s  method %-10s delegate %-3zu create %8.3f ms  first inference %8.3f ms  look-ups %llu hits %llu misses "
            "%llu heap %llu B  outputs",
            cli_name(ref->file), cli_name(ref->method_name), ref->delegate, r.create_ms, r.first_inference_ms,
            (unsigned long long)lookups, (unsigned long long)hits, (unsigned long long)misses, (unsigned long long)heap);
    for (size_t i = 0; i < r.num_outputs; i++) fprintf(cli_out(), " %016llx", (unsigned long long)r.output_hash[i]);
    fprintf(cli_out(), "\n");
  }
  if (!job->as_json) run_misses_print(job->misses, cli_out(), g_verbosity <= 0);
  return 0;
}

/* Model identity: says whether each program's flatbuffer is one the cache was built from. A mismatch is
 * reported, not fatal: entries are matched key by key, so it costs misses. A match says nothing of the weights
 * in segments and .ptd files (`verify --model` compares what they pack to). */
static void check_programs(const xpack_model_set* set, const xpack_cache* cache, json* j) {
  if (j) {
    json_key(j, "programs"); json_array(j);
  }
  for (size_t i = 0; i < set->program_count; i++) {
    size_t size = 0;
    const uint8_t* bytes = xpack_et_program_bytes(set->programs[i], &size);
    xpack_error err;
    xpack_status st = xpack_cache_check_program(cache, bytes, size, &err);
    const char* file = xpack_model_base_name(set->program_files[i].path);
    if (j) {
      json_object(j);
      json_key(j, "file"); json_string(j, file);
      json_key(j, "built_from"); json_bool(j, st == XPACK_OK);
      if (st != XPACK_OK) {
        json_key(j, "message"); json_string(j, err.message);
      }
      json_end_object(j);
    } else if (st != XPACK_OK) {
      cli_line(stderr, "warning: %s: %s", file, err.message);
    } else if (g_verbosity > 0) {
      cli_line(stderr, "%s: the cache was built from a program of this graph (its flatbuffer; weights in segments "
               "and .ptd files are not compared: `xpack verify CACHE --model` compares their packing)", file);
    }
  }
  if (j) json_end_array(j);
}

/* Packing families: which the file records and whether this machine serves them (deciding, i.e. probing,
 * those no look-up reached: on another CPU most keys are not found at all, and this still says why). */
static uint32_t report_families(xpack_cache* cache, json* j) {
  const uint32_t n = xpack_cache_family_count(cache);
  uint32_t packed_otherwise = 0;
  if (j) {
    json_key(j, "families"); json_array(j);
  }
  for (uint32_t i = 0; i < n; i++) {
    xpack_cache_family_info f;
    if (xpack_cache_family(cache, i, &f, NULL) != XPACK_OK) continue;
    const int served = f.refusal == XPACK_FAMILY_SERVED;
    packed_otherwise += f.refusal == XPACK_FAMILY_PROBE_DIFFERS || f.refusal == XPACK_FAMILY_KEYS_DIFFER;
    if (j) {
      json_object(j);
      json_key(j, "name"); json_string(j, f.name);
      json_key(j, "status"); json_string(j, served ? "served" : "refused");
      json_key(j, "reason"); json_string(j, served ? NULL : xpack_family_refusal_name(f.refusal));
      json_key(j, "message"); json_string(j, f.reason);
      json_key(j, "packed_probe"); json_hex64(j, f.packed_probe);
      json_key(j, "local_probe"); json_hex64(j, f.local_probe);
      json_key(j, "packed_keys"); json_hex64(j, f.packed_keys);
      json_key(j, "local_keys"); json_hex64(j, f.local_keys);
      json_key(j, "hits"); json_uint(j, f.hits);
      json_key(j, "refused"); json_uint(j, f.refused);
      json_end_object(j);
    } else if (f.refusal == XPACK_FAMILY_FILE_REFUSED) { /* its look-ups are the file's (refused_incompatible) */
      fprintf(cli_out(), "family %s: file_refused (its look-ups count as refused_incompatible): %s\n",
              cli_name(f.name), cli_name(f.reason));
    } else {
      fprintf(cli_out(), "family %s: %s, %llu hits, %llu refused look-ups%s%s\n", cli_name(f.name),
              served ? "served" : xpack_family_refusal_name(f.refusal), (unsigned long long)f.hits,
              (unsigned long long)f.refused, served ? "" : ": ", served ? "" : f.reason);
    }
  }
  if (j) json_end_array(j);
  return packed_otherwise;
}

/* The CPU that packed the cache (its INFO "cpu", format 1.2) and this one: in the JSON always, in the text when
 * families were refused as packed otherwise here, since then the two CPUs are what someone looks at next. */
static void report_cpus(const cli_cache_source* source, uint32_t packed_otherwise, json* j) {
  if (j == NULL && packed_otherwise == 0) return;
  xpack_file* file = NULL;
  const char* packed_on =
      cli_cache_source_open_file(source, &file, NULL) == XPACK_OK ? xpack_file_info_value(file, "cpu") : NULL;
  char here[XPACK_CPU_DESCRIPTION_SIZE];
  xpack_describe_this_cpu(here, sizeof here);
  if (j) {
    json_key(j, "packed_on_cpu"); json_string(j, packed_on);
    json_key(j, "this_cpu"); json_string(j, here);
  } else {
    fprintf(cli_out(), "%u famil%s refused as packed or keyed otherwise on this CPU; the cache was packed on: %s; this machine: %s\n",
            packed_otherwise, packed_otherwise == 1 ? "y" : "ies",
            packed_on ? packed_on : "not recorded (a cache of format 1.1 or older)", here);
  }
  xpack_file_close(file);
}

static const cli_option kOptions[] = {{"--cache", 1, 0, 1}, {"--method", 1, 0, 0},        {"--data", 1, 0, 1},
                                      {"--json", 0, 0, 0},  {"--read", 0, 0, 0}, {"--check-regions", 0, 0, 0},
                                      {"--skip-small", 0, 0, 0}, {"--skip-cold", 0, 0, 0}};
static const cli_options kRunOptions = {"run", kOptions, sizeof kOptions / sizeof kOptions[0]};

/* With several --cache files, the one kept (xpack_cache_open_best) and what was found of each: as text lines,
 * or as the member "cache_candidates" of the open JSON object j. */
static void report_candidates(const char* const* paths, size_t count, size_t chosen,
                              const xpack_cache_candidate* found, json* j) {
  if (j) {
    json_key(j, "cache_candidates"); json_array(j);
  } else {
    cli_line(cli_out(), "cache: %s chosen of %zu", paths[chosen], count);
  }
  for (size_t i = 0; i < count; i++) {
    const xpack_cache_candidate* c = &found[i];
    const int opened = c->tried && c->open_error.status == XPACK_OK;
    const char* state = i == chosen ? "chosen" : !c->tried ? "not tried" : opened ? "passed over" : "not opened";
    if (j) {
      json_object(j);
      json_key(j, "file"); json_string(j, paths[i]);
      json_key(j, "state"); json_string(j, state);
      json_key(j, "entries"); json_uint(j, c->entries);
      json_key(j, "entries_served"); json_uint(j, c->entries_served);
      json_key(j, "other_program"); json_bool(j, c->other_program);
      json_key(j, "message");
      json_string(j, c->tried && !opened ? c->open_error.message : c->refused_whole ? "refused whole" : NULL);
      json_end_object(j);
    } else if (!c->tried) {
      cli_line(cli_out(), "  %s: not tried", paths[i]);
    } else if (!opened) {
      cli_line(cli_out(), "  %s: not opened: %s", paths[i], c->open_error.message);
    } else {
      cli_line(cli_out(), "  %s: %llu of %llu entries served here%s%s%s", paths[i],
               (unsigned long long)c->entries_served, (unsigned long long)c->entries,
               c->refused_whole ? " (refused whole)" : "", c->other_program ? " (built from another program)" : "",
               i == chosen ? " (chosen)" : "");
    }
  }
  if (j) json_end_array(j);
}

static void close_sources(cli_cache_source* sources, size_t count) {
  for (size_t i = 0; i < count; i++) cli_cache_source_close(&sources[i]);
}

/* Opens the --cache files as an app would: one with xpack_cache_open, several with xpack_cache_open_best; an
 * archive's member where it lies (xpack_cache_open_fd, or xpack_cache_open_best_fd over every candidate, files
 * included, when any is a member). Returns 0 (the sources then open until the caller closes them), or an exit
 * code after printing why (every source closed). */
static int open_caches(const char* const* paths, size_t count, unsigned flags, const xpack_open_limits* limits,
                       cli_cache_source* sources, xpack_cache** cache, size_t* chosen,
                       xpack_cache_candidate* candidates) {
  *cache = NULL;
  *chosen = 0;
  int rc = 0, members = 0;
  size_t opened = 0;
  for (; opened < count && rc == 0; opened++) {
    rc = cli_cache_source_open("run", paths[opened], &sources[opened]);
    const char* unusable = rc == 0 ? cli_cache_source_unusable(&sources[opened]) : NULL;
    if (unusable) {
      cli_line(stderr, "%s: run: %s: %s", g_program, paths[opened], unusable);
      rc = XPACK_EXIT_BAD_INPUT;
    }
    members += sources[opened].archive != NULL;
  }
  if (rc != 0 || count == 0) {
    close_sources(sources, opened);
    return rc;
  }
  xpack_error err;
  xpack_status st;
  if (count == 1) {
    st = cli_cache_source_open_cache(&sources[0], flags, cache, &err);
  } else if (members == 0) {
    st = xpack_cache_open_best_limits(paths, count, flags, limits, cache, chosen, candidates, &err);
  } else {
    xpack_cache_range ranges[RUN_MAX_CACHES];
    int fds[RUN_MAX_CACHES];
    for (size_t i = 0; i < count; i++) {
      const cli_cache_source* s = &sources[i];
      struct stat info;
      fds[i] = s->archive ? -1 : open(paths[i], O_RDONLY | O_CLOEXEC | O_NONBLOCK); /* a FIFO: refused, not waited on */
      if (!s->archive && fds[i] < 0) { /* the range form has no path to pass over: say so here */
        cli_error("run: %s: cannot open: %s", paths[i], strerror(errno));
        for (size_t k = 0; k < i; k++) {
          if (fds[k] >= 0) close(fds[k]);
        }
        close_sources(sources, count);
        return XPACK_EXIT_BAD_INPUT;
      }
      ranges[i] = (xpack_cache_range){s->archive ? s->fd : fds[i], s->where.data_offset,
                                      s->archive ? s->where.stored_size
                                      : fds[i] >= 0 && fstat(fds[i], &info) == 0 ? (uint64_t)info.st_size : 0,
                                      paths[i]};
    }
    st = xpack_cache_open_best_fd(ranges, count, flags, limits, cache, chosen, candidates, &err);
    for (size_t i = 0; i < count; i++) {
      if (fds[i] >= 0) close(fds[i]); /* the loader keeps what it needs of a file */
    }
  }
  if (st != XPACK_OK) {
    if (count == 1) cli_error("%s", err.message);
    else cli_error("no --cache file opens; the first: %s", err.message);
    close_sources(sources, count);
    return cli_exit_for_status(err.status);
  }
  return 0;
}

/* --method NAME names a method of the given programs: one that none has is a usage error (exit 2) that lists
 * the methods they have, not "nothing to run". */
static int check_method(const xpack_model_set* set, const char* method) {
  if (method == NULL) return 0;
  for (size_t p = 0; p < set->program_count; p++) {
    const xpack_et_program_info* info = xpack_et_program_get_info(set->programs[p]);
    for (size_t m = 0; m < info->method_count; m++) {
      const xpack_et_method* mm = &info->methods[m];
      if (mm->name && strlen(method) == mm->name_len && memcmp(mm->name, method, mm->name_len) == 0) return 0;
    }
  }
  char list[1024] = "";
  size_t used = 0;
  for (size_t p = 0; p < set->program_count; p++) {
    const xpack_et_program_info* info = xpack_et_program_get_info(set->programs[p]);
    for (size_t m = 0; m < info->method_count && used < sizeof list; m++) {
      const xpack_et_method* mm = &info->methods[m];
      if (mm->name == NULL) continue;
      int n = snprintf(list + used, sizeof list - used, "%s%.*s", used ? ", " : "", (int)mm->name_len, mm->name);
      if (n > 0) used += (size_t)n;
    }
  }
  cli_error("run: --method %s: no given program has this method (they have: %s)", method, used ? list : "none");
  return XPACK_EXIT_USAGE;
}

/* The programs and data files of the command line, opened with the model set's flags, and --method checked
 * against them. Returns 0 or an exit code (the caller closes set either way). */
static int open_programs(xpack_model_set* set, int argc, char** argv, unsigned flags, const char* method) {
  int rc = model_args_open(set, argc, argv, &kRunOptions, XPACK_MODEL_SET_HASH_PROGRAMS | flags);
  return rc == 0 ? check_method(set, method) : rc;
}

int cmd_run(int argc, char** argv) {
  const char* cache_path = NULL;
  const char* candidate_paths[RUN_MAX_CACHES];
  size_t candidate_count = 0;
  const char* method = NULL;
  unsigned open_flags = XPACK_OPEN_PROBE_EARLY;
  const char* open_option = NULL; /* the first option that says how to open a cache */
  run_job job = {0};
  int rc = model_args_check(argc, argv, &kRunOptions);
  if (rc != 0) return rc;
  for (int i = 0; i < argc; i++) {
    if (strcmp(argv[i], "--cache") == 0) {
      if (candidate_count == RUN_MAX_CACHES) {
        cli_error("run: at most %d --cache files", RUN_MAX_CACHES);
        return XPACK_EXIT_USAGE;
      }
      candidate_paths[candidate_count++] = cache_path = argv[++i];
    }
    else if (strcmp(argv[i], "--method") == 0) method = argv[++i];
    else if (strcmp(argv[i], "--data") == 0) i++;
    else if (strcmp(argv[i], "--json") == 0) job.as_json = 1;
    else {
      const unsigned flag = strcmp(argv[i], "--read") == 0            ? XPACK_OPEN_READ
                            : strcmp(argv[i], "--check-regions") == 0 ? XPACK_OPEN_CHECK_REGIONS
                            : strcmp(argv[i], "--skip-small") == 0    ? XPACK_OPEN_SKIP_SMALL
                            : strcmp(argv[i], "--skip-cold") == 0     ? XPACK_OPEN_SKIP_COLD
                                                                      : 0u;
      if (flag && open_option == NULL) open_option = argv[i];
      open_flags |= flag;
    }
  }
  /* Without a cache these would be ignored in silence, and the user believes a cache was read (or checked) that
   * never was. */
  if (open_option != NULL && candidate_count == 0) {
    cli_error("run: %s says how to open a cache, and no --cache FILE is given", open_option);
    return XPACK_EXIT_USAGE;
  }
  /* One cache first: its probes then run on their own thread while the programs are opened and replayed. Several:
   * the programs first, so that the chooser prefers a cache built from the (first) program run, as the ExecuTorch
   * adapter's does (xpack_open_limits.program); their weights are read on demand, as for a served cache. */
  xpack_model_set set;
  int set_open = 0;
  xpack_open_limits limits = {0};
  if (candidate_count > 1) {
    rc = open_programs(&set, argc, argv, XPACK_MODEL_SET_WEIGHTS_ON_DEMAND, method);
    if (rc != 0) {
      xpack_model_set_close(&set);
      return rc;
    }
    set_open = 1;
    if (set.program_count > 0) limits.program = xpack_et_program_bytes(set.programs[0], &limits.program_size);
  }
  cli_cache_source sources[RUN_MAX_CACHES];
  xpack_cache_candidate candidates[RUN_MAX_CACHES];
  size_t chosen = 0;
  rc = open_caches(candidate_paths, candidate_count, open_flags, set_open ? &limits : NULL, sources, &job.cache, &chosen,
                   candidates);
  if (rc != 0) {
    if (set_open) xpack_model_set_close(&set);
    return rc;
  }
  const cli_cache_source* source = candidate_count ? &sources[chosen] : NULL;
  cache_path = source ? source->arg : NULL;
  xpack_cache_prefetch(job.cache); /* as an app: a small cold cache is read while the programs load */
  job.misses = run_misses_start(job.cache, source);
  /* With a cache, a full hit needs none of the raw weights: they are read only if XNNPACK packs after all.
   * A cache refused whole (known at open) serves nothing: XNNPACK reads them all. */
  const char* refusal = xpack_cache_refusal(job.cache);
  if (!set_open) rc = open_programs(&set, argc, argv, job.cache && !refusal ? XPACK_MODEL_SET_WEIGHTS_ON_DEMAND : 0u, method);
  if (rc) {
    xpack_model_set_close(&set);
    run_misses_finish(job.misses);
    xpack_cache_close(job.cache);
    close_sources(sources, candidate_count);
    return rc;
  }
  if (refusal && !job.as_json) cli_line(stderr, "cache refused, XNNPACK packs everything: %s", refusal);
  json j;
  json_init(&j, cli_out());
  job.j = &j;
  if (candidate_count > 1 && !job.as_json) report_candidates(candidate_paths, candidate_count, chosen, candidates, NULL);
  if (job.cache && !job.as_json) check_programs(&set, job.cache, NULL);
  if (job.as_json) {
    json_object(&j);
    json_key(&j, "cache"); json_string(&j, cache_path);
    json_key(&j, "cache_refused"); json_string(&j, refusal);
    if (candidate_count > 1) report_candidates(candidate_paths, candidate_count, chosen, candidates, &j);
    if (job.cache) check_programs(&set, job.cache, &j);
    json_key(&j, "delegates_detail"); json_array(&j);
  }
  rc = set.program_count ? xpack_for_each_delegate(&set, method, run_one, &job) : 0;
  xpack_stats s;
  xpack_cache_stats(job.cache, &s);
  if (job.as_json) {
    json_end_array(&j);
    json_key(&j, "delegates"); json_uint(&j, job.delegates);
    json_key(&j, "failed"); json_uint(&j, job.failed);
    json_key(&j, "lookups"); json_uint(&j, s.lookups);
    json_key(&j, "hits"); json_uint(&j, s.hits);
    json_key(&j, "misses"); json_uint(&j, s.misses);
    json_key(&j, "heap_fallback_bytes"); json_uint(&j, s.heap_fallback_bytes);
    json_key(&j, "misses_reused"); json_uint(&j, s.misses_reused);
    json_key(&j, "misses_unbound"); json_uint(&j, s.misses_unbound);
    json_key(&j, "misses_not_found"); json_uint(&j, s.misses_not_found);
    json_key(&j, "misses_refused"); json_uint(&j, s.misses_refused);
    json_key(&j, "refused_incompatible"); json_uint(&j, s.refused_incompatible);
    json_key(&j, "refused_corrupt"); json_uint(&j, s.refused_corrupt);
    json_key(&j, "refused_probe"); json_uint(&j, s.refused_probe);
    json_key(&j, "refused_no_family"); json_uint(&j, s.refused_no_family);
    json_key(&j, "refused_mismatch"); json_uint(&j, s.refused_mismatch);
    json_key(&j, "refused_size"); json_uint(&j, s.refused_size);
    json_key(&j, "refused_unsized"); json_uint(&j, s.refused_unsized);
    if (job.cache) report_cpus(source, report_families(job.cache, &j), &j);
    json_end_object(&j);
    json_finish(&j);
  } else {
    if (job.delegates == 0) fprintf(cli_out(), "nothing to run: no XNNPACK delegate\n");
    run_misses_print_left_out(job.misses, cli_out());
    if (job.cache) {
      fprintf(cli_out(), "cache %s: %llu look-ups, %llu hits (%llu after XNNPACK packed anyway), %llu misses (%llu unbound, %llu not "
              "found, %llu refused; %llu answered with an earlier miss's packing), %llu heap-fallback bytes\n",
              cache_path, (unsigned long long)s.lookups, (unsigned long long)s.hits,
             (unsigned long long)s.hits_after_packing, (unsigned long long)s.misses,
             (unsigned long long)s.misses_unbound, (unsigned long long)s.misses_not_found,
             (unsigned long long)s.misses_refused, (unsigned long long)s.misses_reused,
             (unsigned long long)s.heap_fallback_bytes);
      report_cpus(source, report_families(job.cache, NULL), NULL);
      if (s.refused_no_family > 0) {
        fprintf(cli_out(), "%llu look-up%s refused: the entry names no packing family (a format 1.0 cache: pack it again)\n",
                (unsigned long long)s.refused_no_family, s.refused_no_family == 1 ? "" : "s");
      }
      if (s.refused_size > 0) {
        fprintf(cli_out(), "%llu look-up%s refused: the entry's region is not the size XNNPACK reads for the weight (a "
                "crafted or damaged cache; xpack verify --model %s)\n",
                (unsigned long long)s.refused_size, s.refused_size == 1 ? "" : "s", cache_path);
      }
      if (s.refused_unsized > 0) {
        fprintf(cli_out(), "%llu look-up%s refused: XNNPACK could not size the weight when its node was defined alone\n",
                (unsigned long long)s.refused_unsized, s.refused_unsized == 1 ? "" : "s");
      }
    }
  }
  run_misses_finish(job.misses);
  xpack_cache_close(job.cache);
  close_sources(sources, candidate_count);
  xpack_model_set_close(&set);
  if (rc) return rc;
  if (job.bad_input) return XPACK_EXIT_BAD_INPUT;
  return job.failed ? XPACK_EXIT_FAILED : XPACK_EXIT_OK;
}
