#!/usr/bin/env python3
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""QA for gpuradar.radar_channel: echo delay, amplitude and Doppler phase of a random
input against numpy, leakage and system delay, tx_time -> rx_time, malformed target lists
named."""

import numpy as np
import pmt
from gnuradio import blocks, gr, gr_unittest
from gnuradio import gpuradar

C = 299792458.0


class qa_radar_channel(gr_unittest.TestCase):
    def test_001_echo_leakage_and_tags(self):
        fs, fc, n = 4e6, 2e9, 20000
        r, v, snr, tx_power, leak, sysd = 4500.0, 60.0, 7.0, 0.3, 0.2, 11
        rng = np.random.default_rng(5)
        x = (rng.normal(size=n) + 1j * rng.normal(size=n)) * np.sqrt(tx_power / 2)
        tag = gr.tag_t()
        tag.offset, tag.key = 0, pmt.intern("tx_time")
        tag.value = pmt.make_tuple(pmt.from_uint64(7), pmt.from_double(0.5))
        sob = gr.tag_t()
        sob.offset, sob.key, sob.value = 0, pmt.intern("tx_sob"), pmt.PMT_T
        src = blocks.vector_source_c(x.tolist(), False, 1, [tag, sob])
        ch = gpuradar.radar_channel(fs, fc, [r], [v], [snr], "snr_db", 0.0, tx_power, 0.0,
                                    leak, sysd, 3)
        snk = blocks.vector_sink_c()
        tb = gr.top_block()
        tb.connect(src, ch, snk)
        tb.run()
        y = np.array(snk.data())
        m = np.arange(n)
        rm = r - v * m / fs
        d = np.rint(2 * rm * fs / C).astype(int) + sysd
        a = np.sqrt(10 ** (snr / 10) / tx_power)  # noise_power 0: reference power 1
        self.assertAlmostEqual(ch.echo_amplitudes()[0], a, places=12)
        xs = np.where(m - d >= 0, x[np.clip(m - d, 0, None)], 0)
        lk = np.where(m - sysd >= 0, x[np.clip(m - sysd, 0, None)], 0)
        want = leak * lk + a * xs * np.exp(-1j * 4 * np.pi * fc * rm / C)
        np.testing.assert_allclose(y, want, atol=2e-4 * np.abs(want).max())
        tags = {pmt.symbol_to_string(t.key): t for t in snk.tags()}
        self.assertEqual(sorted(tags), ["rx_time"])  # tx_sob is the transmitter's
        self.assertEqual(tags["rx_time"].offset, 0)
        self.assertEqual(pmt.to_uint64(pmt.tuple_ref(tags["rx_time"].value, 0)), 7)

    def test_002_noise_seed_and_rcs(self):
        def run(**kw):
            a = dict(samp_rate=1e6, fc=1e9, ranges=[3000.0], velocities=[0.0],
                     amplitudes=[0.0], noise_power=2.0, seed=1)
            a.update(kw)
            ch = gpuradar.radar_channel(**a)
            tb = gr.top_block()
            snk = blocks.vector_sink_c()
            tb.connect(blocks.vector_source_c([0j] * 50000), ch, snk)
            tb.run()
            return ch, np.array(snk.data())
        _, y1 = run()
        self.assertAlmostEqual(np.mean(np.abs(y1) ** 2), 2.0, delta=2.0 * 0.03)
        _, y2 = run(seed=2)
        self.assertFalse(np.array_equal(y1, y2))
        np.testing.assert_array_equal(run()[1], y1)
        # RCS: SNR = K + 10 log10(sigma) - 40 log10(R), a^2 tx_power = P 10^(SNR/10).
        ch, _ = run(amplitudes=[5.0], amplitude_unit="rcs_m2", radar_constant_db=150.0,
                    tx_power=0.5)
        snr = 150.0 + 10 * np.log10(5.0) - 40 * np.log10(3000.0)
        self.assertAlmostEqual(ch.echo_amplitudes()[0], np.sqrt(2.0 * 10 ** (snr / 10) / 0.5))

    def test_003_malformed_targets_named(self):
        def make(ranges, vels, amps, unit="snr_db"):
            return gpuradar.radar_channel(1e6, 1e9, ranges, vels, amps, unit)
        make([1e3, 2e3], [0, 1], [3, 4])
        cases = [
            (([1e3, 2e3], [0], [3, 4]), "velocities"),
            (([1e3], [0], [3, 4]), "amplitudes"),
            (([1e3, -1.0], [0, 0], [3, 4]), "ranges[1]"),
            (([1e3], [float("nan")], [3]), "velocities[0]"),
            (([1e3], [0], [0.0], "rcs_m2"), "amplitudes[0]"),
            (([1e3], [0], [3], "watts"), "amplitude_unit"),
        ]
        for args, text in cases:
            with self.assertRaises(ValueError, msg=str(args)) as cm:
                make(*args)
            self.assertIn(text, str(cm.exception))
            self.assertIn("gpuradar::radar_channel", str(cm.exception))
        for kw, text in [(dict(samp_rate=0.0), "samp_rate"), (dict(tx_power=0.0), "tx_power"),
                         (dict(noise_power=-1.0), "noise_power"),
                         (dict(leakage_amplitude=-1.0), "leakage_amplitude"),
                         (dict(clock_offset_ppm=-1.0), "clock_offset_ppm"),
                         (dict(clock_offset_ppm=1000.5), "clock_offset_ppm"),
                         (dict(clock_offset_ppm=float("nan")), "clock_offset_ppm")]:
            a = dict(samp_rate=1e6, fc=1e9, ranges=[1e3], velocities=[0], amplitudes=[0])
            a.update(kw)
            with self.assertRaises(ValueError) as cm:
                gpuradar.radar_channel(**a)
            self.assertIn(text, str(cm.exception))


if __name__ == "__main__":
    gr_unittest.run(qa_radar_channel)
