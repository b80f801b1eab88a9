/* The replay's callbacks aimed at a loader's cache (xpack_replay.h): the one adapter every caller that binds a
 * replayed delegate to an xpack_cache uses. */
#include <string.h>

#include "replay/replay_internal.h"
#include "xpack_family.h"
#include "xpack_loader.h"
#include "xpack_replay.h"

void xpack_replay_bind_to_cache(void* cache, const void* raw, const char* identity, size_t identity_len) {
  xpack_cache_bind(cache, raw, identity, identity_len, NULL);
}

void xpack_replay_size_to_cache(void* cache, const struct xnn_weights_cache_look_up_key* key, size_t packed_size) {
  xpack_cache_bind_size(cache, key, packed_size, NULL);
}

bool xp_replay_cache_serves(void* cache, const xpack_family* family) {
  char name[XPACK_FAMILY_NAME_MAX];
  size_t len = 0;
  if (xpack_family_format(family, name, sizeof name, &len, NULL) != XPACK_OK) return false;
  const uint32_t count = xpack_cache_family_count(cache);
  for (uint32_t i = 0; i < count; i++) {
    xpack_cache_family_info info;
    if (xpack_cache_family(cache, i, &info, NULL) == XPACK_OK && strcmp(info.name, name) == 0) {
      return info.refusal == XPACK_FAMILY_SERVED;
    }
  }
  return false; /* no entry of this family in the file */
}
