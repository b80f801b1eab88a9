/* xpack bench: what the parent (cmd_bench.c), the measuring child (cmd_bench_child.c), the process and
 * page-cache helpers (cmd_bench_proc.c), the ideal provider (cmd_bench_ideal.c), the child-result reader
 * (cmd_bench_sample.c), the paired differences (cmd_bench_paired.c) and the report (cmd_bench_report.c) share.
 *
 * One sample is one variant measured once in a fresh process: the parent re-executes /proc/self/exe as
 * `xpack bench --child VARIANT ...`, reads the child's flat JSON object from a pipe and takes medians. */
#ifndef XPACK_TOOLS_CMD_BENCH_H
#define XPACK_TOOLS_CMD_BENCH_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/resource.h>
#include <xnnpack.h>

#include "page_cache.h" /* bench/: files in the page cache */

typedef enum bench_variant {
  BENCH_NOCACHE,      /* no provider: XNNPACK packs every weight */
  BENCH_CACHE_WARM,   /* the loader, cache file in the page cache */
  BENCH_CACHE_COLD,   /* the loader after the cache and model files were dropped from the page cache */
  BENCH_NOCACHE_COLD, /* no provider after the model files were dropped from the page cache */
  BENCH_IDEAL,        /* an in-process provider holding every packed weight in heap, filled beforehand */
  BENCH_CACHE_COLD_SEQ,      /* opt-in (--readahead): cache_cold with the mapping advised MADV_SEQUENTIAL */
  BENCH_CACHE_COLD_WILLNEED, /* opt-in (--readahead): cache_cold with the mapping advised MADV_WILLNEED */
  BENCH_VARIANT_COUNT
} bench_variant;

extern const char* const kBenchVariantNames[BENCH_VARIANT_COUNT];
int bench_variant_of(const char* name); /* -1 when unknown */
int bench_variant_is_cold(bench_variant v);
int bench_variant_uses_cache(bench_variant v);
/* Where the cache variants open the cache unlike an app following docs/INTEGRATION.md: they serve what it
 * skips (--serve-small: no XPACK_OPEN_SKIP_SMALL; --serve-cold: no XPACK_OPEN_SKIP_COLD), or probe each family
 * at its first look-up instead of on a thread from open on (--probe-late: no XPACK_OPEN_PROBE_EARLY), or do not
 * call xpack_cache_prefetch after the open (--no-prefetch). */
#define BENCH_SERVE_SMALL 0x1u
#define BENCH_SERVE_COLD 0x2u
#define BENCH_PROBE_LATE 0x4u
#define BENCH_NO_PREFETCH 0x8u
/* Each of the options above: its bit, its command-line option (the same for the parent and its children), its
 * name in the JSON's `unlike_app` and what the text report adds after the option ("" for nothing). */
typedef struct bench_unlike_app_option {
  unsigned bit;
  const char* option;
  const char* json_name;
  const char* text_note;
} bench_unlike_app_option;
/* The one list of them, X(bit, option, json_name, text_note): kBenchUnlikeApp is made of it, and so are the
 * entries the parent's and the child's command-line option lists give them (BENCH_UNLIKE_APP_CLI_OPTION). */
#define BENCH_UNLIKE_APP_LIST(X)                                                       \
  X(BENCH_SERVE_SMALL, "--serve-small", "serve_small", "")                             \
  X(BENCH_SERVE_COLD, "--serve-cold", "serve_cold", "")                                \
  X(BENCH_PROBE_LATE, "--probe-late", "probe_late", " (no XPACK_OPEN_PROBE_EARLY)")    \
  X(BENCH_NO_PREFETCH, "--no-prefetch", "no_prefetch", " (no xpack_cache_prefetch)")
#define BENCH_UNLIKE_APP_CLI_OPTION(bit, option, json_name, text_note) {option, 0, 0, 0},
#define BENCH_UNLIKE_APP_OPTIONS 4
extern const bench_unlike_app_option kBenchUnlikeApp[BENCH_UNLIKE_APP_OPTIONS];
/* The bit of a command-line option of kBenchUnlikeApp, or 0 for any other argument. */
unsigned bench_unlike_app_bit(const char* arg);
/* xpack_cache_open flags for a variant: the app's, less what `unlike_app` (BENCH_SERVE_*, BENCH_PROBE_LATE)
 * leaves out. */
unsigned bench_variant_open_flags(bench_variant v, unsigned unlike_app);

/* What a child measured (times in ms, sizes in bytes). */
typedef struct bench_sample {
  double open_ms;            /* xpack_cache_open (0 without a cache) */
  double load_ms;            /* programs opened, delegates replayed into subgraphs (weights bound), not timed in ttfi */
  double size_ms;            /* of load_ms: asking XNNPACK the size it reads for each weight (xpack_replay_size_weights) */
  double create_ms;          /* sum of xnn_create_runtime_v4 over every XNNPACK delegate */
  double first_inference_ms; /* sum of the first reshape + setup + invoke of every runtime */
  double prefetch_ms;        /* xpack_cache_prefetch, right after open (0 without a cache) */
  double ttfi_ms;            /* open + prefetch + create + first inference */
  double fill_ms;            /* ideal only: filling the in-heap provider beforehand (not in ttfi) */
  double load_ttfi_ms;       /* load + ttfi: what an app waits for from opening its files to its first output */
  uint64_t rss_bytes, private_dirty_bytes; /* /proc/self/smaps_rollup after the first inference */
  uint64_t peak_rss_bytes;                 /* VmHWM of the child (its own address space, from exec on) */
  uint64_t major_faults, minor_faults;     /* getrusage of the child */
  uint64_t delegates, failed, lookups, hits, misses, heap_fallback_bytes;
  /* What the cache's open read from storage: major faults, read(2) calls and bytes the kernel fetched from
   * the device (/proc/self/io read_bytes) between the start and the end of xpack_cache_open. */
  uint64_t open_major_faults, open_read_calls, open_storage_bytes;
  /* Bytes of the model files in the page cache after the first inference (mincore). In a cold variant
   * the files were dropped before the child started: this is what the child read of them. */
  uint64_t model_resident_bytes;
  uint64_t open_flags; /* the XPACK_OPEN_* flags the cache was opened with (0 without a cache) */
  char* output_xxh3; /* every output's XXH3-64, in delegate order, space-separated (malloc'd) */
  char* error;       /* the first failure, or NULL (malloc'd) */
  char* cache_refused; /* why the cache was refused whole (xpack_cache_refusal), or NULL (malloc'd) */
} bench_sample;

/* Parses a child's flat JSON object into *out (zeroed first). Returns 0, or -1 with a message in why. */
int bench_sample_parse(const char* text, bench_sample* out, char* why, size_t why_size);
void bench_sample_free(bench_sample* s);
/* Field by field median of n samples (strings left NULL). */
void bench_sample_median(const bench_sample* samples, size_t n, bench_sample* out);

/* ---- processes and the page cache (cmd_bench_proc.c) ---- */

typedef struct bench_child_run {
  int exit_code;       /* exit status, or 128 + signal */
  double wall_ms;      /* fork to reaped */
  struct rusage usage; /* from wait4: ru_maxrss in KiB */
  char* out;           /* everything the child wrote to stdout (malloc'd, NUL-terminated) */
} bench_child_run;

/* Runs /proc/self/exe with argv (argv[0] included, NULL-terminated), capturing stdout; stderr passes through.
 * Returns 0, or -1 when the process could not be started (message printed). */
int bench_spawn(char* const* argv, bench_child_run* out);

/* The child bench_spawn is waiting for, or 0: for a signal handler that must end it before removing what it
 * writes into (cmd_bench_tmp.c). */
extern volatile pid_t g_bench_running_child;

/* The signals whose handler removes the temporary folder; bench_spawn holds them off from its fork until
 * g_bench_running_child names the child, so that the handler never misses one. */
#define BENCH_SIGNAL_COUNT 4
extern const int bench_signals[BENCH_SIGNAL_COUNT];

/* This run's temporary folder, $TMPDIR/xpack-bench-XXXXXX (cmd_bench_tmp.c), locked while the bench runs;
 * first removes the folders of benches that were killed (their lock free). Fills dir and cache (its
 * bench.xpc). Returns 0, or -1 with the message printed. announce: say where it packs (on stderr). */
int bench_tmp_create(char* dir, size_t dir_size, char* cache, size_t cache_size, int announce);

/* Removes the folder and its cache (keep_cache: leaves the cache, and the folder without its lock, so that no
 * later bench removes it). Nothing when there is no folder. */
void bench_tmp_remove(int keep_cache);

/* Has SIGINT, SIGTERM, SIGHUP and SIGQUIT end the running child, remove the folder, then end the process. */
void bench_tmp_remove_on_signals(void);

/* This process's I/O so far: major faults (getrusage), read(2)-family calls and bytes fetched from storage
 * (/proc/self/io syscr and read_bytes; 0 where there is no /proc). */
typedef struct bench_io {
  uint64_t major_faults, read_calls, storage_bytes;
} bench_io;
void bench_read_io(bench_io* out);

/* Rss and Private_Dirty of this process from /proc/self/smaps_rollup, VmHWM from /proc/self/status. */
void bench_read_memory(uint64_t* rss, uint64_t* private_dirty, uint64_t* peak_rss);

/* ---- the child (cmd_bench_child.c) ---- */

/* `xpack bench --child VARIANT [--cache FILE] MODEL.pte ... [--data W.ptd ...]`: measures one variant and
 * writes one flat JSON object to stdout. */
int bench_child_main(int argc, char** argv);

/* ---- the ideal provider (cmd_bench_ideal.c) ---- */

typedef struct bench_ideal bench_ideal;
/* A provider keyed by (seed, kernel pointer, bias pointer) that answers from packed weights held in heap
 * memory: the floor of what any weights cache can do in-process. What it is not given beforehand, XNNPACK
 * packs and it keeps (counted as inserts). NULL when out of memory. */
bench_ideal* bench_ideal_create(void);
struct xnn_weights_cache_provider* bench_ideal_provider(bench_ideal* ideal);
/* Filling it: first the size XNNPACK reads for every key (bench_ideal_expect, an xpack_size_fn whose context
 * is the ideal: xpack_replay_size_weights), as the loader is told them; then a heap block of n bytes (NULL
 * when out of memory), kept for the provider's life by bench_ideal_keep, which returns its offset (SIZE_MAX
 * on failure); bench_ideal_add answers the key with that offset when the region's size is the key's:
 * 0 added, 1 the key already had an answer, 2 no size or another size (left to miss, as the loader refuses it). */
void bench_ideal_expect(void* ideal, const struct xnn_weights_cache_look_up_key* key, size_t size);
int bench_ideal_expect_failed(const bench_ideal* ideal);
void* bench_ideal_reserve(bench_ideal* ideal, size_t n);
size_t bench_ideal_keep(bench_ideal* ideal, void* block);
int bench_ideal_add(bench_ideal* ideal, uint32_t seed, const void* kernel, const void* bias, size_t size,
                    size_t offset);
void bench_ideal_counts(const bench_ideal* ideal, uint64_t* lookups, uint64_t* hits, uint64_t* inserts);
void bench_ideal_destroy(bench_ideal* ideal);

/* ---- filling it from a cache file (cmd_bench_ideal_fill.c) ---- */

/* The weights the ideal's subgraphs use, collected while they are defined: bench_ideal_bind is an
 * xpack_bind_fn whose context is a bench_ideal_bindings (zero-initialised; freed by
 * bench_ideal_bindings_free). Allocation failures are remembered and reported by the fill. */
typedef struct bench_ideal_bindings {
  struct bench_ideal_binding* items;
  size_t count, capacity;
  int out_of_memory;
} bench_ideal_bindings;
void bench_ideal_bind(void* bindings, const void* raw, const char* identity, size_t identity_len);
void bench_ideal_bindings_free(bench_ideal_bindings* bindings);

/* Copies into the ideal every region of the cache file at cache_path that an entry keys to bound weights
 * (read with pread, so the regions are never mapped), answering each such entry's key by pointer. Returns 0,
 * or -1 with why filled (an unreadable or invalid file, out of memory). */
int bench_ideal_fill(bench_ideal* ideal, bench_ideal_bindings* bindings, const char* cache_path, char* why,
                     size_t why_size);

/* ---- the parent's results and the report (cmd_bench.c, cmd_bench_report.c) ---- */

#define BENCH_MAX_REPS 101

typedef struct bench_variant_result {
  int enabled;
  size_t count; /* samples measured */
  bench_sample samples[BENCH_MAX_REPS];
  bench_sample median;
  uint64_t file_bytes;    /* bytes of the files dropped (cold) or checked warm (warm) before each child */
  int64_t resident_worst; /* cold: most bytes still resident right after the drop; warm: fewest resident */
} bench_variant_result;

typedef struct bench_run {
  char** models;
  size_t model_count;
  char** data;
  size_t data_count;
  int reps;
  unsigned unlike_app;              /* BENCH_*: --serve-small, --serve-cold, --probe-late, --no-prefetch */
  const char* cache_path;
  int cache_kept; /* --keep of a cache the bench packed: the report names it (cache_path), the folder stays */
  int packed_here;                  /* the cache was packed by this run (pack figures are known) */
  int pack_runs;                    /* `xpack pack` runs, one per repetition */
  double pack_wall[BENCH_MAX_REPS]; /* each in a child: fork to reaped, ms */
  uint64_t pack_rss[BENCH_MAX_REPS];/* each one's ru_maxrss, bytes */
  double pack_wall_ms;              /* medians of those */
  double disk_write[BENCH_MAX_REPS];/* after each: writing a file of the cache's size beside it (cmd_bench_disk.c) */
  double disk_write_ms;             /* median; < 0 when it could not be measured */
  double disk_read_cold[BENCH_MAX_REPS]; /* each repetition: reading the cache file through, cold */
  int disk_read_runs;
  double disk_read_cold_ms;         /* median; < 0 when it could not be measured */
  uint64_t pack_peak_rss_bytes, pack_peak_rss_max_bytes;
  uint64_t model_bytes;             /* .pte and .ptd files */
  uint64_t cache_file_bytes, packed_bytes, referenced_bytes, entries, largest_packed_bytes;
  bench_variant_result v[BENCH_VARIANT_COUNT];
  char problem[512]; /* the first inconsistency (a child failed, outputs differ); empty when none */
} bench_run;

/* Milliseconds to write `bytes` into a new file in dir as pack writes a cache, fsync included (the file is
 * removed); -1 when that fails. */
double bench_disk_write_ms(const char* dir, uint64_t bytes);
/* Reading the file at path through after dropping it from the page cache; -1 when it cannot be measured. */
double bench_disk_read_cold_ms(const char* path);

typedef struct bench_target {
  const char* name;
  double value, limit; /* met when value <= limit */
  int known;           /* 0 when a variant it needs was not measured */
} bench_target;

/* load + TTFI of `variant` minus that of `base`, repetition by repetition (cmd_bench_paired.c): the median of
 * the differences and a distribution-free interval for it (the sign test's order statistics), whose exact
 * coverage is at least 95 % from 6 pairs on and 1 - 2^(1-pairs) under that. An interval wholly above 0 says the
 * variant was slower in this run beyond its spread; one that holds 0 says the run cannot tell. */
typedef struct bench_paired {
  size_t pairs;
  double median_ms, low_ms, high_ms, coverage;
} bench_paired;
/* 0, or -1 when either variant was not measured or their counts differ (*out zeroed). */
int bench_paired_load_ttfi(const bench_run* run, bench_variant variant, bench_variant base, bench_paired* out);

#define BENCH_MAX_TARGETS 16
size_t bench_targets(const bench_run* run, bench_target* out);
void bench_report_text(const bench_run* run, FILE* out);
void bench_report_json(const bench_run* run, FILE* out);

#endif
