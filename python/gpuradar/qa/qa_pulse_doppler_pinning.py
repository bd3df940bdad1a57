#!/usr/bin/env python3
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""pulse_doppler_processor against an fp64 numpy reference written from the blocks'
documented definitions (matched filter, slow-time window, zero-padded FFT, envelope), one
parameter changed at a time, each on fresh random data. Every case also checks that the
reference with the parameter ignored or swapped (range and Doppler windows exchanged, the
other chirp direction, no fftshift, the other envelope) is far outside the tolerance, so
a block that ignored or swapped the parameter would fail. Runs on the CPU backend and, where
a GPU is present, on the CUDA backend (skipped otherwise).

Tolerance: 1e-4 of the map's peak amplitude (square root of power). float32 rounding in
a 30-tap correlation and a 16-point FFT is below 1e-6 of the peak; every ignored or
swapped parameter below moves the map by more than 1e-2 of the peak."""

import unittest

import numpy as np
import pmt
from gnuradio import blocks, gr, gr_unittest
from gnuradio import gpuradar
from numpy.lib.stride_tricks import sliding_window_view

import window_reference

C = 299792458.0
FS, BW, PW, FC, PRF = 10e6, 4e6, 3e-6, 3e9, 2000.0
NRANGE, NPULSES, NFFT = 96, 12, 16
TOL = 1e-4           # of the peak amplitude
DISTINCT = 1e-2      # an ignored or swapped parameter moves the map at least this much

BASE = dict(waveform="lfm", bandwidth=BW, pulse_width=PW, samp_rate=FS, up_chirp=True,
            range_window="taylor", range_nbar=5, range_sll_db=30.0, range_beta=6.0,
            normalize=False, mti="none", doppler_window="chebyshev", doppler_nbar=4,
            doppler_sll_db=50.0, doppler_beta=6.0, fftshift=True,
            envelope_mode="square_law", db=False)


def lfm(bw, pw, fs, up):
    """exp(i pi k t^2), t = n/fs - pw/2, k = +-bw/pw, round(pw fs) samples."""
    t = np.arange(int(round(pw * fs))) / fs - pw / 2
    return np.exp(1j * np.pi * (bw / pw if up else -bw / pw) * t ** 2)


def window(p, which, n):
    return window_reference.window(p[which + "_window"], n, p[which + "_nbar"],
                                   p[which + "_sll_db"], p[which + "_beta"])


def reference(x, p):
    """fp64 map (NRANGE, NFFT) of CPI x (NPULSES, NRANGE) for parameters p."""
    s = lfm(p["bandwidth"], p["pulse_width"], p["samp_rate"], p["up_chirp"])
    ws = window(p, "range", len(s)) * s
    g = 1 / np.sqrt(np.sum(np.abs(ws) ** 2)) if p["normalize"] else 1.0
    xp = np.concatenate([x.astype(np.complex128),
                         np.zeros((NPULSES, len(s) - 1))], axis=1)
    y = g * (sliding_window_view(xp, len(s), axis=1)[:, :NRANGE] @ np.conj(ws))
    if p["mti"] == "two_pulse":
        y = y[1:] - y[:-1]
    z = y * window(p, "doppler", y.shape[0])[:, None]
    Z = np.fft.fft(z, n=NFFT, axis=0)
    if p["fftshift"]:
        Z = np.fft.fftshift(Z, axes=0)
    power = np.abs(Z.T) ** 2
    if p["envelope_mode"] == "linear":
        out = np.sqrt(power)
        return 20 * np.log10(out) if p["db"] else out
    return 10 * np.log10(power) if p["db"] else power


def amplitude(m, p):
    """The map as amplitude (|Z|), whatever envelope and dB setting made it."""
    lin = 10 ** (m / (20 if p["envelope_mode"] == "linear" else 10)) if p["db"] else m
    return lin if p["envelope_mode"] == "linear" else np.sqrt(np.maximum(lin, 0))


def scene(seed):
    """Fresh complex Gaussian noise plus two echoes at different ranges and Dopplers."""
    rng = np.random.default_rng(seed)
    x = 0.3 * (rng.standard_normal((NPULSES, NRANGE)) +
               1j * rng.standard_normal((NPULSES, NRANGE)))
    s = lfm(BW, PW, FS, True)
    for delay, fd, a in [(17, 310.0, 1.0), (55, -520.0, 0.6)]:
        for k in range(NPULSES):
            x[k, delay:delay + len(s)] += a * s * np.exp(2j * np.pi * fd * k / PRF)
    return x.astype(np.complex64)


def cpi_tag():
    d = pmt.make_dict()
    for k, v in (("index", 0), ("npulses", NPULSES), ("nrange", NRANGE)):
        d = pmt.dict_add(d, pmt.intern(k), pmt.from_uint64(v))
    for k, v in (("fs", FS), ("prf", PRF), ("fc", FC)):
        d = pmt.dict_add(d, pmt.intern(k), pmt.from_double(v))
    return gr.tag_utils.python_to_tag((0, pmt.intern("cpi"), d))


def run_processor(x, p, backend):
    tb = gr.top_block()
    src = blocks.vector_source_c(x.ravel().tolist(), False, NRANGE, [cpi_tag()])
    pd = gpuradar.pulse_doppler_processor(NRANGE, NPULSES, NFFT, 1, backend=backend, **p)
    snk = blocks.vector_sink_f(NFFT)
    tb.connect(src, pd, snk)
    tb.run()
    return np.array(snk.data(), np.float64).reshape(NRANGE, NFFT)


def params(**changes):
    p = dict(BASE)
    p.update(changes)
    return p


# (name, parameters, the same with the parameter ignored or swapped)
CASES = [
    ("windows_not_swapped", params(),
     params(range_window="chebyshev", range_sll_db=50.0, range_nbar=4,
            doppler_window="taylor", doppler_sll_db=30.0, doppler_nbar=5)),
    ("range_window_kaiser_doppler_hann",
     params(range_window="kaiser", range_beta=8.0, doppler_window="hann"),
     params(range_window="hann", doppler_window="kaiser", doppler_beta=8.0)),
    ("down_chirp", params(up_chirp=False), params(up_chirp=True)),
    ("no_fftshift", params(fftshift=False), params(fftshift=True)),
    ("linear_envelope", params(envelope_mode="linear"), params(envelope_mode="square_law")),
    ("square_law_db", params(db=True), params(db=False)),
    # 20 log10 |x| = 10 log10 |x|^2: in dB the two modes agree, so what db=True must
    # change here is the linear output.
    ("linear_db", params(envelope_mode="linear", db=True),
     params(envelope_mode="linear", db=False)),
    ("normalize", params(normalize=True), params(normalize=False)),
    ("two_pulse_mti", params(mti="two_pulse"), params(mti="none")),
]


class qa_pulse_doppler_pinning(gr_unittest.TestCase):
    def check_cases(self, backend):
        for i, (name, p, other) in enumerate(CASES):
            with self.subTest(case=name, backend=backend):
                x = scene(100 + i)
                got = run_processor(x, p, backend)
                want = reference(x, p)
                peak = np.max(amplitude(want, p))
                err = np.max(np.abs(amplitude(got, p) - amplitude(want, p))) / peak
                self.assertLess(err, TOL, f"{name}: max error {err:.2e} of the peak")
                # Had the parameter been ignored or swapped, the block's output would be
                # the reference for `other`: far from this one, in the output's units.
                alt = reference(x, other)
                moved = np.max(np.abs(alt - want)) / max(np.max(np.abs(want)), 1.0)
                self.assertGreater(moved, DISTINCT, f"{name}: the case does not pin it")

    def test_001_cpu_backend_matches_fp64_reference(self):
        self.check_cases("cpu")

    @unittest.skipUnless(gpuradar.cuda_available(), "no CUDA device")
    def test_002_cuda_backend_matches_fp64_reference(self):
        self.check_cases("cuda")


if __name__ == "__main__":
    gr_unittest.run(qa_pulse_doppler_pinning)
