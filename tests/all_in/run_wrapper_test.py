#!/usr/bin/python3
"""`multilane run -- ./wrapper` where the wrapper's own mpirun gives only some
ranks the library (ranks 2-3 drop LD_PRELOAD, as a remote rank that
misses the variables would): the program's exact results, one warning line
naming the ranks without multilane, no algorithm call.  The control: the
same wrapper without the drop runs the profile's `lane` on every call, so the
profile was found and would have been used.

Usage: run_wrapper_test.py MULTILANE LIBRARY PROBE PLAIN WORKDIR MPIRUN...
"""
import json
import os
import re
import shutil
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from e2e import run, run_shown, verdict  # noqa: E402

multilane, library, probe, plain, workdir = sys.argv[1:6]
mpirun = sys.argv[6:]
shutil.rmtree(workdir, ignore_errors=True)
os.makedirs(workdir)
env = dict(os.environ, MULTILANE_LIBRARY=library, MULTILANE_PROBE=probe, MULTILANE_STATS="1",
           MULTILANE_RANKS_PER_NODE="2")
# A sanitizer build: the user's own preload (the ASan runtime) stays first.
if os.environ.get("MULTILANE_TEST_PRELOAD", "").strip(":"):
    env["LD_PRELOAD"] = os.environ["MULTILANE_TEST_PRELOAD"].strip(":")


# A real short tune of this node type, published as a profile that sends
# every host call to `lane`.
tuned, db = os.path.join(workdir, "tuned.db"), os.path.join(workdir, "profiles.db")
tune = run_shown([multilane, "tune", "--db", tuned, "--budget", "3", "--sizes", "64K:256K", "--np", "2", "--memory",
                 "host"], "run_wrapper", env=env, timeout=400)
if tune.returncode != 0:
    sys.exit(verdict("run_wrapper", [f"the tune exited {tune.returncode}"]))
doc_path = os.path.join(workdir, "profiles.json")
run([multilane, "export", "--db", tuned, doc_path], env=env)
doc = json.load(open(doc_path))
prof = doc["profiles"][0]
tuned_node = doc["node_types"][0]
prof["profile_text"] = prof["profile_text"].splitlines()[0] + "\nhost 0 inf lane\n"
prof["entries"] = [{"algo": "lane", "chunk_bytes": 0, "lanes": 0, "mem_kind": "host", "min_bytes": 0,
                    "max_bytes": None, "mpi_time_us": -1, "ppg": 0, "time_us": -1, "transport": ""}]
prof["tuned_at"] = "2099-01-01T00:00:00Z"
json.dump(doc, open(doc_path, "w"))
run([multilane, "import", "--db", db, doc_path], env=env)

failures = []
for drop, want_lane in ((False, 20), (True, 0)):
    wrapper = os.path.join(workdir, f"wrapper-{'drop' if drop else 'keep'}.sh")
    # Ranks 2-3 lose the preload in the script's own per-rank shell (one
    # context: Debian 13's Open MPI 5.0.7 mpirun dies on every MPMD line).
    second = "env -u LD_PRELOAD " if drop else ""
    per_rank = (f'if [ "${{OMPI_COMM_WORLD_RANK:-0}}" -ge 2 ]; then exec {second}{plain}; '
                f'else exec {plain}; fi')
    with open(wrapper, "w") as f:
        f.write("#!/bin/sh\n# a user's job script: its own mpirun, a shell per rank\n"
                f"exec {' '.join(mpirun)} -np 4 sh -c '{per_rank}'\n")
    os.chmod(wrapper, 0o755)
    p = run_shown([multilane, "run", "--db", db, "--", wrapper], "run_wrapper", env=env, timeout=400)
    text = p.stdout + p.stderr
    what = "dropped on ranks 2-3" if drop else "on every rank"
    if p.returncode != 0:
        failures.append(f"library {what}: exit {p.returncode}")
    ok = re.findall(r"^plain_allreduce ok rank \d+$", text, re.M)
    if len(ok) != 4:
        failures.append(f"library {what}: {len(ok)} ranks got exact sums, want 4")
    warnings = [l for l in text.splitlines() if "multilane: warning" in l]
    want_warnings = 1 if drop else 0
    if len(warnings) != want_warnings or (drop and "ranks 2 and 3 of 4 run without multilane" not in warnings[0]):
        failures.append(f"library {what}: warnings {warnings}, want {want_warnings} naming ranks 2 and 3")
    if not drop and "no profile for node type" in text:
        # The control found nothing: say which node type the tune saw, so a
        # fingerprint that changed between two commands shows its field.
        failures.append(f"the run's node type differs from the tune's, which was {json.dumps(tuned_node)}")
    stats = re.findall(r"^multilane: stats: rank 0: .*\blane=(\d+)", text, re.M)
    if stats != [str(want_lane)]:
        failures.append(f"library {what}: rank 0's lane calls {stats}, want [{want_lane}]")
# Passing: all in runs lane; partly in runs unchanged with one line.
sys.exit(verdict("run_wrapper", failures))
