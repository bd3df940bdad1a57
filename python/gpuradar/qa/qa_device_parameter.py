#!/usr/bin/env python3
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""QA for the `device` parameter of every GPU block from Python: the keyword reaches the
block (device() reports it), a negative index is a ValueError naming `device`, the CPU
backend keeps any other index without using it (same output as device 0), and with a
GPU an index past the last device is a ValueError naming the range."""

import numpy as np
from gnuradio import blocks, gr, gr_unittest
from gnuradio import gpuradar

# Each GPU block with small valid sizes; backend and device are given as keywords.
BLOCKS = {
    "multiply_const": lambda **kw: gpuradar.multiply_const(2 + 0j, 4, **kw),
    "envelope": lambda **kw: gpuradar.envelope(4, "square_law", False, **kw),
    "corner_turn": lambda **kw: gpuradar.corner_turn(4, 16, 1, **kw),
    "doppler_filter": lambda **kw: gpuradar.doppler_filter(4, 16, 8, **kw),
    "pulse_compression": lambda **kw: gpuradar.pulse_compression(
        64, 4, 1, "lfm", [], 1e6, 4e-6, 4e6, **kw),
    "pulse_doppler_processor": lambda **kw: gpuradar.pulse_doppler_processor(
        64, 4, 8, 1, "lfm", [], 1e6, 4e-6, 4e6, **kw),
    "pulse_framer": lambda **kw: gpuradar.pulse_framer(
        100, 0, 64, 4, 1e6, 1e9, "free", **kw),
    "cfar_1d": lambda **kw: gpuradar.cfar_1d(64, **kw),
    "cfar_2d": lambda **kw: gpuradar.cfar_2d(64, 16, **kw),
    "beamformer": lambda **kw: gpuradar.beamformer(4, 64, [0.0], **kw),
    "backprojection": lambda **kw: gpuradar.backprojection(
        8, 4, 4, 0, 0, 1, 1, 0, 1, **kw),
    "sar_focus": lambda **kw: gpuradar.sar_focus(
        fc=9.6e9, bandwidth=50e6, pulse_width=1e-6, up_chirp=True, fs=60e6, prf=200.0,
        velocity=150.0, altitude=1000.0, near_range=2000.0, nrange=256, squint=0.0,
        antenna_length=2.0, **kw),
}


class qa_device_parameter(gr_unittest.TestCase):
    def test_001_keyword_reaches_the_block(self):
        for name, make in BLOCKS.items():
            with self.subTest(block=name):
                self.assertEqual(make(backend="cpu").device(), 0)
                self.assertEqual(make(backend="cpu", device=3).device(), 3)

    def test_002_negative_index_is_a_value_error_naming_device(self):
        for name, make in BLOCKS.items():
            with self.subTest(block=name):
                with self.assertRaisesRegex(
                        ValueError, "gpuradar::%s: device must be >= 0 \\(got -1\\)" % name):
                    make(backend="cpu", device=-1)

    def test_003_cpu_output_does_not_depend_on_the_index(self):
        vlen = 16
        rng = np.random.default_rng(5)
        x = (rng.standard_normal(vlen * 50) + 1j * rng.standard_normal(vlen * 50)).astype(
            np.complex64)
        outputs = []
        for device in (0, 2):
            tb = gr.top_block()
            src = blocks.vector_source_c(x.tolist(), False, vlen)
            env = gpuradar.envelope(vlen, "square_law", False, backend="cpu", device=device)
            snk = blocks.vector_sink_f(vlen)
            tb.connect(src, env, snk)
            tb.run()
            outputs.append(np.array(snk.data()))
        ref = np.abs(x.astype(np.complex128)) ** 2
        np.testing.assert_allclose(outputs[0], ref, rtol=1e-6)
        np.testing.assert_array_equal(outputs[0], outputs[1])

    def test_004_cuda_index_past_the_last_device(self):
        if not gpuradar.cuda_available():
            self.skipTest("no CUDA device: " + gpuradar.cuda_unavailable_reason())
        for name, make in BLOCKS.items():
            with self.subTest(block=name):
                with self.assertRaisesRegex(ValueError, "device must be 0 to \\d+ \\(got 999\\)"):
                    make(backend="cuda", device=999)


if __name__ == "__main__":
    gr_unittest.run(qa_device_parameter)
