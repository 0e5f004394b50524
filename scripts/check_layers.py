#!/usr/bin/python3
"""check_layers.py: CONTRIBUTING.md's "Where things live" against the code.

Reads the two tables of CONTRIBUTING.md, the folders of the tree and the
rooms of libmlallreduce/, each with its "may use" column, and checks every
#include "..." of every C and C++ file against them: a file may include its
own folder's (or room's) headers and those of the folders (rooms) named in
backquotes in its row's "may use" cell, where a name ending in "/" is a
folder and any other name one file; "anything" allows everything.  Angle
includes (<...>) are outside headers (the system, MPI, SQLite) and are not
checked here.  The table's "namespace" column names the one namespace of a
folder's code: every namespace a file opens at the top (not inside another)
must be it or one inside it.  Prints each include or namespace that breaks
its row, or a folder or room with no row, and exits 1; prints the count
checked and exits 0 otherwise.

Usage: check_layers.py [REPO_ROOT]   (default: the folder above this script)
"""
import os
import re
import sys

SOURCE_ENDINGS = (".h", ".cc", ".c", ".cu", ".cuh")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
OPEN_NAMESPACE = re.compile(r"^namespace\s*([\w:]*)\s*\{")
CLOSE_NAMESPACE = re.compile(r"^\}\s*//\s*namespace")
SKIP_DIRS = {"build", ".git", "docs"}


def table_rows(text, heading):
    """The rows (lists of cells) of the first table under `heading`."""
    at = text.find(heading)
    if at < 0:
        sys.exit(f"check_layers: no section {heading!r} in CONTRIBUTING.md; restore it")
    rows = []
    for line in text[at:].splitlines()[1:]:
        if line.startswith("|"):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if not set(cells[0]) <= set("- "):
                rows.append(cells)
        elif rows:
            break
    return rows[1:]  # without the header row


def rules(rows):
    """{folder: allowed names} from rows whose first cell names folders in backquotes."""
    out = {}
    for cells in rows:
        allowed = set(re.findall(r"`([^`]+)`", cells[2]))
        if "anything" in cells[2]:
            allowed.add("*")
        for folder in re.findall(r"`([^`]+/)`", cells[0]):
            out[folder] = allowed
    return out


def namespaces(rows):
    """{folder: namespace} from the rows whose "namespace" cell names one."""
    out = {}
    for cells in rows:
        names = re.findall(r"`([\w:]+)`", cells[3]) if len(cells) > 3 else []
        for folder in re.findall(r"`([^`]+/)`", cells[0]):
            if names:
                out[folder] = names[0]
    return out


def top_namespaces(text):
    """The named namespaces a file opens outside any other (clang-format's
    closing comments end each one)."""
    depth, out = 0, []
    for line in text.splitlines():
        opened = OPEN_NAMESPACE.match(line)
        if opened:
            if depth == 0 and opened.group(1):
                out.append(opened.group(1))
            depth += 1
        elif CLOSE_NAMESPACE.match(line):
            depth = max(depth - 1, 0)
    return out


def source_files(root):
    for d, dirs, files in os.walk(root):
        dirs[:] = sorted(x for x in dirs if x not in SKIP_DIRS and not x.startswith("."))
        for f in sorted(files):
            if f.endswith(SOURCE_ENDINGS):
                yield os.path.relpath(os.path.join(d, f), root)


def resolve(root, includer, name, by_basename):
    """The tree file an #include "name" in `includer` reads, or None (generated)."""
    for base in (os.path.dirname(includer), "", "include/multilane"):
        p = os.path.normpath(os.path.join(base, name))
        if os.path.isfile(os.path.join(root, p)):
            return p
    found = by_basename.get(os.path.basename(name), [])
    return found[0] if len(found) == 1 else None


def owner(path, table):
    """The longest folder of `table` that holds `path`."""
    best = None
    for folder in table:
        if path.startswith(folder) and (best is None or len(folder) > len(best)):
            best = folder
    return best


def allowed(target, own, table):
    """Whether the row of folder `own` in `table` lets it include `target`."""
    names = table[own]
    where = owner(target, table)
    return "*" in names or where == own or where in names or target in names


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), ".."))
    text = open(os.path.join(root, "CONTRIBUTING.md"), encoding="utf-8").read()
    folder_rows = table_rows(text, "## Where things live")
    folders, folder_namespace = rules(folder_rows), namespaces(folder_rows)
    rooms = rules(table_rows(text, "### The library's rooms"))
    files = list(source_files(root))
    by_basename = {}
    for f in files:
        by_basename.setdefault(os.path.basename(f), []).append(f)
    problems, checked = [], 0
    for f in files:
        top = owner(f, folders)
        if top is None:
            problems.append(f"{f}: its folder has no row in CONTRIBUTING.md's table; add one")
            continue
        room = owner(f, rooms) if f.startswith("libmlallreduce/") else None
        if f.startswith("libmlallreduce/") and room is None:
            problems.append(f"{f}: its room has no row in CONTRIBUTING.md's table of rooms; add one")
        with open(os.path.join(root, f), encoding="utf-8", errors="replace") as src:
            code = src.read()
        names = INCLUDE.findall(code)
        want = folder_namespace.get(top)
        for ns in top_namespaces(code) if want else []:
            if ns != want and not ns.startswith(want + "::"):
                problems.append(f"{f}: namespace {ns}: {top} is namespace {want}; see CONTRIBUTING.md")
        for name in names:
            target = resolve(root, f, name, by_basename)
            if target is None:
                continue  # generated in the build folder (install_paths.h...)
            checked += 1
            if not allowed(target, top, folders):
                problems.append(f'{f}: #include "{name}" ({target}): {top} may not use it; see CONTRIBUTING.md')
            elif room is not None and target.startswith("libmlallreduce/") and not allowed(target, room, rooms):
                problems.append(f'{f}: #include "{name}" ({target}): room {room} may not use it; see CONTRIBUTING.md')
    for p in problems:
        print(p)
    if problems:
        print(f"check_layers: {len(problems)} include(s) or namespace(s) against CONTRIBUTING.md's tables")
        return 1
    print(f"check_layers: {checked} includes of {len(files)} files follow CONTRIBUTING.md's tables")
    return 0


if __name__ == "__main__":
    sys.exit(main())
