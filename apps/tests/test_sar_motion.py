#!/usr/bin/env python3
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""gpuradar-sim's navigation errors, run as a user runs the apps (subprocess, CPU
backend, the tiny presets: seconds).

Sar: gpuradar-sim sar with errors writes the measured track as the geometry and the true
track beside it, measured - true as the options say; zero errors give the same bytes as
none; gpuradar-sar images either track. Stripmap: the track files, measured - true as
the options say at the acquisition's PRF, bp from the measured track; none without
errors. BadInput: each error option checked, named.

`test_sar_motion.py Sar` runs one group.
"""

import json
import os
import sys
import unittest

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_apps import SAR, SIM, AppTest, run  # noqa: E402

GEOMETRY, TRUE = ".geometry.f64", ".true_geometry.f64"


def read_bytes(path):
    with open(path, "rb") as f:
        return f.read()


class Sar(AppTest):
    def sim(self, base, *extra):
        rc, so, se = run(SIM, "sar", "--preset", "tiny", "-o", self.path(base), *extra)
        self.assertEqual(rc, 0, so + se)
        return self.path(base), so

    def test_001_measured_and_true_tracks(self):
        base, so = self.sim("m", "--prf", "500", "--velocity-error", "0.1",
                            "--cross-track-sine", "0.002,10m", "--cross-track-sine",
                            "0.001,0.05s,0.3", "--motion-seed", "3")
        self.assertIn("navigation errors", so)
        with open(base + ".sigmf-meta") as f:
            g = json.load(f)["global"]
        self.assertEqual(g["gpuradar:true_geometry_file"], "m" + TRUE)
        self.assertEqual(g["gpuradar:motion_errors"]["prf"], 500.0)
        meas = np.fromfile(base + GEOMETRY, "<f8").reshape(-1, 6)
        true = np.fromfile(base + TRUE, "<f8").reshape(-1, 6)
        n = len(true)
        t = (np.arange(n) - (n - 1) / 2) / 500.0
        s = true[:, 0] - true[0, 0]  # the spotlight path flies east
        np.testing.assert_allclose(meas[:, 0] - true[:, 0], 0.1 * t, atol=1e-9)
        np.testing.assert_allclose(meas[:, 1] - true[:, 1],
                                   0.002 * np.sin(2 * np.pi * s / 10)
                                   + 0.001 * np.sin(2 * np.pi * t / 0.05 + 0.3), atol=1e-9)
        np.testing.assert_array_equal(meas[:, 2:], true[:, 2:])
        # gpuradar-sar forms the image from the recording's (measured) track, or the true
        # one given with --geometry.
        for extra in ([], ["--geometry", base + TRUE]):
            rc, so, se = run(SAR, "--input", base, "--backend", "cpu", "-q", "--no-png",
                             "-o", self.path("img"), *extra)
            self.assertEqual(rc, 0, so + se)

    def test_002_zero_errors_are_no_errors(self):
        plain, _ = self.sim("plain", "--seed", "5")
        zero, _ = self.sim("zero", "--seed", "5", "--velocity-error", "0")
        self.assertFalse(os.path.exists(plain + TRUE))
        self.assertNotIn(b"motion_errors", read_bytes(plain + ".sigmf-meta"))
        for suffix in (".sigmf-data", GEOMETRY):
            self.assertEqual(read_bytes(plain + suffix), read_bytes(zero + suffix))
        self.assertEqual(read_bytes(zero + TRUE), read_bytes(zero + GEOMETRY))


class Stripmap(AppTest):
    def test_001_tracks_written_and_used(self):
        base = self.path("s")
        rc, so, se = run(SIM, "stripmap", "--preset", "tiny", "-q", "-o", base,
                         "--vertical-sine", "0.003,40m", "--velocity-error", "0.2")
        self.assertEqual(rc, 0, so + se)
        with open(base + ".sigmf-meta") as f:
            g = json.load(f)["global"]
        self.assertEqual(g["gpuradar:track_file"], "s.track.f64")
        # the pulses' times are the acquisition's
        self.assertEqual(g["gpuradar:motion_errors"]["prf"], g["gpuradar:stripmap"]["prf"])
        meas = np.fromfile(base + ".track.f64", "<f8").reshape(-1, 3)
        true = np.fromfile(base + ".true_track.f64", "<f8").reshape(-1, 3)
        n, prf = len(true), g["gpuradar:stripmap"]["prf"]
        t = (np.arange(n) - (n - 1) / 2) / prf
        s = true[:, 1] - true[0, 1]
        np.testing.assert_allclose(meas - true, np.stack(
            [0 * t, 0.2 * t, 0.003 * np.sin(2 * np.pi * s / 40)], axis=1), atol=1e-9)
        rc, so, se = run(SAR, "--input", base, "--backend", "cpu", "-q", "--no-png",
                         "--algorithm", "both", "-o", self.path("img"))
        self.assertEqual(rc, 0, so + se)
        self.assertIn("track: the recording's measured track", so)
        self.assertIn("csa ignores the recording's measured track", so)

    def test_002_no_errors_no_track_files(self):
        base = self.path("s")
        rc, so, se = run(SIM, "stripmap", "--preset", "tiny", "-q", "-o", base)
        self.assertEqual(rc, 0, so + se)
        self.assertEqual(sorted(f for f in os.listdir(self.dir) if f.startswith("s.")),
                         ["s.sigmf-data", "s.sigmf-meta"])
        self.assertNotIn(b"track_file", read_bytes(base + ".sigmf-meta"))


class BadInput(AppTest):
    def test_001_each_option_named(self):
        for args, needle in ((["--cross-track-sine", "0.01,10"], "--cross-track-sine"),
                             (["--vertical-sine", "0.01,0s"], "--vertical-sine"),
                             (["--cross-track-sine", "-1,2s"], "--cross-track-sine"),
                             (["--cross-track-sine", "1"], "--cross-track-sine"),
                             (["--vertical-noise", "-1"], "--vertical-noise"),
                             (["--cross-track-walk", "nan"], "--cross-track-walk"),
                             (["--velocity-error", "inf"], "--velocity-error"),
                             (["--prf", "0"], "--prf"),
                             (["--motion-seed", "-1"], "--motion-seed")):
            out = self.path("bad")
            rc, so, se = run(SIM, "sar", "--preset", "tiny", "-o", out, *args)
            self.assertEqual(rc, 2, (args, so, se))
            self.assertEqual(len(se.strip().splitlines()), 1, se)
            self.assertIn(needle, se)
            self.assertNotIn("Traceback", se)
            self.assertEqual([f for f in os.listdir(self.dir) if f.startswith("bad")], [])

    def test_002_stripmap_options_named(self):
        for args in (["--cross-track-sine", "0.01,10"], ["--vertical-walk", "-1"]):
            rc, so, se = run(SIM, "stripmap", "--preset", "tiny", "-o", self.path("bad"),
                             *args)
            self.assertEqual(rc, 2, (args, so, se))
            self.assertIn(args[0], se)
            self.assertNotIn("Traceback", se)


if __name__ == "__main__":
    unittest.main()
