#!/usr/bin/env python3
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""QA of gnuradio.gpuradar.stripmap_autofocus (CPU backend): a strip of point targets
(stripmap_source) in two groups with a stretch of empty strip between them, defocused by
a per-pulse phase error injected into the raw pulses, or by a true track off the straight
pass chirp scaling assumes (cross-track sinusoid, with and without white track noise),
focused by csa, autofocused, corrected and focused again. After autofocus every target's
azimuth IRW is within 10 % and its PSLR within 1 dB of the error-free image's, the
entropy falls, the estimate is within 0.1 rad RMS of the error over each target's own
pulses (its aperture) once both lose their line there, and the empty stretch gets no
correction. (A part of the error slow over several apertures only shifts the targets;
over a whole stretch the estimate of it wanders by ~0.1 rad.) Noise alone: not
converged; a bright speckled patch without points: no target; bad parameters named.
The per-target terms, chip images and echoes (kernels::pulse_autofocus, sinc16) against
the module docstring's formulas in fp64 NumPy on fresh random pulses, with chips
straddling both ends of the range gate; CUDA against the CPU twin where a device is."""

import math
import unittest

import numpy as np
import pmt
from gnuradio import blocks, gr, gpuradar
from gnuradio.gpuradar import pulse_autofocus as pa
from gnuradio.gpuradar import stripmap_autofocus as sa
from gnuradio.gpuradar import stripmap_sim as ss

ACQ = ss.Acquisition()
NPULSES = 600
#: Slant ranges the targets cycle through: a target's azimuth ambiguities (lambda R PRF /
#: (2 v), 45-50 m along track, ~-28 dB) then fall far from the targets at its range,
#: outside the cuts that measure their PSLR.
RANGES = (2150.0, 2310.0, 2470.0, 2230.0, 2390.0, 2190.0)


def strip_targets():
    """Two groups along track, 15-18 m apart (about half an aperture: the windows overlap),
    y 60-204 m and 300-360 m; pulses ~305-365 see none of them."""
    def at(r, y):
        return ss.Target(math.sqrt(r * r - ACQ.altitude ** 2), y)
    return [at(RANGES[i % len(RANGES)], 60.0 + 18 * i) for i in range(9)] + \
        [at(RANGES[(9 + i) % len(RANGES)], 300.0 + 15 * i) for i in range(5)]


TARGETS = strip_targets()


def simulate(**motion):
    """Raw pulses and, with motion, each pulse's true antenna position."""
    src = gpuradar.stripmap_source(*ACQ.block_args(), [t.x for t in TARGETS],
                                   [t.y for t in TARGETS], [0.0] * len(TARGETS),
                                   [1.0] * len(TARGETS), 0.05, 0.0, NPULSES, 11, **motion)
    snk = blocks.vector_sink_c(ACQ.nrange)
    tb = gr.top_block()
    tb.connect(src, snk)
    tb.run()
    true = np.zeros((NPULSES, 3))
    true[:, 1] = np.arange(NPULSES) * ACQ.dy
    true[:, 2] = ACQ.altitude
    for t in snk.tags():
        if pmt.symbol_to_string(t.key) == "true_position":
            true[t.offset] = pmt.f64vector_elements(t.value)
    return np.array(snk.data(), np.complex64).reshape(-1, ACQ.nrange), true


def target_pulses():
    """(first, last) pulses seeing each target in the processed 3 dB Doppler band
    (|sin theta| <= 0.443 lambda / L, the acquisition unsquinted)."""
    y = np.arange(NPULSES) * ACQ.dy
    half = 0.443 * ss.SPEED_OF_LIGHT / ACQ.fc / ACQ.antenna_length
    out = []
    for t in TARGETS:
        r = np.hypot(t.slant_range(ACQ), y - t.y)
        seen = np.nonzero(np.abs((t.y - y) / r) <= half)[0]
        out.append((int(seen[0]), int(seen[-1])))
    return out


def csa(raw):
    return sa.focus_csa(raw, ACQ, backend="cpu")


def azimuth(image):
    return [(r.azimuth.irw_m, r.azimuth.pslr_db) for r in ss.focus_report(image, ACQ,
                                                                           TARGETS)]


def rel(a, b):
    """|a - b| / |b|; |a| where b is all zero (a random echo window at a gate end may
    hold only pixels beyond the gate, whose image and echo are exactly 0)."""
    nb = np.linalg.norm(b)
    return float(np.linalg.norm(a - b) / nb if nb > 0 else np.linalg.norm(a))


def reference_terms(comp, t, image, first_pulse_y=0.0):
    """D[n, p] and R[n, p] of target t's pulses and chip pixels by the module docstring's
    formulas in fp64: the antenna at (0, y_n, 0), pixel p at (R_p, y_p, 0); v_n read by
    the 16-tap Kaiser (beta 6) windowed sinc at bin b = (R - r0) / dr, its fraction
    rounded to 1/1024 (kernels::pulse_autofocus sinc16), taps beyond the pulse 0; D 0
    where b lies outside the gate."""
    nb = comp.shape[1]
    r0 = ACQ.r0 + ACQ.pulse_width * ss.SPEED_OF_LIGHT / 4
    y_n = first_pulse_y + np.arange(t.first, t.last + 1) * ACQ.dy
    R = np.hypot((image.x0 + t.pcol * image.dx)[None, :],
                 y_n[:, None] - (image.y0 + t.prow * image.dy)[None, :])
    b = (R - r0) / ACQ.dr
    base = np.floor(b)
    offsets = np.arange(-7, 9)
    x = (np.rint((b - base) * 1024) / 1024)[..., None] - offsets
    h = np.sinc(x) * np.i0(6.0 * np.sqrt(np.clip(1 - (x / 8) ** 2, 0, None))) / np.i0(6.0)
    k = base.astype(np.int64)[..., None] + offsets
    rows = np.asarray(comp[t.first:t.last + 1], np.complex128)
    taps = np.where((k >= 0) & (k < nb),
                    rows[np.arange(len(y_n))[:, None, None], np.clip(k, 0, nb - 1)], 0)
    v = np.sum(taps * h, axis=-1)
    inside = (b >= 0) & (b <= nb - 1)
    D = np.where(inside, v * np.exp(4j * np.pi * ACQ.fc / ss.SPEED_OF_LIGHT * R), 0)
    return D, R


def reference_echo(R, img, c, win):
    """g_t(n) = sum_{p in win} tri((R_n(p) - R_n(c)) / dr) exp(-j k (R_n(p) - R_n(c)))
    img[p] (module docstring)."""
    dR = R[:, win] - R[:, [c]]
    h = np.maximum(0.0, 1 - np.abs(dR) / ACQ.dr) * \
        np.exp(4j * np.pi * ACQ.fc / ss.SPEED_OF_LIGHT * dR)
    return np.conj(h) @ img[win]


def edge_targets(backend):
    """Fresh random compressed pulses and the _Targets of three chips on a grid finer
    than the bins and offset from them: one in the middle of the gate, one at each end
    (some of their pixels' bins beyond the gate, their taps beyond the pulses' ends)."""
    seed = int(np.random.SeedSequence().entropy % 2 ** 32)
    rng = np.random.default_rng(seed)
    comp = (rng.standard_normal((NPULSES, ACQ.nrange)) +
            1j * rng.standard_normal((NPULSES, ACQ.nrange))).astype(np.complex64)
    r0 = ACQ.r0 + ACQ.pulse_width * ss.SPEED_OF_LIGHT / 4
    far = r0 + (ACQ.nrange - 1) * ACQ.dr
    dx = 0.8 * ACQ.dr
    x0 = r0 - 4.3 * dx
    ncols = int((far - x0) / dx) + 6
    image = ss.Image(np.zeros((NPULSES, ncols), np.complex64), x0, dx, 0.0, ACQ.dy, True,
                     backend, "")
    cols = (5, int(rng.integers(40, ncols - 40)), int((far - 1.0 - x0) / dx))
    targets = [sa._Target(comp, ACQ, 0.0, image, int(rng.integers(150, 450)), ix, 48, 3,
                          backend) for ix in cols]
    return comp, image, targets, rng, seed


class qa_stripmap_autofocus(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.raw, _ = simulate()
        cls.ref = csa(cls.raw)
        cls.ref_az = azimuth(cls.ref)
        assert len(cls.ref_az) == len(TARGETS)

    def check_refocus(self, raw, injected):
        bad = csa(raw)
        bad_az = azimuth(bad)
        self.assertTrue(all(irw >= 3 * irw0 or pslr > -6 for (irw, pslr), (irw0, _)
                            in zip(bad_az, self.ref_az)),
                        f"the error does not defocus every target enough: {bad_az}")
        r = sa.autofocus(raw, ACQ, bad, backend="cpu")
        self.assertTrue(r.converged, r.reason)
        self.assertLess(r.last_correction_rms, 0.01)
        self.assertEqual(len(r.targets), len(TARGETS))
        # Two stretches: the groups' pulses; between them no target, no correction.
        self.assertEqual(len(r.stretches), 2, r.stretches)
        gap = slice(r.stretches[0][1] + 1, r.stretches[1][0])
        self.assertGreater(gap.stop - gap.start, 40)
        self.assertTrue(np.all(r.phase_error[gap] == 0))
        self.assertFalse(r.observed[gap].any())
        self.assertIn("left uncorrected", r.summary())
        for t, (first, last) in zip(TARGETS, target_pulses()):
            self.assertTrue(r.observed[first:last + 1].all(), t)
            d = pa.detrend(np.unwrap(r.phase_error[first:last + 1] -
                                     injected[first:last + 1]))
            self.assertLessEqual(math.sqrt(float(np.mean(d ** 2))), 0.1, (t, first, last))
        fixed = csa(sa.correct(raw, r.phase_error))
        for t, (irw, pslr), (irw0, pslr0) in zip(TARGETS, azimuth(fixed), self.ref_az):
            self.assertLessEqual(abs(irw / irw0 - 1), 0.10, (t, irw, irw0))
            self.assertLessEqual(abs(pslr - pslr0), 1.0, (t, pslr, pslr0))
        self.assertLess(pa.image_entropy(fixed.data), pa.image_entropy(bad.data) - 0.5)
        self.assertLess(r.entropy_after, r.entropy_before)
        return r

    def test_001_injected_phase_error(self):
        n = np.arange(NPULSES)
        injected = 2.5 * np.sin(2 * np.pi * n / 45 + 0.4) + \
            1.0 * np.sin(2 * np.pi * n / 110 + 1.0)
        self.check_refocus(self.raw * np.exp(1j * injected)[:, None], injected)

    def track(self, noise):
        """A true track 7 mm (about 2.5 rad) across track in a sinusoid of 0.22 s (44
        pulses), plus white noise; the phase error each pulse leaves: 4 pi / lambda times
        the range change to a broadside point on the targets' mean slant range."""
        raw, true = simulate(cross_track_amplitude=0.007, cross_track_period=0.22,
                             cross_track_phase=0.3, cross_track_noise=noise,
                             motion_seed=5)
        r_mean = float(np.mean(RANGES))
        ground = math.sqrt(r_mean ** 2 - ACQ.altitude ** 2)
        point = np.stack([np.full(NPULSES, ground), true[:, 1], np.zeros(NPULSES)], 1)
        nominal = true.copy()
        nominal[:, 0] = 0.0
        nominal[:, 2] = ACQ.altitude
        dist = lambda p: np.linalg.norm(p - point, axis=1)  # noqa: E731
        k = 4 * np.pi * ACQ.fc / ss.SPEED_OF_LIGHT
        return raw, -k * (dist(true) - dist(nominal))

    def test_002_true_track_without_noise(self):
        raw, injected = self.track(0.0)
        self.check_refocus(raw, injected)

    def test_003_true_track_with_white_noise(self):
        raw, injected = self.track(1e-4)
        _, plain = self.track(0.0)
        self.assertGreater(np.std(injected - plain), 0.02)  # the noise is there
        self.check_refocus(raw, injected)

    def test_004_noise_does_not_converge(self):
        rng = np.random.default_rng(7)
        raw = (rng.standard_normal(self.raw.shape) +
               1j * rng.standard_normal(self.raw.shape)).astype(np.complex64)
        image = csa(raw)
        self.assertGreater(np.abs(image.data).max(), 0)
        r = sa.autofocus(raw, ACQ, image, backend="cpu")
        self.assertFalse(r.converged)
        self.assertIn("no point-like content", r.reason)
        self.assertIn("did not converge", r.summary())
        np.testing.assert_array_equal(r.phase_error, 0)

    def test_006_bright_speckle_is_no_target(self):
        # A speckled patch 30 dB above the noise and no point: its brightest speckle
        # stands well above the image's median (the noise), as a point would, but not
        # above its own chip's level.
        patch = ss.reflectivity_from_image(np.full((64, 64), 0.2), ACQ, NPULSES, 0.0, 2.0,
                                           "flat", centre=(2000.0, 200.0), phase_seed=1)
        src = gpuradar.stripmap_source(*ACQ.block_args(), [], [], [], [], 0.05, 0.0,
                                       NPULSES, 11, *ss._scene_args(patch))
        snk = blocks.vector_sink_c(ACQ.nrange)
        tb = gr.top_block()
        tb.connect(src, snk)
        tb.run()
        raw = np.array(snk.data(), np.complex64).reshape(-1, ACQ.nrange)
        image = csa(raw)
        self.assertGreater(len(pa.select_targets(image.data, 48, 64, 15.0, 20.0)), 3)
        r = sa.autofocus(raw, ACQ, image, backend="cpu")
        self.assertFalse(r.converged)
        self.assertIn("no point-like content", r.reason)
        np.testing.assert_array_equal(r.phase_error, 0)

    def test_007_terms_match_numpy_reference(self):
        comp, image, targets, rng, seed = edge_targets("cpu")
        for i, t in enumerate(targets):
            msg = (seed, i)
            self.assertIsNotNone(t.core, msg)
            D, R = reference_terms(comp, t, image)
            self.assertEqual(D.shape, (t.pulses, len(t.prow)), msg)
            self.assertGreater(np.count_nonzero(D), D.size // 2, msg)
            if i != 1:  # an end of the gate: some of the chip's terms beyond it
                self.assertGreater(np.count_nonzero(D == 0), 0, msg)
            # The terms are kept in float: ~1e-7 relative each.
            phi = rng.uniform(-3, 3, NPULSES)
            img = t.image(phi)
            self.assertLess(rel(img, np.exp(-1j * phi[t.first:t.last + 1]) @ D), 1e-5, msg)
            w = rng.standard_normal(D.shape[1]) + 1j * rng.standard_normal(D.shape[1])
            self.assertLess(rel(t.core.project(w), D @ w), 1e-5, msg)
            # Bins in float too: tri() weights off by ~1e-5.
            c = int(rng.integers(0, len(t.prow)))
            win = np.union1d([c], np.nonzero(rng.uniform(size=len(t.prow)) < 0.5)[0])
            self.assertLess(rel(t.echo(img, c, win), reference_echo(R, img, c, win)), 1e-4,
                            msg)

    def test_008_cuda_terms_match_cpu_twin(self):
        from gnuradio.gpuradar import gpuradar_python as gpr
        if not gpr.cuda_available():
            self.skipTest("no CUDA device: " + gpr.cuda_unavailable_reason())
        comp, image, targets, rng, seed = edge_targets("cuda")
        for t in targets:
            cpu = sa._Target(comp, ACQ, 0.0, image, t.iy, t.ix, 48, 3, "cpu")
            self.assertEqual(t.core.backend, "cuda")
            phi = rng.uniform(-3, 3, NPULSES)
            img = cpu.image(phi)
            self.assertLess(rel(t.image(phi), img), 1e-9, seed)
            win = np.arange(0, len(t.prow), 2)
            self.assertLess(rel(t.echo(img, 10, win), cpu.echo(img, 10, win)), 1e-9, seed)
        raw = self.raw * np.exp(1j * 2.0 * np.sin(np.arange(NPULSES) / 7.0))[:, None]
        r = sa.autofocus(raw, ACQ, csa(raw), backend="cuda")
        self.assertTrue(r.converged, r.reason)
        self.assertEqual(r.backend, "cuda")
        self.assertIn("sums on the cuda", r.summary())

    def test_005_bad_parameters_named(self):
        for kw, name in ((dict(method="entropy"), "method"),
                         (dict(max_iterations=0), "max_iterations"),
                         (dict(tolerance_rad=math.nan), "tolerance_rad"),
                         (dict(chip=3), "chip"), (dict(range_chip=33), "range_chip"),
                         (dict(max_targets=0), "max_targets"),
                         (dict(backend="gpu"), "backend")):
            with self.assertRaisesRegex(ValueError, name):
                sa.autofocus(self.raw, ACQ, self.ref, **kw)
        with self.assertRaisesRegex(ValueError, "raw"):
            sa.autofocus(self.raw[:, :-1], ACQ, self.ref)


if __name__ == "__main__":
    unittest.main()
