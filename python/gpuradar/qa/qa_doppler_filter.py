#!/usr/bin/env python3
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""QA for gpuradar.doppler_filter (CPU backend) against an fp64 numpy reference."""

import os
import sys

import numpy as np
from gnuradio import blocks, gr, gr_unittest
from gnuradio import gpuradar

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from window_reference import WINDOWS, window  # noqa: E402

MTI = {"none": [1.0], "two_pulse": [1.0, -1.0], "three_pulse": [1.0, -2.0, 1.0]}


def reference(x, nfft, mti, w, fftshift):
    """x[..., npulses] -> MTI (newest pulse first), window, zero-padded FFT (fp64)."""
    h = np.array(MTI[mti])
    m = x.shape[-1] - (len(h) - 1)
    v = sum(h[j] * x[..., len(h) - 1 - j:len(h) - 1 - j + m] for j in range(len(h)))
    y = np.fft.fft(v.astype(np.complex128) * w, nfft, axis=-1)
    return np.fft.fftshift(y, axes=-1) if fftshift else y


class qa_doppler_filter(gr_unittest.TestCase):
    def run_block(self, x, nfft, **kw):
        tb = gr.top_block()
        nrange, channels, npulses = x.shape[1:]
        src = blocks.vector_source_c(x.ravel().tolist(), False, channels * npulses)
        df = gpuradar.doppler_filter(npulses, nrange, nfft, channels, backend="cpu", **kw)
        snk = blocks.vector_sink_c(channels * nfft)
        tb.connect(src, df, snk)
        tb.run()
        return np.array(snk.data()).reshape(x.shape[:-1] + (nfft,)), snk.tags()

    def test_001_every_window_and_mti_mode_nfft_above_npulses(self):
        rng = np.random.default_rng(7)
        ncpi, nrange, channels, npulses, nfft = 2, 9, 2, 13, 20
        for mti in MTI:
            m = npulses - (len(MTI[mti]) - 1)
            for name in WINDOWS:
                for shift in (True, False):
                    x = (rng.standard_normal((1, ncpi * nrange, channels, npulses)) + 1j *
                         rng.standard_normal((1, ncpi * nrange, channels, npulses)))
                    x = x.astype(np.complex64)
                    y, _ = self.run_block(x, nfft, mti=mti, window=name, nbar=3,
                                          sll_db=30.0, beta=2.0, fftshift=shift)
                    ref = reference(x, nfft, mti, window(name, m, 3, 30.0, 2.0), shift)
                    err = np.linalg.norm(y - ref) / np.linalg.norm(ref)
                    self.assertLess(err, 1e-5, (mti, name, shift))

    def test_002_doppler_bin_and_velocity_of_a_closing_target(self):
        # f_d = 2 v fc / c lands at bin nfft/2 + f_d nfft / prf (fftshift).
        c, fc, prf, npulses, nfft = 299792458.0, 10e9, 4000.0, 32, 64
        v = 12 * prf / nfft * c / (2 * fc)  # exactly 12 bins above zero Doppler
        fd = 2 * v * fc / c
        p = np.arange(npulses)
        x = np.exp(2j * np.pi * fd * p / prf).astype(np.complex64)[None, None, None, :]
        y, tags = self.run_block(x, nfft, window="hann")
        self.assertEqual(int(np.argmax(np.abs(y[0, 0, 0]))), nfft // 2 + 12)
        t = gr.tag_to_python(tags[0])
        self.assertEqual(t.value["ndoppler"], nfft)
        self.assertTrue(t.value["fftshift"])

    def test_003_bad_parameters_raise_naming_them(self):
        cases = (((1, 4, 8), {}, "npulses"), ((2, 4, 8), {"mti": "three_pulse"}, "npulses"),
                 ((8, 4, 7), {}, "nfft"), ((8, 4, 8), {"mti": "x"}, "mti"),
                 ((8, 4, 8), {"window": "welch"}, "window"),
                 ((8, 4, 8), {"window": "taylor", "nbar": 0}, "nbar"),
                 ((8, 4, 8), {"window": "chebyshev", "sll_db": -3.0}, "sll_db"),
                 ((8, 0, 8), {}, "nrange"))
        for args, kw, name in cases:
            with self.assertRaisesRegex(ValueError, name):
                gpuradar.doppler_filter(*args, backend="cpu", **kw)


if __name__ == "__main__":
    gr_unittest.run(qa_doppler_filter)
