/* xpack bench: how much a cache saves, measured variant by variant in fresh processes.
 *
 * The parent packs the cache (`xpack pack` in a child, timed, its peak RSS from wait4) unless --cache is
 * given, then for every repetition runs every variant in a child of its own (/proc/self/exe bench --child),
 * dropping the files from the page cache before cold variants and reading them through before warm ones,
 * checks with mincore what the kernel really did, takes medians and reports them with ratios against the
 * nocache baseline of the same run. Outputs must be bit-identical across every variant and repetition:
 * anything else fails the run (exit 1). */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli_common.h"
#include "cmd_bench.h"
#include "commands.h"
#include "json.h"
#include "timing.h"
#include "xpack.h"

#define BENCH_MAX_FILES 64 /* programs, and .ptd files, each */
#define BENCH_MAX_ARGS (3 * BENCH_MAX_FILES + 16)
#define BENCH_NOTHING_TO_PACK (-1) /* pack_cache: no XNNPACK weight to cache, nothing to compare */

typedef struct bench_options {
  int as_json, readahead, keep;
  const char* given_cache;
  const char* variants; /* comma-separated, NULL = the default set */
} bench_options;

static void add_file_args(const bench_run* run, char** argv, int* argc) {
  for (size_t i = 0; i < run->model_count; i++) argv[(*argc)++] = run->models[i];
  for (size_t i = 0; i < run->data_count; i++) {
    argv[(*argc)++] = "--data";
    argv[(*argc)++] = run->data[i];
  }
}

/* The median of values[0..n), which stay in their order (the samples keep their repetitions' order). */
static double median(const double* values, int n) {
  double sorted[BENCH_MAX_REPS];
  memcpy(sorted, values, (size_t)n * sizeof *sorted);
  return bench_median(sorted, n);
}

/* `xpack pack` into path (the cache bench_tmp_create named, in dir), in a child, once per repetition (each run replaces the file atomically):
 * the median wall time and peak RSS are the pack figures. After each, the disk's floor: a file of the
 * cache's size written beside it. */
static int pack_cache(bench_run* run, const char* dir, char* path) {
  char* argv[BENCH_MAX_ARGS];
  int argc = 0;
  argv[argc++] = "xpack";
  argv[argc++] = "-q";
  argv[argc++] = "pack";
  add_file_args(run, argv, &argc);
  argv[argc++] = "-o";
  argv[argc++] = path;
  argv[argc] = NULL;
  double rss[BENCH_MAX_REPS];
  for (int i = 0; i < run->reps; i++) {
    bench_child_run child;
    if (bench_spawn(argv, &child) != 0) return XPACK_EXIT_FAILED;
    free(child.out);
    if (child.exit_code != 0) {
      cli_error("bench: xpack pack failed (exit %d)", child.exit_code);
      /* The inputs are the child's as given: a bad one, or one given twice, is bad input or usage here too. */
      const int passed_on = child.exit_code == XPACK_EXIT_BAD_INPUT || child.exit_code == XPACK_EXIT_USAGE;
      return passed_on ? child.exit_code : XPACK_EXIT_FAILED;
    }
    const int64_t cache_bytes = bench_file_size(path);
    if (cache_bytes < 0) return BENCH_NOTHING_TO_PACK;
    run->pack_wall[i] = child.wall_ms;
    run->pack_rss[i] = (uint64_t)child.usage.ru_maxrss * 1024u;
    run->disk_write[i] = bench_disk_write_ms(dir, (uint64_t)cache_bytes);
    rss[i] = (double)run->pack_rss[i];
    if (run->pack_rss[i] > run->pack_peak_rss_max_bytes) run->pack_peak_rss_max_bytes = run->pack_rss[i];
    run->pack_runs = i + 1;
  }
  run->packed_here = 1;
  run->pack_wall_ms = median(run->pack_wall, run->pack_runs);
  run->disk_write_ms = median(run->disk_write, run->pack_runs);
  run->pack_peak_rss_bytes = (uint64_t)median(rss, run->pack_runs);
  return 0;
}

static int read_cache_facts(bench_run* run) {
  xpack_error err;
  /* The variants open the cache with the loader: what it will not open (the transport form among others) is
   * refused here, in its words, before anything is measured. */
  xpack_cache* opened;
  if (xpack_cache_open(run->cache_path, 0, &opened, &err) != XPACK_OK) {
    cli_error("%s", err.message);
    return cli_exit_for_status(err.status);
  }
  xpack_cache_close(opened);
  xpack_file* f;
  if (xpack_file_open(run->cache_path, &f, &err) != XPACK_OK) {
    cli_error("%s", err.message);
    return cli_exit_for_status(err.status);
  }
  xpack_file_info info;
  xpack_file_get_info(f, &info);
  run->cache_file_bytes = info.file_size;
  run->packed_bytes = info.stored_bytes;
  run->referenced_bytes = info.referenced_bytes;
  run->entries = info.entry_count;
  for (uint64_t i = 0; i < info.region_count; i++) {
    xpack_file_region r;
    xpack_file_get_region(f, i, &r);
    if (r.size > run->largest_packed_bytes) run->largest_packed_bytes = r.size;
  }
  xpack_file_close(f);
  return 0;
}

/* Every file a variant reads: the cache (when it uses one) and the model files. */
static size_t files_of(const bench_run* run, bench_variant v, const char** files) {
  size_t n = 0;
  if (bench_variant_uses_cache(v)) files[n++] = run->cache_path;
  for (size_t i = 0; i < run->model_count; i++) files[n++] = run->models[i];
  for (size_t i = 0; i < run->data_count; i++) files[n++] = run->data[i];
  return n;
}

/* Before a cold child: drop its files (the cache and the models, for both cold variants) and report what is
 * left; before a warm one: read through whatever is not resident. Returns the bytes still resident. */
static int64_t prepare_page_cache(const bench_run* run, bench_variant v, uint64_t* total) {
  const char* files[2 * BENCH_MAX_FILES + 1];
  bench_variant all_files = bench_variant_is_cold(v) ? BENCH_CACHE_COLD : v;
  size_t n = files_of(run, all_files, files);
  int64_t resident = 0;
  *total = 0;
  for (size_t i = 0; i < n; i++) {
    int64_t size = bench_file_size(files[i]);
    if (size < 0) continue;
    *total += (uint64_t)size;
    if (bench_variant_is_cold(v)) {
      if (bench_drop_from_page_cache(files[i]) != 0) {
        cli_line(stderr, "warning: posix_fadvise(DONTNEED) %s: %s", files[i], strerror(errno));
      }
    } else if (bench_resident_bytes(files[i]) < size) {
      bench_warm_page_cache(files[i]);
    }
    int64_t r = bench_resident_bytes(files[i]);
    if (r > 0) resident += r;
  }
  return resident;
}

/* The variants in an order of their own for repetition rep: a Fisher-Yates shuffle driven by a xorshift
 * generator seeded with rep, so that a run's order is the same each time it is repeated. */
static void shuffled_variants(int rep, int order[BENCH_VARIANT_COUNT]) {
  uint64_t x = 0x9e3779b97f4a7c15ull * (uint64_t)(rep + 1);
  for (int i = 0; i < BENCH_VARIANT_COUNT; i++) order[i] = i;
  for (int i = BENCH_VARIANT_COUNT - 1; i > 0; i--) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    const int j = (int)(x % (uint64_t)(i + 1));
    const int t = order[i];
    order[i] = order[j];
    order[j] = t;
  }
}

static int measure(bench_run* run, bench_variant v) {
  bench_variant_result* vr = &run->v[v];
  uint64_t total = 0;
  int64_t resident = prepare_page_cache(run, v, &total);
  vr->file_bytes = total;
  if (vr->count == 0) vr->resident_worst = resident;
  else if (bench_variant_is_cold(v) ? resident > vr->resident_worst : resident < vr->resident_worst) {
    vr->resident_worst = resident;
  }
  char* argv[BENCH_MAX_ARGS];
  int argc = 0;
  argv[argc++] = "xpack";
  argv[argc++] = "-q";
  argv[argc++] = "bench";
  argv[argc++] = "--child";
  argv[argc++] = (char*)kBenchVariantNames[v];
  if (bench_variant_uses_cache(v) || v == BENCH_IDEAL) { /* the ideal provider is filled from the cache */
    argv[argc++] = "--cache";
    argv[argc++] = (char*)run->cache_path;
    for (int i = 0; i < BENCH_UNLIKE_APP_OPTIONS; i++) {
      if (run->unlike_app & kBenchUnlikeApp[i].bit) argv[argc++] = (char*)kBenchUnlikeApp[i].option;
    }
  }
  add_file_args(run, argv, &argc);
  argv[argc] = NULL;
  bench_child_run child;
  if (bench_spawn(argv, &child) != 0) return XPACK_EXIT_FAILED;
  bench_sample* s = &vr->samples[vr->count];
  char why[256];
  if (child.exit_code != 0 || bench_sample_parse(child.out, s, why, sizeof why) != 0) {
    if (child.exit_code == 0) cli_error("bench: %s child: %s", kBenchVariantNames[v], why);
    else cli_error("bench: %s child exited with %d", kBenchVariantNames[v], child.exit_code);
    free(child.out);
    /* As for the pack child: the inputs are the child's as given, so a bad one, or one given twice, is bad
     * input or usage here too. */
    const int passed_on = child.exit_code == XPACK_EXIT_BAD_INPUT || child.exit_code == XPACK_EXIT_USAGE;
    return passed_on ? child.exit_code : XPACK_EXIT_FAILED;
  }
  free(child.out);
  vr->count++;
  if (s->failed && run->problem[0] == 0) {
    snprintf(run->problem, sizeof run->problem, "%s: %llu delegate(s) failed: %s", kBenchVariantNames[v],
             (unsigned long long)s->failed, s->error ? s->error : "");
  }
  if (g_verbosity > 0) {
    fprintf(stderr, "%-20s create %9.3f ms  first inference %9.3f ms  ttfi %9.3f ms\n", kBenchVariantNames[v],
            s->create_ms, s->first_inference_ms, s->ttfi_ms);
  }
  return 0;
}

/* Every sample of every variant must have produced the same outputs as the first nocache sample. */
static void check_outputs(bench_run* run) {
  const char* reference = NULL;
  const char* reference_variant = NULL;
  for (int v = 0; v < BENCH_VARIANT_COUNT; v++) {
    for (size_t i = 0; i < run->v[v].count; i++) {
      const char* o = run->v[v].samples[i].output_xxh3;
      if (o == NULL || o[0] == 0) {
        if (run->problem[0] == 0) snprintf(run->problem, sizeof run->problem, "%s: no outputs", kBenchVariantNames[v]);
        continue;
      }
      if (reference == NULL) {
        reference = o;
        reference_variant = kBenchVariantNames[v];
      } else if (strcmp(reference, o) != 0 && run->problem[0] == 0) {
        snprintf(run->problem, sizeof run->problem,
                 "outputs differ between %s and %s (repetition %zu): the cache served wrong weights", reference_variant,
                 kBenchVariantNames[v], i + 1);
      }
    }
  }
}

static int select_variants(bench_run* run, const bench_options* o) {
  if (o->variants == NULL) {
    for (int v = 0; v <= BENCH_IDEAL; v++) run->v[v].enabled = 1;
    if (o->readahead) run->v[BENCH_CACHE_COLD_SEQ].enabled = run->v[BENCH_CACHE_COLD_WILLNEED].enabled = 1;
    return 0;
  }
  char list[512];
  snprintf(list, sizeof list, "%s", o->variants);
  if (strspn(list, ",") == strlen(list)) {
    cli_error("bench: --variants '%s' names no variant (nocache, cache_warm, cache_cold, nocache_cold, ideal, "
              "cache_cold_seq, cache_cold_willneed)", o->variants);
    return XPACK_EXIT_USAGE;
  }
  for (char* save = NULL, *name = strtok_r(list, ",", &save); name; name = strtok_r(NULL, ",", &save)) {
    int v = bench_variant_of(name);
    if (v < 0) {
      cli_error("bench: unknown variant '%s' (nocache, cache_warm, cache_cold, nocache_cold, ideal, cache_cold_seq, "
                "cache_cold_willneed)", name);
      return XPACK_EXIT_USAGE;
    }
    run->v[v].enabled = 1;
  }
  run->v[BENCH_NOCACHE].enabled = 1; /* the baseline every ratio is against */
  return 0;
}

static const cli_option kOptions[] = {{"--json", 0, 0, 0},  {"--readahead", 0, 0, 0}, {"--keep", 0, 0, 0},    {"--reps", 1, 0, 0},
                                      {"--cache", 1, 0, 0}, {"--variants", 1, 0, 0},  {"--data", 1, 0, 1},
                                      BENCH_UNLIKE_APP_LIST(BENCH_UNLIKE_APP_CLI_OPTION)};
static const cli_options kBenchOptions = {"bench", kOptions, sizeof kOptions / sizeof kOptions[0]};

static int parse_args(bench_run* run, bench_options* o, int argc, char** argv) {
  int rc = cli_check_options(&kBenchOptions, argc, argv);
  if (rc != 0) return rc;
  run->reps = 5;
  run->models = calloc((size_t)argc + 1, sizeof *run->models);
  run->data = calloc((size_t)argc + 1, sizeof *run->data);
  if (run->models == NULL || run->data == NULL) return XPACK_EXIT_FAILED;
  for (int i = 0; i < argc; i++) {
    const char* a = argv[i];
    if (strcmp(a, "--json") == 0) o->as_json = 1;
    else if (strcmp(a, "--readahead") == 0) o->readahead = 1;
    else if (strcmp(a, "--keep") == 0) o->keep = 1;
    else if (bench_unlike_app_bit(a) != 0) run->unlike_app |= bench_unlike_app_bit(a);
    else if (strcmp(a, "--reps") == 0) {
      uint64_t n = 0;
      rc = cli_parse_number("bench", a, argv[++i], 1, BENCH_MAX_REPS, NULL, &n);
      if (rc != 0) return rc;
      run->reps = (int)n;
    } else if (strcmp(a, "--cache") == 0) o->given_cache = argv[++i];
    else if (strcmp(a, "--variants") == 0) o->variants = argv[++i];
    else if (strcmp(a, "--data") == 0) run->data[run->data_count++] = argv[++i];
    else run->models[run->model_count++] = argv[i];
  }
  if (run->model_count == 0) {
    cli_error("bench: no program (.pte) given");
    return XPACK_EXIT_USAGE;
  }
  if (run->model_count > BENCH_MAX_FILES || run->data_count > BENCH_MAX_FILES) {
    cli_error("bench: at most %d programs and %d .ptd files", BENCH_MAX_FILES, BENCH_MAX_FILES);
    return XPACK_EXIT_USAGE;
  }
  rc = select_variants(run, o); /* a usage error, found before any file is looked at */
  if (rc != 0) return rc;
  for (size_t i = 0; i < run->model_count + run->data_count; i++) {
    const char* path = i < run->model_count ? run->models[i] : run->data[i - run->model_count];
    int64_t size = bench_file_size(path);
    if (size < 0) {
      if (path[0] == '\0') cli_error("an input is an empty path: expected the name of a file");
      else if (errno == ENOENT && strstr(path, "!/") != NULL) {
        /* Its cold variants drop files from the page cache and measure what was read back, file by file. */
        cli_error("%s: bench measures files, not members of an archive: extract it first", path);
      } else cli_error("%s: cannot open: %s", path, strerror(errno));
      return XPACK_EXIT_BAD_INPUT;
    }
    run->model_bytes += (uint64_t)size;
  }
  return 0;
}

static void free_run(bench_run* run) {
  for (int v = 0; v < BENCH_VARIANT_COUNT; v++) {
    for (size_t i = 0; i < run->v[v].count; i++) bench_sample_free(&run->v[v].samples[i]);
  }
  free(run->models);
  free(run->data);
  free(run);
}

int cmd_bench(int argc, char** argv) {
  if (argc >= 1 && strcmp(argv[0], "--child") == 0) return bench_child_main(argc - 1, argv + 1);
  bench_run* run = calloc(1, sizeof *run);
  if (run == NULL) {
    cli_error("bench: out of memory");
    return XPACK_EXIT_FAILED;
  }
  bench_options o = {0};
  int rc = parse_args(run, &o, argc, argv);
  char dir[4096], packed_path[4200];
  int nothing_to_pack = 0;
  if (rc == 0 && o.given_cache) {
    run->cache_path = o.given_cache;
  } else if (rc == 0) {
    if (bench_tmp_create(dir, sizeof dir, packed_path, sizeof packed_path, !o.as_json) != 0) {
      rc = XPACK_EXIT_FAILED;
    } else {
      if (!o.keep) bench_tmp_remove_on_signals();
      rc = pack_cache(run, dir, packed_path);
      if (rc == 0) chmod(packed_path, 0600); /* the bench's own file: readable by it whatever the umask */
      run->cache_path = packed_path;
      run->cache_kept = o.keep;
    }
  }
  if (rc == BENCH_NOTHING_TO_PACK) { /* as `xpack pack`: not an error, but nothing to measure */
    if (o.as_json) {
      json j;
      json_init(&j, cli_out());
      json_object(&j);
      json_key(&j, "models"); json_array(&j);
      for (size_t i = 0; i < run->model_count; i++) json_string(&j, run->models[i]);
      json_end_array(&j);
      json_key(&j, "nothing_to_pack"); json_bool(&j, 1);
      json_end_object(&j);
      json_finish(&j);
    }
    else fprintf(cli_out(), "nothing to pack: no XNNPACK weight to cache in these programs, nothing measured\n");
    rc = XPACK_EXIT_OK;
    nothing_to_pack = 1;
  } else if (rc == 0) {
    rc = read_cache_facts(run);
  }
  for (int rep = 0; rc == 0 && !nothing_to_pack && rep < run->reps; rep++) {
    /* Variants interleaved within each repetition, so that a slow spell of the machine hits all of them, and
     * shuffled anew each repetition: in a fixed order (even a rotated one) each variant always follows the
     * same other one, and what a child leaves behind (page cache, a background read) then biases its
     * successor; seen here as a cold ratio of 1.20 in a fixed order that is 0.99 alternated. */
    int order[BENCH_VARIANT_COUNT];
    shuffled_variants(rep, order);
    for (int k = 0; rc == 0 && k < BENCH_VARIANT_COUNT; k++) {
      if (run->v[order[k]].enabled) rc = measure(run, (bench_variant)order[k]);
    }
    if (rc == 0 && run->v[BENCH_CACHE_COLD].enabled) {
      run->disk_read_cold[run->disk_read_runs++] = bench_disk_read_cold_ms(run->cache_path);
    }
  }
  run->disk_read_cold_ms = run->disk_read_runs ? median(run->disk_read_cold, run->disk_read_runs) : -1;
  if (rc == 0 && !nothing_to_pack) {
    for (int v = 0; v < BENCH_VARIANT_COUNT; v++) {
      bench_sample_median(run->v[v].samples, run->v[v].count, &run->v[v].median);
    }
    check_outputs(run);
    if (o.as_json) bench_report_json(run, cli_out());
    else bench_report_text(run, cli_out());
    if (run->problem[0]) {
      cli_error("bench: %s", run->problem);
      rc = XPACK_EXIT_CHECK_FAILED;
    }
  }
  bench_tmp_remove(o.keep && !nothing_to_pack);
  free_run(run);
  return rc;
}
