#!/usr/bin/env bash
# Formatting as a check: every tracked C/C++/CUDA file (*.h *.cc *.cpp *.cu *.cuh) must be
# formatted as the repository's .clang-format says, by Debian's clang-format 14 (other
# versions format some constructs differently, so the check is pinned to one).
#
#   tools/check_format.sh          list unformatted files and fail (ctest: format_check)
#   tools/check_format.sh --fix    format those files in place
#
# CLANG_FORMAT names the binary to use (default: clang-format-14, else clang-format).
set -euo pipefail

usage() { echo "usage: $0 [--fix]" >&2; exit 2; }
fix=0
case "${1:-}" in
    "") ;;
    --fix) fix=1 ;;
    -h|--help) echo "usage: $0 [--fix]"; exit 0 ;;
    *) usage ;;
esac
[ $# -le 1 ] || usage

root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

required_major=14
tool="${CLANG_FORMAT:-}"
if [ -z "$tool" ]; then
    if command -v clang-format-14 >/dev/null 2>&1; then
        tool=clang-format-14
    else
        tool=clang-format
    fi
fi
if ! command -v "$tool" >/dev/null 2>&1; then
    echo "check_format: '$tool' not found; install Debian's clang-format-14" \
         "(apt-get install clang-format-14)" >&2
    exit 1
fi
version_line="$("$tool" --version | head -n 1)"
major="$(sed -n 's/.*clang-format version \([0-9][0-9]*\)\..*/\1/p' <<<"$version_line")"
if [ "$major" != "$required_major" ]; then
    echo "check_format: clang-format $required_major.x required, '$tool --version' says:" \
         "$version_line" >&2
    echo "check_format: install Debian's clang-format-14 or set CLANG_FORMAT to it" >&2
    exit 1
fi
if [ ! -f .clang-format ]; then
    echo "check_format: no .clang-format at $root" >&2
    exit 1
fi
if ! git -C "$root" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    echo "check_format: $root is not a git work tree: cannot list the tracked files" >&2
    exit 1
fi

mapfile -d '' files < <(git ls-files -z -- '*.h' '*.cc' '*.cpp' '*.cu' '*.cuh')
# Tracked but deleted in the work tree (a rename in progress): nothing to check.
existing=()
for f in "${files[@]}"; do
    [ -f "$f" ] && existing+=("$f")
done
if [ ${#existing[@]} -eq 0 ]; then
    echo "check_format: no C/C++/CUDA files tracked" >&2
    exit 1
fi

if [ "$fix" -eq 1 ]; then
    "$tool" -i --style=file "${existing[@]}"
    echo "check_format: formatted ${#existing[@]} files with $version_line"
    exit 0
fi

# One clang-format process for every file (a process per file is slow on a loaded CI
# host); -Werror reports each unformatted file as "<file>:<line>:<col>: error: ...".
report="$("$tool" --dry-run -Werror --style=file "${existing[@]}" 2>&1 >/dev/null)" || true
mapfile -t bad < <(sed -n 's/^\(.*\):[0-9][0-9]*:[0-9][0-9]*: error: .*/\1/p' \
                       <<<"$report" | sort -u)
if [ ${#bad[@]} -eq 0 ] && [ -n "$report" ]; then
    # Anything else (an unreadable .clang-format, a crash) is a failure too.
    echo "$report" >&2
    echo "check_format: clang-format failed" >&2
    exit 1
fi
if [ ${#bad[@]} -ne 0 ]; then
    printf 'check_format: not formatted: %s\n' "${bad[@]}" >&2
    echo "check_format: ${#bad[@]} of ${#existing[@]} files differ from .clang-format" \
         "($version_line); run tools/check_format.sh --fix" >&2
    exit 1
fi
echo "check_format: ${#existing[@]} files formatted ($version_line)"
