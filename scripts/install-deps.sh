#!/usr/bin/env bash
# Installs the Debian packages multilane needs.  Idempotent: installs only
# what is missing; run as root (or with sudo).
#
#   install-deps.sh [--tests]   everything: build, package, and run every test
#                               suite (what scripts/test.sh and CI use; the default)
#   install-deps.sh --build     only what building the product and its Debian
#                               packages needs (a build host: cmake ...
#                               -DMULTILANE_BUILD_TESTS=OFF, then cpack;
#                               docs/admin.md, "The Debian packages")
#   install-deps.sh --platform  what the second platform's stage runs inside
#                               its Debian 13 root (scripts/platform-stage.sh):
#                               the build, the MPI, Python, Fortran, Slurm and
#                               package suites, not the sanitizer, fuzz,
#                               simulation, browser or application ones
#   install-deps.sh --list [MODE]  print the packages of that mode and exit
set -euo pipefail

mode=tests
list=0
for arg in "$@"; do
  case "$arg" in
    --build) mode=build ;;
    --tests) mode=tests ;;
    --platform) mode=platform ;;
    --list) list=1 ;;
    -h|--help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "install-deps: unknown argument '$arg': give --build, --tests, --platform or --list" >&2; exit 2 ;;
  esac
done

# What building the command, the library (both MPI families), the plugin
# and the packages needs (the package preset: MULTILANE_BUILD_TESTS=OFF).
BUILD_PACKAGES=(
  build-essential cmake ninja-build pkg-config
  openmpi-bin libopenmpi-dev          # the system MPI the library interposes on
  mpich libmpich-dev                  # the MPICH family build (MULTILANE_MPICH=ON requires it)
  libsqlite3-dev libhwloc-dev          # the profile store and the node-type fingerprint (db/)
  libcli11-dev nlohmann-json3-dev       # the multilane command (launcher/), JSON export and probes
  libslurm-dev                         # the SPANK plugin (spank.h) and its Slurm version
  help2man                             # man pages from the command's --help (packaging/ManPages.cmake)
  file dpkg-dev                        # cpack -G DEB: finds the ELF files and runs dpkg-shlibdeps on them
)
# What the test suites add (scripts/test.sh), on every platform.
SUITE_PACKAGES=(
  libpmix-dev                         # PMIx's header: the start-up agreement's ABI check (libmlallreduce/startup/pmix_abi_test.cc)
  gfortran                            # the Fortran tests (tests/fortran/), built by both families' mpifort
  libgtest-dev googletest              # unit and MPI tests
  python3 python3-mpi4py python3-numpy # the third-party MPI client test (/usr/bin/python3)
  sqlite3                              # the tests read the profile store with the sqlite3 shell
  slurm-wlm munge                      # the local Slurm of the plugin's tests
  iproute2                             # ip and tc: the multi-node Slurm tests' network namespace nodes (local-slurm.sh --netns)
  nftables                             # nft: the network fault tests' packet loss (tests/slurm/test_net_faults.py)
  lintian                              # checks the Debian packages (scripts/test.sh)
  ccache                               # the package build reuses the default build's objects (scripts/test.sh)
  lmod                                 # the Lmod module's test (tests/install)
  lua5.3                               # cli_filter.lua run outside Slurm by its failure-line test
)
# What only the first platform's stages add (scripts/test.sh).
FIRST_PLATFORM_PACKAGES=(
  lammps                               # the real-application test (tests/app/: /usr/bin/lmp, built for Open MPI)
  chromium                             # multilane report's test opens the HTML page headless
  valgrind                             # the plugin checked inside slurmstepd
  clang libfuzzer-14-dev               # scripts/fuzz.sh: the libFuzzer targets of fuzz/ (preset fuzz)
  libsimgrid-dev                       # smpicxx/smpirun: the simulation build of simulation/ (preset simulation)
  mmdebstrap                           # the second platform's Debian 13 root (scripts/platform-stage.sh)
  clang-format                         # the layout check of every C and C++ file (scripts/check_format.sh)
)
PACKAGES=("${BUILD_PACKAGES[@]}")
[ "$mode" = build ] || PACKAGES+=("${SUITE_PACKAGES[@]}")
[ "$mode" != tests ] || PACKAGES+=("${FIRST_PLATFORM_PACKAGES[@]}")
if [ "$list" = 1 ]; then printf '%s\n' "${PACKAGES[@]}"; exit 0; fi

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
# Open MPI stays the default MPI (mpicc, mpirun, mpi.h, libmpi.so): installing
# mpich (or SimGrid's packages) may move Debian's alternatives away, and other builds on the
# machine use the defaults.  multilane finds MPICH by its own paths
# (cmake/MultilaneMpiFamilies.cmake).
pin_open_mpi() {
  local sudo="$1" arch
  arch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || echo x86_64-linux-gnu)
  $sudo update-alternatives --set mpi /usr/bin/mpicc.openmpi >/dev/null
  $sudo update-alternatives --set mpirun /usr/bin/mpirun.openmpi >/dev/null
  $sudo update-alternatives --set "mpi-$arch" "/usr/lib/$arch/openmpi/include" >/dev/null
  if ! mpirun --version 2>/dev/null | grep -q "Open MPI"; then
    echo "install-deps: mpirun is not Open MPI's after pinning the alternatives" >&2
    exit 1
  fi
}

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#PACKAGES[@]} packages of mode $mode present"
  if [ "$(id -u)" -eq 0 ]; then pin_open_mpi ""; fi
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null; then SUDO="sudo"; else
    echo "install-deps: missing packages: ${missing[*]}" >&2
    echo "install-deps: run this script as root, or: apt-get install ${missing[*]}" >&2
    exit 1
  fi
fi
echo "install-deps: installing (mode $mode) ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
pin_open_mpi "$SUDO"
echo "install-deps: done (default MPI: $(mpirun --version 2>/dev/null | head -1))"
