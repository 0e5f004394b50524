#!/usr/bin/python3
"""Checks the RUNPATH and RPATH of ELF files (issue 23 N7).

An empty element (a leading, trailing or doubled ':') makes the loader look
for libraries in the current directory, and a relative element (neither
absolute nor $ORIGIN-based) in a folder relative to it: both let whoever
controls the directory a program runs from supply its libraries.

Usage:
  check_runpaths.py [--tree DIR] FILE...

Every FILE must exist and is checked; with --tree, so is every ELF file
under DIR outside CMakeFiles folders.  Prints each file's paths; exits 1 on
the first kind of problem found in any file.
"""
import os
import re
import subprocess
import sys

ENTRY = re.compile(r"\((RUNPATH|RPATH)\)\s+Library (?:runpath|rpath): \[(.*)\]")


def is_elf(path):
    try:
        with open(path, "rb") as f:
            return f.read(4) == b"\x7fELF"
    except OSError:
        return False


def search_paths(path):
    """[(kind, value)] of the file's RUNPATH and RPATH entries."""
    out = subprocess.run(["readelf", "-d", path], capture_output=True, text=True, check=True).stdout
    return ENTRY.findall(out)


def problems(value):
    """What is wrong with one RUNPATH value, as short phrases."""
    found = []
    for element in value.split(":"):
        if element == "":
            found.append("an empty element (the current directory)")
        elif not (element.startswith("/") or element.startswith("$ORIGIN") or element.startswith("${ORIGIN}")):
            found.append(f"the relative element '{element}'")
    return found


def tree_files(top):
    for dirpath, dirnames, files in os.walk(top):
        dirnames[:] = [d for d in dirnames if d != "CMakeFiles"]
        for name in files:
            path = os.path.join(dirpath, name)
            if not os.path.islink(path) and is_elf(path):
                yield path


def main(argv):
    files = []
    if len(argv) >= 2 and argv[0] == "--tree":
        files += sorted(tree_files(argv[1]))
        argv = argv[2:]
    missing = [f for f in argv if not os.path.exists(f)]
    if missing:
        print("check_runpaths.py: missing (build them first): " + " ".join(missing))
        return 1
    files = sorted(set(files + argv))
    bad = 0
    for path in files:
        for kind, value in search_paths(path):
            found = problems(value)
            print(f"{path}: {kind} [{value}]" + (": " + "; ".join(found) if found else ""))
            bad += 1 if found else 0
    print(f"{len(files)} files checked, {bad} with a bad search path")
    if bad:
        print("fix: give the target multilane_no_runpath or multilane_install_rpath "
              "(cmake/MultilaneInstallDirs.cmake) instead of CMake's build RUNPATH")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
