#!/usr/bin/env bash
# local-slurm.sh: a real Slurm 22.05 on this machine, as plain processes
# (munged, slurmctld, one slurmd per node), for the plugin's end-to-end tests.
#
#   local-slurm.sh start DIR [--nodes N] [PLUGSTACK_LINE...]
#       writes DIR/slurm.conf and friends, starts the daemons and waits until
#       every node is idle; prints `export SLURM_CONF=DIR/slurm.conf`.
#       PLUGSTACK_LINE: plugstack.conf lines.
#   local-slurm.sh restart-slurmd DIR
#       stops and starts this cluster's slurmd daemons (what an admin does with
#       `systemctl restart slurmd` after changing the plugstack line: slurmd
#       loads SPANK plugins for the job prolog and epilog only when it starts)
#       and waits until every node is idle again.
#   local-slurm.sh stop DIR
#       cancels this cluster's jobs and stops its daemons and job steps (by
#       pid files and by this cluster's SLURM_CONF, never by process name, so
#       other Slurm clusters on the machine are left alone).
#
# One node (the default) is `localhost`.  With --nodes N (2 to 8) the nodes are
# node1..nodeN: each slurmd runs in its own UTS namespace with that host name,
# so that tasks see their node's name and Open MPI treats the nodes as hosts
# (shared memory inside a node, TCP on loopback between them; set
# OMPI_MCA_btl_tcp_if_include=lo for MPI jobs), with its own port, spool, log
# and TmpFS folders.  Each node claims 8 CPUs and 2 fake GPUs (character
# devices DIR/dev/NODE/nvidia0-1) whatever the machine has
# (SlurmdParameters=config_overrides).  Run as root.
# Variables: MLA_SLURM_CLI_FILTER=1 turns on cli_filter/lua with DIR/cli_filter.lua;
# MLA_SLURMCTLD_PORT, MLA_SLURMD_PORT (the first node's port) move the ports.
set -euo pipefail

usage="usage: local-slurm.sh start DIR [--nodes N] [PLUGSTACK_LINE...] | restart-slurmd DIR | stop DIR"
cmd=${1:?$usage}
dir=${2:?$usage}
shift 2
dir=$(realpath -m "$dir")
nodes=1
if [ "${1:-}" = --nodes ]; then
  nodes=${2:?$usage}
  shift 2
  [[ "$nodes" =~ ^[1-8]$ ]] || { echo "local-slurm.sh: --nodes '$nodes': give a number from 1 to 8" >&2; exit 2; }
fi
ctld_port=${MLA_SLURMCTLD_PORT:-16817}
d_port=${MLA_SLURMD_PORT:-16818}

# running PID: the process exists and is not a zombie waiting for its parent
# (the daemons' parent is init, which reaps when it gets round to it).
running() {
  local stat
  read -r stat < "/proc/$1/stat" 2>/dev/null || return 1
  stat=${stat##*) }
  [ "${stat%% *}" != Z ]
}

# stop_pidfiles SIGNAL FILE...: SIGNAL to every daemon named by the pid files
# at once, up to 5 s for all of them to exit, then SIGKILL to what is left;
# the pid files are removed.
stop_pidfiles() {
  local sig=$1 f pid alive pids=()
  shift
  for f in "$@"; do
    [ -f "$f" ] || continue
    pid=$(cat "$f" 2>/dev/null || true)
    [ -n "$pid" ] && running "$pid" && pids+=("$pid")
  done
  if [ ${#pids[@]} -gt 0 ]; then
    kill -s "$sig" "${pids[@]}" 2>/dev/null || true
    for _ in $(seq 100); do
      alive=0
      for pid in "${pids[@]}"; do running "$pid" && alive=1; done
      [ "$alive" = 0 ] && break
      sleep 0.05
    done
    kill -9 "${pids[@]}" 2>/dev/null || true
  fi
  rm -f "$@"
}

# The job step daemons of this cluster: slurmstepd processes whose
# environment names this cluster's slurm.conf (they inherit slurmd's).
own_stepds() {
  local conf="SLURM_CONF=$dir/slurm.conf" pid
  for pid in $(pgrep -x slurmstepd); do
    tr '\0' '\n' 2>/dev/null < "/proc/$pid/environ" | grep -qxF "$conf" && echo "$pid"
  done
  return 0
}

# start_slurmd NODE: one slurmd of this cluster (SLURM_CONF set); node1..8 in
# a UTS namespace of their own (the host name tasks see), localhost as it is.
start_slurmd() {
  if [ "$1" = localhost ]; then
    /usr/sbin/slurmd -N localhost
  else
    # Its own host name: tasks see it and Open MPI tells the nodes apart.
    unshare --uts /bin/sh -c "hostname $1 && exec /usr/sbin/slurmd -N $1"
  fi
}

# wait_idle N: until N nodes are idle (0), or 30 s (1).
wait_idle() {
  for _ in $(seq 150); do
    idle=$(sinfo -h -t idle -o %D 2>/dev/null | awk '{s += $1} END {print s + 0}')
    [ "$idle" = "$1" ] && return 0
    sleep 0.2
  done
  return 1
}

if [ "$cmd" = restart-slurmd ]; then
  export SLURM_CONF=$dir/slurm.conf
  names=()
  for f in "$dir"/run/slurmd-*.pid; do
    [ -e "$f" ] || continue
    n=${f##*/slurmd-}
    names+=("${n%.pid}")
  done
  stop_pidfiles TERM "$dir"/run/slurmd-*.pid
  [ ${#names[@]} -gt 0 ] || { echo "local-slurm.sh: no slurmd of $dir runs" >&2; exit 1; }
  for n in "${names[@]}"; do start_slurmd "$n"; done
  wait_idle "${#names[@]}" || { echo "local-slurm.sh: the restarted slurmd did not become idle in 30 s; logs in $dir/log" >&2; exit 1; }
  exit 0
fi

if [ "$cmd" = stop ]; then
  if [ -f "$dir/slurm.conf" ] && [ -f "$dir/run/slurmctld.pid" ]; then
    # This cluster's jobs first, so that their steps end through Slurm.
    jobs=$(SLURM_CONF=$dir/slurm.conf timeout 10 squeue -h -o %i 2>/dev/null || true)
    if [ -n "$jobs" ]; then
      # shellcheck disable=SC2086
      SLURM_CONF=$dir/slurm.conf timeout 10 scancel $jobs 2>/dev/null || true
      for _ in $(seq 50); do
        [ -z "$(SLURM_CONF=$dir/slurm.conf timeout 5 squeue -h -o %i 2>/dev/null || true)" ] && break
        sleep 0.1
      done
    fi
  fi
  # The daemons get SIGKILL: this cluster is thrown away with its state, and
  # on SIGTERM slurmctld and slurmd take 1-2 s each to shut down (most of a
  # test's stop, paid twice per Slurm test in CI).  The jobs were cancelled
  # above; steps that outlive slurmd are stopped below.
  stop_pidfiles KILL "$dir"/run/slurmd*.pid "$dir/run/slurmctld.pid"
  # Steps of killed jobs that outlived their slurmd: this cluster's only.
  pids=$(own_stepds)
  if [ -n "$pids" ]; then
    # shellcheck disable=SC2086
    kill $pids 2>/dev/null || true
    sleep 0.5
    # shellcheck disable=SC2086
    kill -9 $pids 2>/dev/null || true
  fi
  exit 0
fi
[ "$cmd" = start ] || { echo "local-slurm.sh: unknown command '$cmd': use start or stop" >&2; exit 2; }

if [ "$nodes" = 1 ]; then names=(localhost); else names=(); for i in $(seq "$nodes"); do names+=("node$i"); done; fi
mkdir -p "$dir"/{run,spool/ctld,log,plugstack.conf.d}
chmod 755 "$dir" "$dir"/run "$dir"/log
chown slurm:slurm "$dir/spool/ctld" 2>/dev/null || true
for n in "${names[@]}"; do
  mkdir -p "$dir/spool/$n" "$dir/tmp/$n" "$dir/dev/$n"
  chmod 1777 "$dir/tmp" "$dir/tmp/$n"
  for i in 0 1; do [ -e "$dir/dev/$n/nvidia$i" ] || mknod "$dir/dev/$n/nvidia$i" c 1 3; done
done

# munge: one daemon for the machine; start it if it is not answering.
if ! munge -n </dev/null 2>/dev/null | unmunge >/dev/null 2>&1; then
  mkdir -p /run/munge /var/log/munge /var/lib/munge /etc/munge
  chown munge:munge /run/munge /var/log/munge /var/lib/munge /etc/munge
  if [ ! -s /etc/munge/munge.key ]; then
    mungekey --create --keyfile=/etc/munge/munge.key
    chown munge:munge /etc/munge/munge.key; chmod 400 /etc/munge/munge.key
  fi
  su -s /bin/sh munge -c "/usr/sbin/munged --force"
  for _ in $(seq 50); do munge -n </dev/null 2>/dev/null | unmunge >/dev/null 2>&1 && break; sleep 0.1; done
fi

cli_filter=""
if [ "${MLA_SLURM_CLI_FILTER:-0}" = 1 ]; then
  cli_filter="CliFilterPlugins=cli_filter/lua"
fi

node_lines=""
gres_lines="AutoDetect=off"
node_list=$(IFS=,; echo "${names[*]}")
i=0
for n in "${names[@]}"; do
  if [ "$nodes" = 1 ]; then addr="NodeHostname=localhost"; else addr="NodeHostname=$n NodeAddr=127.0.0.1 Port=$((d_port + i))"; fi
  node_lines+="NodeName=$n $addr CPUs=8 Boards=1 SocketsPerBoard=1 CoresPerSocket=8 ThreadsPerCore=1 RealMemory=2000 Gres=gpu:2 State=UNKNOWN"$'\n'
  gres_lines+=$'\n'"NodeName=$n Name=gpu File=$dir/dev/$n/nvidia[0-1]"
  i=$((i + 1))
done

# MinJobAge=4: `sbatch --wait` (every test job) polls the job every 2 s only
# while MinJobAge is at most 4 (measured on 22.05 and 24.11; at 8 it sleeps 2
# then 8 s, at the default 300 2, 8, then 32 s, so a 3 s job took 10 s and a
# 12 s one 42 s).  No test reads a job's record more than a moment after it ended.
cat > "$dir/slurm.conf" <<CONF
ClusterName=multilane-test
SlurmctldHost=localhost
SlurmctldPort=$ctld_port
SlurmdPort=$d_port
AuthType=auth/munge
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$dir/spool/ctld
SlurmdSpoolDir=$dir/spool/%n
SlurmctldPidFile=$dir/run/slurmctld.pid
SlurmdPidFile=$dir/run/slurmd-%n.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd-%n.log
TmpFS=$dir/tmp/%n
SlurmdDebug=info
SlurmctldDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SlurmdParameters=config_overrides
GresTypes=gpu
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=pmix
ReturnToService=2
SchedulerType=sched/backfill
MinJobAge=4
PlugStackConfig=$dir/plugstack.conf
$cli_filter
${node_lines}PartitionName=gpu Nodes=$node_list Default=YES MaxTime=30 State=UP OverSubscribe=NO
CONF
echo "$gres_lines" > "$dir/gres.conf"
# Fences by ring, not tree.  The pmix plugin runs a fence without data (Open
# MPI's barrier at the end of MPI_Init and in MPI_Finalize) as a tree, and on
# these virtual nodes (one host, one address) each slurmstepd finished that
# tree alone (22.05 at SlurmdDebug=debug: "local delivery", no message to the
# other node).  The barrier then did not hold: a fast node's ranks left
# MPI_Init and sent to a rank on the other node still before its PML was
# ready, which crashed there (Open MPI 4.1.4 on 22.05, about one step in 40
# under load; the same crash on 24.11 with Open MPI 5.0.7; none in 400 steps
# with the ring).  The ring, which the data exchange uses anyway, crosses nodes.
echo "PMIxCollFence=ring" > "$dir/mpi.conf"
# Slurm 24.05 and later initialise a cgroup plugin in every slurmd, whatever
# ProctrackType says, and stop where none works (a container, a cgroup v1
# host); this test cluster uses none.  22.05 reads no cgroup.conf here.
slurm_version=$(/usr/sbin/slurmd -V 2>/dev/null | awk '{print $2}')
if [ "$(printf '%s\n' 24.05 "$slurm_version" | sort -V | head -n 1)" = 24.05 ]; then
  echo "CgroupPlugin=disabled" > "$dir/cgroup.conf"
fi
: > "$dir/plugstack.conf"
for line in "$@"; do echo "$line" >> "$dir/plugstack.conf"; done
chmod 644 "$dir"/*.conf

# Another Slurm on our ports (a test that died without stopping its own)
# would answer in our place: refuse to start next to it.
port_busy() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
ports=("$ctld_port")
for i in $(seq 0 $((nodes - 1))); do ports+=($((d_port + i))); done
for port in "${ports[@]}"; do
  for _ in $(seq 50); do port_busy "$port" || break; sleep 0.2; done
  if port_busy "$port"; then
    echo "local-slurm.sh: port $port is in use (a Slurm left running?); stop it first" >&2
    exit 1
  fi
done

export SLURM_CONF=$dir/slurm.conf
trap 'bash "$0" stop "$dir"' ERR
/usr/sbin/slurmctld -i
if [ "$nodes" = 1 ]; then
  start_slurmd localhost
else
  for n in "${names[@]}"; do start_slurmd "$n"; done
fi
if wait_idle "$nodes"; then
  echo "export SLURM_CONF=$dir/slurm.conf"
  exit 0
fi
echo "local-slurm.sh: $((nodes - ${idle:-0})) of $nodes nodes did not become idle in 30 s; logs in $dir/log" >&2
tail -n 5 "$dir"/log/*.log >&2 || true
bash "$0" stop "$dir"
exit 1
