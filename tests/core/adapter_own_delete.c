/* An app's own stand-in for xnn_delete_runtime, as an app that wraps deletion for itself has (tests/core/adapter_detach.c:
 * the adapter must see that deletions do not reach its own). */
#include <xnnpack.h>

enum xnn_status __real_xnn_delete_runtime(xnn_runtime_t runtime);
enum xnn_status __wrap_xnn_delete_runtime(xnn_runtime_t runtime);

enum xnn_status __wrap_xnn_delete_runtime(xnn_runtime_t runtime) { return __real_xnn_delete_runtime(runtime); }
