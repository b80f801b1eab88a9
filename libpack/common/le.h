/* Little-endian fixed-width integer access. Every on-disk integer goes through these: no struct is ever
 * cast over a mapping, so alignment and host byte order never matter. */
#ifndef XPACK_SRC_LE_H
#define XPACK_SRC_LE_H

#include <stdint.h>
#include <string.h>

static inline uint16_t xp_le16(const uint8_t* p) { return (uint16_t)(p[0] | (p[1] << 8)); }
static inline uint32_t xp_le32(const uint8_t* p) {
  return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}
static inline uint64_t xp_le64(const uint8_t* p) { return (uint64_t)xp_le32(p) | ((uint64_t)xp_le32(p + 4) << 32); }
static inline int32_t xp_le32s(const uint8_t* p) { return (int32_t)xp_le32(p); }
static inline float xp_lef32(const uint8_t* p) {
  uint32_t u = xp_le32(p);
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

static inline void xp_put16(uint8_t* p, uint16_t v) { p[0] = (uint8_t)v; p[1] = (uint8_t)(v >> 8); }
static inline void xp_put32(uint8_t* p, uint32_t v) {
  p[0] = (uint8_t)v; p[1] = (uint8_t)(v >> 8); p[2] = (uint8_t)(v >> 16); p[3] = (uint8_t)(v >> 24);
}
static inline void xp_put64(uint8_t* p, uint64_t v) { xp_put32(p, (uint32_t)v); xp_put32(p + 4, (uint32_t)(v >> 32)); }
static inline void xp_putf32(uint8_t* p, float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  xp_put32(p, u);
}

#endif
