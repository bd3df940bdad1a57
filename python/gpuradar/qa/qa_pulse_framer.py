#!/usr/bin/env python3
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""QA for gpuradar.pulse_framer: gates against a numpy reference of the schedule
floor(k pri + 1/2) (exact integer arithmetic here), cpi tags, an injected overflow,
non-finite samples zeroed and counted, bad parameters; the receiver corrections (DC,
leakage, I/Q) against a numpy reference."""

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

    def test_010_huge_and_saturated_samples_clamped_and_counted(self):
        # fc32: parts beyond +-65536 are clamped to it and counted per CPI
        # (clamped_samples); sc16: samples with a part at +-full scale (|code| >= 32767)
        # pass unchanged and are counted (saturated_samples). Both keys in every tag.
        pri, gs, nrange, npulses, fs = 250, 20, 200, 4, 1e6
        rng = np.random.default_rng(10)
        n = 6 * pri * npulses
        x = (rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(np.complex64)
        starts = pri * np.arange(6 * npulses) + gs
        in_gates = (starts[:, None] + np.arange(nrange)[None, :]).ravel()
        at = rng.choice(in_gates[: len(in_gates) // 2], 30, replace=False)
        re, im = x.real.copy(), x.imag.copy()
        for i, where in enumerate(at):
            (re if i % 2 else im)[where] = (3e38, -1e9, 65537.0)[i % 3]
        x = (re + 1j * im).astype(np.complex64)
        fr = gpuradar.pulse_framer(pri, gs, nrange, npulses, fs, 1e9, "free", backend="cpu")
        y, tags = self.run_framer(x, [], fr, nrange)
        want = np.clip(x.real, -65536, 65536) + 1j * np.clip(x.imag, -65536, 65536)
        idx = starts[: y.shape[0], None] + np.arange(nrange)[None, :]
        np.testing.assert_array_equal(y, want[idx])
        per_cpi = np.isin(idx, at).reshape(-1, npulses * nrange).sum(axis=1)
        self.assertEqual([t.value["clamped_samples"] for t in tags], per_cpi.tolist())
        self.assertEqual([t.value["saturated_samples"] for t in tags], [0] * len(tags))
        self.assertEqual(fr.clamped_samples(), 30)
        # sc16 (interleaved int16 as a 2-vector of shorts): 40 samples at full scale.
        codes = rng.integers(-2000, 2000, size=(n, 2)).astype(np.int16)
        sat = rng.choice(in_gates[: len(in_gates) // 2], 40, replace=False)
        for i, where in enumerate(sat):
            codes[where, i % 2] = (32767, -32768, -32767)[i % 3]
        self.tb = gr.top_block()
        src = blocks.vector_source_s(codes.ravel().tolist(), False, 2)
        fr = gpuradar.pulse_framer(pri, gs, nrange, npulses, fs, 1e9, "free",
                                   backend="cpu", input_type="sc16")
        snk = blocks.vector_sink_c(nrange)
        self.tb.connect(src, fr, snk)
        self.tb.run()
        y = np.array(snk.data(), dtype=np.complex64).reshape(-1, nrange)
        ref = (codes[:, 0] + 1j * codes[:, 1]) / 32768.0
        np.testing.assert_array_equal(y, ref[idx[: y.shape[0]]].astype(np.complex64))
        tags = [gr.tag_to_python(t) for t in snk.tags()]
        per_cpi = np.isin(idx, sat).reshape(-1, npulses * nrange).sum(axis=1)
        self.assertEqual([t.value["saturated_samples"] for t in tags], per_cpi.tolist())
        self.assertEqual(fr.saturated_samples(), 40)
        self.assertEqual(fr.clamped_samples(), 0)

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

    def test_006_corrections_match_numpy_reference(self):
        # A stream with every impairment the corrections remove (DC, a pulse-synchronous
        # leakage burst, a 1 dB / 5 degree I/Q imbalance) over noise and a moving target,
        # framed into 3 CPIs; each correction option against a float64 numpy reference
        # of front_end_correction.h's equations, its state carried across the CPIs, so a
        # parameter that is ignored or swapped (time constant, alpha, gate) fails.
        pri, nrange, npulses, fs = 70, 64, 9, 1e6
        ncpi = 3
        rng = np.random.default_rng(6)
        n = pri * npulses * ncpi + pri
        z = (rng.standard_normal(n) + 1j * rng.standard_normal(n)) / np.sqrt(2)
        z += 3 * np.exp(2j * np.pi * 0.23 * np.arange(n))  # a tone: not static
        burst = 40 * np.exp(1j * rng.uniform(0, 2 * np.pi, 6))
        for k in range(n // pri):
            z[k * pri:k * pri + 6] += burst  # leakage at range zero of every pulse
        g, p = 10 ** (1 / 20), np.deg2rad(5)
        v = z.real + 1j * g * (z.imag * np.cos(p) - z.real * np.sin(p)) + (4 - 2j)
        x = v.astype(np.complex64)

        def reference(gates, dc, tau, iq, leak, alpha, gate):
            out = gates.astype(np.complex128).reshape(-1, npulses, nrange)
            est, mean_pulse = None, None
            iq_est = []  # per CPI: (gain dB, phase deg) of front_end_correction.h
            for cpi in out:
                if dc != "off":
                    for pulse in cpi:
                        m = pulse.mean()
                        est = m if (dc == "pulse" or est is None) else est + (m - est) / tau
                        pulse -= est
                if leak == "mean_pulse":
                    m = cpi.mean(axis=0)
                    mean_pulse = m if mean_pulse is None else mean_pulse + alpha * (m - mean_pulse)
                    cpi -= mean_pulse
                elif leak == "blank":
                    cpi[:, :gate] = 0
                if iq:
                    i, q = cpi.real, cpi.imag
                    pi, pq, c = (i * i).sum(), (q * q).sum(), (i * q).sum()
                    iq_est.append((10 * np.log10(pq / pi),
                                   -np.rad2deg(np.arcsin(c / np.sqrt(pi * pq)))))
                    cpi[:] = i + 1j * (pi * q - c * i) / np.sqrt(pi * pq - c * c)
            return out.reshape(-1, nrange), iq_est

        cases = [dict(dc_removal="pulse"),
                 dict(dc_removal="running", dc_time_constant=5.0),
                 dict(leakage="mean_pulse", leakage_alpha=0.25),
                 dict(leakage="blank", leakage_gate=7),
                 dict(iq_correction=True),
                 dict(dc_removal="running", dc_time_constant=2.0, leakage="mean_pulse",
                      leakage_alpha=0.6, iq_correction=True)]
        backends = ["cpu"] + (["cuda"] if gpuradar.cuda_available() else [])
        for backend in backends:
            for case in cases:
                with self.subTest(backend=backend, **case):
                    self.tb = gr.top_block()
                    fr = gpuradar.pulse_framer(pri, 0, nrange, npulses, fs, 1e9, "free",
                                               backend=backend, **case)
                    y, tags = self.run_framer(x, [], fr, nrange)
                    self.assertEqual(y.shape[0], ncpi * npulses)
                    starts = pri * np.arange(y.shape[0])
                    gates = x[starts[:, None] + np.arange(nrange)[None, :]]
                    ref, iq_est = reference(gates,
                                    case.get("dc_removal", "off"),
                                    case.get("dc_time_constant", 16.0),
                                    case.get("iq_correction", False),
                                    case.get("leakage", "off"),
                                    case.get("leakage_alpha", 0.1),
                                    case.get("leakage_gate", 0))
                    err = np.linalg.norm(y - ref) / np.linalg.norm(ref)
                    self.assertLess(err, 1e-5)
                    # the correction did something: the raw gates are far from it
                    self.assertGreater(np.linalg.norm(gates - ref) / np.linalg.norm(ref), 0.01)
                    self.assertEqual(fr.iq_uncorrected_cpis(), 0)
                    # each CPI's I/Q estimate in its cpi tag, as the reference's
                    cpi_tags = [t for t in tags if t.key == "cpi"]
                    self.assertEqual(len(cpi_tags), ncpi)
                    for k, t in enumerate(cpi_tags):
                        if not case.get("iq_correction", False):
                            self.assertNotIn("iq_gain_db", t.value)
                            continue
                        self.assertTrue(t.value["iq_corrected"])
                        self.assertAlmostEqual(t.value["iq_gain_db"], iq_est[k][0], delta=1e-6)
                        self.assertAlmostEqual(t.value["iq_phase_deg"], iq_est[k][1], delta=1e-6)
                        if case.get("dc_removal", "off") != "off":
                            # centred: about the 1 dB / 5 degree imbalance put in
                            self.assertAlmostEqual(t.value["iq_gain_db"], 1.0, delta=0.3)
                            self.assertAlmostEqual(t.value["iq_phase_deg"], 5.0, delta=2.0)

    def test_007_degenerate_iq_left_uncorrected_and_counted(self):
        # A real-valued stream (Q = 0): no I/Q estimate exists; the CPIs come out as
        # they went in (finite), each counted in iq_uncorrected_cpis().
        pri, nrange, npulses = 50, 40, 4
        rng = np.random.default_rng(7)
        x = rng.standard_normal(pri * npulses * 3 + pri).astype(np.complex64)
        fr = gpuradar.pulse_framer(pri, 0, nrange, npulses, 1e6, 1e9, "free",
                                   iq_correction=True)
        y, _ = self.run_framer(x, [], fr, nrange)
        starts = pri * np.arange(y.shape[0])
        np.testing.assert_array_equal(y, x[starts[:, None] + np.arange(nrange)[None, :]])
        self.assertEqual(fr.iq_uncorrected_cpis(), y.shape[0] // npulses)
        self.assertEqual(y.shape[0] // npulses, 3)

    def test_008_bad_correction_parameters_raise_naming_them(self):
        good = dict(pri_samples=100.0, gate_start=0, nrange=10, npulses=4, fs=1e6, fc=1e9,
                    trigger="free")
        for change, text in ((dict(dc_removal="mean"), "dc_removal must be one of"),
                             (dict(dc_removal="running", dc_time_constant=0.9),
                              r"dc_time_constant must be finite and >= 1"),
                             (dict(leakage="clip"), "leakage must be one of"),
                             (dict(leakage="mean_pulse", leakage_alpha=0.0),
                              r"leakage_alpha must be in \(0, 1\]"),
                             (dict(leakage="mean_pulse", leakage_alpha=1.01), "leakage_alpha"),
                             (dict(leakage="blank", leakage_gate=0), "leakage_gate"),
                             (dict(leakage="blank", leakage_gate=11),
                              r"leakage_gate must be in \[1, nrange = 10\]")):
            with self.assertRaisesRegex(ValueError, text):
                gpuradar.pulse_framer(**dict(good, **change))
        # the boundaries pass
        gpuradar.pulse_framer(**dict(good, leakage="blank", leakage_gate=10))
        gpuradar.pulse_framer(**dict(good, leakage="mean_pulse", leakage_alpha=1.0))
        gpuradar.pulse_framer(**dict(good, dc_removal="running", dc_time_constant=1.0))

    def test_009_grc_asserts_and_templates_carry_the_corrections(self):
        # GRC refuses what make() refuses, and its Python and C++ make templates pass
        # every correction parameter (a template that dropped one would build a block
        # without that correction).
        import os
        import sys
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import grc_asserts
        block = "gpuradar_pulse_framer"
        base = dict(pri_samples="100.0", fs="1e6", nrange="64")

        def fails(**kw):
            return grc_asserts.failed_asserts(block, **dict(base, **kw))
        self.assertEqual(fails(leakage="blank", leakage_gate="64"), [])
        self.assertNotEqual(fails(leakage="blank", leakage_gate="65"), [])
        self.assertNotEqual(fails(leakage="blank", leakage_gate="0"), [])
        self.assertEqual(fails(leakage="mean_pulse", leakage_alpha="1.0"), [])
        self.assertNotEqual(fails(leakage="mean_pulse", leakage_alpha="0"), [])
        self.assertEqual(fails(dc_removal="running", dc_time_constant="1"), [])
        self.assertNotEqual(fails(dc_removal="running", dc_time_constant="0.5"), [])
        kw = dict(base, dc_removal="running", dc_time_constant="7.5", iq_correction="True",
                  leakage="blank", leakage_alpha="0.25", leakage_gate="9")
        py = grc_asserts.rendered_make(block, **kw)
        for text in ('dc_removal="running"', "dc_time_constant=7.5", "iq_correction=True",
                     'leakage="blank"', "leakage_alpha=0.25", "leakage_gate=9"):
            self.assertIn(text, py)
        cpp = grc_asserts.rendered_make(block, cpp=True, **kw)
        # before grcc's translations, which turn True into C++'s true
        self.assertIn('"running", 7.5, True, "blank", 0.25, 9);', cpp)
        import yaml
        with open(os.path.join(grc_asserts.GRC_DIR, block + ".block.yml")) as f:
            translations = yaml.safe_load(f)["cpp_templates"]["translations"]
        self.assertEqual(translations.get("True"), "true")


if __name__ == "__main__":
    gr_unittest.run(qa_pulse_framer)
