/* The stand-in for xnn_delete_runtime under -Wl,--wrap=xnn_delete_runtime, which the target xpack::et_adapter adds
 * to the app's link line with -Wl,--undefined=__wrap_xnn_delete_runtime. It tells the adapter that a runtime is
 * gone, so that a cache detached while ExecuTorch's runtimes still existed is closed once the last of them is
 * deleted (adapter_runtimes.h). An object of its own: an app that defines its own __wrap_xnn_create_runtime_v4
 * (tests/executorch/et_harness.cpp) still links this one. */
#include "et_adapter/adapter_runtimes.h"

enum xnn_status __real_xnn_delete_runtime(xnn_runtime_t runtime);
enum xnn_status xp_adapter_delete_stand_in(xnn_runtime_t runtime);

enum xnn_status xp_adapter_delete_stand_in(xnn_runtime_t runtime) {
  /* Claimed before XNNPACK frees the runtime: its address may then be handed to a runtime of another cache at once. */
  const uint64_t claim = xp_adapter_runtime_deleting(runtime);
  const enum xnn_status status = __real_xnn_delete_runtime(runtime);
  xp_adapter_runtime_deleted(claim); /* after: the runtime no longer reads the cache when it is closed */
  return status;
}

/* The name the linker's --wrap gives the stand-in; the adapter recognizes its own by the address of the one above. */
enum xnn_status __wrap_xnn_delete_runtime(xnn_runtime_t runtime) __attribute__((alias("xp_adapter_delete_stand_in")));
