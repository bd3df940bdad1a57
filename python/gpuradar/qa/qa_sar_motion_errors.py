#!/usr/bin/env python3
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""QA for the navigation errors of gnuradio.gpuradar.sar_sim (MotionErrors): off, the
recording is what it was; on, the echoes are the true track's and the geometry file the
measured track, measured - true equal to the model written out here; the random parts'
statistics; and the image formed from the measured track defocused as the phase error
predicts (a sinusoidal phase error beta sin(2 pi s / P) over the aperture: the peak
falls to J0(beta) and paired echoes of J1(beta) appear lambda R / (2 P) to each side)."""

import math
import os
import tempfile
import unittest

import numpy as np
from gnuradio import blocks, gr
from gnuradio import gpuradar
from gnuradio.gpuradar import sar_sim, stripmap_sim
from gnuradio.gpuradar.sar_sim import AxisErrors, MotionErrors, Sinusoid

C = 299792458.0


def bessel_j(n, x, terms=40):
    """J_n(x) by its power series (the test's own, |x| < 3 here)."""
    return sum((-1) ** k / (math.factorial(k) * math.factorial(k + n)) * (x / 2) ** (2 * k + n)
               for k in range(terms))


def files(base):
    out = {}
    for suffix in (".sigmf-data", ".geometry.f64", ".sigmf-meta", ".true_geometry.f64"):
        if os.path.exists(base + suffix):
            with open(base + suffix, "rb") as f:
                out[suffix] = f.read()
    return out


class qa_sar_motion_errors(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory(prefix="qa_sar_motion-")
        self.dir = self._tmp.name

    def tearDown(self):
        self._tmp.cleanup()

    def scenario(self, motion=None, **kw):
        kw = dict(dict(npulses=256, nbins=256, image_size=12.0,
                       targets=[sar_sim.Target((0.0, 0.0, 0.0), 1.0)]), **kw)
        return sar_sim.scenario("spotlight", motion=motion, **kw)

    def form(self, rec, geometry_path):
        g = rec.grid
        tb = gr.top_block()
        src = blocks.file_source(gr.sizeof_gr_complex * rec.nbins, rec.data_path)
        geo = blocks.file_source(gr.sizeof_double * 6, geometry_path)
        bp = gpuradar.backprojection(rec.nbins, g.nx, g.ny, g.x0, g.y0, g.dx, g.dy, g.z,
                                     rec.npulses, "restart", "accurate", [], "cpu")
        snk = blocks.vector_sink_c(g.nx)
        tb.connect(src, (bp, 0))
        tb.connect(geo, (bp, 1))
        tb.connect(bp, snk)
        tb.run()
        return np.array(snk.data(), np.complex64).reshape(g.ny, g.nx)

    def test_001_off_changes_nothing(self):
        plain = sar_sim.write(os.path.join(self.dir, "plain"),
                              self.scenario(noise_sigma=0.1, seed=4))
        again = sar_sim.write(os.path.join(self.dir, "again"),
                              self.scenario(None, noise_sigma=0.1, seed=4))
        a, b = files(plain), files(again)
        self.assertEqual(sorted(a), [".geometry.f64", ".sigmf-data", ".sigmf-meta"])
        self.assertEqual(a[".sigmf-data"], b[".sigmf-data"])
        self.assertEqual(a[".geometry.f64"], b[".geometry.f64"])
        self.assertNotIn(b"motion_errors", a[".sigmf-meta"])
        self.assertIsNone(sar_sim.read(plain).true_geometry)
        # Errors on: the echoes are bit for bit those of the true track; zero errors
        # leave the measured track the true one.
        on = self.scenario(MotionErrors(cross_track=AxisErrors(white=0.01)),
                           noise_sigma=0.1, seed=4)
        np.testing.assert_array_equal(on.pulses, self.scenario(noise_sigma=0.1, seed=4).pulses)
        zero = self.scenario(MotionErrors())
        np.testing.assert_array_equal(zero.geometry, zero.true_geometry)

    def test_002_measured_minus_true_is_the_model(self):
        prf = 500.0
        motion = MotionErrors(
            prf=prf, velocity_error_mps=0.3, seed=3,
            cross_track=AxisErrors([Sinusoid(0.02, period_s=0.13, phase_rad=0.4)]),
            vertical=AxisErrors([Sinusoid(0.05, period_m=7.0),
                                 Sinusoid(0.01, period_s=0.05)]))
        h = self.scenario(motion)
        base = sar_sim.write(os.path.join(self.dir, "rec"), h)
        rec = sar_sim.read(base)
        true, meas = rec.true_geometry, rec.geometry
        np.testing.assert_array_equal(meas[:, 3:], true[:, 3:])  # r0, dr, f0 unchanged
        n = len(true)
        t = (np.arange(n) - (n - 1) / 2) / prf
        s = np.hypot(true[:, 0] - true[0, 0], true[:, 1] - true[0, 1])
        # The spotlight path flies east (+x): cross track is north (+y, left), up is z.
        expected = np.stack([0.3 * t,
                             0.02 * np.sin(2 * np.pi * t / 0.13 + 0.4),
                             0.05 * np.sin(2 * np.pi * s / 7.0)
                             + 0.01 * np.sin(2 * np.pi * t / 0.05)], axis=1)
        np.testing.assert_allclose(meas[:, :3] - true[:, :3], expected, rtol=0, atol=1e-9)
        with open(base + ".sigmf-meta") as f:
            text = f.read()
        self.assertIn('"period_m": 7.0', text)
        self.assertIn(".true_geometry.f64", text)

    def test_003_random_walk_and_white_noise(self):
        n, prf = 4096, 2000.0
        path = sar_sim.straight_path((0, 0, 100), (0, 400, 100), n)  # flying north
        walk = MotionErrors(prf=prf, vertical=AxisErrors(random_walk=0.05), seed=11)
        white = MotionErrors(prf=prf, cross_track=AxisErrors(white=0.004), seed=11)
        ew, en = walk.errors(path), white.errors(path)
        self.assertEqual(ew[0, 2], 0.0)
        np.testing.assert_array_equal(ew[:, :2], 0)
        np.testing.assert_array_equal(en[:, 1:], 0)  # north-going: cross track is -x
        # Standard deviations within 5 % (the estimate's own is 1.1 % at 4096 samples).
        self.assertAlmostEqual(np.std(np.diff(ew[:, 2])) / (0.05 / math.sqrt(prf)), 1,
                               delta=0.05)
        self.assertAlmostEqual(np.std(en[:, 0]) / 0.004, 1, delta=0.05)
        self.assertLess(abs(np.mean(en[:, 0])), 4 * 0.004 / math.sqrt(n))
        np.testing.assert_array_equal(MotionErrors(prf=prf, cross_track=AxisErrors(
            white=0.004), seed=11).errors(path), en)
        self.assertFalse(np.array_equal(MotionErrors(prf=prf, cross_track=AxisErrors(
            white=0.004), seed=12).errors(path), en))

    def test_004_measured_track_defocuses_as_the_phase_error_predicts(self):
        h0 = self.scenario()
        g = h0.grid
        lam = C / h0.radar.f0
        path = h0.true_geometry if h0.true_geometry is not None else h0.geometry
        aperture = float(path[-1, 0] - path[0, 0])
        slant = math.hypot(2000.0, 500.0)
        period = aperture / 6  # echoes 6 resolution cells away: nulls of the error-free sinc
        beta = 0.8
        cos_los = 2000.0 / slant  # cross track (+y) onto the line of sight
        amp = beta * lam / (4 * np.pi * cos_los)
        motion = MotionErrors(cross_track=AxisErrors([Sinusoid(amp, period_m=period)]))
        base = sar_sim.write(os.path.join(self.dir, "err"), self.scenario(motion))
        rec = sar_sim.read(base)
        focused = np.abs(self.form(rec, base + ".true_geometry.f64"))
        blurred = np.abs(self.form(rec, base + ".geometry.f64"))
        ix, iy = g.nearest_pixel((0.0, 0.0))
        peak = focused[iy, ix]
        self.assertEqual(np.unravel_index(np.argmax(focused), focused.shape), (iy, ix))
        # The main lobe falls to J0(beta), the echoes rise to J1(beta) (within 0.03 of
        # the peak: the line of sight's small turn across the aperture, the linearised
        # spatial frequency, and the pixel sampling of the echoes' positions).
        self.assertAlmostEqual(blurred[iy, ix] / peak, bessel_j(0, beta), delta=0.03)
        offset = lam * slant / (2 * period)
        k = int(round(offset / g.dx))
        for side in (-1, 1):
            window = blurred[iy, ix + side * k - 2:ix + side * k + 3]
            self.assertAlmostEqual(window.max() / peak, bessel_j(1, beta), delta=0.03,
                                   msg=f"echo at {side * offset:+.2f} m")
            # nothing there in the focused image (a null of its sinc)
            self.assertLess(focused[iy, ix + side * k - 2:ix + side * k + 3].max() / peak,
                            0.1)

    def test_004b_a_slow_sinusoid_broadens_the_main_lobe_as_predicted(self):
        """Half a period over the aperture: a mostly quadratic phase error that widens
        the -3 dB width; its ratio to the error-free width against the aperture's
        response with the phase error, summed here in one dimension."""
        res = C / (2 * 300e6)
        kw = dict(pixel=res / 8, image_size=6.0)
        h0 = self.scenario(**kw)
        lam = C / h0.radar.f0
        xs = h0.geometry[:, 0]
        aperture = float(xs[-1] - xs[0])
        slant = math.hypot(2000.0, 500.0)
        beta = 3.5
        amp = beta * lam / (4 * np.pi * (2000.0 / slant))
        motion = MotionErrors(cross_track=AxisErrors([Sinusoid(amp,
                                                               period_m=2 * aperture)]))
        base = sar_sim.write(os.path.join(self.dir, "slow"), self.scenario(motion, **kw))
        rec = sar_sim.read(base)
        g = rec.grid
        ix, iy = g.nearest_pixel((0.0, 0.0))

        def width(cut, i):  # -3 dB width in pixels about the cut's peak near i
            j = i - 8 + int(np.argmax(cut[i - 8:i + 9]))
            half = cut[j] / math.sqrt(2)
            lo, hi = j, j
            while cut[lo] > half:
                lo -= 1
            while cut[hi] > half:
                hi += 1
            return (hi - (half - cut[hi]) / (cut[hi - 1] - cut[hi])) - \
                (lo + (half - cut[lo]) / (cut[lo + 1] - cut[lo]))

        measured = [width(np.abs(self.form(rec, base + suffix))[iy], ix)
                    for suffix in (".true_geometry.f64", ".geometry.f64")]
        # The aperture's response along x: pulse at x_i, linearised two-way phase
        # 4 pi x_i u / (lambda R), times the model's phase error.
        u = (np.arange(g.nx) - ix) * g.dx
        phase_error = beta * np.sin(2 * np.pi * (xs - xs[0]) / (2 * aperture))
        predicted = [width(np.abs(np.exp(1j * pe + 4j * np.pi * np.outer(u, xs) / (lam * slant))
                                  .sum(axis=1)), ix)
                     for pe in (np.zeros_like(xs), phase_error)]
        self.assertGreater(measured[1] / measured[0], 2.0)  # visibly defocused
        # 3 %: the linearised phase and the pixel sampling of the half-power points
        self.assertAlmostEqual((measured[1] / measured[0]) / (predicted[1] / predicted[0]),
                               1.0, delta=0.03)

    def test_006_stripmap_tracks_and_the_peak_loss(self):
        """stripmap_sim: the echoes are the straight pass's whatever the errors; the track
        files hold the measured and true tracks; backprojection from the measured track
        loses the peak to J0(beta) (the n = 0 term of exp(j beta sin) is J0(beta) times
        the error-free history, whatever the antenna weighting)."""
        scene = stripmap_sim.presets()["tiny"]
        scene.noise_sigma = 0.0
        scene.npulses = 600
        scene.targets = scene.targets[:1]
        a = scene.acq
        t0 = scene.targets[0]
        slant = t0.slant_range(a)
        lam = C / a.fc
        beta = 1.0
        # cross track is west (-x) for a pass flying north; the target lies east
        amp = beta * lam / (4 * np.pi * (t0.x / slant))
        plain = stripmap_sim.simulate(scene, os.path.join(self.dir, "plain"))
        scene.motion = MotionErrors(cross_track=AxisErrors([Sinusoid(amp, period_m=4.0)]))
        base = stripmap_sim.simulate(scene, os.path.join(self.dir, "moved"))
        self.assertEqual(files(plain)[".sigmf-data"], files(base)[".sigmf-data"])
        self.assertFalse(os.path.exists(plain + stripmap_sim.TRACK_SUFFIX))
        rec = stripmap_sim.read(base)
        self.assertIsNone(stripmap_sim.read(plain).track)
        true = rec.true_track
        np.testing.assert_array_equal(true[:, 0], 0.0)
        np.testing.assert_allclose(true[:, 1], scene.first_pulse_y +
                                   np.arange(scene.npulses) * a.dy, rtol=0, atol=1e-9)
        s = true[:, 1] - true[0, 1]
        np.testing.assert_allclose(rec.track - true, np.stack(
            [-amp * np.sin(2 * np.pi * s / 4.0), 0 * s, 0 * s], axis=1), rtol=0, atol=1e-12)
        grid = sar_sim.Grid(t0.x - 12.0, t0.y - 12.0, a.dr / 3, a.antenna_length / 6, 29, 73)
        focused = np.abs(stripmap_sim.focus_bp(rec, grid, "cpu", track=true).data)
        blurred = np.abs(stripmap_sim.focus_bp(rec, grid, "cpu").data)
        peak = np.unravel_index(np.argmax(focused), focused.shape)
        self.assertLess(abs(peak[1] * grid.dx + grid.x0 - t0.x), grid.dx * 1.5)
        # 0.02: the sidebands' sidelobes at the peak (their echoes lie ~8 m away)
        self.assertAlmostEqual(blurred[peak] / focused[peak], bessel_j(0, beta), delta=0.02)

    def test_007_bad_track_files_are_named(self):
        motion = MotionErrors(vertical=AxisErrors(white=0.001))
        base = sar_sim.write(os.path.join(self.dir, "r"), self.scenario(motion, npulses=16))
        with open(base + ".true_geometry.f64", "ab") as f:
            f.write(b"\0" * 8)
        with self.assertRaisesRegex(sar_sim.RecordingError,
                                    r"r\.true_geometry\.f64: 776 bytes, not"):
            sar_sim.read(base)
        with open(base + ".sigmf-meta") as f:
            text = f.read()
        with open(base + ".sigmf-meta", "w") as f:
            f.write(text.replace('"r.true_geometry.f64"', '"../r.true_geometry.f64"'))
        with self.assertRaisesRegex(sar_sim.RecordingError, "true_geometry_file"):
            sar_sim.read(base)
        scene = stripmap_sim.presets()["tiny"]
        scene.npulses = 8
        scene.motion = motion
        sbase = stripmap_sim.simulate(scene, os.path.join(self.dir, "s"))
        track = np.fromfile(sbase + ".track.f64", "<f8")
        track[7] = np.nan
        track.tofile(sbase + ".track.f64")
        with self.assertRaisesRegex(sar_sim.RecordingError, r"s\.track\.f64: pulse 2: "
                                                            r"non-finite"):
            stripmap_sim.read(sbase)

    def test_005_bad_parameters_are_named(self):
        path = sar_sim.straight_path((0, 0, 0), (10, 0, 0), 8)
        for motion, word in (
                (MotionErrors(prf=0.0), "prf"),
                (MotionErrors(velocity_error_mps=float("nan")), "velocity error"),
                (MotionErrors(cross_track=AxisErrors([Sinusoid(-1.0, period_s=1.0)])),
                 "cross-track sinusoid 0: amplitude"),
                (MotionErrors(vertical=AxisErrors([Sinusoid(1.0)])), "vertical sinusoid 0"),
                (MotionErrors(vertical=AxisErrors([Sinusoid(1.0, 1.0, 2.0)])), "exactly one"),
                (MotionErrors(vertical=AxisErrors([Sinusoid(1.0, period_m=0.0)])), "period"),
                (MotionErrors(cross_track=AxisErrors(random_walk=-1.0)), "cross-track random"),
                (MotionErrors(vertical=AxisErrors(white=float("inf"))), "vertical white")):
            with self.assertRaisesRegex(ValueError, word):
                motion.errors(path)


if __name__ == "__main__":
    unittest.main(verbosity=2)
