#!/usr/bin/env bash
# Installs the Debian 12 packages multilane needs to build, test and run.
# Idempotent: installs only what is missing; run as root (or with sudo).
set -euo pipefail

PACKAGES=(
  build-essential cmake ninja-build pkg-config
  openmpi-bin libopenmpi-dev          # the system MPI the library interposes on
  libgtest-dev googletest              # unit and MPI tests
  python3 python3-mpi4py python3-numpy # the third-party MPI client test (/usr/bin/python3)
  libsqlite3-dev sqlite3 libhwloc-dev   # the profile store and the node-type fingerprint (db/)
  libcli11-dev nlohmann-json3-dev       # the multilane command (launcher/), JSON export and probes
  chromium                             # multilane report's test opens the HTML page headless
  slurm-wlm munge libslurm-dev         # the SPANK plugin (spank.h) and the local Slurm of its tests
  valgrind                             # the plugin checked inside slurmstepd
  help2man                             # man pages from the command's --help (packaging/ManPages.cmake)
  file dpkg-dev                        # cpack -G DEB: finds the ELF files and runs dpkg-shlibdeps on them
  lintian                              # checks the Debian packages (scripts/test.sh)
  lmod                                 # the Lmod module's test (tests/install)
  lua5.3                               # cli_filter.lua run outside Slurm by its failure-line test
  clang libfuzzer-14-dev               # scripts/fuzz.sh: the libFuzzer targets of fuzz/ (preset fuzz)
  libsimgrid-dev                       # smpicxx/smpirun: the simulation build of simulation/ (preset simulation)
)

# SimGrid's packages may register their own MPI alternatives; the system MPI
# the library is built against and tested under is Open MPI.
keep_openmpi_default() {
  local s=""
  [ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null && s="sudo"
  if [ -e /usr/bin/mpicc.openmpi ] && ! update-alternatives --query mpi 2>/dev/null | grep -q '^Value: /usr/bin/mpicc.openmpi$'; then
    $s update-alternatives --set mpi /usr/bin/mpicc.openmpi
  fi
  if [ -e /usr/bin/mpirun.openmpi ] && ! update-alternatives --query mpirun 2>/dev/null | grep -q '^Value: /usr/bin/mpirun.openmpi$'; then
    $s update-alternatives --set mpirun /usr/bin/mpirun.openmpi
  fi
}

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#PACKAGES[@]} packages present"
  keep_openmpi_default
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
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
keep_openmpi_default
echo "install-deps: done"
