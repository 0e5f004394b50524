# MultilaneInstallDirs.cmake: where an installed multilane's parts go, in one
# place.  Every installed path the programs know (the launcher's library and
# probe, the plugin's plugstack defaults, the cli_filter's settings, the
# system database) comes from the variables set here, through
# cmake/install_paths.h.in, spank/cli_filter.lua and packaging/multilane.conf.in.
#
# Layout under the prefix (GNUInstallDirs):
#   bin/multilane                          the command
#   libexec/multilane/mlprobe              the probe program (only `multilane tune` starts it)
#   LIBDIR/libmlallreduce.so.0[.x.y]       the library, with its soname
#   LIBDIR/libmlallreduce_cuda.so          its CUDA module (beside it: the library dlopens it there)
#   include/mlallreduce.h                  the public header
#   LIBDIR/cmake/multilane, LIBDIR/pkgconfig   find_package(multilane) and multilane.pc
#   MULTILANE_SLURM_PLUGIN_DIR/spank_multilane.so
#   DATADIR/multilane/cli_filter.lua       the cli_filter script to copy beside slurm.conf
#   SYSCONFDIR/slurm/plugstack.conf.d/multilane.conf   the plugin's line, commented out
#   DATADIR/modulefiles/multilane/VERSION.lua          the Lmod module
# Programs find their parts relative to their own file, so an installed tree
# moved to another prefix still works (RUNPATHs are $ORIGIN-relative too).
include(GNUInstallDirs)

set(MULTILANE_INSTALL_LIBEXECDIR "${CMAKE_INSTALL_LIBEXECDIR}/multilane")
set(MULTILANE_INSTALL_DATADIR "${CMAKE_INSTALL_DATADIR}/multilane")
set(MULTILANE_INSTALL_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/multilane")
set(MULTILANE_INSTALL_PKGCONFIGDIR "${CMAKE_INSTALL_LIBDIR}/pkgconfig")
set(MULTILANE_INSTALL_MODULEDIR "${CMAKE_INSTALL_DATADIR}/modulefiles/multilane")

# A system install (prefix /usr, what the Debian packages use) puts the
# configuration in /etc and the database folder in /var, as GNUInstallDirs
# does for that prefix; any other prefix keeps them inside itself.
if(CMAKE_INSTALL_PREFIX STREQUAL "/usr")
  set(MULTILANE_SYSTEM_INSTALL ON)
  set(MULTILANE_INSTALL_SYSCONFDIR "/etc")
else()
  set(MULTILANE_SYSTEM_INSTALL OFF)
  set(MULTILANE_INSTALL_SYSCONFDIR "${CMAKE_INSTALL_SYSCONFDIR}")
endif()
set(MULTILANE_INSTALL_PLUGSTACKDIR "${MULTILANE_INSTALL_SYSCONFDIR}/slurm/plugstack.conf.d")

set(MULTILANE_SYSTEM_DATABASE "/var/lib/multilane/profiles.db" CACHE STRING
    "The shared system database (the admin's profiles): default of --system, of the plugin's database= and of the cli_filter")
if(NOT MULTILANE_SYSTEM_DATABASE MATCHES "^/")
  message(FATAL_ERROR "MULTILANE_SYSTEM_DATABASE='${MULTILANE_SYSTEM_DATABASE}' must be an absolute path")
endif()

# Slurm's plugin directory: from `pkg-config slurm` (upstream Slurm installs
# slurm.pc; its plugins are in ${libdir}/slurm), else where an installed
# Slurm's plugins are (Debian: /usr/lib/<multiarch>/slurm-wlm).  A directory
# outside the install prefix is not used (that install would not be
# relocatable, and would write outside the prefix): the plugin then goes to
# LIBDIR/slurm inside the prefix, and plugstack.conf names it by its full path.
# A relative value is relative to the prefix.
if(NOT DEFINED MULTILANE_SLURM_PLUGIN_DIR)
  set(_slurm_dir "")
  find_package(PkgConfig QUIET)
  if(PKG_CONFIG_FOUND)
    pkg_check_modules(_SLURM_PC QUIET slurm)
    if(_SLURM_PC_FOUND)
      pkg_get_variable(_slurm_libdir slurm libdir)
      if(_slurm_libdir)
        set(_slurm_dir "${_slurm_libdir}/slurm")
      endif()
    endif()
  endif()
  if(NOT _slurm_dir)
    find_path(_slurm_found_dir NAMES select_cons_tres.so auth_munge.so
              PATHS /usr/lib/${CMAKE_LIBRARY_ARCHITECTURE}/slurm-wlm /usr/lib64/slurm /usr/lib/slurm
                    /usr/local/lib/slurm ${CMAKE_INSTALL_PREFIX}/lib/slurm
              NO_DEFAULT_PATH NO_CACHE)
    if(_slurm_found_dir)
      string(REGEX REPLACE "/+$" "" _slurm_dir "${_slurm_found_dir}")
    endif()
  endif()
  set(_plugin_default "${CMAKE_INSTALL_LIBDIR}/slurm")
  if(_slurm_dir)
    file(RELATIVE_PATH _rel "${CMAKE_INSTALL_PREFIX}" "${_slurm_dir}")
    if(NOT _rel MATCHES "^\\.\\.")
      set(_plugin_default "${_rel}")
    elseif(MULTILANE_SPANK)
      message(STATUS "multilane: Slurm's plugin directory ${_slurm_dir} is outside the prefix "
                     "${CMAKE_INSTALL_PREFIX}: the plugin goes to ${CMAKE_INSTALL_PREFIX}/${_plugin_default} "
                     "(set MULTILANE_SLURM_PLUGIN_DIR to choose)")
    endif()
  endif()
  set(MULTILANE_SLURM_PLUGIN_DIR "${_plugin_default}" CACHE STRING
      "Where spank_multilane.so is installed (relative: to the prefix; Debian's Slurm: lib/<multiarch>/slurm-wlm)")
endif()

# Full paths at the configured prefix: the defaults of the plugstack line and
# of the cli_filter (Slurm needs absolute paths there).
set(MULTILANE_FULL_COMMAND "${CMAKE_INSTALL_FULL_BINDIR}/multilane")
set(MULTILANE_LIBRARY_SONAME "libmlallreduce.so.${PROJECT_VERSION_MAJOR}")
set(MULTILANE_FULL_LIBRARY "${CMAKE_INSTALL_FULL_LIBDIR}/${MULTILANE_LIBRARY_SONAME}")
set(MULTILANE_FULL_PROBE "${CMAKE_INSTALL_PREFIX}/${MULTILANE_INSTALL_LIBEXECDIR}/mlprobe")
# out = path, below CMAKE_INSTALL_PREFIX where path is relative.
function(_multilane_full out path)
  if(NOT IS_ABSOLUTE "${path}")
    set(path "${CMAKE_INSTALL_PREFIX}/${path}")
  endif()
  set(${out} "${path}" PARENT_SCOPE)
endfunction()
_multilane_full(MULTILANE_FULL_PLUGIN_DIR "${MULTILANE_SLURM_PLUGIN_DIR}")
set(MULTILANE_FULL_PLUGIN "${MULTILANE_FULL_PLUGIN_DIR}/spank_multilane.so")
_multilane_full(MULTILANE_FULL_PLUGSTACKDIR "${MULTILANE_INSTALL_PLUGSTACKDIR}")
set(MULTILANE_FULL_CLI_FILTER "${CMAKE_INSTALL_PREFIX}/${MULTILANE_INSTALL_DATADIR}/cli_filter.lua")

# The same paths relative to the directory of the installed command, which
# finds its parts from /proc/self/exe (a moved tree keeps working).
function(_multilane_from_bindir out dir file)
  if(IS_ABSOLUTE "${dir}")
    set(${out} "${dir}/${file}" PARENT_SCOPE)  # outside the prefix: stays where it is
  else()
    file(RELATIVE_PATH _r "/prefix/${CMAKE_INSTALL_BINDIR}" "/prefix/${dir}/${file}")
    set(${out} "${_r}" PARENT_SCOPE)
  endif()
endfunction()
_multilane_from_bindir(MULTILANE_BIN_TO_LIBRARY "${CMAKE_INSTALL_LIBDIR}" "${MULTILANE_LIBRARY_SONAME}")
_multilane_from_bindir(MULTILANE_BIN_TO_PROBE "${MULTILANE_INSTALL_LIBEXECDIR}" mlprobe)
_multilane_from_bindir(MULTILANE_BIN_TO_PLUGIN "${MULTILANE_SLURM_PLUGIN_DIR}" spank_multilane.so)
_multilane_from_bindir(MULTILANE_BIN_TO_CLI_FILTER "${MULTILANE_INSTALL_DATADIR}" cli_filter.lua)
_multilane_from_bindir(MULTILANE_BIN_TO_PLUGSTACK "${MULTILANE_INSTALL_PLUGSTACKDIR}" multilane.conf)

# RUNPATHs, built and installed: no empty element (the loader reads one as
# the current directory) and no relative one.  CMake's own build-tree RUNPATH
# of a target it edits at install ends in an empty element (room for the
# edit), so neither function below lets CMake edit one.

# multilane_no_runpath(<target>): a library without RUNPATH in the build tree
# as installed; what it links is the system's or already in the process (an
# MPI program has its MPI loaded).
function(multilane_no_runpath target)
  set_target_properties(${target} PROPERTIES SKIP_BUILD_RPATH ON)
endfunction()

# multilane_install_rpath(<target> <dir> <component>): a program installed
# into <dir> (call after its install(TARGETS)).  Installed, its RUNPATH is
# $ORIGIN-relative, so that the loader finds libmlallreduce.so.0 in LIBDIR
# wherever the tree is; built, the build tree's library folder follows.
function(multilane_install_rpath target dir component)
  file(RELATIVE_PATH _r "/prefix/${dir}" "/prefix/${CMAKE_INSTALL_LIBDIR}")
  if(_r STREQUAL "")
    set(_r ".")
  endif()
  set(runpath "$ORIGIN/${_r}")
  set_target_properties(${target} PROPERTIES INSTALL_RPATH "${runpath}" BUILD_WITH_INSTALL_RPATH ON)
  target_link_options(${target} PRIVATE "LINKER:-rpath,${PROJECT_BINARY_DIR}/libmlallreduce")
  if(IS_ABSOLUTE "${dir}")
    set(dest "\$ENV{DESTDIR}${dir}")
  else()
    set(dest "\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${dir}")
  endif()
  install(CODE "file(RPATH_SET FILE \"${dest}/$<TARGET_FILE_NAME:${target}>\" NEW_RPATH \"${runpath}\")"
          COMPONENT ${component})
endfunction()

# The plugstack line the package ships (commented out) and the docs show.
set(MULTILANE_PLUGSTACK_LINE
    "optional ${MULTILANE_FULL_PLUGIN} library=${MULTILANE_FULL_LIBRARY} multilane=${MULTILANE_FULL_COMMAND} database=${MULTILANE_SYSTEM_DATABASE} default=off mps=auto")

configure_file(${PROJECT_SOURCE_DIR}/cmake/install_paths.h.in
               ${PROJECT_BINARY_DIR}/generated/multilane/install_paths.h @ONLY)
add_library(mlinstallpaths INTERFACE)
target_include_directories(mlinstallpaths INTERFACE ${PROJECT_BINARY_DIR}/generated)

message(STATUS "multilane: install prefix ${CMAKE_INSTALL_PREFIX}; library ${MULTILANE_FULL_LIBRARY}; "
               "plugin ${MULTILANE_FULL_PLUGIN}; system database ${MULTILANE_SYSTEM_DATABASE}")
