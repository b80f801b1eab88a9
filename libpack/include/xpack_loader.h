/*
 * xpack_loader.h - serve XNNPACK's packed weights from an xpack cache file.
 *
 * The loader maps a cache file written by `xpack pack` and gives XNNPACK a weights-cache provider
 * that answers look-ups from the mapping: xnn_create_runtime_v4 then packs nothing for the weights it
 * finds, the packed pages are clean file-backed memory, and raw weights are never read.
 *
 * Typical use (see docs/INTEGRATION.md for a complete program):
 *
 *   xpack_cache* cache;
 *   xpack_error err;
 *   if (xpack_cache_open("model.xpc", 0, &cache, &err) != XPACK_OK) { report(err.message); cache = NULL; }
 *   // for every static weight handed to xnn_define_*:
 *   xpack_cache_bind(cache, weight_ptr, "its identity", 12, NULL); // names the bytes AND how they are packed:
 *                                   // shape, node, quantization (XNNPACK's seed does not tell them apart)
 *   // for every key XNNPACK will look up, the bytes it reads (xpack_replay_size_weights asks XNNPACK):
 *   xpack_cache_bind_size(cache, &key, packed_size, NULL);
 *   ... define the subgraph ...
 *   xnn_create_runtime_v4(subgraph, xpack_cache_provider(cache), NULL, threadpool, 0, &runtime);
 *   xpack_cache_unbind_all(cache);  // before the raw weights are freed: a reused address must not
 *                                   // keep a stale identity
 *   ... run ...
 *   xnn_delete_runtime(runtime);    // every runtime created with the provider, before:
 *   xpack_cache_close(cache);
 *
 * Safety: the loader never serves bytes it cannot vouch for. An entry is served only when its key
 * (XNNPACK seed, kernel identity, bias identity) matches exactly, the entry's own checksum holds, the
 * file was packed for this architecture, alignment and XNNPACK build, the entry's packing family
 * packs its probe to the recorded bytes on this CPU (xpack_cache_family), and its region holds exactly
 * the bytes XNNPACK reads for the key (xpack_cache_bind_size: a checksum cannot catch a size that lies,
 * and XNNPACK's key carries none). Anything else is a miss:
 * XNNPACK packs normally into heap memory the loader owns and counts, and the reason is recorded.
 *
 * Replacing a cache: files are immutable while open. Write a new file and rename it over the old one
 * (as `xpack pack` does): a process that opened the old file keeps serving it, mapped or read, until
 * it closes it; the next open sees the new one. Never truncate or rewrite a cache in place: a process
 * that has it mapped dies of SIGBUS when it touches a page past the new end, a signal and not an error
 * the loader could return. Open checks the size (a file that lost its end or gained bytes is refused
 * with its size and the size it should have), which catches damage done before open, not during use.
 * Where the file may be changed in place by something outside your control, open with XPACK_OPEN_READ:
 * the whole file is read into heap memory at open and the file is never touched again, at the cost of
 * that memory. docs/INTEGRATION.md, "Replacing a cache file"; tests/core/change_underneath.sh.
 *
 * Thread safety: the provider may be called from several threads at once, and bind/unbind may run
 * concurrently with look-ups, and so may xpack_cache_stats, xpack_cache_family, xpack_cache_entries_served,
 * xpack_cache_prefetch and xpack_cache_warm_up (which warms the file once whichever thread calls it). Set
 * xpack_cache_on_miss before any runtime is created with the provider. Different caches are independent;
 * opening (xpack_cache_open*) may run on several threads at once. close is not concurrent with anything
 * else on the same cache.
 *
 * Dependencies: libc, pthreads, XNNPACK (its build identifier, and its subgraph API for the family probes),
 * xxHash. No zstd, no flatbuffers.
 */
#ifndef XPACK_LOADER_H
#define XPACK_LOADER_H

#include <stddef.h>
#include <stdint.h>

#include <xnnpack.h>

#include "xpack_status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct xpack_cache xpack_cache;

/* Flags for xpack_cache_open. */
#define XPACK_OPEN_READ 0x1u   /* read the file into heap memory instead of mapping it */
#define XPACK_OPEN_STRICT 0x2u /* fail with XPACK_ERR_INCOMPATIBLE instead of refusing every entry when the
                                  file was packed for another architecture, alignment or XNNPACK build */
/* Read-ahead advice for the mapping (ignored with XPACK_OPEN_READ); for files that are likely not in the page
 * cache. docs/BENCHMARKS.md shows what each does to a cold first inference. */
#define XPACK_OPEN_SEQUENTIAL 0x4u /* madvise(MADV_SEQUENTIAL): larger read-ahead on each page fault */
#define XPACK_OPEN_WILLNEED 0x8u   /* madvise(MADV_WILLNEED): start reading the whole file at open */
/* Check each region's XXH3-64 before serving it (refused_corrupt when it fails). Off by default: it reads
 * every packed weight at start-up, which is what `xpack verify` after a download or copy avoids. */
#define XPACK_OPEN_CHECK_REGIONS 0x10u
/* Serve keys without a bound size (xpack_cache_bind_size), trusting the file's region sizes: for subgraphs
 * defined by hand, which xpack_replay_size_weights cannot size, and only with caches you packed yourself or
 * checked with `xpack verify --model`. A region shorter than what XNNPACK reads then lets it read past the
 * region, and past the mapping when the region ends the data area (docs/TRUST.md). Sizes that are bound are
 * still checked. */
#define XPACK_OPEN_TRUST_SIZES 0x40u
/* Probe every packing family of the file on a thread of the cache's own, started at open, instead of at the
 * first look-up of each family inside runtime creation: the probes (40 to 50 us per family here) then
 * overlap whatever the caller does before creating its runtimes (replaying, binding). Same verdicts, same
 * checks; ignored for a file refused whole. Close waits for the probe in progress. */
#define XPACK_OPEN_PROBE_EARLY 0x20u
/* Skip a file smaller than XPACK_SMALL_CACHE_BYTES without reading it (one stat): the cache is then no cache.
 * xpack_cache_provider() returns NULL (pass it as is: XNNPACK packs as without a cache), binding does
 * nothing, xpack_cache_refusal() says the file was skipped and the stats stay zero. Below that size
 * XNNPACK packs the weights in less time than opening the file, probing its families and, cold, reading it
 * from storage take (docs/BENCHMARKS.md, "Never slower"), so a cache that small can only make a start
 * slower. A skipped file is not validated beyond its size (`xpack verify` does that); a file too short to
 * be a cache at all is still an error. What apps should pass (docs/INTEGRATION.md). */
#define XPACK_OPEN_SKIP_SMALL 0x80u
/* The size under which XPACK_OPEN_SKIP_SMALL skips a cache file, and under which `xpack pack` warns. */
#define XPACK_SMALL_CACHE_BYTES (128u * 1024u)
/* Skip a file smaller than XPACK_COLD_CACHE_BYTES that is not wholly in the page cache, without reading it
 * (a stat, an open and cachestat(2); where the kernel lacks cachestat, and always on Android, whose seccomp
 * filter does not list it, a mapping and mincore), as XPACK_OPEN_SKIP_SMALL skips a small one: no provider,
 * nothing bound, xpack_cache_refusal() says so; the cache holds the file open until xpack_cache_warm_up.
 * Below that size the file is read whole at open, and cold that read costs more than XNNPACK takes to pack
 * the weights from the program it reads anyway (docs/BENCHMARKS.md, "Never slower"); in the page cache the
 * same file serves in about half the time of packing, so it is served. A file skipped as cold is read into
 * the page cache for the next open, in the background, by xpack_cache_warm_up (call it once the app's start
 * is over) or else by xpack_cache_close. What apps should pass (docs/INTEGRATION.md). */
#define XPACK_OPEN_SKIP_COLD 0x100u
/* The size under which XPACK_OPEN_SKIP_COLD looks at a file's residency; from it on, open reads only the
 * file's metadata and a cold cache is worth serving. */
#define XPACK_COLD_CACHE_BYTES (1024u * 1024u)

/* The sizes XPACK_OPEN_SKIP_SMALL and XPACK_OPEN_SKIP_COLD compare a file's size with, for
 * xpack_cache_open_limits. The defaults (XPACK_SMALL_CACHE_BYTES, XPACK_COLD_CACHE_BYTES) were measured where
 * the app opens its programs with xpack and XNNPACK on the machine of docs/BENCHMARKS.md; where the cache
 * costs more to take up than that (xpack_et_adapter_attach also reads and sizes the program ExecuTorch has
 * read) or a device's storage and CPU draw the line elsewhere, the caller passes its own. */
typedef struct xpack_open_limits {
  uint64_t small_cache_bytes; /* XPACK_OPEN_SKIP_SMALL skips a file under this; 0 = XPACK_SMALL_CACHE_BYTES */
  uint64_t cold_cache_bytes;  /* XPACK_OPEN_SKIP_COLD skips a file under this out of the page cache; 0 =
                                 XPACK_COLD_CACHE_BYTES */
  const void* program;        /* choosing among caches (xpack_cache_open_best*): NULL, or the bytes of the .pte the
                                 app runs (program_size of them), so that a file built from it is preferred to one
                                 built from other programs (xpack_cache_check_program); the caller's, read during
                                 the call only. Opening one file ignores it. */
  size_t program_size;
} xpack_open_limits;

/* Opens and validates a cache file: footer, header, table directory, bounds, version, small-table
 * checksums and compatibility (architecture, XNN_ALLOCATION_ALIGNMENT, XNNPACK build identifier).
 * Costs the same whatever the number of entries or bytes of weights, and allocates no memory per entry.
 * An incompatible file still opens (unless XPACK_OPEN_STRICT): every look-up then misses and
 * xpack_cache_refusal() says why. So does a file that XPACK_OPEN_SKIP_SMALL or XPACK_OPEN_SKIP_COLD skips,
 * without being read.
 * On success *out owns the mapping until xpack_cache_close.
 * Errors: XPACK_ERR_ARG, XPACK_ERR_IO, XPACK_ERR_NOT_XPACK, XPACK_ERR_VERSION, XPACK_ERR_TRUNCATED,
 *         XPACK_ERR_CORRUPT, XPACK_ERR_TRANSPORT, XPACK_ERR_INCOMPATIBLE (strict only), XPACK_ERR_NOMEM. */
xpack_status xpack_cache_open(const char* path, unsigned flags, xpack_cache** out, xpack_error* err);

/* xpack_cache_open, with XPACK_OPEN_SKIP_SMALL and XPACK_OPEN_SKIP_COLD comparing the file's size with
 * `limits` (NULL, or a field of 0: the default). The refusal of a file skipped under a limit other than the
 * default names that limit. Errors: those of xpack_cache_open. */
xpack_status xpack_cache_open_limits(const char* path, unsigned flags, const xpack_open_limits* limits,
                                     xpack_cache** out, xpack_error* err);

/* xpack_cache_open_limits for a cache stored inside another file: the `size` bytes at `offset` of the regular
 * file open as `fd`, e.g. an app's asset stored uncompressed in its APK (Android's AAsset_openFileDescriptor64
 * gives the descriptor, offset and length). `name` names the cache in messages (e.g.
 * "base.apk:assets/model.xpc"); offsets in them count from the cache's first byte. The caller keeps fd and may
 * close it once this returns: the mapping, and the descriptor a file skipped as cold keeps for its warm-up,
 * are the loader's own. Every flag and limit acts as for a file of its own. The cache is mapped in place when
 * its offset is a multiple of XNNPACK's alignment (xpack_xnn_alignment); otherwise XNNPACK could not be served
 * from the mapping, and the bytes are read into memory as with XPACK_OPEN_READ (store the asset at an offset
 * that is a multiple of the page size: its pages are then shared and mapped as a file's own).
 * Errors: XPACK_ERR_ARG (NULL out or name, a negative fd, unknown flags), XPACK_ERR_IO (fd is not a regular
 * file, a failed read or map, a range ending past 2 GiB where off_t has 32 bits), XPACK_ERR_TRUNCATED (the range
 * ends past the file, or is shorter than a header and footer but starts with the header's magic; a shorter range
 * without it, an empty one included, is XPACK_ERR_NOT_XPACK, as such a file is), and those of xpack_cache_open. */
xpack_status xpack_cache_open_fd(int fd, uint64_t offset, uint64_t size, const char* name, unsigned flags,
                                 const xpack_open_limits* limits, xpack_cache** out, xpack_error* err);

/* Unmaps the file and frees every heap fallback; for a file skipped as cold, calls xpack_cache_warm_up
 * first if the app has not. Every XNNPACK runtime created with the provider must have been deleted first.
 * NULL is ignored. */
void xpack_cache_close(xpack_cache* cache);

/* For a file skipped as cold (XPACK_OPEN_SKIP_COLD), which the cache holds open until then: asks the kernel
 * to read it into the page cache (posix_fadvise POSIX_FADV_WILLNEED), closes it and returns without waiting,
 * so that the next open, in this process or the next one, finds it warm and serves it, as long as the system
 * keeps it cached. A hint: the kernel may read only part of it (seen under load), and an open that finds it
 * partly cached skips it and the next warm-up asks again. Call it once the start is over (after the first
 * inference): reading it earlier competes with the program's own reads. Once per cache; does nothing for any
 * other cache or NULL. */
void xpack_cache_warm_up(xpack_cache* cache);

/* The size of data area up to which xpack_cache_prefetch asks for it. */
#define XPACK_PREFETCH_MAX_BYTES (4u * 1024u * 1024u)

/* For a served cache (mapped, not skipped, not refused whole) whose data area (its packed weights) is at most
 * XPACK_PREFETCH_MAX_BYTES and not in the page cache (its first and last pages, asked with mincore): asks the
 * kernel to read the data area (madvise MADV_WILLNEED on it) and returns once the reads are queued, without
 * waiting for them. Call it right after xpack_cache_open, before opening the programs: the cold read of the
 * packed weights then overlaps the programs' load instead of faulting in page by page during the first
 * inference (docs/BENCHMARKS.md, "Never slower": stress_mlp's 2 MiB cache cold). Larger data areas are left to
 * the kernel's read-around on first touch: a request that large queues ahead of the programs' own reads and
 * made cold starts slower here (14 MiB: 1.4 ms slower). Warm, it costs two mincore calls. A hint: a cache it
 * does not apply to, and NULL, are left alone. Never fails. */
void xpack_cache_prefetch(xpack_cache* cache);

/* An identity that names nothing: a weight the program packs in more than one way (the same bytes quantized
 * otherwise by two values, or packed under two activation quantizations: xpack_et_packing_suffix), which no one
 * entry may serve. Bound to it, a pointer is as unbound: its look-ups miss, and a writer records nothing for it. */
#define XPACK_IDENTITY_AMBIGUOUS "xpack:ambiguous"

/* The longest identity a pointer can be bound to, in bytes. xpack's readers bind a weight whose identity would be
 * longer (a named key of about 950 bytes or more) to XPACK_IDENTITY_AMBIGUOUS: it names nothing, and XNNPACK packs it
 * at load. */
#define XPACK_IDENTITY_MAX_LEN 1023u

/* Binds a raw weight pointer (as handed to xnn_define_*) to its identity, a string of 1..1023 bytes without
 * a zero byte (copied). Rebinding a pointer replaces its identity. Unbound pointers always miss, and so do pointers bound
 * to XPACK_IDENTITY_AMBIGUOUS. Does nothing on a file skipped (XPACK_OPEN_SKIP_SMALL, XPACK_OPEN_SKIP_COLD).
 * Errors: XPACK_ERR_ARG (NULL, bad length or a zero byte), XPACK_ERR_NOMEM; either leaves `raw` unbound (its earlier
 * identity, if any, is forgotten with its sizes). */
xpack_status xpack_cache_bind(xpack_cache* cache, const void* raw, const char* identity, size_t identity_len,
                              xpack_error* err);

/* Binds the number of bytes XNNPACK reads on a hit for `key` (its seed and the raw kernel and bias pointers,
 * as XNNPACK builds it; xpack_replay_size_weights reports them). Without XPACK_OPEN_TRUST_SIZES an entry is
 * served only when its key has a bound size equal to its region's (refused_unsized, refused_size). The
 * kernel pointer must be bound first (xpack_cache_bind); rebinding it forgets its sizes.
 * Errors: XPACK_ERR_ARG (NULL, or the kernel pointer not bound), XPACK_ERR_NOMEM. */
xpack_status xpack_cache_bind_size(xpack_cache* cache, const struct xnn_weights_cache_look_up_key* key,
                                   size_t packed_size, xpack_error* err);

/* Forgets every binding and bound size. Call it once runtimes are created and before raw weights are freed.
 * NULL is ignored. */
void xpack_cache_unbind_all(xpack_cache* cache);

/* The weights-cache provider to pass to xnn_create_runtime_v4. Owned by the cache; NULL for a NULL cache and
 * for a file skipped (XPACK_OPEN_SKIP_SMALL, XPACK_OPEN_SKIP_COLD): XNNPACK then packs as without a cache.
 * It is not an XNNPACK weights cache (xnn_weights_cache_t): never pass it to xnn_delete_weights_cache, which
 * would take its context for XNNPACK's own cache structure; xpack_cache_close releases it. */
struct xnn_weights_cache_provider* xpack_cache_provider(xpack_cache* cache);

/* The alignment XNNPACK's packing kernels require of the memory a provider's reserve_space returns
 * (XNNPACK's XNN_ALLOCATION_ALIGNMENT for this build's target, which XNNPACK does not install), as a cache
 * header records it: for other weights-cache providers. Never fails. */
size_t xpack_xnn_alignment(void);

/* Why the whole file is refused (e.g. "packed by another XNNPACK build"), or NULL when it is served. */
const char* xpack_cache_refusal(const xpack_cache* cache);

typedef struct xpack_stats {
  uint64_t lookups;             /* keys XNNPACK asked for (look_up, or an insert without a look-up first); the
                                   insert with no bytes by which some XNNPACK builds (4ea82e5) repeat a look-up
                                   just answered is answered again, and counted nowhere */
  uint64_t hits;                /* answered from the file */
  uint64_t hits_after_packing;  /* of hits: XNNPACK had packed anyway (it does so for some operators);
                                   the freshly packed copy was compared with the file and released */
  uint64_t misses;              /* not answered from the file: packed by XNNPACK into heap memory, or reused */
  uint64_t misses_unbound;      /* of misses: the kernel or bias pointer was never bound, or bound to
                                   XPACK_IDENTITY_AMBIGUOUS */
  uint64_t misses_not_found;    /* of misses: no entry for this key */
  uint64_t misses_refused;      /* of misses: an entry exists but was refused (see refusal counters) */
  uint64_t refused_incompatible;/* refusals: the file is refused as a whole (xpack_cache_refusal) */
  uint64_t refused_corrupt;     /* refusals: the entry or its region record failed its checksum or bounds */
  uint64_t refused_mismatch;    /* refusals: XNNPACK packed bytes that differ from the file's (size or bytes) */
  uint64_t refused_probe;       /* refusals: the entry's packing family is refused on this machine (its probe
                                   packs or is keyed differently here, cannot run here, or is unknown:
                                   xpack_cache_family) */
  uint64_t refused_no_family;   /* refusals: the entry names no packing family (a format 1.0 file) */
  uint64_t refused_size;        /* refusals: the entry's region is not the size XNNPACK reads for the key (a
                                   crafted file, or a key XNNPACK sizes differently here) */
  uint64_t refused_unsized;     /* refusals: no size was bound for the key (xpack_cache_bind_size) */
  uint64_t heap_fallbacks;      /* packed weights living in heap memory owned by the loader */
  uint64_t heap_fallback_bytes; /* XNNPACK's packing of every weight that missed, kept until xpack_cache_close
                                   (XNNPACK says nothing when a runtime is deleted), once per key: a later miss of
                                   the same key is answered with it (misses_reused), so an app that creates
                                   runtimes again and again grows only by weights it never packed before */
  uint64_t served_bytes;        /* bytes of packed weights served from the file (counted per hit) */
  uint64_t misses_reused;       /* of misses, whatever their reason: answered with the heap fallback of an earlier
                                   miss of the same key (seed, kernel and bias identity, and the size XNNPACK reads
                                   for it), so XNNPACK packed nothing; a key that is not named (misses_unbound) or
                                   not sized (refused_unsized) is packed again each time, and its packing is
                                   answered with an earlier one of the same bytes (XNNPACK's copy goes back), so
                                   that it is kept once however often it is packed */
} xpack_stats;

/* A consistent-enough snapshot of the counters (each read atomically); zeroes for a NULL cache. */
void xpack_cache_stats(const xpack_cache* cache, xpack_stats* out);

/* Why one look-up was not served from the file: the reason its miss was counted under (xpack_stats). */
typedef enum xpack_miss_reason {
  XPACK_MISS_UNBOUND = 1,      /* misses_unbound: the kernel or bias pointer was never bound (xpack_cache_bind),
                                  or bound to XPACK_IDENTITY_AMBIGUOUS */
  XPACK_MISS_NOT_FOUND = 2,    /* misses_not_found: no entry has this seed, kernel and bias identity */
  XPACK_MISS_INCOMPATIBLE = 3, /* refused_incompatible: the whole file is refused (xpack_cache_refusal) */
  XPACK_MISS_CORRUPT = 4,      /* refused_corrupt */
  XPACK_MISS_NO_FAMILY = 5,    /* refused_no_family */
  XPACK_MISS_PROBE = 6,        /* refused_probe: the entry's family is refused here (xpack_cache_family) */
  XPACK_MISS_SIZE = 7,         /* refused_size */
  XPACK_MISS_UNSIZED = 8,      /* refused_unsized */
  XPACK_MISS_MISMATCH = 9,     /* refused_mismatch: XNNPACK packed other bytes than the entry's */
} xpack_miss_reason;

/* One missed look-up. The strings are the loader's, valid only during the call. */
typedef struct xpack_miss {
  xpack_miss_reason reason;
  uint32_t seed;          /* XNNPACK's seed for the key (its operator's packing parameters) */
  const char* kernel;     /* the kernel pointer's identity (kernel_len bytes, not NUL-terminated); NULL when
                             the reason is XPACK_MISS_UNBOUND */
  size_t kernel_len;
  const char* bias;       /* the bias pointer's identity; NULL when the key has no bias or is unbound */
  size_t bias_len;
  uint32_t family;        /* the entry's packing family (xpack_cache_family) for a refused entry, else UINT32_MAX */
} xpack_miss;

/* "unbound", "not_found", "incompatible", "corrupt", "no_family", "probe", "size", "unsized", "mismatch";
 * "unknown" for any other value. Never NULL. */
const char* xpack_miss_reason_name(xpack_miss_reason reason);

typedef void (*xpack_miss_fn)(void* context, const xpack_miss* miss);

/* Calls fn(context, miss) for every look-up counted as a miss from now on, so that a tool can say which
 * weight missed and why (`xpack run -v --cache`). fn runs inside XNNPACK's runtime creation, on the thread
 * creating the runtime (several at once if several threads create runtimes with this cache's provider); it
 * must not call back into this cache. Set it before creating runtimes; fn NULL stops the calls. The context
 * stays the caller's. Nothing for a NULL or skipped cache (it is never looked up). Never fails. */
void xpack_cache_on_miss(xpack_cache* cache, xpack_miss_fn fn, void* context);

/* Model identity. The cache records, for every program it was built from, the size and XXH3-64 of the
 * program's flatbuffer region (the eh00 header's program_size bytes; the whole file when there is no eh00
 * header), which leaves out weights stored in segments or .ptd files. This checks `program` (the bytes of
 * a .pte, or at least its flatbuffer region) against them; it reads that region only.
 * Returns XPACK_OK when the cache was built from a program of this flatbuffer region: the same graphs and
 * constant names, weights in segments and .ptd files not compared. XPACK_ERR_MISMATCH when it was not, records
 * no program or was skipped unread: the message names the programs it was built from. Going on is safe as far
 * as identities reach: entries are matched key by key, so a mismatch costs misses. What no identity catches is a
 * weight changed in place under a key naming its old content (a 64-hex-digit named key, trusted to be the
 * SHA-256 of its bytes: docs/TRUST.md): its old packing is served. `xpack verify CACHE --model` finds it.
 * Errors: XPACK_ERR_ARG, XPACK_ERR_BAD_INPUT (shorter than 8 bytes, or an eh00 program_size out of range). */
xpack_status xpack_cache_check_program(const xpack_cache* cache, const void* program, size_t size, xpack_error* err);

/* Packing families (xpack_family.h). Every entry belongs to a family whose probe the file records; the
 * loader serves a family's entries only when the probe packs to the same bytes with this process's
 * XNNPACK on this CPU. It decides on the first look-up that finds an entry of the family (running the
 * probe once per process, inside that look-up: a few tens of microseconds), unless the cache was opened with
 * XPACK_OPEN_PROBE_EARLY, whose thread runs the probes from open on (the look-up then waits for one still
 * running); open itself never waits for a probe. */
typedef enum xpack_family_refusal {
  XPACK_FAMILY_SERVED = 0,        /* not refused: the probe packs to the recorded bytes here */
  XPACK_FAMILY_PROBE_DIFFERS = 1, /* the probe packs to other bytes here: XNNPACK picks other kernels on this CPU */
  XPACK_FAMILY_PROBE_FAILED = 2,  /* this XNNPACK cannot run the probe here (e.g. no fp16 arithmetic on this CPU) */
  XPACK_FAMILY_UNKNOWN = 3,       /* not a family this xpack knows (a later version's, or a damaged record) */
  XPACK_FAMILY_FILE_REFUSED = 4,  /* the whole file is refused (xpack_cache_refusal) */
  XPACK_FAMILY_KEYS_DIFFER = 5,   /* the probe packs alike, but XNNPACK keys it with other seeds here (another tiling
                                     or kernel type), so no entry of the family would be found (files of 1.3 on) */
} xpack_family_refusal;

/* "served", "probe_differs", "probe_failed", "unknown_family", "file_refused", "keys_differ". Never NULL. */
const char* xpack_family_refusal_name(xpack_family_refusal refusal);

typedef struct xpack_cache_family_info {
  const char* name;             /* the family's name, in the file; "<bad string>" for a damaged record */
  uint64_t packed_probe;        /* the probe's XXH3-64 when the file was packed */
  uint64_t local_probe;         /* this process's probe XXH3-64, 0 when it did not run */
  xpack_family_refusal refusal; /* XPACK_FAMILY_SERVED or why the family's entries are refused */
  const char* reason;           /* NULL when served; else one sentence (owned by the cache) */
  uint64_t hits;                /* look-ups answered from entries of this family so far */
  uint64_t refused;             /* look-ups that found an entry of this family and refused it so far */
  uint64_t packed_keys;         /* the probe's key seeds' XXH3-64 when the file was packed; 0: not recorded (1.2
                                   and older files, whose families are decided by the packed bytes alone) */
  uint64_t local_keys;          /* this process's, 0 when the probe did not run */
} xpack_cache_family_info;

/* The number of families the file records (0 for a NULL cache). */
uint32_t xpack_cache_family_count(const xpack_cache* cache);

/* Family `index` and the verdict on it, deciding it now (probing) if no look-up has. Thread safe.
 * Errors: XPACK_ERR_ARG (NULL, or index >= xpack_cache_family_count). */
xpack_status xpack_cache_family(xpack_cache* cache, uint32_t index, xpack_cache_family_info* out, xpack_error* err);

/* Choosing among caches packed for several classes of CPU (an app bundle holding, say, one cache packed as a
 * Cortex-A55 and one as a Cortex-A76, XNNPACK choosing other kernels on each): how many of the file's entries
 * this process would serve, deciding every family now (a family no look-up has reached yet is probed here:
 * tens of microseconds each). 0 for a NULL cache, a skipped one, one refused whole, and one whose records share
 * their strings far more than any writer makes them (xpack verify refuses it: looking its entries up one by one
 * would cost time growing with the square of its size); for that one the 0 is this count's only: its look-ups
 * are answered as usual, each at its own cost. */
uint64_t xpack_cache_entries_served(xpack_cache* cache);

/* What xpack_cache_open_best found of one candidate file. */
typedef struct xpack_cache_candidate {
  int tried;               /* 0: not opened: a file after the one kept (served whole, or skipped unread) */
  xpack_error open_error;  /* .status XPACK_OK when the file opened; else why not */
  int refused_whole;       /* the file opened but serves nothing here: another architecture or XNNPACK build */
  uint64_t entries;        /* entries of the file (0 when it did not open) */
  uint64_t entries_served; /* of them, served by this process (xpack_cache_entries_served) */
  int other_program;       /* limits named a program and this file was not built from it */
} xpack_cache_candidate;

/* Opens paths[0..count) in order with `flags` and keeps the first file this process serves whole (every entry
 * served here), else the one serving the most entries (the earliest of equals), closing the others, so that an
 * app can ship one cache per class of CPU and take the one that fits the device it starts on. A file that does
 * not open (missing, damaged) or is refused whole is passed over. A file skipped as small or cold
 * (XPACK_OPEN_SKIP_SMALL, XPACK_OPEN_SKIP_COLD) is kept at once: caches of the same programs are of one size,
 * and skipping is the cheaper choice for every one of them. When no file serves an entry, the first that
 * opened is kept (its refusal says why). With a program in limits (xpack_cache_open_best_limits, _fd), a file built
 * from it comes before any built from other programs, whatever they serve: a bundle holding another model's cache
 * among the candidates once had the adapter keep that one, served whole and missing every look-up. *chosen is the
 * index kept; candidates (NULL, or count elements) receives what was found of each file (tried 0 for those after
 * one kept whole). The cache is the caller's, closed with xpack_cache_close.
 * Errors: XPACK_ERR_ARG (NULL paths, out or chosen, count 0, or a NULL path), and when no file opens, the
 * first file's error. */
xpack_status xpack_cache_open_best(const char* const* paths, size_t count, unsigned flags, xpack_cache** out,
                                   size_t* chosen, xpack_cache_candidate* candidates, xpack_error* err);

/* xpack_cache_open_best, each file opened as xpack_cache_open_limits opens it with `limits` (NULL: the
 * defaults). Errors: those of xpack_cache_open_best. */
xpack_status xpack_cache_open_best_limits(const char* const* paths, size_t count, unsigned flags,
                                          const xpack_open_limits* limits, xpack_cache** out, size_t* chosen,
                                          xpack_cache_candidate* candidates, xpack_error* err);

/* One candidate of xpack_cache_open_best_fd: a cache stored inside an open file, as xpack_cache_open_fd takes it. */
typedef struct xpack_cache_range {
  int fd;
  uint64_t offset, size;
  const char* name; /* in messages */
} xpack_cache_range;

/* xpack_cache_open_best over caches stored inside open files (one asset per class of CPU in an APK), each
 * opened as xpack_cache_open_fd opens it with `limits` (NULL: the defaults); candidates[i] is what was found of
 * ranges[i]. The caller keeps the descriptors. Errors: XPACK_ERR_ARG (NULL ranges, out or chosen, count 0),
 * and when no range opens, the first one's error (a NULL name or a bad descriptor is such an error). */
xpack_status xpack_cache_open_best_fd(const xpack_cache_range* ranges, size_t count, unsigned flags,
                                      const xpack_open_limits* limits, xpack_cache** out, size_t* chosen,
                                      xpack_cache_candidate* candidates, xpack_error* err);

/* xnn_initialize, for a tool or app that wants its failure explained: "unsupported hardware" is also what XNNPACK
 * says when cpuinfo could not describe the CPU (out of memory, among other reasons), and the message says so.
 * Idempotent and thread safe, as xnn_initialize is. The loader initializes XNNPACK itself where it needs it (a
 * family's probe); call this before creating runtimes. Errors: XPACK_ERR_NOMEM (XNNPACK ran out of memory),
 * XPACK_ERR_XNNPACK (any other failure, its status in the message). */
xpack_status xpack_initialize_xnnpack(xpack_error* err);

/* 1 while the calling thread is inside a runtime creation of xpack's own, else 0: a packing family's probe, the
 * sizing of weights (xpack_replay_size_weights*), or a replayed delegate's runtime (xpack_replay_create_runtime:
 * pack, run, bench, xpack_run_delegate). A wrapper of xnn_create_runtime_v4 that substitutes its own provider
 * (xpack_et_adapter.h does) must pass these calls through unchanged: a probe judges how this CPU packs by what
 * XNNPACK packs through the probe's own provider, the sizing records what XNNPACK reads, and a pack records what
 * XNNPACK packs through the writer's. */
int xpack_creating_own_runtime(void);

/* File facts, for tools and messages (0 for a NULL cache). */
uint64_t xpack_cache_entry_count(const xpack_cache* cache);
uint64_t xpack_cache_file_size(const xpack_cache* cache);

#ifdef __cplusplus
}
#endif
#endif /* XPACK_LOADER_H */
