/* xpack bench: the targets, the table and the JSON document.
 *
 * JSON (every time in ms unless the key says us, every size in bytes; per-variant objects have one key per
 * measured variant, medians over the repetitions):
 *   {"models": [...], "data": [...], "reps": N, "machine": {"cpu", "cpus", "memory_bytes", "kernel"},
 *    "model_bytes", "cache_file_bytes", "packed_bytes", "referenced_bytes", "entries", "largest_packed_bytes",
 *    "pack": {"wall_ms", "peak_rss_bytes" (medians), "peak_rss_max_bytes", "disk_write_ms" (median: the same
 *             bytes written and fsynced beside the cache, no packing), "runs": [{"wall_ms", "peak_rss_bytes",
 *             "disk_write_ms"}]}
 *            | null (with --cache; `xpack pack` runs once per repetition),
 *    "open_us": cache_warm open,
 *    "open_ms", "prefetch_ms" (xpack_cache_prefetch, in ttfi), "load_ms", "size_ms" (of load_ms: sizing the weights), "create_ms", "first_inference_ms", "ttfi_ms", "rss_bytes", "private_dirty_bytes",
 *    "peak_rss_bytes", "major_faults", "minor_faults", "lookups", "hits", "misses": {variant: median},
 *    "unlike_app": which of "serve_small", "serve_cold", "probe_late", "no_prefetch" the cache variants used (their options),
 *    "load_ttfi_paired": {cache variant: {"base" (nocache for cache_warm, nocache_cold for cache_cold), "pairs",
 *                         "median_ms", "low_ms", "high_ms", "coverage"}}: load + TTFI of the variant minus its
 *                         base's within each repetition, the median of those and its interval (cmd_bench_paired.c),
 *    "page_cache": {variant: {"file_bytes", "resident_bytes", "dropped"?}},
 *    "samples": {variant: [{every field of a child's sample, "cache_refused": why the cache was refused whole
 *                          (skipped as small, another build, ...) or null}]},
 *    "targets": [{"name", "value", "limit", "met"}], "outputs_identical": bool, "problem": string | null} */
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "cli_common.h"
#include "cmd_bench.h"
#include "json.h"

static const bench_sample* median_of(const bench_run* run, bench_variant v) {
  return run->v[v].enabled && run->v[v].count ? &run->v[v].median : NULL;
}

static double ratio(double a, double b) { return b > 0 ? a / b : 0; }

size_t bench_targets(const bench_run* run, bench_target* t) {
  const bench_sample* n = median_of(run, BENCH_NOCACHE);
  const bench_sample* w = median_of(run, BENCH_CACHE_WARM);
  const bench_sample* c = median_of(run, BENCH_CACHE_COLD);
  const bench_sample* nc = median_of(run, BENCH_NOCACHE_COLD);
  const bench_sample* id = median_of(run, BENCH_IDEAL);
  size_t k = 0;
#define TARGET(label, have, v, lim) t[k++] = (bench_target){label, (have) ? (v) : 0, lim, (have) ? 1 : 0}
  TARGET("create runtime: cache_warm / nocache", n && w, ratio(w->create_ms, n->create_ms), 0.05);
  TARGET("time to first inference: cache_warm / nocache", n && w, ratio(w->ttfi_ms, n->ttfi_ms), 0.25);
  TARGET("open + create: cache_warm / ideal create", w && id, ratio(w->open_ms + w->create_ms, id->create_ms), 1.5);
  TARGET("time to first inference: cache_cold / nocache_cold", c && nc, ratio(c->ttfi_ms, nc->ttfi_ms), 1.0);
  TARGET("load + time to first inference: cache_warm / nocache", n && w, ratio(w->load_ttfi_ms, n->load_ttfi_ms), 1.0);
  TARGET("load + time to first inference: cache_cold / nocache_cold", c && nc,
         ratio(c->load_ttfi_ms, nc->load_ttfi_ms), 1.0);
  TARGET("time to first inference: cache_cold / (cold read of the cache + cache_warm)",
         c && w && run->disk_read_cold_ms > 0, ratio(c->ttfi_ms, run->disk_read_cold_ms + w->ttfi_ms), 1.1);
  TARGET("cold open: storage reads (major faults + read calls)", c != NULL,
         (double)(c->open_major_faults + c->open_read_calls), 2.0);
  TARGET("open cache_warm, us (this file's entries)", w != NULL, w->open_ms * 1e3, 50.0);
  TARGET("Private_Dirty after first inference: cache_warm / packed bytes", w != NULL,
         ratio((double)w->private_dirty_bytes, (double)run->packed_bytes), 0.05);
  TARGET("peak RSS: cache_warm / nocache", n && w, ratio((double)w->peak_rss_bytes, (double)n->peak_rss_bytes), 0.6);
  TARGET("xpack pack wall / nocache packing (create) time", run->packed_here && n,
         ratio(run->pack_wall_ms, n->create_ms), 1.25);
  TARGET("xpack pack peak RSS / (model files + largest packed weight)", run->packed_here,
         ratio((double)run->pack_peak_rss_bytes, (double)(run->model_bytes + run->largest_packed_bytes)), 1.1);
#undef TARGET
  return k;
}

static double mib(uint64_t bytes) { return (double)bytes / (1024.0 * 1024.0); }

/* The cache variants each against the baseline an app would have without the cache. */
static const struct {
  bench_variant variant, base;
} kPairs[] = {{BENCH_CACHE_WARM, BENCH_NOCACHE}, {BENCH_CACHE_COLD, BENCH_NOCACHE_COLD}};

static void paired_text(const bench_run* run, FILE* out) {
  for (size_t i = 0; i < sizeof kPairs / sizeof kPairs[0]; i++) {
    bench_paired p;
    if (bench_paired_load_ttfi(run, kPairs[i].variant, kPairs[i].base, &p) != 0) continue;
    fprintf(out, "load + ttfi, %s - %s within each repetition: median %+.3f ms, %.0f %% interval %+.3f to %+.3f ms "
                 "(%zu pairs)%s\n", kBenchVariantNames[kPairs[i].variant], kBenchVariantNames[kPairs[i].base],
            p.median_ms, p.coverage * 100, p.low_ms, p.high_ms, p.pairs,
            p.low_ms > 0 ? ": slower beyond this run's spread" : p.high_ms < 0 ? ": faster beyond this run's spread" : "");
  }
}

void bench_report_text(const bench_run* run, FILE* out) {
  char b1[32], b2[32], b3[32], b4[32];
  fprintf(out, "xpack bench:");
  for (size_t i = 0; i < run->model_count; i++) fprintf(out, " %s", run->models[i]);
  for (size_t i = 0; i < run->data_count; i++) fprintf(out, " --data %s", run->data[i]);
  fprintf(out, "\nmodel files %s; cache %s, %llu entries, %s packed (largest %s); medians of %d repetitions\n",
          cli_bytes(run->model_bytes, b1), cli_bytes(run->cache_file_bytes, b2), (unsigned long long)run->entries,
          cli_bytes(run->packed_bytes, b3), cli_bytes(run->largest_packed_bytes, b4), run->reps);
  if (run->unlike_app) {
    fprintf(out, "the cache variants open the cache unlike an app:");
    for (int i = 0; i < BENCH_UNLIKE_APP_OPTIONS; i++) {
      const bench_unlike_app_option* u = &kBenchUnlikeApp[i];
      if (run->unlike_app & u->bit) fprintf(out, " %s%s", u->option, u->text_note);
    }
    fprintf(out, "\n");
  }
  if (run->packed_here) {
    fprintf(out, "xpack pack (median of %d runs): wall %.1f ms, peak RSS %s (largest %s)\n", run->pack_runs,
            run->pack_wall_ms, cli_bytes(run->pack_peak_rss_bytes, b1), cli_bytes(run->pack_peak_rss_max_bytes, b2));
    if (run->disk_write_ms > 0) {
      fprintf(out, "disk floor: writing and fsyncing the cache's size beside it, no packing: %.1f ms (median); "
                   "pack wall / disk floor %.2f\n", run->disk_write_ms, run->pack_wall_ms / run->disk_write_ms);
    }
  }
  const bench_sample* base = median_of(run, BENCH_NOCACHE);
  fprintf(out, "\n%-20s %9s %10s %10s %10s %7s %9s %9s %9s %8s %8s %13s\n", "variant", "open+pf ms", "create ms",
          "1st inf ms", "ttfi ms", "x base", "RSS MiB", "PrivD MiB", "peak MiB", "majflt", "minflt", "hits/lookups");
  for (int v = 0; v < BENCH_VARIANT_COUNT; v++) {
    const bench_sample* s = median_of(run, (bench_variant)v);
    if (s == NULL) continue;
    char hits[32] = "-";
    if (v != BENCH_NOCACHE && v != BENCH_NOCACHE_COLD) {
      snprintf(hits, sizeof hits, "%llu/%llu", (unsigned long long)s->hits, (unsigned long long)s->lookups);
    }
    fprintf(out, "%-20s %9.3f %10.3f %10.3f %10.3f %7.3f %9.1f %9.1f %9.1f %8llu %8llu %13s\n", kBenchVariantNames[v],
            s->open_ms + s->prefetch_ms, s->create_ms, s->first_inference_ms, s->ttfi_ms, base ? ratio(s->ttfi_ms, base->ttfi_ms) : 0,
            mib(s->rss_bytes), mib(s->private_dirty_bytes), mib(s->peak_rss_bytes),
            (unsigned long long)s->major_faults, (unsigned long long)s->minor_faults, hits);
  }
  fprintf(out, "(x base: time to first inference against nocache; ttfi = open + prefetch + create + first inference; "
               "programs opened and delegates replayed in %.1f ms (nocache), not in ttfi)\n",
          base ? base->load_ms : 0.0);
  fprintf(out, "\n%-20s %9s %14s %7s   %-44s %s\n", "variant", "load ms", "load+ttfi ms", "x base",
          "cold open: faults + reads, bytes from storage", "model bytes in page cache after");
  for (int v = 0; v < BENCH_VARIANT_COUNT; v++) {
    const bench_sample* s = median_of(run, (bench_variant)v);
    if (s == NULL) continue;
    char io[64] = "-";
    if (bench_variant_uses_cache((bench_variant)v) && bench_variant_is_cold((bench_variant)v)) {
      snprintf(io, sizeof io, "%llu + %llu, %s", (unsigned long long)s->open_major_faults,
               (unsigned long long)s->open_read_calls, cli_bytes(s->open_storage_bytes, b1));
    }
    fprintf(out, "%-20s %9.3f %14.3f %7.3f   %-44s %s of %s\n", kBenchVariantNames[v], s->load_ms, s->load_ttfi_ms,
            base ? ratio(s->load_ttfi_ms, base->load_ttfi_ms) : 0, io, cli_bytes(s->model_resident_bytes, b2),
            cli_bytes(run->model_bytes, b3));
  }
  for (int v = 0; v < BENCH_VARIANT_COUNT; v++) {
    const bench_variant_result* vr = &run->v[v];
    if (!vr->enabled || !vr->count) continue;
    if (bench_variant_is_cold((bench_variant)v)) {
      fprintf(out, "%s: after POSIX_FADV_DONTNEED, %s of %s still in the page cache%s\n", kBenchVariantNames[v],
              cli_bytes((uint64_t)vr->resident_worst, b1), cli_bytes(vr->file_bytes, b2),
              vr->resident_worst * 20 > (int64_t)vr->file_bytes ? ": the kernel did NOT drop the pages, not cold" : "");
    } else if ((uint64_t)vr->resident_worst < vr->file_bytes) {
      fprintf(out, "%s: only %s of %s in the page cache before the child\n", kBenchVariantNames[v],
              cli_bytes((uint64_t)vr->resident_worst, b1), cli_bytes(vr->file_bytes, b2));
    }
  }
  for (int v = 0; v < BENCH_VARIANT_COUNT; v++) {
    const bench_variant_result* vr = &run->v[v];
    if (vr->enabled && vr->count && vr->samples[0].cache_refused) {
      fprintf(out, "%s: the cache served nothing, XNNPACK packed everything: %s%s\n", kBenchVariantNames[v],
              vr->samples[0].cache_refused,
              strstr(vr->samples[0].cache_refused, "SKIP_SMALL") ? " (--serve-small measures it served)"
              : strstr(vr->samples[0].cache_refused, "SKIP_COLD") ? " (--serve-cold measures it served)"
                                                                   : "");
    }
  }
  if (run->disk_read_cold_ms > 0) {
    fprintf(out, "disk floor, cold: reading the whole cache file after dropping it: %.2f ms (median)\n",
            run->disk_read_cold_ms);
  }
  const bench_sample* cold = median_of(run, BENCH_CACHE_COLD);
  for (int v = BENCH_CACHE_COLD_SEQ; v <= BENCH_CACHE_COLD_WILLNEED; v++) {
    const bench_sample* s = median_of(run, (bench_variant)v);
    if (s && cold) {
      fprintf(out, "read-ahead: %s time to first inference %.3f ms = %.3f x cache_cold\n", kBenchVariantNames[v],
              s->ttfi_ms, ratio(s->ttfi_ms, cold->ttfi_ms));
    }
  }
  paired_text(run, out);
  bench_target t[BENCH_MAX_TARGETS];
  size_t n = bench_targets(run, t);
  fprintf(out, "\ntargets (ratios from this run):\n");
  for (size_t i = 0; i < n; i++) {
    if (!t[i].known) fprintf(out, "  %-7s %-62s\n", "n/a", t[i].name);
    else fprintf(out, "  %-7s %-62s %10.4f  (<= %g)\n", t[i].value <= t[i].limit ? "met" : "MISSED", t[i].name,
                 t[i].value, t[i].limit);
  }
  fprintf(out, "outputs: %s\n", run->problem[0] ? run->problem : "bit-identical in every variant and repetition");
}

static void machine(json* j) {
  char cpu[256] = "unknown", line[512];
  uint64_t memory = 0;
  FILE* f = fopen("/proc/cpuinfo", "r");
  while (f && fgets(line, sizeof line, f)) {
    char* colon = strchr(line, ':');
    if (strncmp(line, "model name", 10) == 0 && colon) {
      snprintf(cpu, sizeof cpu, "%s", colon + 2);
      cpu[strcspn(cpu, "\n")] = 0;
      break;
    }
  }
  if (f) fclose(f);
  f = fopen("/proc/meminfo", "r");
  while (f && fgets(line, sizeof line, f)) {
    unsigned long long kb;
    if (sscanf(line, "MemTotal: %llu kB", &kb) == 1) memory = kb * 1024u;
  }
  if (f) fclose(f);
  struct utsname u;
  json_key(j, "machine"); json_object(j);
  json_key(j, "cpu"); json_string(j, cpu);
  json_key(j, "cpus"); json_int(j, sysconf(_SC_NPROCESSORS_ONLN));
  json_key(j, "memory_bytes"); json_uint(j, memory);
  json_key(j, "kernel"); json_string(j, uname(&u) == 0 ? u.release : NULL);
  json_end_object(j);
}

/* One object {variant: value} for a field of the medians. */
#define PER_VARIANT(key, field, emit)                                          \
  do {                                                                         \
    json_key(&j, key); json_object(&j);                                        \
    for (int v = 0; v < BENCH_VARIANT_COUNT; v++) {                            \
      const bench_sample* s = median_of(run, (bench_variant)v);                \
      if (s) { json_key(&j, kBenchVariantNames[v]); emit(&j, s->field); }      \
    }                                                                          \
    json_end_object(&j);                                                       \
  } while (0)

static void sample_json(json* j, const bench_sample* s) {
  json_object(j);
#define D(f) json_key(j, #f); json_double(j, s->f)
#define U(f) json_key(j, #f); json_uint(j, s->f)
  D(open_ms); D(prefetch_ms); D(load_ms); D(size_ms); D(create_ms); D(first_inference_ms); D(ttfi_ms); D(fill_ms); D(load_ttfi_ms);
  U(rss_bytes); U(private_dirty_bytes); U(peak_rss_bytes); U(major_faults); U(minor_faults);
  U(delegates); U(failed); U(lookups); U(hits); U(misses); U(heap_fallback_bytes);
  U(open_major_faults); U(open_read_calls); U(open_storage_bytes); U(model_resident_bytes);
  U(open_flags);
#undef D
#undef U
  json_key(j, "output_xxh3"); json_string(j, s->output_xxh3);
  json_key(j, "error"); json_string(j, s->error);
  json_key(j, "cache_refused"); json_string(j, s->cache_refused);
  json_end_object(j);
}

void bench_report_json(const bench_run* run, FILE* out) {
  json j;
  json_init(&j, out);
  json_object(&j);
  json_key(&j, "models"); json_array(&j);
  for (size_t i = 0; i < run->model_count; i++) json_string(&j, run->models[i]);
  json_end_array(&j);
  json_key(&j, "data"); json_array(&j);
  for (size_t i = 0; i < run->data_count; i++) json_string(&j, run->data[i]);
  json_end_array(&j);
  json_key(&j, "reps"); json_int(&j, run->reps);
  json_key(&j, "kept_cache");
  if (run->cache_kept) json_string(&j, run->cache_path);
  else json_null(&j);
  machine(&j);
  json_key(&j, "model_bytes"); json_uint(&j, run->model_bytes);
  json_key(&j, "cache_file_bytes"); json_uint(&j, run->cache_file_bytes);
  json_key(&j, "packed_bytes"); json_uint(&j, run->packed_bytes);
  json_key(&j, "referenced_bytes"); json_uint(&j, run->referenced_bytes);
  json_key(&j, "entries"); json_uint(&j, run->entries);
  json_key(&j, "largest_packed_bytes"); json_uint(&j, run->largest_packed_bytes);
  json_key(&j, "pack");
  if (run->packed_here) {
    json_object(&j);
    json_key(&j, "wall_ms"); json_double(&j, run->pack_wall_ms);
    json_key(&j, "peak_rss_bytes"); json_uint(&j, run->pack_peak_rss_bytes);
    json_key(&j, "peak_rss_max_bytes"); json_uint(&j, run->pack_peak_rss_max_bytes);
    json_key(&j, "disk_write_ms"); json_double(&j, run->disk_write_ms);
    json_key(&j, "runs"); json_array(&j);
    for (int i = 0; i < run->pack_runs; i++) {
      json_object(&j);
      json_key(&j, "wall_ms"); json_double(&j, run->pack_wall[i]);
      json_key(&j, "disk_write_ms"); json_double(&j, run->disk_write[i]);
      json_key(&j, "peak_rss_bytes"); json_uint(&j, run->pack_rss[i]);
      json_end_object(&j);
    }
    json_end_array(&j);
    json_end_object(&j);
  } else {
    json_null(&j);
  }
  const bench_sample* warm = median_of(run, BENCH_CACHE_WARM);
  json_key(&j, "disk_read_cold_ms");
  if (run->disk_read_cold_ms > 0) json_double(&j, run->disk_read_cold_ms);
  else json_null(&j);
  json_key(&j, "open_us");
  if (warm) json_double(&j, warm->open_ms * 1e3);
  else json_null(&j);
  PER_VARIANT("open_ms", open_ms, json_double);
  PER_VARIANT("prefetch_ms", prefetch_ms, json_double);
  PER_VARIANT("load_ms", load_ms, json_double);
  PER_VARIANT("size_ms", size_ms, json_double);
  PER_VARIANT("create_ms", create_ms, json_double);
  PER_VARIANT("first_inference_ms", first_inference_ms, json_double);
  PER_VARIANT("ttfi_ms", ttfi_ms, json_double);
  PER_VARIANT("load_ttfi_ms", load_ttfi_ms, json_double);
  PER_VARIANT("open_major_faults", open_major_faults, json_uint);
  PER_VARIANT("open_read_calls", open_read_calls, json_uint);
  PER_VARIANT("open_storage_bytes", open_storage_bytes, json_uint);
  PER_VARIANT("model_resident_bytes", model_resident_bytes, json_uint);
  PER_VARIANT("rss_bytes", rss_bytes, json_uint);
  PER_VARIANT("private_dirty_bytes", private_dirty_bytes, json_uint);
  PER_VARIANT("peak_rss_bytes", peak_rss_bytes, json_uint);
  PER_VARIANT("major_faults", major_faults, json_uint);
  PER_VARIANT("minor_faults", minor_faults, json_uint);
  PER_VARIANT("lookups", lookups, json_uint);
  PER_VARIANT("hits", hits, json_uint);
  PER_VARIANT("misses", misses, json_uint);
  json_key(&j, "unlike_app"); json_array(&j);
  for (int i = 0; i < BENCH_UNLIKE_APP_OPTIONS; i++) {
    if (run->unlike_app & kBenchUnlikeApp[i].bit) json_string(&j, kBenchUnlikeApp[i].json_name);
  }
  json_end_array(&j);
  json_key(&j, "load_ttfi_paired"); json_object(&j);
  for (size_t i = 0; i < sizeof kPairs / sizeof kPairs[0]; i++) {
    bench_paired p;
    if (bench_paired_load_ttfi(run, kPairs[i].variant, kPairs[i].base, &p) != 0) continue;
    json_key(&j, kBenchVariantNames[kPairs[i].variant]); json_object(&j);
    json_key(&j, "base"); json_string(&j, kBenchVariantNames[kPairs[i].base]);
    json_key(&j, "pairs"); json_uint(&j, p.pairs);
    json_key(&j, "median_ms"); json_double(&j, p.median_ms);
    json_key(&j, "low_ms"); json_double(&j, p.low_ms);
    json_key(&j, "high_ms"); json_double(&j, p.high_ms);
    json_key(&j, "coverage"); json_double(&j, p.coverage);
    json_end_object(&j);
  }
  json_end_object(&j);
  json_key(&j, "page_cache"); json_object(&j);
  for (int v = 0; v < BENCH_VARIANT_COUNT; v++) {
    const bench_variant_result* vr = &run->v[v];
    if (!vr->enabled || !vr->count) continue;
    json_key(&j, kBenchVariantNames[v]); json_object(&j);
    json_key(&j, "file_bytes"); json_uint(&j, vr->file_bytes);
    json_key(&j, "resident_bytes"); json_int(&j, vr->resident_worst);
    if (bench_variant_is_cold((bench_variant)v)) {
      json_key(&j, "dropped"); json_bool(&j, vr->resident_worst * 20 <= (int64_t)vr->file_bytes);
    }
    json_end_object(&j);
  }
  json_end_object(&j);
  json_key(&j, "samples"); json_object(&j);
  for (int v = 0; v < BENCH_VARIANT_COUNT; v++) {
    const bench_variant_result* vr = &run->v[v];
    if (!vr->enabled || !vr->count) continue;
    json_key(&j, kBenchVariantNames[v]); json_array(&j);
    for (size_t i = 0; i < vr->count; i++) sample_json(&j, &vr->samples[i]);
    json_end_array(&j);
  }
  json_end_object(&j);
  bench_target t[BENCH_MAX_TARGETS];
  size_t n = bench_targets(run, t);
  json_key(&j, "targets"); json_array(&j);
  for (size_t i = 0; i < n; i++) {
    json_object(&j);
    json_key(&j, "name"); json_string(&j, t[i].name);
    json_key(&j, "value");
    if (t[i].known) json_double(&j, t[i].value);
    else json_null(&j);
    json_key(&j, "limit"); json_double(&j, t[i].limit);
    json_key(&j, "met");
    if (t[i].known) json_bool(&j, t[i].value <= t[i].limit);
    else json_null(&j);
    json_end_object(&j);
  }
  json_end_array(&j);
  json_key(&j, "outputs_identical"); json_bool(&j, strstr(run->problem, "outputs differ") == NULL);
  json_key(&j, "problem"); json_string(&j, run->problem[0] ? run->problem : NULL);
  json_end_object(&j);
  json_finish(&j);
}
