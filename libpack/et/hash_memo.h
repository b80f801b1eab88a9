/* The content hashes of one open program's or .ptd's constants, each computed once: delegates and methods
 * that share a constant (prefill and decode of an LLM) would otherwise hash it once each (IDENTITY.md). */
#ifndef XPACK_ET_HASH_MEMO_H
#define XPACK_ET_HASH_MEMO_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <xxhash.h>

typedef struct xp_et_memo_slot xp_et_memo_slot;

typedef struct xp_et_hash_memo {
  pthread_mutex_t lock;
  int ready;              /* lock initialized: xp_et_memo_free may be called on a zeroed memo */
  xp_et_memo_slot* slots; /* open addressing on the bytes' address */
  size_t count, capacity;
} xp_et_hash_memo;

void xp_et_memo_init(xp_et_hash_memo* memo);
void xp_et_memo_free(xp_et_hash_memo* memo);

/* XXH3-128 (seed 0) of bytes [data, data + size), which stay mapped while the memo lives: remembered, or
 * computed (outside the lock) and remembered. Thread safe. Without memory to remember it, computed each time. */
XXH128_hash_t xp_et_memo_hash(xp_et_hash_memo* memo, const uint8_t* data, size_t size);

#endif
