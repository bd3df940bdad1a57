#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""The CPU pool setting from Python: bad counts refused naming the setting, the default
from the cores the process may run on, and a pulse-Doppler flowgraph on the CPU backend
gives the same map at 1 and 3 threads."""

import os

import numpy as np
from gnuradio import blocks, gr, gr_unittest
from gnuradio import gpuradar


def run_processor(cpi, npulses, nrange):
    tb = gr.top_block()
    src = blocks.vector_source_c(cpi.tolist(), False, nrange)
    proc = gpuradar.pulse_doppler_processor(nrange, npulses, npulses, waveform="barker:13",
                                            pulse_width=13e-6, samp_rate=2e6,
                                            doppler_window="hann", backend="cpu")
    snk = blocks.vector_sink_f(npulses)
    tb.connect(src, proc, snk)
    tb.run()
    return np.array(snk.data(), dtype=np.float32)


class qa_cpu_threads(gr_unittest.TestCase):
    def tearDown(self):
        gpuradar.set_cpu_threads(self.saved)

    def setUp(self):
        self.saved = gpuradar.cpu_threads()

    def test_001_bad_counts(self):
        for bad in (0, -3, 257):
            with self.assertRaisesRegex(ValueError, r"cpu_threads must be in \[1, 256\]"):
                gpuradar.set_cpu_threads(bad)
        gpuradar.set_cpu_threads(3)
        self.assertEqual(gpuradar.cpu_threads(), 3)

    def test_003_default_is_the_cores_this_process_may_use(self):
        # setUp read the count before any test changed it in this process: the default.
        cores = len(os.sched_getaffinity(0))
        self.assertEqual(gpuradar.cpu_cores(), cores)
        self.assertEqual(self.saved, min(cores, 256))

    def test_002_same_map_at_any_count(self):
        npulses, nrange = 16, 300
        rng = np.random.default_rng(7)
        cpi = (rng.standard_normal(2 * npulses * nrange)
               + 1j * rng.standard_normal(2 * npulses * nrange)).astype(np.complex64)
        gpuradar.set_cpu_threads(1)
        one = run_processor(cpi, npulses, nrange)
        gpuradar.set_cpu_threads(3)
        three = run_processor(cpi, npulses, nrange)
        self.assertEqual(one.size, 2 * npulses * nrange)
        self.assertTrue(np.isfinite(one).all())
        np.testing.assert_array_equal(one, three)


if __name__ == "__main__":
    gr_unittest.run(qa_cpu_threads)
