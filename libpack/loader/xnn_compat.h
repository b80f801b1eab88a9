/* What differs between the XNNPACK builds xpack supports (cmake/xnnpack_pins.txt), in one place.
 *
 * XNNPACK has no version macro, so the public flags each one added tell them apart: XNN_FLAG_FP32_STATIC_BIASES
 * is defined by the XNNPACKs that ExecuTorch 1.x pins (1adaa7c7, 92a7ad50) and not by Debian's 4ea82e5
 * (ExecuTorch 0.5-0.6); XNN_VALUE_FLAG_PACK_TO_FP16 by 92a7ad50 only. An XNNPACK between them (ExecuTorch
 * 0.7-1.2, built with tools/setup-deps.sh --xnnpack-source) may be misjudged; neither way serves a wrong byte: a
 * family XNNPACK does not cache only costs a warning at pack time, and weights xpack does not record are packed
 * by XNNPACK as without a cache. */
#ifndef XPACK_XNN_COMPAT_H
#define XPACK_XNN_COMPAT_H

#include <stdint.h>
#include <xnnpack.h>

#include "xpack_status.h"

#if defined(XNN_FLAG_FP32_STATIC_BIASES)
/* Depthwise convolution offers its filter to the weights cache (4ea82e5 never did), so its weights are
 * a packing family of their own: the depthwise kernels' layout is not convolution's. */
#define XPACK_XNN_CACHES_DEPTHWISE_WEIGHTS 1
#else
#define XPACK_XNN_CACHES_DEPTHWISE_WEIGHTS 0
#endif

#if defined(XNN_FLAG_FP32_STATIC_BIASES)
/* A bf16 x bf16 -> fp32 fully-connected (xnn_create_fully_connected_nc_bf16_f32), packed through the weights
 * cache; 4ea82e5 refuses a bf16 input at definition. Whether a given build has a kernel for it on this CPU is
 * the probe's to find out: XNNPACK built without AVX512-BF16 (gcc < 13) has none, and then 1adaa7c7 refuses to
 * create the runtime while 92a7ad50 converts the weights to fp32 and packs those. */
#define XPACK_XNN_HAS_BF16_FULLY_CONNECTED 1
#else
#define XPACK_XNN_HAS_BF16_FULLY_CONNECTED 0
#endif

#if defined(XNN_VALUE_FLAG_PACK_TO_FP16)
#define XPACK_XNN_SAME_PADDING_UNSIGNED 0
#else
/* 4ea82e5 and 1adaa7c7 compute a convolution's and an average pooling's TensorFlow SAME padding without
 * saturating at 0 (replay_window_checks.c); 92a7ad50, the first of xpack's builds to define
 * XNN_VALUE_FLAG_PACK_TO_FP16, saturates it. */
#define XPACK_XNN_SAME_PADDING_UNSIGNED 1
#endif

#if defined(XNN_FLAG_TENSORFLOW_RESHAPE_2D)
/* A fully-connected node with this flag flattens its input to 2-D (4ea82e5); the XNNPACKs ExecuTorch 1.x pins
 * dropped the flag, and their fully-connected output is always the input's dims with the last one replaced. */
#define XPACK_XNN_FC_RESHAPE_2D_FLAG XNN_FLAG_TENSORFLOW_RESHAPE_2D
#else
#define XPACK_XNN_FC_RESHAPE_2D_FLAG 0u
#endif

/* XNNPACK's XNN_ALLOCATION_ALIGNMENT (src/xnnpack/common.h, not installed): the alignment its packing kernels
 * require of reserve_space memory, recorded in a cache's header. 4ea82e5 asked only 32 bytes on x86 Android and
 * iOS; the XNNPACKs ExecuTorch 1.x pins ask 64 on every x86. */
#if defined(__APPLE__)
#include <TargetConditionals.h>
#endif
static inline uint32_t xp_xnn_alignment(void) {
#if defined(__wasm__)
  return 4;
#elif (defined(__x86_64__) || defined(__i386__)) && (defined(__ANDROID__) || defined(__APPLE__) && TARGET_OS_IPHONE) && \
    !defined(XNN_FLAG_FP32_STATIC_BIASES)
  return 32;
#elif defined(__x86_64__) || defined(__i386__) || defined(_M_X64) || defined(_M_IX86)
  return 64;
#elif defined(__hexagon__)
  return 128;
#else
  return 16;
#endif
}

/* What an xnn_status says, for messages ("status 4: unsupported parameter"): the same numbers in every XNNPACK
 * xpack supports. */
static inline const char* xp_xnn_status_text(int status) {
  switch (status) {
    case 0: return "success";
    case 1: return "uninitialized";
    case 2: return "invalid parameter";
    case 3: return "invalid state";
    case 4: return "unsupported parameter";
    case 5: return "unsupported hardware";
    case 6: return "out of memory";
    case 7: return "reallocation required";
    case 8: return "deprecated";
    default: return "unknown status";
  }
}

/* The xpack status of an XNNPACK call that failed: running out of memory is XPACK_ERR_NOMEM whatever XNNPACK was
 * doing (callers end a pack on it, where a delegate XNNPACK cannot handle is only passed over). */
static inline xpack_status xp_xnn_failure(enum xnn_status status) {
  return status == xnn_status_out_of_memory ? XPACK_ERR_NOMEM : XPACK_ERR_XNNPACK;
}

#endif /* XPACK_XNN_COMPAT_H */
