#!/usr/bin/env bash
# Per-kernel instruction and register counts of CUDA sources, to show that a refactoring
# left the generated code alone (or what it changed).
#
#   tools/sass_counts.sh [--keep DIR] FILE.cu|FILE.cubin ...
#
# A .cu file is compiled for one architecture with the flags CMake uses for the kernels
# library (read from BUILD/kernels/CMakeFiles/gpuradar-kernels.dir/flags.make when that
# exists; BUILD defaults to ./build) to a cubin, keeping the PTX and ptxas's report.
# One line per kernel and device function, sorted by name:
#
#   name  ptx  sass  regs  stack  spill  ptx_sha  sass_sha
#
# ptx: PTX instructions (no directives, labels or line info); sass: SASS instructions, NOPs
# of the alignment padding left out; regs/stack/spill: ptxas's registers, stack frame and
# spill-store bytes; *_sha: the first 12 hex digits of a SHA-1 of the instruction text
# (mangled names and addresses left out), so equal hashes mean equal code. SASS needs
# `cuobjdump` (CUOBJDUMP, else on PATH or in /usr/local/cuda/bin): without it the sass
# columns read '-' and the cubin can be carried to a machine that has one (--keep DIR
# keeps each FILE's cubin, PTX and ptxas report in DIR; a .cubin argument is dumped as
# it is, with ptx/regs from FILE.ptx and FILE.ptxas beside it when present).
#
# Names are demangled with the namespaces and the argument list dropped (a kernel that
# moves between namespaces keeps its line). ARCH (default: the build's sm_ target, else
# 90), NVCC and BUILD override the defaults.
set -euo pipefail
export LC_ALL=C # join and sort must collate alike

usage() { echo "usage: $0 [--keep DIR] FILE.cu|FILE.cubin ..." >&2; exit 2; }
keep=""
while [ $# -gt 0 ]; do
    case "$1" in
        --keep) [ $# -ge 2 ] || usage; keep="$2"; shift 2 ;;
        -h|--help) sed -n '2,24p' "$0"; exit 0 ;;
        --) shift; break ;;
        -*) usage ;;
        *) break ;;
    esac
done
[ $# -ge 1 ] || usage

root="$(cd "$(dirname "$0")/.." && pwd)"
build="${BUILD:-$root/build}"
nvcc="${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}"
cuobjdump="${CUOBJDUMP:-$(command -v cuobjdump || true)}"
[ -n "$cuobjdump" ] || { [ -x /usr/local/cuda/bin/cuobjdump ] && cuobjdump=/usr/local/cuda/bin/cuobjdump; } || true
flags_make="$build/kernels/CMakeFiles/gpuradar-kernels.dir/flags.make"

# The build's CUDA flags and defines, with its --generate-code list replaced by one
# cubin target.
cuda_flags=(-O3 -DNDEBUG --expt-relaxed-constexpr -lineinfo -std=c++17)
defines=(-DGPURADAR_HAVE_CUDA)
arch="${ARCH:-}"
if [ -f "$flags_make" ]; then
    read -r -a cuda_flags <<<"$(sed -n 's/^CUDA_FLAGS = //p' "$flags_make")"
    read -r -a defines <<<"$(sed -n 's/^CUDA_DEFINES = //p' "$flags_make")"
    if [ -z "$arch" ]; then
        arch="$(grep -o 'sm_[0-9]*[a-z]*' "$flags_make" | head -n1 | sed 's/sm_//')"
    fi
fi
arch="${arch:-90}"
filtered=()
for f in "${cuda_flags[@]}"; do
    case "$f" in
        --generate-code=*|-gencode*|-arch=*|--gpu-architecture=*|-Xcompiler=*) ;;
        *) filtered+=("$f") ;;
    esac
done
includes=(-I"$root/kernels/include" -I"$root/kernels/src")

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# name -> short name: demangled, namespaces and arguments dropped.
demangle="$(command -v c++filt || command -v cu++filt || echo cat)"
short_names() {
    "$demangle" | sed -E 's/\(anonymous namespace\):://g; s/([A-Za-z_][A-Za-z0-9_]*::)+//g' |
        sed -E 's/^void //; s/^(.*[^ ])\(.*\)$/\1/'
}

# PTX: per .entry/.func, instruction count and hash.
ptx_table() { # file.ptx -> "mangled count sha" lines
    awk '
        /^(\.visible |\.weak )?\.(entry|func)/ {
            name = $0; sub(/\(.*/, "", name); n = split(name, w, /[ \t]+/); name = w[n]
            cur = name; depth = 0; started = 0; next
        }
        cur != "" {
            line = $0
            opens = gsub(/\{/, "{", line); closes = gsub(/\}/, "}", line)
            if (opens) started = 1
            depth += opens - closes
            t = $0; sub(/^[ \t]+/, "", t); sub(/\/\/.*/, "", t)
            if (t ~ /;[ \t]*$/ && t !~ /^\./ && t !~ /^\$/ && t !~ /^[{}]/) {
                gsub(/_Z[A-Za-z0-9_]+/, "_Z", t); gsub(/[ \t]+/, " ", t)
                count[cur]++; text[cur] = text[cur] t "\n"
            }
            if (started && depth == 0) cur = ""
        }
        END { for (f in count) { printf "%s %d\n", f, count[f] > "/dev/stderr"; printf "%s\n%s", "@@" f, text[f] } }
    ' "$1" 2>"$work/ptx.counts" | hash_sections >"$work/ptx.sha"
    join <(sort "$work/ptx.counts") <(sort "$work/ptx.sha")
}

# "@@name" sections on stdin -> "name sha" lines.
hash_sections() {
    awk -v dir="$work" '
        /^@@/ { if (out) close(out); name = substr($0, 3); out = dir "/sec." (++n); print name > (out ".name"); close(out ".name"); next }
        { print > out }
        END { if (out) close(out) }
    '
    for nf in "$work"/sec.*.name; do
        [ -e "$nf" ] || continue
        body="${nf%.name}"
        [ -e "$body" ] || : >"$body"
        printf '%s %s\n' "$(cat "$nf")" "$(sha1sum <"$body" | cut -c1-12)"
        rm -f "$nf" "$body"
    done
}

sass_table() { # file.cubin -> "mangled count sha" lines
    "$cuobjdump" -sass "$1" | awk '
        /Function : / { cur = $NF; count[cur] = 0; next }
        cur != "" && /^[ \t]*\/\*[0-9a-f]+\*\// {
            t = $0; sub(/^[ \t]*\/\*[0-9a-f]+\*\/[ \t]*/, "", t); sub(/;.*/, "", t)
            gsub(/[ \t]+/, " ", t); sub(/ $/, "", t)
            if (t ~ /^NOP$/) next
            gsub(/_Z[A-Za-z0-9_]+/, "_Z", t)
            count[cur]++; text[cur] = text[cur] t "\n"
        }
        END { for (f in count) { printf "%s %d\n", f, count[f] > "/dev/stderr"; printf "%s\n%s", "@@" f, text[f] } }
    ' 2>"$work/sass.counts" | hash_sections >"$work/sass.sha"
    join <(sort "$work/sass.counts") <(sort "$work/sass.sha")
}

ptxas_table() { # ptxas -v report -> "mangled regs stack spill" lines
    awk '
        /Compiling entry function|Function properties for|Compiling function/ {
            s = $0; if (s ~ /'"'"'/) { split(s, a, "'"'"'"); cur = a[2] } else { cur = $NF }
            next
        }
        /bytes stack frame/ { stack[cur] = $1; spill[cur] = $5; next }
        /Used [0-9]+ registers/ { for (i = 1; i <= NF; i++) if ($i == "Used") reg[cur] = $(i + 1) }
        END { for (f in reg) printf "%s %s %s %s\n", f, reg[f], (f in stack ? stack[f] : 0), (f in spill ? spill[f] : 0) }
    ' "$1"
}

for src in "$@"; do
    [ -f "$src" ] || { echo "$0: no such file: $src" >&2; exit 1; }
    base="$(basename "$src")"
    case "$src" in
        *.cu)
            stem="${base%.cu}"
            d="$work/$stem"
            mkdir -p "$d"
            "$nvcc" "${defines[@]}" "${includes[@]}" "${filtered[@]}" \
                --generate-code="arch=compute_$arch,code=sm_$arch" -cubin -Xptxas -v \
                --keep --keep-dir "$d" -x cu "$src" -o "$d/$stem.cubin" 2>"$d/$stem.ptxas" ||
                { cat "$d/$stem.ptxas" >&2; exit 1; }
            ptx="$(find "$d" -maxdepth 1 -name '*.ptx' | head -n1)"
            [ "$ptx" -ef "$d/$stem.ptx" ] || cp "$ptx" "$d/$stem.ptx"
            ptx="$d/$stem.ptx"
            cubin="$d/$stem.cubin"
            report="$d/$stem.ptxas"
            ;;
        *.cubin)
            stem="${base%.cubin}"
            d="$(dirname "$src")"
            cubin="$src"
            ptx="$d/$stem.ptx"
            report="$d/$stem.ptxas"
            ;;
        *) echo "$0: $src: expected a .cu or .cubin file" >&2; exit 1 ;;
    esac
    if [ -n "$keep" ] && [ "${src##*.}" = cu ]; then
        mkdir -p "$keep"
        cp "$cubin" "$ptx" "$report" "$keep/"
    fi
    : >"$work/ptx.tab"; : >"$work/regs.tab"; : >"$work/sass.tab"
    [ -f "$ptx" ] && ptx_table "$ptx" >"$work/ptx.tab"
    [ -f "$report" ] && ptxas_table "$report" | sort >"$work/regs.tab"
    [ -n "$cuobjdump" ] && sass_table "$cubin" >"$work/sass.tab"
    echo "# $src (sm_$arch)"
    printf '%-60s %6s %6s %5s %6s %6s %-12s %-12s\n' name ptx sass regs stack spill ptx_sha sass_sha
    # Every name any table has, each row filled from each table ('-' where absent).
    cat "$work/ptx.tab" "$work/regs.tab" "$work/sass.tab" | cut -d' ' -f1 | sort -u |
        while read -r m; do
            read -r -a p <<<"$(grep -m1 "^$m " "$work/ptx.tab" || echo "$m - -")"
            read -r -a r <<<"$(grep -m1 "^$m " "$work/regs.tab" || echo "$m - - -")"
            read -r -a s <<<"$(grep -m1 "^$m " "$work/sass.tab" || echo "$m - -")"
            printf '%s\t%s %s %s %s %s %s %s\n' "$(echo "$m" | short_names)" \
                "${p[1]}" "${s[1]}" "${r[1]}" "${r[2]}" "${r[3]}" "${p[2]}" "${s[2]}"
        done | sort | awk -F'\t' '{ split($2, v, " "); printf "%-60s %6s %6s %5s %6s %6s %-12s %-12s\n", $1, v[1], v[2], v[3], v[4], v[5], v[6], v[7] }'
done
