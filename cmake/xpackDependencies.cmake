# The libraries xpack links, as imported targets. Used by the build (cmake/Dependencies.cmake) and by the
# installed package (xpackConfig.cmake), so both find them the same way:
#   xpack::XNNPACK  XNNPACK as built by tools/setup-deps.sh (Debian's 4ea82e5 by default, or a pin of
#                   cmake/xnnpack_pins.txt): static archives (libXNNPACK.a, libmicrokernels-prod.a), hence
#                   also what they need: KleidiAI (Arm builds), pthreadpool, cpuinfo (the prefix's own when it
#                   has them), pthreads, libstdc++ (a few C++ objects), libm. Its users get XPACK_XNNPACK_VERSION
#                   defined.
#   xpack::xxhash   xxHash (checksums; the loader needs it)
#   xpack::zstd     zstd (the writer; never the loader)
# Input:  _xpack_xnnpack_prefix - where include/xnnpack.h and lib/libXNNPACK.a are.
#         _xpack_need_xnnpack   - FALSE: do not look for XNNPACK (no component asked for needs it); unset or
#                                 TRUE: look for it (the build always does).
# Output: _xpack_missing_deps   - what was not found (empty when everything was).
# A target that already exists is left alone: a project that builds its own XNNPACK (the same version: the
# loader refuses caches packed by another XNNPACK build) can define xpack::XNNPACK before find_package(xpack).
# Imported targets' include directories are system directories (no warnings from their headers).
# Requires Threads::Threads (find_package(Threads)) to exist.
set(_xpack_missing_deps "")

if(NOT TARGET xpack::XNNPACK AND (NOT DEFINED _xpack_need_xnnpack OR _xpack_need_xnnpack))
  find_path(XPACK_XNNPACK_INCLUDE_DIR xnnpack.h HINTS "${_xpack_xnnpack_prefix}/include" NO_DEFAULT_PATH)
  find_library(XPACK_XNNPACK_LIBRARY NAMES XNNPACK HINTS "${_xpack_xnnpack_prefix}/lib" NO_DEFAULT_PATH)
  # XNNPACK renamed its microkernel archive (libmicrokernels-prod.a in 4ea82e5, libxnnpack-microkernels-prod.a
  # in the pins of ExecuTorch 1.x).
  find_library(XPACK_XNNPACK_MICROKERNELS_LIBRARY NAMES microkernels-prod xnnpack-microkernels-prod
               HINTS "${_xpack_xnnpack_prefix}/lib" NO_DEFAULT_PATH)
  # A prefix built for an ExecuTorch pin (tools/setup-deps.sh --pin) carries its own cpuinfo and pthreadpool:
  # those XNNPACKs call pthreadpool functions that older system pthreadpools lack. HINTS are searched before
  # the system paths, so the prefix's own copies win; the default prefix has none and the system's are used.
  # KleidiAI: Arm's kernels, which the pins' XNNPACK builds into Arm targets (none on x86-64).
  find_library(XPACK_KLEIDIAI_LIBRARY kleidiai HINTS "${_xpack_xnnpack_prefix}/lib" NO_DEFAULT_PATH)
  find_library(XPACK_CPUINFO_LIBRARY cpuinfo HINTS "${_xpack_xnnpack_prefix}/lib")
  find_library(XPACK_PTHREADPOOL_LIBRARY pthreadpool HINTS "${_xpack_xnnpack_prefix}/lib")
  find_library(XPACK_MATH_LIBRARY m)
  foreach(_xpack_var XPACK_XNNPACK_INCLUDE_DIR XPACK_XNNPACK_LIBRARY XPACK_CPUINFO_LIBRARY XPACK_PTHREADPOOL_LIBRARY)
    if(NOT ${_xpack_var})
      list(APPEND _xpack_missing_deps "${_xpack_var}")
    endif()
  endforeach()
  if(NOT _xpack_missing_deps)
    add_library(xpack::XNNPACK INTERFACE IMPORTED)
    set(_xpack_xnn_libs "${XPACK_XNNPACK_LIBRARY}")
    if(XPACK_XNNPACK_MICROKERNELS_LIBRARY)
      list(APPEND _xpack_xnn_libs "${XPACK_XNNPACK_MICROKERNELS_LIBRARY}")
    endif()
    if(XPACK_KLEIDIAI_LIBRARY)
      list(APPEND _xpack_xnn_libs "${XPACK_KLEIDIAI_LIBRARY}")
    endif()
    set(_xpack_libm "")
    if(XPACK_MATH_LIBRARY)
      set(_xpack_libm "${XPACK_MATH_LIBRARY}")
    endif()
    # The XNNPACK version xpack reports and records in caches: line 1 of the .complete file that
    # tools/setup-deps.sh writes into every prefix it builds, unless -DXPACK_XNNPACK_VERSION=... says otherwise.
    set(_xpack_xnnpack_version "${XPACK_XNNPACK_VERSION}")
    if(NOT _xpack_xnnpack_version)
      set(_xpack_xnnpack_version "unknown (no .complete in ${_xpack_xnnpack_prefix})")
      if(EXISTS "${_xpack_xnnpack_prefix}/.complete")
        file(STRINGS "${_xpack_xnnpack_prefix}/.complete" _xpack_xnnpack_version LIMIT_COUNT 1)
      endif()
    endif()
    set_target_properties(xpack::XNNPACK PROPERTIES
      INTERFACE_COMPILE_DEFINITIONS "XPACK_XNNPACK_VERSION=\"${_xpack_xnnpack_version}\""
      INTERFACE_INCLUDE_DIRECTORIES "${XPACK_XNNPACK_INCLUDE_DIR}"
      INTERFACE_LINK_LIBRARIES
        "${_xpack_xnn_libs};${XPACK_PTHREADPOOL_LIBRARY};${XPACK_CPUINFO_LIBRARY};Threads::Threads;stdc++;${_xpack_libm}")
  endif()
endif()

if(NOT TARGET xpack::xxhash)
  find_path(XPACK_XXHASH_INCLUDE_DIR xxhash.h)
  find_library(XPACK_XXHASH_LIBRARY xxhash)
  if(XPACK_XXHASH_INCLUDE_DIR AND XPACK_XXHASH_LIBRARY)
    add_library(xpack::xxhash INTERFACE IMPORTED)
    set_target_properties(xpack::xxhash PROPERTIES
      INTERFACE_INCLUDE_DIRECTORIES "${XPACK_XXHASH_INCLUDE_DIR}"
      INTERFACE_LINK_LIBRARIES "${XPACK_XXHASH_LIBRARY}")
  else()
    list(APPEND _xpack_missing_deps XPACK_XXHASH_LIBRARY)
  endif()
endif()

# zstd is optional for the installed package (the loader does not need it); the build requires it.
if(NOT TARGET xpack::zstd)
  find_path(XPACK_ZSTD_INCLUDE_DIR zstd.h)
  find_library(XPACK_ZSTD_LIBRARY zstd)
  if(XPACK_ZSTD_INCLUDE_DIR AND XPACK_ZSTD_LIBRARY)
    add_library(xpack::zstd INTERFACE IMPORTED)
    set_target_properties(xpack::zstd PROPERTIES
      INTERFACE_INCLUDE_DIRECTORIES "${XPACK_ZSTD_INCLUDE_DIR}"
      INTERFACE_LINK_LIBRARIES "${XPACK_ZSTD_LIBRARY}")
  else()
    list(APPEND _xpack_missing_deps XPACK_ZSTD_LIBRARY)
  endif()
endif()
