/* ExecuTorch's file-backed packed-weights cache (the file behind its XNNPACK backend's `packed_cache_path`),
 * as far as xpack writes it. Facts from ExecuTorch's backends/xnnpack/runtime/XNNWeightsCache.{h,cpp}:
 *
 *   file    = packed data | index | footer (20 bytes, the last bytes of the file)
 *   index   = records, each: u32 name_len, name bytes, u64 file_offset, u64 size, u32 seed
 *   footer  = u64 index_start, u32 record_count, u32 magic 0x58505743 ("XPWC"), u32 version 2
 *
 * All little-endian. The loader maps the whole file and points XNNPACK at base + file_offset, so every
 * region must start at a multiple of XNNPACK's 64-byte allocation alignment; it accepts a region only
 * inside [0, index_start) and a footer only with index_start < file size - 20 (so an empty index is
 * refused). It keeps one record per name (the last one read) and a look-up hits only when the seed is
 * equal as well. */
#ifndef XPACK_SRC_EXPORT_EXECUTORCH_H
#define XPACK_SRC_EXPORT_EXECUTORCH_H

#include <stddef.h>
#include <stdint.h>

#define XPWC_MAGIC 0x58505743u /* bytes "CWPX" on disk */
#define XPWC_VERSION 2u
#define XPWC_FOOTER_SIZE 20
#define XPWC_RECORD_FIXED_SIZE 24 /* u32 name_len + u64 file_offset + u64 size + u32 seed */
#define XPWC_MIN_ALIGNMENT 64     /* ExecuTorch's kPackedAllocationAlignment (XNN_ALLOCATION_ALIGNMENT) */

/* How an xpack identity (docs/FORMAT.md section 6) relates to ExecuTorch's naming. */
typedef enum xp_et_name_kind {
  XP_ET_NAME_CONTENT_KEY = 0, /* a content-hash named key: the identity is the name (and a packing suffix) */
  XP_ET_NAME_MODULE_PATH = 1, /* another named key: the identity is name + "#xxh3-128:<hex>:<size>" */
  XP_ET_NAME_UNNAMED = 2,     /* "xpack:...": a constant without a named key */
  XP_ET_NAME_OTHER = 3,       /* anything else: bound through the C API, not from an ExecuTorch program */
} xp_et_name_kind;

/* Classifies identity[0, len) and sets *name_len to the length of its ExecuTorch name prefix (the whole
 * identity for a content key, the part before the suffix for a module path, 0 otherwise). */
xp_et_name_kind xp_et_name_of_identity(const char* identity, size_t len, size_t* name_len);

#endif
