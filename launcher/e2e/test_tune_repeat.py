#!/usr/bin/env python3
"""End to end, the launcher: the tune's second launch (the repeat): skipped
when its budget is spent, or run and measured.

    test_tune_repeat.py MULTILANE BENCH CASE  (or --list: the case names)

The shared steps are in launcher_fixtures.py."""
import json
import os
import re
import sys
import time

from launcher_fixtures import tune, profiles, main
from e2e import expect  # noqa: E402


def repeat_medians(result_path):
    """(memory, bytes, candidate) -> the median of a probe result's valid samples."""
    import statistics
    with open(result_path) as f:
        doc = json.load(f)
    out = {}
    for size in doc["sizes"]:
        for c in size["candidates"]:
            if c["valid"] and c["samples_us"]:
                out[(size["memory"], size["bytes"], c["candidate"])] = statistics.median(c["samples_us"])
    return out


def profile_points(text):
    """[(memory, algorithm, bytes, time_us, mpi_time_us, noise)] of every pts= point of a profile."""
    units = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    points = []
    for line in text.splitlines():
        words = line.split()
        if len(words) < 4 or words[0] not in ("host", "device"):
            continue
        for w in words:
            if not w.startswith("pts="):
                continue
            for item in w[4:].split(","):
                size, figures = item.split(":")
                t, m, n = (figures.split("/") + ["-1"])[:3]
                points.append((words[0], words[3], int(size[:-1] if size[-1] in units else size) *
                               units[size[-1] if size[-1] in units else ""], float(t), float(m), float(n)))
    return points


def profile_winners(text):
    """{(memory, bytes): the entry's candidate words} for every pts= point of a profile."""
    out = {}
    for line in text.splitlines():
        words = line.split()
        if len(words) < 4 or words[0] not in ("host", "device"):
            continue
        cand = " ".join(w for w in words[3:] if "=" not in w or w.split("=")[0] in ("mpi", "lanes", "chunk", "transport"))
        for mem, _, size, _, _, _ in profile_points(line):
            out[(mem, size)] = cand
    return out


# The repeat's minimum measuring time (launcher/tune/tune_budget.h:
# kMinRepeatMeasuringS): a tune skips the repeat when less is left of it.
MIN_REPEAT_MEASURING_S = 3.0
# The largest noise a profile point records (vocab/profile.h: kMaxProfileNoise).
MAX_NOISE = 10.0


def repeat_line(p):
    """The tune's one line on its repeat launch: "repeat launch: ..." when it
    ran, "no repeat launch: WHY" when it did not; None when there is none."""
    lines = [l for l in p.stdout.splitlines() if l.startswith(("repeat launch: ", "no repeat launch: "))]
    return lines[0] if len(lines) == 1 else None


def check_repeat_skipped(p, line, db, keep, first, points):
    """A tune that skipped its repeat says why with figures that hold, names
    the fix, launched the probe once, and stored the first launch's medians."""
    expect("a larger --budget measures each winner in a second launch too" in line,
           "the line on the skipped repeat names the fix", p)
    took = re.search(r"the first launch took ([\d.]+) s of this launch's ([\d.]+) s \(starting and ending its MPI "
                     r"job ([\d.]+) s\), which leaves the repeat under ([\d.]+) s of measurements", line)
    small = re.search(r"this launch's share of --budget \(([\d.]+) s\) is below ([\d.]+) s", line)
    scoped = re.search(r"would take longer than the (\d+) s of measurements this launch's share leaves", line)
    expect(took or small or scoped, "the line says why in one of the tune's three ways: %s" % line, p)
    if took:
        used, share, launch, least = (float(x) for x in took.groups())
        expect(least == MIN_REPEAT_MEASURING_S and share - used - launch < least + 0.15,
               "its figures leave the repeat under %.1f s: %.1f - %.1f - %.1f s" % (least, share, used, launch), p)
    if small:
        expect(float(small.group(1)) < float(small.group(2)), "the share is below the least it names", p)
    for name in ("plan-repeat.json", "result-repeat.json"):
        expect(not os.path.exists(os.path.join(keep, name)), "no repeat ran: no %s" % name)
    winners = profile_winners(profiles(db)[0][1])
    for mem, algo, size, t, m, noise in points:
        expect(abs(m / first[(mem, size, "passthrough")] - 1) < 1e-4,
               "%s %d: the system MPI's time is the first launch's median" % (mem, size))
        if algo != "passthrough":
            cand = winners[(mem, size)] if (mem, size, winners[(mem, size)]) in first else algo
            expect(abs(t / first[(mem, size, cand)] - 1) < 1e-4,
                   "%s %d: %s's time is the first launch's median" % (mem, size, cand))
            expect(first[(mem, size, cand)] < first[(mem, size, "passthrough")],
                   "%s %d: %s beat the system MPI in the first launch" % (mem, size, cand))


def check_repeat_ran(p, db, keep, first, points, winners):
    """The stored points are the mean of the two launches' medians, their
    noise at least the difference between the launches, every winner kept
    was faster than the system MPI in the second launch too, and the repeat
    measured at each size only the system MPI and that size's winner (its
    whole candidate: "lane transport=shm", not the algorithm alone)."""
    again = repeat_medians(os.path.join(keep, "result-repeat.json"))
    with open(os.path.join(keep, "plan-repeat.json")) as f:
        plan = json.load(f)
    checked = 0
    for mem, algo, size, t, m, noise in points:
        mpi1, mpi2 = first[(mem, size, "passthrough")], again.get((mem, size, "passthrough"))
        if mpi2 is None:
            continue
        checked += 1
        expect(abs(m / ((mpi1 + mpi2) / 2) - 1) < 1e-4, "%s %d: the system MPI's time is the launches' mean" % (mem, size))
        # A point records at most MAX_NOISE: a launch slowed tens of times
        # by a loaded host (CI saw 40 times) is recorded at that limit.
        expect(noise >= min(abs(mpi2 / mpi1 - 1), MAX_NOISE) - 6e-4,
               "%s %d: the noise %.3f covers the launches' difference %.3f" % (mem, size, noise, abs(mpi2 / mpi1 - 1)))
        if algo != "passthrough":
            cand = winners[(mem, size)]
            expect(cand in plan["candidates"], "%s %d: the winner %s was measured again" % (mem, size, cand))
            expect(again[(mem, size, cand)] < mpi2, "%s %d: %s beat the system MPI in the repeat too" % (mem, size, cand))
            t1, t2 = first[(mem, size, cand)], again[(mem, size, cand)]
            expect(abs(t / ((t1 + t2) / 2) - 1) < 1e-4, "%s %d: %s's time is the launches' mean" % (mem, size, cand))
    expect(checked >= 2, "the repeat measured the system MPI at two sizes or more (%d)" % checked, p)
    # The repeat measures at each size the system MPI and that size's winner
    # only (plan-repeat.json's size_candidates), nothing else.
    with open(os.path.join(keep, "result-repeat.json")) as f:
        for size in json.load(f)["sizes"]:
            words = [c["candidate"] for c in size["candidates"]]
            others = [w for w in words if w != "passthrough"]
            winner = profile_winners(profiles(db)[0][1]).get((size["memory"], size["bytes"]), "")
            expect("passthrough" in words and len(others) <= 1,
                   "%s %d: the repeat measured the system MPI and one winner at most: %s" %
                   (size["memory"], size["bytes"], words), p)
            if winner != "passthrough":  # else kept or undone: the system MPI, or it and the undone winner
                expect(others == [winner], "%s %d: the repeat measured the winner '%s', nothing else: %s" %
                       (size["memory"], size["bytes"], winner, words), p)
    # The launch band: sqrt(3) x the rms of the system MPI's differences over
    # the sizes, given to every size the repeat measured.
    band = float(re.search(r"launch band (\d+)%", p.stdout).group(1)) / 100
    apart = [abs(again[(mem, size, "passthrough")] / first[(mem, size, "passthrough")] - 1)
             for mem, _, size, _, _, _ in points if (mem, size, "passthrough") in again]
    want = (3 * sum(a * a for a in apart) / len(apart)) ** 0.5
    if checked == len(points):
        expect(abs(band - want) <= 0.006, "the band %.3f is sqrt(3) x rms of the differences (%.3f)" % (band, want), p)
    for mem, algo, size, t, m, noise in points:
        expect(noise >= min(band, want) - 0.006, "%s %d: the noise %.3f holds the band %.3f" % (mem, size, noise, band))


def test_tune_repeat_launch(tmp):
    """A tune with the time for it launches the probe a second time on the
    same layout (tuner/repeat.h), checked from the two result files the tune
    kept (check_repeat_ran); a tune that ignored its repeat fails there.

    Timing assumption: --budget 24 over 4K:64K gives the one launch a share of
    about 23 s, a quarter of it planned for the repeat; the repeat runs when
    the first launch, its MPI start and end included, leaves it at least
    MIN_REPEAT_MEASURING_S of measurements, that is when the first launch
    takes under about 19 s.  On the 2-core build machine, shared (load 6),
    the whole tune took 4.4 s and the repeat ran; beside two busy loops the
    first launch took 20.5-21.0 s and the tune rightly skipped the repeat and
    said why (issue 41: CI crashed here on the missing result-repeat.json).
    The test then checks that statement, its figures and the one-launch
    profile (check_repeat_skipped), and says that the repeat's candidates
    went unchecked.  MLA_TEST_REQUIRE_REPEAT=1 makes a skipped repeat a
    failure (an idle machine, or a change to the repeat itself).  A small
    budget has no repeat, and says so."""
    db, keep = os.path.join(tmp, "t.db"), os.path.join(tmp, "kept")
    start = time.time()
    p = tune(db, budget="24", sizes="4K:64K", extra=["--keep", keep])
    took = time.time() - start
    line = repeat_line(p)
    expect(line is not None, "the tune says in one line what its repeat launch did", p)
    print("tune of --budget 24 took %.1f s; %s" % (took, line))
    first = repeat_medians(os.path.join(keep, "result.json"))
    points = profile_points(profiles(db)[0][1])
    expect(len(points) == 3, "the profile has a point at each of 4K, 16K and 64K", p)
    if line.startswith("no repeat launch: "):
        check_repeat_skipped(p, line, db, keep, first, points)
        expect(os.environ.get("MLA_TEST_REQUIRE_REPEAT") != "1",
               "MLA_TEST_REQUIRE_REPEAT=1: the repeat must run, and the tune skipped it", p)
        print("NOTE: the repeat was skipped (busy machine?): its candidates were not checked this run; "
              "the statement and the one-launch profile were")
    else:
        check_repeat_ran(p, db, keep, first, points, profile_winners(profiles(db)[0][1]))

    small = os.path.join(tmp, "small")
    p = tune(os.path.join(tmp, "s.db"), budget="3", sizes="4K:16K", extra=["--keep", small])
    expect("no repeat launch: " in p.stdout and "a larger --budget" in p.stdout, "a small budget says why no repeat", p)
    expect(not os.path.exists(os.path.join(small, "result-repeat.json")), "and launches the probe once")


if __name__ == "__main__":
    sys.exit(main(globals()))
