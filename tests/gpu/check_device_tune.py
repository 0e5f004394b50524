#!/usr/bin/python3
"""Issue 12 on the GPU host: `multilane tune --memory device` over two
ranks-per-GPU values, then a job injected by `multilane run` that must run the
profile's device entries.

Usage: check_device_tune.py MULTILANE BENCH

Asserts: the stored profile holds device entries tuned at each value (ppg=)
and the recommended value's without ppg=; resolve hands out the
recommendation; MPS is recorded as on where nvidia-cuda-mps-control exists;
the benchmark's `auto` calls (MULTILANE_REPORT) ran, in every device size bin,
the algorithm of the profile entry that covers it, with no wrong value.
Exit 77 (CTest: skipped) where no GPU is visible.
"""
import glob
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from e2e import expect, run  # noqa: E402

MULTILANE, BENCH = sys.argv[1], sys.argv[2]


def main():
    gpus = subprocess.run(["nvidia-smi", "-L"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True) \
        if shutil.which("nvidia-smi") else None
    if gpus is None or gpus.returncode != 0 or "GPU" not in gpus.stdout:
        print("check_device_tune.py: SKIPPED: no GPU visible")
        return 77
    tmp = tempfile.mkdtemp(prefix="mla-device-tune-")
    try:
        db = os.path.join(tmp, "tune.db")
        env = dict(os.environ, NCCL_NVLS_ENABLE="0")
        # Two virtual nodes sharing the GPUs: 1 and 2 ranks per GPU.
        p = run([MULTILANE, "tune", "--memory", "device", "--ranks-per-gpu", "1,2", "--virtual-nodes", "2",
                 "--sizes", "64K:4M", "--step", "8", "--budget", "60", "--db", db], env=env, timeout=600)
        print(p.stdout)
        print(p.stderr)
        con = sqlite3.connect(db)
        (pid, text, rec), = con.execute("SELECT id, profile_text, ranks_per_gpu FROM profiles").fetchall()
        device_ppg = sorted({r[0] for r in con.execute(
            "SELECT ppg FROM profile_entries WHERE profile_id = ? AND mem_kind = 'device'", (pid,))},
            key=lambda v: -1 if v is None else v)
        measured = con.execute("SELECT COUNT(*) FROM measurements WHERE profile_id = ? AND mem_kind = 'device'",
                               (pid,)).fetchone()[0]
        con.close()
        expect(device_ppg == [None, 1, 2], "device entries at ppg=1, ppg=2 and without ppg (got %s)" % device_ppg, p)
        expect(measured > 0, "device measurements are stored")
        expect(rec in (1, 2) and ("recommended ranks per GPU: %d" % rec) in p.stdout, "a recommended value", p)
        header = text.splitlines()[0]
        mps_expected = "on" if shutil.which("nvidia-cuda-mps-control") else "off"
        expect(("mps=%s" % mps_expected) in header, "the profile records mps=%s" % mps_expected, p)
        r = run([MULTILANE, "resolve", "--db", db])
        expect(("ranks_per_gpu=%d\n" % rec) in r.stdout, "resolve hands out the recommended value", r)

        # The injected job at the recommended layout: every device bin ran the
        # algorithm of the profile entry that covers it.
        out = os.path.join(tmp, "report")
        os.mkdir(out)
        np = 2 * rec * len([l for l in gpus.stdout.splitlines() if l.startswith("GPU")])
        jenv = dict(env, MULTILANE_REPORT=out, MULTILANE_REPORT_INTERVAL="0", MULTILANE_RANKS_PER_NODE=str(np // 2))
        j = run([MULTILANE, "run", "--db", db, "--ranks-per-gpu", "auto", "--", "mpirun", "--map-by", ":OVERSUBSCRIBE",
                 "--bind-to", "none", "-np", str(np), "-x", "NCCL_NVLS_ENABLE", "-x", "MULTILANE_REPORT", "-x",
                 "MULTILANE_REPORT_INTERVAL", "-x", "MULTILANE_RANKS_PER_NODE", BENCH, "-m", "cuda", "-b", "64K",
                 "-e", "4M", "-f", "8", "-a", "auto"], env=jenv, check=False, timeout=600)
        print(j.stdout)
        expect(j.returncode == 0, "the injected benchmark ran with no wrong value", j)
        files = glob.glob(os.path.join(out, "multilane-report-*.json"))
        expect(len(files) == 1, "one job report", j)
        report = json.load(open(files[0]))
        device_bins = [b for b in report["bins"] if b["memory"] == "device"]
        # -b 64K -e 4M -f 8: exactly the power-of-two bins of 64K, 512K
        # and 4M (issue 27: ">= 3" let an extra or a repeated bin pass).
        expect(sorted(b["from"] for b in device_bins) == [64 << 10, 512 << 10, 4 << 20],
               "device bins for 64K, 512K and 4M exactly (got %s)" % [b["from"] for b in device_bins])
        for b in device_bins:
            want = (b.get("profile") or {}).get("algo")
            got = sorted(b.get("algos", {}))
            expect(want is not None and got == [want],
                   "bin from %d ran the profile's %s (ran %s)" % (b["from"], want, got))
    except AssertionError as e:
        print("check_device_tune.py: %s" % e)
        return 1
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("check_device_tune.py: PASSED")
    return 0


if __name__ == "__main__":
    sys.exit(main())
