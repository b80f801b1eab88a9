/* libFuzzer harness: arbitrary bytes as a cache file, through the loader as an app drives it (the part of
 * xpack that ships inside apps): the bytes in a memfd, xpack_cache_open_fd (mapped, and read into memory), then
 * what XNNPACK and ExecuTorch's adapter do with an open cache: every entry's identities bound to pointers of
 * their own with the size of their region, each key looked up through the weights-cache provider, a miss
 * answered as XNNPACK answers it (reserve_space, packing, look_up_or_insert, sometimes without a look-up
 * first), each answer's bytes read through offset_to_addr, the whole round again (the kept weights), an
 * unbound key; then the statistics, every family (running the probes on the real XNNPACK), the program check,
 * and the chooser over two candidates. fuzz_cache covers the view beneath; this covers what the loader
 * builds on it.
 *
 * Beyond ASan and UBSan, the harness aborts when an answer breaks what XNNPACK relies on: a file's answer
 * must hold the key's bound size inside the file, at XNNPACK's alignment (a mapped file's last page would
 * hide an over-read from ASan; these checks do not), and an insert's answer must hold the bytes inserted.
 *
 * Each input runs as given and "repaired" (cache_repair.c: every checksum recomputed), so that mutations reach
 * the code behind the checksums. The seeds are caches packed by the main build, whose XNNPACK this links, so
 * that their entries are served and the serving path is reached too. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <xnnpack.h>

#include "cache_repair.h"
#include "loader/cache_state.h"
#include "xpack_loader.h"
#include "xpc_format.h"

/* The entries a run binds and looks up: enough for every seed's, bounded for speed. */
#define MAX_KEYS 64
/* The most a simulated packing reserves: a crafted region size must not make the harness allocate gigabytes. */
#define MAX_PACKED (1u << 20)

static volatile uint64_t g_sink;
static int g_verbose; /* FUZZ_LOADER_VERBOSE=1: what each open served, to check that the seeds reach the serving path */
/* Two addresses per key (kernel, bias), as the raw weights of a program would be. */
static uint8_t g_raw[2 * MAX_KEYS];

static uint64_t touch(const uint8_t* p, uint64_t n) {
  uint64_t acc = 0;
  for (uint64_t i = 0; i < n; i++) acc = acc * 31 + p[i];
  return acc;
}

/* What one key is: its XNNPACK key and the size bound to it. */
typedef struct fuzz_key {
  struct xnn_weights_cache_look_up_key key;
  size_t size;
  const uint8_t* region_bytes; /* the entry's region when it lies in the file, for a "packing" that matches */
} fuzz_key;

/* Reads an answer's bytes; a file's answer must be inside the file, at XNNPACK's alignment. */
static void use_answer(xpack_cache* c, size_t offset, size_t size) {
  struct xnn_weights_cache_provider* p = xpack_cache_provider(c);
  const uint8_t* addr = p->offset_to_addr(p->context, offset);
  if (addr == NULL) abort(); /* an offset the provider gave must map */
  if (offset < c->size) {
    if (addr != c->base + offset || size > c->size - offset) abort();
    if ((uintptr_t)addr % xpack_xnn_alignment() != 0) abort();
  }
  g_sink += touch(addr, size);
}

/* XNNPACK's side of a miss: space reserved, "packed" (the file's bytes when `matching`, so the provider's
 * compare-after-packing path serves the file; else other bytes), then inserted. Whatever answers the insert (the
 * heap copy kept, an earlier identical one, or the file's region when it holds the same bytes) must hold exactly
 * the bytes packed: an answer from the wrong place (a heap offset read as a file offset, as on 32-bit targets
 * before their offsets were numbered from the file's size) would not. */
static void pack_and_insert(xpack_cache* c, const fuzz_key* k, int matching) {
  struct xnn_weights_cache_provider* p = xpack_cache_provider(c);
  const size_t n = k->size == 0 ? 1 : k->size;
  uint8_t* space = p->reserve_space(p->context, n);
  if (space == NULL) return;
  if (matching && k->region_bytes != NULL && k->size != 0) memcpy(space, k->region_bytes, k->size);
  else memset(space, 0xA5, n);
  uint8_t* packed = malloc(n);
  if (packed == NULL) abort();
  memcpy(packed, space, n); /* the provider may release space */
  const size_t offset = p->look_up_or_insert(p->context, &k->key, space, n);
  if (offset != SIZE_MAX) {
    use_answer(c, offset, n);
    if (memcmp(p->offset_to_addr(p->context, offset), packed, n) != 0) abort();
  }
  free(packed);
}

static size_t bind_entries(xpack_cache* c, fuzz_key keys[MAX_KEYS]) {
  const xp_view* v = &c->view;
  size_t count = 0;
  for (uint64_t i = 0; i < v->entries.count && count < MAX_KEYS; i++) {
    xp_entry e;
    xp_view_entry(v, i, &e);
    const char *kernel = NULL, *bias = NULL;
    uint32_t kernel_len = 0, bias_len = 0;
    if (xp_view_string(v, e.kernel, &kernel, &kernel_len) != 0) continue;
    if (e.bias != XPC_NONE && xp_view_string(v, e.bias, &bias, &bias_len) != 0) continue;
    fuzz_key* k = &keys[count];
    k->key = (struct xnn_weights_cache_look_up_key){.seed = e.seed, .kernel = &g_raw[2 * count],
                                                    .bias = bias != NULL ? &g_raw[2 * count + 1] : NULL};
    k->size = 64;
    k->region_bytes = NULL;
    if (e.region < v->regions.count) {
      xp_region r;
      xp_view_region(v, e.region, &r);
      if (xp_region_is_sound(v, &r)) {
        k->size = r.size <= MAX_PACKED ? (size_t)r.size : MAX_PACKED;
        if (r.size <= MAX_PACKED) k->region_bytes = v->base + r.offset;
      }
    }
    xpack_error err;
    if (xpack_cache_bind(c, k->key.kernel, kernel, kernel_len, &err) != XPACK_OK) continue;
    if (bias != NULL && xpack_cache_bind(c, k->key.bias, bias, bias_len, &err) != XPACK_OK) continue;
    /* Every other key is left unsized: served only under XPACK_OPEN_TRUST_SIZES. */
    if (count % 3 != 2 && xpack_cache_bind_size(c, &k->key, k->size, &err) != XPACK_OK) abort();
    count++;
  }
  return count;
}

static void drive(xpack_cache* c, const uint8_t* data, size_t size) {
  g_sink += (uintptr_t)xpack_cache_refusal(c) + xpack_cache_entry_count(c) + xpack_cache_file_size(c);
  struct xnn_weights_cache_provider* p = xpack_cache_provider(c);
  if (p != NULL) {
    static fuzz_key keys[MAX_KEYS];
    const size_t count = bind_entries(c, keys);
    for (int round = 0; round < 2; round++) {
      for (size_t i = 0; i < count; i++) {
        /* One key in four is inserted without a look-up first, as XNNPACK does for some operators. */
        if ((i + round) % 4 == 3) {
          pack_and_insert(c, &keys[i], i % 2);
          continue;
        }
        const size_t offset = p->look_up(p->context, &keys[i].key);
        if (offset != SIZE_MAX) use_answer(c, offset, keys[i].size);
        else pack_and_insert(c, &keys[i], 0);
      }
    }
    const struct xnn_weights_cache_look_up_key unbound = {.seed = 7, .kernel = data, .bias = NULL};
    if (p->look_up(p->context, &unbound) == SIZE_MAX) {
      const fuzz_key k = {.key = unbound, .size = 32, .region_bytes = NULL};
      pack_and_insert(c, &k, 0);
    }
    g_sink += (uint64_t)p->is_finalized(p->context);
  }
  xpack_stats stats;
  xpack_cache_stats(c, &stats);
  g_sink += stats.lookups + stats.hits + stats.misses;
  if (g_verbose) {
    const char* refusal = xpack_cache_refusal(c);
    fprintf(stderr, "fuzz_loader: %llu entries, %llu look-ups, %llu hits (%llu after packing), %llu misses%s%s\n",
            (unsigned long long)xpack_cache_entry_count(c), (unsigned long long)stats.lookups,
            (unsigned long long)stats.hits, (unsigned long long)stats.hits_after_packing,
            (unsigned long long)stats.misses, refusal ? "; refused: " : "", refusal ? refusal : "");
  }
  const uint32_t families = xpack_cache_family_count(c);
  for (uint32_t i = 0; i < families && i < 16; i++) {
    xpack_cache_family_info info;
    xpack_error err;
    if (xpack_cache_family(c, i, &info, &err) == XPACK_OK) {
      g_sink += strlen(info.name) + info.hits + (info.reason != NULL ? strlen(info.reason) : 0);
    }
  }
  xpack_error err;
  g_sink += (uint64_t)xpack_cache_check_program(c, data, size, &err) + xpack_cache_entries_served(c);
  xpack_cache_unbind_all(c);
}

static int as_memfd(const uint8_t* data, size_t size) {
  const int fd = memfd_create("fuzz_loader", MFD_CLOEXEC);
  if (fd < 0) abort();
  if (size > 0 && write(fd, data, size) != (ssize_t)size) abort();
  return fd;
}

static void open_and_drive(const uint8_t* data, size_t size) {
  const int fd = as_memfd(data, size);
  static const unsigned kFlags[] = {0, XPACK_OPEN_READ | XPACK_OPEN_TRUST_SIZES,
                                    XPACK_OPEN_PROBE_EARLY | XPACK_OPEN_CHECK_REGIONS};
  for (size_t f = 0; f < sizeof kFlags / sizeof kFlags[0]; f++) {
    xpack_cache* c = NULL;
    xpack_error err;
    if (xpack_cache_open_fd(fd, 0, size, "fuzz.xpc", kFlags[f], NULL, &c, &err) == XPACK_OK) {
      drive(c, data, size);
      xpack_cache_close(c);
    } else {
      g_sink += strlen(err.message);
      if (c != NULL) abort(); /* *out is NULL on every failure (xpack_status.h) */
    }
  }
  /* The chooser over the file and the file again, preferring caches built from `data` as a program. */
  const xpack_cache_range ranges[2] = {{fd, 0, size, "first.xpc"}, {fd, 0, size, "second.xpc"}};
  const xpack_open_limits limits = {.program = data, .program_size = size};
  xpack_cache_candidate candidates[2];
  xpack_cache* best = NULL;
  size_t chosen = 0;
  xpack_error err;
  if (xpack_cache_open_best_fd(ranges, 2, 0, &limits, &best, &chosen, candidates, &err) == XPACK_OK) {
    if (chosen >= 2) abort();
    drive(best, data, size);
    xpack_cache_close(best);
  }
  close(fd);
}

int LLVMFuzzerInitialize(int* argc, char*** argv) {
  (void)argc, (void)argv;
  g_verbose = getenv("FUZZ_LOADER_VERBOSE") != NULL;
  xpack_error err;
  if (xpack_initialize_xnnpack(&err) != XPACK_OK) {
    fprintf(stderr, "fuzz_loader: %s\n", err.message);
    abort();
  }
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  xp_fuzz_as_given_and_repaired(data, size, open_and_drive);
  return 0;
}
