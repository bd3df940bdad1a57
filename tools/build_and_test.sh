#!/usr/bin/env bash
# The README's test command: dependencies, build, every test (ctest). GPU tests are
# reported as skipped on machines without a CUDA device.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/install_deps.sh
tools/build.sh "$@"
ctest --test-dir build --output-on-failure -j"$(nproc)"
