# DebianPackages.cmake: the Debian packages (cpack -G DEB, one per component):
#   multilane              the command, the probe, the library, its header, the
#                          CMake and pkg-config files, the Lmod module, docs, man
#   multilane-cuda         the CUDA module (only when CUDA is built)
#   multilane-mpich        the MPICH family build of the library and mlprobe-mpich
#                          (only when MPICH is built)
#   slurm-spank-multilane  the plugin, the cli_filter, plugstack.conf.d/multilane.conf
#                          (the line commented out) and /var/lib/multilane
# Configure with -DCMAKE_INSTALL_PREFIX=/usr (scripts/test.sh does, with
# -DMULTILANE_BUILD_TESTS=OFF), build, then `cpack` in the build folder.
set(MULTILANE_PACKAGE_CONTACT "multilane maintainers <maintainers@users.noreply.a-seed-ef73d77a.example>" CACHE STRING
    "Maintainer: field of the Debian packages")
# The release names the platform the packages were built on (1~deb12,
# 1~deb13): the plugin, the library and their dependencies are built for that
# release's Slurm and MPI, and for no other.  No suffix where /etc/os-release
# names no numbered release (Debian testing).
set(_deb_platform "")
if(EXISTS /etc/os-release)
  file(STRINGS /etc/os-release _os_id REGEX "^ID=")
  file(STRINGS /etc/os-release _os_version REGEX "^VERSION_ID=")
  string(REGEX REPLACE "^ID=\"?([^\"]*)\"?$" "\\1" _os_id "${_os_id}")
  string(REGEX REPLACE "^VERSION_ID=\"?([^\"]*)\"?$" "\\1" _os_version "${_os_version}")
  if(_os_id STREQUAL "debian" AND _os_version MATCHES "^[0-9]+$")
    set(_deb_platform "~deb${_os_version}")
  elseif(_os_id MATCHES "^[a-z]+$" AND _os_version MATCHES "^[0-9.]+$")
    set(_deb_platform "~${_os_id}${_os_version}")
  endif()
endif()
set(_deb_release "1${_deb_platform}")
set(_deb_version "${PROJECT_VERSION}-${_deb_release}")

if(MULTILANE_SYSTEM_INSTALL)
  # Every package has its copyright file and Debian changelog in
  # /usr/share/doc/PACKAGE (Debian policy 12.5, 12.7).
  set(_packages multilane)
  if(MULTILANE_HAVE_CUDA)
    list(APPEND _packages multilane-cuda)
  endif()
  if("mpich" IN_LIST MULTILANE_MPI_FAMILIES)
    list(APPEND _packages multilane-mpich)
  endif()
  if(MULTILANE_HAVE_SLURM)
    list(APPEND _packages slurm-spank-multilane)
  endif()
  string(TIMESTAMP _date "%a, %d %b %Y %H:%M:%S +0000" UTC)
  foreach(_pkg IN LISTS _packages)
    if(_pkg STREQUAL multilane)
      set(_component multilane)
    elseif(_pkg STREQUAL multilane-cuda)
      set(_component cuda)
    elseif(_pkg STREQUAL multilane-mpich)
      set(_component mpich)
    else()
      set(_component spank)
    endif()
    set(_dir ${CMAKE_CURRENT_BINARY_DIR}/debian/${_pkg})
    file(MAKE_DIRECTORY ${_dir})
    configure_file(debian/changelog.in ${_dir}/changelog.Debian @ONLY)
    add_custom_command(OUTPUT ${_dir}/changelog.Debian.gz
      COMMAND ${GZIP_EXECUTABLE} -9nkf ${_dir}/changelog.Debian
      DEPENDS ${_dir}/changelog.Debian VERBATIM)
    add_custom_target(debian_changelog_${_component} ALL DEPENDS ${_dir}/changelog.Debian.gz)
    install(FILES debian/copyright ${_dir}/changelog.Debian.gz DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/${_pkg}
            COMPONENT ${_component})
    if(EXISTS ${CMAKE_CURRENT_SOURCE_DIR}/debian/${_pkg}.lintian-overrides)
      install(FILES debian/${_pkg}.lintian-overrides DESTINATION ${CMAKE_INSTALL_DATADIR}/lintian/overrides
              RENAME ${_pkg} COMPONENT ${_component})
    endif()
  endforeach()
endif()

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME multilane)
set(CPACK_PACKAGE_VENDOR "multilane")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "${MULTILANE_PACKAGE_CONTACT}")
set(CPACK_PACKAGING_INSTALL_PREFIX ${CMAKE_INSTALL_PREFIX})
set(CPACK_SET_DESTDIR ON)  # /etc and /var destinations (MULTILANE_SYSTEM_INSTALL)
set(CPACK_PACKAGE_DIRECTORY ${PROJECT_BINARY_DIR}/packages)
set(CPACK_STRIP_FILES ON)

set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL multilane)
if(MULTILANE_HAVE_CUDA)
  list(APPEND CPACK_COMPONENTS_ALL cuda)
endif()
if("mpich" IN_LIST MULTILANE_MPI_FAMILIES)
  list(APPEND CPACK_COMPONENTS_ALL mpich)
endif()
if(MULTILANE_HAVE_SLURM)
  list(APPEND CPACK_COMPONENTS_ALL spank)
endif()
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_RELEASE ${_deb_release})
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_PACKAGE_HOMEPAGE "")
# Library dependencies from the binaries (dpkg-shlibdeps), and a shlibs file
# (with the ldconfig trigger) for libmlallreduce.so.0.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS_POLICY "=")
set(CPACK_DEBIAN_ENABLE_COMPONENT_DEPENDS OFF)

set(CPACK_DEBIAN_MULTILANE_PACKAGE_NAME multilane)
# mpirun runs the probes of `multilane tune`.
set(CPACK_DEBIAN_MULTILANE_PACKAGE_DEPENDS "openmpi-bin")
set(CPACK_DEBIAN_MULTILANE_DESCRIPTION "tuned multi-lane MPI_Allreduce: command, probe and library
multilane makes MPI_Allreduce faster on GPU nodes: libmlallreduce.so (injected
with LD_PRELOAD, or linked) runs each allreduce with the algorithm and the
ranks-per-GPU layout tuned once per node type; the multilane command tunes
(multilane tune), runs jobs with the profile (multilane run), reports on
jobs (multilane report) and checks an installation (multilane doctor).
.
The package also holds mlallreduce.h, find_package(multilane),
multilane.pc and an Lmod module.")
set(CPACK_DEBIAN_MULTILANE_PACKAGE_SECTION science)
# libmlallreduce.so.0 is a public library: the ldconfig trigger (CPack adds
# its own ldconfig calls too, see the lintian overrides).
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/debian/multilane/triggers "activate-noawait ldconfig\n")
set(CPACK_DEBIAN_MULTILANE_PACKAGE_CONTROL_EXTRA ${CMAKE_CURRENT_BINARY_DIR}/debian/multilane/triggers)

set(CPACK_DEBIAN_CUDA_PACKAGE_NAME multilane-cuda)
set(CPACK_DEBIAN_CUDA_DESCRIPTION "tuned multi-lane MPI_Allreduce: CUDA module
The device-buffer half of libmlallreduce (kernels, CUDA IPC, host staging,
NCCL lanes), loaded by the library only in processes that use CUDA.  The
CUDA runtime is linked in; the NVIDIA driver (libcuda.so.1) and, for NCCL
lanes, libnccl come from the node.")
# libcuda.so.1 comes with the NVIDIA driver, which is not a Debian package on
# most GPU nodes, so dpkg-shlibdeps cannot run on the module: its other
# libraries (built by the same toolchain as the library) are named here.
# The Open MPI library's package is the one holding the libmpi this build
# links (libopenmpi3 on Debian 12, libopenmpi40 on Debian 13).
set(_openmpi_package libopenmpi3)
list(GET MPI_C_LIBRARIES 0 _libmpi)
get_filename_component(_libmpi "${_libmpi}" REALPATH)
execute_process(COMMAND dpkg-query -S "${_libmpi}" OUTPUT_VARIABLE _owner ERROR_QUIET RESULT_VARIABLE _rc)
if(_rc EQUAL 0 AND _owner MATCHES "^([a-z0-9.+-]+)(:[a-z0-9]+)?: ")
  set(_openmpi_package ${CMAKE_MATCH_1})
endif()
set(CPACK_DEBIAN_CUDA_PACKAGE_SHLIBDEPS OFF)
set(CPACK_DEBIAN_CUDA_PACKAGE_DEPENDS
    "multilane (= ${_deb_version}), libc6 (>= 2.34), libgcc-s1 (>= 3.0), libstdc++6 (>= 11), ${_openmpi_package}")

set(CPACK_DEBIAN_MPICH_PACKAGE_NAME multilane-mpich)
set(CPACK_DEBIAN_MPICH_DESCRIPTION "tuned multi-lane MPI_Allreduce: MPICH family build
The library built for MPICH and the MPIs of its ABI (libmlallreduce-mpich.so.0)
and its probe (mlprobe-mpich).  The front libmlallreduce.so of the package
multilane forwards to it in processes that run on an MPICH-based MPI.")
# hydra's mpiexec runs the probes of `multilane tune` for MPICH jobs.
set(CPACK_DEBIAN_MPICH_PACKAGE_DEPENDS "multilane (= ${_deb_version}), mpich")
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/debian/multilane-mpich/triggers "activate-noawait ldconfig\n")
set(CPACK_DEBIAN_MPICH_PACKAGE_CONTROL_EXTRA ${CMAKE_CURRENT_BINARY_DIR}/debian/multilane-mpich/triggers)

set(CPACK_DEBIAN_SPANK_PACKAGE_NAME slurm-spank-multilane)
set(_slurm_depends "")
if(MULTILANE_HAVE_SLURM)
  # Slurm loads only plugins built for its own major release (YY.MM).
  file(STRINGS ${SLURM_SPANK_INCLUDE_DIR}/slurm/slurm_version.h _slurm_ver REGEX "define SLURM_VERSION_NUMBER")
  if(_slurm_ver MATCHES "0x([0-9a-fA-F][0-9a-fA-F])([0-9a-fA-F][0-9a-fA-F])([0-9a-fA-F][0-9a-fA-F])")
    math(EXPR _major "0x${CMAKE_MATCH_1}")
    math(EXPR _minor "0x${CMAKE_MATCH_2}")
    math(EXPR _next "${_minor} + 1")
    if(_minor LESS 10)
      set(_minor "0${_minor}")
    endif()
    if(_next LESS 10)
      set(_next "0${_next}")
    endif()
    set(_slurm_depends ", slurm-wlm-basic-plugins (>= ${_major}.${_minor}), slurm-wlm-basic-plugins (<< ${_major}.${_next})")
  endif()
endif()
set(CPACK_DEBIAN_SPANK_PACKAGE_DEPENDS "multilane (= ${_deb_version})${_slurm_depends}")
set(CPACK_DEBIAN_SPANK_PACKAGE_SECTION admin)
set(CPACK_DEBIAN_SPANK_DESCRIPTION "tuned multi-lane MPI_Allreduce: Slurm plugin (--multilane)
The SPANK plugin behind srun/sbatch/salloc --multilane: it gives jobs the
tuned layout and binding and injects libmlallreduce with the node type's
profile; with cli_filter.lua the allocation gets the tuned tasks per GPU.
.
Off until the admin enables the line in
/etc/slurm/plugstack.conf.d/multilane.conf.")
# The plugstack line is a conffile: dpkg keeps the admin's edits on upgrade.
set(CPACK_DEBIAN_SPANK_PACKAGE_CONTROL_EXTRA ${CMAKE_CURRENT_BINARY_DIR}/debian/conffiles)
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/debian/conffiles "${MULTILANE_FULL_PLUGSTACKDIR}/multilane.conf\n")
set(CPACK_DEBIAN_SPANK_PACKAGE_CONTROL_STRICT_PERMISSION TRUE)

include(CPack)
