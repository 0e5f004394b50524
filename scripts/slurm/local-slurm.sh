#!/usr/bin/env bash
# local-slurm.sh: a real one-node Slurm 22.05 on this machine, as plain
# processes (munged, slurmctld, slurmd), for the plugin's end-to-end tests.
#
#   local-slurm.sh start DIR [PLUGSTACK_LINE...]   writes DIR/slurm.conf and
#       friends, starts the daemons and waits until the node is idle; prints
#       `export SLURM_CONF=DIR/slurm.conf`.  PLUGSTACK_LINE: plugstack.conf lines.
#   local-slurm.sh stop DIR                        stops what start started.
#
# The node claims 8 CPUs and 2 fake GPUs (character devices DIR/dev/nvidia0-1)
# whatever the machine has (SlurmdParameters=config_overrides).  Run as root.
# Variables: MLA_SLURM_CLI_FILTER=1 turns on cli_filter/lua with DIR/cli_filter.lua.
set -euo pipefail

cmd=${1:?usage: local-slurm.sh start|stop DIR [PLUGSTACK_LINE...]}
dir=${2:?usage: local-slurm.sh start|stop DIR [PLUGSTACK_LINE...]}
shift 2
dir=$(realpath -m "$dir")

stop_pidfile() {
  local f=$1
  [ -f "$f" ] || return 0
  local pid; pid=$(cat "$f" 2>/dev/null || true)
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
  fi
  rm -f "$f"
}

if [ "$cmd" = stop ]; then
  stop_pidfile "$dir/run/slurmd.pid"
  stop_pidfile "$dir/run/slurmctld.pid"
  # leftover steps of killed jobs
  pkill -f "slurmstepd: \[" 2>/dev/null || true
  exit 0
fi
[ "$cmd" = start ] || { echo "local-slurm.sh: unknown command '$cmd': use start or stop" >&2; exit 2; }

mkdir -p "$dir"/{run,spool/ctld,spool/d,log,dev,plugstack.conf.d}
chmod 755 "$dir" "$dir"/run "$dir"/log
chown slurm:slurm "$dir/spool/ctld" 2>/dev/null || true
for i in 0 1; do [ -e "$dir/dev/nvidia$i" ] || mknod "$dir/dev/nvidia$i" c 1 3; done

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

cat > "$dir/slurm.conf" <<CONF
ClusterName=multilane-test
SlurmctldHost=localhost
SlurmctldPort=${MLA_SLURMCTLD_PORT:-16817}
SlurmdPort=${MLA_SLURMD_PORT:-16818}
AuthType=auth/munge
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$dir/spool/ctld
SlurmdSpoolDir=$dir/spool/d
SlurmctldPidFile=$dir/run/slurmctld.pid
SlurmdPidFile=$dir/run/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
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
PlugStackConfig=$dir/plugstack.conf
$cli_filter
NodeName=localhost NodeHostname=localhost CPUs=8 Boards=1 SocketsPerBoard=1 CoresPerSocket=8 ThreadsPerCore=1 RealMemory=2000 Gres=gpu:2 State=UNKNOWN
PartitionName=gpu Nodes=localhost Default=YES MaxTime=30 State=UP OverSubscribe=NO
CONF
cat > "$dir/gres.conf" <<CONF
AutoDetect=off
Name=gpu File=$dir/dev/nvidia[0-1]
CONF
: > "$dir/plugstack.conf"
for line in "$@"; do echo "$line" >> "$dir/plugstack.conf"; done
chmod 644 "$dir"/*.conf

# Another Slurm on our ports (a test that died without stopping its own)
# would answer in our place: refuse to start next to it.
port_busy() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
for port in "${MLA_SLURMCTLD_PORT:-16817}" "${MLA_SLURMD_PORT:-16818}"; do
  for _ in $(seq 50); do port_busy "$port" || break; sleep 0.2; done
  if port_busy "$port"; then
    echo "local-slurm.sh: port $port is in use (a Slurm left running?); stop it first" >&2
    exit 1
  fi
done

export SLURM_CONF=$dir/slurm.conf
trap 'bash "$0" stop "$dir"' ERR
/usr/sbin/slurmctld -i
/usr/sbin/slurmd -N localhost
for _ in $(seq 150); do
  if sinfo -h -t idle -o %N 2>/dev/null | grep -q localhost; then
    echo "export SLURM_CONF=$dir/slurm.conf"
    exit 0
  fi
  sleep 0.2
done
echo "local-slurm.sh: the node did not become idle in 30 s; logs in $dir/log" >&2
tail -5 "$dir/log/slurmctld.log" "$dir/log/slurmd.log" >&2 || true
bash "$0" stop "$dir"
exit 1
