#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""Evaluates a block's GRC `asserts` as GNU Radio Companion (and grcc) does, on this
source tree's grc/ YAML: for tests that the YAML refuses what the C++ make() refuses."""

import os

from gnuradio import gr

GRC_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "grc")
_platform = None


def platform():
    global _platform
    if _platform is None:
        from gnuradio.grc.core.platform import Platform
        p = Platform(version=gr.version(),
                     version_parts=(gr.major_version(), gr.api_version(),
                                    gr.minor_version()),
                     prefs=gr.prefs())
        p.build_library([os.path.join(gr.prefix(), "share", "gnuradio", "grc", "blocks"),
                         GRC_DIR])
        _platform = p
    return _platform


def failed_asserts(block_id, **params):
    """The `asserts` of block_id that fail with params (parameter id -> the text typed
    into GRC) set on top of the YAML's defaults."""
    fg = platform().make_flow_graph()
    b = fg.new_block(block_id)
    for k, v in params.items():
        b.params[k].set_value(v)
    fg.rewrite()
    fg.validate()
    return [m for m in b.get_error_messages() if m.startswith("Assertion ")]


def rendered_make(block_id, cpp=False, **params):
    """The block's `make` template as grcc renders it (Python, or C++ with cpp=True) with
    params (parameter id -> the text typed into GRC) set on top of the YAML's defaults."""
    fg = platform().make_flow_graph()
    b = fg.new_block(block_id)
    for k, v in params.items():
        b.params[k].set_value(v)
    fg.rewrite()
    return (b.cpp_templates if cpp else b.templates).render("make")
