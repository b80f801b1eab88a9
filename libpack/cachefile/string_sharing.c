/* The bound on string bytes named per byte of STRS: see string_sharing.h. */
#include "cachefile/string_sharing.h"

#include <string.h>

#include "common/le.h"
#include "xpc_format.h"

/* The length of the string at offset (its span: its bytes are not read), or 0 when none is there (verify reports
 * it). */
static uint64_t named_length(const xp_view* v, uint32_t offset) {
  const char* s;
  uint32_t len;
  return offset != XPC_NONE && xp_view_string_span(v, offset, &s, &len) == 0 ? len : 0;
}

/* Adds the strings at the u32 fields `fields` (byte offsets, count of them) of every record of table t. */
static int add_table(const xp_view* v, const xp_table* t, uint32_t tag, const uint32_t* fields, int count,
                     uint64_t limit, xp_string_sharing* out) {
  for (uint64_t i = 0; i < t->count; i++) {
    const uint8_t* record = v->base + t->offset + i * t->record_size;
    for (int f = 0; f < count; f++) out->named += named_length(v, xp_le32(record + fields[f]));
    if (out->named > limit) {
      *out = (xp_string_sharing){tag, t->offset, i, t->count, out->named};
      return 1;
    }
  }
  return 0;
}

int xp_view_strings_overshared(const xp_view* v, xp_string_sharing* out) {
  memset(out, 0, sizeof *out);
  const uint64_t limit = XP_STRING_BYTES_PER_STRS_BYTE * v->strings.count; /* STRS < 2^32 bytes (xp_view_open) */
  static const uint32_t kEntry[] = {XPC_E_KERNEL, XPC_E_BIAS}, kInput[] = {XPC_P_NAME},
                        kInfo[] = {XPC_I_KEY, XPC_I_VALUE}, kFamily[] = {XPC_M_NAME};
  if (add_table(v, &v->entries, XPC_TAG_ENTRIES, kEntry, 2, limit, out) ||
      add_table(v, &v->provenance, XPC_TAG_PROVENANCE, kInput, 1, limit, out) ||
      add_table(v, &v->info, XPC_TAG_INFO, kInfo, 2, limit, out) ||
      add_table(v, &v->families, XPC_TAG_FAMILIES, kFamily, 1, limit, out)) {
    return 1;
  }
  out->named = 0;
  return 0;
}
