#!/usr/bin/env python3
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""QA: every block with a size parameter refuses zero and huge sizes with our
ValueError (the parameter named, the memory in GiB), before GNU Radio's io_signature and
before anything is allocated; multiply_const refuses a non-finite gain;
pulse_doppler_processor says which of its two windows is wrong."""

import math
import resource
import time

from gnuradio import gr_unittest
from gnuradio import gpuradar

M = 1 << 20


def pdp(**kw):
    args = dict(nrange=256, npulses=8, nfft=8, channels=1, backend="cpu")
    args.update(kw)
    return gpuradar.pulse_doppler_processor(**args)


# (block, text the message must hold, maker) with one zero size each.
ZERO = [
    ("corner_turn", "npulses must be >= 1", lambda: gpuradar.corner_turn(0, 8, 1, "cpu")),
    ("corner_turn", "nrange must be >= 1", lambda: gpuradar.corner_turn(8, 0, 1, "cpu")),
    ("corner_turn", "channels must be >= 1", lambda: gpuradar.corner_turn(8, 8, 0, "cpu")),
    ("doppler_filter", "npulses must be >= 2",
     lambda: gpuradar.doppler_filter(npulses=0, nrange=8, nfft=8, backend="cpu")),
    ("doppler_filter", "nrange must be >= 1",
     lambda: gpuradar.doppler_filter(npulses=8, nrange=0, nfft=8, backend="cpu")),
    ("doppler_filter", "nfft must be >= npulses",
     lambda: gpuradar.doppler_filter(npulses=8, nrange=8, nfft=0, backend="cpu")),
    ("doppler_filter", "channels must be >= 1",
     lambda: gpuradar.doppler_filter(npulses=8, nrange=8, nfft=8, channels=0, backend="cpu")),
    ("pulse_compression", "nrange must be >= 1",
     lambda: gpuradar.pulse_compression(nrange=0, npulses=8, backend="cpu")),
    ("pulse_compression", "npulses must be >= 1",
     lambda: gpuradar.pulse_compression(nrange=256, npulses=0, backend="cpu")),
    ("pulse_compression", "channels must be >= 1",
     lambda: gpuradar.pulse_compression(nrange=256, npulses=8, channels=0, backend="cpu")),
    ("pulse_doppler_processor", "nrange must be >= 1", lambda: pdp(nrange=0)),
    ("pulse_doppler_processor", "npulses must be >= 1", lambda: pdp(npulses=0)),
    ("pulse_doppler_processor", "nfft must be >= 1", lambda: pdp(nfft=0)),
    ("pulse_doppler_processor", "channels must be >= 1", lambda: pdp(channels=0)),
    ("cfar_1d", "nrange must be >= 1", lambda: gpuradar.cfar_1d(nrange=0, backend="cpu")),
    ("cfar_1d", "channels must be >= 1",
     lambda: gpuradar.cfar_1d(nrange=64, channels=0, backend="cpu")),
    ("cfar_1d", "items_per_cpi must be >= 1",
     lambda: gpuradar.cfar_1d(nrange=64, items_per_cpi=0, backend="cpu")),
    ("cfar_1d", "max_detections must be >= 1",
     lambda: gpuradar.cfar_1d(nrange=64, max_detections=0, backend="cpu")),
    ("cfar_2d", "nrange must be >= 1",
     lambda: gpuradar.cfar_2d(nrange=0, ndoppler=16, backend="cpu")),
    ("cfar_2d", "ndoppler must be >= 1",
     lambda: gpuradar.cfar_2d(nrange=64, ndoppler=0, backend="cpu")),
    ("cfar_2d", "channels must be >= 1",
     lambda: gpuradar.cfar_2d(nrange=64, ndoppler=16, channels=0, backend="cpu")),
    ("cfar_2d", "max_detections must be >= 1",
     lambda: gpuradar.cfar_2d(nrange=64, ndoppler=16, max_detections=0, backend="cpu")),
    ("pulse_framer", "nrange must be >= 1",
     lambda: gpuradar.pulse_framer(100, 0, 0, 8, 1e6, 1e9, "free", "", 0, "cpu")),
    ("pulse_framer", "npulses must be >= 1",
     lambda: gpuradar.pulse_framer(100, 0, 50, 0, 1e6, 1e9, "free", "", 0, "cpu")),
    ("beamformer", "nchannels must be >= 1",
     lambda: gpuradar.beamformer(nchannels=0, nsamples=64, beam_angles_deg=[0.0],
                                 backend="cpu")),
    ("beamformer", "nsamples must be >= 1",
     lambda: gpuradar.beamformer(nchannels=4, nsamples=0, beam_angles_deg=[0.0],
                                 backend="cpu")),
    ("envelope", "vlen must be >= 1", lambda: gpuradar.envelope(0, backend="cpu")),
    ("multiply_const", "vlen must be >= 1",
     lambda: gpuradar.multiply_const(1.0, 0, "cpu")),
]

# (block, texts the message must hold, maker) with sizes far beyond memory.
HUGE = [
    ("corner_turn", ["npulses * nrange * channels", "8192 GiB"],
     lambda: gpuradar.corner_turn(M, M, 1, "cpu")),
    ("corner_turn", ["channels * nrange", "one stream item"],
     lambda: gpuradar.corner_turn(1, 1 << 29, 1, "cpu")),
    ("doppler_filter", ["nfft * nrange * channels"],
     lambda: gpuradar.doppler_filter(npulses=64, nrange=M, nfft=M, backend="cpu")),
    ("pulse_compression", ["npulses * nrange * channels"],
     lambda: gpuradar.pulse_compression(nrange=M, npulses=M, backend="cpu")),
    ("pulse_doppler_processor", ["nfft * nrange * channels"],
     lambda: pdp(nrange=M, npulses=1024, nfft=1024, channels=16)),
    ("cfar_1d", ["items_per_cpi * channels * nrange"],
     lambda: gpuradar.cfar_1d(nrange=1 << 16, items_per_cpi=1 << 16, backend="cpu")),
    ("cfar_2d", ["nrange * ndoppler * channels"],
     lambda: gpuradar.cfar_2d(nrange=M, ndoppler=M, backend="cpu")),
    ("pulse_framer", ["npulses * nrange"],
     lambda: gpuradar.pulse_framer(M, 0, M, M, 1e6, 1e9, "free", "", 0, "cpu")),
    ("pulse_framer", ["npulses * ceil(pri)"],
     lambda: gpuradar.pulse_framer(1e9, 0, 16, 1024, 1e6, 1e9, "free", "", 0, "cpu")),
    ("beamformer", ["nchannels * nsamples", "one stream item"],
     lambda: gpuradar.beamformer(nchannels=1 << 16, nsamples=1 << 16,
                                 beam_angles_deg=[0.0], backend="cpu")),
    ("beamformer", ["nbeams * nchannels", "the beam weights"],
     lambda: gpuradar.beamformer(nchannels=1 << 16, nsamples=1, nbeams=1 << 16,
                                 fan_first_deg=-60.0, fan_last_deg=60.0, backend="cpu")),
    ("envelope", ["vlen", "one stream item"],
     lambda: gpuradar.envelope(1 << 31, backend="cpu")),
    ("multiply_const", ["vlen", "one stream item"],
     lambda: gpuradar.multiply_const(1.0, 1 << 31, "cpu")),
]


def peak_rss_kib():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


class qa_block_sizes(gr_unittest.TestCase):
    def assert_ours(self, block, texts, make):
        with self.assertRaises(ValueError) as cm:
            make()
        m = str(cm.exception)
        self.assertTrue(m.startswith("gpuradar::%s: " % block), m)
        self.assertNotIn("io_signature", m)
        for t in texts:
            self.assertIn(t, m)

    def test_001_zero_sizes_get_our_message_not_io_signature(self):
        for block, text, make in ZERO:
            with self.subTest(block=block, text=text):
                self.assert_ours(block, [text], make)

    def test_002_huge_sizes_refused_quickly_without_allocating(self):
        for block, texts, make in HUGE:
            with self.subTest(block=block, text=texts[0]):
                rss = peak_rss_kib()
                t0 = time.monotonic()
                self.assert_ours(block, texts + [" GiB"], make)
                self.assertLess(time.monotonic() - t0, 0.25)
                self.assertLess(peak_rss_kib() - rss, 64 * 1024)

    def test_003_multiply_const_refuses_a_non_finite_gain(self):
        for k in (complex(math.nan, 0), complex(0, math.nan), complex(math.inf, 0),
                  complex(0, -math.inf)):
            with self.subTest(k=k):
                self.assert_ours("multiply_const", ["k must be finite"],
                                 lambda: gpuradar.multiply_const(k, 4, "cpu"))
        b = gpuradar.multiply_const(2 - 1j, 4, "cpu")
        self.assert_ours("multiply_const", ["k must be finite"],
                         lambda: b.set_k(complex(math.nan, 1)))
        self.assert_ours("multiply_const", ["k must be finite"],
                         lambda: b.set_k(complex(1, math.inf)))
        self.assertEqual(b.k(), 2 - 1j)  # the old gain stays
        b.set_k(0.5 + 0.25j)
        self.assertEqual(b.k(), 0.5 + 0.25j)

    def test_004_pulse_doppler_processor_names_the_bad_window(self):
        for side in ("range", "doppler"):
            other = "doppler" if side == "range" else "range"
            for kw, name in (({"window": "gauss"}, "window"),
                             ({"window": "taylor", "nbar": 0}, "nbar"),
                             ({"window": "chebyshev", "sll_db": -1.0}, "sll_db"),
                             ({"window": "kaiser", "beta": -1.0}, "beta")):
                args = {side + "_" + k: v for k, v in kw.items()}
                with self.subTest(side=side, name=name):
                    with self.assertRaises(ValueError) as cm:
                        pdp(**args)
                    m = str(cm.exception)
                    self.assertIn("pulse_doppler_processor: %s_%s" % (side, name), m)
                    self.assertNotIn("%s_%s" % (other, name), m)
        b = pdp()
        self.assert_ours("pulse_doppler_processor", ["range_nbar"],
                         lambda: b.set_range_window("taylor", 0, 35.0, 6.0))
        self.assert_ours("pulse_doppler_processor", ["doppler_beta"],
                         lambda: b.set_doppler_window("kaiser", 4, 35.0, -2.0))


if __name__ == "__main__":
    gr_unittest.run(qa_block_sizes)
