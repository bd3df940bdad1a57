#!/usr/bin/env python3
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""QA for gpuradar.multiply_const on the CPU backend, against numpy in float64."""

import numpy as np
from gnuradio import blocks, gr, gr_unittest
from gnuradio import gpuradar


class qa_multiply_const(gr_unittest.TestCase):
    def setUp(self):
        self.tb = gr.top_block()

    def tearDown(self):
        self.tb = None

    def test_001_gain_matches_numpy(self):
        vlen = 7
        rng = np.random.default_rng(2)
        x = (rng.standard_normal(vlen * 40) + 1j * rng.standard_normal(vlen * 40)).astype(
            np.complex64)
        k = 0.5 - 1.75j
        src = blocks.vector_source_c(x.tolist(), False, vlen)
        mc = gpuradar.multiply_const(k, vlen, "cpu")
        snk = blocks.vector_sink_c(vlen)
        self.tb.connect(src, mc, snk)
        self.tb.run()
        ref = x.astype(np.complex128) * k
        y = np.array(snk.data())
        self.assertLess(np.linalg.norm(y - ref) / np.linalg.norm(ref), 1e-6)

    def test_002_set_k(self):
        mc = gpuradar.multiply_const(1 + 0j, 4, "cpu")
        mc.set_k(3 - 2j)
        self.assertEqual(mc.k(), 3 - 2j)

    def test_003_bad_parameters_raise_naming_them(self):
        with self.assertRaisesRegex(ValueError, "vlen"):
            gpuradar.multiply_const(1 + 0j, 0, "cpu")
        with self.assertRaisesRegex(ValueError, "backend"):
            gpuradar.multiply_const(1 + 0j, 4, "gpu")

    def test_004_transfer_stats_are_readable(self):
        gpuradar.reset_transfer_stats()
        stats = gpuradar.transfer_stats()
        self.assertEqual(
            stats, {"h2d_bytes": 0, "d2h_bytes": 0, "d2d_bytes": 0, "peer_bytes": 0}
        )


if __name__ == "__main__":
    gr_unittest.run(qa_multiply_const)
