#!/usr/bin/env python3
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""QA for gpuradar.pulse_doppler_processor (CPU backend): a point target with a known
delay and Doppler shift lands at its range and Doppler bins, and the hierarchical block
equals its four blocks connected by hand."""

import os
import sys

import numpy as np
import pmt
from gnuradio import blocks, gr, gr_unittest
from gnuradio import gpuradar

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import grc_asserts  # noqa: E402

C = 299792458.0


class qa_pulse_doppler_processor(gr_unittest.TestCase):
    fs, bw, pw, fc, prf = 10e6, 4e6, 3e-6, 3e9, 2000.0
    nrange, npulses, nfft = 200, 16, 32

    def scene(self, rng_m, v_mps):
        """One CPI: an up-chirp echo from range rng_m closing at v_mps, plus weak noise."""
        t = np.arange(int(round(self.pw * self.fs))) / self.fs - self.pw / 2
        s = np.exp(1j * np.pi * (self.bw / self.pw) * t ** 2)
        delay = int(round(2 * rng_m / C * self.fs))
        fd = 2 * v_mps * self.fc / C
        rs = np.random.default_rng(5)
        x = 0.01 * (rs.standard_normal((self.npulses, self.nrange)) +
                    1j * rs.standard_normal((self.npulses, self.nrange)))
        for p in range(self.npulses):
            x[p, delay:delay + len(s)] += s * np.exp(2j * np.pi * fd * p / self.prf)
        return x.astype(np.complex64), delay

    def cpi_tag(self):
        d = pmt.make_dict()
        for k, v in (("index", 0), ("npulses", self.npulses), ("nrange", self.nrange)):
            d = pmt.dict_add(d, pmt.intern(k), pmt.from_uint64(v))
        for k, v in (("fs", self.fs), ("prf", self.prf), ("fc", self.fc)):
            d = pmt.dict_add(d, pmt.intern(k), pmt.from_double(v))
        return gr.tag_utils.python_to_tag((0, pmt.intern("cpi"), d))

    def run_chain(self, x, blocks_between):
        tb = gr.top_block()
        src = blocks.vector_source_c(x.ravel().tolist(), False, self.nrange, [self.cpi_tag()])
        snk = blocks.vector_sink_f(self.nfft)
        tb.connect(src, *blocks_between, snk)
        tb.run()
        return np.array(snk.data()).reshape(self.nrange, self.nfft), snk.tags()

    def kw(self):
        return dict(bandwidth=self.bw, pulse_width=self.pw, samp_rate=self.fs)

    def test_001_target_at_range_and_doppler_bins(self):
        v = 7 * self.prf / self.nfft * C / (2 * self.fc)  # 7 Doppler bins, closing
        x, delay = self.scene(1500.0, v)
        pd = gpuradar.pulse_doppler_processor(self.nrange, self.npulses, self.nfft,
                                              range_window="hamming",
                                              doppler_window="hann", backend="cpu",
                                              **self.kw())
        y, tags = self.run_chain(x, [pd])
        r, d = np.unravel_index(np.argmax(y), y.shape)
        self.assertEqual(r, delay)
        self.assertEqual(d, self.nfft // 2 + 7)
        t = gr.tag_to_python(tags[0])
        self.assertEqual(t.offset, 0)
        self.assertEqual(t.value["ndoppler"], self.nfft)
        self.assertAlmostEqual(t.value["prf"], self.prf)
        # The velocity mapping of the Doppler filter's documentation.
        vel = (d - self.nfft / 2) * self.prf / self.nfft * C / (2 * self.fc)
        self.assertAlmostEqual(vel, v, places=6)
        self.assertEqual(pd.backend(), "cpu")
        self.assertEqual(pd.dropped_cpis(), 0)

    def test_002_equals_the_four_blocks(self):
        x, _ = self.scene(900.0, -20.0)
        pd = gpuradar.pulse_doppler_processor(self.nrange, self.npulses, self.nfft,
                                              mti="two_pulse", backend="cpu", **self.kw())
        y1, _ = self.run_chain(x, [pd])
        chain = [gpuradar.pulse_compression(self.nrange, self.npulses, backend="cpu",
                                            **self.kw()),
                 gpuradar.corner_turn(self.npulses, self.nrange, 1, "cpu"),
                 gpuradar.doppler_filter(self.npulses, self.nrange, self.nfft,
                                         mti="two_pulse", backend="cpu"),
                 gpuradar.envelope(self.nfft, "square_law", False, "cpu")]
        y2, _ = self.run_chain(x, chain)
        np.testing.assert_array_equal(y1, y2)

    def test_003_bad_parameters_raise_naming_them(self):
        for kw, name in ((dict(nfft=8), "nfft"), (dict(mti="x"), "mti"),
                         (dict(envelope_mode="log"), "envelope_mode must be"),
                         (dict(range_window="x"), "range_window must be"),
                         (dict(doppler_window="x"), "doppler_window must be"),
                         (dict(backend="gpu"), "backend")):
            args = dict(nrange=64, npulses=16, nfft=16, pulse_width=1e-6, backend="cpu")
            args.update(kw)
            with self.assertRaisesRegex(ValueError, name):
                gpuradar.pulse_doppler_processor(**args)

    def test_003b_samp_rate_refused_by_make_and_by_the_grc_asserts(self):
        # grcc accepted samp_rate 0; make() named the kernel's sample_rate_hz, or with a
        # custom waveform nothing at all.
        for waveform in ("lfm", "custom"):
            for rate in (0.0, -1e6, float("nan")):
                with self.subTest(waveform=waveform, samp_rate=rate):
                    with self.assertRaisesRegex(ValueError, "pulse_doppler_processor: "
                                                "samp_rate must be > 0"):
                        gpuradar.pulse_doppler_processor(
                            nrange=64, npulses=16, nfft=16, waveform=waveform,
                            custom_waveform=[1, 1j], pulse_width=1e-6, samp_rate=rate,
                            backend="cpu")
        with self.assertRaisesRegex(ValueError, "pulse_compression: samp_rate must be > 0"):
            gpuradar.pulse_compression(64, 4, pulse_width=1e-6, samp_rate=0.0,
                                       backend="cpu")
        block = "gpuradar_pulse_doppler_processor"
        self.assertEqual(grc_asserts.failed_asserts(block, samp_rate="1e7"), [])
        self.assertIn('Assertion "samp_rate > 0" failed.',
                      grc_asserts.failed_asserts(block, samp_rate="0"))

    def test_003c_waveform_asserts_mirror_make(self):
        # What make() refuses about the waveform, GRC refuses before the flowgraph runs.
        good = dict(samp_rate=1e7, waveform="lfm", bandwidth=5e6, pulse_width=1e-5,
                    custom_waveform=[1, 1j])
        cases = [(dict(bandwidth=2e7), "bandwidth", "0 < bandwidth <= samp_rate"),
                 (dict(pulse_width=1e-9), "pulse_width", "0.5 <= pulse_width * samp_rate"),
                 (dict(waveform="barker:13", pulse_width=1e-9), "pulse_width",
                  "0.5 <= pulse_width * samp_rate"),
                 (dict(pulse_width=3e-5), "waveform", "<= nrange"),
                 (dict(waveform="custom", custom_waveform=[]), "waveform",
                  "0 < len(custom_waveform) <= nrange"),
                 (dict(waveform="custom", custom_waveform=[1] * 257), "waveform",
                  "0 < len(custom_waveform) <= nrange")]
        for block, make in (("gpuradar_pulse_doppler_processor",
                             lambda **kw: gpuradar.pulse_doppler_processor(
                                 nrange=256, npulses=16, nfft=16, backend="cpu", **kw)),
                            ("gpuradar_pulse_compression",
                             lambda **kw: gpuradar.pulse_compression(
                                 nrange=256, npulses=4, backend="cpu", **kw))):
            grc = lambda kw: grc_asserts.failed_asserts(  # noqa: E731
                block, nrange="256", **{k: repr(v) if k == "custom_waveform" else str(v)
                                        for k, v in kw.items()})
            self.assertEqual(grc(good), [], block)
            make(**good)
            for change, name, assertion in cases:
                with self.subTest(block=block, change=change):
                    failed = grc(dict(good, **change))
                    self.assertEqual(len(failed), 1, failed)
                    self.assertIn(assertion, failed[0])
                    with self.assertRaisesRegex(ValueError, name):
                        make(**dict(good, **change))

    def test_004_map_tap_every_nth_cpi_equals_the_stream(self):
        """tap_every=2 over 5 CPIs: CPIs 0, 2, 4 on the map port, each the stream's map."""
        ncpi, every = 5, 2
        x = np.concatenate([self.scene(600.0 + 150 * c, 5.0 * c)[0] for c in range(ncpi)])
        pd = gpuradar.pulse_doppler_processor(self.nrange, self.npulses, self.nfft,
                                              backend="cpu", tap_every=every, **self.kw())
        tb = gr.top_block()
        src = blocks.vector_source_c(x.ravel().tolist(), False, self.nrange, [self.cpi_tag()])
        snk = blocks.vector_sink_f(self.nfft)
        dbg = blocks.message_debug()
        tb.connect(src, pd, snk)
        tb.msg_connect(pd, "map", dbg, "store")
        tb.run()
        y = np.array(snk.data(), dtype=np.float32).reshape(ncpi, self.nrange * self.nfft)
        self.assertEqual(dbg.num_messages(), 3)
        for i in range(3):
            msg = dbg.get_message(i)
            meta = pmt.to_python(pmt.car(msg))
            tap = np.array(pmt.f32vector_elements(pmt.cdr(msg)), dtype=np.float32)
            np.testing.assert_array_equal(tap, y[i * every])
            self.assertEqual(meta["cpi"], i * every)
            self.assertEqual((meta["nrange"], meta["ndoppler"], meta["channels"]),
                             (self.nrange, self.nfft, 1))
            # Only CPI 0 came with a tag (with prf); the others have what the block knows.
            self.assertAlmostEqual(meta["prf"], self.prf if i == 0 else 0.0)
            self.assertAlmostEqual(meta["fs"], self.fs)
            self.assertEqual(meta["envelope"], "square_law")

    def test_004b_map_tap_carries_the_framers_receiver_fields(self):
        """The framer's counts, clock and I/Q fields of a CPI's tag reach its map's
        metadata with their types; a tag without them gives a map without them."""
        fields = {"clamped_samples": pmt.from_uint64(3),
                  "saturated_samples": pmt.from_uint64(5),
                  "clock_slip_samples": pmt.from_long(-2),
                  "clock_offset_ppm": pmt.from_double(20.5),
                  "iq_gain_db": pmt.from_double(1.1),
                  "iq_phase_deg": pmt.from_double(4.9),
                  "iq_corrected": pmt.PMT_T}
        tag0 = self.cpi_tag()
        d = tag0.value
        for k, v in fields.items():
            d = pmt.dict_add(d, pmt.intern(k), v)
        tag0 = gr.tag_utils.python_to_tag((0, pmt.intern("cpi"), d))
        tag1 = gr.tag_utils.python_to_tag((self.nrange, pmt.intern("cpi"),
                                           pmt.dict_add(self.cpi_tag().value,
                                                        pmt.intern("index"),
                                                        pmt.from_uint64(1))))
        x = np.concatenate([self.scene(600.0, 0.0)[0]] * 2)
        pd = gpuradar.pulse_doppler_processor(self.nrange, self.npulses, self.nfft,
                                              backend="cpu", tap_every=1, **self.kw())
        tb = gr.top_block()
        src = blocks.vector_source_c(x.ravel().tolist(), False, self.nrange, [tag0, tag1])
        snk = blocks.vector_sink_f(self.nfft)
        dbg = blocks.message_debug()
        tb.connect(src, pd, snk)
        tb.msg_connect(pd, "map", dbg, "store")
        tb.run()
        self.assertEqual(dbg.num_messages(), 2)
        meta = pmt.car(dbg.get_message(0))
        for k, v in fields.items():
            got = pmt.dict_ref(meta, pmt.intern(k), pmt.PMT_NIL)
            self.assertTrue(pmt.equal(got, v), k)
        self.assertEqual(pmt.to_python(meta)["clock_slip_samples"], -2)
        meta1 = pmt.to_python(pmt.car(dbg.get_message(1)))
        self.assertEqual(meta1["cpi"], 1)
        for k in fields:
            self.assertNotIn(k, meta1)

    def test_005_setters_raise_value_error_naming_the_parameter(self):
        """The live-control setters (GRC callbacks) from Python: bad values raise
        ValueError naming the parameter; good ones are accepted (their effect at the next
        CPI is tested in lib_test_live_control)."""
        pd = gpuradar.pulse_doppler_processor(self.nrange, self.npulses, self.nfft,
                                              backend="cpu", **self.kw())
        for call, name in ((lambda: pd.set_mti("four_pulse"), "mti"),
                           (lambda: pd.set_range_window("welch"), "window"),
                           (lambda: pd.set_doppler_window("kaiser", beta=-1.0), "beta")):
            with self.assertRaisesRegex(ValueError, name):
                call()
        pd.set_mti("three_pulse")
        pd.set_doppler_window("taylor", nbar=5, sll_db=30.0)
        pd.set_range_window("hamming")
        pd.set_db(True)
        cf = gpuradar.cfar_2d(self.nrange, self.nfft, backend="cpu")
        for call, name in ((lambda: cf.set_pfa(2.0), "pfa"),
                           (lambda: cf.set_variant("median"), "variant"),
                           (lambda: cf.set_guard_range(-1), "guard_range")):
            with self.assertRaisesRegex(ValueError, name):
                call()
        cf.set_pfa(1e-3)
        cf.set_variant("os")


if __name__ == "__main__":
    gr_unittest.run(qa_pulse_doppler_processor)
