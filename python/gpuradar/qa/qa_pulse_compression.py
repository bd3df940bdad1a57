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
        s = np.exp(1j * np.pi * (bw / pw) * t ** 2)  # the up-chirp of CONVENTIONS.md
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
            (dict(nrange=64, npulses=1, pulse_width=1e-6, input_type="s16"), "input_type"),
        )
        for kw, name in cases:
            with self.assertRaisesRegex(ValueError, name):
                gpuradar.pulse_compression(backend="cpu", **kw)

    def test_006_sc16_input_equals_its_float_values(self):
        # An SDR's int16 I, Q (a short vector of 2 per sample) gives bit for bit what the
        # codes' exact values x / 32768 give as complex float.
        rng = np.random.default_rng(6)
        npulses, channels, nrange = 3, 2, 100
        codes = rng.integers(-32768, 32768, size=(npulses, channels, nrange, 2),
                             dtype=np.int16)
        exact = (codes[..., 0] / 32768.0 + 1j * (codes[..., 1] / 32768.0)).astype(
            np.complex64)
        kw = dict(waveform="lfm", bandwidth=5e6, pulse_width=3e-6, samp_rate=10e6,
                  window="hann")
        _, want = self.run_block(exact, channels, nrange, npulses, **kw)
        self.tb = gr.top_block()
        src = blocks.vector_source_s(codes.ravel().tolist(), False, 2 * channels * nrange)
        pc = gpuradar.pulse_compression(nrange, npulses, channels, backend="cpu",
                                        input_type="sc16", **kw)
        snk = blocks.vector_sink_c(channels * nrange)
        self.tb.connect(src, pc, snk)
        self.tb.run()
        got = np.array(snk.data(), dtype=np.complex64).reshape(exact.shape)
        np.testing.assert_array_equal(got, want)

    def test_004_waveform_message_port_exists(self):
        pc = gpuradar.pulse_compression(64, 2, pulse_width=1e-6, backend="cpu")
        ports = [str(p) for p in pmt.to_python(pc.message_ports_in())]
        self.assertIn("waveform", ports)


    def test_005_waveform_message_up_field(self):
        # pmt::is_true took the symbol "false" and the integer 0 for an up-chirp.
        fs = 1e6

        def lfm(up=None):
            d = pmt.make_dict()
            for k, v in (("bandwidth", pmt.from_double(2e5)),
                         ("pulse_width", pmt.from_double(2e-5)), ("up", up)):
                if v is not None:
                    d = pmt.dict_add(d, pmt.intern(k), v)
            return d
        up = np.array(gpuradar.waveform_from_message(lfm(pmt.PMT_T), fs))
        down = np.array(gpuradar.waveform_from_message(lfm(pmt.PMT_F), fs))
        self.assertGreater(np.abs(up - down).max(), 0.5)  # the two chirps differ
        np.testing.assert_array_equal(np.array(gpuradar.waveform_from_message(lfm(), fs)),
                                      up)
        for value, expected in ((pmt.intern("false"), down), (pmt.from_long(0), down),
                                (pmt.from_uint64(0), down), (pmt.intern("true"), up),
                                (pmt.from_long(1), up), (pmt.from_uint64(1), up)):
            with self.subTest(up=pmt.write_string(value)):
                np.testing.assert_array_equal(
                    np.array(gpuradar.waveform_from_message(lfm(value), fs)), expected)
        for value in (pmt.intern("no"), pmt.intern("False"), pmt.from_long(2),
                      pmt.from_long(-1), pmt.from_uint64(7), pmt.from_double(0.0),
                      pmt.PMT_NIL, pmt.init_f32vector(1, [0.0])):
            with self.subTest(up=pmt.write_string(value)):
                with self.assertRaisesRegex(ValueError, "'up' must be true or false"):
                    gpuradar.waveform_from_message(lfm(value), fs)

        # Into a running block: the symbol "false" gives the down-chirp; a bad up keeps
        # the waveform (and the block runs on).
        def after(msg):
            tb = gr.top_block()
            pc = gpuradar.pulse_compression(64, 4, 1, "lfm", [], 2e5, 1e-5, fs,
                                            backend="cpu")
            x = np.ones(64 * 4 * 2, np.complex64)
            snk = blocks.vector_sink_c(64)
            tb.connect(blocks.vector_source_c(x.tolist(), False, 64), pc, snk)
            pc.to_basic_block()._post(pmt.intern("waveform"), msg)
            tb.run()
            self.assertEqual(len(snk.data()), x.size)
            return np.array(pc.waveform())
        np.testing.assert_array_equal(after(lfm(pmt.intern("false"))), down)
        kept = after(lfm(pmt.intern("maybe")))
        self.assertEqual(len(kept), 10)  # the constructor's 10 us chirp, not the message's


if __name__ == "__main__":
    gr_unittest.run(qa_pulse_compression)
