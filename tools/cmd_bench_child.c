/* xpack bench --child VARIANT: one variant measured once, in a process of its own.
 *
 * Like an app: open the programs, open the cache (cache variants), replay every XNNPACK delegate into a
 * subgraph (binding weights to the cache), create every runtime, then run each once; every runtime stays
 * alive until memory has been read. Writes one flat JSON object (bench_sample's fields) to stdout.
 * The programs are opened without hashing them (xpack run hashes for provenance): hashing would read every
 * raw weight and defeat the cold variants. */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "cli_common.h"
#include "cmd_bench.h"
#include "timing.h"
#include "json.h"
#include "model_args.h"
#include "xpack.h"

typedef struct live_delegate {
  xpack_delegate_ref ref;
  xpack_et_xnn_graph* graph;
  xpack_replay_subgraph replay;
  int defined;
  xnn_runtime_t runtime;
} live_delegate;

typedef struct child {
  xpack_model_set set;
  live_delegate* items;
  size_t count, capacity;
  size_t failed;
  char error[XPACK_ERROR_MESSAGE_SIZE];
  char* outputs;
  size_t outputs_len, outputs_capacity;
  double size_ms; /* xpack_replay_size_weights, summed over the delegates */
} child;

static double now_ms(void) { return bench_now_us() / 1e3; }

static void fail(child* c, const char* message) {
  if (c->failed++ == 0) snprintf(c->error, sizeof c->error, "%s", message);
}

static int collect(void* context, const xpack_model_set* set, const xpack_delegate_ref* ref) {
  child* c = context;
  if (!ref->info->is_xnnpack) return 0;
  if (c->count == c->capacity) {
    size_t capacity = c->capacity ? c->capacity * 2 : 16;
    live_delegate* bigger = realloc(c->items, capacity * sizeof *bigger);
    if (bigger == NULL) return XPACK_EXIT_FAILED;
    c->items = bigger;
    c->capacity = capacity;
  }
  c->items[c->count++] = (live_delegate){.ref = *ref};
  return 0;
}

static const cli_option kOptions[] = {{"--cache", 1, 0, 0}, {"--data", 1, 0, 1},
                                     BENCH_UNLIKE_APP_LIST(BENCH_UNLIKE_APP_CLI_OPTION)};
static const cli_options kChildOptions = {"bench --child", kOptions, sizeof kOptions / sizeof kOptions[0]};

/* The programs, not hashed (see above). */
static int open_models(child* c, int argc, char** argv, unsigned set_flags) {
  int rc = model_args_open(&c->set, argc, argv, &kChildOptions, set_flags);
  return rc ? rc : xpack_for_each_delegate(&c->set, NULL, collect, c);
}

/* Replays every delegate into a subgraph, binding weights through bind and the sizes XNNPACK reads through
 * size (either may be NULL). */
static void define_all(child* c, xpack_bind_fn bind, void* bind_context, xpack_size_fn size, void* size_context) {
  for (size_t i = 0; i < c->count; i++) {
    live_delegate* d = &c->items[i];
    xpack_error err;
    xpack_status st = xpack_et_xnn_graph_open(c->set.programs[d->ref.program], d->ref.method, d->ref.delegate,
                                              &d->graph, &err);
    if (st == XPACK_OK) {
      xpack_et_named_sources sources = xpack_model_set_sources(&c->set, d->ref.program);
      st = xpack_replay_define(d->graph, &sources, bind, bind_context, &d->replay, &err);
      d->defined = st == XPACK_OK;
      if (st == XPACK_OK && size != NULL) {
        const double t0 = now_ms();
        st = xpack_replay_size_weights(d->graph, &sources, size, size_context, &err);
        c->size_ms += now_ms() - t0;
      }
    }
    if (st != XPACK_OK) fail(c, err.message);
  }
}

static double create_all(child* c, struct xnn_weights_cache_provider* provider) {
  double total = 0;
  for (size_t i = 0; i < c->count; i++) {
    live_delegate* d = &c->items[i];
    if (!d->defined) continue;
    const double t0 = now_ms();
    enum xnn_status xs = xpack_replay_create_runtime(&d->replay, provider, &d->runtime);
    total += now_ms() - t0;
    /* What ExecuTorch frees once a delegate is compiled, freed here too, or memory would count it. */
    xpack_replay_drop_definition(&d->replay);
    xpack_et_xnn_graph_free(d->graph);
    d->graph = NULL;
    if (xs != xnn_status_success) {
      char message[256];
      snprintf(message, sizeof message, "%s: method '%s' delegate %zu: xnn_create_runtime_v4 failed (status %d)",
               d->ref.file, d->ref.method_name, d->ref.delegate, (int)xs);
      fail(c, message);
      d->runtime = NULL;
    }
  }
  return total;
}

static void append_output(child* c, const char* text) {
  size_t n = strlen(text);
  if (c->outputs_len + n + 2 > c->outputs_capacity) {
    size_t capacity = (c->outputs_capacity + n + 2) * 2;
    char* bigger = realloc(c->outputs, capacity);
    if (bigger == NULL) return;
    c->outputs = bigger;
    c->outputs_capacity = capacity;
  }
  if (c->outputs_len) c->outputs[c->outputs_len++] = ' ';
  memcpy(c->outputs + c->outputs_len, text, n + 1);
  c->outputs_len += n;
}

static double run_all(child* c) {
  double total = 0;
  for (size_t i = 0; i < c->count; i++) {
    live_delegate* d = &c->items[i];
    if (d->runtime == NULL) {
      append_output(c, "-");
      continue;
    }
    xpack_run_result r = {0};
    xpack_error err;
    if (xpack_execute_runtime(d->runtime, &d->replay, &d->ref, &r, &err) != XPACK_OK) {
      fail(c, err.message);
      append_output(c, "-");
      continue;
    }
    total += r.first_inference_ms;
    for (size_t k = 0; k < r.num_outputs; k++) {
      char hex[17];
      snprintf(hex, sizeof hex, "%016llx", (unsigned long long)r.output_hash[k]);
      append_output(c, hex);
    }
  }
  return total;
}

static void release_all(child* c) {
  for (size_t i = 0; i < c->count; i++) {
    live_delegate* d = &c->items[i];
    if (d->runtime) xnn_delete_runtime(d->runtime);
    if (d->defined) xpack_replay_release(&d->replay);
    xpack_et_xnn_graph_free(d->graph);
    *d = (live_delegate){.ref = d->ref};
  }
}

/* Everything the child holds besides the cache and the ideal provider; safe at any stage. */
static void close_child(child* c) {
  release_all(c);
  xpack_model_set_close(&c->set);
  free(c->items);
  free(c->outputs);
}

static void write_sample(const bench_sample* s, const char* variant, const char* refusal) {
  json j;
  json_init(&j, stdout);
  json_object(&j);
  json_key(&j, "variant"); json_string(&j, variant);
#define NUM(name) json_key(&j, #name); json_double(&j, s->name)
#define UINT(name) json_key(&j, #name); json_uint(&j, s->name)
  NUM(open_ms); NUM(prefetch_ms); NUM(load_ms); NUM(size_ms); NUM(create_ms); NUM(first_inference_ms); NUM(ttfi_ms); NUM(fill_ms); NUM(load_ttfi_ms);
  UINT(rss_bytes); UINT(private_dirty_bytes); UINT(peak_rss_bytes); UINT(major_faults); UINT(minor_faults);
  UINT(delegates); UINT(failed); UINT(lookups); UINT(hits); UINT(misses); UINT(heap_fallback_bytes);
  UINT(open_major_faults); UINT(open_read_calls); UINT(open_storage_bytes); UINT(model_resident_bytes);
  UINT(open_flags);
#undef NUM
#undef UINT
  json_key(&j, "output_xxh3"); json_string(&j, s->output_xxh3 ? s->output_xxh3 : "");
  json_key(&j, "error"); json_string(&j, s->error);
  json_key(&j, "cache_refused"); json_string(&j, refusal);
  json_end_object(&j);
  json_finish(&j);
}

int bench_child_main(int argc, char** argv) {
  if (argc < 1 || bench_variant_of(argv[0]) < 0) {
    cli_error("bench --child: unknown variant %s", argc ? argv[0] : "(none)");
    return XPACK_EXIT_USAGE;
  }
  const bench_variant variant = (bench_variant)bench_variant_of(argv[0]);
  argc--;
  argv++;
  const char* cache_path = NULL;
  unsigned unlike_app = 0;
  for (int i = 0; i < argc; i++) {
    if (strcmp(argv[i], "--cache") == 0 && i + 1 < argc) cache_path = argv[i + 1];
    else unlike_app |= bench_unlike_app_bit(argv[i]);
  }
  if ((bench_variant_uses_cache(variant) || variant == BENCH_IDEAL) && cache_path == NULL) {
    cli_error("bench --child %s: needs --cache", kBenchVariantNames[variant]);
    return XPACK_EXIT_USAGE;
  }
  child c = {0};
  bench_sample s = {0};
  double t0;
  /* The cache first, as docs/INTEGRATION.md advises apps: its family probes (XPACK_OPEN_PROBE_EARLY) then run
   * on a thread of their own while the programs are opened and their delegates replayed. */
  xpack_cache* cache = NULL;
  if (bench_variant_uses_cache(variant)) {
    xpack_error err;
    bench_io probe, before, after;
    bench_read_io(&probe);
    bench_read_io(&before); /* before - probe: the read calls that reading /proc/self/io itself makes */
    const uint64_t own_reads = before.read_calls - probe.read_calls;
    s.open_flags = bench_variant_open_flags(variant, unlike_app);
    t0 = now_ms();
    xpack_status st = xpack_cache_open(cache_path, (unsigned)s.open_flags, &cache, &err);
    s.open_ms = now_ms() - t0;
    bench_read_io(&after);
    s.open_major_faults = after.major_faults - before.major_faults;
    s.open_read_calls = after.read_calls - before.read_calls - own_reads;
    s.open_storage_bytes = after.storage_bytes - before.storage_bytes;
    if (st != XPACK_OK) {
      cli_error("%s", err.message);
      close_child(&c);
      return cli_exit_for_status(st);
    }
    /* As apps are advised to: a small cold cache's packed weights are asked for now, read while the programs
     * load. After the open's I/O counters, which count the open alone. */
    if (!(unlike_app & BENCH_NO_PREFETCH)) {
      t0 = now_ms();
      xpack_cache_prefetch(cache);
      s.prefetch_ms = now_ms() - t0;
    }
  }
  t0 = now_ms();
  /* The cache variants read raw weights only when they miss, as an app serving its weights from a cache
   * would (XPACK_MODEL_SET_WEIGHTS_ON_DEMAND); the others read them as XNNPACK packs them. */
  const int served = cache != NULL && xpack_cache_refusal(cache) == NULL; /* refused whole: it will miss everything */
  int rc = open_models(&c, argc, argv, served ? XPACK_MODEL_SET_WEIGHTS_ON_DEMAND : 0u);
  if (rc) {
    close_child(&c);
    xpack_cache_close(cache);
    return rc;
  }
  s.load_ms = now_ms() - t0;
  s.delegates = c.count;

  bench_ideal* ideal = NULL;
  if (variant == BENCH_IDEAL && (ideal = bench_ideal_create()) == NULL) {
    cli_error("bench: out of memory");
    close_child(&c);
    xpack_cache_close(cache);
    return XPACK_EXIT_FAILED;
  }

  /* Opening the programs left freed memory in the heap; every variant gives it back to the kernel here, so
   * each one times create on a heap like a fresh process's. */
  malloc_trim(0);

  struct xnn_weights_cache_provider* provider = ideal ? bench_ideal_provider(ideal) : xpack_cache_provider(cache);

  bench_ideal_bindings ideal_bindings = {0};
  t0 = now_ms();
  if (ideal) define_all(&c, bench_ideal_bind, &ideal_bindings, bench_ideal_expect, ideal);
  else if (served) {
    define_all(&c, xpack_replay_bind_to_cache, cache, xpack_replay_size_to_cache, cache);
  } else {
    define_all(&c, NULL, NULL, NULL, NULL); /* no cache, or one refused whole: nothing to bind or size for */
  }
  s.load_ms += now_ms() - t0;
  if (ideal) { /* filled beforehand: copied from the cache file, no runtime created yet (cmd_bench_ideal_fill.c) */
    char why[256];
    t0 = now_ms();
    const int filled = bench_ideal_fill(ideal, &ideal_bindings, cache_path, why, sizeof why);
    s.fill_ms = now_ms() - t0;
    bench_ideal_bindings_free(&ideal_bindings);
    if (filled != 0) {
      cli_error("bench: filling the ideal provider from %s: %s", cache_path, why);
      close_child(&c);
      bench_ideal_destroy(ideal);
      return XPACK_EXIT_FAILED;
    }
  }
  s.create_ms = create_all(&c, provider);
  if (cache) xpack_cache_unbind_all(cache);
  s.first_inference_ms = run_all(&c);
  xpack_cache_warm_up(cache); /* as apps are advised to once started: a file skipped as cold is read for next time */
  s.ttfi_ms = s.open_ms + s.prefetch_ms + s.create_ms + s.first_inference_ms;
  s.size_ms = c.size_ms;
  s.load_ttfi_ms = s.load_ms + s.ttfi_ms;
  for (size_t i = 0; i < c.set.program_count + c.set.ptd_count; i++) {
    const xpack_model_file* f = i < c.set.program_count ? &c.set.program_files[i] : &c.set.ptd_files[i - c.set.program_count];
    const int64_t resident = bench_resident_bytes(f->path);
    if (resident > 0) s.model_resident_bytes += (uint64_t)resident;
  }

  bench_read_memory(&s.rss_bytes, &s.private_dirty_bytes, &s.peak_rss_bytes);
  struct rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  s.major_faults = (uint64_t)usage.ru_majflt;
  s.minor_faults = (uint64_t)usage.ru_minflt;
  if (cache) {
    xpack_stats st;
    xpack_cache_stats(cache, &st);
    s.lookups = st.lookups;
    s.hits = st.hits;
    s.misses = st.misses;
    s.heap_fallback_bytes = st.heap_fallback_bytes;
  } else if (ideal) {
    uint64_t lookups, hits, inserts;
    bench_ideal_counts(ideal, &lookups, &hits, &inserts);
    s.lookups = lookups;
    s.hits = hits;
    s.misses = inserts; /* weights the ideal provider was not given: packed now */
  }
  s.failed = c.failed;
  s.output_xxh3 = c.outputs;
  s.error = c.failed ? c.error : NULL;
  write_sample(&s, kBenchVariantNames[variant], xpack_cache_refusal(cache));

  close_child(&c);
  xpack_cache_close(cache);
  bench_ideal_destroy(ideal);
  return XPACK_EXIT_OK;
}
