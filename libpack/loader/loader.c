/* An open cache's life: the open (skipped unread, mapped or read, checked against this process), the prefetch
 * and warm-up of its pages, the bindings of raw weights to its entries, and the close. provider.c answers
 * XNNPACK from it, stats.c reports on it. */
#include "xpack_loader.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/error.h"
#include "common/file_map.h"
#include "common/target.h"
#include "loader/cache_state.h"
#include "loader/open_steps.h"
#include "loader/xnn_compat.h"
#include "xpc_format.h"

xpack_status xp_cache_read(xpack_cache* c, int fd, uint64_t offset, const char* name, xpack_error* err) {
  void* buf = NULL;
  if (c->size > SIZE_MAX || posix_memalign(&buf, 16384, c->size ? (size_t)c->size : 1) != 0) {
    return xp_fail(err, XPACK_ERR_NOMEM, "%s: cannot allocate %llu bytes to read the %s", name,
                   (unsigned long long)c->size, offset ? "cache" : "file");
  }
  for (uint64_t done = 0; done < c->size;) {
    const ssize_t n = pread(fd, (uint8_t*)buf + done, (size_t)(c->size - done), (off_t)(offset + done));
    if (n <= 0) {
      if (n < 0 && errno == EINTR) continue;
      const int e = errno;
      free(buf);
      if (offset == 0) {
        return xp_fail(err, XPACK_ERR_IO, "%s: read failed at offset %llu: %s", name, (unsigned long long)done,
                       n < 0 ? strerror(e) : "file shrank while reading");
      }
      return xp_fail(err, XPACK_ERR_IO, "%s: read failed at offset %llu of the cache (%llu of the file): %s", name,
                     (unsigned long long)done, (unsigned long long)(offset + done),
                     n < 0 ? strerror(e) : "the file shrank while reading");
    }
    done += (uint64_t)n;
  }
  c->base = buf;
  c->mapped = 0;
  return XPACK_OK;
}

xpack_status xp_refuse_too_short(const char* name, uint64_t size, const uint8_t* first, xpack_error* err) {
  /* Without the header's magic it is not a cache that lost bytes, as xpack_file_open says of it too. */
  const int has_magic = first != NULL && memcmp(first, XPC_HEADER_MAGIC, XPC_HEADER_MAGIC_SIZE) == 0;
  return xp_fail(err, has_magic ? XPACK_ERR_TRUNCATED : XPACK_ERR_NOT_XPACK,
                 "%s: %llu bytes is too short for an xpack cache (at least %d)%s", name, (unsigned long long)size,
                 XPC_HEADER_SIZE + XPC_FOOTER_SIZE, has_magic ? "" : ", and it does not start with its magic");
}

static xpack_status read_whole_file(xpack_cache* c, const char* path, xpack_error* err) {
  int fd;
  xpack_status st = xp_open_regular(path, &fd, &c->size, NULL, err);
  if (st != XPACK_OK) return st;
  st = xp_cache_read(c, fd, 0, path, err);
  close(fd);
  return st;
}

/* resident_map: a mapping of the whole file already made (XPACK_OPEN_SKIP_COLD found it in the page cache),
 * which this adopts, or unmaps when the file is to be read. */
static xpack_status load_file(xpack_cache* c, const char* path, unsigned flags, void* resident_map,
                              xpack_error* err) {
  xpack_status st;
  if (resident_map != NULL && !(flags & XPACK_OPEN_READ)) {
    xp_file_map map;
    xp_adopt_mapping(path, resident_map, c->size, &map);
    c->base = (uint8_t*)map.data;
    c->mapped = 1;
    st = XPACK_OK;
  } else if (flags & XPACK_OPEN_READ) {
    if (resident_map != NULL) munmap(resident_map, (size_t)c->size);
    st = read_whole_file(c, path, err);
  } else {
    xp_file_map map;
    const unsigned advice = ((flags & XPACK_OPEN_SEQUENTIAL) ? XP_MAP_SEQUENTIAL : 0u) |
                            ((flags & XPACK_OPEN_WILLNEED) ? XP_MAP_WILLNEED : 0u);
    st = xp_map_file_advised(path, advice, &map, err);
    c->base = (uint8_t*)map.data;
    c->size = map.size;
    c->mapped = st == XPACK_OK && map.data != NULL;
  }
  if (st == XPACK_OK && c->size < XPC_HEADER_SIZE + XPC_FOOTER_SIZE) {
    /* Checked before anything reads the bytes: a shorter file cannot hold a header and a footer. */
    return xp_refuse_too_short(path, c->size, c->size >= XPC_HEADER_MAGIC_SIZE ? c->base : NULL, err);
  }
  return st;
}

/* From this size on, open reads the file's metadata alone, cold: otherwise the kernel's read-around on the
 * header's page fault (up to its read-ahead window, 8 MiB on the bench machine) reads megabytes of packed
 * weights before open returns. A smaller file costs one read whole, less than several small ones. */
#define XP_METADATA_FIRST_MIN_BYTES (1u << 20)
/* What open asks for at the end of the file: the footer, the table directory and the small tables before them
 * (the entries table too, for all but the largest files). */
#define XP_METADATA_TAIL_BYTES (64u * 1024u)

/* madvise on the pages holding the cache's bytes [offset, offset + size), of a mapped cache. */
static void advise(xpack_cache* c, uint64_t offset, uint64_t size, int advice) {
  xp_advise_range(c->base - c->map_delta, c->size + c->map_delta, c->map_delta + offset, size, advice);
}

/* No read-around anywhere (MADV_RANDOM), and the tail of the file requested now (MADV_WILLNEED), so that the
 * header's page and the tail are two small reads in flight together. */
static void advise_metadata_first(xpack_cache* c) {
  advise(c, 0, c->size, MADV_RANDOM);
  advise(c, c->size - XP_METADATA_TAIL_BYTES, XP_METADATA_TAIL_BYTES, MADV_WILLNEED);
}

void xp_cache_unload(xpack_cache* c) {
  if (c->mapped) {
    xp_file_map map = {c->base - c->map_delta, c->size + c->map_delta};
    xp_unmap_file(&map);
  } else {
    free(c->base);
  }
  c->base = NULL;
}

/* Decides whether this process may be served from the file at all. */
static void check_compatibility(xpack_cache* c) {
  const xp_view* v = &c->view;
  if (v->arch != xp_target_arch()) {
    char packed_for[48];
    if (strcmp(xp_arch_name(v->arch), "unknown") == 0) {
      snprintf(packed_for, sizeof packed_for, "an unknown architecture (ELF machine %u)", (unsigned)v->arch);
    } else {
      snprintf(packed_for, sizeof packed_for, "%s", xp_arch_name(v->arch));
    }
    snprintf(c->refusal, sizeof c->refusal, "packed for %s, this process runs on %s", packed_for,
             xp_arch_name(xp_target_arch()));
  } else if (v->xnn_alignment != xp_xnn_alignment()) {
    snprintf(c->refusal, sizeof c->refusal, "packed with XNN_ALLOCATION_ALIGNMENT %u, this build uses %u",
             v->xnn_alignment, xp_xnn_alignment());
  } else if (v->build_id.count != xnn_experimental_get_build_identifier_size() ||
             !xnn_experimental_check_build_identifier(c->base + v->build_id.offset, (size_t)v->build_id.count)) {
    snprintf(c->refusal, sizeof c->refusal, "packed by another XNNPACK build (build identifier differs)");
  }
}

/* Constants: formatting would be the costliest part of skipping (a process's first snprintf). */
static const char kSkippedSmall[] =
    "skipped unread (XPACK_OPEN_SKIP_SMALL): a file under 128 KiB holds fewer packed weights than XNNPACK packs "
    "in the time the cache takes to open and check";
static const char kSkippedCold[] =
    "skipped unread (XPACK_OPEN_SKIP_COLD): a file under 1 MiB that is not in the page cache costs more to read "
    "from storage than XNNPACK takes to pack its weights; xpack_cache_warm_up reads it for the next open";
_Static_assert(XPACK_SMALL_CACHE_BYTES == 128u * 1024u, "kSkippedSmall names the size");
_Static_assert(XPACK_COLD_CACHE_BYTES == 1024u * 1024u, "kSkippedCold names the size");

_Static_assert(sizeof kSkippedSmall <= sizeof ((xpack_cache*)0)->refusal, "the reason fits");
_Static_assert(sizeof kSkippedCold <= sizeof ((xpack_cache*)0)->refusal, "the reason fits");

/* why: one of the constants above, NUL included in why_size. */
static void skip_because(xpack_cache* c, uint64_t size, const char* why, size_t why_size) {
  c->skipped = 1;
  c->size = size;
  memcpy(c->refusal, why, why_size);
}

/* Appends text to c->refusal (cut at its end). */
static void refusal_append(xpack_cache* c, const char* text) {
  size_t at = strlen(c->refusal);
  while (*text && at + 1 < sizeof c->refusal) c->refusal[at++] = *text++;
  c->refusal[at] = 0;
}

/* The refusal of a file skipped under a caller's limit, which names it: put together without printf, whose
 * first call in a process would cost more than the rest of the skip. */
static void skip_under_limit(xpack_cache* c, uint64_t size, const char* flag, uint64_t limit, const char* rest) {
  char digits[24];
  size_t n = sizeof digits;
  digits[--n] = 0;
  do {
    digits[--n] = (char)('0' + limit % 10);
    limit /= 10;
  } while (limit && n > 0);
  c->skipped = 1;
  c->size = size;
  c->refusal[0] = 0;
  refusal_append(c, "skipped unread (");
  refusal_append(c, flag);
  refusal_append(c, "): a file under the caller's limit of ");
  refusal_append(c, digits + n);
  refusal_append(c, " bytes");
  refusal_append(c, rest);
}

void xp_cache_skip_small(xpack_cache* c, uint64_t size, uint64_t limit) {
  if (limit == XPACK_SMALL_CACHE_BYTES) skip_because(c, size, kSkippedSmall, sizeof kSkippedSmall);
  else skip_under_limit(c, size, "XPACK_OPEN_SKIP_SMALL", limit, "");
}

void xp_cache_skip_cold(xpack_cache* c, uint64_t size, uint64_t limit, const xp_residency_check* check) {
  c->cold = *check;
  if (limit == XPACK_COLD_CACHE_BYTES) skip_because(c, size, kSkippedCold, sizeof kSkippedCold);
  else {
    skip_under_limit(c, size, "XPACK_OPEN_SKIP_COLD", limit,
                     " that is not in the page cache; xpack_cache_warm_up reads it for the next open");
  }
}

/* XPACK_OPEN_SKIP_SMALL from the file's size alone (one stat), XPACK_OPEN_SKIP_COLD from its size and its
 * residency (residency.h): neither reads the file, so that a cold file costs no read from storage.
 * Anything else, errors included, is left to the normal open; *resident_map is then the mapping the residency
 * check made of a file it found wholly in the page cache, or NULL. */
static int skip_unread(xpack_cache* c, const char* path, unsigned flags, const xp_open_limits_resolved* limits,
                       void** resident_map) {
  struct stat st;
  if (stat(path, &st) != 0 || !S_ISREG(st.st_mode)) return 0;
  const uint64_t size = (uint64_t)st.st_size;
  if (size < XPC_HEADER_SIZE + XPC_FOOTER_SIZE) return 0;
  if ((flags & XPACK_OPEN_SKIP_SMALL) && size < limits->small) {
    xp_cache_skip_small(c, size, limits->small);
    return 1;
  }
  if ((flags & XPACK_OPEN_SKIP_COLD) && size < limits->cold) {
    xp_residency_check check;
    switch (xp_residency_ask(path, st.st_dev, st.st_ino, size, &check)) {
      case XP_NOT_RESIDENT: xp_cache_skip_cold(c, size, limits->cold, &check); return 1;
      case XP_RESIDENT:
        c->size = size;
        *resident_map = check.resident; /* the open goes on with this mapping rather than making another */
        return 0;
      case XP_RESIDENCY_UNKNOWN: return 0;
    }
  }
  return 0;
}

xpack_status xpack_cache_open(const char* path, unsigned flags, xpack_cache** out, xpack_error* err) {
  return xpack_cache_open_limits(path, flags, NULL, out, err);
}

xp_open_limits_resolved xp_open_limits_resolve(const xpack_open_limits* limits) {
  return (xp_open_limits_resolved){
      .small = limits && limits->small_cache_bytes ? limits->small_cache_bytes : XPACK_SMALL_CACHE_BYTES,
      .cold = limits && limits->cold_cache_bytes ? limits->cold_cache_bytes : XPACK_COLD_CACHE_BYTES,
  };
}

int xp_open_flags_known(unsigned flags) {
  const unsigned known =
      XPACK_OPEN_READ | XPACK_OPEN_STRICT | XPACK_OPEN_SEQUENTIAL | XPACK_OPEN_WILLNEED | XPACK_OPEN_CHECK_REGIONS |
      XPACK_OPEN_PROBE_EARLY | XPACK_OPEN_TRUST_SIZES | XPACK_OPEN_SKIP_SMALL | XPACK_OPEN_SKIP_COLD;
  return (flags & ~known) == 0;
}

xpack_cache* xp_cache_new(unsigned flags) {
  /* malloc, not calloc: a process has called malloc long before, and with glibc's lazy binding the first call
   * of a function it has not called costs microseconds, a skipped cache's whole open (docs/BENCHMARKS.md). */
  xpack_cache* c = malloc(sizeof *c);
  if (c == NULL) return NULL;
  *c = (xpack_cache){0};
  c->cold.fd = -1;
  c->check_regions = (flags & XPACK_OPEN_CHECK_REGIONS) != 0;
  c->trust_sizes = (flags & XPACK_OPEN_TRUST_SIZES) != 0;
  return c;
}

xpack_status xpack_cache_open_limits(const char* path, unsigned flags, const xpack_open_limits* limits,
                                     xpack_cache** out, xpack_error* err) {
  if (out != NULL) *out = NULL; /* on every failure, a caller error included */
  if (path == NULL || out == NULL || !xp_open_flags_known(flags)) {
    return xp_fail(err, XPACK_ERR_ARG, "xpack_cache_open: NULL path or output, or unknown flags");
  }
  const xp_open_limits_resolved sizes = xp_open_limits_resolve(limits);
  xpack_cache* c = xp_cache_new(flags);
  if (c == NULL) return xp_fail(err, XPACK_ERR_NOMEM, "%s: out of memory", path);
  /* A skipped cache is no cache: no provider (xpack_cache_provider is NULL), no state behind one, nothing
   * touched but this file's code, so that skipping costs the stat and little else. */
  void* resident_map = NULL;
  if ((flags & (XPACK_OPEN_SKIP_SMALL | XPACK_OPEN_SKIP_COLD)) &&
      skip_unread(c, path, flags, &sizes, &resident_map)) {
    *out = c;
    return XPACK_OK;
  }
  xpack_status st = load_file(c, path, flags, resident_map, err);
  if (st != XPACK_OK) {
    xp_cache_unload(c);
    free(c);
    return st;
  }
  return xp_cache_finish_open(c, path, flags, out, err);
}

xpack_status xp_cache_finish_open(xpack_cache* c, const char* name, unsigned flags, xpack_cache** out,
                                  xpack_error* err) {
  const int metadata_first =
      c->mapped && (flags & (XPACK_OPEN_SEQUENTIAL | XPACK_OPEN_WILLNEED)) == 0 && c->size >= XP_METADATA_FIRST_MIN_BYTES;
  if (metadata_first) advise_metadata_first(c);
  xpack_status st = xp_view_open(&c->view, c->base, c->size, name, 0, err);
  /* Look-ups and XNNPACK read the rest in large runs: the kernel's read-around serves that best. */
  if (metadata_first) advise(c, 0, c->size, MADV_NORMAL);
  if (st == XPACK_OK) {
    check_compatibility(c);
    if (c->refusal[0] != 0 && (flags & XPACK_OPEN_STRICT)) {
      st = xp_fail(err, XPACK_ERR_INCOMPATIBLE, "%s: %s", name, c->refusal);
    }
  }
  /* A file of version 1.0 has no families (FORMAT.md 5.8): records one claims anyway vouch for nothing. */
  const uint32_t families = c->view.minor == 0 ? 0 : (uint32_t)c->view.families.count;
  if (st == XPACK_OK && xp_families_init(&c->families, families) != 0) {
    st = xp_fail(err, XPACK_ERR_NOMEM, "%s: out of memory", name);
  }
  if (st != XPACK_OK) {
    xp_cache_unload(c);
    free(c);
    return st;
  }
  /* A failure to start the thread only means the families are decided on first need. */
  if ((flags & XPACK_OPEN_PROBE_EARLY) && c->refusal[0] == 0) (void)xp_families_probe_early(&c->families, &c->view);
  xp_bindings_init(&c->bindings);
  /* XNNPACK's own packings (misses) are answered with offsets from the file's size on: never one of the file's,
   * whatever size_t's width (c->size fits it: the file is mapped or read whole). */
  xp_heap_init(&c->heap, xp_xnn_alignment(), (size_t)c->size);
  xp_kept_init(&c->kept);
  xp_kept_init(&c->kept_unnamed);
  xp_pending_init(&c->pending);
  xp_cache_provider_init(c);
  *out = c;
  return XPACK_OK;
}

void xpack_cache_prefetch(xpack_cache* c) {
  if (c == NULL || !c->mapped || c->refusal[0] != 0) return; /* a skipped file is never mapped */
  const uint64_t size = c->view.data_size;
  if (size == 0 || size > XPACK_PREFETCH_MAX_BYTES) return;
  const uint8_t* data = c->base + c->view.data_offset;
  /* Data areas are written and read whole, so its two ends tell a cold one from a warm one; asking for every
   * page would cost as much as the advice does on a warm file. */
  if (xp_page_resident(data) && xp_page_resident(data + size - 1)) return;
  advise(c, c->view.data_offset, size, MADV_WILLNEED);
}

void xpack_cache_warm_up(xpack_cache* c) {
  if (c == NULL || !c->skipped) return;
  /* Asynchronous: the kernel queues the reads and returns; they complete after the close (or an exit) too. */
  xp_residency_warm(&c->cold, c->size);
}

void xpack_cache_close(xpack_cache* c) {
  if (c == NULL) return;
  if (c->skipped) {
    xpack_cache_warm_up(c);
    free(c);
    return;
  }
  xp_bindings_destroy(&c->bindings);
  xp_kept_destroy(&c->kept);
  xp_kept_destroy(&c->kept_unnamed);
  xp_heap_destroy(&c->heap);
  xp_pending_destroy(&c->pending);
  xp_families_destroy(&c->families);
  xp_cache_unload(c);
  free(c);
}

xpack_status xpack_cache_bind(xpack_cache* c, const void* raw, const char* identity, size_t identity_len,
                              xpack_error* err) {
  xpack_status st = xp_bind_check("xpack_cache_bind", c, "the cache", raw, identity, identity_len, err);
  if (c == NULL || c->skipped) return st; /* skipped: nothing will be looked up */
  if (st != XPACK_OK) { /* the pointer's earlier identity must not name what it points to now */
    xp_bindings_unbind(&c->bindings, raw);
    return st;
  }
  if (xp_bindings_set(&c->bindings, raw, identity, identity_len) != XPACK_OK) {
    return xp_fail(err, XPACK_ERR_NOMEM, "xpack_cache_bind: out of memory binding '%.*s'", (int)identity_len,
                   identity);
  }
  return XPACK_OK;
}

xpack_status xpack_cache_bind_size(xpack_cache* c, const struct xnn_weights_cache_look_up_key* key, size_t packed_size,
                                   xpack_error* err) {
  if (c == NULL || key == NULL || key->kernel == NULL) {
    return xp_fail(err, XPACK_ERR_ARG, "xpack_cache_bind_size: %s is NULL",
                   c == NULL ? "the cache" : key == NULL ? "the key" : "the key's kernel");
  }
  if (c->skipped) return XPACK_OK;
  xpack_status st = xp_bindings_set_size(&c->bindings, key->seed, key->kernel, key->bias, packed_size);
  if (st == XPACK_ERR_ARG) return xp_fail(err, st, "xpack_cache_bind_size: the kernel pointer is not bound (xpack_cache_bind)");
  if (st != XPACK_OK) return xp_fail(err, st, "xpack_cache_bind_size: out of memory");
  return XPACK_OK;
}

void xpack_cache_unbind_all(xpack_cache* c) {
  if (c != NULL && !c->skipped) xp_bindings_clear(&c->bindings);
}

struct xnn_weights_cache_provider* xpack_cache_provider(xpack_cache* c) {
  return c != NULL && !c->skipped ? &c->provider : NULL;
}

size_t xpack_xnn_alignment(void) { return xp_xnn_alignment(); }

const char* xpack_cache_refusal(const xpack_cache* c) { return c && c->refusal[0] ? c->refusal : NULL; }
