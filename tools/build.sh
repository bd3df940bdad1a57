#!/usr/bin/env bash
# Configure and build gr-gpuradar into ./build (CUDA when nvcc is found, else CPU only).
# Extra arguments go to cmake, e.g. -DCMAKE_CUDA_ARCHITECTURES=90.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release "$@"
cmake --build build -j"$(nproc)"
