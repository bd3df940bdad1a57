#!/usr/bin/env bash
# The README's first command: dependencies, build, then the demo on the built module.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/install_deps.sh
tools/build.sh "$@"
PYTHONPATH="$PWD/build/test_modules" /usr/bin/python3 apps/gpuradar_demo.py
