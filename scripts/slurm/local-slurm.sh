#!/usr/bin/env bash
# local-slurm.sh: a real Slurm 22.05 on this machine, as plain processes
# (munged, slurmctld, one slurmd per node, all of the cluster's own), for the
# plugin's end-to-end tests.
#
#   local-slurm.sh start DIR [--nodes N [--netns [--rails R] [--rate RATE] [--delay DELAY]]] [PLUGSTACK_LINE...]
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
#       other Slurm clusters on the machine are left alone), and removes the
#       network namespaces, veths and bridges of DIR (also after a failed start).
#
# One node (the default) is `localhost`.  With --nodes N (2 to 8) the nodes are
# node1..nodeN: each slurmd runs in its own UTS namespace with that host name,
# so that tasks see their node's name and Open MPI treats the nodes as hosts
# (shared memory inside a node, TCP on loopback between them; set
# OMPI_MCA_btl_tcp_if_include=lo for MPI jobs), with its own port, spool, log
# and TmpFS folders.  Each node claims 8 CPUs and 2 fake GPUs (character
# devices DIR/dev/NODE/nvidia0-1) whatever the machine has
# (SlurmdParameters=config_overrides).  Run as root.
#
# --netns gives the nodes a network of their own: each node runs in its own
# network and UTS namespace (mla-TAG-nodeI; TAG: 6 hex digits of DIR's hash,
# so two clusters never share a name) with
#   - mgmt: 10.243.M.I/24 (M from TAG, 1-199), a veth into the bridge mlaTAGbr
#     of the root namespace, which holds 10.243.M.254: slurmctld (in the root
#     namespace, SlurmctldHost=localhost(10.243.M.254)) and srun reach the
#     nodes there; unshaped.  slurmd (started with nsenter --net, unshare
#     --uts) listens inside its namespace only, at NodeAddr=10.243.M.I, all
#     nodes on SlurmdPort: each has its own address;
#   - R rails (--rails, 1 to 4, default 2) railK: 10.243.(200+K).I/24, a veth
#     into the bridge railK of the namespace mla-TAG-fabric (the switch),
#     shaped on each node's egress with tc: tbf --rate (default 200mbit: on
#     the busy 2-core machine two rails at 200mbit each moved their rate at
#     once, two at 400mbit only 450-690 of 800 Mbit/s together; netns_check.py
#     shows it) and, with --delay (e.g. 50us; default 0: none), a netem delay
#     (needs the kernel's sch_netem; the 2-core CI kernel has none).
# The rail addresses exist only inside the namespaces; IPv6 is off on every
# interface made, so a rail carries only what the nodes send.  DIR/netns.env
# lists the names and addresses; scripts/slurm/netns_check.py measures each
# rail's TCP rate and reads the rails' byte counters (for a test to check that
# a job's traffic crossed them).  Open MPI's TCP uses every interface but
# loopback, mgmt too: OMPI_MCA_btl_tcp_if_include=rail0,rail1 keeps it on the
# rails (it then stripes messages above its eager limit over them and sends
# the smaller ones on one rail; tests/slurm/slurm_fixtures.py check_rails).
# Variables: MLA_SLURM_CLI_FILTER=1 turns on cli_filter/lua with DIR/cli_filter.lua;
# MLA_SLURMCTLD_PORT, MLA_SLURMD_PORT (the first node's port) move the ports;
# MLA_SLURM_OWNER=PID names the process that will stop the cluster (a test):
# should it end without stopping a --netns cluster (CTest kills a case on its
# timeout), the next start of any cluster stops that one and removes its
# network (sweep_orphans).
set -euo pipefail

usage="usage: local-slurm.sh start DIR [--nodes N [--netns [--rails R] [--rate RATE] [--delay DELAY]]] [--mpi-default TYPE] [PLUGSTACK_LINE...] | restart-slurmd DIR | stop DIR"
cmd=${1:?$usage}
dir=${2:?$usage}
shift 2
dir=$(realpath -m "$dir")

# bad_option TEXT: TEXT (what is wrong and the fix) on stderr, exit 2.
bad_option() {
  echo "local-slurm.sh: $1" >&2
  exit 2
}

nodes=1
netns=0
rails=""
rate=""
delay=""
mpi_default=pmix
while [ $# -gt 0 ]; do
  case "$1" in
    --nodes)
      nodes=${2:?$usage}
      shift 2
      [[ "$nodes" =~ ^[1-8]$ ]] || bad_option "--nodes '$nodes': give a number from 1 to 8" ;;
    --netns)
      netns=1
      shift ;;
    --rails)
      rails=${2:?$usage}
      shift 2
      [[ "$rails" =~ ^[1-4]$ ]] || bad_option "--rails '$rails': give a number from 1 to 4" ;;
    --rate)
      rate=${2:?$usage}
      shift 2
      [[ "$rate" =~ ^[1-9][0-9]*(kbit|mbit|gbit)$ ]] || bad_option "--rate '$rate': give a rate in kbit, mbit or gbit, such as 400mbit" ;;
    --delay)
      delay=${2:?$usage}
      shift 2
      [[ "$delay" =~ ^(0|[1-9][0-9]*(us|ms))$ ]] || bad_option "--delay '$delay': give a delay in us or ms, such as 50us, or 0 for none" ;;
    --mpi-default)
      mpi_default=${2:?$usage}
      shift 2
      [[ "$mpi_default" =~ ^[a-z0-9_]+$ ]] || bad_option "--mpi-default '$mpi_default': give one of srun --mpi=list's types, such as pmix or none" ;;
    --*)
      bad_option "unknown option '$1': use --nodes, --netns, --rails, --rate, --delay or --mpi-default" ;;
    *)
      break ;;
  esac
done
if [ "$netns" = 0 ]; then
  for opt in rails rate delay; do
    [ -z "${!opt}" ] || bad_option "--$opt shapes the rails of network namespace nodes: add --netns (with --nodes N)"
  done
elif [ "$nodes" -lt 2 ]; then
  bad_option "--netns needs two nodes or more: add --nodes N (2 to 8)"
fi
rails=${rails:-2}
rate=${rate:-200mbit}
delay=${delay:-0}
# The names of DIR's network: namespaces mla-TAG-*, root namespace links
# mlaTAG*, the management subnet 10.243.M.0/24 (rails: 10.243.200+K.0/24,
# inside the namespaces only).
tag=$(printf %s "$dir" | sha1sum | cut -c1-6)
ns_prefix="mla-$tag-"
link_prefix="mla$tag"
mgmt_net="10.243.$((1 + 0x$tag % 199))"
# The cluster's own munged (slurm.conf's AuthInfo=socket=): its key, socket,
# seed, pid and log in DIR, started by start, stopped by stop; no cluster
# shares a daemon with another, and none writes under /etc/munge or /run/munge
# or leaves a daemon running.
munge_dir=$dir/munge
munge_socket=$munge_dir/munge.socket
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
# a UTS namespace of their own (the host name tasks see), and with --netns in
# their network namespace too; localhost as it is.
start_slurmd() {
  if [ "$1" = localhost ]; then
    /usr/sbin/slurmd -N localhost
  elif [ -f "$dir/netns.env" ]; then
    # nsenter, not `ip netns exec`: that remounts /sys for the namespace,
    # without /sys/fs/cgroup, and slurmd stops ("Unable to initialize
    # cgroup plugin").
    nsenter "--net=/run/netns/$ns_prefix$1" unshare --uts /bin/sh -c "hostname $1 && exec /usr/sbin/slurmd -N $1"
  else
    # Its own host name: tasks see it and Open MPI tells the nodes apart.
    unshare --uts /bin/sh -c "hostname $1 && exec /usr/sbin/slurmd -N $1"
  fi
}

# no_ipv6 PATH: IPv6 off where PATH (a /proc/sys/net/ipv6/conf/IF folder of
# the namespace the caller is in) exists, so that the interfaces made carry
# no neighbour discovery: a rail's counters count the nodes' traffic only.
no_ipv6() {
  [ ! -d "$1" ] || echo 1 > "$1/disable_ipv6"
}

# ns_no_ipv6 NS: IPv6 off in NS, on its interfaces (all) and those made
# later (default).
ns_no_ipv6() {
  [ -d /proc/sys/net/ipv6 ] || return 0
  # shellcheck disable=SC2016  # $c is the inner shell's
  nsenter "--net=/run/netns/$1" /bin/sh -c 'for c in all default; do echo 1 > /proc/sys/net/ipv6/conf/$c/disable_ipv6; done'
}

# rate_bits RATE: RATE (200mbit) in bit/s.
rate_bits() {
  local n=${1%%[kmg]bit}
  case "$1" in
    *kbit) echo $((n * 1000)) ;;
    *mbit) echo $((n * 1000000)) ;;
    *gbit) echo $((n * 1000000000)) ;;
  esac
}

# shape NS IF: the egress of IF in NS at $rate (tbf; a burst of 1 ms at the
# rate, at least 32 KiB) and, unless $delay is 0, $delay later (netem).
shape() {
  local burst
  burst=$(( $(rate_bits "$rate") / 8 / 1000 ))
  [ "$burst" -ge 32768 ] || burst=32768
  if ! tc -n "$1" qdisc add dev "$2" root handle 1: tbf rate "$rate" burst "$burst" latency 10ms; then
    echo "local-slurm.sh: tc could not shape $2 with tbf (no sch_tbf in this kernel?): the rails need it" >&2
    exit 1
  fi
  [ "$delay" = 0 ] && return 0
  if ! tc -n "$1" qdisc add dev "$2" parent 1:1 handle 10: netem delay "$delay" limit 10000; then
    echo "local-slurm.sh: --delay $delay needs tc's netem qdisc (sch_netem), which this kernel lacks: leave --delay out" >&2
    exit 1
  fi
}

# netns_free: exits 1 unless DIR's names and management subnet are free
# (nothing left of an earlier start, no other cluster on the subnet).
netns_free() {
  if ip netns list | grep -q "^$ns_prefix" || ip link show "${link_prefix}br" >/dev/null 2>&1; then
    echo "local-slurm.sh: the network namespaces of $dir exist (its cluster still running?): run local-slurm.sh stop $dir first" >&2
    exit 1
  fi
  if [ -n "$(ip -4 -o addr show to "$mgmt_net.0/24")" ]; then
    echo "local-slurm.sh: $mgmt_net.0/24, the management subnet of $dir, is in use on this machine: use another DIR" >&2
    exit 1
  fi
}

# proc_start PID: the start time of process PID (field 22 of its stat, in
# clock ticks since boot), empty when there is no such process: with the pid
# it names one process, not a later one that got the same pid.
proc_start() {
  local stat
  read -r stat < "/proc/$1/stat" 2>/dev/null || return 0
  stat=${stat##*) }
  echo "$stat" | awk '{print $20}'
}

# owner_gone DIR: 0 when DIR/owner (written at start from MLA_SLURM_OWNER:
# "PID START") names a process that has ended; 1 when it runs or DIR has no
# owner file (a cluster started by hand is never taken for an orphan).
owner_gone() {
  local pid start
  read -r pid start < "$1/owner" 2>/dev/null || return 1
  [ "$(proc_start "$pid")" != "$start" ]
}

# sweep_orphans: stops every network namespace cluster whose owner has ended
# without stopping it (a test case that CTest killed on its timeout): its
# daemons, namespaces, veths and bridges.  Found by the root namespace's
# management bridges mlaTAGbr, whose alias is the cluster's DIR (netns_up);
# a bridge whose alias is no folder here (one made by a chroot's cluster) or
# whose TAG is not its folder's is left alone.
sweep_orphans() {
  local br alias
  command -v ip >/dev/null || return 0
  for br in $(ip -o link show type bridge | awk -F': ' '{print $2}' | grep -E '^mla[0-9a-f]{6}br$' || true); do
    alias=$(cat "/sys/class/net/$br/ifalias" 2>/dev/null || true)
    if [ -z "$alias" ] || [ "$alias" = "$dir" ] || [ ! -d "$alias" ]; then continue; fi
    if [ "mla$(printf %s "$alias" | sha1sum | cut -c1-6)br" != "$br" ] || ! owner_gone "$alias"; then continue; fi
    echo "local-slurm.sh: stopping $alias, a cluster whose owner (pid $(cut -d' ' -f1 "$alias/owner")) ended without stopping it" >&2
    bash "$0" stop "$alias" >&2 || true
  done
}

# netns_up: DIR's network (see the header): the fabric namespace with one
# bridge per rail, the management bridge in the root namespace, and per node
# a namespace with its mgmt and rail interfaces; DIR/netns.env lists them.
netns_up() {
  local i n ns r fabric="${ns_prefix}fabric" br="${link_prefix}br"
  {
    echo "# local-slurm.sh start --netns: the network of this cluster"
    echo "tag=$tag"
    echo "nodes=${names[*]}"
    echo "rails=$rails"
    echo "rate=$rate"
    echo "delay=$delay"
    echo "mgmt_bridge=$br"
    echo "fabric=$fabric"
    echo "controller=$mgmt_net.254"
  } > "$dir/netns.env"
  # One `ip -batch` per namespace and step: some 60 ip commands, each a
  # process of its own, took 1.5 s of the start on the busy 2-core machine.
  for ns in "$fabric" "${names[@]/#/$ns_prefix}"; do echo "netns add $ns"; done | ip -batch -
  for ns in "$fabric" "${names[@]/#/$ns_prefix}"; do ns_no_ipv6 "$ns"; done
  {
    echo "link add $br type bridge"
    for i in $(seq "$nodes"); do echo "link add ${link_prefix}n$i type veth peer name mgmt netns $ns_prefix${names[i - 1]}"; done
  } | ip -batch -
  ip link set "$br" alias "$dir"  # sweep_orphans finds the cluster by it
  no_ipv6 "/proc/sys/net/ipv6/conf/$br"
  for i in $(seq "$nodes"); do no_ipv6 "/proc/sys/net/ipv6/conf/${link_prefix}n$i"; done
  {
    echo "addr add $mgmt_net.254/24 dev $br"
    echo "link set $br up"
    for i in $(seq "$nodes"); do echo "link set ${link_prefix}n$i master $br up"; done
  } | ip -batch -
  {
    for r in $(seq 0 $((rails - 1))); do echo "link add rail$r type bridge"; echo "link set rail$r up"; done
    for i in $(seq "$nodes"); do
      for r in $(seq 0 $((rails - 1))); do
        echo "link add n${i}r$r type veth peer name rail$r netns $ns_prefix${names[i - 1]}"
        echo "link set n${i}r$r master rail$r up"
      done
    done
  } | ip -n "$fabric" -batch -
  i=0
  for n in "${names[@]}"; do
    i=$((i + 1))
    ns=$ns_prefix$n
    {
      echo "link set lo up"
      echo "addr add $mgmt_net.$i/24 dev mgmt"
      echo "link set mgmt up"
      for r in $(seq 0 $((rails - 1))); do
        echo "addr add 10.243.$((200 + r)).$i/24 dev rail$r"
        echo "link set rail$r up"
      done
    } | ip -n "$ns" -batch -
    { echo "ns_$n=$ns"; echo "mgmt_$n=$mgmt_net.$i"; } >> "$dir/netns.env"
    for r in $(seq 0 $((rails - 1))); do
      shape "$ns" "rail$r"
      echo "rail${r}_$n=10.243.$((200 + r)).$i" >> "$dir/netns.env"
    done
  done
}

# netns_down: removes DIR's network: ends the processes left in its
# namespaces (by pid), deletes the namespaces (with them their veths and the
# fabric's bridges) and the root namespace's links mlaTAG*, and waits up to
# 5 s until none is left.
netns_down() {
  local ns pids links l
  command -v ip >/dev/null || return 0
  for ns in $(ip netns list | awk '{print $1}' | grep "^$ns_prefix" || true); do
    pids=$(ip netns pids "$ns" 2>/dev/null || true)
    if [ -n "$pids" ]; then
      # shellcheck disable=SC2086
      kill $pids 2>/dev/null || true
      sleep 0.5
      # shellcheck disable=SC2086
      kill -9 $pids 2>/dev/null || true
    fi
    ip netns del "$ns" 2>/dev/null || true
  done
  for _ in $(seq 50); do
    links=$(ip -o link show | awk -F': ' '{print $2}' | sed 's/@.*//' | grep "^$link_prefix" || true)
    [ -n "$links" ] || break
    for l in $links; do ip link del "$l" 2>/dev/null || true; done
    sleep 0.1
  done
  rm -f "$dir/netns.env"
  if ip netns list | grep -q "^$ns_prefix" || [ -n "$links" ]; then
    echo "local-slurm.sh: could not remove all of $dir's network ($ns_prefix*, $link_prefix*): see ip netns list, ip link" >&2
    return 1
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

# start_munged: this cluster's munged, with a key of its own (made once per
# DIR), answering on munge_socket before it returns.
start_munged() {
  mkdir -p "$munge_dir"
  chmod 755 "$munge_dir"  # the socket: every user's jobs and commands
  if [ ! -s "$munge_dir/munge.key" ]; then
    rm -f "$munge_dir/munge.key"
    mungekey --create --keyfile="$munge_dir/munge.key"
    chmod 400 "$munge_dir/munge.key"
  fi
  /usr/sbin/munged --socket="$munge_socket" --key-file="$munge_dir/munge.key" --seed-file="$munge_dir/munged.seed" \
    --pid-file="$dir/run/munged.pid" --log-file="$dir/log/munged.log"
  for _ in $(seq 50); do
    munge --socket="$munge_socket" -n </dev/null 2>/dev/null | unmunge --socket="$munge_socket" >/dev/null 2>&1 && return 0
    sleep 0.1
  done
  echo "local-slurm.sh: munged did not answer on $munge_socket in 5 s; its log: $dir/log/munged.log" >&2
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
  stop_pidfiles TERM "$dir/run/munged.pid"
  netns_down
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

cli_filter=""
if [ "${MLA_SLURM_CLI_FILTER:-0}" = 1 ]; then
  cli_filter="CliFilterPlugins=cli_filter/lua"
fi

node_lines=""
gres_lines="AutoDetect=off"
node_list=$(IFS=,; echo "${names[*]}")
i=0
for n in "${names[@]}"; do
  if [ "$nodes" = 1 ]; then
    addr="NodeHostname=localhost"
  elif [ "$netns" = 1 ]; then
    addr="NodeHostname=$n NodeAddr=$mgmt_net.$((i + 1))"
  else
    addr="NodeHostname=$n NodeAddr=127.0.0.1 Port=$((d_port + i))"
  fi
  node_lines+="NodeName=$n $addr CPUs=8 Boards=1 SocketsPerBoard=1 CoresPerSocket=8 ThreadsPerCore=1 RealMemory=2000 Gres=gpu:2 State=UNKNOWN"$'\n'
  gres_lines+=$'\n'"NodeName=$n Name=gpu File=$dir/dev/$n/nvidia[0-1]"
  i=$((i + 1))
done

# MinJobAge=4: `sbatch --wait` (every test job) polls the job every 2 s only
# while MinJobAge is at most 4 (measured on 22.05 and 24.11; at 8 it sleeps 2
# then 8 s, at the default 300 2, 8, then 32 s, so a 3 s job took 10 s and a
# 12 s one 42 s).  No test reads a job's record more than a moment after it ended.
# With --netns the nodes reach slurmctld on the management bridge.
ctld_host=localhost
[ "$netns" = 0 ] || ctld_host="localhost($mgmt_net.254)"
cat > "$dir/slurm.conf" <<CONF
ClusterName=multilane-test
SlurmctldHost=$ctld_host
SlurmctldPort=$ctld_port
SlurmdPort=$d_port
AuthType=auth/munge
AuthInfo=socket=$munge_socket
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
MpiDefault=$mpi_default
ReturnToService=2
SchedulerType=sched/backfill
MinJobAge=4
PlugStackConfig=$dir/plugstack.conf
$cli_filter
${node_lines}PartitionName=gpu Nodes=$node_list Default=YES MaxTime=30 State=UP OverSubscribe=NO
CONF
echo "$gres_lines" > "$dir/gres.conf"
# Fences by ring, not tree.  The pmix plugin runs a fence without data (Open
# MPI's barrier at the end of MPI_Init and in MPI_Finalize) as a tree, and
# each slurmstepd finished that tree alone (22.05 at SlurmdDebug=debug: "local
# delivery", no message to the other node).  The barrier then did not hold: a
# fast node's ranks left MPI_Init and sent to a rank on the other node still
# before its PML was ready, which crashed there (Open MPI 4.1.4 on 22.05, about
# one step in 40 under load; the same crash on 24.11 with Open MPI 5.0.7; none
# in 400 steps with the ring).  The cause is not the shared address: with
# --netns (an address per node) every tree fence still finished per node (82
# of 82 per node in 41 steps).  The plugin builds its tree with Slurm's
# reverse_tree_info, which returns "no tree" (no parent, no children) when
# TreeWidth (default 50) exceeds the step's node count, so on any step of
# fewer nodes than TreeWidth every node is a root of its own.  Seen: with
# TreeWidth=2 the default fences crossed nodes (40 of 40 fan-ins).  The ring,
# which the data exchange uses anyway, crosses nodes at any size.
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

# A cluster that a killed test left behind holds its ports and network.
sweep_orphans
rm -f "$dir/owner"
if [ -n "${MLA_SLURM_OWNER:-}" ]; then
  [ -n "$(proc_start "$MLA_SLURM_OWNER")" ] || bad_option "MLA_SLURM_OWNER=$MLA_SLURM_OWNER: no such process; give the pid of the process that will stop this cluster"
  echo "$MLA_SLURM_OWNER $(proc_start "$MLA_SLURM_OWNER")" > "$dir/owner"
fi
# Another Slurm on our ports (a test that died without stopping its own)
# would answer in our place: refuse to start next to it.
port_busy() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
ports=("$ctld_port")
# With --netns each slurmd listens in its own namespace.
if [ "$netns" = 0 ]; then
  for i in $(seq 0 $((nodes - 1))); do ports+=($((d_port + i))); done
fi
for port in "${ports[@]}"; do
  for _ in $(seq 50); do port_busy "$port" || break; sleep 0.2; done
  if port_busy "$port"; then
    echo "local-slurm.sh: port $port is in use (a Slurm left running?); stop it first" >&2
    exit 1
  fi
done

[ "$netns" = 0 ] || netns_free

export SLURM_CONF=$dir/slurm.conf
# From here a failure stops what was started and removes DIR's network.
trap '[ "$?" = 0 ] || bash "$0" stop "$dir"' EXIT
start_munged
[ "$netns" = 0 ] || netns_up
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
exit 1
