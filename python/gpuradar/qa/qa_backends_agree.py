#!/usr/bin/env python3
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""Every block on the CUDA backend equals the same block on the CPU backend (itself
checked against fp64 references in its own QA), on fresh random data, through GNU
Radio's scheduler and the device buffers (host source -> GPU block -> host sink). Runs
where a CUDA device is present; skipped otherwise (unittest skip, reported as such).

Tolerance: 1e-4 of the output's largest magnitude (float32 FFTs and sums of a few hundred
terms in a different order differ by ~1e-6 of it); CFAR thresholds within 1e-4 of
themselves, masks exactly except cells within 1e-4 of their threshold."""

import unittest

import numpy as np
import pmt
from gnuradio import blocks, gr, gr_unittest
from gnuradio import gpuradar

import run_or_skip

TOL = 1e-4
HAVE_CUDA = gpuradar.cuda_available()


def random_complex(shape, seed):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(np.complex64)


def run(make_block, data, in_vlen, out_vlen, complex_in=True, out_kind="c"):
    tb = gr.top_block()
    src = (blocks.vector_source_c if complex_in else blocks.vector_source_f)(
        data.ravel().tolist(), False, in_vlen)
    snk = {"c": blocks.vector_sink_c, "f": blocks.vector_sink_f,
           "b": blocks.vector_sink_b}[out_kind](out_vlen)
    blk = make_block()
    tb.connect(src, blk, snk)
    tb.run()
    return np.array(snk.data()), blk


@unittest.skipUnless(HAVE_CUDA, "no CUDA device")
class qa_backends_agree(gr_unittest.TestCase):
    def assert_close(self, a, b):
        self.assertEqual(a.shape, b.shape)
        scale = max(np.max(np.abs(b)), 1e-30)
        err = np.max(np.abs(a - b)) / scale
        self.assertLess(err, TOL, f"max difference {err:.2e} of the largest output")

    def both(self, make, *args, **kwargs):
        cpu, _ = run(lambda: make("cpu"), *args, **kwargs)
        cuda, blk = run(lambda: make("cuda"), *args, **kwargs)
        self.assertEqual(blk.backend(), "cuda")
        return cuda, cpu

    def test_001_multiply_const_and_envelope(self):
        x = random_complex((64, 256), 1)
        self.assert_close(*self.both(lambda b: gpuradar.multiply_const(0.3 - 1.1j, 256, b),
                                     x, 256, 256))
        for mode in ("square_law", "linear"):
            for db in (False, True):
                cuda, cpu = self.both(lambda b: gpuradar.envelope(256, mode, db, b), x, 256,
                                      256, out_kind="f")
                self.assert_close(cuda, cpu)

    def test_002_corner_turn_doppler_filter(self):
        npulses, nrange, nfft = 24, 100, 32
        x = random_complex((3 * npulses, nrange), 2)
        self.assert_close(*self.both(lambda b: gpuradar.corner_turn(npulses, nrange, 1, b),
                                     x, nrange, npulses))
        y = random_complex((3 * nrange, npulses), 3)
        for mti, window, shift in (("none", "taylor", True), ("two_pulse", "hann", False),
                                   ("three_pulse", "chebyshev", True)):
            self.assert_close(*self.both(
                lambda b: gpuradar.doppler_filter(npulses, nrange, nfft, 1, mti, window, 4,
                                                  40.0, 6.0, shift, b),
                y, npulses, nfft))

    def test_003_pulse_compression_every_method(self):
        nrange, npulses = 300, 8
        x = random_complex((2 * npulses, nrange), 4)
        for method in ("fft", "overlap_save", "fir"):
            for up in (True, False):
                self.assert_close(*self.both(
                    lambda b: gpuradar.pulse_compression(
                        nrange, npulses, 1, "lfm", [], 2e6, 20e-6, 5e6, up, "kaiser", 4,
                        35.0, 7.0, True, method, b),
                    x, nrange, nrange))

    def test_004_pulse_doppler_processor(self):
        nrange, npulses, nfft = 200, 16, 32
        x = random_complex((2 * npulses, nrange), 5)
        for env, db in (("square_law", False), ("linear", True)):
            self.assert_close(*self.both(
                lambda b: gpuradar.pulse_doppler_processor(
                    nrange, npulses, nfft, 1, "lfm", [], 4e6, 3e-6, 10e6, False, "taylor",
                    5, 30.0, 6.0, False, "auto", "none", "chebyshev", 4, 50.0, 6.0, False,
                    env, db, b),
                x, nrange, nfft, out_kind="f"))

    def cfar(self, x, nrange, ndoppler, variant, backend):
        tb = gr.top_block()
        src = blocks.vector_source_f(x.ravel().tolist(), False, ndoppler)
        blk = gpuradar.cfar_2d(nrange, ndoppler, 1, 1, 5, 1, 2, 1e-3, variant, 0, "clip",
                               "wrap", False, 4096, backend)
        mask, thr = blocks.vector_sink_b(ndoppler), blocks.vector_sink_f(ndoppler)
        tb.connect(src, blk, mask)
        tb.connect((blk, 1), thr)
        tb.run()
        return np.array(mask.data()), np.array(thr.data())

    def test_005_cfar_masks_and_thresholds(self):
        nrange, ndoppler = 128, 64
        rng = np.random.default_rng(6)
        x = rng.exponential(1.0, (4 * nrange, ndoppler)).astype(np.float32)
        x[rng.integers(0, x.shape[0], 40), rng.integers(0, ndoppler, 40)] *= 400
        for variant in ("ca", "go", "so", "os"):
            with self.subTest(variant=variant):
                m_cpu, t_cpu = self.cfar(x, nrange, ndoppler, variant, "cpu")
                m_gpu, t_gpu = self.cfar(x, nrange, ndoppler, variant, "cuda")
                self.assertGreater(m_cpu.sum(), 0)
                np.testing.assert_allclose(t_gpu, t_cpu, rtol=TOL)
                # A mask may differ only where the cell sits on the threshold.
                differ = m_gpu != m_cpu
                self.assertTrue(np.all(np.abs(x.ravel()[differ] - t_cpu[differ]) <=
                                       TOL * t_cpu[differ]))

if __name__ == "__main__":
    run_or_skip.run(qa_backends_agree)
