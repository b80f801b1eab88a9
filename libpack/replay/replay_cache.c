/* The replay's callbacks aimed at a loader's cache (xpack_replay.h): the one adapter every caller that binds a
 * replayed delegate to an xpack_cache uses. */
#include "xpack_loader.h"
#include "xpack_replay.h"

void xpack_replay_bind_to_cache(void* cache, const void* raw, const char* identity, size_t identity_len) {
  xpack_cache_bind(cache, raw, identity, identity_len, NULL);
}

void xpack_replay_size_to_cache(void* cache, const struct xnn_weights_cache_look_up_key* key, size_t packed_size) {
  xpack_cache_bind_size(cache, key, packed_size, NULL);
}
