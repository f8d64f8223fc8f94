# mguardConfig.cmake - lets `find_package(mguard CONFIG REQUIRED)` find an
# installed mguard.h and offers the INTERFACE target mguard::mguard (the
# header's folder and stb_ds's folder as include directories; Debian's
# libstb linked when mguard-stb.cmake found it, as pkg-config's --libs).
#
# Installed by `make install` and by CMake's install into
# <prefix>/share/cmake/mguard/; the prefix is worked out from this file's
# own place, so a staged (DESTDIR) or moved tree works too.
include("${CMAKE_CURRENT_LIST_DIR}/mguard-stb.cmake")
if(NOT MGUARD_STB_DS_FOUND)
  set(mguard_FOUND FALSE)
  set(mguard_NOT_FOUND_MESSAGE "${MGUARD_STB_DS_ERROR}")
  return()
endif()
get_filename_component(_mguard_prefix "${CMAKE_CURRENT_LIST_DIR}/../../.." ABSOLUTE)
if(NOT EXISTS "${_mguard_prefix}/include/mguard.h")
  set(mguard_FOUND FALSE)
  set(mguard_NOT_FOUND_MESSAGE "mguard.h is not in ${_mguard_prefix}/include (a broken install?)")
  unset(_mguard_prefix)
  return()
endif()
if(NOT TARGET mguard::mguard)
  add_library(mguard::mguard INTERFACE IMPORTED)
  set_target_properties(mguard::mguard PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "${_mguard_prefix}/include;${MGUARD_STB_DS_DIR}")
  if(MGUARD_STB_LIBRARY)
    set_target_properties(mguard::mguard PROPERTIES
      INTERFACE_LINK_LIBRARIES "${MGUARD_STB_LIBRARY}")
  endif()
endif()
unset(_mguard_prefix)
