"""e2e.py: the helpers every end-to-end test script shares (tests/, launcher/,
report/): run a command, check a condition, log a line, list a script's cases.  A failure raises
AssertionError with the command's output, so a script fails with exit
status 1 and says why.

Scripts outside tests/ import it with
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "<up>/tests"))
"""
import argparse
import pwd
import shutil
import subprocess
import sys
import tempfile

# Open MPI run here as root and oversubscribed (more ranks than cores), for
# both generations of vocab/mpi_families.cc: Open MPI 4 (ORTE) reads
# OMPI_MCA_rmaps_base_oversubscribe, Open MPI 5 (PRRTE) ignores it and reads
# PRTE_MCA_rmaps_default_mapping_policy.  A command line says it with
# OVERSUBSCRIBE_FLAGS, which both take (5 deprecates --oversubscribe).
OVERSUBSCRIBE_ENV = {"OMPI_MCA_rmaps_base_oversubscribe": "1",
                     "PRTE_MCA_rmaps_default_mapping_policy": ":oversubscribe"}
OVERSUBSCRIBE_FLAGS = ["--map-by", ":OVERSUBSCRIBE"]
OPENMPI_TEST_ENV = dict(OVERSUBSCRIBE_ENV, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")


def home_variables(home):
    """HOME and the XDG folders under HOME, for a test's commands: multilane
    finds the user's database and job history through them (db/paths.cc: an
    absolute XDG_STATE_HOME outranks HOME), so a test that sets only HOME
    can still write into the caller's XDG_STATE_HOME."""
    return {"HOME": home, "XDG_STATE_HOME": home + "/.local/state", "XDG_CONFIG_HOME": home + "/.config",
            "XDG_CACHE_HOME": home + "/.cache", "XDG_DATA_HOME": home + "/.local/share"}


def log(msg):
    """Prints a line at once (CTest keeps the order of output and failure)."""
    print(msg, flush=True)


def check(cond, msg, p=None):
    """Fails with `msg` (and p's stdout and stderr, a CompletedProcess) unless cond."""
    if not cond:
        extra = "" if p is None else f"\nstdout:\n{p.stdout}\nstderr:\n{p.stderr}"
        raise AssertionError(msg + extra)


def expect(cond, what, p=None):
    """check(), and on success prints "ok: WHAT" (the scripts' running list)."""
    check(cond, "FAILED: " + what, p)
    log("ok: " + what)


def as_user(cmd, user):
    """cmd run as `user` (a name or a uid) with its own groups, via setpriv."""
    entry = pwd.getpwuid(user) if isinstance(user, int) else pwd.getpwnam(str(user))
    return ["setpriv", f"--reuid={entry.pw_uid}", f"--regid={entry.pw_gid}", "--init-groups", "--"] + list(cmd)


def run(cmd, check=True, env=None, timeout=300, user=None, cwd=None):
    """Runs cmd (a list) and returns the CompletedProcess, text output
    captured; with check, a non-zero exit status fails with the output."""
    if user is not None:
        cmd = as_user(cmd, user)
    # errors="replace": a rank's stray bytes must not turn into a UnicodeDecodeError
    p = subprocess.run(cmd, capture_output=True, text=True, errors="replace", env=env, timeout=timeout, cwd=cwd)
    if check and p.returncode != 0:
        raise AssertionError(f"{' '.join(cmd)} exited {p.returncode}\nstdout:\n{p.stdout}\nstderr:\n{p.stderr}")
    return p


def run_shown(cmd, name, env=None, timeout=300, cwd=None):
    """run(cmd, check=False) that logs "NAME: running: CMD" first and the
    command's stdout and stderr after it, between marker lines, so that the
    test's log holds all of them; returns the CompletedProcess."""
    log(f"{name}: running: {' '.join(cmd)}")
    p = run(cmd, check=False, env=env, timeout=timeout, cwd=cwd)
    log("----- stdout -----\n" + p.stdout + "----- stderr -----\n" + p.stderr + "------------------")
    return p


def client_arguments(timeout):
    """The parser of a preloaded client's test (tests/CMakeLists.txt,
    mla_add_client_test): --mpirun, --preload, --workdir, --np and --timeout
    (seconds, TIMEOUT unless given); the script adds its own."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--mpirun", default="mpirun")
    ap.add_argument("--preload", required=True, help="LD_PRELOAD value for the ranks")
    ap.add_argument("--workdir", required=True)
    ap.add_argument("--np", type=int, default=4)
    ap.add_argument("--timeout", type=float, default=timeout)
    return ap


def rank_lines(text):
    """The lines "rank=R key=value ..." of TEXT (what the layout probes
    print) as dicts, by rank."""
    rows = []
    for line in text.splitlines():
        if line.startswith("rank="):
            rows.append(dict(kv.split("=", 1) for kv in line.split()))
    return sorted(rows, key=lambda r: int(r["rank"]))


def run_case(name, case, prefix, errors=(AssertionError,)):
    """Runs case(root) in a new folder PREFIX-NAME-* and prints "PASS: NAME"
    (the folder removed) or, on one of ERRORS, "FAIL: NAME: why" (the folder
    kept); returns the script's exit status, 0 or 1."""
    root = tempfile.mkdtemp(prefix=f"{prefix}-{name}-")
    try:
        case(root)
    except errors as e:
        print(f"FAIL: {name}: {e}")
        print(f"(files kept in {root})")
        return 1
    print(f"PASS: {name}")
    shutil.rmtree(root, ignore_errors=True)
    return 0


def verdict(name, failures):
    """Logs "NAME: FAIL: F" for each failure, or "NAME: OK" when there is
    none; returns the exit status for the script (1 or 0)."""
    for f in failures:
        log(f"{name}: FAIL: {f}")
    if not failures:
        log(f"{name}: OK")
    return 1 if failures else 0


def cases_in(names, prefix):
    """The cases among NAMES (a script's globals()): each function named
    PREFIX + CASE, by CASE."""
    return {n[len(prefix):]: f for n, f in names.items() if n.startswith(prefix) and callable(f)}


def listed(cases):
    """When the script's only argument is --list, prints the names of CASES
    one a line and returns True: CMake reads them at configure time and adds
    one test per name (cmake/MultilaneScriptCases.cmake)."""
    if sys.argv[1:] != ["--list"]:
        return False
    print("\n".join(sorted(cases)))
    return True
