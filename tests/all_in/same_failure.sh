#!/bin/sh
# same_failure.sh PROGRAM PRELOAD: runs PROGRAM bare (its output dropped),
# then with LD_PRELOAD=PRELOAD (its output shown); exits 0 when both failed
# with the same status (the MPI's own: Open MPI 4.1 exits 1, 5.0 exits 14),
# else 1, saying both statuses.
program=$1
preload=$2
bare=0
"$program" >/dev/null 2>&1 || bare=$?
rc=0
LD_PRELOAD=$preload "$program" || rc=$?
if [ "$bare" -ne 0 ] && [ "$rc" = "$bare" ]; then exit 0; fi
echo "same_failure: exit status $rc with the library, $bare without: expected the same failure" >&2
exit 1
