#!/usr/bin/env bash
# CPU-only AddressSanitizer + UndefinedBehaviorSanitizer build in ./build-asan (clang), then:
#   1. every C++ GoogleTest suite (kernels_test_*, lib_test_*; CUDA suites skip),
#   2. the libFuzzer targets of fuzz/ (ctest label fuzz: -runs bounded, seeds committed),
#   3. the Python QA under ASan (Debian's python3 with clang's ASan runtime preloaded;
#      leak checking off there: CPython's interned objects are never freed).
# Any sanitizer report fails the run (halt_on_error, -fno-sanitize-recover). Prints the
# time of each part.
#   tools/sanitize.sh [cmake args]            build, then run
#   tools/sanitize.sh --build [cmake args]    build only
#   tools/sanitize.sh --run                   run only (after --build)
# tools/build_and_test.sh builds while the normal build's tests run, then runs.
set -euo pipefail
cd "$(dirname "$0")/.."
do_build=1
do_run=1
case "${1:-}" in
    --build) do_run=0; shift ;;
    --run) do_build=0; shift ;;
esac
build=build-asan
jobs="$(nproc)"
t0=$(date +%s)
stamp() { echo "sanitize: $1 after $(( $(date +%s) - t0 )) s"; }

san="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache
                                          -DCMAKE_C_COMPILER_LAUNCHER=ccache)
# Compile time (CI builds this beside ctest on 2 cores): kernels/ and its tests at -O1, as
# their suites take twice as long at -O0; the GNU Radio plumbing and the bindings at -O0.
# External headers precompiled (GPURADAR_PRECOMPILE_HEADERS): parsing them was half of
# an -O0 source's compile time. Line tables only for debug information: sanitizer stack
# traces keep function, file and line, inlined frames included, and full -g costs about
# a fifth more at -O1.
if [ "$do_build" = 1 ]; then
    cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Debug -DGPURADAR_ENABLE_CUDA=OFF \
        -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
        -DCMAKE_C_FLAGS="-O1 $san" -DCMAKE_CXX_FLAGS="-O1 $san" \
        -DCMAKE_C_FLAGS_DEBUG=-gline-tables-only -DCMAKE_CXX_FLAGS_DEBUG=-gline-tables-only \
        -DCMAKE_EXE_LINKER_FLAGS="" -DCMAKE_SHARED_LINKER_FLAGS="" \
        -DGPURADAR_PLUMBING_COMPILE_OPTIONS=-O0 \
        -DGPURADAR_PRECOMPILE_HEADERS=ON \
        -DGPURADAR_BUILD_FUZZERS=ON "${launcher[@]}" "$@" >/dev/null

    # Only what the sanitizer run executes: test binaries, fuzzers, the Python module.
    cmake --build "$build" -j"$jobs" --target gpuradar_test_targets
    stamp "build done"
fi
[ "$do_run" = 1 ] || exit 0

# Test binaries carry the runtime (clang links it statically into executables); python3
# gets the shared one preloaded.
asan_rt="$(clang -print-file-name=libclang_rt.asan-x86_64.so)"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
export ASAN_OPTIONS="halt_on_error=1:detect_stack_use_after_return=1"
export LSAN_OPTIONS="suppressions=$PWD/tools/sanitizer/lsan.supp:print_suppressions=0"
ctest --test-dir "$build" --output-on-failure -j"$jobs" -R '^(kernels_test_|lib_test_)' \
    -E '_gpu$'
stamp "C++ suites done"
ctest --test-dir "$build" --output-on-failure -L fuzz
stamp "fuzzers done"

# Python QA: the same ctest entries, with the runtime preloaded into python3. The
# two-process ZMQ test is left out (its real-time pacing does not hold under ASan).
ASAN_OPTIONS="$ASAN_OPTIONS:detect_leaks=0" LD_PRELOAD="$asan_rt" \
    ctest --test-dir "$build" --output-on-failure -j"$jobs" -R '^python_qa_' \
    -E 'zmq_two_process'
stamp "Python QA done"
