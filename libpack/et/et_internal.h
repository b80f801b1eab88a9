/* Private layouts of the ExecuTorch reader objects (shared by pte.c, ptd.c, constants.c, summary.c). */
#ifndef XPACK_ET_INTERNAL_H
#define XPACK_ET_INTERNAL_H

#include <stdatomic.h>

#include "et/et_map.h"
#include "et/hash_memo.h"
#include "xpack_executorch.h"

typedef struct xp_et_legacy_buffer {
  const uint8_t* data;
  size_t size;
} xp_et_legacy_buffer;

struct xpack_et_program {
  xp_et_map map;
  char* name;
  xpack_et_program_info info;
  xpack_et_method* methods;
  xpack_et_segment* segments;
  xpack_et_named_data* named;
  size_t* named_sorted; /* indices into named, sorted by key, for lookup */
  xp_et_legacy_buffer* legacy;
  xp_et_hash_memo hashes; /* of constants whose identity hashes them; mutable through const (thread safe) */
};

struct xpack_et_ptd {
  xp_et_map map;
  char* name;
  xpack_et_ptd_info info;
  xpack_et_ptd_entry* entries;
  size_t* sorted; /* indices into entries, sorted by key */
  xp_et_hash_memo hashes;
  atomic_int named; /* an XNNPACK delegate's constant resolved to one of its entries (constants.c) */
};

/* The program or .ptd of sources whose bytes hold [data, data + size): its map and its hash memo, both NULL
 * when none does (constants.c). */
typedef struct xp_et_holder {
  const xp_et_map* map;
  xp_et_hash_memo* memo; /* mutable through the const sources: the memo is thread safe */
} xp_et_holder;
/* Lower-case hex of n bytes into out (2n characters and a NUL): identities are named by it, constant by constant. */
void xp_et_hex(const uint8_t* bytes, size_t n, char* out);
xp_et_holder xp_et_holder_of(const xpack_et_named_sources* sources, const uint8_t* data, size_t size);

/* XPACK_ET_OPEN_WEIGHTS_ON_DEMAND (weights_on_demand.c): madvise before parsing a mapped file, and after
 * parsing a program (its delegate blobs). */
/* Whether a file is large enough for reading on demand to pay (smaller ones are read whole). */
int xp_et_worth_reading_on_demand(const xp_et_map* map);
void xp_et_program_advise_before_parse(const xp_et_map* map);
void xp_et_program_advise_after_parse(const xpack_et_program* program);
void xp_et_ptd_advise_before_parse(const xp_et_map* map);

/* Fills idx[0..n) with 0..n-1 sorted by the key (const char*) and length (size_t) found at
 * key_offset / len_offset inside each item; equal keys stay in file order. */
void xp_et_sort_keys(size_t* idx, size_t n, const void* items, size_t item_size, size_t key_offset,
                     size_t len_offset);
/* Binary search in a sorted index; returns the item index or SIZE_MAX. */
size_t xp_et_find_key(const size_t* idx, size_t n, const void* items, size_t item_size, size_t key_offset,
                      size_t len_offset, const char* key, size_t key_len);

#endif
