#!/usr/bin/env python3
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""QA for gpuradar.pulse_tx_source: samples, UHD burst tags (tx_sob, tx_eob, tx_time:
offsets, lengths and times checked exactly) in both burst modes with a fractional PRI,
the phase-coded waveforms shared with pulse_compression, and bad input named."""

import time

import numpy as np
import pmt
from gnuradio import blocks, gr, gr_unittest
from gnuradio import gpuradar


def pulse_start(k, pri):
    """Pulse k of the drift-free schedule: floor(k pri + 1/2) (exact for pri = n + 1/2)."""
    return int(np.floor(k * pri + 0.5))


def run_source(src, max_items=None):
    tb = gr.top_block()
    snk = blocks.vector_sink_c()
    if max_items:
        src.set_max_noutput_items(max_items)  # tags must survive any work() cut
    tb.connect(src, snk)
    tb.run()
    tags = {}
    for t in snk.tags():
        tags.setdefault(pmt.symbol_to_string(t.key), []).append(t)
    return np.array(snk.data()), tags


def uhd_time(t):
    return pmt.to_uint64(pmt.tuple_ref(t.value, 0)), pmt.to_double(pmt.tuple_ref(t.value, 1))


class qa_pulse_tx_source(gr_unittest.TestCase):
    def test_001_cpi_bursts_fractional_pri(self):
        fs, pri, npulses, nbursts, t0 = 1e6, 1000.5, 4, 3, 10.25
        src = gpuradar.pulse_tx_source("barker:13", [], 0.0, 13e-6, fs, True, fs / pri,
                                       0.5, "cpi", npulses, nbursts, t0, "device")
        x, tags = run_source(src, max_items=777)
        starts = [pulse_start(b * npulses, pri) for b in range(nbursts + 1)]
        self.assertEqual(len(x), starts[-1])  # the timeline of 12 PRIs, then the end
        self.assertEqual([t.offset for t in tags["tx_sob"]], starts[:-1])
        self.assertEqual([t.offset for t in tags["tx_eob"]], [s - 1 for s in starts[1:]])
        for t in tags["tx_sob"] + tags["tx_eob"]:
            self.assertTrue(pmt.is_true(t.value))
        self.assertEqual([t.offset for t in tags["tx_time"]], starts[:-1])
        for t, s in zip(tags["tx_time"], starts):
            secs, frac = uhd_time(t)
            self.assertEqual(secs, 10)
            self.assertAlmostEqual(frac, 0.25 + s / fs, places=12)
        # Samples: 0.5 x Barker 13 at each pulse start, zeros in between.
        code = np.array([1, 1, 1, 1, 1, -1, -1, 1, 1, -1, 1, -1, 1], dtype=complex)
        want = np.zeros(len(x), complex)
        for k in range(npulses * nbursts):
            want[pulse_start(k, pri):pulse_start(k, pri) + 13] = 0.5 * code
        np.testing.assert_array_equal(x, want)
        self.assertEqual(src.bursts_sent(), nbursts)

    def test_002_pulse_bursts(self):
        fs, pri, nbursts, t0 = 2e6, 999.5, 5, 3.5
        src = gpuradar.pulse_tx_source("p4:16", [], 0.0, 8e-6, fs, True, fs / pri, 1.0,
                                       "pulse", 1, nbursts, t0, "device")
        x, tags = run_source(src, max_items=5)
        L = 16  # 16 chips, 1 sample per chip
        self.assertEqual(len(x), L * nbursts)
        self.assertEqual([t.offset for t in tags["tx_sob"]], [b * L for b in range(nbursts)])
        self.assertEqual([t.offset for t in tags["tx_eob"]],
                         [b * L + L - 1 for b in range(nbursts)])
        for b, t in enumerate(tags["tx_time"]):
            self.assertEqual(t.offset, b * L)
            secs, frac = uhd_time(t)
            want = t0 + pulse_start(b, pri) / fs
            self.assertEqual(secs, int(want))
            self.assertAlmostEqual(frac, want - int(want), places=12)
        np.testing.assert_allclose(x[:L], gpuradar.make_waveform("p4:16", 0, 8e-6, fs),
                                   atol=1e-7)
        np.testing.assert_array_equal(x[L:2 * L], x[:L])

    def test_003_untimed_and_lfm(self):
        fs = 1e6
        src = gpuradar.pulse_tx_source("lfm", [], 2e5, 50e-6, fs, False, 1e3, 0.25, "cpi",
                                       2, 2, 0.0, "device")
        x, tags = run_source(src)
        self.assertNotIn("tx_time", tags)  # start_time 0: untimed bursts
        self.assertEqual([t.offset for t in tags["tx_sob"]], [0, 2000])
        self.assertEqual([t.offset for t in tags["tx_eob"]], [1999, 3999])
        np.testing.assert_allclose(x[:50], 0.25 * np.array(
            gpuradar.make_waveform("lfm", 2e5, 50e-6, fs, False)), atol=1e-7)
        np.testing.assert_allclose(src.pulse(), x[:50], atol=0)

    def test_004_host_time_in_the_future(self):
        future = time.time() + 3600.0
        src = gpuradar.pulse_tx_source("barker:7", [], 0, 7e-6, 1e6, True, 1e3, 0.5, "pulse",
                                       1, 2, future, "host")
        _, tags = run_source(src)
        secs, frac = uhd_time(tags["tx_time"][1])
        self.assertAlmostEqual(secs + frac, future + 1e-3, places=5)

    def test_005_bad_input_named(self):
        def make(**kw):
            a = dict(waveform="lfm", custom_waveform=[], bandwidth=1e5, pulse_width=20e-6,
                     samp_rate=1e6, up_chirp=True, prf=1e3, amplitude=0.5, burst_mode="cpi",
                     npulses=8, nbursts=0, start_time=0.0, time_reference="device")
            a.update(kw)
            return gpuradar.pulse_tx_source(**a)
        make()
        cases = [
            (dict(waveform="chirp"), "waveform must be one of lfm, barker:N"),
            (dict(waveform="chirp"), "custom (got 'chirp')"),
            (dict(waveform="frank:10"), "M^2"),
            (dict(pulse_width=1.5e-3), "pulse_width"),  # burst longer than the PRI
            (dict(pulse_width=1.5e-3), "longer than the PRI"),
            (dict(prf=0.0), "prf"),
            (dict(amplitude=1.5), "amplitude"),
            (dict(burst_mode="frame"), "burst_mode"),
            (dict(npulses=0), "npulses"),
            (dict(start_time=-1.0), "start_time"),
            (dict(start_time=time.time() - 10, time_reference="host"), "in the past"),
            (dict(time_reference="gps"), "time_reference"),
            (dict(samp_rate=0.0), "samp_rate"),
            (dict(burst_mode="pulse", start_time=0.0), "burst_mode pulse needs start_time"),
        ]
        for kw, text in cases:
            with self.assertRaises(ValueError, msg=str(kw)) as cm:
                make(**kw)
            self.assertIn(text, str(cm.exception))
            self.assertIn("gpuradar::pulse_tx_source", str(cm.exception))

    def test_006_phase_codes_in_pulse_compression(self):
        # The same names in pulse_compression: Barker 13 compresses to 13 with sidelobes
        # <= 1; an unknown name lists the allowed codes.
        fs, nrange, at = 1e6, 64, 9
        s = np.array(gpuradar.make_waveform("barker:13", 0, 13e-6, fs))
        x = np.zeros(nrange, complex)
        x[at:at + 13] = s
        pc = gpuradar.pulse_compression(nrange, 1, 1, "barker:13", [], 0, 13e-6, fs, True,
                                        "rectangular", 4, 35.0, 6.0, False, "fir", "cpu")
        tb = gr.top_block()
        src = blocks.vector_source_c(x.tolist(), False, nrange)
        snk = blocks.vector_sink_c(nrange)
        tb.connect(src, pc, snk)
        tb.run()
        y = np.abs(np.array(snk.data()))
        self.assertAlmostEqual(y[at], 13.0, places=4)
        self.assertLessEqual(np.delete(y, at).max(), 1.0 + 1e-4)
        # The waveform message takes the same codes (the CPIs after it use the new pulse).
        msg = pmt.make_dict()
        msg = pmt.dict_add(msg, pmt.intern("waveform"), pmt.intern("frank:16"))
        msg = pmt.dict_add(msg, pmt.intern("pulse_width"), pmt.from_double(32e-6))
        pc2 = gpuradar.pulse_compression(nrange, 1, 1, "lfm", [], 1e5, 13e-6, fs, True,
                                         "rectangular", 4, 35.0, 6.0, False, "fir", "cpu")
        pc2._post(pmt.intern("waveform"), msg)  # before start: applies to every CPI
        tb = gr.top_block()
        tb.connect(blocks.vector_source_c(x.tolist(), False, nrange), pc2,
                   blocks.null_sink(gr.sizeof_gr_complex * nrange))
        tb.run()
        np.testing.assert_array_equal(pc2.waveform(),
                                      gpuradar.make_waveform("frank:16", 0, 32e-6, fs))
        self.assertEqual(len(pc2.waveform()), 32)  # 2 samples per chip
        with self.assertRaises(ValueError) as cm:
            gpuradar.pulse_compression(nrange, 1, 1, "p5:16", [], 0, 13e-6, fs, True,
                                       "rectangular", 4, 35.0, 6.0, False, "fir", "cpu")
        self.assertIn("one of lfm, barker:N", str(cm.exception))
        self.assertIn("p4:N", str(cm.exception))


if __name__ == "__main__":
    gr_unittest.run(qa_pulse_tx_source)
