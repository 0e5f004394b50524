#!/usr/bin/python3
"""guide_blocks_test.py SOURCE_TREE: the unit check of the admin guide's
runnable blocks (CTest install_guide_blocks; no root, no packages).

  - the extractor (guide_blocks.py) refuses a missing, doubled or misplaced
    marker and an unclosed block, and reads an indented block and its
    continuation lines and comments as the shell does;
  - docs/admin.md marks every block of guide_blocks.BLOCKS exactly once, and
    no other;
  - each platform's install blocks name only packages the build makes on
    that platform, and together every one of them: the names of
    packaging/DebianPackages.cmake (CPACK_DEBIAN_<COMPONENT>_PACKAGE_NAME),
    less the CUDA module's on a platform without nvcc.  deb_e2e.sh runs the
    blocks of the platform it is on; this check reads both platforms' blocks;
  - the one removal block names `multilane` alone, and every other package
    depends on it (so that apt-get takes along whichever a host has).
"""
import os
import re
import subprocess
import sys

sys.path.append(os.path.dirname(os.path.abspath(__file__)))
sys.path.append(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import guide_blocks  # noqa: E402
from e2e import check, log  # noqa: E402

SOURCE = None


def refuses(text, name, words):
    """guide_blocks.block(text, name) fails with a message holding `words`."""
    try:
        guide_blocks.block(text, name)
    except guide_blocks.GuideError as e:
        check(words in str(e), f"the refusal of block '{name}' does not say '{words}': {e}")
        return
    raise AssertionError(f"guide_blocks read block '{name}' from a guide that should be refused:\n{text}")


def test_extractor():
    good = "text\n   <!-- guide: tune -->\n   ```\n   multilane tune \\\n     --partition gpu   # a comment\n\n" \
           "   sed -i 's/^#a /a /' f\n   ```\n"
    text = guide_blocks.block(good, "tune")
    check(text.startswith("multilane tune \\\n  --partition gpu"), f"the indented block read as {text!r}")
    argv = guide_blocks.commands(text)
    check(argv == [["multilane", "tune", "--partition", "gpu"], ["sed", "-i", "s/^#a /a /", "f"]],
          f"the block's commands read as {argv}")
    refuses("text\n```\nx\n```\n", "tune", "has no marker")
    refuses(good + good, "tune", "marks 'tune' 2 times")
    refuses("<!-- guide: tune -->\n\n```\nx\n```\n", "tune", "is not followed by a fenced block")
    refuses("<!-- guide: tune -->\n```\nx\n", "tune", "is never closed")
    refuses(good, "tunes", "no block 'tunes' is known")
    log("ok: the extractor reads a marked block and refuses a missing, doubled, misplaced or open one")


def test_guide_marks_every_block(guide):
    for name in guide_blocks.BLOCKS:
        guide_blocks.block(guide, name, "docs/admin.md")
    unknown = {n: at for n, at in guide_blocks.markers(guide).items() if n not in guide_blocks.BLOCKS}
    check(not unknown, f"docs/admin.md has markers guide_blocks.BLOCKS does not know: {unknown}")
    log(f"ok: docs/admin.md marks each of its {len(guide_blocks.BLOCKS)} blocks once")


def built_packages():
    """{component: package name} of packaging/DebianPackages.cmake."""
    with open(os.path.join(SOURCE, "packaging", "DebianPackages.cmake")) as f:
        names = dict(re.findall(r"set\(CPACK_DEBIAN_(\w+)_PACKAGE_NAME ([a-z0-9.+-]+)\)", f.read()))
    check({"MULTILANE", "MPICH", "CUDA"} <= set(names), f"DebianPackages.cmake names packages {names}")
    return names


def platform_packages(platform, names):
    """The packages the build makes on `platform`: every one, but the CUDA
    module where no nvcc is installed.  The Debian 13 root holds only the
    packages of `install-deps.sh --list --platform` (scripts/platform-stage.sh),
    and none of them is a CUDA toolkit."""
    packages = set(names.values())
    if platform == "deb13":
        listed = subprocess.run(["bash", os.path.join(SOURCE, "scripts", "install-deps.sh"), "--list", "--platform"],
                                capture_output=True, text=True, check=True).stdout.split()
        cuda = [p for p in listed if "cuda" in p]
        check(not cuda, f"install-deps.sh --platform installs {cuda}: Debian 13 may now build {names['CUDA']}; "
              "give the guide its Debian 13 CUDA blocks and this check their package")
        packages.discard(names["CUDA"])
    return packages


def named_packages(guide, name, platform):
    """The packages block `name` installs (./PACKAGE_*~PLATFORM_amd64.deb) or
    removes (PACKAGE), each command an `apt-get install` or `apt-get remove`."""
    verb = "install" if name.startswith("install") else "remove"
    found = []
    for argv in guide_blocks.commands(guide_blocks.block(guide, name, "docs/admin.md")):
        check(argv[:2] == ["apt-get", verb], f"block '{name}': not an `apt-get {verb}`: {argv}")
        for word in argv[2:]:
            if verb == "install":
                m = re.fullmatch(r"\./([a-z0-9.+-]+)_[^/~]*~" + platform + r"_amd64\.deb", word)
                check(m, f"block '{name}': {word} is not a {platform} package file (./NAME_*~{platform}_amd64.deb)")
                found.append(m.group(1))
            else:
                check(re.fullmatch(r"[a-z0-9.+-]+", word), f"block '{name}': {word} is not a package name")
                found.append(word)
    return found


def test_remove_block(guide, names):
    argv = guide_blocks.commands(guide_blocks.block(guide, "remove", "docs/admin.md"))
    check(argv == [["apt-get", "remove", names["MULTILANE"]]],
          f"block 'remove' is {argv}: give `apt-get remove {names['MULTILANE']}` alone, which every host can run")
    with open(os.path.join(SOURCE, "packaging", "DebianPackages.cmake")) as f:
        text = f.read()
    for component in names:
        if component == "MULTILANE":
            continue
        depends = re.search(r"set\(CPACK_DEBIAN_" + component + r"_PACKAGE_DEPENDS\s+\"([^\"]*)\"", text)
        check(depends and depends.group(1).startswith(names["MULTILANE"] + " (= "),
              f"{names[component]} does not depend on {names['MULTILANE']}: `apt-get remove "
              f"{names['MULTILANE']}` would leave it; make it depend, or name it in the removal block")
    log(f"ok: the removal block names {names['MULTILANE']}, and every other package depends on it")


def test_platform_blocks(guide, platform, names):
    made = platform_packages(platform, names)
    verb = "install"
    blocks = [b for b in guide_blocks.BLOCKS if b.split()[:2] == [verb, platform]]
    named = {b: named_packages(guide, b, platform) for b in blocks}
    every = [p for b in blocks for p in named[b]]
    stray = sorted(set(every) - made)
    check(not stray, f"docs/admin.md's {verb} blocks for {platform} name {stray}, which the build does not "
          f"make there (it makes {sorted(made)})")
    missing = sorted(made - set(every))
    check(not missing, f"docs/admin.md's {verb} blocks for {platform} leave out {missing}")
    check(len(every) == len(set(every)), f"docs/admin.md's {verb} blocks for {platform} name a package twice")
    for b, packages in named.items():
        cuda = b.endswith(" cuda")
        check(all((p == names["CUDA"]) == cuda for p in packages),
              f"block '{b}' names {packages}: the CUDA module goes in the '{verb} {platform} cuda' block alone")
    log(f"ok: {platform}: the {verb} blocks name {sorted(every)}")


def main():
    global SOURCE
    if len(sys.argv) != 2:
        print("usage: guide_blocks_test.py SOURCE_TREE", file=sys.stderr)
        return 2
    SOURCE = sys.argv[1]
    try:
        test_extractor()
        with open(os.path.join(SOURCE, "docs", "admin.md")) as f:
            guide = f.read()
        test_guide_marks_every_block(guide)
        names = built_packages()
        for platform in sorted(set(guide_blocks.PLATFORMS.values())):
            test_platform_blocks(guide, platform, names)
        test_remove_block(guide, names)
    except (AssertionError, guide_blocks.GuideError) as e:
        print(f"FAIL: {e}")
        return 1
    print("PASS: the admin guide's blocks")
    return 0


if __name__ == "__main__":
    sys.exit(main())
