#!/usr/bin/env python3
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""QA for azimuth and elevation through the path a user builds (CPU backend):
radar_scene_source with a 4 x 4 uniform rectangular array in the x-z plane (a target at
an azimuth and an elevation) -> pulse_framer per channel -> streams_to_vector ->
beamformer (element_rows = 4: the URA; a fan of 5 azimuths times 5 elevations) ->
pulse_doppler_processor -> cfar_2d(angles=True) -> the detections' azimuth_deg,
elevation_deg and their standard deviations (angle_chain.py builds the chain).

As qa_angle_estimation for the ULA: Monte-Carlo over CPIs at 20 dB per channel in the
target's cell (calibrated against the scene source through the chain), against the
Cramer-Rao bound of the whole array's complex data at that cell, written here from the
URA's geometry with both angles and the amplitude unknown. Targets lie off the beams'
centres and at an azimuth other than their elevation, so that angles swapped anywhere
(scene, beamformer, estimator) fail."""

import numpy as np
from gnuradio import blocks, gr, gr_unittest
from gnuradio import gpuradar
from gnuradio.gpuradar import detections

from angle_chain import C, angle_chain

NX = NZ = 4
AZ = np.linspace(-24.0, 24.0, 5)  # 12 deg apart: about half the 4-wide beam
EL = np.linspace(-24.0, 24.0, 5)


def positions_wl():
    """Element iz * NX + ix of the centred half-wavelength URA (x, y, z wavelengths)."""
    n = np.arange(NX * NZ)
    return np.stack([(n % NX - (NX - 1) / 2) * 0.5, np.zeros(n.size),
                     (n // NX - (NZ - 1) / 2) * 0.5], axis=1)


def direction_vectors(az_deg, el_deg):
    """u and its derivatives in az and el (boresight +y, elevation towards +z)."""
    az, el = np.radians(az_deg), np.radians(el_deg)
    u = np.array([np.sin(az) * np.cos(el), np.cos(az) * np.cos(el), np.sin(el)])
    du_az = np.array([np.cos(az) * np.cos(el), -np.sin(az) * np.cos(el), 0.0])
    du_el = np.array([-np.sin(az) * np.sin(el), -np.cos(az) * np.sin(el), np.cos(el)])
    return u, du_az, du_el


class qa_elevation_estimation(angle_chain, gr_unittest.TestCase):
    nch = NX * NZ
    # The beamformer's grid in its documented order: rows of azimuths, one per elevation.
    beams = np.tile(AZ, len(EL))
    beam_elevations = np.repeat(EL, len(AZ))

    def scene_direction(self, direction):
        az, el = direction
        xyz = (positions_wl() * C / self.fc).ravel().tolist()
        return {"azimuths_deg": [az], "elevations_deg": [el],
                "element_positions_m": xyz}

    def beamformer_kwargs(self, beams, taper):
        return {"nbeams": len(AZ), "fan_first_deg": AZ[0], "fan_last_deg": AZ[-1],
                "nbeams_el": len(EL), "fan_el_first_deg": EL[0], "fan_el_last_deg": EL[-1],
                "element_rows": NZ, "element_spacing_wl": 0.5}

    def weights(self, taper):
        w = gpuradar.beamformer_weights(
            positions_wl().ravel().tolist(), 1.0, self.beams.tolist(), taper,
            beam_elevations_deg=self.beam_elevations.tolist(), element_rows=NZ)
        return np.array(w).reshape(len(self.beams), self.nch)

    def pattern(self, taper, direction):
        """g_b = sum_c W[b][c] a_c(az, el): beam b's voltage for a unit wave."""
        u, _, _ = direction_vectors(*direction)
        return self.weights(taper) @ np.exp(2j * np.pi * positions_wl() @ u)

    def crb_deg(self, direction, snr):
        """Cramer-Rao bounds of (azimuth, elevation) for one snapshot of the URA, both
        angles and the complex amplitude unknown: J_ij = 2 snr Re(d_i^H P d_j),
        d_i = da/d(angle i), P the projection orthogonal to a; the bounds are the
        diagonal of J^-1."""
        u, du_az, du_el = direction_vectors(*direction)
        p = positions_wl()
        a = np.exp(2j * np.pi * p @ u)
        d = [2j * np.pi * (p @ du) * a for du in (du_az, du_el)]
        proj = np.eye(len(a)) - np.outer(a, a.conj()) / len(a)
        j = np.array([[2 * snr * np.real(di.conj() @ proj @ dj) for dj in d] for di in d])
        return np.degrees(np.sqrt(np.diag(np.linalg.inv(j))))

    def test_001_rms_errors_within_1p5_crb_at_20db_per_channel(self):
        ncpi = 300
        for direction, seed in (((9.0, 5.0), 31), ((-17.0, -8.0), 32)):
            az0, el0 = direction
            # The beam steered nearest the target peaks in the noise-free map.
            _, clean = self.run_chain(direction, 20.0, 0.0, 1, 1, "rectangular",
                                      angles=False)
            b = np.unravel_index(np.argmax(clean[0]), clean[0].shape)[1]
            self.assertLessEqual(abs(self.beams[b] - az0), 6.0)
            self.assertLessEqual(abs(self.beam_elevations[b] - el0), 6.0)
            found = self.monte_carlo_detections(direction, "rectangular", seed, ncpi)
            crb = self.crb_deg(direction, 100.0)
            for k, (axis, truth) in enumerate((("azimuth", az0), ("elevation", el0))):
                est = np.array([d[axis + "_deg"] for d in found])
                std = np.array([d[axis + "_std_deg"] for d in found])
                rms = np.sqrt(np.mean((est - truth) ** 2))
                what = f"{axis} at {direction}: rms {rms:.4f} crb {crb[k]:.4f}"
                print(what, f"reported {np.mean(std):.4f}")
                self.assertLessEqual(rms, 1.5 * crb[k], what)
                # Nothing beats the bound by more than the RMS's sampling error (~4 %).
                self.assertGreaterEqual(rms, 0.8 * crb[k], what)
                self.assertAlmostEqual(np.mean(std) / rms, 1.0, delta=0.25,
                                       msg=f"{what} reported {np.mean(std):.4f}")
                # Unbiased (and not the other angle): within 4 standard errors.
                self.assertLess(abs(np.mean(est) - truth), 4 * rms / np.sqrt(ncpi), what)

    def test_002_the_fan_grid_is_in_its_documented_order(self):
        bf = gpuradar.beamformer(16, 8, nbeams=3, fan_first_deg=-10, fan_last_deg=10,
                                 nbeams_el=2, fan_el_first_deg=-5, fan_el_last_deg=15,
                                 element_rows=4, backend="cpu")
        self.assertEqual(list(bf.beam_angles_deg()), [-10, 0, 10, -10, 0, 10])
        self.assertEqual(list(bf.beam_elevations_deg()), [-5, -5, -5, 15, 15, 15])
        listed = gpuradar.beamformer(4, 8, [-10.0, 20.0], 0,
                                     beam_elevations_deg=[30.0, -40.0], backend="cpu")
        self.assertEqual(list(listed.beam_elevations_deg()), [30.0, -40.0])
        # Listed beams are steered at their elevations: a unit wave from (10, 20) on
        # the URA comes out of the beam listed at (10, 20) with amplitude 1 and not out
        # of the one at (20, 10) (azimuth and elevation swapped).
        bf = gpuradar.beamformer(16, 1, [10.0, 20.0], 0, beam_elevations_deg=[20.0, 10.0],
                                 element_rows=NZ, window="hamming", backend="cpu")
        u, _, _ = direction_vectors(10.0, 20.0)
        wave = np.exp(2j * np.pi * positions_wl() @ u).astype(np.complex64)
        tb = gr.top_block()
        sink = blocks.vector_sink_c(2)
        tb.connect(blocks.vector_source_c(wave.tolist(), False, 16), bf, sink)
        tb.run()
        out = np.array(sink.data())
        self.assertAlmostEqual(abs(out[0]), 1.0, places=5)
        self.assertLess(abs(out[1]), 0.9)
        # Without elevations every beam is at 0: the azimuth-only beamformer.
        self.assertEqual(list(gpuradar.beamformer(4, 8, [5.0], 0, backend="cpu")
                              .beam_elevations_deg()), [0.0])

    def test_006_grid_monopulse_from_powers_in_python(self):
        # The kernel's grid estimate from Python: a noise-free wave from (7.5, -9) deg
        # through the grid's weights, its powers, both angles back; a wrong length is
        # an error naming the argument.
        w = self.weights("rectangular")
        mp = gpuradar.grid_monopulse(positions_wl().ravel().tolist(), 1.0,
                                     w.ravel().tolist(), self.beams.tolist(),
                                     self.beam_elevations.tolist())
        p = (1e3 * abs(self.pattern("rectangular", (7.5, -9.0)))) ** 2
        e = mp.estimate_from_powers(p.tolist(), 0, 1e-3 * np.sum(abs(w[0]) ** 2))
        self.assertAlmostEqual(e["azimuth_deg"], 7.5, places=3)
        self.assertAlmostEqual(e["elevation_deg"], -9.0, places=3)
        self.assertGreater(e["elevation_std_deg"], 0)
        with self.assertRaisesRegex(ValueError, "powers"):
            mp.estimate_from_powers([1.0, 2.0], 0, 1.0)

    def test_003_bad_parameters_name_themselves(self):
        def bf(**kw):
            return gpuradar.beamformer(16, 8, backend="cpu", **kw)
        for kw, name in (
                ({"beam_angles_deg": [0.0, 10.0], "beam_elevations_deg": [0.0]},
                 "beam_elevations_deg"),
                ({"beam_angles_deg": [0.0], "beam_elevations_deg": [95.0]},
                 "beam_elevations_deg"),
                ({"nbeams": 4, "beam_elevations_deg": [0.0]}, "beam_elevations_deg"),
                ({"nbeams": 4, "nbeams_el": 0}, "nbeams_el"),
                ({"nbeams": 4, "nbeams_el": 2, "fan_el_first_deg": -91.0},
                 "fan_el_first_deg"),
                ({"nbeams": 4, "nbeams_el": 2, "fan_el_last_deg": float("nan")},
                 "fan_el_last_deg"),
                ({"nbeams": 4, "element_rows": 3}, "element_rows"),
                ({"nbeams": 4, "element_rows": 0}, "element_rows")):
            with self.assertRaisesRegex(ValueError, name, msg=str(kw)):
                bf(**kw)
        for make in (
                lambda **kw: gpuradar.radar_scene_source(
                    2e6, 3e9, 1e4, 1e6, 10e-6, [], [6000.0], [0.0], [10.0], nchannels=4,
                    **kw),
                lambda **kw: gpuradar.radar_channel(
                    2e6, 3e9, [6000.0], [0.0], [10.0], nchannels=4, **kw)):
            with self.assertRaisesRegex(ValueError, "elevations_deg"):
                make(elevations_deg=[1.0, 2.0])
            with self.assertRaisesRegex(ValueError, r"elevations_deg\[0\]"):
                make(elevations_deg=[90.5])

    def test_004_an_azimuth_fan_reports_no_elevation(self):
        # The 4 x 4 array behind a fan at one elevation: azimuths only, as before.
        self.beamformer_kwargs = lambda beams, taper: {
            "beam_angles_deg": list(beams), "element_rows": NZ}
        pdus, _ = self.run_chain((9.0, 0.0), 30.0, 1.0, 2, 5, "rectangular",
                                 beams=AZ)
        dets = [d for msg in pdus for d in detections.pdu_to_dicts(msg)]
        self.assertTrue(any("azimuth_deg" in d for d in dets))
        self.assertFalse(any("elevation_deg" in d for d in dets))

    def test_005_tracker_follows_the_elevation(self):
        # One confirmed track whose filtered azimuth and elevation lie within 4 of their
        # standard deviations of the truth, each more accurate than one detection's.
        self.expect_tracked((-13.0, 7.0), ("azimuth", "elevation"), 41)

if __name__ == "__main__":
    gr_unittest.run(qa_elevation_estimation)
