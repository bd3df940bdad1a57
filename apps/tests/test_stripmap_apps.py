#!/usr/bin/env python3
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""gpuradar-sim stripmap and gpuradar-sar on stripmap recordings, run as a user runs them
(subprocess, CPU backend, the tiny embedded scene: seconds).

EndToEnd: the recording's files and metadata, the focused image (.npy shape, PNG), every
target's focus report (position, impulse-response widths and sidelobes against the
theory the app prints beside them), --algorithm csa on a phase history refused.
--algorithm both: the csa and bp images of one recording side by side.
Scene: the distributed scene (--scene): recorded in the metadata, changing the echoes, and
the focused image's mean intensity following the scene's quadrants.
BadInput: every numeric argument of gpuradar-sim stripmap checked, bad scenes, and bad or
truncated stripmap recordings: one line naming the file and the field, status 2, no
outputs.

`test_stripmap_apps.py EndToEnd` runs one group.
"""

import json
import math
import os
import re
import sys
import unittest

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_apps import SAR, SIM, AppTest, png_size, run  # noqa: E402
from test_hardening import META, Hardening  # noqa: E402

DATA = ".sigmf-data"
#: the tiny preset (gnuradio.gpuradar.stripmap_sim.presets()): slant ranges and y (m)
TINY_TARGETS = [(2150.0, 110.0), (2300.0, 200.0), (2480.0, 300.0)]
ROW = re.compile(r"^\s+(\d+)\s+([\d.]+)\s+([\d.]+)\s+([-+\d.]+) /\s+([-+\d.]+)\s+"
                 r"([\d.]+) \[\s*([\d.]+)\] /\s+([\d.]+) \[\s*([\d.]+)\]\s+"
                 r"([-\d.]+) \[\s*([-\d.]+)\] /\s+([-\d.]+) \[\s*([-\d.]+)\]\s+"
                 r"([-\d.]+) \[\s*([-\d.]+)\] /\s+([-\d.]+) \[\s*([-\d.]+)\]\s*$")


def stripmap_recording(test, base="strip", *extra):
    rc, out, err = run(SIM, "stripmap", "--preset", "tiny", "-q", "-o", test.path(base),
                       *extra)
    test.assertEqual(rc, 0, out + err)
    return test.path(base)


class EndToEnd(AppTest):
    def test_001_sim_writes_the_recording(self):
        base = stripmap_recording(self, "strip", "--seed", "9", "--noise", "0.1")
        with open(base + META) as f:
            meta = json.load(f)
        g = meta["global"]
        self.assertEqual(g["gpuradar:mode"], "stripmap")
        self.assertEqual(g["gpuradar:seed"], 9)
        self.assertEqual(g["gpuradar:noise_sigma"], 0.1)
        acq = g["gpuradar:stripmap"]
        self.assertEqual(g["core:sample_rate"], acq["fs"])
        self.assertEqual(os.path.getsize(base + DATA),
                         g["gpuradar:npulses"] * acq["nrange"] * 8)
        truth = [(a["gpuradar:slant_range_m"], a["gpuradar:azimuth_m"])
                 for a in meta["annotations"]]
        np.testing.assert_allclose(truth, TINY_TARGETS, atol=1e-6)

    def test_002_csa_focuses_every_target_like_theory(self):
        base = stripmap_recording(self)
        out = self.path("img")
        rc, so, se = run(SAR, "--input", base, "--output", out, "--backend", "cpu", "-q",
                         "--check")
        self.assertEqual(rc, 0, so + se)
        image = np.load(out + ".npy")
        self.assertEqual(image.dtype, np.complex64)
        self.assertEqual(image.shape[1], 256)
        m = re.search(r"naz (\d+) \(lead (\d+), trail (\d+)\), (\d+) blocks", so)
        naz, lead, trail, nblocks = map(int, m.groups())
        self.assertEqual(image.shape[0], nblocks * (naz - lead - trail))
        self.assertGreater(png_size(out + ".png")[0], 0)
        rows = [ROW.match(line) for line in so.splitlines()]
        rows = [r for r in rows if r]
        self.assertEqual(len(rows), len(TINY_TARGETS), so)
        for r in rows:
            v = [float(x) for x in r.groups()]
            i, err_rg, err_az = int(v[0]), v[3], v[4]
            self.assertEqual((v[1], v[2]), TINY_TARGETS[i])
            # position within a tenth of a resolution cell
            self.assertLess(abs(err_rg), 0.1 * v[6], so)
            self.assertLess(abs(err_az), 0.1 * v[8], so)
            # widths within 5 % of theory, sidelobes within 1 dB (rectangular windows)
            for got, want in ((v[5], v[6]), (v[7], v[8])):
                self.assertLess(abs(got / want - 1), 0.05, so)
            for got, want in ((v[9], v[10]), (v[11], v[12]), (v[13], v[14]),
                              (v[15], v[16])):
                self.assertLess(abs(got - want), 1.0, so)

    def test_003_window_widens_and_lowers_sidelobes(self):
        base = stripmap_recording(self)
        rc, so, se = run(SAR, "--input", base, "--output", self.path("w"), "--backend",
                         "cpu", "-q", "--no-png", "--azimuth-window", "hamming")
        self.assertEqual(rc, 0, so + se)
        rows = [ROW.match(line) for line in so.splitlines()]
        for r in [r for r in rows if r]:
            v = [float(x) for x in r.groups()]
            self.assertLess(abs(v[7] / v[8] - 1), 0.05, so)  # azimuth IRW vs theory
            self.assertLess(v[11], -35.0, so)  # azimuth PSLR: Hamming, not -13 dB
        self.assertIn("azimuth hamming", so)

    def test_005_bp_focuses_every_target(self):
        base = stripmap_recording(self)
        out = self.path("bp")
        rc, so, se = run(SAR, "--input", base, "--output", out, "--backend", "cpu", "-q",
                         "--algorithm", "bp", "--check", "--no-png")
        # --check: every target inside the image, within one -3 dB width of its truth
        self.assertEqual(rc, 0, so + se)
        self.assertIn("focus report (3 of 3 targets in the image)", so)
        self.assertEqual(np.load(out + ".npy").ndim, 2)

    def test_004_csa_needs_a_stripmap_recording(self):
        rc, so, se = run(SIM, "sar", "--preset", "tiny", "-o", self.path("ph"))
        self.assertEqual(rc, 0, so + se)
        for algorithm in ("csa", "both"):
            rc, so, se = run(SAR, "--input", self.path("ph"), "--algorithm", algorithm,
                             "-o", self.path("x"), "--backend", "cpu")
            self.assertEqual(rc, 2, so + se)
            self.assertIn(f"--algorithm {algorithm}: needs a stripmap recording", se)


    def test_006_both_side_by_side(self):
        base = stripmap_recording(self)
        out = self.path("both")
        rc, so, se = run(SAR, "--input", base, "--output", out, "--backend", "cpu", "-q",
                         "--algorithm", "both", "--check")
        self.assertEqual(rc, 0, so + se)  # every target focused in both images
        self.assertFalse(os.path.exists(out + ".npy"))
        csa, bp = np.load(out + "-csa.npy"), np.load(out + "-bp.npy")
        self.assertEqual(csa.shape[1], 256)  # slant-range columns
        self.assertNotEqual(bp.shape, csa.shape)  # the ground grid
        self.assertIn("focus report (3 of 3 targets in the image); theory in []: range "
                      "rectangular, azimuth rectangular", so)
        self.assertIn("azimuth none (bp integrates the whole beam)", so)
        # csa's rows carry every theory; bp's lack the azimuth one
        self.assertEqual(len([r for r in map(ROW.match, so.splitlines()) if r]), 3, so)
        self.assertEqual(so.count("focus report (3 of 3 targets in the image)"), 2, so)
        # One PNG, two panels: twice as wide as a single image's, each half mostly the
        # images' dark floor (a single image leaves its right half to the colour bar).
        single = self.path("single")
        rc, so, se = run(SAR, "--input", base, "--output", single, "--backend", "cpu",
                         "-q")
        self.assertEqual(rc, 0, so + se)
        (w2, h2), (w1, h1) = png_size(out + ".png"), png_size(single + ".png")
        self.assertEqual(h2, h1)
        self.assertGreater(w2, 1.8 * w1)
        import matplotlib.image as mpimg
        grey = mpimg.imread(out + ".png")[..., :3].mean(axis=2)
        for half in (grey[:, :w2 // 2], grey[:, w2 // 2:]):
            self.assertGreater(np.mean(half < 0.1), 0.15)


def scene_recording(test, base, *extra):
    return stripmap_recording(test, base, "--no-targets", "--scene", "patch", *extra)


class Scene(AppTest):
    def test_001_scene_is_recorded_and_changes_the_echoes(self):
        with_scene = scene_recording(self, "scene", "--seed", "4")
        without = stripmap_recording(self, "plain", "--no-targets", "--seed", "4")
        with open(with_scene + META) as f:
            g = json.load(f)["global"]
        sc, acq = g["gpuradar:scene"], g["gpuradar:stripmap"]
        self.assertEqual((sc["source"], sc["nx"], sc["ny"], sc["spacing"]),
                         ("patch", 64, 64, 1.0))
        self.assertAlmostEqual(sc["mean_intensity"], (1 + 1 / 4 + 1 / 16) / 4)
        self.assertEqual(sc["phase_seed"], 4)
        # centred on the swath at the middle of the strip
        mid = acq["r0"] + (acq["nrange"] - 1) * 299792458.0 / (4 * acq["fs"])
        self.assertAlmostEqual(sc["x0"] + 31.5, math.sqrt(mid ** 2 - acq["altitude"] ** 2),
                               places=6)
        self.assertAlmostEqual(sc["y0"] + 31.5, g["gpuradar:npulses"] / 2 *
                               acq["velocity"] / acq["prf"], places=6)
        a = np.fromfile(with_scene + DATA, np.complex64)
        b = np.fromfile(without + DATA, np.complex64)
        self.assertEqual(a.size, b.size)
        # the same noise (seed); the scene adds its echoes' energy
        self.assertGreater(np.sum(np.abs(a - b) ** 2), 10 * np.sum(np.abs(b) ** 2))

    def test_002_npy_scene_with_centre_and_spacing(self):
        npy = self.path("refl.npy")
        np.save(npy, np.ones((8, 12)))
        base = stripmap_recording(self, "npy", "--no-targets", "--scene", npy,
                                  "--scene-centre", "2100,200", "--scene-spacing", "2")
        with open(base + META) as f:
            sc = json.load(f)["global"]["gpuradar:scene"]
        self.assertEqual((sc["source"], sc["nx"], sc["ny"], sc["spacing"]), (npy, 12, 8, 2))
        self.assertAlmostEqual(sc["x0"], 2100 - 5.5 * 2)
        self.assertAlmostEqual(sc["y0"], 200 - 3.5 * 2)
        self.assertAlmostEqual(sc["mean_intensity"], 1.0, places=6)

    def test_003_focused_intensity_follows_the_scene(self):
        """Mean |csa image|^2 inside each quadrant of the patch (6 m in from its edges),
        against the first: 1/4, 1/16 and 0. Speckle: ~140 resolution cells per quadrant,
        about 12 % spread of a ratio; the bound is 3 spreads."""
        base = scene_recording(self, "scene")
        out = self.path("img")
        rc, so, se = run(SAR, "--input", base, "--output", out, "--backend", "cpu", "-q",
                         "--no-png")
        self.assertEqual(rc, 0, so + se)
        y0 = float(re.search(r"rows from y = ([-\d.]+) m", so).group(1))
        with open(base + META) as f:
            g = json.load(f)["global"]
        sc, acq = g["gpuradar:scene"], g["gpuradar:stripmap"]
        power = np.abs(np.load(out + ".npy")) ** 2
        rows = y0 + np.arange(power.shape[0]) * acq["velocity"] / acq["prf"]
        cols = acq["r0"] + np.arange(power.shape[1]) * 299792458.0 / (2 * acq["fs"])
        half, margin = 32 * sc["spacing"], 6.0

        def mean_in(qx, qy):
            x = sc["x0"] - 0.5 + qx * half + np.array([margin, half - margin])
            y = sc["y0"] - 0.5 + qy * half + np.array([margin, half - margin])
            r = np.hypot(x, acq["altitude"])
            sel = power[np.ix_((rows >= y[0]) & (rows <= y[1]),
                               (cols >= r[0]) & (cols <= r[1]))]
            self.assertGreater(sel.size, 100)
            return sel.mean()

        ref = mean_in(0, 0)
        self.assertGreater(ref, 0.0)
        for (qx, qy), want in (((1, 0), 1 / 4), ((0, 1), 1 / 16)):
            self.assertLess(abs(mean_in(qx, qy) / ref / want - 1), 0.35, (qx, qy))
        self.assertLess(mean_in(1, 1) / ref, 0.01)


    def test_004_bp_images_the_scene(self):
        """bp's ground grid covers the distributed scene: the bright quadrant's mean
        intensity stands 10 dB above the ground 20-40 m east of the scene (azimuth
        ambiguities repeat along track only)."""
        from gnuradio.gpuradar import stripmap_sim
        base = scene_recording(self, "scene")
        out = self.path("bp")
        rc, so, se = run(SAR, "--input", base, "--output", out, "--backend", "cpu", "-q",
                         "--no-png", "--algorithm", "bp")
        self.assertEqual(rc, 0, so + se)
        sc = stripmap_sim.read(base).scene
        grid = stripmap_sim.bp_grid(sc.acq, sc.targets, sc.npulses, sc.first_pulse_y,
                                    reflectivity=sc.reflectivity)
        power = np.abs(np.load(out + ".npy")) ** 2
        self.assertEqual(power.shape, (grid.ny, grid.nx))  # the grid around the scene
        x = grid.x0 + np.arange(grid.nx) * grid.dx
        y = grid.y0 + np.arange(grid.ny) * grid.dy
        r = sc.reflectivity
        x1, y1 = r.x0 + (r.nx - 1) * r.spacing, r.y0 + (r.ny - 1) * r.spacing

        def mean_in(xa, xb, ya, yb):
            sel = power[np.ix_((y >= ya) & (y <= yb), (x >= xa) & (x <= xb))]
            self.assertGreater(sel.size, 100)
            return sel.mean()

        bright = mean_in(r.x0 + 6, r.x0 + 26, r.y0 + 6, r.y0 + 26)
        east = mean_in(x1 + 20, x1 + 40, r.y0, y1)
        self.assertGreater(10 * math.log10(bright / east), 10.0)


class BadInput(Hardening):
    def sim_fails(self, *args_and_needles):
        args, needles = args_and_needles
        out = self.path("bad")
        self.fails([SIM, "stripmap", "-q", "-o", out, *args], 2, *needles,
                   outputs=(out + DATA, out + META))

    def test_001_every_numeric_argument_is_checked(self):
        cases = [(["--fc", "0"], ["--fc"]), (["--bandwidth", "-1"], ["--bandwidth"]),
                 (["--pulse-width", "nan"], ["--pulse-width"]), (["--fs", "inf"], ["--fs"]),
                 (["--prf", "0"], ["--prf"]), (["--velocity", "-150"], ["--velocity"]),
                 (["--altitude", "-1"], ["--altitude"]),
                 (["--near-range", "0"], ["--near-range"]), (["--nrange", "1"], ["--nrange"]),
                 (["--squint", "0.5"], ["--squint"]),
                 (["--antenna-length", "0"], ["--antenna-length"]),
                 (["--npulses", "0"], ["--npulses"]), (["--noise", "-0.1"], ["--noise"]),
                 (["--first-pulse-y", "nan"], ["--first-pulse-y"]),
                 (["--seed", "-1"], ["--seed"]), (["--target", "1,2,x"], ["--target"]),
                 # accepted by argparse, refused by the block (naming its parameter)
                 (["--prf", "50"], ["stripmap_source", "prf_hz"]),
                 (["--pulse-width", "10u"], ["stripmap_source", "pulse_width_s"]),
                 (["--near-range", "900"], ["stripmap_source", "near_range_m"])]
        for args, needles in cases:
            with self.subTest(args=args):
                self.sim_fails(args, needles)

    def sar_fails(self, base, *needles):
        out = self.path("out")
        self.fails([SAR, "--input", base, "-o", out, "--backend", "cpu", "-q"], 2, *needles,
                   outputs=(out + ".npy", out + ".png"))

    def test_002_bad_or_truncated_recordings(self):
        base = stripmap_recording(self)
        size = os.path.getsize(base + DATA)
        with open(base + DATA, "r+b") as f:
            f.truncate(size - 8)
        self.sar_fails(base, base + DATA, "truncated", "'global.gpuradar:npulses'")
        with open(base + DATA, "r+b") as f:
            f.truncate(size)

        def acq(key, value):
            return lambda m: m["global"]["gpuradar:stripmap"].update({key: value})

        def drop(key):
            return lambda m: m["global"]["gpuradar:stripmap"].pop(key)

        cases = [
            (acq("prf", "fast"), [base + META, "'global.gpuradar:stripmap.prf'"]),
            (acq("nrange", 0), [base + META, "'global.gpuradar:stripmap.nrange'"]),
            (acq("up_chirp", "yes"), [base + META, "'global.gpuradar:stripmap.up_chirp'"]),
            (acq("squint", 1.0), [base + META, "'global.gpuradar:stripmap.squint'"]),
            (drop("velocity"), [base + META, "'global.gpuradar:stripmap.velocity'",
                                "missing"]),
            (acq("fs", 30e6), [base + META, "disagree"]),
            # valid numbers, an impossible acquisition: the block's check, named
            (acq("prf", 50.0), [base + META, "'global.gpuradar:stripmap'", "prf_hz"]),
            (lambda m: m["global"].pop("gpuradar:stripmap"),
             [base + META, "'global.gpuradar:stripmap'", "missing"]),
            (lambda m: m["global"].update({"gpuradar:npulses": 10}),
             [base + DATA, "'global.gpuradar:npulses'"]),
        ]
        self.each_edit_fails(base, cases, self.sar_fails)

    def test_004_bad_scenes(self):
        flat, nans, text = (self.path(n + ".npy") for n in ("flat", "nans", "text"))
        np.save(flat, np.ones(16))
        np.save(nans, np.full((4, 4), np.nan))
        np.save(text, np.array([["a", "b"]]))
        missing = self.path("missing.npy")
        cases = [(["--scene", missing], ["--scene", missing]),
                 (["--scene", flat], ["--scene", flat, "2-D"]),
                 (["--scene", nans], ["--scene", nans, "non-finite"]),
                 (["--scene", text], ["--scene", text, "numbers"]),
                 (["--scene", "patch", "--scene-spacing", "0"], ["--scene-spacing"]),
                 (["--scene", "patch", "--scene-centre", "1"], ["--scene-centre"])]
        for args, needles in cases:
            with self.subTest(args=args):
                self.sim_fails(args, needles)

    def test_005_bad_scene_metadata(self):
        base = stripmap_recording(self, "scene", "--no-targets", "--scene", "patch",
                                  "--npulses", "400")

        def scene(key, value):
            return lambda m: m["global"]["gpuradar:scene"].update({key: value})

        cases = [
            (scene("spacing", -1.0), [base + META, "'global.gpuradar:scene.spacing'"]),
            (scene("nx", 0.5), [base + META, "'global.gpuradar:scene.nx'"]),
            (scene("source", 3), [base + META, "'global.gpuradar:scene.source'"]),
            (lambda m: m["global"].update({"gpuradar:scene": [1]}),
             [base + META, "'global.gpuradar:scene'", "object"]),
        ]
        self.each_edit_fails(base, cases, self.sar_fails)

    def test_003_shorter_than_one_block(self):
        base = stripmap_recording(self, "short", "--npulses", "100")
        self.sar_fails(base, base + DATA, "fewer than one azimuth block")


if __name__ == "__main__":
    unittest.main()
