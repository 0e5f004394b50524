#!/usr/bin/env python3
"""End-to-end tests of `multilane report` (docs/report.md).

Usage: report_e2e_test.py CASE --multilane PATH [--synthetic-job PATH --mpirun PATH]
CASE:
  fixtures       the command on the handwritten files of tests/report/fixtures: the terminal
                 figures, --json against figures computed here from the model, clear errors
                 for truncated, foreign and newer files (exit status 2)
  html           the page in headless Chromium (Debian's `chromium`): every figure read back
                 from the dumped DOM equals the --json analysis; no network resource; a
                 screenshot that shows the charts
  synthetic_job  a real job (tests/mpi/synthetic_job.cc) under mpirun with MULTILANE_REPORT:
                 the report's shares within 5 percentage points of the truth it prints
Each case is one CTest test; all run under a fresh temporary folder.
"""
import argparse
import glob
import html.parser
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, "fixtures")
TOLERANCE_PP = 5.0  # synthetic_job: percentage points of the wall time

ARGS = None


def fixture(name):
    return os.path.join(FIXTURES, name)


sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from e2e import OPENMPI_TEST_ENV, OVERSUBSCRIBE_FLAGS, expect, run  # noqa: E402  (tests/e2e.py, the scripts' shared helpers)


def close(a, b, rel=1e-9, abs_=1e-12):
    return abs(a - b) <= max(abs_, rel * max(abs(a), abs(b)))


def report(*files, extra=()):
    return run([ARGS.multilane, "report"] + list(files) + list(extra), check=False)


def analysis(*files):
    p = report(*files, extra=["--json"])
    expect(p.returncode == 0, "report --json %s exits 0" % " ".join(os.path.basename(f) for f in files), p)
    return json.loads(p.stdout)


# ---------------------------------------------------------------- fixtures

def ring(n, k):
    return (2.0 * (k * n - 1) / (k * n)) / (2.0 * (n - 1) / n)


def test_fixtures(tmp):
    known = fixture("known_job.json")
    p = report(known)
    expect(p.returncode == 0 and p.stderr == "", "report on the known job exits 0 and prints no error", p)
    out = p.stdout
    for line in ["computation      60.000 s    60 %", "allreduce        30.000 s    30 %",
                 "waiting          10.000 s    10 %",
                 "allreduce takes 30 % of the time: doubling the GPUs (8 to 16) is predicted to give 1.25×, not 2×",
                 "multilane saved 10.500 s", "step between nodes: 100 % of the allreduce time (assumed: ",
                 "2× the GPUs (16): allreduce x 1.500, 80.000 s, speedup 1.25×, efficiency 62 %",
                 "4× the GPUs (32): allreduce x 1.750, 70.000 s, speedup 1.43×, efficiency 36 %",
                 "energy: 62.0 kJ on 2 GPU(s), mean power 310 W, mean utilisation 75 %",
                 "host 4M–8M reaches 68 % of the bus bandwidth the profile expects"]:
        expect(line in out, "terminal summary has %r" % line, p)

    # The analysis against the model, computed here independently.
    doc = analysis(known)
    job = doc["jobs"][0]
    t = job["time"]
    expect(close(t["compute_share"], 0.6) and close(t["allreduce_share"], 0.3) and close(t["wait_share"], 0.1),
           "time split 60 / 30 / 10 %")
    # Two machines and a profile not tuned on one: the step between nodes is
    # taken as the whole allreduce, which grows with the machines' ring factor.
    c, a, w, T, n, machines = 60.0, 30.0, 10.0, 100.0, 8, 2
    between = job["prediction"]["between_nodes"]
    expect(between["nodes"] == machines and between["basis"] == "assumed" and close(between["share"], 1),
           "the step between nodes: 2 machines, all of the allreduce, assumed: %s" % between)
    for point, k in zip(job["prediction"]["points"], (2, 4)):
        expect(close(point["ring_factor"], ring(n, k)) and close(point["node_ring_factor"], ring(machines, k)) and
               close(point["allreduce_growth"], ring(machines, k)), "growth at %dx: the machines' ring factor" % k)
        want = T / (c / k + w / k + a * ring(machines, k))
        expect(close(point["speedup"], want), "predicted speedup at %dx: %.4f" % (k, want))
        want_mpi = T / (c / k + w / k + (a + 10.5) * ring(machines, k))
        expect(close(point["speedup_system_mpi"], want_mpi), "with the system MPI at %dx: %.4f" % (k, want_mpi))
    expect(close(job["savings"]["saved_s"], 2000 * (20000 - 14750) * 1e-6), "saved 2000 x 5.25 ms = 10.5 s")
    big = job["bins"][1]
    expect(close(big["expected_busbw_gbs"], 4194304 / 0.010 / 1e9 * 1.75), "expected busbw of 4M-8M: 4 MiB / 10 ms x 7/4")
    expect(close(big["mpi_busbw_gbs"], 4194304 / 0.020 / 1e9 * 1.75), "system MPI busbw of 4M-8M")
    ids = {v["id"]: v for v in job["verdicts"]}
    expect(ids["scaling"]["level"] == "warn" and ids["savings"]["level"] == "good", "verdict levels")
    expect(set(ids) == {"scaling", "communication-bound", "waiting", "savings", "below-expectation"},
           "verdicts of the known job: %s" % sorted(ids))
    expect(doc["thresholds"]["scales_well_efficiency"] == 0.8, "thresholds are in the JSON")

    # Issue 30: one job priced by a profile without points (the old rule: the 1 MiB time for a
    # 16 KiB message, ten times off) and by the same profile with the tune's points.
    old = analysis(fixture("issue30_old_profile.json"))["jobs"][0]
    new = analysis(fixture("issue30_points.json"))["jobs"][0]
    ob, nb = old["bins"][0], new["bins"][0]
    expect(ob["price"]["basis"] == "entry" and ob["expected_busbw_gbs"] * 9 < ob["busbw_gbs"] and ob["saved_s"] < 0,
           "old profile, 16K-32K: priced by the 1M entry, an order of magnitude below the job, a 'loss'")
    expect(nb["price"]["basis"] == "measured" and nb["price"]["from_bytes"] == 16384 and
           abs(nb["busbw_gbs"] / nb["expected_busbw_gbs"] - 1) < nb["price"]["noise"] and nb["saved_s"] > 0,
           "points, 16K-32K: measured at 16K, within the noise of what the job achieved, saved > 0")
    expect([b["price"]["basis"] for b in new["bins"]] == ["measured", "interpolated", "interpolated", "extrapolated"],
           "each bin says how it was priced")
    ids = {v["id"]: v for v in new["verdicts"]}
    expect(ids["re-tune"]["level"] == "warn" and "host 4M–8M" in ids["re-tune"]["text"] and
           "16K–32K" not in ids["re-tune"]["text"], "re-tune names the one bin off by more than the noise")
    expect("below-expectation" not in ids, "no busbw-ratio verdict where points price the bins")
    p = report(fixture("issue30_points.json"))
    expect("measured 16K" in p.stdout and "interpolated 16K–64K" in p.stdout and "extrapolated from 16M" in p.stdout,
           "terminal table marks measured / interpolated / extrapolated", p)

    # A CPU job without a profile: no savings, no energy, the small-message verdict.
    doc = analysis(fixture("cpu_no_profile.json"))
    job = doc["jobs"][0]
    expect(job["scale_unit"] == "ranks" and not job["savings"]["known"] and not job["energy"]["measured"],
           "CPU job without profile: ranks, savings unknown, energy not measured")
    expect(any(v["id"] == "small-messages" for v in job["verdicts"]), "small-message verdict")

    # Three scales of one job: the measured curve.
    series = [fixture("series_16gpus.json"), fixture("series_4gpus.json"), fixture("series_8gpus.json")]
    doc = analysis(*series)
    expect(len(doc["series"]) == 1, "one series")
    s = doc["series"][0]
    expect([p_["scale"] for p_ in s["points"]] == [4, 8, 16], "series sorted by GPUs")
    expect(all(close(p_["speedup"], want) for p_, want in zip(s["points"], [1, 100 / 56, 100 / 35])),
           "measured speedups 1, 1.79, 2.86")
    expect(close(s["points"][2]["efficiency"], 100 / 35 / 4), "efficiency at 16 GPUs")
    expect(close(s["points"][1]["predicted_speedup"], 100 / (40 + 2 + 16 * ring(4, 2))), "prediction from 4 GPUs")
    p = report(*series)
    expect("measured scaling of job resnet over 3 runs" in p.stdout and
           "from 4 to 16 GPUs the job ran 2.86× as fast, against 4× ideal (efficiency 71 %" in p.stdout,
           "terminal summary of the series", p)

    # Bad files: one clear line each, exit status 2, nothing on stdout.
    cases = {
        "truncated.json": "truncated.json: not a complete JSON file (truncated?)",
        "foreign.json": "foreign.json: not a multilane job report (format is 'speedscope', expected 'multilane-job-report')",
        "no_format.json": "no_format.json: not a multilane job report (no 'format' field",
        "version2.json": "version2.json: job report version 2 is newer than this multilane reads (version 1)",
    }
    for name, message in cases.items():
        p = report(fixture(name))
        expect(p.returncode == 2 and message in p.stderr and p.stdout == "", "%s: exit 2 and %r" % (name, message), p)
    p = report(known, fixture("truncated.json"), fixture("foreign.json"))
    expect(p.returncode == 2 and len(p.stderr.strip().splitlines()) == 2 and p.stdout == "",
           "good and bad files together: exit 2, one line per bad file, no report", p)
    p = report(os.path.join(tmp, "missing.json"))
    expect(p.returncode == 2 and "missing.json: cannot read: No such file or directory" in p.stderr,
           "a missing file is named", p)
    junk = os.path.join(tmp, "profile.txt")
    with open(junk, "w") as f:
        f.write("multilane-profile 1\nhost 0 inf lane\n")
    p = report(junk)
    expect(p.returncode == 2 and "profile.txt: not a JSON file" in p.stderr, "a text file is not JSON", p)
    p = report()
    expect(p.returncode != 0 and "files" in p.stderr, "no file: a usage error", p)
    hostile_text(tmp, known)


CONTROL_BYTES = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\x80-\x9f]")  # any C0 (but \t \n), DEL or C1


def hostile_text(tmp, known):
    """Issue 41 item 10: the text summary stopped at a NUL in a host name and
    the page kept raw NUL and ESC bytes.  Text from the file is shown escaped
    (\\x00, \\x1b) by every renderer, never raw, and nothing after it is
    lost."""
    with open(known) as f:
        doc = json.load(f)
    doc["job"]["hosts"] = ["node\u0000one", "node\u001b[31mtwo", "node\u009bthree"]
    doc["job"]["name"] = "train\u001b]0;owned\u0007model"
    path = os.path.join(tmp, "hostile.json")
    with open(path, "w") as f:
        json.dump(doc, f)  # ensure_ascii: the control characters as \u escapes, as the library writes them
    page = os.path.join(tmp, "hostile.html")
    p = report(path, extra=["--html", page])
    expect(p.returncode == 0, "report on a file with control bytes in its text exits 0", p)
    expect("hosts: node\\x00one, node\\x1b[31mtwo, node\\u009bthree\n" in p.stdout,
           "the hosts line is whole, each control byte escaped", p)
    expect("job train\\x1b]0;owned\\x07model (id 4242)" in p.stdout, "the job name is escaped", p)
    expect(not CONTROL_BYTES.search(p.stdout), "no raw control byte in the summary: %r" % CONTROL_BYTES.findall(p.stdout), p)
    with open(page, encoding="utf-8") as f:
        html_text = f.read()
    expect(not CONTROL_BYTES.search(html_text), "no raw control byte in the page: %r" % CONTROL_BYTES.findall(html_text))
    expect("node\\x00one, node\\x1b[31mtwo, node\\u009bthree" in html_text, "the page shows the hosts escaped")
    p = report(path, extra=["--json"])
    expect(p.returncode == 0 and not CONTROL_BYTES.search(p.stdout), "no raw control byte in --json", p)
    job = json.loads(p.stdout)["jobs"][0]["job"]
    expect(job["hosts"] == ["node\\x00one", "node\\x1b[31mtwo", "node\\u009bthree"] and
           job["name"] == "train\\x1b]0;owned\\x07model", "--json shows the text escaped as the summary does: %s" % job)


# ---------------------------------------------------------------- html

class Dom(html.parser.HTMLParser):
    """Collects elements with data-figure (id, value, text), the verdicts and every URL-like attribute."""

    def __init__(self):
        super().__init__()
        self.figures = {}
        self.verdicts = []
        self.urls = []
        self.tags = set()
        self._open = None  # (kind, key, tag) being read
        self._text = ""

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.tags.add(tag)
        for k in ("src", "href", "xlink:href", "action", "poster"):
            if k in a:
                self.urls.append(a[k])
        if "data-figure" in a:
            self._open = ("figure", a.get("id"), tag, a.get("data-value"))
            self._text = ""
        elif tag == "li" and "verdict" in (a.get("class") or ""):
            self._open = ("verdict", (a.get("data-id"), a.get("data-level")), tag, None)
            self._text = ""

    def handle_data(self, data):
        if self._open:
            self._text += data

    def handle_endtag(self, tag):
        if self._open and tag == self._open[2]:
            kind, key, _, value = self._open
            if kind == "figure":
                self.figures[key] = (value, self._text)
            else:
                self.verdicts.append((key[0], key[1], self._text))
            self._open = None


def take(want, prefix, obj, figures):
    """want[prefix + FIGURE] = obj[FIELD] for each "FIGURE=FIELD" of figures."""
    for pair in figures.split():
        figure, field = pair.split("=")
        want[prefix + figure] = obj[field]


def expected_figures(doc):
    """The DOM id of every figure the page must show, with the --json value."""
    want = {}
    for j, job in enumerate(doc["jobs"]):
        p = "j%d-" % j
        take(want, p, job["time"], "time-compute=compute_s share-compute=compute_share time-allreduce=allreduce_s"
             " share-allreduce=allreduce_share time-waiting=wait_s share-waiting=wait_share time-wall=wall_s")
        for i, b in enumerate(job["bins"]):
            take(want, p + "bin%d-" % i, b, "calls=calls calls-share=calls_share time-share=time_share"
                 " per-call-us=per_call_us busbw=busbw_gbs expected-busbw=expected_busbw_gbs"
                 " mpi-busbw=mpi_busbw_gbs saved-s=saved_s")
        if job["savings"]["known"]:
            take(want, p, job["savings"], "saved-s=saved_s saved-share=share_of_wall saved-speedup=job_speedup")
        if job["prediction"]["possible"]:
            want[p + "between-nodes-share"] = job["prediction"]["between_nodes"]["share"]
        for pt in job["prediction"]["points"]:
            take(want, p + "predict-%dx-" % pt["factor"], pt, "ring-factor=ring_factor node-ring-factor=node_ring_factor"
                 " growth=allreduce_growth time=time_s speedup=speedup efficiency=efficiency"
                 " speedup-system-mpi=speedup_system_mpi")
        if job["energy"]["measured"]:
            take(want, p, job["energy"], "energy-j=energy_j power-mean-w=mean_power_w"
                 " utilization-mean-pct=mean_utilization_pct energy-communication-j=communication_energy_j")
    for k, s in enumerate(doc["series"]):
        for i, pt in enumerate(s["points"]):
            take(want, "s%d-p%d-" % (k, i), pt, "wall=wall_s factor=factor speedup=speedup efficiency=efficiency"
                 " predicted-speedup=predicted_speedup allreduce-share=allreduce_share")
    return want


def png_pixels(path):
    """(width, height, set of RGB colours) of an 8-bit RGB/RGBA PNG (what Chromium writes)."""
    with open(path, "rb") as f:
        data = f.read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, width = 8, b"", 0
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, ctype = struct.unpack(">IIBB", body[:10])
            assert depth == 8 and ctype in (2, 6), "PNG depth %d colour type %d" % (depth, ctype)
            bpp = 3 if ctype == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    raw = zlib.decompress(idat)
    stride = width * bpp
    prev = bytearray(stride)
    colours = set()
    for y in range(height):
        row = raw[y * (stride + 1):(y + 1) * (stride + 1)]
        ftype, line = row[0], bytearray(row[1:])
        for x in range(stride):
            left = line[x - bpp] if x >= bpp else 0
            up = prev[x]
            ul = prev[x - bpp] if x >= bpp else 0
            if ftype == 1:
                line[x] = (line[x] + left) & 255
            elif ftype == 2:
                line[x] = (line[x] + up) & 255
            elif ftype == 3:
                line[x] = (line[x] + (left + up) // 2) & 255
            elif ftype == 4:
                pa, pb, pc = abs(up - ul), abs(left - ul), abs(left + up - 2 * ul)
                pred = left if pa <= pb and pa <= pc else (up if pb <= pc else ul)
                line[x] = (line[x] + pred) & 255
        for x in range(0, stride, bpp * 4):  # every 4th pixel is plenty
            colours.add(bytes(line[x:x + 3]))
        prev = line
    return width, height, colours


def chromium(args, tmp, timeout=180):
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    expect(exe is not None, "chromium is installed (apt-get install chromium; scripts/install-deps.sh)")
    profile = tempfile.mkdtemp(dir=tmp, prefix="chromium-")
    cmd = [exe, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
           "--disable-background-networking", "--disable-component-update", "--disable-sync",
           "--user-data-dir=" + profile] + args
    return run(cmd, timeout=timeout)


def test_html(tmp):
    files = [fixture("known_job.json"), fixture("cpu_no_profile.json"), fixture("series_4gpus.json"),
             fixture("series_8gpus.json"), fixture("series_16gpus.json")]
    page = os.path.join(tmp, "report.html")
    p = report(*files, extra=["--html", page])
    expect(p.returncode == 0 and os.path.exists(page) and "wrote " + page in p.stdout, "report --html writes the page", p)
    expect(not os.path.exists(page + ".tmp"), "no temporary file left behind")
    doc = analysis(*files)
    with open(page, encoding="utf-8") as f:
        text = f.read()
    expect("http://" not in text and "https://" not in text, "the page names no http(s) resource")
    expect("<script" not in text and "<link" not in text and "<img" not in text and "@import" not in text
           and "url(" not in text, "no script, link, image, import or url(): nothing to fetch")

    dom_text = chromium(["--dump-dom", "file://" + page], tmp).stdout
    dom = Dom()
    dom.feed(dom_text)
    expect(not dom.urls, "the rendered DOM has no src/href attributes: %r" % dom.urls[:3])
    expect("svg" in dom.tags and "table" in dom.tags, "the DOM has the SVG charts and the tables")
    want = expected_figures(doc)
    expect(len(want) > 60, "%d figures to read back" % len(want))
    bad = []
    for fid, value in want.items():
        if fid not in dom.figures:
            bad.append("%s missing" % fid)
            continue
        shown_value, shown = dom.figures[fid]
        if value is None:
            if shown_value != "" or shown.strip() != "-":
                bad.append("%s: want unknown, DOM %r %r" % (fid, shown_value, shown))
        elif not close(float(shown_value), float(value), rel=1e-8):
            bad.append("%s: DOM %s, analysis %r" % (fid, shown_value, value))
        elif "share" in fid and not fid.endswith("time-share") or fid.endswith("efficiency"):
            pct = float(value) * 100
            text_want = "%.0f %%" % pct if abs(pct) >= 9.95 else "%.1f %%" % pct
            if shown.strip() != text_want:
                bad.append("%s: shows %r, want %r" % (fid, shown, text_want))
    expect(not bad, "every figure in the DOM equals the analysis (%d checked): %s" % (len(want), bad[:5]))
    print("read back, e.g. j0-share-allreduce = %s (%s), j0-predict-2x-speedup = %s (%s)" % (
        dom.figures["j0-share-allreduce"] + dom.figures["j0-predict-2x-speedup"]))
    verdicts = [(v["id"], v["level"], v["text"]) for job in doc["jobs"] for v in job["verdicts"]]
    verdicts += [(v["id"], v["level"], v["text"]) for s in doc["series"] for v in s["verdicts"]]
    expect(sorted(dom.verdicts) == sorted(verdicts), "the page's verdicts are the analysis' (%d)" % len(verdicts))

    # Nothing is wider than a 1100-pixel window: the profile's long lines
    # (pts=) wrap, and the tables fit.  Measured on a copy of each page with
    # a script that puts the document's widths in its title (the pages
    # themselves have no script).
    points = os.path.join(tmp, "points.html")
    expect(report(fixture("issue30_points.json"), extra=["--html", points]).returncode == 0, "a page of the points")
    for name in (page, points):
        with open(name, encoding="utf-8") as f:
            probe_text = f.read().replace(
                "</body>", "<script>document.title = 'W' + document.documentElement.scrollWidth + '/' + "
                "document.documentElement.clientWidth;</script></body>")
        probe = name + ".probe.html"
        with open(probe, "w", encoding="utf-8") as f:
            f.write(probe_text)
        m = re.search(r"<title>W(\d+)/(\d+)</title>",
                      chromium(["--window-size=1100,2000", "--dump-dom", "file://" + probe], tmp).stdout)
        expect(m is not None and int(m.group(1)) <= int(m.group(2)),
               "%s fits a 1100-pixel window (scroll width / window: %s)" %
               (os.path.basename(name), m.group(0) if m else "not measured"))

    shot = os.path.join(tmp, "report.png")
    chromium(["--screenshot=" + shot, "--window-size=1280,2000", "file://" + page], tmp)
    expect(os.path.exists(shot) and os.path.getsize(shot) > 20000, "screenshot written (%d bytes)" %
           (os.path.getsize(shot) if os.path.exists(shot) else 0))
    width, height, colours = png_pixels(shot)
    expect((width, height) == (1280, 2000), "screenshot is 1280 x 2000")
    expect(len(colours) > 50, "screenshot is not blank (%d colours)" % len(colours))
    for name, rgb in (("computation blue", (0x4e, 0x79, 0xa7)), ("allreduce red", (0xe1, 0x57, 0x59)),
                      ("waiting orange", (0xf2, 0x8e, 0x2b))):
        expect(bytes(rgb) in colours, "the time-split chart's %s is on screen" % name)
    keep = os.environ.get("MULTILANE_REPORT_KEEP")
    if keep:  # for a person to look at
        shutil.copy(shot, os.path.join(keep, "report.png"))
        shutil.copy(page, os.path.join(keep, "report.html"))


# ---------------------------------------------------------------- synthetic_job

def run_synthetic_job(folder):
    """Runs synthetic_job with the report on into FOLDER; returns (the
    report's analysis, its file, the job's truth, the shares off by more than
    TOLERANCE_PP: [text])."""
    os.makedirs(folder, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("MULTILANE_")}
    env.update(OPENMPI_TEST_ENV, MULTILANE_REPORT=folder, MULTILANE_REPORT_SAMPLE="4")
    cmd = [ARGS.mpirun] + OVERSUBSCRIBE_FLAGS + ["--bind-to", "none", "-np", "4", "-x", "MULTILANE_REPORT", "-x",
           "MULTILANE_REPORT_SAMPLE", ARGS.synthetic_job, "--iterations", "100", "--compute-ms", "20",
           "--imbalance-ms", "10", "--bytes", "4K,64K"]
    p = run(cmd, env=env, timeout=300)
    lines = [l for l in p.stdout.splitlines() if l.startswith("synthetic_job truth: ")]
    expect(len(lines) == 1, "synthetic_job prints its truth", p)
    truth = json.loads(lines[0][len("synthetic_job truth: "):])
    files = glob.glob(os.path.join(folder, "multilane-report-*.json"))
    expect(len(files) == 1, "the library wrote one job report: %s" % files, p)
    doc = analysis(files[0])
    t = doc["jobs"][0]["time"]
    wall = truth["wall_s_mean"]
    true = {"compute": 1 - truth["allreduce_s_mean"] / wall,
            "allreduce": (truth["allreduce_s_mean"] - truth["wait_s_mean"]) / wall,
            "wait": truth["wait_s_mean"] / wall}
    off = []
    for name, want in true.items():
        got = t[name + "_share"]
        print("%-9s share: report %5.1f %%, truth %5.1f %%" % (name, got * 100, want * 100))
        if abs(got - want) * 100 > TOLERANCE_PP:
            off.append("%s share %.1f %% against %.1f %%" % (name, got * 100, want * 100))
    return doc, files[0], truth, off


def test_synthetic_job(tmp):
    expect(ARGS.synthetic_job and os.path.isfile(ARGS.synthetic_job) and os.access(ARGS.synthetic_job, os.X_OK),
           "synthetic_job is built (%s)" % ARGS.synthetic_job)
    # The shares are timed: on a busy machine one run can miss them (as
    # check_job_report.py, a second run decides); the bins are counted and
    # checked on the run that decides.
    doc, report_file, truth, off = run_synthetic_job(os.path.join(tmp, "run1"))
    if off:
        print("only timing can put the shares off (%s): running the job once more, which decides" % "; ".join(off))
        doc, report_file, truth, off = run_synthetic_job(os.path.join(tmp, "run2"))
    expect(not off, "every share within %.0f points of the truth: %s" % (TOLERANCE_PP, off))
    bins = {b["from"]: b["calls"] for b in doc["jobs"][0]["bins"]}
    for b in truth["bins"]:
        expect(bins.get(b["from"]) == b["calls"], "bin from %d: %d calls" % (b["from"], b["calls"]))
    page = os.path.join(tmp, "synthetic.html")
    p = report(report_file, extra=["--html", page])
    expect(p.returncode == 0 and "allreduce takes" in p.stdout and os.path.getsize(page) > 5000,
           "text summary and page of the real job", p)
    print(p.stdout)


def main():
    global ARGS
    parser = argparse.ArgumentParser()
    parser.add_argument("case", choices=["fixtures", "html", "synthetic_job"])
    parser.add_argument("--multilane", required=True)
    parser.add_argument("--synthetic-job")
    parser.add_argument("--mpirun", default="mpirun")
    ARGS = parser.parse_args()
    tmp = tempfile.mkdtemp(prefix="report-e2e-")
    try:
        {"fixtures": test_fixtures, "html": test_html, "synthetic_job": test_synthetic_job}[ARGS.case](tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("PASSED")


if __name__ == "__main__":
    main()
