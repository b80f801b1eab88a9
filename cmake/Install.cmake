# `cmake --install`: the xpack tool, libpack's static libraries, the public headers, a CMake package
# (find_package(xpack): xpack::loader, xpack::pack, xpack::executorch, xpack::inflate, xpack::xpack,
# xpack_add_cache) and pkg-config files (xpack-loader.pc: the loader alone; xpack-inflate.pc: the transport
# form's inflater alone, no loader and no XNNPACK; xpack.pc: everything but the adapter, requiring xpack-loader;
# xpack-et-adapter.pc: the ExecuTorch adapter, requiring xpack-loader). Included by the top-level CMakeLists.txt after every target is
# defined. docs/INTEGRATION.md, "Installing and linking".
#
# The libraries to install are not listed here: they are every library xpack_pack links, found by walking
# its link interface, so a library added to libpack is installed, exported and put in xpack.pc without an
# edit here, and the loader's and the inflater's lists (xpack-loader.pc, xpack-inflate.pc) are each the
# library's own closure only.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(XPACK_INSTALL_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/xpack" CACHE STRING
    "Where the CMake package of xpack is installed (relative to the prefix)")
set(XPACK_INSTALL_INCLUDEDIR "${CMAKE_INSTALL_INCLUDEDIR}/xpack")

# Walks the link interface of `item` depth-first; appends each item to _XPACK_LINK_ORDER after its
# dependencies (post-order), so the reversed list names every library before what it needs.
function(_xpack_walk_links item)
  string(REGEX REPLACE "^\\$<LINK_ONLY:(.*)>$" "\\1" item "${item}")
  if(TARGET "${item}")
    get_target_property(aliased "${item}" ALIASED_TARGET)
    if(aliased)
      set(item "${aliased}")
    endif()
  endif()
  get_property(seen GLOBAL PROPERTY _XPACK_LINK_SEEN)
  if("${item}" IN_LIST seen)
    return()
  endif()
  set_property(GLOBAL APPEND PROPERTY _XPACK_LINK_SEEN "${item}")
  if(TARGET "${item}")
    get_target_property(deps "${item}" INTERFACE_LINK_LIBRARIES)
    if(deps)
      # Reversed, so that reversing the post-order keeps the given order of siblings (static archives
      # listed in link order, e.g. libXNNPACK.a before libmicrokernels-prod.a).
      list(REVERSE deps)
      foreach(dep IN LISTS deps)
        _xpack_walk_links("${dep}")
      endforeach()
    endif()
  elseif(item MATCHES "^\\$<")
    message(FATAL_ERROR "cmake/Install.cmake: cannot export the link item '${item}' (a generator expression)")
  endif()
  set_property(GLOBAL APPEND PROPERTY _XPACK_LINK_ORDER "${item}")
endfunction()

# out = the link items of `root`, each before the ones it needs.
function(_xpack_link_closure root out)
  set_property(GLOBAL PROPERTY _XPACK_LINK_SEEN "")
  set_property(GLOBAL PROPERTY _XPACK_LINK_ORDER "")
  _xpack_walk_links("${root}")
  get_property(order GLOBAL PROPERTY _XPACK_LINK_ORDER)
  list(REVERSE order)
  set(${out} "${order}" PARENT_SCOPE)
endfunction()

# The pkg-config spelling of one link item; empty for targets that only carry other items.
function(_xpack_pc_flag item out)
  set(flag "")
  if(TARGET "${item}")
    get_target_property(type "${item}" TYPE)
    get_target_property(imported "${item}" IMPORTED)
    if(item STREQUAL "Threads::Threads")
      set(flag "-pthread")
    elseif(NOT imported AND type STREQUAL "STATIC_LIBRARY")
      get_target_property(name "${item}" OUTPUT_NAME)
      if(NOT name)
        set(name "${item}")
      endif()
      set(flag "-l${name}")
    endif()
  elseif(IS_ABSOLUTE "${item}")
    get_filename_component(dir "${item}" DIRECTORY)
    get_filename_component(file "${item}" NAME)
    string(FIND "${item}/" "${_xpack_pc_xnnpack_prefix}/" at)
    if(at EQUAL 0)
      string(REPLACE "${_xpack_pc_xnnpack_prefix}" "\${xnnpack_prefix}" flag "${item}")
    elseif(dir IN_LIST CMAKE_C_IMPLICIT_LINK_DIRECTORIES AND file MATCHES "^lib(.+)\\.(so|a)$")
      set(flag "-l${CMAKE_MATCH_1}")
    else()
      set(flag "${item}")
    endif()
  elseif(item MATCHES "^-")
    set(flag "${item}")
  else()
    set(flag "-l${item}")
  endif()
  set(${out} "${flag}" PARENT_SCOPE)
endfunction()

# out = the pkg-config Libs of `items` (link items), skipping those in `exclude`.
function(_xpack_pc_libs items exclude out)
  set(flags "")
  foreach(item IN LISTS items)
    if(NOT "${item}" IN_LIST exclude)
      _xpack_pc_flag("${item}" flag)
      if(flag)
        list(APPEND flags "${flag}")
      endif()
    endif()
  endforeach()
  list(JOIN flags " " flags)
  set(${out} "${flags}" PARENT_SCOPE)
endfunction()

_xpack_link_closure(xpack_loader _xpack_loader_links)
_xpack_link_closure(xpack_pack _xpack_pack_links)
_xpack_link_closure(xpack_et_adapter _xpack_adapter_links) # not part of xpack_pack: it wraps XNNPACK's runtime creation

# Every library of xpack's own in the closures is installed and exported as xpack::<name without xpack_>.
set(_xpack_install_libs "")
foreach(_xpack_item IN LISTS _xpack_pack_links _xpack_adapter_links)
  if(TARGET "${_xpack_item}")
    get_target_property(_xpack_imported "${_xpack_item}" IMPORTED)
    if(NOT _xpack_imported)
      list(APPEND _xpack_install_libs "${_xpack_item}")
    endif()
  endif()
endforeach()
list(REMOVE_DUPLICATES _xpack_install_libs)
if(TARGET xpack_et)
  set_target_properties(xpack_et PROPERTIES EXPORT_NAME executorch)
endif()
foreach(_xpack_lib IN LISTS _xpack_install_libs)
  get_target_property(_xpack_export_name ${_xpack_lib} EXPORT_NAME)
  if(NOT _xpack_export_name)
    string(REGEX REPLACE "^xpack_" "" _xpack_export_name "${_xpack_lib}")
    set_target_properties(${_xpack_lib} PROPERTIES EXPORT_NAME "${_xpack_export_name}")
  endif()
  # The same names in the build tree, for projects that add xpack with add_subdirectory.
  add_library(xpack::${_xpack_export_name} ALIAS ${_xpack_lib})
  # Include directories inside the source or build tree hold for the build only; installed targets get
  # ${XPACK_INSTALL_INCLUDEDIR} (install(TARGETS ... INCLUDES) below).
  get_target_property(_xpack_dirs ${_xpack_lib} INTERFACE_INCLUDE_DIRECTORIES)
  if(_xpack_dirs)
    set(_xpack_wrapped "")
    foreach(_xpack_dir IN LISTS _xpack_dirs)
      string(FIND "${_xpack_dir}/" "${PROJECT_SOURCE_DIR}/" _xpack_in_source)
      string(FIND "${_xpack_dir}/" "${PROJECT_BINARY_DIR}/" _xpack_in_binary)
      if(_xpack_in_source EQUAL 0 OR _xpack_in_binary EQUAL 0)
        set(_xpack_dir "$<BUILD_INTERFACE:${_xpack_dir}>")
      endif()
      list(APPEND _xpack_wrapped "${_xpack_dir}")
    endforeach()
    set_target_properties(${_xpack_lib} PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${_xpack_wrapped}")
  endif()
endforeach()
set_target_properties(xpack PROPERTIES EXPORT_NAME xpack)
add_executable(xpack::xpack ALIAS xpack)

# A sanitized build's libraries need the sanitizer runtimes in whatever links them: every library links
# the common base.
set(_xpack_pc_sanitize "")
if(XPACK_SANITIZE)
  set_property(TARGET xpack_common APPEND PROPERTY INTERFACE_LINK_OPTIONS
               "$<INSTALL_INTERFACE:-fsanitize=address,undefined>")
  set(_xpack_pc_sanitize " -fsanitize=address,undefined")
endif()

install(TARGETS ${_xpack_install_libs} xpack EXPORT xpackTargets
        ARCHIVE DESTINATION "${CMAKE_INSTALL_LIBDIR}"
        LIBRARY DESTINATION "${CMAKE_INSTALL_LIBDIR}"
        RUNTIME DESTINATION "${CMAKE_INSTALL_BINDIR}"
        INCLUDES DESTINATION "${XPACK_INSTALL_INCLUDEDIR}")
file(GLOB _xpack_public_headers CONFIGURE_DEPENDS "${PROJECT_SOURCE_DIR}/libpack/include/*.h")
install(FILES ${_xpack_public_headers} DESTINATION "${XPACK_INSTALL_INCLUDEDIR}")

# The XNNPACK xpack was built against, as recorded in the package and the pkg-config files.
get_filename_component(XPACK_RECORDED_XNNPACK_PREFIX "${XPACK_XNNPACK_LIBRARY}" DIRECTORY)
get_filename_component(XPACK_RECORDED_XNNPACK_PREFIX "${XPACK_RECORDED_XNNPACK_PREFIX}" DIRECTORY)

# CMake package.
install(EXPORT xpackTargets NAMESPACE xpack:: DESTINATION "${XPACK_INSTALL_CMAKEDIR}")
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/xpackConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/package/xpackConfig.cmake
                              INSTALL_DESTINATION "${XPACK_INSTALL_CMAKEDIR}")
write_basic_package_version_file(${PROJECT_BINARY_DIR}/package/xpackConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/package/xpackConfig.cmake
              ${PROJECT_BINARY_DIR}/package/xpackConfigVersion.cmake
              ${CMAKE_CURRENT_LIST_DIR}/xpackDependencies.cmake
              ${CMAKE_CURRENT_LIST_DIR}/XpackAddCache.cmake
        DESTINATION "${XPACK_INSTALL_CMAKEDIR}")

# pkg-config. The libraries are static only, so Libs carries everything they need: plain
# `pkg-config --libs` and `pkg-config --static --libs` give the same working link line.
set(_xpack_pc_xnnpack_prefix "${XPACK_RECORDED_XNNPACK_PREFIX}")
set(_xpack_pc_xnnpack_cflags "-I${XPACK_XNNPACK_INCLUDE_DIR}")
if(XPACK_XNNPACK_INCLUDE_DIR STREQUAL "${_xpack_pc_xnnpack_prefix}/include")
  set(_xpack_pc_xnnpack_cflags "-I\${xnnpack_prefix}/include")
endif()
_xpack_pc_libs("${_xpack_loader_links}" "" XPACK_PC_LOADER_LIBS)
_xpack_pc_libs("${_xpack_pack_links}" "${_xpack_loader_links}" XPACK_PC_PACK_LIBS)
_xpack_pc_libs("${_xpack_adapter_links}" "${_xpack_loader_links}" XPACK_PC_ADAPTER_LIBS)
string(APPEND XPACK_PC_LOADER_LIBS "${_xpack_pc_sanitize}")
file(RELATIVE_PATH XPACK_PC_PREFIX_FROM_PCDIR "/p/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/p")
set(XPACK_PC_XNNPACK_PREFIX "${_xpack_pc_xnnpack_prefix}")
set(XPACK_PC_XNNPACK_CFLAGS "${_xpack_pc_xnnpack_cflags}")
configure_file(${CMAKE_CURRENT_LIST_DIR}/xpack-loader.pc.in ${PROJECT_BINARY_DIR}/package/xpack-loader.pc @ONLY)
configure_file(${CMAKE_CURRENT_LIST_DIR}/xpack.pc.in ${PROJECT_BINARY_DIR}/package/xpack.pc @ONLY)
configure_file(${CMAKE_CURRENT_LIST_DIR}/xpack-et-adapter.pc.in ${PROJECT_BINARY_DIR}/package/xpack-et-adapter.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/package/xpack-loader.pc ${PROJECT_BINARY_DIR}/package/xpack.pc
              ${PROJECT_BINARY_DIR}/package/xpack-et-adapter.pc
        DESTINATION "${CMAKE_INSTALL_LIBDIR}/pkgconfig")
if(TARGET xpack_inflate)
  # The inflater's whole closure and no Requires: it needs neither the loader nor XNNPACK.
  _xpack_link_closure(xpack_inflate _xpack_inflate_links)
  _xpack_pc_libs("${_xpack_inflate_links}" "" XPACK_PC_INFLATE_LIBS)
  string(APPEND XPACK_PC_INFLATE_LIBS "${_xpack_pc_sanitize}")
  configure_file(${CMAKE_CURRENT_LIST_DIR}/xpack-inflate.pc.in ${PROJECT_BINARY_DIR}/package/xpack-inflate.pc @ONLY)
  install(FILES ${PROJECT_BINARY_DIR}/package/xpack-inflate.pc DESTINATION "${CMAKE_INSTALL_LIBDIR}/pkgconfig")
endif()

# xpack_add_cache in the build tree too (it packs with the xpack target through the xpack::xpack alias).
include(${CMAKE_CURRENT_LIST_DIR}/XpackAddCache.cmake)
