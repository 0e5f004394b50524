#!/usr/bin/env bash
# deb_e2e.sh PACKAGES_DIR: the Debian packages end to end (scripts/test.sh).
#
# Installs PACKAGES_DIR/*.deb with apt-get, runs installed_e2e.py from a copy
# in a temporary folder inside a mount namespace where this source tree (and
# so every build tree in it) is hidden under an empty tmpfs, then removes and
# purges the packages and checks that the system database the test made is
# still there.  installed_e2e.py follows docs/admin.md's steps in order (tune
# the partition, enable the plugstack line and restart slurmd, the cli_filter,
# doctor, jobs, the removal steps), so the guide cannot drift from what works.
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

work=$(mktemp -d /tmp/mldeb-e2e.XXXXXX)
cp "$src/tests/install/installed_e2e.py" "$src/tests/e2e.py" "$src/scripts/slurm/local-slurm.sh" \
  "$src/tests/slurm/layout_probe.c" "$work/"
# The system database, its working copy (docs/admin.md, "The system database
# on a shared file system") and their journals: the admin's, put back at the end.
admin_files=("$db" "$db-journal" "$db-wal" "$db-shm" "$db.work" "$db.work-journal")
mkdir "$work/saved"
for f in "${admin_files[@]}"; do [ -e "$f" ] && mv "$f" "$work/saved/"; done
had_dir=0; [ -d "$(dirname "$db")" ] && had_dir=1

# remove_packages remove|purge: the installed packages (remove), or those
# installed or with configuration files left (purge).
remove_packages() {
  local present=() status
  for p in "${packages[@]}"; do
    status=$(dpkg-query -W -f='${db:Status-Abbrev}' "$p" 2>/dev/null || true)
    case "$1:$status" in
      remove:ii*|purge:ii*|purge:rc*) present+=("$p") ;;
    esac
  done
  [ ${#present[@]} -eq 0 ] || DEBIAN_FRONTEND=noninteractive apt-get "$1" -y -qq "${present[@]}" >/dev/null
}
# remove_test_files: what the test's tunes made in the system database's folder.
remove_test_files() { rm -f "${admin_files[@]}"; }
restore() {
  remove_packages purge || true
  remove_test_files
  if [ -n "$(ls -A "$work/saved" 2>/dev/null)" ]; then mkdir -p "$(dirname "$db")"; mv "$work/saved"/* "$(dirname "$db")/"; fi
  [ "$had_dir" = 1 ] || rmdir "$(dirname "$db")" 2>/dev/null || true
  rm -rf "$work"
}
trap restore EXIT

echo "deb_e2e: installing ${files[*]##*/}"
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${files[@]}" >/dev/null
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
  "mount -t tmpfs -o size=1m,mode=755 mlhidden '$src' && exec /usr/bin/python3 '$work/installed_e2e.py' --work '$work' --hidden '$src' --version '$version'"

remove_packages remove
[ -f "$db" ] || { echo "deb_e2e: FAIL: apt-get remove took the system database $db" >&2; exit 1; }
remove_packages purge
[ -f "$db" ] || { echo "deb_e2e: FAIL: apt-get purge took the system database $db" >&2; exit 1; }
for p in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${db:Status-Abbrev}' "$p" 2>/dev/null || true)
  case "$status" in
    ""|un*|pn*) ;;
    *) echo "deb_e2e: FAIL: $p is still known to dpkg ($status) after the purge" >&2; exit 1 ;;
  esac
done
[ ! -e /etc/slurm/plugstack.conf.d/multilane.conf ] || { echo "deb_e2e: FAIL: purge left multilane.conf" >&2; exit 1; }
[ -f "$db.work" ] || { echo "deb_e2e: FAIL: the test's tune --system left no working copy $db.work (is it still written there?)" >&2; exit 1; }
remove_test_files
left=$(ls -A "$(dirname "$db")" 2>/dev/null || true)
[ -z "$left" ] || { echo "deb_e2e: FAIL: the test left files in $(dirname "$db"): $left" >&2; exit 1; }
echo "deb_e2e: PASS: packages removed and purged, the system database $db was still there; the test's files are gone"
