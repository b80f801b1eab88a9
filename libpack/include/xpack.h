/*
 * xpack.h - libpack: pack XNNPACK weights ahead of time into an xpack cache file, inspect and verify it.
 *
 * Three parts, each usable alone:
 *   - the recording writer (xpack_writer_*): an XNNPACK weights-cache provider that records every weight
 *     XNNPACK packs during xnn_create_runtime_v4 and writes a cache file atomically;
 *   - inspection (xpack_file_*): read-only access to every field of a cache file, for `xpack dump`;
 *   - verification (xpack_verify_file): every bound and checksum, one report per problem.
 * The runtime side (serving a cache to XNNPACK) is xpack_loader.h, included here.
 * The transport form (zstd regions, for downloads) is xpack_transport.h, included here.
 * Caches stored inside zip archives (APK assets) are found with xpack_archive.h, included here.
 * ExecuTorch program reading lives in xpack_executorch.h.
 */
#ifndef XPACK_H
#define XPACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "xpack_archive.h"
#include "xpack_family.h"
#include "xpack_loader.h"
#include "xpack_status.h"
#include "xpack_transport.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The XNNPACK source this xpack is built against (e.g. "0.0~git20241108.4ea82e5", or a full commit for an
 * ExecuTorch pin): defined by the build for whatever links XNNPACK through xpack's CMake targets
 * (cmake/xpackDependencies.cmake). XNNPACK itself only reports its build identifier at run time. */
#ifndef XPACK_XNNPACK_VERSION
#define XPACK_XNNPACK_VERSION "unknown"
#endif

/* ============================== the recording writer ============================== */

typedef struct xpack_writer xpack_writer;

typedef struct xpack_writer_options {
  uint32_t page_alignment; /* alignment of large regions: 0 = 4096; 16384 for Apple; a power of two to 65536 */
} xpack_writer_options;

/* Starts a cache file for out_path. Packed weights are streamed to a temporary file in the same directory
 * (never all in memory); nothing appears at out_path until xpack_writer_finish renames it into place.
 * The temporary file has no name until then where the file system allows (O_TMPFILE), so a killed writer
 * leaves nothing; elsewhere it is ".xpack-XXXXXX.tmp", flock-ed while the writer has it, and creating one
 * removes unlocked files of exactly that form in the folder, which only a killed writer leaves behind.
 * out_path must name nothing, a regular file or a symbolic link (which is replaced, not written through).
 * options may be NULL. Errors: XPACK_ERR_ARG (also: out_path is a device, FIFO, socket or folder, or a
 * link to one, or a path no file can be made at: a trailing '/', a missing folder, a name too long),
 * XPACK_ERR_IO (also a folder that may not be written into), XPACK_ERR_NOMEM. */
xpack_status xpack_writer_create(const char* out_path, const xpack_writer_options* options, xpack_writer** out,
                                 xpack_error* err);

/* As xpack_writer_create, but the cache never gets a name: it is made in the folder of near_path (which is
 * not written; messages name it), or with near_path NULL in $TMPDIR (else /tmp), and xpack_writer_finish_fd
 * hands it back as an open descriptor. However the process ends, nothing is left in the folder.
 * Errors: XPACK_ERR_ARG (NULL out, or near_path's folder does not exist), XPACK_ERR_IO (the folder cannot hold
 * the file: $TMPDIR missing included), XPACK_ERR_NOMEM (memory or file descriptors). */
xpack_status xpack_writer_create_unnamed(const char* near_path, const xpack_writer_options* options,
                                         xpack_writer** out, xpack_error* err);

/* Binds a raw weight pointer to its identity (1..1023 bytes, copied), exactly as xpack_cache_bind.
 * Packed weights whose kernel (or bias) pointer is unbound are packed but not recorded.
 * Errors: XPACK_ERR_ARG (NULL, an identity length out of range or a zero byte in it), XPACK_ERR_NOMEM; either
 * leaves `raw` unbound on the calling thread (its earlier identity, if any, is forgotten). */
xpack_status xpack_writer_bind(xpack_writer* w, const void* raw, const char* identity, size_t identity_len,
                               xpack_error* err);

/* Binds a kernel pointer (the filter weight of a fully-connected, convolution or deconvolution node) to
 * the packing family of its node (xpack_family.h), and runs the family's probe if this process has not.
 * Every recorded entry needs one: a packed weight whose kernel has no family, an unprobeable one, or two
 * different ones, is packed but not recorded (counted in no_family), because no loader could vouch for it.
 * Errors: XPACK_ERR_ARG; XPACK_ERR_UNSUPPORTED (not a family this xpack knows), XPACK_ERR_XNNPACK (its
 * probe cannot run here), XPACK_ERR_MISMATCH (the pointer was bound to another family, or to one that made it
 * unrecorded): then the pointer's entries are not recorded; XPACK_ERR_NOMEM. */
xpack_status xpack_writer_bind_family(xpack_writer* w, const void* kernel, const xpack_family* family,
                                      xpack_error* err);

/* Forgets every identity and family binding of the calling thread. NULL is ignored. */
void xpack_writer_unbind_all(xpack_writer* w);

/* Bindings (xpack_writer_bind, xpack_writer_bind_family, unbind_all) belong to the calling thread, and the
 * provider resolves the pointers of a look-up with the bindings of the thread XNNPACK calls it on, which is
 * the thread creating the runtime when no thread pool is given. So several threads may each bind and create
 * runtimes through one writer at once. Call this on the thread before replaying the delegate numbered
 * delegate_index (0, 1, ... in a fixed order): it forgets the thread's bindings, and makes the file the
 * same bytes whichever threads pack which delegates and in what order they finish (regions and strings
 * are laid out as if the delegates had been packed one after another by index). Without it a thread's
 * events order as delegate -1. Errors: XPACK_ERR_ARG, XPACK_ERR_NOMEM. */
xpack_status xpack_writer_begin_delegate(xpack_writer* w, uint32_t delegate_index, xpack_error* err);

/* Says the calling thread has created (and deleted) the runtimes of the delegate it began. Optional: beginning
 * another delegate ends the previous one, and xpack_writer_finish ends them all. Ending each delegate as
 * soon as it is done lets the writer put the weights of later delegates, packed meanwhile on other
 * threads, in their final place while it runs instead of copying them at the end. Changes no byte of the
 * file. Errors: XPACK_ERR_ARG, XPACK_ERR_NOMEM. */
xpack_status xpack_writer_end_delegate(xpack_writer* w, xpack_error* err);

/* The provider to pass to xnn_create_runtime_v4; one writer serves any number of runtimes (a weight
 * XNNPACK asks for again is served from what was recorded, so it is packed once). The runtimes must be
 * deleted before xpack_writer_finish or xpack_writer_abort. Owned by the writer; NULL for a NULL writer. */
struct xnn_weights_cache_provider* xpack_writer_provider(xpack_writer* w);

/* The kinds of input file a cache records (xpack_writer_add_input, xpack_file_input.kind): the values of
 * the file's PROV kind field, defined by docs/FORMAT.md and format/xpc_format.h (XPC_INPUT_*), which are
 * normative. xpc_format.h is not installed, so they are restated here; libpack asserts at compile time
 * (writer/writer.c) that the two agree. */
#define XPACK_INPUT_PTE 1
#define XPACK_INPUT_PTD 2
#define XPACK_INPUT_OTHER 3

/* Records an input file the cache is built from (provenance and model identity). kind: XPACK_INPUT_*.
 * program_size/program_hash describe the program flatbuffer region of a .pte (0 otherwise); name is copied
 * without its folder (a path's part after the last '/': the file records file names, FORMAT.md 5.5).
 * Errors: XPACK_ERR_ARG (NULL, a name with no file name: empty or ending in '/', or kind not one of
 * XPACK_INPUT_*), XPACK_ERR_NOMEM. */
xpack_status xpack_writer_add_input(xpack_writer* w, const char* name, uint32_t kind, uint64_t file_size,
                                    uint64_t file_hash, uint64_t program_size, uint64_t program_hash,
                                    xpack_error* err);

/* Adds a free-form key/value note to the INFO table (both copied).
 * Errors: XPACK_ERR_ARG (NULL), XPACK_ERR_NOMEM. */
xpack_status xpack_writer_add_info(xpack_writer* w, const char* key, const char* value, xpack_error* err);

typedef struct xpack_writer_stats {
  uint64_t lookups;        /* look_up calls from XNNPACK */
  uint64_t reused;         /* answered from what this writer already recorded (packed once) */
  uint64_t reused_bytes;   /* bytes of those answers: packing (or storing) they saved */
  uint64_t inserts;        /* packed weights handed over by XNNPACK */
  uint64_t entries;        /* distinct keys recorded */
  uint64_t regions;        /* distinct packed byte strings stored */
  uint64_t packed_bytes;   /* bytes of every recorded packed weight (before deduplication) */
  uint64_t stored_bytes;   /* bytes of regions stored */
  uint64_t unbound;        /* packed weights not recorded: kernel or bias pointer never bound */
  uint64_t unbound_bytes;
  uint64_t nondeterministic; /* a key packed twice to different bytes (kept out of the file) */
  uint64_t no_family;        /* packed weights not recorded: no single probeable family bound to the kernel */
  uint64_t no_family_bytes;
} xpack_writer_stats;
/* The counters so far (zeroes for a NULL writer). */
void xpack_writer_stats_get(xpack_writer* w, xpack_writer_stats* out);

/* XPACK_OK while everything XNNPACK handed over has been recorded. Once a write to the temporary file has
 * failed (a full disk, a file size limit) or memory ran out, that error: XPACK_ERR_IO or XPACK_ERR_NOMEM, the
 * message naming out_path and the cause. The writer then records nothing more and xpack_writer_finish would fail the
 * same way; call xpack_writer_abort. Lets a caller tell "nothing to record" from "recording failed". */
xpack_status xpack_writer_check(xpack_writer* w, xpack_error* err);

/* Writes the index and tables, fsyncs, renames the temporary file to out_path and fsyncs the directory.
 * Frees the writer in every case. Errors: XPACK_ERR_IO, XPACK_ERR_NOMEM, XPACK_ERR_ARG (also for a writer
 * made by xpack_writer_create_unnamed, which has no out_path: see xpack_writer_finish_fd). */
xpack_status xpack_writer_finish(xpack_writer* w, xpack_error* err);

/* Finishes the file of an unnamed writer (as xpack_writer_finish, without the fsync and the rename) and
 * hands its descriptor (read and write) to *fd: the caller closes it, and the file is gone once it and
 * every mapping of it are (xpack_file_open_fd reads it). Frees the writer in every case. Errors: as
 * xpack_writer_finish; XPACK_ERR_ARG for a writer made by xpack_writer_create. */
xpack_status xpack_writer_finish_fd(xpack_writer* w, int* fd, xpack_error* err);

/* Removes the temporary file and frees the writer; out_path is left as it was. NULL is ignored. */
void xpack_writer_abort(xpack_writer* w);

/* ============================== inspection ============================== */

typedef struct xpack_file xpack_file;

/* Maps a cache file read-only and validates its structure (as xpack_cache_open, but transport-form
 * files are accepted and compatibility is reported rather than checked).
 * Errors: as xpack_cache_open, except XPACK_ERR_TRANSPORT and XPACK_ERR_INCOMPATIBLE; and
 * XPACK_ERR_UNSUPPORTED when its records name, all together, more than 16 times as many string bytes as the
 * file's STRS table holds (the entries' identities, then the strings of PROV, INFO and FAMI: FORMAT.md 8),
 * records sharing strings far more than any writer makes them, so that every tool reading them record by
 * record would do work out of proportion to the file; and XPACK_ERR_UNSUPPORTED for a transport-form file whose
 * regions declare more than 1024 times its size, and more than 64 MiB (FORMAT.md 9.2: frames expanding that far
 * are no packed weights, and none is decoded). */
xpack_status xpack_file_open(const char* path, xpack_file** out, xpack_error* err);
/* As xpack_file_open, on the file open as fd (e.g. from xpack_writer_finish_fd), which may have no name.
 * fd stays the caller's; the mapping holds the file until xpack_file_close. Messages name the file as
 * "/proc/self/fd/N" ("/dev/fd/N" without /proc); the descriptor is mapped as it is, never opened again by that
 * name. Errors: as xpack_file_open_range (XPACK_ERR_ARG for a negative fd). */
xpack_status xpack_file_open_fd(int fd, xpack_file** out, xpack_error* err);
/* As xpack_file_open, on the cache stored as the bytes [offset, offset + size) of the open file fd (an archive's
 * member: xpack_archive.h), mapped in place; name in messages. fd stays the caller's; the mapping holds the
 * bytes until xpack_file_close. Errors: XPACK_ERR_ARG (negative fd, NULL name or output), XPACK_ERR_IO (fd is
 * not a regular file), XPACK_ERR_TRUNCATED (the range ends past the file), then as xpack_file_open. */
xpack_status xpack_file_open_range(int fd, uint64_t offset, uint64_t size, const char* name, xpack_file** out,
                                   xpack_error* err);
/* Unmaps the file and frees f. NULL is ignored. */
void xpack_file_close(xpack_file* f);

/* The getters below fill *out from the open file f (index < the table's count); a NULL f gives a zeroed
 * *out, a NULL out is ignored (xpack_status.h). */

typedef struct xpack_file_info {
  uint16_t major, minor;
  uint32_t flags; /* 1 = transport form */
  uint32_t page_alignment, xnn_alignment;
  uint16_t arch;
  const char* arch_name;
  uint64_t file_size, data_offset, data_size, metadata_offset, metadata_size;
  uint64_t region_count, entry_count, input_count, info_count, family_count;
  const uint8_t* build_id; /* points into the file */
  size_t build_id_size;
  bool build_id_matches; /* this process's XNNPACK has the same build identifier */
  uint64_t stored_bytes;     /* sum of region sizes */
  uint64_t referenced_bytes; /* sum over entries of their region's size: what XNNPACK would hold without dedup */
} xpack_file_info;
void xpack_file_get_info(const xpack_file* f, xpack_file_info* out);

typedef struct xpack_file_region {
  uint64_t offset, stored_size, size, hash;
} xpack_file_region;
void xpack_file_get_region(const xpack_file* f, uint64_t index, xpack_file_region* out); /* index < count */
/* The region's bytes in the mapping (stored form), or NULL if its record is out of bounds (or f is NULL). */
const uint8_t* xpack_file_region_bytes(const xpack_file* f, uint64_t index);

typedef struct xpack_file_entry {
  uint32_t seed;
  const char* kernel; /* NUL-terminated, points into the file; "<bad string>" if out of bounds */
  const char* bias;   /* NULL when the weight has no bias */
  uint32_t region;
  uint32_t family;
  uint32_t flags;
  bool sound; /* the entry passes its check and points at a sound region */
} xpack_file_entry;
void xpack_file_get_entry(const xpack_file* f, uint64_t index, xpack_file_entry* out); /* index < count */

/* Whether a loader's look-up of entry index's own key finds and serves it: sound, flags known, identities that are
 * strings of STRS a loader can bind (not "xpack:ambiguous", 1 to XPACK_IDENTITY_MAX_LEN bytes), key hash and
 * ENTR order that a look-up follows to it, and no other entry with its key (FORMAT.md 5.3: then neither is served). Families aside (a
 * loader decides those per machine: xpack_cache_family). A binary search: false for a NULL f or index >= count. */
bool xpack_file_entry_servable(const xpack_file* f, uint64_t index);

/* Finds the entry for (seed, kernel identity, bias identity or NULL); returns its index, or -1 when the
 * file has no sound entry with that key (or f or kernel is NULL). */
int64_t xpack_file_find(const xpack_file* f, uint32_t seed, const char* kernel, const char* bias);

typedef struct xpack_file_family {
  const char* name; /* NUL-terminated, points into the file; "<bad string>" if out of bounds */
  uint32_t flags;
  uint64_t probe_hash;
  uint64_t probe_keys; /* the probe's key seeds' XXH3-64 (format 1.3); 0 in older files: not recorded */
} xpack_file_family;
void xpack_file_get_family(const xpack_file* f, uint64_t index, xpack_file_family* out); /* index < count */

typedef struct xpack_file_input {
  const char* name;
  uint32_t kind;
  uint64_t file_size, file_hash, program_size, program_hash;
} xpack_file_input;
void xpack_file_get_input(const xpack_file* f, uint64_t index, xpack_file_input* out);
void xpack_file_get_info_pair(const xpack_file* f, uint64_t index, const char** key, const char** value);
/* The value of the INFO key `key` (the first pair with that key), or NULL when the file has none. */
const char* xpack_file_info_value(const xpack_file* f, const char* key);

/* The CPU this process runs on, as `xpack pack` records it in a cache's INFO key "cpu" (docs/FORMAT.md 5.7):
 * the architecture, the number of CPUs, and each kind of core with its count, from Linux's /proc/cpuinfo:
 * "aarch64, 8 CPUs: 4 x MIDR 0x412fd050 (Cortex-A55), 4 x MIDR 0x414fd0b1 (Cortex-A76)" or
 * "x86-64, 2 CPUs: 2 x AMD EPYC"; without /proc/cpuinfo, "ARCH, CPUs not described (no /proc/cpuinfo)".
 * For people (a refusal on another machine shows both sides); nothing decides from it. Writes at most `size`
 * bytes into `out`, NUL included, truncating; returns `out`. Reads a file each call: not for hot paths.
 * XPACK_CPU_DESCRIPTION_SIZE bytes hold up to 8 kinds of Arm core (about 40 bytes each) or 4 x86 model names
 * of the kernel's longest (95 bytes); what does not fit is truncated. */
#define XPACK_CPU_DESCRIPTION_SIZE 512
const char* xpack_describe_this_cpu(char* out, size_t size);

/* ============================== verification ============================== */

/* Called once per problem: `where` names the place (e.g. "region 3 at offset 8192"), `what` the fault. */
typedef void (*xpack_problem_fn)(void* context, const char* where, const char* what);

/* Checks everything: structure and bounds (as open), the metadata and every table checksum, every region's
 * bounds, alignment, overlap and XXH3, every entry's strings, region, check value, order and key hash.
 * Returns XPACK_OK after a complete check (problems counted in *problem_count, 0 = sound) or the error that
 * stopped it from opening the file, as xpack_file_open's (then reported once through fn as well, UNSUPPORTED
 * for entries sharing their identity strings past xpack_file_open's limit included, and *problem_count is 1;
 * not XPACK_ERR_IO: a file that could not be read has no problem to report, and *problem_count is 0);
 * XPACK_ERR_ARG for a NULL path. */
xpack_status xpack_verify_file(const char* path, xpack_problem_fn fn, void* context, uint64_t* problem_count,
                               xpack_error* err);
/* As xpack_verify_file, on the cache stored as the bytes [offset, offset + size) of the open file fd (an
 * archive's member: xpack_archive.h), named `name` in reports and messages; fd stays the caller's. A range that
 * does not lie inside the file is returned as XPACK_ERR_TRUNCATED (XPACK_ERR_IO when fd is not a regular file, or
 * when the range ends past 2 GiB where off_t has 32 bits) without a report: it is the caller's account of where
 * the cache lies. Errors: those, XPACK_ERR_ARG (a
 * negative fd, a NULL name), and as xpack_verify_file. */
xpack_status xpack_verify_range(int fd, uint64_t offset, uint64_t size, const char* name, xpack_problem_fn fn,
                                void* context, uint64_t* problem_count, xpack_error* err);

/* ============================== ExecuTorch interop ============================== */

/* What happened to one entry of the cache in xpack_export_executorch. */
typedef enum xpack_export_outcome {
  XPACK_EXPORT_WRITTEN = 0,
  XPACK_EXPORT_SKIP_UNNAMED = 1,         /* kernel or bias is an unnamed constant: ExecuTorch never names it */
  XPACK_EXPORT_SKIP_NOT_EXECUTORCH = 2,  /* an identity not made from an ExecuTorch named key (C API binding) */
  XPACK_EXPORT_SKIP_AMBIGUOUS = 3,       /* another entry with another seed or other bytes has the same name */
} xpack_export_outcome;

/* Called once per cache entry, in entry order, once the output is in place (never after an error).
 * name/name_len: the entry's ExecuTorch name (kernel key + bias key), NULL when it has none; valid during
 * the call only. */
typedef void (*xpack_export_entry_fn)(void* context, uint64_t entry_index, const char* name, size_t name_len,
                                      xpack_export_outcome outcome);

typedef struct xpack_export_stats {
  uint64_t entries;                /* entries in the cache */
  uint64_t exported;               /* entries ExecuTorch will find in the output */
  uint64_t records;                /* index records written (entries equal in name, seed and region share one) */
  uint64_t skipped_unnamed;        /* by outcome, see xpack_export_outcome */
  uint64_t skipped_not_executorch;
  uint64_t skipped_ambiguous;
  uint64_t module_path_records;    /* records named by module paths, not content hashes: see the doc below */
  uint64_t regions;                /* packed weights written; records with identical bytes share one */
  uint64_t data_bytes;             /* their bytes */
  uint64_t file_size;              /* of the output; 0 when nothing was written */
} xpack_export_stats;

/* Writes the cache at cache_path as ExecuTorch's file-backed packed-weights cache (the file its XNNPACK
 * backend reads when the `packed_cache_path` option is set; XPWC trailer, version 2; docs/INTEGRATION.md),
 * so that the app starts with every exported weight already packed.
 *
 * ExecuTorch names a packed weight by the kernel's named key followed by the bias's named key (nothing
 * for no bias) and keeps one seed per name. Entries are exported under that name when both identities
 * come from ExecuTorch named keys: a content key verbatim, a module path without xpack's `#xxh3-128:`
 * suffix. Module-path names stand for whatever bytes a program binds to them, so such a file is only
 * right for the programs the cache was packed from (counted in module_path_records). Other entries are
 * skipped and counted by reason.
 *
 * The output is only valid for an app whose XNNPACK packs exactly like the one that packed the cache
 * (same build, same CPU kernel choice): ExecuTorch checks nothing but the seed. Nothing here can check
 * that; `xpack verify CACHE` on the target can (packing-family probes; with --model, a full re-pack).
 *
 * The cache is verified in full first (every checksum and region hash); a damaged cache is not exported.
 * The output is written to a temporary file beside out_path, fsynced and renamed: on any error out_path
 * is left as it was. When no entry can be exported, XPACK_OK is returned with stats->records == 0 and
 * nothing is written (ExecuTorch refuses an empty index). fn may be NULL; stats may be NULL.
 * Errors: ARG (also out_path the same file as cache_path, not a regular file, or a path no file can be made
 * at: a trailing '/', a missing folder, a name too long; checked before anything is read or written), IO
 * (reading the cache, writing the output, a folder that may not be written into), NOT_XPACK, VERSION,
 * TRUNCATED, CORRUPT (any
 * problem xpack_verify_file finds; the message names the first), TRANSPORT (run `xpack inflate`), NOMEM,
 * UNSUPPORTED (a name or a record count that ExecuTorch's index cannot hold; or entries sharing their identity
 * strings so much that they name more than 16 times the cache's STRS table, which no pack makes: refused at
 * open, as by xpack_file_open, before anything is verified or copied). */
xpack_status xpack_export_executorch(const char* cache_path, const char* out_path, xpack_export_entry_fn fn,
                                     void* context, xpack_export_stats* stats, xpack_error* err);

#ifdef __cplusplus
}
#endif
#endif /* XPACK_H */
