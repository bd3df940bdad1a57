#!/usr/bin/env bash
# Installs gr-gpuradar's build and test dependencies from Debian 12's packages.
# The CUDA Toolkit (nvcc, cudart, cuFFT) is expected in /usr/local/cuda; without it the
# module builds the CPU backend only.
set -euo pipefail
packages=(
    cmake g++ make pkg-config
    gnuradio gnuradio-dev libvolk2-dev libfftw3-dev
    libboost-all-dev libspdlog-dev libfmt-dev libgmp-dev
    pybind11-dev python3-numpy python3-matplotlib libgtest-dev
    xvfb xauth python3-soapysdr gir1.2-gtk-3.0
    python3-hypothesis
    python3-pyqt5
    python3-pyqtgraph
    clang-format-14
    libzmq3-dev
    cppzmq-dev
    clang
    libclang-rt-14-dev
    python3-hypothesis
    python3-zmq
    python3-gdal
    valgrind
    liblapack-dev
)
missing=()
for p in "${packages[@]}"; do
    dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
    echo "install_deps: all ${#packages[@]} packages present"
    exit 0
fi
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -q
$sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
