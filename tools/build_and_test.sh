#!/usr/bin/env bash
# The README's test command: dependencies, build, every test. GPU tests are reported as
# skipped on machines without a CUDA device. Extra arguments go to cmake for ./build.
#
# Stages, in this order (each one's duration is printed at the end, also on failure):
#   deps          tools/install_deps.sh
#   build         the normal build in ./build (tools/build.sh; CUDA when nvcc is found)
#   ctest         every ctest entry of ./build, while, at the lowest CPU priority beside
#   asan-build    it, the ASan + UBSan build of the CPU backend (tools/sanitize.sh --build):
#                 many tests wait on real-time pacing, displays and child processes, and
#                 the compiler takes the idle core time they leave
#   valgrind      memcheck over the host code the sanitizer build does not compile
#                 (tools/valgrind_check.sh)
#   sanitize      every C++ suite, the fuzzers and the Python QA under ASan + UBSan
#                 (tools/sanitize.sh --run)
#
# Without an NVIDIA GPU no device code can run here, so unless CMAKE_CUDA_ARCHITECTURES
# is given the device code is compiled for the two ends of the supported range only: PTX
# for Turing (compute_75, the oldest) and machine code for Hopper (sm_90, the newest).
# That compiles every architecture-dependent path the default list (Turing through
# Hopper, tools/build.sh) would, at a third of the compile time.
set -euo pipefail
cd "$(dirname "$0")/.."

t_start=$(date +%s)
stage_lines=()
record() { # name seconds status
    stage_lines+=("$(printf '  %-11s %5d s  %s' "$1" "$2" "$3")")
}
summary() {
    local rc=$?
    echo "build_and_test: stage times"
    printf '%s\n' "${stage_lines[@]}"
    echo "build_and_test: total $(( $(date +%s) - t_start )) s, exit $rc"
}
trap summary EXIT
stage() { # name command...
    local name=$1 t0 rc=0
    shift
    t0=$(date +%s)
    echo "build_and_test: stage $name"
    "$@" || rc=$?
    record "$name" $(( $(date +%s) - t0 )) "$([ $rc = 0 ] && echo ok || echo "FAILED ($rc)")"
    return $rc
}

cmake_args=("$@")
if ! printf '%s\n' "$@" | grep -q 'CMAKE_CUDA_ARCHITECTURES' &&
   ! nvidia-smi -L >/dev/null 2>&1; then
    cmake_args+=("-DCMAKE_CUDA_ARCHITECTURES=75-virtual;90-real")
    echo "build_and_test: no NVIDIA GPU here: device code compiled for compute_75 (PTX)" \
         "and sm_90 only"
fi

stage deps tools/install_deps.sh
stage build tools/build.sh "${cmake_args[@]}"

# The sanitizer build runs beside ctest at the lowest priority; its log is shown when it
# fails, its tail when it passes.
asan_log=build/asan-build.log
asan_status=build/asan-build.status
rm -f "$asan_status"
(
    t0=$(date +%s)
    rc=0
    nice -n 19 tools/sanitize.sh --build >"$asan_log" 2>&1 || rc=$?
    echo "$rc $(( $(date +%s) - t0 ))" >"$asan_status"
) &
asan_pid=$!
ctest_rc=0
stage ctest ctest --test-dir build --output-on-failure -j"$(nproc)" || ctest_rc=$?
wait "$asan_pid" || true
read -r asan_rc asan_s <"$asan_status"
record asan-build "$asan_s" "$([ "$asan_rc" = 0 ] && echo "ok (beside ctest)" || echo "FAILED ($asan_rc)")"
if [ "$asan_rc" != 0 ]; then
    cat "$asan_log"
    exit "$asan_rc"
fi
tail -n 2 "$asan_log"
[ "$ctest_rc" = 0 ] || exit "$ctest_rc"

stage valgrind tools/valgrind_check.sh
stage sanitize tools/sanitize.sh --run
