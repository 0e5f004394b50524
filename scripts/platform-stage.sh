#!/usr/bin/env bash
# platform-stage.sh: the second platform of the test command (Debian 13:
# Slurm 24.11, Open MPI 5, PMIx 5, MPICH 4.2, g++ 14), run on a Debian 12
# machine that cannot boot it.
#
# Makes a Debian 13 root with mmdebstrap from the packages of
# `install-deps.sh --list --platform` (kept in build/platform-trixie/root.tar
# while that list is unchanged), copies this source tree into it, and runs
# scripts/platform-inside.sh there: chroot in a private mount namespace with
# /proc, /sys, /dev, /dev/pts and /dev/shm of its own view.  The root shares
# the machine's network and process table: run it beside the first
# platform's Slurm tests only with ports of its own (MLA_SLURMCTLD_PORT,
# MLA_SLURMD_PORT pass into the root; the test command gives it 17817).
# At the end every process left in the root is stopped and the network
# namespace nodes' bridges and veths its Slurm tests left are removed.
#
# Usage: platform-stage.sh [prepare|build|test|stop]; with none it does
# prepare, build and test.
#   prepare  makes (or keeps) the root's archive: mostly download and
#            unpacking, so the test command starts it in the background.
#   build    unpacks a fresh root, copies the tree in and builds it there
#            (no tests); the test command runs it in the background at low
#            priority, on the cores the first platform's tests leave idle.
#   test     copies the tree in again (unchanged files keep their times, so
#            the build there is only brought up to date), builds where no
#            root was built yet, and runs the suites.
#   stop     stops every process running in the root and removes the
#            network its Slurm tests left.
set -euo pipefail
cd "$(dirname "$0")/.."
suite=trixie
work=$PWD/build/platform-$suite
root=$work/root

# stop_root_processes: every process in the root, then what its Slurm tests'
# clusters left in the machine's network (remove_root_networks).
stop_root_processes() {
  local p pids=()
  for p in /proc/[0-9]*; do
    [ "$(readlink "$p/root" 2>/dev/null)" = "$root" ] && pids+=("${p#/proc/}")
  done
  if [ ${#pids[@]} -gt 0 ]; then
    kill "${pids[@]}" 2>/dev/null || true
    sleep 1
    kill -9 "${pids[@]}" 2>/dev/null || true
  fi
  remove_root_networks
}

# remove_root_networks: the network that the root's multi-node Slurm tests
# made (local-slurm.sh --netns) and did not remove, a stage killed halfway.
# The root shares the machine's network namespace, so their management
# bridges and veths (mlaTAG*) are the machine's; their namespaces, mounted
# on the root's /run/netns/mla-TAG-* in the root's own mount namespace, end
# with its processes, and their files stay.  Only the TAGs named there are
# removed: other clusters on the machine are left alone.
remove_root_networks() {
  local f tag l
  command -v ip >/dev/null || return 0
  for f in "$root"/run/netns/mla-*; do
    [ -e "$f" ] || continue
    tag=${f##*/mla-}
    tag=${tag%%-*}
    for l in $(ip -o link show | awk -F': ' '{print $2}' | sed 's/@.*//' | grep "^mla$tag" || true); do
      ip link del "$l" 2>/dev/null || true
    done
    rm -f "$f" 2>/dev/null || true
  done
}

# in_root STEP: platform-inside.sh STEP in the root, in a mount namespace of
# its own; returns its exit status.  The root's environment is made anew;
# of this one only the test Slurm's ports pass in (MLA_SLURMCTLD_PORT,
# MLA_SLURMD_PORT: scripts/slurm/local-slurm.sh), where set.  The root is
# bind-mounted on itself, so that its / is a mount point as on a booted
# system: `ip netns exec` (the multi-node Slurm tests read the rails'
# counters with it) makes / a slave mount and stops where / is a plain folder.
in_root() {
  local pass=() v
  for v in MLA_SLURMCTLD_PORT MLA_SLURMD_PORT; do
    [ -z "${!v:-}" ] || pass+=("$v=${!v}")
  done
  unshare -m --propagation private bash -c '
    set -e
    R=$1 step=$2
    shift 2
    mount --bind "$R" "$R"
    mount -t proc proc "$R/proc"
    mount -t sysfs sys "$R/sys"
    mount --bind /dev "$R/dev"
    mount --bind /dev/pts "$R/dev/pts"
    mount --bind /dev/shm "$R/dev/shm"
    exec chroot "$R" /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
      HOME=/root LANG=C.UTF-8 "$@" bash /src/scripts/platform-inside.sh "$step"
  ' bash "$root" "$1" "${pass[@]}"
}

prepare() {
  local packages
  packages=$(bash scripts/install-deps.sh --list --platform | paste -sd, -)
  if [ ! -s "$work/root.tar" ] || [ "$(cat "$work/root.packages" 2>/dev/null)" != "$packages" ]; then
    echo "platform-stage: making the Debian 13 ($suite) root with mmdebstrap (a few minutes)"
    rm -f "$work/root.tar" "$work/root.tar.part"
    mmdebstrap --quiet --format=tar --variant=apt --include="$packages" "$suite" "$work/root.tar.part"
    mv "$work/root.tar.part" "$work/root.tar"
    echo "$packages" > "$work/root.packages"
  fi
}

# unpack: a fresh root from the archive, with this machine's name service.
unpack() {
  [ -s "$work/root.tar" ] || { echo "platform-stage: no root archive in $work; run 'platform-stage.sh prepare' first" >&2; exit 1; }
  rm -rf "$root"
  mkdir -p "$root/src"
  tar -xf "$work/root.tar" -C "$root"
  cp /etc/resolv.conf "$root/etc/resolv.conf"
  # The machine's own name must resolve in the root too: Slurm 24.11's
  # controller looks up the submitting host's name for every srun and retried
  # for 10 s, then a node's step completion for 60 s more, per step.
  cp /etc/hosts "$root/etc/hosts"
}

# copy_tree: the tree as git sees it (tracked and new files, not what
# .gitignore names) into the root's /src.
copy_tree() {
  git ls-files -z --cached --others --exclude-standard |
    tar --null --ignore-failed-read -T - -cf - 2>/dev/null | tar -xf - -C "$root/src"
}

what=${1:-all}
case $what in
  prepare|build|test|stop|all) ;;
  *) echo "platform-stage.sh: unknown command '$what': use prepare, build, test, stop or nothing (all three)" >&2; exit 2 ;;
esac
mkdir -p "$work"
stop_root_processes
[ "$what" = stop ] && exit 0
if [ "$what" = prepare ] || [ "$what" = all ]; then
  prepare
  [ "$what" = prepare ] && exit 0
fi
trap 'stop_root_processes || true' EXIT
rc=0
if [ "$what" = build ] || [ "$what" = all ] || [ ! -d "$root/src/build/default" ]; then
  unpack
  copy_tree
  in_root build || rc=$?
  echo "platform-stage: Debian 13 build exited $rc"
  [ "$what" = build ] || [ "$rc" != 0 ] && exit "$rc"
fi
copy_tree
in_root test || rc=$?
echo "platform-stage: Debian 13 stage exited $rc"
exit "$rc"
