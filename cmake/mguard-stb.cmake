# Finds the folder holding stb_ds.h for mguard (used by mguard's own
# CMakeLists.txt and by the installed mguardConfig.cmake).
#
# Sets the cache variable MGUARD_STB_DS_DIR, and MGUARD_STB_DS_FOUND (TRUE
# when that folder holds stb_ds.h) and MGUARD_STB_DS_ERROR (why not).
# Set MGUARD_STB_DS_DIR yourself (-DMGUARD_STB_DS_DIR=/path/to/folder) to
# use a copy of stb_ds.h of your own; otherwise pkg-config's `stb` (Debian
# libstb-dev) is asked first, then the usual include folders are searched.
# find_path skips the search when the variable already names a folder, so a
# value you set always wins.
#
# When stb_ds.h is searched for (not set by you), the library holding its
# implementation (Debian's libstb) is searched for too, as pkg-config's
# --libs would give it: the cache variable MGUARD_STB_LIBRARY, linked by
# mguard::mguard when found, so a program need not define
# STB_DS_IMPLEMENTATION. With your own stb_ds.h it stays unset: one file of
# the program defines STB_DS_IMPLEMENTATION (or set MGUARD_STB_LIBRARY).
if(NOT MGUARD_STB_DS_DIR)
  set(_mguard_stb_hints "")
  find_package(PkgConfig QUIET)
  if(PKG_CONFIG_FOUND)
    pkg_check_modules(_MGUARD_PC_STB QUIET stb)
    if(_MGUARD_PC_STB_FOUND)
      set(_mguard_stb_hints ${_MGUARD_PC_STB_INCLUDE_DIRS})
    endif()
  endif()
  find_path(MGUARD_STB_DS_DIR stb_ds.h
    HINTS ${_mguard_stb_hints}
    PATH_SUFFIXES stb
    DOC "Folder holding stb_ds.h (empty: ask pkg-config for stb, then search)")
  find_library(MGUARD_STB_LIBRARY stb
    HINTS ${_MGUARD_PC_STB_LIBRARY_DIRS}
    DOC "Library holding stb_ds's implementation, linked by mguard::mguard (Debian's libstb)")
  unset(_mguard_stb_hints)
endif()
if(MGUARD_STB_DS_DIR AND EXISTS "${MGUARD_STB_DS_DIR}/stb_ds.h")
  set(MGUARD_STB_DS_FOUND TRUE)
  set(MGUARD_STB_DS_ERROR "")
elseif(MGUARD_STB_DS_DIR)
  set(MGUARD_STB_DS_FOUND FALSE)
  set(MGUARD_STB_DS_ERROR "mguard: MGUARD_STB_DS_DIR=${MGUARD_STB_DS_DIR} holds no stb_ds.h")
else()
  set(MGUARD_STB_DS_FOUND FALSE)
  set(MGUARD_STB_DS_ERROR "mguard needs stb_ds.h: install libstb-dev (pkg-config stb) or set MGUARD_STB_DS_DIR to the folder holding stb_ds.h")
endif()
