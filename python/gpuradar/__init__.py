#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""gr-gpuradar: radar signal processing on NVIDIA GPUs (CPU backend everywhere).

Every block takes backend='auto' | 'cuda' | 'cpu'. Blocks on the CUDA backend keep
their data on the GPU between each other (gpuradar device buffer).
"""
from ._version import __version__  # noqa: F401  (the CMake project version)
from .gpuradar_python import *  # noqa: F401,F403
# Pure-Python helpers: detections PDUs as dicts, simulator truth as JSON.
from . import detections, scene_truth  # noqa: F401,E402
