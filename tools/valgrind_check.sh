#!/usr/bin/env bash
# Memcheck over the GoogleTest binaries of ./build (the normal build): every binary
# registers and prints its tests (GoogleTest prints each parameter then), and the
# parsers' suite runs whole. Any memcheck report fails. Suppressions, with the reason for
# each: tools/sanitizer/valgrind-gtest.supp. Called by tools/build_and_test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
t0=$(date +%s)
vg=(valgrind -q --error-exitcode=9 --suppressions=tools/sanitizer/valgrind-gtest.supp)
mapfile -t binaries < <(find build/kernels build/lib -maxdepth 1 -type f -perm -u+x \
    \( -name 'kernels_test_*' -o -name 'lib_test_*' \) | sort)
for bin in "${binaries[@]}"; do
    "${vg[@]}" "$bin" --gtest_list_tests >/dev/null
done
"${vg[@]}" --leak-check=full --errors-for-leak-kinds=definite build/lib/lib_test_zmq_message \
    --gtest_brief=1
echo "valgrind_check: ${#binaries[@]} binaries listed, parser suite run, no reports" \
     "($(( $(date +%s) - t0 )) s)"
