/* xpack's own XNNPACK runtimes: a packing family's probe (loader/probe.c) and the sizing of weights
 * (replay/replay_sizes.c). Each passes the provider it must use: the probe captures what XNNPACK packs, the
 * sizing records what XNNPACK reads. An app that wraps xnn_create_runtime_v4 to substitute its provider (the
 * ExecuTorch adapter) must pass these through, so they are created here, where xpack_creating_own_runtime
 * (xpack_loader.h) can tell them from the app's. */
#ifndef XPACK_LOADER_OWN_RUNTIME_H
#define XPACK_LOADER_OWN_RUNTIME_H

#include <xnnpack.h>

/* xnn_create_runtime_v4(subgraph, provider, workspace, NULL, 0, runtime) with a workspace of xpack's own when
 * workspace is NULL: XNNPACK 4ea82e5 allocates one itself then, and when that allocation fails it goes on with a
 * NULL workspace and crashes (found by failing each allocation of `xpack pack` in turn). Returns XNNPACK's status,
 * xnn_create_workspace's when that fails. The runtime keeps its own reference to the workspace. */
enum xnn_status xp_create_runtime(xnn_subgraph_t subgraph, struct xnn_weights_cache_provider* provider,
                                  xnn_workspace_t workspace, xnn_runtime_t* runtime);

/* xp_create_runtime, marked as xpack's own for the calling thread while it runs. */
enum xnn_status xp_create_own_runtime(xnn_subgraph_t subgraph, struct xnn_weights_cache_provider* provider,
                                      xnn_workspace_t workspace, xnn_runtime_t* runtime);

#endif
