/* xpwc-run: runs every XNNPACK delegate of ExecuTorch programs with a weights cache that behaves like
 * ExecuTorch's XNNWeightsCache with `packed_cache_path` set to an exported file, and without any cache,
 * and compares: how many weights XNNPACK still packs, and the outputs bit for bit.
 *
 *   xpwc-run MODEL.pte [MODEL2.pte ...] [--data W.ptd ...] --xpwc FILE
 *
 * The emulated cache follows ExecuTorch's backends/xnnpack/runtime/XNNWeightsCache.cpp (facts, not code):
 * the trailer is read as its load_packed_cache does (any fault: the file is not used, which this tool
 * reports as a failure); only constants with a named key get a name; a look-up's name is the kernel's name
 * followed by the bias's name when the bias has one; a record is found by name, the last of equal names
 * winning, and hits only with an equal seed; after packing, look_up_or_insert compares XNNPACK's bytes
 * with the record's. The names come from xpack's identities the way ExecuTorch's exporter makes keys:
 * content keys as they are, module paths without xpack's "#xxh3-128:" suffix, "xpack:..." unnamed.
 * Exit 0 when every output is identical and XNNPACK packed nothing it looked up; 1 otherwise. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xnnpack.h>

#include "xpack_pipeline.h"

typedef struct record {
  char* name;
  size_t name_len;
  void* data;
  size_t size;
  uint32_t seed;
  int from_file;
} record;

typedef struct binding {
  const void* raw;
  char* name;
  size_t name_len;
} binding;

typedef struct et_cache {
  uint8_t* map;
  size_t map_size;
  record* records;
  size_t count, cap;
  binding* bindings;
  size_t binding_count, binding_cap;
  uint64_t lookups, hits, hits_after_packing, packed, heap_bytes;
  bool finalized; /* ExecuTorch: false from initialize_for_runtime until finalize_for_runtime */
} et_cache;

static uint64_t le(const uint8_t* p, int n) {
  uint64_t v = 0;
  for (int i = n - 1; i >= 0; i--) v = (v << 8) | p[i];
  return v;
}

static record* add_record(et_cache* c) {
  if (c->count == c->cap) {
    size_t cap = c->cap ? 2 * c->cap : 64;
    record* r = realloc(c->records, cap * sizeof *r);
    if (r == NULL) abort();
    c->records = r;
    c->cap = cap;
  }
  memset(&c->records[c->count], 0, sizeof(record));
  return &c->records[c->count++];
}

/* Frees what the cache owns: names, the weights XNNPACK packed into it, the bindings, the file's mapping. */
static void release(et_cache* c) {
  for (size_t i = 0; i < c->count; i++) {
    free(c->records[i].name);
    if (!c->records[i].from_file) free(c->records[i].data);
  }
  free(c->records);
  for (size_t i = 0; i < c->binding_count; i++) free(c->bindings[i].name);
  free(c->bindings);
  if (c->map != NULL && c->map != MAP_FAILED) munmap(c->map, c->map_size);
  *c = (et_cache){0};
}

/* ExecuTorch's load: footer, magic, version, index_start, then every record inside the data. */
static int load(et_cache* c, const char* path) {
  int fd = open(path, O_RDONLY);
  struct stat st;
  if (fd < 0 || fstat(fd, &st) != 0 || st.st_size < 20) {
    fprintf(stderr, "xpwc-run: %s: cannot open, or shorter than the footer\n", path);
    if (fd >= 0) close(fd);
    return 1;
  }
  size_t size = (size_t)st.st_size;
  c->map = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0);
  close(fd);
  if (c->map == MAP_FAILED) return 1;
  c->map_size = size;
  const uint8_t* f = c->map + size - 20;
  uint64_t index_start = le(f, 8);
  uint32_t n = (uint32_t)le(f + 8, 4);
  if (le(f + 12, 4) != 0x58505743u || le(f + 16, 4) != 2 || index_start >= size - 20) {
    fprintf(stderr, "xpwc-run: %s: ExecuTorch would not load this file (footer)\n", path);
    return 1;
  }
  const uint8_t* p = c->map + index_start;
  const uint8_t* end = c->map + size - 20;
  for (uint32_t i = 0; i < n; i++) {
    if (end - p < 4) return 1;
    uint32_t len = (uint32_t)le(p, 4);
    if ((size_t)(end - p - 4) < (size_t)len + 20) {
      fprintf(stderr, "xpwc-run: %s: record %u runs past the footer\n", path, i);
      return 1;
    }
    uint64_t offset = le(p + 4 + len, 8), bytes = le(p + 12 + len, 8);
    if (offset >= index_start || bytes > index_start - offset) {
      fprintf(stderr, "xpwc-run: %s: record %u lies outside the data\n", path, i);
      return 1;
    }
    record* r = NULL;
    for (size_t k = 0; k < c->count; k++) { /* equal names: the last one read wins */
      if (c->records[k].name_len == len && memcmp(c->records[k].name, p + 4, len) == 0) r = &c->records[k];
    }
    if (r == NULL) {
      r = add_record(c);
      r->name = malloc(len + 1);
      memcpy(r->name, p + 4, len);
      r->name_len = len;
    }
    r->data = c->map + offset;
    r->size = (size_t)bytes;
    r->seed = (uint32_t)le(p + 20 + len, 4);
    r->from_file = 1;
    p += 4 + len + 20;
  }
  return 0;
}

/* xpack identity -> the named key ExecuTorch would pass; NULL for constants without one. */
static char* name_of(const char* id, size_t len, size_t* name_len) {
  static const char sep[] = "#xxh3-128:";
  static const char packing[] = "|xnn:"; /* a weight's packing suffix: xpack's, not ExecuTorch's */
  if (len >= 6 && memcmp(id, "xpack:", 6) == 0) return NULL;
  if (len > sizeof packing - 1 + 32 && memcmp(id + len - 32 - (sizeof packing - 1), packing, sizeof packing - 1) == 0) {
    len -= sizeof packing - 1 + 32;
  }
  size_t digits = 0;
  while (digits < len && id[len - 1 - digits] >= '0' && id[len - 1 - digits] <= '9') digits++;
  size_t suffix = sizeof sep - 1 + 32 + 1 + digits;
  size_t keep = len;
  if (digits > 0 && len >= suffix && memcmp(id + len - suffix, sep, sizeof sep - 1) == 0 &&
      id[len - digits - 1] == ':') {
    keep = len - suffix;
  }
  char* s = malloc(keep + 1);
  memcpy(s, id, keep);
  s[keep] = 0;
  *name_len = keep;
  return s;
}

static void bind(void* context, const void* raw, const char* identity, size_t len) {
  et_cache* c = context;
  c->finalized = false; /* defining a subgraph: ExecuTorch has called initialize_for_runtime */
  size_t name_len;
  char* name = name_of(identity, len, &name_len);
  if (name == NULL) return;
  if (c->binding_count == c->binding_cap) {
    c->binding_cap = c->binding_cap ? 2 * c->binding_cap : 64;
    c->bindings = realloc(c->bindings, c->binding_cap * sizeof *c->bindings);
    if (c->bindings == NULL) abort();
  }
  c->bindings[c->binding_count++] = (binding){raw, name, name_len};
}

/* Right after xnn_create_runtime_v4, where ExecuTorch calls finalize_for_runtime: the raw weights are freed
 * and the cache is finalized (XNNPACK refuses to reshape a runtime whose cache is not). */
static void unbind(void* context) {
  et_cache* c = context;
  c->finalized = true;
  for (size_t i = 0; i < c->binding_count; i++) free(c->bindings[i].name);
  c->binding_count = 0;
}

static const binding* find_binding(const et_cache* c, const void* raw) {
  for (size_t i = c->binding_count; i-- > 0;) {
    if (c->bindings[i].raw == raw) return &c->bindings[i];
  }
  return NULL;
}

/* The look-up name, or 0 when the kernel has no name (ExecuTorch then never finds it). */
static int key_name(const et_cache* c, const struct xnn_weights_cache_look_up_key* key, char* out, size_t cap,
                    size_t* len) {
  const binding* k = find_binding(c, key->kernel);
  if (k == NULL || k->name_len >= cap) return 0;
  memcpy(out, k->name, k->name_len);
  *len = k->name_len;
  const binding* b = key->bias ? find_binding(c, key->bias) : NULL;
  if (b != NULL && *len + b->name_len < cap) {
    memcpy(out + *len, b->name, b->name_len);
    *len += b->name_len;
  }
  return 1;
}

static size_t look_up(void* context, const struct xnn_weights_cache_look_up_key* key) {
  et_cache* c = context;
  char name[4096];
  size_t len;
  if (!key_name(c, key, name, sizeof name, &len)) return SIZE_MAX;
  for (size_t i = 0; i < c->count; i++) {
    const record* r = &c->records[i];
    if (r->name && r->name_len == len && memcmp(r->name, name, len) == 0) return r->seed == key->seed ? i : SIZE_MAX;
  }
  return SIZE_MAX;
}

static size_t counted_look_up(void* context, const struct xnn_weights_cache_look_up_key* key) {
  et_cache* c = context;
  size_t r = look_up(context, key);
  c->lookups++;
  c->hits += r != SIZE_MAX;
  return r;
}

static void* reserve_space(void* context, size_t n) {
  et_cache* c = context;
  void* p = NULL;
  c->heap_bytes += n;
  return posix_memalign(&p, 64, n ? n : 1) == 0 ? p : NULL;
}

static size_t look_up_or_insert(void* context, const struct xnn_weights_cache_look_up_key* key, void* ptr,
                                size_t size) {
  et_cache* c = context;
  size_t found = look_up(context, key);
  if (ptr == NULL) return found;
  if (found != SIZE_MAX) {
    if (size == c->records[found].size && memcmp(ptr, c->records[found].data, size) == 0) {
      c->hits_after_packing++;
      free(ptr); /* XNNPACK reads the stored copy (offset_to_addr) from here on */
      return found;
    }
    free(ptr); /* refused: no record holds it, and XNNPACK never reads ptr again after this call */
    return SIZE_MAX;
  }
  c->packed++;
  record* r = add_record(c); /* unnamed, so no later look-up finds it: as ExecuTorch */
  r->data = ptr;
  r->size = size;
  r->seed = key->seed;
  return c->count - 1;
}

static bool is_finalized(void* context) { return ((et_cache*)context)->finalized; }

static void* offset_to_addr(void* context, size_t offset) { return ((et_cache*)context)->records[offset].data; }

static enum xnn_status delete_cache(void* context) {
  (void)context;
  return xnn_status_success;
}

typedef struct run_context {
  et_cache* cache;
  struct xnn_weights_cache_provider* provider;
  int failures;
  size_t delegates;
} run_context;

static int run_one(void* context, const xpack_model_set* set, const xpack_delegate_ref* ref) {
  run_context* rc = context;
  if (!ref->info->is_xnnpack) return 0;
  xpack_run_result plain, cached;
  xpack_error err;
  uint64_t packed_before = rc->cache->packed;
  const xpack_bind_target none = {.kind = XPACK_BIND_NONE};
  const xpack_bind_target et = {.kind = XPACK_BIND_CALLBACKS, .object = rc->cache, .provider = rc->provider,
                                .bind = bind, .unbind = unbind};
  if (xpack_run_delegate(set, ref, &none, true, &plain, &err) != XPACK_OK ||
      xpack_run_delegate(set, ref, &et, true, &cached, &err) != XPACK_OK) {
    fprintf(stderr, "xpwc-run: %s\n", err.message);
    rc->failures++;
    return 0;
  }
  int same = plain.num_outputs == cached.num_outputs && plain.num_outputs > 0 &&
             memcmp(plain.output_hash, cached.output_hash, plain.num_outputs * sizeof plain.output_hash[0]) == 0;
  printf("  %s method '%s' delegate %zu: outputs %s, %llu weights packed by XNNPACK\n", ref->file,
         ref->method_name, ref->delegate, same ? "identical" : "DIFFER",
         (unsigned long long)(rc->cache->packed - packed_before));
  rc->failures += !same;
  rc->delegates++;
  return 0;
}

/* MODEL.pte ... [--data W.ptd ...], skipping --xpwc FILE. Returns 0, or 2 after printing the error. */
static int open_models(xpack_model_set* set, int argc, char** argv) {
  xpack_model_set_init(set, 0);
  for (int i = 1; i < argc; i++) {
    xpack_model_input input = {.path = argv[i], .kind = XPACK_MODEL_PROGRAM};
    if (strcmp(argv[i], "--xpwc") == 0) {
      i++;
      continue;
    }
    if (strcmp(argv[i], "--data") == 0 && i + 1 < argc) input = (xpack_model_input){.path = argv[++i], .kind = XPACK_MODEL_DATA};
    xpack_error err;
    if (xpack_model_set_add(set, &input, NULL, NULL, &err) != XPACK_OK) {
      fprintf(stderr, "xpwc-run: %s\n", err.message);
      return 2;
    }
  }
  return 0;
}

int main(int argc, char** argv) {
  const char* file = NULL;
  for (int i = 1; i + 1 < argc; i++) {
    if (strcmp(argv[i], "--xpwc") == 0) file = argv[i + 1];
  }
  if (file == NULL) {
    fprintf(stderr, "usage: xpwc-run MODEL.pte [MODEL2.pte ...] [--data W.ptd ...] --xpwc FILE\n");
    return 2;
  }
  if (xnn_initialize(NULL) != xnn_status_success) return 1;
  et_cache cache = {0};
  if (load(&cache, file) != 0) {
    release(&cache);
    return 1;
  }
  size_t loaded = cache.count;
  xpack_model_set set;
  int rc = open_models(&set, argc, argv);
  if (rc) {
    xpack_model_set_close(&set);
    release(&cache);
    return rc;
  }
  struct xnn_weights_cache_provider provider = {.context = &cache,
                                                .look_up = counted_look_up,
                                                .reserve_space = reserve_space,
                                                .look_up_or_insert = look_up_or_insert,
                                                .is_finalized = is_finalized,
                                                .offset_to_addr = offset_to_addr,
                                                .delete_cache = delete_cache};
  run_context ctx = {&cache, &provider, 0, 0};
  xpack_for_each_delegate(&set, NULL, run_one, &ctx);
  xpack_model_set_close(&set);
  printf("  %zu records loaded from %s; %zu delegates; look-ups %llu, hits %llu, hits after packing %llu, "
         "packed %llu\n",
         loaded, file, ctx.delegates, (unsigned long long)cache.lookups, (unsigned long long)cache.hits,
         (unsigned long long)cache.hits_after_packing, (unsigned long long)cache.packed);
  int ok = ctx.failures == 0 && ctx.delegates > 0 && cache.packed == 0 && cache.hits + cache.hits_after_packing > 0;
  if (!ok) printf("FAIL: %d failures, %llu weights packed\n", ctx.failures, (unsigned long long)cache.packed);
  release(&cache);
  return ok ? 0 : 1;
}
