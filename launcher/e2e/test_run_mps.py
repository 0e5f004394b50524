#!/usr/bin/env python3
"""End to end, the launcher: `multilane run --mps`: the MPS daemon a run
starts, finds or leaves alone.

    test_run_mps.py MULTILANE BENCH CASE  (or --list: the case names)

The shared steps are in launcher_fixtures.py."""
import json
import os
import re
import signal
import subprocess
import sys
import time

from launcher_fixtures import MULTILANE, ENV, run, main
from e2e import expect  # noqa: E402


def test_run_mps(tmp):
    """A profile whose layouts of several ranks per GPU were measured under
    MPS (mps=on) gets a job of `multilane run` a private MPS daemon (a
    stand-in for nvidia-cuda-mps-control here): every rank sees its pipe
    folder, the daemon is told to quit and its folder is removed when the job
    ends, whatever the job's exit status or a signal (SIGTERM and SIGUSR1
    passed on, a terminal's SIGHUP to the whole job); a run killed with
    SIGKILL leaves a record that the next run or doctor reads: once the job
    has ended too, its daemon is told to quit and its folder removed; --mps
    no, one rank per GPU, a daemon already there, or a daemon that does not
    start leave the job to run as it is, with a line where it loses, its
    outside text escaped."""
    db = os.path.join(tmp, "t.db")
    run([MULTILANE, "tune", "--np", "2", "--budget", "3", "--sizes", "4K:16K", "--db", db], timeout=600)
    doc_path = os.path.join(tmp, "doc.json")
    run([MULTILANE, "export", doc_path, "--db", db])
    doc = json.load(open(doc_path))
    p0 = doc["profiles"][0]
    head, rest = p0["profile_text"].split("\n", 1)
    p0["profile_text"] = head + " mps=on ranks_per_gpu=2 ranks_per_gpu_tuned=2\n" + rest
    p0["ranks_per_gpu"] = 2
    json.dump(doc, open(doc_path, "w"))
    mdb = os.path.join(tmp, "mps.db")
    run([MULTILANE, "import", doc_path, "--db", mdb])

    log = os.path.join(tmp, "control.log")
    control = os.path.join(tmp, "mps-control")
    with open(control, "w") as f:
        f.write("#!/bin/sh\n"
                "if [ \"$1\" = -d ]; then echo \"start $CUDA_MPS_PIPE_DIRECTORY\" >> %s; exit ${FAIL_START:-0}; fi\n"
                "read line; echo \"$line $CUDA_MPS_PIPE_DIRECTORY\" >> %s\n" % (log, log))
    os.chmod(control, 0o755)
    env = {k: v for k, v in ENV.items() if not k.startswith(("SLURM_", "CUDA_MPS_"))}
    env["MULTILANE_MPS_CONTROL"] = control
    if os.environ.get("MULTILANE_TEST_PRELOAD"):  # the sanitizer build: its runtime before the library
        env["LD_PRELOAD"] = os.environ["MULTILANE_TEST_PRELOAD"]

    def job(args, command, extra_env=None, check=True):
        if os.path.exists(log):
            os.unlink(log)
        return run([MULTILANE, "run", "--db", mdb] + args + ["--"] + command, env=dict(env, **(extra_env or {})),
                   check=check)

    def folder_of(p):
        m = re.search(r"MPS: a private daemon serves this job \((\S+)/pipe\)", p.stderr)
        return m.group(1) if m else None

    p = job([], ["mpirun", "-np", "2", "printenv", "CUDA_MPS_PIPE_DIRECTORY"])
    folder = folder_of(p)
    expect(folder is not None, "a profile measured under MPS starts a private daemon", p)
    expect(p.stdout.split() == [folder + "/pipe"] * 2, "both ranks are pointed at its pipe folder", p)
    expect(open(log).read() == "start {0}/pipe\nget_server_list {0}/pipe\nquit {0}/pipe\n".format(folder),
           "the daemon is started there and told to quit when the job ends", open(log).read())
    expect(not os.path.exists(folder), "its folder is removed after the job", folder)
    p = job(["--dry-run"], ["mpirun", "-np", "2", "true"])
    expect("-x CUDA_MPS_PIPE_DIRECTORY -x CUDA_MPS_LOG_DIRECTORY" in p.stdout and "mps: a private daemon" in p.stdout
           and not os.path.exists(log), "mpirun is told to pass the daemon's folders on to remote ranks", p)

    p = job([], ["sh", "-c", "exit 3"], check=False)
    expect(p.returncode == 3 and open(log).read().endswith("quit %s/pipe\n" % folder_of(p))
           and not os.path.exists(folder_of(p) or "/"),
           "the job's own exit status comes back, and the daemon still quits", p)

    def started(command):
        """`run` of `command` in a session of its own (a terminal's job) once its daemon answers."""
        if os.path.exists(log):
            os.unlink(log)
        proc = subprocess.Popen([MULTILANE, "run", "--db", mdb, "--"] + command, env=env, start_new_session=True,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for _ in range(300):
            if os.path.exists(log) and "get_server_list" in open(log).read():
                break
            time.sleep(0.1)
        expect(os.path.exists(log), "the daemon of `run` started")
        return proc, re.search(r"start (\S+)/pipe", open(log).read()).group(1)

    # kill (SIGTERM) and SIGUSR1 go to multilane alone and are passed on; a
    # closed terminal's SIGHUP reaches the whole job (os.killpg), as does a
    # dropped ssh session's.
    for sig, whole_job in ((signal.SIGTERM, False), (signal.SIGUSR1, False), (signal.SIGHUP, True)):
        proc, folder = started(["sleep", "60"])
        time.sleep(0.5)  # let the job start; the test passes without it too
        if whole_job:
            os.killpg(proc.pid, sig)
        else:
            proc.send_signal(sig)
        out, err = proc.communicate(timeout=60)
        expect(proc.returncode == 128 + sig and open(log).read().endswith("quit %s/pipe\n" % folder)
               and not os.path.exists(folder),
               "%s: the job ends, and the daemon quits after it and its folder goes (exit status %d, control log "
               "%r)\n%s" % (signal.Signals(sig).name, proc.returncode, open(log).read(), err))

    # SIGKILL: the job outlives multilane, and so does the daemon, for it.
    pid_file = os.path.join(tmp, "job.pid")
    for cleaner in ("run", "doctor"):
        # (The job's output away from the test's pipes, which it would keep open.)
        proc, folder = started(["sh", "-c", "echo $$ > %s; exec sleep 60 >/dev/null 2>&1" % pid_file])
        for _ in range(300):  # the job runs, and the record names it
            if (os.path.exists(pid_file) and open(pid_file).read().strip()
                    and "\njob " in open(folder + "/owner").read()):
                break
            time.sleep(0.1)
        job_pid = int(open(pid_file).read())
        os.unlink(pid_file)
        proc.kill()
        proc.communicate(timeout=60)
        expect(os.path.exists(folder + "/owner"), "a run killed with SIGKILL leaves its folder and record", folder)
        p = job(["--ranks-per-gpu", "1"], ["true"])
        expect(os.path.exists(folder) and not os.path.exists(log) and "MPS" not in p.stderr,
               "a later run leaves the daemon of a job that still runs to it", p)
        os.kill(job_pid, signal.SIGKILL)
        for _ in range(300):  # ended (a zombie where nothing reaps it counts as ended)
            try:
                if open("/proc/%d/stat" % job_pid).read().rsplit(")", 1)[1].split()[0] == "Z":
                    break
            except (OSError, IndexError):
                break
            time.sleep(0.1)
        if cleaner == "run":
            p = job(["--ranks-per-gpu", "1"], ["true"])
            said = p.stderr
        else:
            p = run([MULTILANE, "doctor"], env=env, check=False)
            said = p.stdout
        expect(os.path.exists(log) and open(log).read() == "quit %s/pipe\n" % folder and not os.path.exists(folder)
               and ("stopped the daemon in " + folder) in said and ("pid %d" % proc.pid) in said,
               "once the job has ended too, the next %s tells the daemon to quit and removes its folder" % cleaner, p)

    p = job(["--mps", "no"], ["printenv", "CUDA_MPS_PIPE_DIRECTORY"], check=False)
    expect(p.returncode == 1 and not os.path.exists(log) and "drop --mps no" in p.stderr,
           "--mps no runs the job without a daemon and says what it loses", p)
    p = job(["--ranks-per-gpu", "1"], ["printenv", "CUDA_MPS_PIPE_DIRECTORY"], check=False)
    expect(p.returncode == 1 and not os.path.exists(log) and "MPS" not in p.stderr,
           "one rank per GPU needs no daemon", p)
    p = job([], ["printenv", "CUDA_MPS_PIPE_DIRECTORY"], extra_env={"CUDA_MPS_PIPE_DIRECTORY": "/run/site-mps"})
    expect(p.stdout.strip() == "/run/site-mps" and not os.path.exists(log) and "already running" in p.stderr,
           "a daemon the job already reaches serves it", p)
    p = job([], ["printenv", "CUDA_MPS_PIPE_DIRECTORY"], extra_env={"FAIL_START": "1"}, check=False)
    expect(p.returncode == 1 and "the job runs without it" in p.stderr and os.path.exists(log),
           "a daemon that does not start leaves the job to run without it, with a line", p)
    escape = "/run/\x1b]0;owned\x07mps"
    p = job([], ["true"], extra_env={"CUDA_MPS_PIPE_DIRECTORY": escape, "MULTILANE_MPS_CONTROL": control + "\x1b[2J"})
    expect("\x1b" not in p.stderr and "\\x1b]0;owned\\x07mps" in p.stderr,
           "the MPS line echoes outside text without its control bytes", p)
    p = job(["--dry-run", "--mps", "yes"], ["true"], extra_env={"MULTILANE_MPS_CONTROL": control + "\x1b[2J"})
    expect("\x1b" not in p.stdout and "mps-control\\x1b[2J)" in p.stdout, "and so does --dry-run", p)
    p = job(["--mps", "maybe"], ["true"], check=False)
    expect(p.returncode != 0 and "--mps 'maybe' must be auto, yes or no" in p.stderr, "a bad --mps is named", p)


if __name__ == "__main__":
    sys.exit(main(globals()))
