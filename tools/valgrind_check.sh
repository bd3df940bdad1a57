#!/usr/bin/env bash
# Memcheck over the code the sanitizer run cannot see. tools/sanitize.sh builds the CPU
# backend alone (clang, ASan + UBSan) and runs every C++ suite, the fuzzers and the Python
# QA there; what it never compiles is the CUDA build's host side: the CUDA runtime probe
# and device queries of kernels/src/common/cuda/cuda_resources.cu and the backend and
# device resolution that goes through them. Those run here, whole, from ./build (the
# normal build), together with the external-message parsers' suite (leak check on):
#   kernels_test_cuda_resources   the probe, its reasons in words, memory queries
#   lib_test_device_parameter     blocks resolving backend and device in the CUDA build
#   lib_test_zmq_message          the parsers of bytes from outside the process
# Their CUDA suites are left out as in ctest's CPU entries. Any memcheck report fails.
# Suppressions, with the reason for each: tools/sanitizer/valgrind-gtest.supp. Called by
# tools/build_and_test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
t0=$(date +%s)
vg=(valgrind -q --error-exitcode=9 --suppressions=tools/sanitizer/valgrind-gtest.supp
    --leak-check=full --errors-for-leak-kinds=definite)
binaries=(build/kernels/kernels_test_cuda_resources build/lib/lib_test_device_parameter
          build/lib/lib_test_zmq_message)
for bin in "${binaries[@]}"; do
    [ -x "$bin" ] || { echo "valgrind_check: $bin is missing (build first)" >&2; exit 1; }
    "${vg[@]}" "$bin" --gtest_brief=1 --gtest_filter=-*Cuda*
done
echo "valgrind_check: ${#binaries[@]} suites run under memcheck, no reports" \
     "($(( $(date +%s) - t0 )) s)"
