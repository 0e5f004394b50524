#!/usr/bin/env python3
"""End to end, the launcher: `multilane doctor`.

    test_doctor.py MULTILANE BENCH CASE  (or --list: the case names)

The shared steps are in launcher_fixtures.py."""
import json
import os
import re
import subprocess
import sys

from launcher_fixtures import MULTILANE, SOURCE, ENV, run, main
from e2e import expect  # noqa: E402


def test_doctor(tmp):
    # doctor checks what runs: a healthy setup (with a fake slurm.conf naming
    # the built plugin through a plugstack include) is "all good"; each broken
    # part is an ERROR with its real cause, and then never "all good".
    build = os.path.dirname(os.path.dirname(os.path.realpath(MULTILANE)))
    plugin = os.path.join(build, "spank", "spank_multilane.so")
    library = os.environ["MULTILANE_LIBRARY"]
    expect(os.path.exists(plugin), "the plugin was built at " + plugin)
    system_db = os.path.join(tmp, "system", "profiles.db")
    env = dict(ENV, MULTILANE_SYSTEM_DB=system_db, MULTILANE_USER_DB=os.path.join(tmp, "user.db"))
    run([MULTILANE, "tune", "--np", "2", "--budget", "3", "--sizes", "4K:16K", "--db", os.path.join(tmp, "t.db")],
        env=env, timeout=600)
    doc_path = os.path.join(tmp, "doc.json")
    run([MULTILANE, "export", doc_path, "--db", os.path.join(tmp, "t.db")], env=env)
    doc = json.load(open(doc_path))
    doc["profiles"][0]["partition"] = "gpu"  # a partition's profile only
    json.dump(doc, open(doc_path, "w"))
    json.dump(doc, open(os.path.join(tmp, "doc-current.json"), "w"))
    run([MULTILANE, "import", doc_path, "--system"], env=env)
    # MPICH, where this build has it: its own profile, tuned (its node type
    # holds the MPICH version, so a copy of the Open MPI one is not it), since
    # doctor holds every installed family to one (issue 47).
    mpich_probe = os.path.join(build, "tuner", "mlprobe-mpich")
    mpich_doc = os.path.join(tmp, "doc-mpich.json")
    if os.path.exists(mpich_probe):
        run([MULTILANE, "tune", "--mpi", "mpich", "--np", "2", "--budget", "3", "--sizes", "4K:16K", "--db",
             os.path.join(tmp, "t-mpich.db")], env=env, timeout=600)
        run([MULTILANE, "export", mpich_doc, "--db", os.path.join(tmp, "t-mpich.db")], env=env)
        mpich = json.load(open(mpich_doc))
        mpich["profiles"][0]["partition"] = "gpu"
        json.dump(mpich, open(mpich_doc, "w"))
        run([MULTILANE, "import", mpich_doc, "--system"], env=env)

    slurm = os.path.join(tmp, "etc-slurm")
    os.makedirs(os.path.join(slurm, "plugstack.conf.d"))
    with open(os.path.join(slurm, "slurm.conf"), "w") as f:
        f.write("ClusterName=doctor\nCliFilterPlugins=cli_filter/lua\nMpiDefault=pmix\n")
    with open(os.path.join(slurm, "plugstack.conf"), "w") as f:
        f.write("include plugstack.conf.d/*.conf\n")
    lua = open(os.path.join(SOURCE, "spank", "cli_filter.lua")).read()

    def configure(words, multilane=MULTILANE, plugin_file=plugin, lua_db=system_db):
        with open(os.path.join(slurm, "plugstack.conf.d", "multilane.conf"), "w") as f:
            f.write("optional %s library=%s multilane=%s database=%s %s\n" % (
                plugin_file, library, multilane, system_db, words))
        # The source is a template (the build fills in the installed paths):
        # set the two values at its top as an admin would.
        text = re.sub(r'^local MULTILANE = .*$', 'local MULTILANE = "%s"' % multilane, lua, flags=re.M)
        text = re.sub(r'^local DATABASE = .*$', 'local DATABASE = "%s"' % lua_db, text, flags=re.M)
        with open(os.path.join(slurm, "cli_filter.lua"), "w") as f:
            f.write(text)

    denv = dict(env, SLURM_CONF=os.path.join(slurm, "slurm.conf"))
    configure("")
    p = run([MULTILANE, "doctor"], env=denv, check=False)
    lines = p.stdout.strip().split("\n")
    expect(p.returncode == 0 and lines[-1] == "all good" and "ERROR" not in p.stdout, "a healthy setup is all good", p)
    expect("partition gpu: profile" in p.stdout, "a partition's profile is found, not 'no profile'", p)
    # Doctor's start check runs each probe with --version, which answers
    # this build's version before any MPI_Init (a singleton's takes seconds).
    version = run([MULTILANE, "--version"], env=env).stdout.strip()
    probes = [os.path.join(build, "tuner", "mlprobe")] + ([mpich_probe] if os.path.exists(mpich_probe) else [])
    said = [run([probe, "--version"], env=env).stdout.strip() for probe in probes]
    expect(said == [version] * len(probes) and f"probe program {probes[0]} (starts)" in p.stdout,
           f"the probes' --version print {version} as multilane --version does: {said}", p)
    expect("multilane.conf:1: optional" in p.stdout and "matches Slurm" in p.stdout,
           "the plugstack line is found through the include and the plugin matches Slurm", p)
    expect("cli_filter" in p.stdout and "settings match" in p.stdout, "the cli_filter is ours and matches", p)
    expect("ok     MpiDefault=pmix: srun starts the tasks of Open MPI as one MPI world" in p.stdout or
           "note   MpiDefault=pmix serves Open MPI; under srun, MPICH needs --mpi=pmi2" in p.stdout,
           "MpiDefault=pmix serves Open MPI (and MPICH, where built, needs --mpi=pmi2)", p)
    p = run([MULTILANE, "doctor", "--system"], env=denv, check=False)
    expect(p.returncode == 0 and "user database" not in p.stdout, "--system checks the system database only", p)
    p = run([MULTILANE, "doctor", "--db", os.path.join(tmp, "t.db")], env=denv, check=False)
    expect("--db database" in p.stdout and "profile" in p.stdout, "--db checks that file", p)

    def broken(what, env_, needle):
        p = run([MULTILANE, "doctor"], env=env_, check=False)
        last = p.stdout.strip().split("\n")[-1]
        expect(p.returncode == 1 and "ERROR" in p.stdout and needle in p.stdout and "all good" not in p.stdout
               and "problem(s) found" in last, what, p)

    truncated = os.path.join(tmp, "libmlallreduce.so")
    with open(library, "rb") as f, open(truncated, "wb") as g:
        g.write(f.read()[:6000])
    broken("a truncated library is an error (loaded in a child)", dict(denv, MULTILANE_LIBRARY=truncated),
           "does not load")
    stand_in = os.path.join(tmp, "multilane-broken")
    with open(stand_in, "w") as f:
        f.write("#!/bin/sh\necho '%s: error while loading shared libraries: libmlallreduce.so.0: cannot open "
                "shared object file' >&2\nexit 127\n" % stand_in)
    os.chmod(stand_in, 0o755)
    configure("", multilane=stand_in)
    broken("multilane= that cannot start says the loader's words", denv, "error while loading shared libraries")
    configure("colour=blue")
    broken("an unknown plugstack key is named", denv, "colour")
    configure("", lua_db="/elsewhere.db")
    broken("a cli_filter with other settings is an error", denv, "DATABASE=/elsewhere.db")
    fake = os.path.join(tmp, "fake_plugin.so")
    c_file = os.path.join(tmp, "fake_plugin.c")
    with open(c_file, "w") as f:
        f.write("const char plugin_name[] = \"multilane\"; const unsigned plugin_version = (23u << 16) | (11u << 8);\n")
    subprocess.run(["cc", "-shared", "-fPIC", "-o", fake, c_file], check=True)
    configure("", plugin_file=fake.replace("fake_plugin", "spank_multilane_fake"))
    os.rename(fake, fake.replace("fake_plugin", "spank_multilane_fake"))
    broken("a plugin built for another Slurm is an error", denv, "built for Slurm 23.11.0")
    configure("")

    # Issue 47: MpiDefault=none (Slurm's default) makes every task of a job
    # run without --mpi a world of its own: an error naming the fix.
    conf = open(os.path.join(slurm, "slurm.conf")).read()
    with open(os.path.join(slurm, "slurm.conf"), "w") as f:
        f.write(conf.replace("MpiDefault=pmix\n", ""))
    broken("MpiDefault left at none is an error with the --mpi each family needs", denv,
           "MpiDefault=none: srun without --mpi starts every task as an MPI world of its own")
    p = run([MULTILANE, "doctor"], env=denv, check=False)
    expect("fix: set MpiDefault=pmix in " in p.stdout and "srun --mpi=pmix for Open MPI" in p.stdout,
           "the fix names MpiDefault=pmix and srun --mpi", p)
    with open(os.path.join(slurm, "slurm.conf"), "w") as f:
        f.write(conf)
    if os.path.exists(mpich_probe):
        # An installed family without a profile: its jobs run without
        # multilane; doctor names the tune that makes it (it said "all good").
        mpich_db = os.path.join(tmp, "no-mpich.db")
        run([MULTILANE, "import", os.path.join(tmp, "doc-current.json"), "--db", mpich_db], env=env)
        p = run([MULTILANE, "doctor", "--db", mpich_db], env=denv, check=False)
        expect(p.returncode == 1 and "no profile of this node type is for it" in p.stdout and
               "fix: `multilane tune --mpi mpich`" in p.stdout, "an untuned installed family is an error", p)
        run([MULTILANE, "import", mpich_doc, "--db", mpich_db], env=env)
        p = run([MULTILANE, "doctor", "--db", mpich_db], env=denv, check=False)
        expect(p.returncode == 0 and "no profile of this node type is for it" not in p.stdout,
               "with its profile, no error", p)

    # Issue 26: the launcher's generation (Open MPI 4 with ORTE, 5 with
    # PRRTE) and the command line tune's probes get from the family table.
    p = run([MULTILANE, "doctor"], env=denv, check=False)
    gen = re.search(r"ok     mpirun: openmpi (\d+) \((ORTE|PRRTE)\): probes outside Slurm start with "
                    r"`mpirun -np N --map-by :OVERSUBSCRIBE`", p.stdout)
    expect(p.returncode == 0 and gen, "doctor names mpirun's generation and the probes' command line", p)
    other = 5 if gen.group(1) == "4" else 4
    fakebin = os.path.join(tmp, "fakebin")
    os.makedirs(fakebin)
    with open(os.path.join(fakebin, "mpirun"), "w") as f:
        f.write("#!/bin/sh\necho 'mpirun (Open MPI) %d.0.7'\n" % other)
    os.chmod(os.path.join(fakebin, "mpirun"), 0o755)
    broken("an mpirun of another Open MPI generation than the command's MPI is an error",
           dict(denv, PATH=fakebin + ":" + denv["PATH"]), "mpirun is openmpi %d but this command's MPI is" % other)

    # An upgrade without a retune: every profile of a node type and partition
    # was tuned with another multilane version, so every job misses; doctor
    # says so and says to retune (it said "all good" before).
    doc["profiles"][0]["library_version"] = "0.0.1-old"
    json.dump(doc, open(doc_path, "w"))
    old_db = os.path.join(tmp, "old.db")
    run([MULTILANE, "import", doc_path, "--db", old_db], env=env)
    p = run([MULTILANE, "doctor", "--db", old_db], env=denv, check=False)
    expect(p.returncode == 1 and "tuned with libmlallreduce 0.0.1-old" in p.stdout and "every job there misses it"
           in p.stdout and f"fix: tune again with the installed versions: `multilane tune --partition gpu --db {old_db}`"
           in p.stdout
           and "all good" not in p.stdout, "profiles of another multilane version are an error with the retune", p)
    run([MULTILANE, "import", os.path.join(tmp, "doc-current.json"), "--db", old_db], env=env)
    if os.path.exists(mpich_doc):
        run([MULTILANE, "import", mpich_doc, "--db", old_db], env=env)
    p = run([MULTILANE, "doctor", "--db", old_db], env=denv, check=False)
    expect(p.returncode == 0 and "0.0.1-old" not in p.stdout, "a retuned partition has no outdated-profile error", p)


if __name__ == "__main__":
    sys.exit(main(globals()))
