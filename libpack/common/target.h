/* Facts about the machine this build packs or runs for, as recorded in the cache header. */
#ifndef XPACK_SRC_TARGET_H
#define XPACK_SRC_TARGET_H

#include <stdint.h>

/* ELF e_machine numbers: a registry every toolchain already agrees on. */
static inline uint16_t xp_target_arch(void) {
#if defined(__x86_64__) || defined(_M_X64)
  return 62;
#elif defined(__aarch64__) || defined(_M_ARM64)
  return 183;
#elif defined(__arm__) || defined(_M_ARM)
  return 40;
#elif defined(__i386__) || defined(_M_IX86)
  return 3;
#elif defined(__riscv)
  return 243;
#else
  return 0;
#endif
}

static inline const char* xp_arch_name(uint16_t arch) {
  switch (arch) {
    case 62: return "x86-64";
    case 183: return "aarch64";
    case 40: return "arm";
    case 3: return "x86";
    case 243: return "riscv";
    default: return "unknown";
  }
}

#endif
