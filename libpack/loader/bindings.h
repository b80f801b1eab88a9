/* Bindings: raw weight pointer -> stable identity string, and for a kernel pointer the packed sizes of the
 * keys XNNPACK will look it up with.
 *
 * XNNPACK keys its weights cache by the raw pointers handed to xnn_define_*; those change every run,
 * so the caller binds each pointer to an identity (an ExecuTorch named key, or a content-derived id)
 * before defining the subgraph. XNNPACK's key carries no size, and on a hit XNNPACK reads what it computes
 * from the operator whatever a cache says: the loader serves a region only when the caller also told it
 * that size (xpack_cache_bind_size) and the region holds exactly that many bytes. Thread safe: XNNPACK may
 * look up from several threads. */
#ifndef XPACK_SRC_BINDINGS_H
#define XPACK_SRC_BINDINGS_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "xpack_loader.h"
#include "xpack_status.h"

/* What XNNPACK reads for one key of a kernel: the rest of the key, and the packed size. */
typedef struct xp_bound_size {
  uint32_t seed;
  const void* bias;
  size_t size;
} xp_bound_size;

typedef struct xp_binding {
  const void* ptr;       /* NULL = empty slot */
  char* identity;        /* owned, NUL-terminated */
  size_t len;
  xp_bound_size* sizes;  /* owned; nearly always one (a kernel used by one node) */
  size_t size_count;
} xp_binding;

typedef struct xp_bindings {
  pthread_rwlock_t lock;
  xp_binding* slots;
  size_t capacity; /* power of two */
  size_t count;
} xp_bindings;

void xp_bindings_init(xp_bindings* b);
void xp_bindings_destroy(xp_bindings* b);
/* Copies identity; rebinding a pointer replaces its identity and forgets its sizes. On an error (XPACK_ERR_ARG,
 * XPACK_ERR_NOMEM) ptr is left unbound: its earlier identity must not name what it points to now. */
xpack_status xp_bindings_set(xp_bindings* b, const void* ptr, const char* identity, size_t len);
/* Leaves ptr unbound (its identity and sizes forgotten); nothing when it was not bound. */
void xp_bindings_unbind(xp_bindings* b, const void* ptr);
/* Records (or replaces) the packed size of (seed, kernel, bias). XPACK_OK, XPACK_ERR_ARG when kernel is not
 * bound, XPACK_ERR_NOMEM. */
xpack_status xp_bindings_set_size(xp_bindings* b, uint32_t seed, const void* kernel, const void* bias, size_t size);
void xp_bindings_clear(xp_bindings* b);
/* Copies the identity of ptr into buf (NUL-terminated, truncated to cap) and returns its full length,
 * or returns (size_t)-1 if ptr is not bound. Copying keeps the answer valid after a concurrent rebind. */
size_t xp_bindings_get(xp_bindings* b, const void* ptr, char* buf, size_t cap);

/* The argument checks of a public bind call (xpack_cache_bind, xpack_writer_bind): owner (the cache or the
 * writer, called owner_name in messages), raw and identity not NULL, 1 <= len < XP_MAX_IDENTITY. XPACK_OK, or
 * XPACK_ERR_ARG with a message that starts with fn and names the faulty argument. */
xpack_status xp_bind_check(const char* fn, const void* owner, const char* owner_name, const void* raw,
                           const char* identity, size_t len, xpack_error* err);

/* An identity is shorter than this (its NUL excluded): binding a longer one is refused, by the loader
 * (xpack_cache_bind) and the recording writer (xpack_writer_bind) alike. */
#define XP_MAX_IDENTITY (XPACK_IDENTITY_MAX_LEN + 1)

/* The identities of a weights-cache key's kernel and bias pointers, copied out of the bindings. */
typedef struct xp_key_identities {
  char kernel[XP_MAX_IDENTITY], bias[XP_MAX_IDENTITY];
  size_t kernel_len, bias_len;
  int has_bias; /* the key has a bias pointer; else bias is empty */
  int has_size; /* a size was bound for the whole key (seed, kernel, bias): */
  size_t size;  /* the bytes XNNPACK reads for it */
} xp_key_identities;

/* Resolves kernel and bias (NULL: the key has none) to their identities, and the key's bound size. Returns 0
 * when each pointer is bound to an identity shorter than XP_MAX_IDENTITY and neither is
 * XPACK_IDENTITY_AMBIGUOUS, -1 otherwise (the key cannot be named). */
int xp_bindings_resolve_key(xp_bindings* b, uint32_t seed, const void* kernel, const void* bias,
                            xp_key_identities* out);

#endif
