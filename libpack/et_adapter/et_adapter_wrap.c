/* The stand-in for xnn_create_runtime_v4 under -Wl,--wrap=xnn_create_runtime_v4, which the target
 * xpack::et_adapter adds to the app's link line together with -Wl,--undefined=__wrap_xnn_create_runtime_v4, so
 * that this object is linked wherever the archives fall on the line (libpack/CMakeLists.txt). Every XNNPACK
 * runtime ExecuTorch creates gets xpack's provider once xpack_et_adapter_attach succeeded (ExecuTorch's own
 * provider, if any, is not used); the runtimes xpack creates for itself pass through as they are. An app with
 * a wrapper of its own defines the symbol itself, and this object is then not linked. Each runtime created with
 * xpack's provider is recorded (adapter_runtimes.h), so that detach can tell whether it may close the cache. */
#include "et_adapter/adapter_runtimes.h"
#include "xpack_et_adapter.h"

enum xnn_status __real_xnn_create_runtime_v4(xnn_subgraph_t, xnn_weights_cache_t, xnn_workspace_t, pthreadpool_t,
                                             uint32_t, xnn_runtime_t*);

enum xnn_status __wrap_xnn_create_runtime_v4(xnn_subgraph_t subgraph, xnn_weights_cache_t cache,
                                             xnn_workspace_t workspace, pthreadpool_t threadpool, uint32_t flags,
                                             xnn_runtime_t* runtime_out) {
  /* xpack's own runtimes (a family probe, the sizing of weights) keep the provider they pass: a probe of another
   * cache judged through this one would find nothing packed and refuse its family for the whole process. */
  xpack_cache* attached = xpack_creating_own_runtime() ? NULL : xpack_et_adapter_cache();
  struct xnn_weights_cache_provider* xpack = xpack_cache_provider(attached);
  const enum xnn_status status =
      __real_xnn_create_runtime_v4(subgraph, xpack ? xpack : cache, workspace, threadpool, flags, runtime_out);
  /* Its packed weights are the cache's: a detach before its deletion must leave the cache open. */
  if (status == xnn_status_success && xpack != NULL) xp_adapter_runtime_created(*runtime_out, attached);
  return status;
}
