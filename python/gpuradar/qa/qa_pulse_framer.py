#!/usr/bin/env python3
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""QA for gpuradar.pulse_framer: gates against a numpy reference of the schedule
floor(k pri + 1/2) (exact integer arithmetic here), cpi tags, an injected overflow,
non-finite samples zeroed and counted, bad parameters."""

import numpy as np
import pmt
from gnuradio import blocks, gr, gr_unittest
from gnuradio import gpuradar

C = 299792458.0


def rx_time_tag(offset, secs, frac):
    return gr.tag_utils.python_to_tag(
        (offset, pmt.intern("rx_time"),
         pmt.make_tuple(pmt.from_uint64(secs), pmt.from_double(frac))))


def schedule(k, num, den):
    """Pulse starts for pri = num/den exactly: floor(k num/den + 1/2)."""
    k = np.asarray(k, dtype=np.int64)
    return (2 * k * num + den) // (2 * den)


class qa_pulse_framer(gr_unittest.TestCase):
    def setUp(self):
        self.tb = gr.top_block()

    def tearDown(self):
        self.tb = None

    def run_framer(self, x, tags, framer, nrange):
        src = blocks.vector_source_c(x.tolist(), False, 1, tags)
        snk = blocks.vector_sink_c(nrange)
        self.tb.connect(src, framer, snk)
        self.tb.run()
        y = np.array(snk.data(), dtype=np.complex64).reshape(-1, nrange)
        return y, [gr.tag_to_python(t) for t in snk.tags()]

    def test_001_gates_and_cpi_tags(self):
        # pri = 2001/8 samples (binary fraction), anchor at a random rx_time offset
        num, den, gs, nrange, npulses, fs, fc = 2001, 8, 11, 97, 5, 2e6, 9.5e9
        anchor = 1234
        rng = np.random.default_rng(1)
        x = (rng.standard_normal(40000) + 1j * rng.standard_normal(40000)).astype(np.complex64)
        fr = gpuradar.pulse_framer(num / den, gs, nrange, npulses, fs, fc, "rx_time")
        y, tags = self.run_framer(x, [rx_time_tag(anchor, 7, 0.5)], fr, nrange)
        npulse_out = y.shape[0]
        self.assertGreaterEqual(npulse_out, 100)
        self.assertEqual(npulse_out % npulses, 0)
        starts = anchor + schedule(np.arange(npulse_out), num, den) + gs
        ref = x[starts[:, None] + np.arange(nrange)[None, :]]
        np.testing.assert_array_equal(y, ref)
        self.assertEqual([t.offset for t in tags], list(range(0, npulse_out, npulses)))
        for i, t in enumerate(tags):
            self.assertEqual(t.key, "cpi")
            v = t.value
            self.assertEqual(v["index"], i)
            self.assertEqual(v["npulses"], npulses)
            self.assertEqual(v["nrange"], nrange)
            self.assertEqual(v["fs"], fs)
            self.assertEqual(v["fc"], fc)
            self.assertAlmostEqual(v["prf"], fs * den / num)
            self.assertAlmostEqual(v["r0"], gs * C / (2 * fs))
            secs, frac = v["rx_time"]
            self.assertAlmostEqual((secs - 7 + frac - 0.5) * fs,
                                   schedule(i * npulses, num, den), places=4)
        self.assertEqual(fr.dropped_cpis(), 0)
        self.assertEqual(fr.emitted_cpis(), len(tags))

    def test_002_overflow_discards_partial_cpi(self):
        pri, gs, nrange, npulses, fs = 300, 0, 200, 4, 1e6
        v = np.arange(60000)
        g0, lost = 4 * 1200 + 650, 1000  # inside CPI 4 (pulse 2 of it)
        keep = (v < g0) | (v >= g0 + lost)
        x = (v[keep] % 65536).astype(np.complex64) + 1j * (v[keep] // 65536).astype(np.complex64)
        t = g0 + lost
        fr = gpuradar.pulse_framer(pri, gs, nrange, npulses, fs, 1e9, "rx_time")
        y, tags = self.run_framer(x, [rx_time_tag(0, 3, 0.0),
                                      rx_time_tag(g0, 3 + t // 1000000, (t % 1000000) / fs)],
                                  fr, nrange)
        self.assertEqual(fr.dropped_cpis(), 1)
        self.assertEqual(fr.lost_samples(), lost)
        first = (y[:, 0].real + 65536 * y[:, 0].imag).astype(np.int64)
        # Every gate starts on the 300-sample schedule and none overlaps the gap.
        self.assertTrue(np.all(first % pri == 0))
        self.assertFalse(np.any((first < g0 + lost) & (first + nrange > g0)))
        idx = [tg.value["index"] for tg in tags]
        self.assertEqual(idx[:5], [0, 1, 2, 3, 5])  # CPI 4 discarded, its index not reused

    def test_004_fractional_gap_keeps_schedule_and_bad_jumps_are_counted(self):
        # A gap of 1000.37 samples: pulse k still starts at T0 + k pri / fs, i.e. at
        # arrival index g0 + round(k pri - (g0 + 1000.37)) after it, and its number runs
        # on. An rx_time 1e12 s ahead and one going backwards are ignored and counted.
        pri, gs, nrange, npulses, fs = 300.5, 0, 200, 4, 1e6
        n, g0, gap = 30000, 4 * 1202 + 650, 1000.37
        v = np.arange(n)
        x = (v % 65536).astype(np.complex64) + 1j * (v // 65536).astype(np.complex64)
        t = (g0 + gap) / fs
        fr = gpuradar.pulse_framer(pri, gs, nrange, npulses, fs, 1e9, "rx_time")
        y, tags = self.run_framer(x, [rx_time_tag(0, 3, 0.0),
                                      rx_time_tag(2000, 10**12, 0.0),
                                      rx_time_tag(g0, 3 + int(t), t - int(t)),
                                      rx_time_tag(20000, 1, 0.5)], fr, nrange)
        self.assertEqual(fr.rejected_time_jumps(), 2)
        self.assertEqual(fr.lost_samples(), 1000)
        self.assertEqual(fr.dropped_cpis(), 1)
        first = (y[:, 0].real + 65536 * y[:, 0].imag).astype(np.int64)
        pulse = np.concatenate([tg.value["pulse"] + np.arange(npulses) for tg in tags])
        after = first >= g0
        self.assertGreater(after.sum(), 40)
        np.testing.assert_array_equal(first[~after], np.floor(pulse[~after] * pri + 0.5))
        np.testing.assert_array_equal(first[after],
                                      np.round(pulse[after] * pri - gap))
        self.assertGreater(pulse[after][0], g0 / pri)  # numbering continued

    def test_005_nonfinite_samples_zeroed_and_counted_per_cpi(self):
        # NaN / +-Inf in either part at random samples: inside a gate they come out as 0
        # and are counted in their CPI's tag (key nonfinite_samples, 0 when clean) and in
        # nonfinite_samples(); between the gates they are not part of a CPI.
        pri, gs, nrange, npulses, fs = 250, 20, 200, 4, 1e6
        rng = np.random.default_rng(5)
        n = 20 * pri * npulses
        clean = (rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(np.complex64)
        x = clean.copy()
        at = rng.choice(n // 2, 80, replace=False)  # the later CPIs stay clean
        bad = np.array([np.nan, np.inf, -np.inf], np.float32)
        re, im = x.real.copy(), x.imag.copy()
        for i, where in enumerate(at):
            (re if i % 2 else im)[where] = bad[i % 3]
        x = (re + 1j * im).astype(np.complex64)
        backends = ["cpu"] + (["cuda"] if gpuradar.cuda_available() else [])
        for backend in backends:
            with self.subTest(backend=backend):
                self.tb = gr.top_block()
                fr = gpuradar.pulse_framer(pri, gs, nrange, npulses, fs, 1e9, "free",
                                           backend=backend)
                y, tags = self.run_framer(x, [], fr, nrange)
                starts = pri * np.arange(y.shape[0]) + gs
                idx = starts[:, None] + np.arange(nrange)[None, :]
                hit = np.isin(idx, at)
                np.testing.assert_array_equal(y[hit], 0)
                np.testing.assert_array_equal(y[~hit], clean[idx][~hit])
                per_cpi = hit.reshape(-1, npulses * nrange).sum(axis=1)
                self.assertGreater(per_cpi.sum(), 20)
                self.assertGreater((per_cpi == 0).sum(), 0)  # clean CPIs say 0
                self.assertEqual([t.value["nonfinite_samples"] for t in tags],
                                 per_cpi.tolist())
                self.assertEqual(fr.nonfinite_samples(), per_cpi.sum())

    def test_003_bad_parameters_raise_naming_them(self):
        good = dict(pri_samples=100.0, gate_start=0, nrange=10, npulses=4, fs=1e6, fc=1e9)
        for change, name in ((dict(pri_samples=0.0), "pri"),
                             (dict(pri_samples=9.5), "pri"),
                             (dict(gate_start=91), "gate_start"),
                             (dict(npulses=0), "npulses"),
                             (dict(nrange=0), "nrange"),
                             (dict(fs=-1.0), "fs"),
                             (dict(trigger="edge"), "trigger"),
                             (dict(trigger="threshold"), "threshold")):
            with self.assertRaisesRegex(ValueError, name):
                gpuradar.pulse_framer(**dict(good, **change))
        gpuradar.pulse_framer(**dict(good, gate_start=90))  # boundary passes


if __name__ == "__main__":
    gr_unittest.run(qa_pulse_framer)
