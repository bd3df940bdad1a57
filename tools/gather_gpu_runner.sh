#!/usr/bin/env bash
# Gather the test binaries and the benchmark of a build, plus the non-system shared
# libraries they need, into one folder that runs on a GPU host with the NVIDIA driver
# and the CUDA 13 runtime but no GNU Radio.
#
#   tools/gather_gpu_runner.sh <build-dir> [<out-dir>]     (default <build-dir>/gpu-runner)
#
# Never copied (the GPU host has its own): glibc (libc, libm, libdl, librt, libpthread,
# ld-linux), libstdc++, libgcc_s, the driver (libcuda, libnvidia-*), cudart, cuFFT, cuBLAS
# (with cuBLASLt), cuSOLVER (with cuSPARSE and nvJitLink, which it loads): half a
# gigabyte that the CUDA 13 toolkit on the GPU host has.
# Everything else ldd lists is copied, e.g. GNU Radio, and LAPACK with what it links
# (libblas, libgfortran, libquadmath: the CPU ECA-B; a host without GNU Radio lacks them).
# Then, on the GPU host:
#   LD_LIBRARY_PATH=<out-dir>/lib:/usr/local/cuda/lib64 <out-dir>/run_gpu_tests.sh
set -euo pipefail
build=$(cd "${1:?usage: gather_gpu_runner.sh <build-dir> [<out-dir>]}" && pwd)
out=${2:-$build/gpu-runner}
list="$build/gpuradar_test_binaries.txt"
[ -f "$list" ] || { echo "gather_gpu_runner: $list missing: build the project first" >&2; exit 2; }

rm -rf "$out"
mkdir -p "$out/bin" "$out/lib"
system_lib='^(linux-vdso|libc\.so|libm\.so|libdl\.so|librt\.so|libpthread\.so|ld-linux|libstdc\+\+\.so|libgcc_s\.so|libcuda\.so|libnvidia-|libcudart\.so|libcufft\.so|libcublas\.so|libcublasLt\.so|libcusolver\.so|libcusparse\.so|libnvJitLink\.so)'

binaries=()
while read -r bin; do
    [ -n "$bin" ] && binaries+=("$bin")
done <"$list"
[ -x "$build/apps/gpuradar_bench" ] && binaries+=("$build/apps/gpuradar_bench")
[ -x "$build/apps/gpuradar_soak" ] && binaries+=("$build/apps/gpuradar_soak")

for bin in "${binaries[@]}"; do
    if [ ! -x "$bin" ]; then
        echo "gather_gpu_runner: skipping $bin (not built)" >&2
        continue
    fi
    cp "$bin" "$out/bin/"
    # ldd lists the whole dependency closure, so one pass per binary is enough.
    ldd "$bin" | awk '/=> \//{print $1, $3}' | while read -r soname path; do
        if [[ ! $soname =~ $system_lib ]] && [ ! -e "$out/lib/$soname" ]; then
            cp -L "$path" "$out/lib/$soname"
        fi
    done
done
strip --strip-unneeded "$out"/lib/*.so* 2>/dev/null || true

cat >"$out/run_gpu_tests.sh" <<'RUNNER'
#!/usr/bin/env bash
# Runs every gpu-labelled test (the suites named *Cuda*) and the CPU suites beside them.
# GPURADAR_REQUIRE_GPU=1: a missing device fails instead of skipping.
here=$(cd "$(dirname "$0")" && pwd)
export LD_LIBRARY_PATH="$here/lib:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export GPURADAR_REQUIRE_GPU=1
status=0
for t in "$here"/bin/*; do
    name=$(basename "$t")
    case "$name" in gpuradar_bench | gpuradar_soak) continue ;; esac # not test binaries
    echo "=== $name"
    "$t" --gtest_brief=1 "$@" || { echo "FAILED: $name"; status=1; }
done
echo "gpu runner: $([ $status = 0 ] && echo ALL PASSED || echo FAILURES)"
exit $status
RUNNER
chmod +x "$out/run_gpu_tests.sh"
du -sh "$out"
