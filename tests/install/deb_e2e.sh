#!/usr/bin/env bash
# deb_e2e.sh PACKAGES_DIR: the Debian packages end to end (scripts/test.sh).
#
# Installs the packages in PACKAGES_DIR with the install blocks of
# docs/admin.md for this platform (deb12 or deb13, from /etc/os-release),
# read from the guide itself (tests/install/guide_blocks.py) and run as
# written in PACKAGES_DIR (the CUDA module's block where a multilane-cuda
# package was built), and checks that they installed every package there;
# runs installed_e2e.py from a copy in a temporary folder inside a mount
# namespace where this source tree (and so every build tree in it) is hidden
# under an empty tmpfs; then removes the packages with the guide's removal
# blocks, purges them and checks that the system database the test made is
# still there.  installed_e2e.py follows docs/admin.md's steps in order (the
# guide's tune, enable and disable blocks among them), so the guide cannot
# drift from what works.  apt-get runs the guide's commands without asking
# (APT_CONFIG: a file of this test's own with APT::Get::Assume-Yes).
# Puts back a system database and its working copy that existed before, and
# leaves none of its own (a working copy left here is what the next real
# `tune --system` would publish from).  Root only.
set -euo pipefail
debs=$(realpath "${1:?usage: deb_e2e.sh PACKAGES_DIR}")
src=$(cd "$(dirname "$0")/../.." && pwd)
db=/var/lib/multilane/profiles.db
# Every package the build makes, dependents first (issue 27: multilane-mpich
# was missing here and stayed half-removed, "rc", after the purge).
packages=(slurm-spank-multilane multilane-cuda multilane-mpich multilane)

shopt -s nullglob
files=("$debs"/*.deb)
[ ${#files[@]} -gt 0 ] || { echo "deb_e2e: no .deb in $debs (run cpack first)" >&2; exit 1; }
for p in multilane multilane-mpich; do
  ls "$debs/${p}_"*.deb >/dev/null 2>&1 || { echo "deb_e2e: no ${p}_*.deb in $debs (MULTILANE_MPICH=ON builds it)" >&2; exit 1; }
done
[ "$(id -u)" -eq 0 ] || { echo "deb_e2e: run as root (it installs packages and starts Slurm)" >&2; exit 1; }
platform=$(/usr/bin/python3 "$src/tests/install/guide_blocks.py" --platform)

work=$(mktemp -d /tmp/mldeb-e2e.XXXXXX)
cp "$src/tests/install/installed_e2e.py" "$src/tests/install/guide_blocks.py" "$src/tests/e2e.py" \
  "$src/scripts/slurm/local-slurm.sh" "$src/tests/slurm/layout_probe.c" "$src/docs/admin.md" "$work/"
{ [ ! -f /etc/apt/apt.conf ] || cat /etc/apt/apt.conf; echo 'APT::Get::Assume-Yes "true";'; } >"$work/apt.conf"
# The system database, its working copy (docs/admin.md, "The system database
# on a shared file system") and their journals: the admin's, put back at the end.
admin_files=("$db" "$db-journal" "$db-wal" "$db-shm" "$db.work" "$db.work-journal")
mkdir "$work/saved"
for f in "${admin_files[@]}"; do [ -e "$f" ] && mv "$f" "$work/saved/"; done
had_dir=0; [ -d "$(dirname "$db")" ] && had_dir=1

# package_status NAME: dpkg's status of NAME (ii, rc, un...; empty: unknown).
package_status() { dpkg-query -W -f='${db:Status-Abbrev}' "$1" 2>/dev/null || true; }
# purge_packages: those installed or with configuration files left.
purge_packages() {
  local present=()
  for p in "${packages[@]}"; do
    case "$(package_status "$p")" in
      ii*|rc*) present+=("$p") ;;
    esac
  done
  [ ${#present[@]} -eq 0 ] || DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq "${present[@]}" >/dev/null
}
# guide_block NAME: the guide's block NAME (docs/admin.md, its copy in the
# work folder), shown and run as written in PACKAGES_DIR.
guide_block() {
  local text
  text=$(/usr/bin/python3 "$work/guide_blocks.py" "$work/admin.md" "$1") || exit 1
  echo "deb_e2e: docs/admin.md's '$1' block:"
  sed 's/^/    /' <<<"$text"
  (cd "$debs" && APT_CONFIG="$work/apt.conf" DEBIAN_FRONTEND=noninteractive bash -euo pipefail -c "$text") >/dev/null
}
# remove_test_files: what the test's tunes made in the system database's folder.
remove_test_files() { rm -f "${admin_files[@]}"; }
restore() {
  purge_packages || true
  remove_test_files
  if [ -n "$(ls -A "$work/saved" 2>/dev/null)" ]; then mkdir -p "$(dirname "$db")"; mv "$work/saved"/* "$(dirname "$db")/"; fi
  [ "$had_dir" = 1 ] || rmdir "$(dirname "$db")" 2>/dev/null || true
  rm -rf "$work"
}
trap restore EXIT

echo "deb_e2e: installing on $platform, in $debs: ${files[*]##*/}"
guide_block "install $platform"
cuda=("$debs"/multilane-cuda_*.deb)
# The CUDA module where the build made it (nvcc found): the guide's block of
# this platform's GPU nodes (guide_blocks.py refuses a platform without one).
if [ ${#cuda[@]} -gt 0 ]; then guide_block "install $platform cuda"; fi
for f in "${files[@]}"; do
  name=$(dpkg-deb -f "$f" Package)
  case "$(package_status "$name")" in
    ii*) ;;
    *) echo "deb_e2e: FAIL: docs/admin.md's install blocks for $platform did not install $name (${f##*/}, built here): name it there" >&2; exit 1 ;;
  esac
done
stat -c 'deb_e2e: %n %U:%G %a' "$(dirname "$db")"
[ "$(stat -c '%U:%G %a' "$(dirname "$db")")" = "root:root 755" ] || { echo "deb_e2e: wrong owner/mode of $(dirname "$db")" >&2; exit 1; }

# The version installed_e2e.py checks (`multilane --version`, the library's
# file name): the installed package's, without its Debian revision.
version=$(dpkg-query -W -f='${Version}' multilane)
version=${version%%-*}
echo "deb_e2e: multilane $version installed"

cd "$work"
# The tree is hidden in a mount namespace of the test's own, private so the
# tmpfs never shows outside it.  In a chroot "/" is no mount point and cannot
# be made private (EINVAL); there the namespace it runs in is private already
# (scripts/platform-stage.sh), so the new one keeps that.
propagation=private
unshare -m --propagation private true 2>/dev/null || propagation=unchanged
unshare -m --propagation "$propagation" bash -c \
  "mount -t tmpfs -o size=1m,mode=755 mlhidden '$src' && exec /usr/bin/python3 '$work/installed_e2e.py' --work '$work' --hidden '$src' --version '$version' --guide '$work/admin.md'"

# The guide's removal: one block for every host (apt-get takes the packages
# that depend on multilane along).
guide_block "remove"
for p in "${packages[@]}"; do
  case "$(package_status "$p")" in
    ii*) echo "deb_e2e: FAIL: docs/admin.md's removal block left $p installed (does it still depend on multilane?)" >&2; exit 1 ;;
  esac
done
[ -e /etc/slurm/plugstack.conf.d/multilane.conf ] || { echo "deb_e2e: FAIL: apt-get remove took multilane.conf, a conffile the guide says it keeps" >&2; exit 1; }
[ -f "$db" ] || { echo "deb_e2e: FAIL: apt-get remove took the system database $db" >&2; exit 1; }
purge_packages
[ -f "$db" ] || { echo "deb_e2e: FAIL: apt-get purge took the system database $db" >&2; exit 1; }
for p in "${packages[@]}"; do
  status=$(package_status "$p")
  case "$status" in
    ""|un*|pn*) ;;
    *) echo "deb_e2e: FAIL: $p is still known to dpkg ($status) after the purge" >&2; exit 1 ;;
  esac
done
[ ! -e /etc/slurm/plugstack.conf.d/multilane.conf ] || { echo "deb_e2e: FAIL: purge left multilane.conf" >&2; exit 1; }
[ -f "$db.work" ] || { echo "deb_e2e: FAIL: the test's tune --partition left no working copy $db.work (is it still written there?)" >&2; exit 1; }
remove_test_files
left=$(ls -A "$(dirname "$db")" 2>/dev/null || true)
[ -z "$left" ] || { echo "deb_e2e: FAIL: the test left files in $(dirname "$db"): $left" >&2; exit 1; }
echo "deb_e2e: PASS: packages removed and purged, the system database $db was still there; the test's files are gone"
