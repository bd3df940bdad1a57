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
# Same-host ZMQ endpoints in a private directory (the live-path examples use it).
from .ipc_paths import ipc_endpoint, private_ipc_dir  # noqa: F401,E402
# SigMF recordings as a source whose getters give the chain its parameters (the class
# replaces the package attribute its module's import bound).
from .sigmf_cpi_source import sigmf_cpi_source  # noqa: F401,E402
# The passive radar scene simulator (NumPy; its module is passive_sim).
from .passive_sim import passive_scene_source  # noqa: F401,E402

# QT GUI display blocks (PyQt5 + pyqtgraph), imported on first use so that the rest of
# the module works without a display stack.
# (The modules are not named after the blocks: importing a submodule binds its name in
# the package, which would hide the block.)
_DISPLAY_BLOCKS = {"range_doppler_sink": "display_range_doppler",
                   "sar_image_sink": "display_sar_image",
                   "detection_table": "display_detection_table",
                   "track_sink": "display_tracks",
                   "ppi_sink": "display_ppi",
                   "rti_sink": "display_rti"}


def __getattr__(name):
    if name in _DISPLAY_BLOCKS:
        import importlib
        module = importlib.import_module("." + _DISPLAY_BLOCKS[name], __name__)
        return getattr(module, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
