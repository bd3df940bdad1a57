#!/usr/bin/env python3
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""QA for the receiver front-end parameters of gpuradar.radar_scene_source and
gpuradar.radar_channel (issue 31): each parameter through the block against numpy's
model of it applied to the same stream made without it (DC offset per rail, the I/Q
model, the Wiener phase noise, the ADC's codes and clip count, the clock offset's pulse
walk), so a parameter ignored or swapped with another fails; defaults leave the stream
to the bit; bad values are refused by name."""

import numpy as np
from gnuradio import blocks, gr, gr_unittest
from gnuradio import gpuradar

FS, FC, PRF = 2e6, 3e9, 2e6 / 1000.5
N = 30000


def scene(n=N, targets=False, **kw):
    """n samples of a noise-only (or one-target, noise-free) scene, and the block."""
    if targets:
        src = gpuradar.radar_scene_source(FS, FC, PRF, 1e6, 50e-6, [], [30e3], [0.0],
                                          [20.0], noise_power=0.0, seed=7, **kw)
    else:
        src = gpuradar.radar_scene_source(FS, FC, PRF, 1e6, 50e-6, noise_power=1.0,
                                          seed=7, **kw)
    snk = blocks.vector_sink_c()
    tb = gr.top_block()
    tb.connect(src, blocks.head(gr.sizeof_gr_complex, n), snk)
    tb.run()
    return np.array(snk.data(), dtype=np.complex64), src


def channel(x, **kw):
    ch = gpuradar.radar_channel(FS, FC, [4500.0], [30.0], [10.0], noise_power=1.0, seed=3,
                                **kw)
    snk = blocks.vector_sink_c()
    tb = gr.top_block()
    tb.connect(blocks.vector_source_c(x.tolist()), ch, snk)
    tb.run()
    return np.array(snk.data(), dtype=np.complex64), ch


def iq_model(x, gain_db, phase_deg):
    g, p = 10 ** (gain_db / 20), np.deg2rad(phase_deg)
    x = x.astype(np.complex128)
    return x.real + 1j * g * (x.imag * np.cos(p) - x.real * np.sin(p))


def adc_model(x, bits, fs_scale):
    d = 2 * fs_scale / 2 ** bits
    out, clipped = [], 0
    for rail in (x.real.astype(np.float64), x.imag.astype(np.float64)):
        q = np.round(rail / d)  # half to even (assert_adc_codes: levels within rounding)
        hi, lo = 2 ** (bits - 1) - 1, -2 ** (bits - 1)
        clipped += int(np.sum(q > hi) + np.sum(q < lo))
        out.append(np.clip(q, lo, hi) * d)
    return out[0] + 1j * out[1], clipped


def assert_adc_codes(y, expect, base, bits, fs_scale):
    """y equals the model's codes, except that a part whose input lies within float
    rounding of a decision level (half a step between two codes) may take either code:
    the block rounds its own float value there, the model the float64 one."""
    d = 2 * fs_scale / 2 ** bits
    for got, want, x in ((y.real, expect.real, base.real),
                         (y.imag, expect.imag, base.imag)):
        r = x.astype(np.float64) / d
        at_level = np.abs(np.abs(r - np.floor(r)) - 0.5) < 1e-5 * np.maximum(1.0, np.abs(r))
        off = np.abs(got - want) > 1e-6
        np.testing.assert_array_equal(off & ~at_level, False)
        np.testing.assert_allclose(got[off], want[off], atol=d + 1e-6)


class qa_radar_front_end(gr_unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.x0, _ = scene()
        rng = np.random.default_rng()
        cls.tx = ((rng.normal(size=N) + 1j * rng.normal(size=N)) * 0.5).astype(np.complex64)
        cls.y0, _ = channel(cls.tx)

    def test_001_defaults_leave_the_stream_to_the_bit(self):
        x, src = scene(dc_offset_i=0.0, dc_offset_q=0.0, iq_gain_db=0.0, iq_phase_deg=0.0,
                       phase_noise_linewidth_hz=0.0, adc_bits=0, adc_full_scale=3.0,
                       clock_offset_ppm=0.0)
        self.assertTrue(np.array_equal(x.view(np.uint32), self.x0.view(np.uint32)))
        self.assertEqual(src.adc_clipped(), 0)
        self.assertEqual(src.pri_samples(), 1000.5)
        y, _ = channel(self.tx, adc_full_scale=3.0)
        self.assertTrue(np.array_equal(y.view(np.uint32), self.y0.view(np.uint32)))

    def test_002_dc_offset_per_rail(self):
        for run, base in ((lambda **k: scene(**k), self.x0),
                          (lambda **k: channel(self.tx, **k), self.y0)):
            y, _ = run(dc_offset_i=0.3, dc_offset_q=-0.45)
            d = y.astype(np.complex128) - base
            np.testing.assert_allclose(d.real, 0.3, atol=1e-5)
            np.testing.assert_allclose(d.imag, -0.45, atol=1e-5)

    def test_003_iq_gain_and_phase(self):
        for gain_db, phase_deg in ((1.5, 0.0), (0.0, 4.0), (-1.0, -6.0)):
            for run, base in ((lambda **k: scene(**k), self.x0),
                              (lambda **k: channel(self.tx, **k), self.y0)):
                y, _ = run(iq_gain_db=gain_db, iq_phase_deg=phase_deg)
                np.testing.assert_allclose(y, iq_model(base, gain_db, phase_deg),
                                           atol=2e-5, rtol=1e-5)

    def test_004_phase_noise_wiener_variance(self):
        lw = 3000.0
        for run, base in ((lambda **k: scene(n=200000, **k), None),
                          (lambda **k: channel(self.tx, **k), self.y0)):
            if base is None:
                base, _ = scene(n=200000)
            y, _ = run(phase_noise_linewidth_hz=lw)
            np.testing.assert_allclose(np.abs(y), np.abs(base), rtol=1e-5, atol=1e-6)
            phi = np.unwrap(np.angle(y.astype(np.complex128) / base))
            step = np.diff(phi)
            # Variance of K draws: relative standard error sqrt(2/K); 5 of them.
            k = len(step)
            self.assertAlmostEqual(np.var(step) / (2 * np.pi * lw / FS), 1.0,
                                   delta=5 * np.sqrt(2 / k))

    def test_005_adc_codes_and_clip_count(self):
        for bits, full_scale in ((6, 2.0), (3, 0.7)):
            for run, base, exact in ((lambda **k: scene(**k), self.x0, False),
                                     (lambda **k: channel(self.tx, **k), self.y0, True)):
                y, blk = run(adc_bits=bits, adc_full_scale=full_scale)
                expect, clipped = adc_model(base, bits, full_scale)
                assert_adc_codes(y, expect, base, bits, full_scale)
                if exact:  # the channel makes exactly the N samples it is given
                    self.assertEqual(blk.adc_clipped(), clipped)
                else:  # the source may have made more than head passed on
                    self.assertGreaterEqual(blk.adc_clipped(), clipped)
                if bits == 3:
                    self.assertGreater(clipped, N // 20)

    def test_006_clock_offset_walks_the_pulses(self):
        # 400 ppm: pulse k starts k * 1000.5 * 4e-4 samples late (0.4 per pulse).
        x, _ = scene(n=50 * 1001, targets=True)
        for ppm in (400.0, -400.0):
            y, src = scene(n=50 * 1001, targets=True, clock_offset_ppm=ppm)
            self.assertAlmostEqual(src.pri_samples(), 1000.5 * (1 + ppm * 1e-6), places=9)
            for k in (0, 10, 30, 45):
                lo = int(1000.5 * k)
                s0 = lo + np.flatnonzero(x[lo:lo + 1000])[0]
                s1 = lo + np.flatnonzero(y[lo:lo + 1000])[0]
                self.assertLessEqual(abs((s1 - s0) - k * 1000.5 * ppm * 1e-6), 1.0,
                                     (ppm, k))

    def test_008_leakage_level_and_delay(self):
        # No targets, no noise: pulse k's leakage is A s at p_k + delay, and only there.
        amp, delay = 40.0, 321
        src = gpuradar.radar_scene_source(FS, FC, PRF, 1e6, 50e-6, noise_power=0.0,
                                          leakage_amplitude=amp, leakage_delay=delay)
        s = np.array(src.waveform())
        snk = blocks.vector_sink_c()
        tb = gr.top_block()
        tb.connect(src, blocks.head(gr.sizeof_gr_complex, 20 * 1001), snk)
        tb.run()
        x = np.array(snk.data())
        for k in range(19):
            p = int(np.floor(k * 1000.5 + 0.5))
            nz = np.flatnonzero(x[p:p + 1000])
            self.assertEqual(nz[0], delay)
            self.assertEqual(nz[-1], delay + len(s) - 1)
            np.testing.assert_allclose(x[p + delay:p + delay + len(s)], amp * s,
                                       atol=1e-5 * amp)
        level_db = 10 * np.log10(np.mean(np.abs(x[delay:delay + len(s)]) ** 2) /
                                 np.mean(np.abs(s) ** 2))
        self.assertAlmostEqual(level_db, 20 * np.log10(amp), places=4)

    def test_007_bad_values_named(self):
        cases = [("dc_offset_i", float("nan")), ("iq_gain_db", float("inf")),
                 ("iq_phase_deg", 90.0), ("phase_noise_linewidth_hz", -1.0),
                 ("phase_noise_linewidth_hz", FS / 2), ("adc_full_scale", 0.0),
                 ("adc_full_scale", -1.0), ("adc_bits", 33)]
        for name, value in cases:
            with self.assertRaisesRegex(ValueError, "radar_scene_source: " + name):
                gpuradar.radar_scene_source(FS, FC, PRF, 1e6, 50e-6, **{name: value})
            with self.assertRaisesRegex(ValueError, "radar_channel: " + name):
                gpuradar.radar_channel(FS, FC, **{name: value})
        with self.assertRaisesRegex(ValueError, "clock_offset_ppm"):
            gpuradar.radar_scene_source(FS, FC, PRF, 1e6, 50e-6, clock_offset_ppm=1001.0)
        with self.assertRaisesRegex(ValueError, "radar_scene_source: leakage_delay"):
            gpuradar.radar_scene_source(FS, FC, PRF, 1e6, 50e-6, leakage_delay=901)
        gpuradar.radar_scene_source(FS, FC, PRF, 1e6, 50e-6, clock_offset_ppm=1000.0,
                                    adc_bits=32, leakage_delay=900)


if __name__ == "__main__":
    gr_unittest.run(qa_radar_front_end)
