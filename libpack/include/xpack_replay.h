/*
 * xpack_replay.h - rebuild an XNNPACK subgraph from an ExecuTorch XNNPACK delegate, exactly as
 * ExecuTorch's XNNPACK backend defines it, so that XNNPACK packs (and seeds) the same weights.
 *
 * Every static weight is announced through a bind callback with its identity (docs/FORMAT.md,
 * section 6) before it is handed to xnn_define_*, so that a recording writer or a loader can key it.
 */
#ifndef XPACK_REPLAY_H
#define XPACK_REPLAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <xnnpack.h>

#include "xpack_executorch.h"
#include "xpack_family.h"
#include "xpack_status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Receives each static weight pointer with its identity (NUL-terminated, valid during the call). */
typedef void (*xpack_bind_fn)(void* context, const void* raw, const char* identity, size_t identity_len);

typedef struct xpack_replay_external {
  uint32_t id;        /* the XNNPACK value id (== its external id) */
  bool is_input;      /* an external input (else an external output) */
  size_t bytes;       /* the tensor's size in bytes (without XNN_EXTRA_BYTES) */
  int16_t datatype;   /* serialized XNNDatatype */
} xpack_replay_external;

/* A static filter weight and the packing family of the node that uses it (xpack_family.h): what a
 * recording writer needs besides identities (xpack_writer_bind_family). */
typedef struct xpack_replay_weight_family {
  const void* kernel;  /* the filter's raw pointer, as announced through the bind callback */
  xpack_family family;
  uint32_t node;       /* the node's index in the delegate */
} xpack_replay_weight_family;

/* The most that the values of one delegate may take beyond their declared dims, in all, and still run: 256 MiB. */
#define XPACK_REPLAY_GROWTH_BUDGET (256ull << 20)

typedef struct xpack_replay_subgraph {
  xnn_subgraph_t subgraph;           /* owned: delete with xpack_replay_release */
  xpack_replay_external* externals;  /* owned, num_externals of them */
  uint32_t num_externals;
  xpack_replay_weight_family* weight_families; /* owned: one per fully-connected, convolution and
                                                  deconvolution node with a static filter */
  size_t num_weight_families;
  size_t unnamed_long;               /* weights bound to XPACK_IDENTITY_AMBIGUOUS because their identity is longer
                                        than XPACK_IDENTITY_MAX_LEN: no entry names them, XNNPACK packs them */
  void* scratch;                     /* converted scales etc.; must outlive xnn_create_runtime, no longer */
  /* What XNNPACK's reshape will make of the graph's computed values beyond their declared dims: growth_bytes in all,
   * and the value that grows most (its index in the graph's values, its computed and declared sizes; growth_bytes 0:
   * none). An exporter declares each value from its upper bounds, or from size hints where a dim has none, so a
   * real program's values grow little if at all; but XNNPACK plans the computed sizes at reshape, and a 7 KB program
   * with a convolution padded 250,000 high made `xpack run` take 1.3 GB. grows: growth_bytes exceeds
   * XPACK_REPLAY_GROWTH_BUDGET, and xpack_execute_runtime refuses to run the graph; packing it is harmless (nothing
   * is reshaped). */
  uint64_t growth_bytes;
  bool grows;
  uint32_t grown_value;
  uint64_t grown_bytes, grown_declared_bytes;
} xpack_replay_subgraph;

/* Defines `graph`'s values and nodes into a new subgraph. Constants resolve through `sources`.
 * bind may be NULL. On failure nothing is left allocated and the message names the delegate, the node
 * index and type (e.g. "m.pte: execution_plan[1].delegates[0]: node 12 (ScaledDotProductAttention):
 * XNNPACK cannot define this node").
 * Errors: XPACK_ERR_UNSUPPORTED (a node or datatype this XNNPACK cannot define), XPACK_ERR_BAD_INPUT
 * (ids or constants that do not resolve, or a value or node XNNPACK refuses to define with these parameters:
    * the file's graph is wrong, the message names it), XPACK_ERR_NOMEM (also when XNNPACK runs out of memory
    * defining), XPACK_ERR_XNNPACK (creating the subgraph, or a define call failing for another reason, such as
 * XNNPACK not initialized), XPACK_ERR_ARG (graph or out NULL). */
xpack_status xpack_replay_define(const xpack_et_xnn_graph* graph, const xpack_et_named_sources* sources,
                                 xpack_bind_fn bind, void* bind_context, xpack_replay_subgraph* out, xpack_error* err);

/* After xnn_reshape_runtime: checks that every external value's size, as XNNPACK's reshape computed it,
 * equals externals[i].bytes, the size its declared dims give and the size callers allocate. A program
 * whose declared output dims are smaller than what its graph computes would make XNNPACK write past the
 * buffer. Errors: XPACK_ERR_BAD_INPUT naming the value and both sizes, XPACK_ERR_XNNPACK when XNNPACK
 * reports no shape for an external id, XPACK_ERR_ARG for a NULL runtime or replay. */
xpack_status xpack_replay_check_externals(xnn_runtime_t runtime, const xpack_replay_subgraph* replay,
                                          xpack_error* err);

/* xnn_create_runtime_v4 over replay's subgraph with `provider` (NULL: none), no threadpool and no flags, and a
 * workspace of the runtime's own that this function allocates: XNNPACK 4ea82e5, left to allocate it, crashes when
 * it cannot. The runtime is xpack's own (xpack_creating_own_runtime): the ExecuTorch adapter's wrapper passes
 * `provider` through, also while a cache is attached. Returns XNNPACK's status (xnn_status_out_of_memory also when the workspace cannot be allocated;
 * xnn_status_invalid_parameter for a NULL replay, subgraph or runtime); *runtime is the caller's to delete. */
enum xnn_status xpack_replay_create_runtime(const xpack_replay_subgraph* replay,
                                            struct xnn_weights_cache_provider* provider, xnn_runtime_t* runtime);

/* Once xnn_create_runtime has returned, deletes the subgraph and frees the converted scales, as
 * ExecuTorch does when it has compiled a delegate: the runtime holds what it needs, and keeping them
 * would count their pages against the running model. externals and weight_families stay until
 * xpack_replay_release. Safe to call twice; NULL is ignored. */
void xpack_replay_drop_definition(xpack_replay_subgraph* replay);

/* Receives one weight XNNPACK will look up: its key exactly as XNNPACK builds it (seed, and the kernel and
 * bias pointers the graph's constants resolve to through the same sources) and the number of bytes of
 * packed weights XNNPACK reads for it (valid during the call). */
typedef void (*xpack_size_fn)(void* context, const struct xnn_weights_cache_look_up_key* key, size_t packed_size);

/* An xpack_bind_fn and an xpack_size_fn whose context is an xpack_cache* (xpack_loader.h): xpack_cache_bind
 * and xpack_cache_bind_size. A binding that fails (an identity too long, the kernel not bound, no memory)
 * leaves the pointer unbound or the key unsized: its look-ups miss, and the cache's counters say why. */
void xpack_replay_bind_to_cache(void* cache, const void* raw, const char* identity, size_t identity_len);
void xpack_replay_size_to_cache(void* cache, const struct xnn_weights_cache_look_up_key* key, size_t packed_size);

/* Asks this process's XNNPACK, for every fully-connected, convolution, depthwise-convolution and
 * deconvolution node of `graph` with a static filter, which key it will look the filter up with and how
 * many bytes it will read on a hit, and reports each through `report`: what a loader needs to refuse a
 * region shorter than what XNNPACK reads (xpack_cache_bind_size). Each node is defined alone in a subgraph
 * of its own and XNNPACK stops before packing: no weight byte is read or packed. Costs one small runtime
 * creation per node (tens of microseconds). The graph gets the replay's checks first. A node XNNPACK will not
 * create alone is not reported (its weights then miss, and are packed as usual).
 * Errors: as xpack_replay_define's checks (XPACK_ERR_BAD_INPUT naming the value or node), XPACK_ERR_NOMEM,
 * XPACK_ERR_XNNPACK (XNNPACK not initialized), XPACK_ERR_ARG (graph or report NULL). */
xpack_status xpack_replay_size_weights(const xpack_et_xnn_graph* graph, const xpack_et_named_sources* sources,
                                       xpack_size_fn report, void* context, xpack_error* err);

struct xpack_cache; /* xpack_loader.h */

/* xpack_replay_size_weights into cache (xpack_cache_bind_size), for the nodes of the packing families the cache
 * serves on this machine only (xpack_cache_family, which probes a family not yet decided): a node of another
 * family, or of one the file has no entry of, is not sized, since its entries would be refused or not found
 * whatever their size. That spares its runtime creation, and XNNPACK's failure path where it is unsafe (92a7ad50
 * corrupts its heap when an fp16 fully-connected node fails to create on a CPU without fp16 arithmetic).
 * Errors: as xpack_replay_size_weights (XPACK_ERR_ARG: graph or cache NULL). */
xpack_status xpack_replay_size_weights_for_cache(const xpack_et_xnn_graph* graph, const xpack_et_named_sources* sources,
                                                 struct xpack_cache* cache, xpack_error* err);

/* Frees everything the replay owns (the subgraph, unless dropped already). Safe on a zeroed replay;
 * NULL is ignored. */
void xpack_replay_release(xpack_replay_subgraph* replay);

#ifdef __cplusplus
}
#endif
#endif
