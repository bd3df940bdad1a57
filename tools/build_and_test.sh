#!/usr/bin/env bash
# The README's test command: dependencies, build, every test (ctest). GPU tests are
# reported as skipped on machines without a CUDA device. Then the sanitizer and fuzzing
# run (tools/sanitize.sh, CPU only, ./build-asan).
set -euo pipefail
cd "$(dirname "$0")/.."
tools/install_deps.sh
tools/build.sh "$@"
ctest --test-dir build --output-on-failure -j"$(nproc)"
# Memcheck over the test binaries, then the ASan + UBSan build of the CPU backend: C++
# suites, fuzz targets, Python QA.
tools/valgrind_check.sh
tools/sanitize.sh
