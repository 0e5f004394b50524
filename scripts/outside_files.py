#!/usr/bin/env python3
"""outside_files.py: the files multilane keeps outside the source tree, as they
were before a test run and after it (issue 41, item 11).

    outside_files.py snapshot FILE   records them in FILE (JSON)
    outside_files.py compare FILE    says what changed since FILE was written
                                     and exits 1 if anything did

Watched: the invoking user's multilane folders (what db/paths.cc and the
report's history read: ~/.local/state/multilane, and the XDG_STATE_HOME one
when that variable is set; ~/.config/multilane, ~/.cache/multilane,
~/.local/share/multilane and their XDG_* counterparts, which multilane does
not use and no test may make), the system MPI's own settings a test could
write (~/.openmpi, ~/.mpich), and the system's: the shared database's folder
/var/lib/multilane (cmake/MultilaneInstallDirs.cmake), the plugin's default
MPS folder /run/multilane (spank/plugin_config.h), the plugstack line of the
Debian package /etc/slurm/plugstack.conf.d/multilane.conf, and
/etc/multilane (used by nothing; watched so that nothing starts to), and
the machine's munge (/etc/munge, /run/munge: each test cluster runs a munged
of its own in its folder, scripts/slurm/local-slurm.sh).  The
Debian package stage makes /var/lib/multilane and the plugstack line and
removes them again (tests/install/deb_e2e.sh puts back what was there), so
compare after that stage: whatever it left is a change.

A file is compared by type, mode, size and SHA-256, a folder by type and
mode (its modification time changes when a test makes and removes a file
in it), a link by its target.  The roots are stored in FILE, so compare
looks where snapshot looked whatever HOME says then.
"""
import hashlib
import json
import os
import stat
import sys

SYSTEM_ROOTS = ["/var/lib/multilane", "/etc/multilane", "/run/multilane",
                "/etc/slurm/plugstack.conf.d/multilane.conf", "/etc/munge", "/run/munge"]
HOME_FOLDERS = [".local/state/multilane", ".config/multilane", ".cache/multilane", ".local/share/multilane",
                ".openmpi", ".mpich"]
XDG = {"XDG_STATE_HOME": "multilane", "XDG_CONFIG_HOME": "multilane", "XDG_CACHE_HOME": "multilane",
       "XDG_DATA_HOME": "multilane"}


def roots():
    """The watched paths, absolute, for the invoking user."""
    homes = []
    if os.environ.get("HOME", "").startswith("/"):
        homes.append(os.environ["HOME"])
    try:
        import pwd
        homes.append(pwd.getpwuid(os.getuid()).pw_dir)
    except KeyError:
        pass
    out = []
    for home in dict.fromkeys(homes):
        out += [os.path.join(home, f) for f in HOME_FOLDERS]
    for var, sub in XDG.items():
        v = os.environ.get(var, "")
        if v.startswith("/"):  # relative values are ignored (the XDG spec, db/paths.cc)
            out.append(os.path.join(v, sub))
    return list(dict.fromkeys(out + SYSTEM_ROOTS))


def describe(path):
    """What is at PATH: None when nothing is."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    mode = "%o" % stat.S_IMODE(st.st_mode)
    if stat.S_ISLNK(st.st_mode):
        return {"type": "link", "target": os.readlink(path)}
    if stat.S_ISDIR(st.st_mode):
        return {"type": "folder", "mode": mode}
    if stat.S_ISREG(st.st_mode):
        h = hashlib.sha256()
        try:
            with open(path, "rb") as f:
                for block in iter(lambda: f.read(1 << 20), b""):
                    h.update(block)
            digest = h.hexdigest()
        except OSError as e:
            digest = "unreadable: %s" % e.strerror
        return {"type": "file", "mode": mode, "size": st.st_size, "sha256": digest}
    return {"type": "other", "mode": mode}


def scan(paths):
    """{path: describe(path)} of every root and everything under it."""
    out = {}
    for root in paths:
        out[root] = describe(root)
        if out[root] is None or out[root]["type"] != "folder":
            continue
        for folder, dirs, files in os.walk(root):
            dirs.sort()
            for name in sorted(dirs) + sorted(files):
                p = os.path.join(folder, name)
                out[p] = describe(p)
    return out


def what(d):
    if d is None:
        return "nothing"
    if d["type"] == "file":
        return "file, %d bytes, mode %s" % (d["size"], d["mode"])
    if d["type"] == "link":
        return "link to %s" % d["target"]
    return "%s, mode %s" % (d["type"], d["mode"])


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in ("snapshot", "compare"):
        print("usage: outside_files.py snapshot|compare FILE", file=sys.stderr)
        return 2
    cmd, path = sys.argv[1], sys.argv[2]
    if cmd == "snapshot":
        r = roots()
        with open(path, "w") as f:
            json.dump({"roots": r, "entries": scan(r)}, f, indent=1, sort_keys=True)
        print("outside_files: watching %s" % ", ".join(r))
        return 0
    with open(path) as f:
        before = json.load(f)
    after = scan(before["roots"])
    changes = []
    for p in sorted(set(before["entries"]) | set(after)):
        a, b = before["entries"].get(p), after.get(p)
        if a == b:
            continue
        if a is None:
            changes.append("made:    %s (%s)" % (p, what(b)))
        elif b is None:
            changes.append("removed: %s (was %s)" % (p, what(a)))
        else:
            changes.append("changed: %s (%s, now %s)" % (p, what(a), what(b)))
    if not changes:
        print("outside_files: nothing changed under %s" % ", ".join(before["roots"]))
        return 0
    print("outside_files: FAIL: the run changed %d path(s) outside its own folders:" % len(changes))
    for c in changes:
        print("  " + c)
    print("outside_files: a test wrote into the invoking user's or the system's multilane files: give it its own "
          "HOME and XDG_* folders (cmake/MultilaneTestHomes.cmake) or its own --db/MULTILANE_USER_DB, and remove "
          "what it left by hand")
    return 1


if __name__ == "__main__":
    sys.exit(main())
