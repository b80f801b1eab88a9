# Which ExecuTorch runtime the executorch tests build (tests/executorch and tests/cross), and where the vendored
# sources are.
# The runtime that pins the XNNPACK xpack is built with (cmake/xnnpack_pins.txt): main of 2026-08-22 for
# 92a7ad50; v1.4.0 for 1adaa7c7, and for Debian's 4ea82e5 too, whose own ExecuTorch (0.5, 0.6) reads no
# packed-weights file.
if(_xpack_xnnpack_version MATCHES "^92a7ad50")
  set(_xpack_et_default "main-cff6f4dd")
else()
  set(_xpack_et_default "v1.4.0")
endif()
set(XPACK_ET_VERSION "${_xpack_et_default}" CACHE STRING "ExecuTorch runtime version for the executorch tests (v1.4.0, main-cff6f4dd)")
set(XPACK_VENDOR_DIR "${PROJECT_SOURCE_DIR}/../shared/vendor" CACHE PATH "Vendored upstream sources (../shared/vendor)")

