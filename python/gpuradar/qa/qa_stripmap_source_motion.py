#!/usr/bin/env python3
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""QA of stripmap_source's navigation errors (CPU, host simulation): off, the stream is
the nominal pass's to the bit and untagged; on, every pulse carries its true antenna
position (the model written out here: measured - true = e(t), t = i / prf) and its
echoes are the nominal simulator's echoes of the target moved by the opposite offset
(the antenna displaced instead); bad error parameters are named."""

import math
import unittest

import numpy as np
import pmt
from gnuradio import blocks, gr
from gnuradio import gpuradar

NRANGE = 256
PRF, V, ALT = 300.0, 100.0, 1000.0
ACQ = (9.6e9, 50e6, 1e-6, True, 60e6, PRF, V, ALT, 2000.0, NRANGE, 0.0, 1.0)
TARGET = (1700.0, 5.0, 2.0)


def run(npulses, target=TARGET, first_pulse_y=0.0, **motion):
    src = gpuradar.stripmap_source(*ACQ, [target[0]], [target[1]], [target[2]], [], 0.0,
                                   first_pulse_y, npulses, **motion)
    snk = blocks.vector_sink_c(NRANGE)
    tb = gr.top_block()
    tb.connect(src, snk)
    tb.run()
    tags = {t.offset: np.array(pmt.f64vector_elements(t.value)) for t in snk.tags()
            if pmt.symbol_to_string(t.key) == "true_position"}
    return np.array(snk.data(), np.complex64).reshape(-1, NRANGE), tags


MOTION = dict(motion_velocity_error=0.2, cross_track_amplitude=0.01,
              cross_track_period=0.05, cross_track_phase=0.3, vertical_amplitude=0.004,
              vertical_period=0.08, vertical_phase=-0.5)


class qa_stripmap_source_motion(unittest.TestCase):
    def test_001_off_is_the_nominal_pass(self):
        plain, tags = run(30)
        # amplitudes zero, the rest of the model set: no error
        zero, ztags = run(30, **{k: (0.0 if "amplitude" in k or "velocity" in k else v)
                                 for k, v in MOTION.items()},
                          cross_track_walk=0.0, vertical_noise=0.0, motion_seed=7)
        self.assertGreater(np.abs(plain).max(), 0.5)
        np.testing.assert_array_equal(plain, zero)
        self.assertEqual(tags, {})
        self.assertEqual(ztags, {})

    def test_002_true_track_and_echoes(self):
        n = 24
        pulses, tags = run(n, first_pulse_y=-1.0, **MOTION)
        self.assertEqual(sorted(tags), list(range(n)))
        nominal, _ = run(n, first_pulse_y=-1.0)
        moved = 0.0
        for i in range(n):
            t = i / PRF
            cross = 0.01 * math.sin(2 * math.pi * t / 0.05 + 0.3)  # -x is positive
            up = 0.004 * math.sin(2 * math.pi * t / 0.08 - 0.5)
            y_nominal = -1.0 + i * V / PRF
            true = np.array([cross, y_nominal - 0.2 * t, ALT - up])
            np.testing.assert_allclose(tags[i], true, atol=1e-9)
            moved = max(moved, float(np.abs(pulses[i] - nominal[i]).max()))
        # The antenna displaced by d sees the target displaced by -d: pulse i from the
        # nominal pass with the target moved so.
        for i in (0, 5, 17, 23):
            d = tags[i] - np.array([0.0, -1.0 + i * V / PRF, ALT])
            shifted, _ = run(i + 1, target=tuple(np.array(TARGET) - d), first_pulse_y=-1.0)
            np.testing.assert_allclose(pulses[i], shifted[i], atol=2e-5, rtol=0)
        self.assertGreater(moved, 0.5)  # centimetres are radians at 3 cm

    def test_003_random_parts_stream_the_same_whatever_the_chunks(self):
        kw = dict(cross_track_walk=0.05, vertical_noise=0.001, motion_seed=3)
        a, ta = run(200, **kw)
        b, tb_ = run(200, **kw)
        np.testing.assert_array_equal(a, b)
        x = np.array([ta[i][0] for i in range(200)])
        z = np.array([ta[i][2] for i in range(200)])
        self.assertEqual(x[0], 0.0)
        self.assertGreater(np.std(np.diff(x)), 0.3 * 0.05 / math.sqrt(PRF))
        self.assertLess(np.std(np.diff(x)), 3 * 0.05 / math.sqrt(PRF))
        self.assertAlmostEqual(np.std(z - ALT), 0.001, delta=0.0003)
        c, tc = run(200, **dict(kw, motion_seed=4))
        self.assertFalse(np.array_equal(x, [tc[i][0] for i in range(200)]))

    def test_004_bad_errors_named(self):
        for kw, name in ((dict(motion_velocity_error=math.nan), "motion_velocity_error"),
                         (dict(cross_track_amplitude=-0.1), "cross_track_amplitude"),
                         (dict(cross_track_period=0.0), "cross_track_period"),
                         (dict(vertical_period=-1.0), "vertical_period"),
                         (dict(vertical_phase=math.inf), "vertical_phase"),
                         (dict(cross_track_walk=-1.0), "cross_track_walk"),
                         (dict(vertical_noise=math.nan), "vertical_noise")):
            with self.assertRaisesRegex(ValueError, name):
                gpuradar.stripmap_source(*ACQ, [1700.0], [5.0], **kw)


if __name__ == "__main__":
    unittest.main()
