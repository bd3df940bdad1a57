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

Autofocus: gpuradar-sar --autofocus pga|entropy refocuses a recording with navigation
errors (entropy and PSLR fall, the estimate matches the error the measured track made),
reports iterations and convergence; without point-like content it does not converge and
keeps the image; bad options named. On a stripmap recording whose raw pulses carry a
phase error, csa --autofocus pga refocuses every target to the error-free recording's
widths and sidelobes, leaves the pulses no target sees uncorrected; entropy, and bp
with --autofocus, refused, named.

`test_sar_motion.py Sar` runs one group.
"""

import json
import os
import sys
import unittest

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_apps import SAR, SIM, AppTest, run  # noqa: E402
from test_stripmap_apps import ROW, TINY_TARGETS  # noqa: E402

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


def entropy(image):
    q = np.abs(image.astype(np.complex128)) ** 2
    p = q[q > 0] / q.sum()
    return float(-(p * np.log(p)).sum())


def pslr_db(image):
    """The highest sidelobe along x (cross range) re the peak, through the brightest
    pixel, its row interpolated 16 times, beyond the main lobe's nulls."""
    row = image[np.unravel_index(int(np.argmax(np.abs(image))), image.shape)[0]]
    n = len(row)
    spec = np.zeros(16 * n, complex)
    spec[:n // 2], spec[-(n - n // 2):] = np.fft.fft(row)[:n // 2], \
        np.fft.fft(row)[n // 2:]
    p = np.abs(np.fft.ifft(spec)) ** 2
    m = int(np.argmax(p))
    lo, hi = m, m
    while lo > 0 and p[lo - 1] < p[lo]:
        lo -= 1
    while hi < len(p) - 1 and p[hi + 1] < p[hi]:
        hi += 1
    side = np.concatenate([p[:lo + 1], p[hi:]])
    return 10 * np.log10(side.max() / p[m])


class Autofocus(AppTest):
    """gpuradar-sar --autofocus on a tiny recording whose measured track is a sinusoid of
    12 mm (+ 0.1 mm white noise) off the true one: ~1.8 rad RMS of phase error."""

    def sim(self, base, *extra):
        rc, so, se = run(SIM, "sar", "--preset", "tiny", "-q", "-o", self.path(base),
                         *extra)
        self.assertEqual(rc, 0, so + se)
        return self.path(base)

    def sar(self, base, out, *extra):
        rc, so, se = run(SAR, "--input", base, "--backend", "cpu", "-q", "--no-png",
                         "-o", self.path(out), *extra)
        self.assertEqual(rc, 0, so + se)
        return np.load(self.path(out) + ".npy"), so

    def test_001_pga_and_entropy_refocus(self):
        base = self.sim("m", "--prf", "50", "--cross-track-sine", "0.012,1.5s,0.3",
                        "--cross-track-noise", "0.0001", "--motion-seed", "2")
        plain, _ = self.sar(base, "plain")
        truth, _ = self.sar(base, "truth", "--geometry", base + TRUE)
        self.assertGreater(pslr_db(plain), -6)  # defocused
        self.assertLess(pslr_db(truth), -12)
        meas = np.fromfile(base + GEOMETRY, "<f8").reshape(-1, 6)
        true = np.fromfile(base + TRUE, "<f8").reshape(-1, 6)
        rng = lambda g: np.linalg.norm(g[:, :3], axis=1)  # noqa: E731
        injected = 4 * np.pi * meas[:, 5] / 299792458.0 * (rng(meas) - rng(true))
        for method in ("pga", "entropy"):
            image, so = self.sar(base, method, "--autofocus", method,
                                 "--autofocus-iterations", "200")
            self.assertRegex(so, rf"autofocus {method}: \d+ target\(s\), converged after "
                                 rf"\d+ iteration\(s\)")
            self.assertLess(entropy(image), entropy(plain) - 0.5, method)
            self.assertLess(pslr_db(image), -12, method)
            estimate = np.load(self.path(method) + ".phase_error.npy")
            self.assertEqual(estimate.shape, (len(meas),))
            if method == "pga":
                d = np.unwrap(estimate - injected)
                n = np.arange(len(d))
                d -= np.polyval(np.polyfit(n, d, 1), n)
                self.assertLess(np.sqrt(np.mean(d ** 2)), 0.1)

    def test_002_no_point_like_content_keeps_the_image(self):
        base = self.sim("n", "--noise", "30")
        plain, _ = self.sar(base, "plain")
        for method in ("pga", "entropy"):
            image, so = self.sar(base, method, "--autofocus", method)
            self.assertIn(f"autofocus {method}: 0 target(s), did not converge", so)
            self.assertIn("no point-like content", so)
            self.assertIn("image kept as formed", so)
            self.assertTrue(os.path.isfile(self.path(method) + ".npy"))
            self.assertFalse(os.path.exists(self.path(method) + ".phase_error.npy"))
            # Formed again in another process: FFTW's measured plans may differ between
            # the two, so the same image to float rounding of its peak, not bit for bit.
            np.testing.assert_allclose(image, plain, rtol=0,
                                       atol=1e-5 * np.abs(plain).max())

    def test_003_bad_autofocus_options_named(self):
        base = self.sim("b")
        for args, needle in ((["--autofocus", "sharpness"], "--autofocus"),
                             (["--autofocus", "pga", "--autofocus-iterations", "0"],
                              "--autofocus-iterations"),
                             (["--autofocus", "pga", "--pulses-per-image", "16"],
                              "--autofocus")):
            rc, so, se = run(SAR, "--input", base, "--backend", "cpu", "-q", "--no-png",
                             "-o", self.path("bad"), *args)
            self.assertEqual(rc, 2, (args, so, se))
            self.assertIn(needle, se)
            self.assertNotIn("Traceback", se)
            self.assertEqual([f for f in os.listdir(self.dir) if f.startswith("bad")], [])

    def stripmap_sar(self, base, out, *extra):
        """gpuradar-sar on a stripmap recording (csa): the image and each target's
        focus-report row (test_stripmap_apps.ROW's numbers)."""
        rc, so, se = run(SAR, "--input", base, "--backend", "cpu", "-q", "--no-png",
                         "-o", self.path(out), *extra)
        self.assertEqual(rc, 0, so + se)
        rows = [[float(x) for x in m.groups()] for m in
                (ROW.match(line.replace("NOT FOCUSED", "")) for line in so.splitlines())
                if m]
        self.assertEqual(len(rows), len(TINY_TARGETS), so)
        return np.load(self.path(out) + ".npy"), rows, so

    def test_004_stripmap_csa_pga_refocuses(self):
        """A tiny stripmap recording whose raw pulses carry a phase error (2.5 rad
        sinusoid of 45 pulses, about an aperture, plus 0.05 rad white): csa --autofocus
        pga brings every target's azimuth IRW within 10 % and PSLR within 1 dB of the
        error-free recording's, the estimate within 0.1 rad RMS of the error over each
        target's aperture (line removed), and leaves the pulses between the targets'
        apertures uncorrected; entropy and bp refused on it, named."""
        rc, so, se = run(SIM, "stripmap", "--preset", "tiny", "-q", "-o", self.path("s"))
        self.assertEqual(rc, 0, so + se)
        base = self.path("s")
        _, truth, _ = self.stripmap_sar(base, "truth")
        with open(base + ".sigmf-meta") as f:
            g = json.load(f)["global"]
        acq, n = g["gpuradar:stripmap"], g["gpuradar:npulses"]
        data = np.fromfile(base + ".sigmf-data", "<c8").reshape(n, acq["nrange"])
        i = np.arange(n)
        injected = 2.5 * np.sin(2 * np.pi * i / 45 + 0.4) + \
            0.05 * np.random.default_rng(3).standard_normal(n)
        (data * np.exp(1j * injected)[:, None]).astype("<c8").tofile(base + ".sigmf-data")
        plain, bad, _ = self.stripmap_sar(base, "plain")
        for r, t in zip(bad, truth):  # [7]: azimuth IRW, [11]: azimuth PSLR
            self.assertTrue(r[7] >= 3 * t[7] or r[11] > -6, (r, t))
        image, fixed, so = self.stripmap_sar(base, "pga", "--autofocus", "pga")
        self.assertRegex(so, r"autofocus pga \(stripmap\): 3 target\(s\), converged after "
                             r"\d+ iteration\(s\)")
        self.assertIn("left uncorrected", so)
        for r, t in zip(fixed, truth):
            self.assertLessEqual(abs(r[7] / t[7] - 1), 0.10, so)
            self.assertLessEqual(abs(r[11] - t[11]), 1.0, so)
        self.assertLess(entropy(image), entropy(plain) - 0.5)
        estimate = np.load(self.path("pga") + ".phase_error.npy")
        self.assertEqual(estimate.shape, (n,))
        lam = 299792458.0 / acq["fc"]
        y = g["gpuradar:first_pulse_y"] + i * acq["velocity"] / acq["prf"]
        half = 0.443 * lam / acq["antenna_length"]  # the 3 dB two-way beam
        for r, along in TINY_TARGETS:
            pulses = np.nonzero(np.abs((along - y) / np.hypot(r, y - along)) <= half)[0]
            d = np.unwrap(estimate[pulses] - injected[pulses])
            d -= np.polyval(np.polyfit(pulses, d, 1), pulses)
            self.assertLess(np.sqrt(np.mean(d ** 2)), 0.1, (r, along))
        # Along track 140-170 m, more than 1.5 half beams (~23 m) from the first two
        # targets (110 and 200 m): no target sees those pulses, no correction.
        gap = (y > 140) & (y < 170)
        self.assertGreater(np.count_nonzero(gap), 30)
        np.testing.assert_array_equal(estimate[gap], 0)
        # entropy, and bp (or both) with --autofocus, are refused on stripmap, named
        for args, needle in ((["--autofocus", "entropy"], "--autofocus entropy"),
                             (["--autofocus", "pga", "--algorithm", "bp"],
                              "--algorithm csa")):
            rc, so, se = run(SAR, "--input", base, "--backend", "cpu", "-q", "--no-png",
                             "-o", self.path("bad"), *args)
            self.assertEqual(rc, 2, (args, so, se))
            self.assertIn(needle, se)
            self.assertNotIn("Traceback", se)
            self.assertEqual([f for f in os.listdir(self.dir) if f.startswith("bad")], [])


if __name__ == "__main__":
    unittest.main()
