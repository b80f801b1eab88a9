/* How many string bytes a file's records name against the bytes of STRS: the bound on work per record. */
#ifndef XPACK_CACHEFILE_STRING_SHARING_H
#define XPACK_CACHEFILE_STRING_SHARING_H

#include <stdint.h>

#include "cachefile/cache_view.h"

/* Records name their strings by STRS offset and a writer stores each string once, so any number of records may
 * name one string. A writer's records name at most about as many string bytes as STRS holds (entries 0.4 to 0.8
 * times in the real caches measured: a weight appears under the few seeds of its packing families; every input
 * name, INFO key and value and family name once). Whatever reads the records one by one over their strings (verify
 * and inflate hash identities into key hashes, dump prints every name, export copies identities, choosing among
 * caches looks every entry up, run reads INFO) does work that, for records sharing one long string, grows with
 * records x its length: a 1.8 MB file once asked dump for 2 GB. Past this many times STRS a file is refused. */
#define XP_STRING_BYTES_PER_STRS_BYTE 16

typedef struct xp_string_sharing {
  uint32_t tag;     /* the table whose records passed the bound (XPC_TAG_*), 0 when none did */
  uint64_t offset;  /* its offset in the file */
  uint64_t record;  /* the record at which the sum passed the bound */
  uint64_t records; /* the table's records */
  uint64_t named;   /* string bytes named by then */
} xp_string_sharing;

/* Sums the lengths of the strings that ENTR's entries (kernel and bias identities), then PROV's, INFO's and
 * FAMI's records name, from their length prefixes (no string's bytes are read; a string STRS does not hold counts
 * 0), and stops where the sum passes XP_STRING_BYTES_PER_STRS_BYTE times the bytes of STRS: returns 1 then, with
 * *out saying where, else 0 (out->tag 0). O(records). */
int xp_view_strings_overshared(const xp_view* view, xp_string_sharing* out);

#endif
