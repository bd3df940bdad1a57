#!/usr/bin/env python3
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""QA for gpuradar.radar_scene_source (+ pulse_framer and scene_truth): echoes at the
expected gate bins and Doppler phase step, truth recorded and written as JSON, bad
target lists named."""

import json
import os
import sys
import tempfile

import numpy as np
from gnuradio import blocks, gr, gr_unittest
from gnuradio import gpuradar
from gnuradio.gpuradar import scene_truth

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import grc_asserts  # noqa: E402

C = 299792458.0


class qa_radar_scene_source(gr_unittest.TestCase):
    def setUp(self):
        self.tb = gr.top_block()

    def tearDown(self):
        self.tb = None

    def test_001_scene_to_framer_echo_bins_doppler_and_truth(self):
        fs, fc, pri, gs, nrange, npulses = 5e6, 10e9, 2500, 50, 2000, 8
        ranges, vels, snrs = [6000.0, 21000.0], [0.0, 40.0], [20.0, 14.0]
        scene = gpuradar.radar_scene_source(fs, fc, fs / pri, 1e6, 20e-6, [], ranges, vels,
                                            snrs, "snr_db", 0.0, 0.0, 0.0,
                                            truth_every=npulses, start_time=100.0)
        framer = gpuradar.pulse_framer(pri, gs, nrange, npulses, fs, fc, "rx_time")
        head = blocks.head(gr.sizeof_gr_complex, pri * npulses * 4)
        snk = blocks.vector_sink_c(nrange)
        rec = scene_truth.truth_recorder()
        self.tb.connect(scene, head, framer, snk)
        self.tb.msg_connect(scene, "truth", rec, "truth")
        self.tb.run()
        y = np.array(snk.data()).reshape(-1, nrange)
        self.assertEqual(y.shape[0], 4 * npulses)
        wf = np.array(scene.waveform())
        L = len(wf)
        for r, v, s in zip(ranges, vels, snrs):
            b = scene_truth.expected_range_bin(r, fs, gs)
            if v == 0.0:
                self.assertTrue(np.all(y[:, b - 1] == 0))  # noise-free: nothing before it
            # Echo = a * s * phase: dividing by the waveform leaves a constant-modulus
            # phasor of amplitude 10^(snr/20) (other target far away in range).
            seg = y[:, b:b + L] / wf[None, :]
            np.testing.assert_allclose(np.abs(seg), 10 ** (s / 20), rtol=1e-4)
            # Pulse-to-pulse phase step = 2 pi f_d PRI / fs (closing: positive).
            step = np.angle(seg[1:, 0] / seg[:-1, 0])
            fd = 2 * v * fc / C
            np.testing.assert_allclose(step, np.angle(np.exp(2j * np.pi * fd * pri / fs)),
                                       atol=1e-4)
        recs = [t for t in rec.records() if t["pulse"] < 4 * npulses]
        self.assertEqual(len(recs), 2 * 4)
        self.assertEqual(sorted({t["pulse"] for t in recs}), [0, 8, 16, 24])
        t1 = [t for t in recs if t["target"] == 1 and t["pulse"] == 16][0]
        self.assertAlmostEqual(t1["range_m"], 21000.0 - 40.0 * 16 * pri / fs)
        self.assertAlmostEqual(t1["doppler_hz"], 2 * 40.0 * fc / C)
        self.assertEqual(t1["rx_time"][0], 100)
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "truth.json")
            rec.write_json(path, fs=fs, fc=fc, prf=fs / pri)
            records, meta = scene_truth.read_truth_json(path)
            self.assertEqual(meta["fs"], fs)
            self.assertEqual(len(records), len(rec.records()))
            json.dumps(records)  # plain JSON types only

    def test_002_expected_doppler_bin(self):
        prf, fc, n = 1000.0, 3e9, 64
        v = 5 * prf / n * C / (2 * fc)  # exactly 5 bins of Doppler
        self.assertEqual(scene_truth.expected_doppler_bin(v, fc, prf, n), n // 2 + 5)
        self.assertEqual(scene_truth.expected_doppler_bin(-v, fc, prf, n, False), n - 5)

    def test_003_bad_target_lists_named(self):
        args = (1e6, 1e9, 1e3, 1e5, 1e-4, [])
        for (r, v, a, unit), name in ((([1e3, -1.0], [0, 0], [0, 0], "snr_db"), r"ranges\[1\]"),
                                      (([1e3], [0, 0], [0], "snr_db"), "velocities"),
                                      (([1e3], [0], [], "snr_db"), "amplitudes"),
                                      (([1e3], [0], [0.0], "rcs_m2"), r"amplitudes\[0\]"),
                                      (([1e3], [0], [1.0], "dBsm"), "amplitude_unit")):
            with self.assertRaisesRegex(ValueError, name):
                gpuradar.radar_scene_source(*args, r, v, a, unit)
        with self.assertRaisesRegex(ValueError, "prf"):
            gpuradar.radar_scene_source(1e6, 1e9, 2e4, 1e5, 1e-4)  # 100-sample pulse, PRI 50
        # A sample rate typo made a 1e10-sample chirp, and the error named the pulse width.
        with self.assertRaisesRegex(ValueError, r"radar_scene_source: fs must be in "
                                    r"\(0, 1.67772e\+12\] Hz with pulse_width 1e-05 s"):
            gpuradar.radar_scene_source(1e15, 1e9, 1e3, 1e6, 1e-5)
        params = dict(fs="1e7", fc="1e9", prf="1e3", bandwidth="1e6", pulse_width="1e-5")
        self.assertEqual(grc_asserts.failed_asserts("gpuradar_radar_scene_source", **params),
                         [])
        self.assertEqual(grc_asserts.failed_asserts("gpuradar_radar_scene_source",
                                                    **dict(params, fs="1e15")),
                         ['Assertion "len(waveform) > 0 or pulse_width * fs <= 2**24" '
                          'failed.'])


if __name__ == "__main__":
    gr_unittest.run(qa_radar_scene_source)
