#!/usr/bin/env bash
# by_rank.sh N SETTING... :: SETTING... :: PROGRAM ARGS...
#
# One mpirun context whose ranks get different settings, instead of an MPMD
# command line (`mpirun -np 1 -x A=3 prog : -np 3 -x A=2 prog`): ranks below
# N take the first settings, the others the second, then exec PROGRAM.  A
# setting is VAR=VALUE (put in the environment, e.g. LD_PRELOAD=...) or
# cd=DIR (the working folder).  Why: Debian 13's Open MPI 5.0.7 mpirun dies
# with signal 11 on every MPMD command line, with or without -x
# (open-mpi/ompi#13303; docs/admin.md, "Support matrix"), while this runs
# under Open MPI 4 and 5 alike.  The rank comes from OMPI_COMM_WORLD_RANK
# (Open MPI 4 and 5), PMIX_RANK or PMI_RANK (hydra).
set -euo pipefail
usage="usage: by_rank.sh N SETTING... :: SETTING... :: PROGRAM ARGS..."
n=${1:?$usage}
shift
first=()
while [ $# -gt 0 ] && [ "$1" != "::" ]; do first+=("$1"); shift; done
[ $# -gt 0 ] || { echo "by_rank.sh: no '::' after the first settings; $usage" >&2; exit 2; }
shift
second=()
while [ $# -gt 0 ] && [ "$1" != "::" ]; do second+=("$1"); shift; done
[ $# -gt 1 ] || { echo "by_rank.sh: no '::' PROGRAM after the second settings; $usage" >&2; exit 2; }
shift
rank=${OMPI_COMM_WORLD_RANK:-${PMIX_RANK:-${PMI_RANK:-}}}
[ -n "$rank" ] || { echo "by_rank.sh: no rank in the environment (run it under mpirun)" >&2; exit 2; }
if [ "$rank" -lt "$n" ]; then mine=("${first[@]}"); else mine=("${second[@]}"); fi
vars=()
for s in "${mine[@]}"; do
  case "$s" in
    cd=*) cd "${s#cd=}" ;;
    *=*) vars+=("$s") ;;
    *) echo "by_rank.sh: setting '$s' is neither VAR=VALUE nor cd=DIR" >&2; exit 2 ;;
  esac
done
exec env "${vars[@]}" "$@"
