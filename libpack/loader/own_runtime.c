/* Runtimes xpack creates for itself: see own_runtime.h. */
#include "loader/own_runtime.h"

#include "xpack_loader.h"

/* Per thread: an app's runtime created on another thread at the same moment is the app's. A count, not a flag,
 * in case a wrapped creation ever nests. */
static _Thread_local unsigned g_own_depth;

enum xnn_status xp_create_runtime(xnn_subgraph_t subgraph, struct xnn_weights_cache_provider* provider,
                                  xnn_workspace_t workspace, xnn_runtime_t* runtime) {
  xnn_workspace_t own = NULL;
  if (workspace == NULL) {
    const enum xnn_status made = xnn_create_workspace(&own);
    if (made != xnn_status_success) return made;
    workspace = own;
  }
  const enum xnn_status status = xnn_create_runtime_v4(subgraph, provider, workspace, NULL, 0, runtime);
  if (own != NULL) xnn_release_workspace(own);
  return status;
}

enum xnn_status xp_create_own_runtime(xnn_subgraph_t subgraph, struct xnn_weights_cache_provider* provider,
                                      xnn_workspace_t workspace, xnn_runtime_t* runtime) {
  g_own_depth++;
  const enum xnn_status status = xp_create_runtime(subgraph, provider, workspace, runtime);
  g_own_depth--;
  return status;
}

int xpack_creating_own_runtime(void) { return g_own_depth != 0; }
