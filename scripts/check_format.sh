#!/usr/bin/env bash
# check_format.sh: every tracked C and C++ file is laid out as .clang-format
# says (Debian 12's clang-format 14, what CI runs).  Names each file that is
# not, and the command that fixes it; exits 1 then.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v clang-format >/dev/null || { echo "check_format: no clang-format: install Debian's clang-format (scripts/install-deps.sh)" >&2; exit 1; }
version=$(clang-format --version | sed -n 's/.*version \([0-9]*\)\..*/\1/p')
# One run over every file; its complaints begin with the file's name.
mapfile -t bad < <(git ls-files -z '*.c' '*.cc' '*.cpp' '*.h' '*.cu' | xargs -0 clang-format --dry-run --Werror 2>&1 |
  sed -n 's/^\([^:]*\):[0-9]*:[0-9]*: error: code should be clang-formatted.*/\1/p' | sort -u)
if [ ${#bad[@]} -gt 0 ]; then
  echo "check_format: ${#bad[@]} file(s) not laid out as .clang-format says (clang-format $version; CI uses 14):" >&2
  printf '  %s\n' "${bad[@]}" >&2
  echo "check_format: fix with: clang-format -i ${bad[*]}" >&2
  exit 1
fi
echo "check_format: every C and C++ file as .clang-format says (clang-format $version)"
