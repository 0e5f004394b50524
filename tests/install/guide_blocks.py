#!/usr/bin/python3
"""guide_blocks.py: the admin guide's runnable command blocks, read from
docs/admin.md itself, so that the package tests run what the guide says.

A runnable block is a fenced block whose line before holds its marker:

    <!-- guide: install deb12 -->
    ```
    apt-get install ./multilane_*~deb12_amd64.deb ...
    ```

(indented alike inside a list item).  BLOCKS names every marker the guide
must hold; the platforms are Debian releases by /etc/os-release's
VERSION_CODENAME (PLATFORMS).

    guide_blocks.py GUIDE NAME     prints block NAME of GUIDE, without its
                                   fences and indentation
    guide_blocks.py --platform     prints this machine's platform (deb12, deb13)

Exit status 1 with one line naming the problem and its fix: a marker that is
missing, given twice, unknown, not followed by a fenced block, a block not
closed, a platform not known.  Used by deb_e2e.sh (install and removal),
installed_e2e.py (enable, tune, disable) and guide_blocks_test.py (the
unit check of the guide's blocks).
"""
import re
import shlex
import sys

# VERSION_CODENAME -> the platform as the packages' release names it (1~deb12).
PLATFORMS = {"bookworm": "deb12", "trixie": "deb13"}

# Every runnable block of docs/admin.md, in the guide's order.  The CUDA
# module's blocks exist only where the platform builds it (Debian 12 GPU nodes).
BLOCKS = (
    "install deb12", "install deb13", "install deb12 cuda",
    "enable",
    "tune",
    "disable",
    "remove",
)

MARKER = re.compile(r"^\s*<!--\s*guide:\s*(.*?)\s*-->\s*$")
FENCE = re.compile(r"^(\s*)```")


class GuideError(Exception):
    """A marker or block of the guide that cannot be read as promised."""


def markers(text):
    """Every marker of `text`: {name: [line numbers, 1-based]}."""
    found = {}
    for number, line in enumerate(text.splitlines(), 1):
        m = MARKER.match(line)
        if m:
            found.setdefault(" ".join(m.group(1).split()), []).append(number)
    return found


def block(text, name, guide="the guide"):
    """The commands of block `name` of `text` (the fences and the fence's
    indentation taken off), or GuideError naming what is wrong and the fix."""
    if name not in BLOCKS:
        raise GuideError(f"guide_blocks: no block '{name}' is known; known: {', '.join(BLOCKS)} "
                         "(add it to BLOCKS in tests/install/guide_blocks.py)")
    lines = text.splitlines()
    at = markers(text).get(name, [])
    if not at:
        raise GuideError(f"guide_blocks: {guide} has no marker '<!-- guide: {name} -->': put it on the line "
                         "before the fenced block of those commands")
    if len(at) > 1:
        raise GuideError(f"guide_blocks: {guide} marks '{name}' {len(at)} times (lines "
                         f"{', '.join(map(str, at))}): keep the one before its block")
    opening = FENCE.match(lines[at[0]]) if at[0] < len(lines) else None
    if not opening:
        raise GuideError(f"guide_blocks: {guide}'s marker '{name}' (line {at[0]}) is not followed by a fenced "
                         "block: put the marker on the line just before the opening ```")
    indent = len(opening.group(1))
    body = []
    for line in lines[at[0] + 1:]:
        if FENCE.match(line):
            if not body:
                raise GuideError(f"guide_blocks: {guide}'s block '{name}' (line {at[0] + 1}) is empty: "
                                 "write its commands between the fences")
            return "\n".join(body) + "\n"
        body.append(line[indent:] if line[:indent].strip() == "" else line)
    raise GuideError(f"guide_blocks: {guide}'s block '{name}' (line {at[0] + 1}) is never closed: end it with ```")


def commands(text):
    """The commands of a block as argument lists: continuation lines joined,
    '#' comments and empty lines left out (shell quoting as shlex reads it)."""
    joined = re.sub(r"\\\n", " ", text)
    return [argv for argv in (shlex.split(line, comments=True) for line in joined.splitlines()) if argv]


def platform(os_release="/etc/os-release"):
    """This machine's platform (PLATFORMS), or GuideError naming the release."""
    with open(os_release) as f:
        fields = dict(line.rstrip("\n").split("=", 1) for line in f if "=" in line)
    codename = fields.get("VERSION_CODENAME", "").strip('"')
    if codename not in PLATFORMS:
        raise GuideError(f"guide_blocks: {os_release} names release '{codename}', for which docs/admin.md has no "
                         f"blocks; known: {', '.join(f'{c} ({p})' for c, p in PLATFORMS.items())} (add the "
                         "platform's blocks to the guide and to PLATFORMS)")
    return PLATFORMS[codename]


def main(argv):
    try:
        if argv == ["--platform"]:
            print(platform())
            return 0
        if len(argv) != 2:
            print("usage: guide_blocks.py GUIDE NAME | --platform", file=sys.stderr)
            return 2
        with open(argv[0]) as f:
            sys.stdout.write(block(f.read(), argv[1], argv[0]))
        return 0
    except GuideError as e:
        print(e, file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
