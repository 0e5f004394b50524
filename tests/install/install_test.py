#!/usr/bin/python3
"""The installed tree (`cmake --install BUILD --prefix P`), moved to another
prefix before it is used: nothing of it may depend on the build tree or on
the prefix it was installed to.

    install_test.py CASE --build DIR --source DIR --mpirun PATH --version X.Y.Z

--version is the build's version (CMake's PROJECT_VERSION, from
MLA_VERSION_STRING): what the installed command, module and .pc must say.

Cases:
  layout       the files are where docs/admin.md says, the RUNPATHs are
               $ORIGIN-relative, the cli_filter and the plugstack line name
               the configured paths, and the moved command runs a tune (its
               probe under mpirun) and `multilane run` with the moved library
               (checked in the process's /proc/self/maps).
  find_package the example (examples/) built with find_package(multilane)
               against the moved tree, run under mpirun with its library.
  pkg_config   the same example built with `pkg-config multilane`.
  lmod         Debian's Lmod: `module use` + `module load multilane` put the
               moved tree on PATH, MANPATH, PKG_CONFIG_PATH, CMAKE_PREFIX_PATH.
"""
import argparse
import glob
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from e2e import OPENMPI_TEST_ENV, check, log, run as e2e_run, run_case  # noqa: E402

ARGS = None


def clean_env():
    """This environment without multilane's variables, so that only the
    installed tree's own lookup is tested."""
    env = dict(os.environ)
    for k in list(env):
        if k.startswith("MULTILANE_") or k in ("LD_PRELOAD", "LD_LIBRARY_PATH", "CMAKE_PREFIX_PATH", "PKG_CONFIG_PATH"):
            del env[k]
    env.update(OPENMPI_TEST_ENV, OMPI_MCA_btl_base_warn_component_unused="0")
    return env


def run(cmd, env=None, cwd=None, timeout=300):
    """e2e.run (must succeed), in clean_env() unless given another."""
    return e2e_run(cmd, env=env or clean_env(), cwd=cwd, timeout=timeout)


def cache_value(name):
    with open(os.path.join(ARGS.build, "CMakeCache.txt")) as f:
        for line in f:
            m = re.match(rf"^{name}:[A-Z]+=(.*)$", line.rstrip("\n"))
            if m:
                return m.group(1)
    return None


def install_and_move(root):
    """Installs the build into root/first, moves it to root/moved; returns
    the moved prefix."""
    first = os.path.join(root, "first")
    run(["cmake", "--install", ARGS.build, "--prefix", first])
    moved = os.path.join(root, "moved")
    os.rename(first, moved)
    log(f"installed into {first}, moved to {moved}")
    return moved


def libdir(prefix):
    """The installed library folder (lib, or lib/<multiarch> for /usr)."""
    for dirpath, _, files in os.walk(prefix):
        if "libmlallreduce.so.0" in files:
            return dirpath
    raise AssertionError(f"no libmlallreduce.so.0 under {prefix}")


def assert_outside_trees(text, what):
    for tree in (os.path.realpath(ARGS.build), os.path.realpath(ARGS.source)):
        check(tree not in text, f"{what} names the build or source tree {tree}:\n{text}")


def runpath(path):
    out = run(["readelf", "-d", path]).stdout
    m = re.search(r"\((?:RUNPATH|RPATH)\)\s+Library (?:runpath|rpath): \[(.*)\]", out)
    return m.group(1) if m else ""


# ---------------------------------------------------------------- the cases

def case_layout(root):
    prefix = install_and_move(root)
    lib = libdir(prefix)
    command = os.path.join(prefix, "bin", "multilane")
    probe = os.path.join(prefix, "libexec", "multilane", "mlprobe")
    # The front (libmlallreduce.so.0, injected; no link name: programs link a
    # family build) and the Open MPI family build with its link name.
    expected = [command, probe, os.path.join(lib, "libmlallreduce.so.0"),
                os.path.join(lib, "libmlallreduce-openmpi.so.0"), os.path.join(lib, "libmlallreduce-openmpi.so"),
                os.path.join(prefix, "include", "mlallreduce.h"), os.path.join(prefix, "include", "mlallreduce_types.h"),
                os.path.join(lib, "cmake", "multilane", "multilaneConfig.cmake"),
                os.path.join(lib, "cmake", "multilane", "multilaneConfigVersion.cmake"),
                os.path.join(lib, "pkgconfig", "multilane.pc"),
                os.path.join(prefix, "share", "modulefiles", "multilane", f"{ARGS.version}.lua"),
                os.path.join(prefix, "share", "doc", "multilane", "admin.md"),
                os.path.join(prefix, "share", "doc", "multilane", "examples", "mla_hello.c")]
    check(not os.path.exists(os.path.join(lib, "libmlallreduce.so")),
          "the front has a link name: -lmlallreduce would link it instead of a family build")
    mpich = cache_value("MULTILANE_MPICH_LIBRARY") or ""
    if cache_value("MULTILANE_MPICH") != "OFF" and mpich and not mpich.endswith("NOTFOUND"):
        expected += [os.path.join(lib, "libmlallreduce-mpich.so.0"),
                     os.path.join(prefix, "libexec", "multilane", "mlprobe-mpich")]
    if cache_value("MULTILANE_MAN") == "ON":
        expected += [os.path.join(prefix, "share", "man", "man1", f"multilane{s}.1.gz")
                     for s in ("", "-tune", "-run", "-withdraw", "-doctor", "-report")]
    if cache_value("MULTILANE_HAVE_CUDA") == "ON" or os.path.exists(
            os.path.join(ARGS.build, "libmlallreduce", "libmlallreduce_cuda.so")):
        expected.append(os.path.join(lib, "libmlallreduce_cuda.so"))
    spank = cache_value("SLURM_SPANK_INCLUDE_DIR")
    plugin_dir = cache_value("MULTILANE_SLURM_PLUGIN_DIR")
    if spank and not spank.endswith("NOTFOUND") and cache_value("MULTILANE_SPANK") != "OFF":
        check(not os.path.isabs(plugin_dir), f"plugin dir {plugin_dir} is outside the prefix: not relocatable")
        expected += [os.path.join(prefix, plugin_dir, "spank_multilane.so"),
                     os.path.join(prefix, "share", "multilane", "cli_filter.lua"),
                     os.path.join(prefix, "etc", "slurm", "plugstack.conf.d", "multilane.conf")]
    missing = [p for p in expected if not os.path.exists(p)]
    check(not missing, f"missing from the installed tree: {missing}")
    # Issue 47: the installed README is a package user's: every guide and man
    # page it names is installed, and it names no script of the source tree.
    docdir = os.path.join(prefix, "share", "doc", "multilane")
    readme = open(os.path.join(docdir, "README.md")).read()
    named = set(re.findall(r"`([\w.-]+\.md)`", readme))
    check(len(named) > 5 and all(os.path.exists(os.path.join(docdir, n)) for n in named),
          f"the installed README names guides that are not installed: {sorted(named)}")
    if cache_value("MULTILANE_MAN") == "ON":
        pages = set(re.findall(r"`(multilane-[a-z]+)`", readme))
        check(len(pages) > 5 and all(os.path.exists(os.path.join(prefix, "share", "man", "man1", p + ".1.gz"))
                                     for p in pages), f"the installed README names missing man pages: {sorted(pages)}")
    check(not re.search(r"scripts/[\w-]+\.(sh|py)", readme), "the installed README points at the source tree's scripts")
    # Every relative link of every installed guide leads to an installed file
    # or folder (the results pages included), never out of the doc folder.
    broken = []
    for page in glob.glob(os.path.join(docdir, "*.md")):
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", open(page).read()):
            path = os.path.normpath(os.path.join(docdir, target))
            if "://" not in target and (not path.startswith(docdir + os.sep) or not os.path.exists(path)):
                broken.append(f"{os.path.basename(page)} -> {target}")
    check(not broken, f"installed guides link to what is not installed: {broken}")

    # The RUNPATHs: relative to the program, nothing of the build tree.
    for exe, want in ((command, "$ORIGIN/../lib"), (probe, "$ORIGIN/../../lib")):
        rp = runpath(exe)
        log(f"{exe}: RUNPATH {rp}")
        check(rp.startswith(want), f"{exe}: RUNPATH '{rp}' is not {want}...")
        assert_outside_trees(rp, f"the RUNPATH of {exe}")
    ldd = run(["ldd", command]).stdout
    # The command need not link the library (it injects it by path, checked
    # below through /proc/PID/maps); where it does, it is the moved one.
    m = re.search(r"libmlallreduce\.so\.0 => (\S+)", ldd)
    check(not m or os.path.realpath(m.group(1)) == os.path.realpath(os.path.join(lib, "libmlallreduce.so.0")),
          f"the moved command loads another library:\n{ldd}")
    check("not found" not in ldd, f"the moved command misses a library:\n{ldd}")

    # The configured paths in the cli_filter and the plugstack line.
    if os.path.exists(os.path.join(prefix, "share", "multilane", "cli_filter.lua")):
        configured = cache_value("CMAKE_INSTALL_PREFIX")
        lua = open(os.path.join(prefix, "share", "multilane", "cli_filter.lua")).read()
        check(f'local MULTILANE = "{configured}/bin/multilane"' in lua, "the cli_filter does not name the command")
        check('local DATABASE = "/var/lib/multilane/profiles.db"' in lua or "MULTILANE_SYSTEM_DATABASE" in lua,
              "the cli_filter does not name the system database")
        check("@" not in re.sub(r"--.*", "", lua), "an unreplaced @VARIABLE@ in the cli_filter")
        conf = open(os.path.join(prefix, "etc", "slurm", "plugstack.conf.d", "multilane.conf")).read()
        lines = [l for l in conf.splitlines() if l.strip() and not l.startswith("# ") and l != "#"]
        check(len(lines) == 1 and lines[0].startswith("#optional "), f"expected one commented-out line: {lines}")
        check(f"library={configured}/lib" in lines[0] and "database=" in lines[0], lines[0])

    # The moved command works: version, a tiny tune (its probe under mpirun),
    # and `multilane run` injects the moved library.
    env = clean_env()
    env["MULTILANE_USER_DB"] = os.path.join(root, "user.db")
    env["MULTILANE_SYSTEM_DB"] = os.path.join(root, "none.db")
    version = run([command, "--version"], env=env).stdout.strip()
    check(version == ARGS.version, f"multilane --version says {version!r}, the build {ARGS.version}")
    # Host memory: the layout is the point, not the GPUs (on a GPU host the
    # tune's default is device memory, which takes no --np).
    p = run([command, "tune", "--budget", "2", "--sizes", "64K:128K", "--np", "2", "--virtual-nodes", "1",
             "--memory", "host"], env=env, timeout=300, cwd=root)
    text = p.stdout + p.stderr
    log(text[-1500:])
    assert_outside_trees(text, "multilane tune's output")
    p = run([command, "run", "--", ARGS.mpirun, "-np", "1", "cat", "/proc/self/maps"], env=env, cwd=root)
    maps = [l.split()[-1] for l in p.stdout.splitlines() if "libmlallreduce" in l]
    log(f"mapped: {sorted(set(maps))}")
    check(maps, f"multilane run did not inject the library:\n{p.stderr}")
    check(all(m.startswith(lib + "/") for m in maps), f"the library was mapped from elsewhere: {set(maps)}")
    assert_outside_trees(p.stdout, "/proc/self/maps of a process started by multilane run")


def build_with_find_package(prefix, root):
    src = os.path.join(prefix, "share", "doc", "multilane", "examples")
    build = os.path.join(root, "example-cmake")
    env = clean_env()
    env["CMAKE_PREFIX_PATH"] = prefix
    run(["cmake", "-S", src, "-B", build, "-G", "Ninja"], env=env)
    run(["cmake", "--build", build], env=env)
    return os.path.join(build, "mla_hello")


def build_with_pkg_config(prefix, root):
    src = os.path.join(prefix, "share", "doc", "multilane", "examples", "mla_hello.c")
    env = clean_env()
    env["PKG_CONFIG_PATH"] = os.path.join(libdir(prefix), "pkgconfig")
    flags = run(["pkg-config", "--cflags", "--libs", "multilane"], env=env).stdout.split()
    libdir_var = run(["pkg-config", "--variable=libdir", "multilane"], env=env).stdout.strip()
    check(os.path.realpath(libdir_var) == os.path.realpath(libdir(prefix)),
          f"multilane.pc's libdir {libdir_var} is not the moved tree's")
    exe = os.path.join(root, "mla_hello_pc")
    run(["cc", src, "-o", exe] + flags + [f"-Wl,-rpath,{libdir_var}"], env=env)
    return exe


def run_example(exe, prefix):
    ldd = run(["ldd", exe]).stdout
    # Programs that call mla_* link the Open MPI family build.
    m = re.search(r"libmlallreduce-openmpi\.so\.0 => (\S+)", ldd)
    check(m and os.path.realpath(m.group(1)).startswith(os.path.realpath(prefix) + "/"),
          f"{exe} does not load the installed library:\n{ldd}")
    p = run([ARGS.mpirun, "-np", "4", "-x", "MULTILANE_RANKS_PER_NODE=2", exe])
    log(p.stdout)
    check("sums right" in p.stdout, f"the example's sums are wrong:\n{p.stdout}\n{p.stderr}")
    check(re.search(r"4 rank\(s\) on 2 node\(s\)", p.stdout), p.stdout)
    check("calls=1 lane=1" in p.stdout, f"the forced lane call did not run through the library:\n{p.stdout}")


def case_find_package(root):
    prefix = install_and_move(root)
    run_example(build_with_find_package(prefix, root), prefix)


def case_pkg_config(root):
    prefix = install_and_move(root)
    run_example(build_with_pkg_config(prefix, root), prefix)


def case_lmod(root):
    prefix = install_and_move(root)
    init = "/usr/share/lmod/lmod/init/bash"
    check(os.path.exists(init), "Debian's lmod is not installed (scripts/install-deps.sh)")
    script = f"""
set -e
source {init}
module use {prefix}/share/modulefiles
module load multilane
echo "which=$(command -v multilane)"
echo "version=$(multilane --version)"
echo "pc=$(pkg-config --modversion multilane)"
echo "man=$(man -w multilane 2>/dev/null || true)"
echo "cmake=$CMAKE_PREFIX_PATH"
module unload multilane
echo "after=$(command -v multilane || echo none)"
"""
    env = clean_env()
    env["PATH"] = "/usr/bin:/bin"  # no other multilane
    env.pop("MANPATH", None)
    p = run(["bash", "-c", script], env=env)
    log(p.stdout + p.stderr)
    out = dict(l.split("=", 1) for l in p.stdout.splitlines() if "=" in l)
    check(out.get("which") == os.path.join(prefix, "bin", "multilane"), f"multilane resolves to {out.get('which')}")
    check(out.get("version") == ARGS.version, f"multilane --version: {out.get('version')}, the build {ARGS.version}")
    check(out.get("pc") == ARGS.version, f"pkg-config multilane: {out.get('pc')}, the build {ARGS.version}")
    check(out.get("cmake", "").split(":")[0] == prefix, f"CMAKE_PREFIX_PATH {out.get('cmake')}")
    if cache_value("MULTILANE_MAN") == "ON":
        check(out.get("man", "").startswith(prefix + "/"), f"man -w multilane gives {out.get('man')!r}")
    check(out.get("after") == "none", "module unload left multilane on PATH")


CASES = {name[len("case_"):]: fn for name, fn in globals().items() if name.startswith("case_")}


def main():
    global ARGS
    ap = argparse.ArgumentParser()
    ap.add_argument("case", choices=sorted(CASES))
    ap.add_argument("--build", required=True)
    ap.add_argument("--source", required=True)
    ap.add_argument("--mpirun", required=True)
    ap.add_argument("--version", required=True, help="the build's version (CMake's PROJECT_VERSION)")
    ARGS = ap.parse_args()
    return run_case(ARGS.case, CASES[ARGS.case], "mlinstall", (AssertionError, subprocess.TimeoutExpired))


if __name__ == "__main__":
    sys.exit(main())
