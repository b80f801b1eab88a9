/* libFuzzer harness: arbitrary bytes as a .pte (then every XNNPACK delegate parsed and every
 * constant resolved through the inspection path) and as a .ptd. */
#include <stddef.h>
#include <stdint.h>

#include "xpack_executorch.h"

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  xpack_error err;
  xpack_et_program* p = NULL;
  if (xpack_et_program_open_memory(data, size, "fuzz.pte", &p, &err) == XPACK_OK) {
    xpack_et_summary* s = NULL;
    if (xpack_et_summarize(p, NULL, &s, &err) == XPACK_OK) xpack_et_summary_free(s);
    xpack_et_program_close(p);
  }
  xpack_et_ptd* t = NULL;
  if (xpack_et_ptd_open_memory(data, size, "fuzz.ptd", &t, &err) == XPACK_OK) {
    const xpack_et_ptd_info* info = xpack_et_ptd_get_info(t);
    for (size_t i = 0; i < info->entry_count; i++) {
      (void)xpack_et_ptd_find(t, info->entries[i].key, info->entries[i].key_len);
    }
    xpack_et_ptd_close(t);
  }
  return 0;
}
