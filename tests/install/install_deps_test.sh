#!/usr/bin/env bash
# install_deps_test.sh SOURCE: scripts/install-deps.sh's modes (issue 26: a
# build host got the whole test toolchain).  --build names what building and
# packaging need and none of the test toolchain; the default (--tests) names
# all of it; an unknown argument is refused.  Lists only: installs nothing.
set -euo pipefail
script="${1:?usage: install_deps_test.sh SOURCE}/scripts/install-deps.sh"
build=$(bash "$script" --list --build)
tests=$(bash "$script" --list)
fail() { echo "install_deps_test: FAIL: $*" >&2; exit 1; }
for p in cmake ninja-build libopenmpi-dev libmpich-dev libsqlite3-dev libhwloc-dev libcli11-dev \
         nlohmann-json3-dev libslurm-dev dpkg-dev; do
  grep -qx "$p" <<<"$build" || fail "--build lacks $p, which the package build needs"
done
for p in libgtest-dev googletest chromium valgrind lintian lmod lua5.3 clang libsimgrid-dev python3-mpi4py munge; do
  ! grep -qx "$p" <<<"$build" || fail "--build installs $p, which only the tests use"
  grep -qx "$p" <<<"$tests" || fail "the default (--tests) lacks $p"
done
while read -r p; do grep -qx "$p" <<<"$tests" || fail "the default lacks $p of --build"; done <<<"$build"
[ "$(bash "$script" --list --tests)" = "$tests" ] || fail "--tests is not the default"
# --platform: the second platform's stage (a Debian 13 root): the build and the
# MPI/Slurm/package suites, none of the first platform's extra stages.
platform=$(bash "$script" --list --platform)
for p in python3-mpi4py slurm-wlm munge lintian libpmix-dev gfortran; do
  grep -qx "$p" <<<"$platform" || fail "--platform lacks $p"
done
for p in clang libsimgrid-dev chromium mmdebstrap lammps; do
  ! grep -qx "$p" <<<"$platform" || fail "--platform installs $p, which only the first platform's stages use"
done
while read -r p; do grep -qx "$p" <<<"$platform" || fail "--platform lacks $p of --build"; done <<<"$build"
rc=0; bash "$script" --bogus 2>/dev/null || rc=$?
[ "$rc" = 2 ] || fail "an unknown argument exited $rc, not 2"
echo "install_deps_test: ok ($(wc -l <<<"$build") packages to build, $(wc -l <<<"$tests") with the tests)"
