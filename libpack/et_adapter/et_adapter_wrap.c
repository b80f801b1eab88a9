/* Linked only when the app links with -Wl,--wrap=xnn_create_runtime_v4 (nothing else references this
 * object, so it costs nothing otherwise): every XNNPACK runtime ExecuTorch creates gets xpack's
 * provider once xpack_et_adapter_attach succeeded (ExecuTorch's own provider, if any, is not used). */
#include "xpack_et_adapter.h"

enum xnn_status __real_xnn_create_runtime_v4(xnn_subgraph_t, xnn_weights_cache_t, xnn_workspace_t, pthreadpool_t,
                                             uint32_t, xnn_runtime_t*);

enum xnn_status __wrap_xnn_create_runtime_v4(xnn_subgraph_t subgraph, xnn_weights_cache_t cache,
                                             xnn_workspace_t workspace, pthreadpool_t threadpool, uint32_t flags,
                                             xnn_runtime_t* runtime_out) {
  struct xnn_weights_cache_provider* xpack = xpack_et_adapter_provider();
  return __real_xnn_create_runtime_v4(subgraph, xpack ? xpack : cache, workspace, threadpool, flags, runtime_out);
}
