#!/usr/bin/env python3
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""gpuradar-sim stripmap and gpuradar-sar on stripmap recordings, run as a user runs them
(subprocess, CPU backend, the tiny embedded scene: seconds).

EndToEnd: the recording's files and metadata, the focused image (.npy shape, PNG), every
target's focus report (position, impulse-response widths and sidelobes against the
theory the app prints beside them), --algorithm csa on a phase history refused.
BadInput: every numeric argument of gpuradar-sim stripmap checked, and bad or truncated
stripmap recordings: one line naming the file and the field, status 2, no outputs.

`test_stripmap_apps.py EndToEnd` runs one group.
"""

import json
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
        rc, so, se = run(SAR, "--input", self.path("ph"), "--algorithm", "csa", "-o",
                         self.path("x"), "--backend", "cpu")
        self.assertEqual(rc, 2, so + se)
        self.assertIn("--algorithm csa: needs a stripmap recording", se)


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

    def test_003_shorter_than_one_block(self):
        base = stripmap_recording(self, "short", "--npulses", "100")
        self.sar_fails(base, base + DATA, "fewer than one azimuth block")


if __name__ == "__main__":
    unittest.main()
