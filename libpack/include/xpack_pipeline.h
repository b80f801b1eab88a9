/*
 * xpack_pipeline.h - the pack pipeline: ExecuTorch programs in, a cache file out (library xpack_pipeline).
 *
 * What `xpack pack` does, as a library: open the programs (.pte) and weight files (.ptd) as a model set,
 * replay every XNNPACK delegate through one recording writer (xpack.h) on one or more threads, and write
 * the cache file, mappable or in the zstd transport form (xpack_transport.h). The same model set and
 * delegate walk serve running delegates with or without a cache (xpack run, verify, bench).
 *
 * Nothing here prints. What a person may want to read (a skipped delegate, a delegate that could not be
 * packed, weights packed but not recorded) reaches the caller through an xpack_message_fn; "nothing to pack"
 * is a result in the report, not an error. Errors follow xpack_status.h.
 */
#ifndef XPACK_PIPELINE_H
#define XPACK_PIPELINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "xpack.h"
#include "xpack_executorch.h"
#include "xpack_replay.h"
#include "xpack_status.h"
#include "xpack_transport.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Messages ---------------------------------------------------------------------------------------- */

typedef enum xpack_message_kind {
  XPACK_MESSAGE_NOTE = 0,    /* worth telling unless asked for quiet: a skipped delegate, a .ptd given as a program */
  XPACK_MESSAGE_DETAIL = 1,  /* only when asked for: a delegate packed, and in how long */
  XPACK_MESSAGE_WARNING = 2, /* weights packed but not recorded: the cache is written without them */
  XPACK_MESSAGE_ERROR = 3,   /* a delegate that could not be packed: the pack goes on without it */
} xpack_message_kind;

/* Receives one message: `text` is one line without a trailing newline or a "note:"-style prefix, valid
 * during the call only. Called on the thread that called the pipeline function, in delegate order. */
typedef void (*xpack_message_fn)(void* context, xpack_message_kind kind, const char* text);

/* ---- The model set: the ExecuTorch files one pack (or run) works on ---------------------------------- */

#define XPACK_MODEL_SET_MAX_FILES 64

typedef struct xpack_model_file {
  const char* path; /* the caller's string: it must outlive the set */
  uint64_t size;
  uint64_t program_size, program_hash; /* .pte: the program flatbuffer region and its XXH3-64 (provenance) */
  uint64_t device, inode;              /* which file holds it: a set holds each file (or member) once */
  char* archive;          /* for a member of an archive (xpack_model_input.archive): the set's copy of its path */
  uint64_t archive_offset;/* and where the member's bytes start in it */
  const void* mapping;    /* the set's mapping of a member's pages (xp_map_range), released by the close */
  uint64_t mapping_size;
} xpack_model_file;

/* The set owns the opened files; fields are read-only for the caller. */
typedef struct xpack_model_set {
  size_t program_count, ptd_count;
  xpack_et_program* programs[XPACK_MODEL_SET_MAX_FILES];
  xpack_et_ptd* ptds[XPACK_MODEL_SET_MAX_FILES];
  xpack_model_file program_files[XPACK_MODEL_SET_MAX_FILES];
  xpack_model_file ptd_files[XPACK_MODEL_SET_MAX_FILES];
  unsigned flags; /* XPACK_MODEL_SET_*, set by xpack_model_set_init */
} xpack_model_set;

typedef enum xpack_model_kind {
  XPACK_MODEL_PROGRAM = 0, /* a .pte; a .ptd given as one is taken as weights, with a note */
  XPACK_MODEL_DATA = 1,    /* a .ptd whose named weights the programs use */
} xpack_model_kind;

typedef struct xpack_model_input {
  const char* path;      /* the file; for a member of an archive, only its name in messages and the cache's inputs */
  xpack_model_kind kind;
  /* NULL for a file. Otherwise the file is the bytes [archive_offset, archive_offset + archive_size) of the
   * archive at this path (an APK's asset stored as it is, found with xpack_archive_find), mapped in place. */
  const char* archive;
  uint64_t archive_offset, archive_size;
} xpack_model_input;

/* Flags of xpack_model_set_init. */
enum {
  /* Hash every program's flatbuffer region (program_hash), as pack and run need for provenance. Without
   * it program_hash stays 0 and nothing reads the programs' bytes beyond what parsing needs. */
  XPACK_MODEL_SET_HASH_PROGRAMS = 1,
  /* Open every file with XPACK_ET_OPEN_WEIGHTS_ON_DEMAND: for a process whose packed weights come from a
   * cache, which on a full hit then never reads the raw weights (xpack_executorch.h). */
  XPACK_MODEL_SET_WEIGHTS_ON_DEMAND = 2,
};
/* An empty set, with XPACK_MODEL_SET_* flags. */
void xpack_model_set_init(xpack_model_set* set, unsigned flags);
/* Undoes XPACK_MODEL_SET_WEIGHTS_ON_DEMAND for every file of the set: for when the cache turned out refused
 * (xpack_cache_refusal) after the files were opened, so that XNNPACK, packing every weight, reads them in
 * large reads. Call it before replaying. Safe on any set. */
void xpack_model_set_read_weights_ahead(const xpack_model_set* set);

/* Opens one more file into the set, in the order given (which is the order of the cache's inputs).
 * A .ptd given as a program is added as weights, with a note through `on_message` (may be NULL).
 * A file the set already holds (the same device and inode, under any path and as either kind; for a member of
 * an archive, the same archive and offset) is refused: given twice, it is most likely a slip for another file
 * (a second .ptd), which using it once would hide until a named key is missing.
 * A member of an archive is parsed where it lies, as a file of its bytes would be, and never read on demand
 * (XPACK_MODEL_SET_WEIGHTS_ON_DEMAND applies to files).
 * Errors: XPACK_ERR_ARG (NULL argument, the file already in the set, or XPACK_MODEL_SET_MAX_FILES files of
 * that kind already),
 * XPACK_ERR_IO (unreadable), XPACK_ERR_TRUNCATED (a member's range ends past its archive), and those of
 * xpack_et_program_open / xpack_et_ptd_open; the message names the file. On error the set keeps what it
 * held: close it. */
xpack_status xpack_model_set_add(xpack_model_set* set, const xpack_model_input* input, xpack_message_fn on_message,
                                 void* message_context, xpack_error* err);

/* Closes every file of the set and empties it. Safe on an empty or zeroed set. */
void xpack_model_set_close(xpack_model_set* set);

/* The named-key sources for program i: the .ptd files, then the program. Borrowed from the set. All zero for a
 * NULL set or a program not in it. */
xpack_et_named_sources xpack_model_set_sources(const xpack_model_set* set, size_t program);

/* A short name for messages: the path's base name (a pointer into `path`; NULL for NULL). */
const char* xpack_model_base_name(const char* path);

/* ---- Walking and running delegates ------------------------------------------------------------------- */

typedef struct xpack_delegate_ref {
  size_t program, method, delegate;
  const char* file;        /* base name of the program */
  const char* method_name; /* "" when unnamed */
  const xpack_et_delegate* info;
} xpack_delegate_ref;

/* Called for every delegate of every method of every program, in file order. Returns 0 to go on, anything
 * else to stop the walk and have xpack_for_each_delegate return it. */
typedef int (*xpack_delegate_fn)(void* context, const xpack_model_set* set, const xpack_delegate_ref* ref);

/* Walks the delegates of `only_method` (every method when NULL). Returns 0 or what `fn` stopped with; 0 with
 * nothing walked for a NULL set or fn. */
int xpack_for_each_delegate(const xpack_model_set* set, const char* only_method, xpack_delegate_fn fn, void* context);

/* What a replayed delegate's weights are bound to while XNNPACK creates its runtime. */
typedef enum xpack_bind_kind {
  XPACK_BIND_NONE = 0,      /* no binding, no provider: XNNPACK packs as without a cache */
  XPACK_BIND_CACHE = 1,     /* object is an xpack_cache*: its provider, xpack_cache_bind, the sizes XNNPACK reads
                               (xpack_replay_size_weights into xpack_cache_bind_size), xpack_cache_unbind_all */
  XPACK_BIND_WRITER = 2,    /* object is an xpack_writer*: its provider, xpack_writer_bind (and every filter's
                               packing family, xpack_writer_bind_family), xpack_writer_unbind_all */
  XPACK_BIND_CALLBACKS = 3, /* another weights cache: `provider`, `bind` and `unbind` below, with object */
} xpack_bind_kind;

typedef struct xpack_bind_target {
  xpack_bind_kind kind;
  void* object;
  struct xnn_weights_cache_provider* provider; /* CALLBACKS only (may be NULL) */
  xpack_bind_fn bind;                          /* CALLBACKS only (may be NULL) */
  void (*unbind)(void* object);                /* CALLBACKS only (may be NULL) */
} xpack_bind_target;

#define XPACK_RUN_MAX_OUTPUTS 16

typedef struct xpack_run_result {
  double create_ms;
  double first_inference_ms;
  size_t num_outputs;
  uint64_t output_hash[XPACK_RUN_MAX_OUTPUTS]; /* XXH3-64 of each output, in external-value order */
  size_t weights_not_recorded; /* XPACK_BIND_WRITER: weights whose packing family the writer refused */
  xpack_error not_recorded;    /* why the first of them was refused */
  size_t weights_unnamed_long; /* XPACK_BIND_WRITER: weights left unnamed, their identity being longer than
                                  XPACK_IDENTITY_MAX_LEN (xpack_replay_subgraph.unnamed_long): not recorded */
} xpack_run_result;

/* Replays the delegate, creates a runtime binding weights to `target`, unbinds right after creation, and
 * when `execute` is true runs it once with inputs seeded from (method, delegate, input). `out` is always
 * filled (zero where nothing was measured). XNNPACK must be initialized (xnn_initialize). Errors: as xpack_et_xnn_graph_open and xpack_replay_define,
 * XPACK_ERR_ARG for a NULL argument or a ref whose program is not in the set, XPACK_ERR_NOMEM (also when XNNPACK
 * runs out of memory creating the runtime, and with XPACK_BIND_WRITER when binding a weight or its packing family
 * does), and XPACK_ERR_XNNPACK for other runtime failures; when executing, also xpack_execute_runtime's. The
 * message names file, method and delegate. */
xpack_status xpack_run_delegate(const xpack_model_set* set, const xpack_delegate_ref* ref,
                                const xpack_bind_target* target, bool execute, xpack_run_result* out,
                                xpack_error* err);

/* Runs a created runtime once with inputs seeded as xpack_run_delegate seeds them, and sets
 * out->first_inference_ms (reshape + setup + invoke), num_outputs and output_hash (0 and none on an error); the
 * other fields of out are left as they are. The runtime stays the caller's. The runtime is reshaped, and its external values checked against their declared dims, before any
 * input or output buffer is allocated; a graph whose values grow (replay->grows) is not reshaped at all.
 * Errors: XPACK_ERR_ARG for a NULL argument, XPACK_ERR_BAD_INPUT (replay->grows: its values would take more than
 * XPACK_REPLAY_GROWTH_BUDGET beyond their declared dims; or an external value's declared dims give other bytes than
 * XNNPACK's reshape), XPACK_ERR_NOMEM, XPACK_ERR_XNNPACK (the message names file, method and delegate). */
xpack_status xpack_execute_runtime(xnn_runtime_t runtime, const xpack_replay_subgraph* replay,
                                   const xpack_delegate_ref* ref, xpack_run_result* out, xpack_error* err);

/* ---- Packing ------------------------------------------------------------------------------------------ */

typedef enum xpack_pack_order {
  XPACK_PACK_ORDER_FILE = 0,    /* workers take delegates in file order (the default) */
  XPACK_PACK_ORDER_REVERSE = 1, /* for tests: last first, so regions reach the writer out of file order and
                                   the writer's re-ordering runs; the file is the same bytes */
} xpack_pack_order;

/* Progress: called once with delegates_done 0 when the number of delegates is known, then once per finished
 * delegate with the bytes packed so far. With jobs > 1 it is called from the worker threads, possibly at
 * the same time: it must be thread-safe and quick. */
typedef void (*xpack_progress_fn)(void* context, uint64_t delegates_done, uint64_t delegates_total,
                                  uint64_t packed_bytes);

typedef struct xpack_pack_options {
  const char* output_path; /* the cache file to write (xpack_pack_set, xpack_pack_files); NULL only when the
                              set holds no program */
  uint32_t page_alignment; /* of large regions: 0 (4096), 4096 or 16384 (xpack_writer_options) */
  int jobs;                /* delegates replayed at once, and compression threads; <= 1: one */
  xpack_pack_order order;  /* with jobs > 1 */
  int zstd_level; /* 0: the mappable form; XPACK_ZSTD_LEVEL_MIN..MAX: the transport form at that level */
  xpack_message_fn on_message; /* may be NULL */
  void* message_context;
  xpack_progress_fn on_progress; /* may be NULL */
  void* progress_context;
} xpack_pack_options;

typedef enum xpack_pack_result {
  XPACK_PACK_WRITTEN = 0, /* output_path holds the cache */
  XPACK_PACK_NOTHING = 1, /* nothing to pack (report->nothing_to_pack says why); no file was written */
} xpack_pack_result;

typedef struct xpack_pack_report {
  xpack_pack_result result;
  char nothing_to_pack[256]; /* XPACK_PACK_NOTHING: why, e.g. "no XNNPACK delegate in the given program" */
  size_t xnnpack, packed, not_packed, skipped; /* delegates: XNNPACK ones, packed, not packed; other backends */
  xpack_error first_error;    /* of the first XNNPACK delegate not packed (not_packed > 0) */
  xpack_writer_stats stats;   /* the writer's, once the delegates are packed */
  xpack_transport_stats transport; /* zstd_level > 0 and written */
  bool failed_on_input; /* set with an error return: the error is about an input file or a malformed delegate,
                           not about the output or resources */
} xpack_pack_report;

/* Records the inputs' provenance and the xpack and XNNPACK versions into `writer`, and replays every
 * XNNPACK delegate of `set` into it with options->jobs threads (the caller's among them) in options->order;
 * output_path, page_alignment and zstd_level are not used. XNNPACK must be initialized (xnn_initialize).
 * A delegate that cannot be packed (XNNPACK cannot define or create it here) is counted and reported through
 * on_message (XPACK_MESSAGE_ERROR), and the pack goes on. The writer stays the caller's: finish or abort it.
 * Errors: XPACK_ERR_BAD_INPUT or XPACK_ERR_IO for a malformed delegate (no delegate is started after it;
 * report->failed_on_input is set), XPACK_ERR_NOMEM (out of memory anywhere, also inside XNNPACK or for a weight's
 * binding: no delegate is started after it, so that no file short of entries is written), XPACK_ERR_ARG. */
xpack_status xpack_pack_into_writer(const xpack_model_set* set, xpack_writer* writer,
                                    const xpack_pack_options* options, xpack_pack_report* report, xpack_error* err);

/* The output checks of xpack_pack_set (one of the inputs by device and inode, not a regular file, no file can be
 * made there, a folder that may not be written into, a name of xpack's temporary files' form), for a caller that
 * refuses a bad output before it opens and hashes the inputs. inputs: paths (count of them) as given; one that
 * names no file (a member of an archive, ARCHIVE!/MEMBER) is not compared: xpack_pack_set checks its archive.
 * Errors: XPACK_ERR_ARG, XPACK_ERR_IO, as xpack_pack_set's for its output. */
xpack_status xpack_pack_check_output(const char* output_path, const char* const* inputs, size_t count,
                                     xpack_error* err);

/* Packs `set` into a new cache file at options->output_path: the mappable form, or with zstd_level > 0
 * the mappable form as a file without a name beside it (xpack_writer_create_unnamed), compressed into
 * output_path (xpack_compress_file_threads) and gone then, or when the process ends however it ends. Nothing to pack (no program, no XNNPACK delegate, or no weight
 * XNNPACK packs that a loader could check) is XPACK_OK with report->result XPACK_PACK_NOTHING and no file.
 * Initializes XNNPACK (xnn_initialize) when it has not been.
 * Errors: XPACK_ERR_ARG for a NULL argument, a page_alignment other than 0, 4096 or 16384, a zstd_level
 * out of range, or an output_path that is one of the set's files (by device and inode), not a regular
 * file, or a path no file can be made at (a trailing '/', a missing folder, a name too long): checked before
 * any delegate is packed, nothing is written; XPACK_ERR_BAD_INPUT (report->failed_on_input set, nothing packed or
 * written) when two programs give one content key (a named key trusted as the SHA-256 of its bytes) different
 * bytes, which a cache would serve as one weight; those of xpack_pack_into_writer; XPACK_ERR_XNNPACK when XNNPACK
 * does not support this CPU; XPACK_ERR_IO (also, before any packing, a folder that may not be written into)
 * and the writer's and compressor's errors for the output (no partial
 * file is left); when every XNNPACK delegate failed, the first one's status with the message
 * "no delegate could be packed; first error: ...". */
xpack_status xpack_pack_set(const xpack_model_set* set, const xpack_pack_options* options, xpack_pack_report* report,
                            xpack_error* err);

/* Opens `inputs` (count of them, in order) as a model set and packs it with xpack_pack_set, then closes it.
 * Errors: those of xpack_model_set_add (report->failed_on_input set) and of xpack_pack_set. */
xpack_status xpack_pack_files(const xpack_model_input* inputs, size_t count, const xpack_pack_options* options,
                              xpack_pack_report* report, xpack_error* err);

#ifdef __cplusplus
}
#endif
#endif /* XPACK_PIPELINE_H */
