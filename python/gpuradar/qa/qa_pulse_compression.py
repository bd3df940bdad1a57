#!/usr/bin/env python3
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""QA for gpuradar.pulse_compression (CPU backend) against an fp64 numpy reference."""

import os
import sys

import numpy as np
import pmt
from gnuradio import blocks, gr, gr_unittest
from gnuradio import gpuradar

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from window_reference import WINDOWS, window  # noqa: E402


def reference(x, s, w, normalize):
    """y[d] = g sum_k x[d+k] conj(w[k] s[k]), zeros past the gate, per row (fp64)."""
    r = (w * s).astype(np.complex128)
    g = 1.0 / np.sqrt(np.sum(np.abs(r) ** 2)) if normalize else 1.0
    nrange, L = x.shape[-1], len(s)
    xp = np.concatenate([x.astype(np.complex128), np.zeros(x.shape[:-1] + (L,))], axis=-1)
    win = np.lib.stride_tricks.sliding_window_view(xp, L, axis=-1)[..., :nrange, :]
    return g * win @ np.conj(r)


def rel_l2(a, b):
    return np.linalg.norm(a - b) / np.linalg.norm(b)


class qa_pulse_compression(gr_unittest.TestCase):
    def setUp(self):
        self.tb = gr.top_block()

    def run_block(self, x, channels, nrange, npulses, **kw):
        src = blocks.vector_source_c(x.ravel().tolist(), False, channels * nrange)
        pc = gpuradar.pulse_compression(nrange, npulses, channels, backend="cpu", **kw)
        snk = blocks.vector_sink_c(channels * nrange)
        self.tb.connect(src, pc, snk)
        self.tb.run()
        return pc, np.array(snk.data(), dtype=np.complex64).reshape(x.shape)

    def test_001_every_window_custom_waveform_two_channels(self):
        rng = np.random.default_rng(1)
        npulses, channels, nrange, L = 4, 2, 150, 37
        for name in WINDOWS:
            for method in ("fft", "fir"):
                self.tb = gr.top_block()
                x = (rng.standard_normal((2 * npulses, channels, nrange)) +
                     1j * rng.standard_normal((2 * npulses, channels, nrange)))
                s = rng.standard_normal(L) + 1j * rng.standard_normal(L)
                pc, y = self.run_block(x.astype(np.complex64), channels, nrange, npulses,
                                       waveform="custom", custom_waveform=s.tolist(),
                                       window=name, nbar=5, sll_db=40.0, beta=4.0,
                                       normalize=True, method=method)
                ref = reference(x.astype(np.complex64), s.astype(np.complex64),
                                window(name, L, 5, 40.0, 4.0), True)
                self.assertLess(rel_l2(y, ref), 1e-5, (name, method))
                self.assertEqual(pc.method(), method)

    def test_002_lfm_echo_peaks_at_its_delay(self):
        fs, bw, pw, nrange, delay = 20e6, 10e6, 5e-6, 400, 123
        t = np.arange(int(round(pw * fs))) / fs - pw / 2
        s = np.exp(1j * np.pi * (bw / pw) * t ** 2)  # the up-chirp of DESIGN.md
        x = np.zeros((1, 1, nrange), np.complex64)
        x[0, 0, delay:delay + len(s)] = s
        pc, y = self.run_block(x, 1, nrange, 1, waveform="lfm", bandwidth=bw,
                               pulse_width=pw, samp_rate=fs, window="hamming")
        self.assertEqual(int(np.argmax(np.abs(y[0, 0]))), delay)
        ref = reference(x, s, np.hamming(len(s)), False)
        self.assertLess(rel_l2(y, ref), 1e-5)
        self.assertEqual(len(pc.waveform()), len(s))

    def test_003_bad_parameters_raise_naming_them(self):
        cases = (
            (dict(nrange=64, npulses=1, waveform="custom", custom_waveform=[]), "waveform"),
            (dict(nrange=10, npulses=1, bandwidth=5e6, pulse_width=2e-6, samp_rate=10e6),
             "waveform"),
            (dict(nrange=64, npulses=1, bandwidth=-1.0), "bandwidth"),
            (dict(nrange=64, npulses=1, bandwidth=20e6, samp_rate=10e6), "bandwidth"),
            (dict(nrange=64, npulses=1, pulse_width=0.0), "pulse_width"),
            (dict(nrange=64, npulses=1, pulse_width=1e-6, window="welch"), "window"),
            (dict(nrange=64, npulses=1, pulse_width=1e-6, method="dft"), "method"),
            (dict(nrange=64, npulses=0, pulse_width=1e-6), "npulses"),
        )
        for kw, name in cases:
            with self.assertRaisesRegex(ValueError, name):
                gpuradar.pulse_compression(backend="cpu", **kw)

    def test_004_waveform_message_port_exists(self):
        pc = gpuradar.pulse_compression(64, 2, pulse_width=1e-6, backend="cpu")
        ports = [str(p) for p in pmt.to_python(pc.message_ports_in())]
        self.assertIn("waveform", ports)


if __name__ == "__main__":
    gr_unittest.run(qa_pulse_compression)
