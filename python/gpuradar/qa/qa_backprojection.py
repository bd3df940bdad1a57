#!/usr/bin/env python3
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""QA for gpuradar.backprojection (CPU backend) and gpuradar.sar_sim.

sar_sim -> SigMF recording -> file sources -> backprojection -> peaks at the truth
pixels; the image against an fp64 numpy backprojection; restart vs accumulate;
non-finite geometry; bad parameters.
"""

import dataclasses
import math
import os
import tempfile

import numpy as np
import pmt
from gnuradio import blocks, gr, gr_unittest
from gnuradio import gpuradar
from gnuradio.gpuradar import sar_sim

C = 299792458.0


def reference_image(pulses, geometry, grid):
    """fp64 backprojection (CONVENTIONS.md): linear interpolation, exp(+j 4 pi f0 R / c)."""
    x = grid.x0 + grid.dx * np.arange(grid.nx)
    y = grid.y0 + grid.dy * np.arange(grid.ny)
    px, py = np.meshgrid(x, y)
    img = np.zeros((grid.ny, grid.nx), np.complex128)
    nbins = pulses.shape[1]
    for p, (ax, ay, az, r0, dr, f0) in zip(pulses.astype(np.complex128), geometry):
        if not np.all(np.isfinite([ax, ay, az, r0, dr, f0])) or dr <= 0:
            continue
        r = np.sqrt((px - ax) ** 2 + (py - ay) ** 2 + (grid.z - az) ** 2)
        b = (r - r0) / dr
        inside = (b >= 0) & (b <= nbins - 1)
        k = np.clip(np.floor(b).astype(np.int64), 0, nbins - 2)
        w = b - k
        v = (1 - w) * p[k] + w * p[k + 1]
        img += np.where(inside, v * np.exp(4j * np.pi * f0 * r / C), 0)
    return img


def ser_db(img, ref):
    return 10 * math.log10(np.sum(np.abs(ref) ** 2) / np.sum(np.abs(img - ref) ** 2))


class qa_backprojection(gr_unittest.TestCase):
    def setUp(self):
        self.tb = gr.top_block()
        self.tmp = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.tb = None
        self.tmp.cleanup()

    def form(self, rec, pulses_per_image=None, mode="restart", precision="fast", nz=1,
             dz=1.0, **algorithm):
        """Recording -> file sources -> backprojection (CPU) -> images (n, nz*ny, nx);
        the sink's tags in self.tags."""
        g = rec.grid
        tb = gr.top_block()
        src = blocks.file_source(gr.sizeof_gr_complex * rec.nbins, rec.data_path)
        geo = blocks.file_source(gr.sizeof_double * 6, rec.geometry_path)
        bp = gpuradar.backprojection(rec.nbins, g.nx, g.ny, g.x0, g.y0, g.dx, g.dy, g.z,
                                     pulses_per_image or rec.npulses, mode, precision,
                                     [], "cpu", nz, dz, **algorithm)
        snk = blocks.vector_sink_c(g.nx)
        tb.connect(src, (bp, 0))
        tb.connect(geo, (bp, 1))
        tb.connect(bp, snk)
        tb.run()
        self.tags = snk.tags()
        return np.array(snk.data(), np.complex64).reshape(-1, nz * g.ny, g.nx), bp

    def record(self, history, name="rec"):
        return sar_sim.read(sar_sim.write(os.path.join(self.tmp.name, name), history))

    def assert_focused(self, image, rec):
        for f in sar_sim.focus(image, rec.grid, rec.targets):
            self.assertLessEqual(f.offset_px, math.sqrt(2), f)
            self.assertGreater(f.peak_db, -12, f)

    def test_001_recording_round_trip(self):
        h = sar_sim.scenario("spotlight", npulses=64, nbins=256, image_size=20,
                             noise_sigma=0.01)
        rec = self.record(h)
        np.testing.assert_array_equal(rec.pulses, h.pulses)
        np.testing.assert_array_equal(rec.geometry, h.geometry)
        self.assertEqual(rec.grid, h.grid)
        self.assertEqual([t.position for t in rec.targets], [t.position for t in h.targets])
        self.assertEqual([complex(t.amplitude) for t in rec.targets],
                         [complex(t.amplitude) for t in h.targets])
        self.assertEqual(rec.field("nbins"), 256)
        self.assertEqual(rec.meta["global"]["core:datatype"], "cf32_le")
        self.assertEqual(os.path.getsize(rec.geometry_path), 64 * 6 * 8)
        # Geometry rows [x, y, z, r0, dr, f0]; the gate is centred on the scene.
        ant = rec.geometry[:, :3]
        np.testing.assert_allclose(rec.geometry[:, 3],
                                   np.linalg.norm(ant, axis=1) - 128 * h.radar.dr)
        np.testing.assert_allclose(rec.geometry[:, 4:], [[h.radar.dr, 10e9]] * 64)

    def test_002_point_targets_focus_at_their_true_pixels(self):
        for kind in ("spotlight", "stripmap"):
            rec = self.record(sar_sim.scenario(kind, npulses=256, nbins=512), kind)
            images, bp = self.form(rec)
            self.assertEqual(images.shape[0], 1)
            self.assert_focused(images[0], rec)
            self.assertEqual(bp.skipped_pulses(), 0)

    def test_003_circular_path_focuses(self):
        h = sar_sim.scenario("circular", npulses=720, nbins=512, standoff=1000,
                             image_size=16)
        rec = self.record(h)
        images, _ = self.form(rec)
        self.assert_focused(images[0], rec)

    def test_004_image_matches_fp64_reference(self):
        h = sar_sim.scenario("spotlight", npulses=48, nbins=256, image_size=6, pixel=0.2,
                             noise_sigma=0.05)
        rec = self.record(h)
        ref = reference_image(rec.pulses, rec.geometry, rec.grid)
        fast, _ = self.form(rec, precision="fast")
        accurate, _ = self.form(rec, precision="accurate")
        self.assertGreaterEqual(ser_db(fast[0], ref), 60)
        self.assertGreaterEqual(ser_db(accurate[0], ref), 60)

    def test_010_spaceborne_x_band_accurate(self):
        # ~800 km slant range, X band: the accurate mode against the fp64 reference.
        h = sar_sim.scenario("spotlight", npulses=96, nbins=256, standoff=600e3,
                             altitude=530e3, image_size=6, pixel=0.2, noise_sigma=0.01)
        rec = self.record(h)
        self.assertGreater(rec.geometry[0, 3], 799e3)
        images, bp = self.form(rec, precision="accurate")
        self.assertEqual(bp.precision(), "accurate")
        self.assert_focused(images[0], rec)
        ref = reference_image(rec.pulses, rec.geometry, rec.grid)
        self.assertGreaterEqual(ser_db(images[0], ref), 100)

    def test_005_restart_vs_accumulate(self):
        h = sar_sim.scenario("spotlight", npulses=2 * 40 + 7, nbins=256, image_size=8)
        rec = self.record(h)
        restart, _ = self.form(rec, pulses_per_image=40, mode="restart")
        accumulate, bp = self.form(rec, pulses_per_image=40, mode="accumulate")
        self.assertEqual(restart.shape[0], 2)  # the 7-pulse remainder is not emitted
        self.assertEqual(bp.images(), 2)
        self.assertEqual(bp.mode(), "accumulate")
        np.testing.assert_allclose(restart[0], accumulate[0], rtol=0, atol=1e-3)
        both = restart[0].astype(np.complex128) + restart[1]
        scale = np.abs(both).max()
        np.testing.assert_allclose(accumulate[1] / scale, both / scale, rtol=0, atol=1e-5)

    def test_006_non_finite_geometry_is_skipped_and_counted(self):
        h = sar_sim.scenario("spotlight", npulses=64, nbins=256, image_size=8)
        h.geometry[5, 0] = np.nan
        h.geometry[17, 5] = np.inf
        h.geometry[30, 4] = 0.0  # dr <= 0
        rec = self.record(h)
        images, bp = self.form(rec)
        self.assertEqual(bp.skipped_pulses(), 3)
        self.assertTrue(np.all(np.isfinite(images)))
        ref = reference_image(rec.pulses, rec.geometry, rec.grid)
        self.assertGreaterEqual(ser_db(images[0], ref), 60)

    def test_007_bad_parameters_raise_naming_them(self):
        good = dict(nbins=16, nx=4, ny=4, x0=0.0, y0=0.0, dx=1.0, dy=1.0, z=0.0,
                    pulses_per_image=1, mode="restart", precision="fast", height=[],
                    backend="cpu")
        gpuradar.backprojection(**dict(good, nbins=2, nx=1, ny=1))  # boundaries pass
        for change, name in ((dict(nbins=1), "nbins"), (dict(nx=0), "nx"),
                             (dict(ny=0), "ny"), (dict(dx=0.0), "dx"),
                             (dict(dy=-1.0), "dy"), (dict(pulses_per_image=0),
                                                     "pulses_per_image"),
                             (dict(mode="restarted"), "mode"),
                             (dict(precision="double"), "precision"),
                             (dict(height=[0.0] * 15), "height"),
                             (dict(nz=0), "nz"), (dict(nz=65536), "nz"),
                             (dict(dz=0.0), "dz"), (dict(dz=float("nan")), "dz"),
                             (dict(nx=1 << 16, ny=1 << 15), "GiB"),
                             (dict(nbins=(1 << 24) + 1), "nbins"),
                             (dict(backend="gpu"), "backend"),
                             (dict(device=-1), "device must be >= 0")):
            with self.assertRaisesRegex(ValueError, name):
                gpuradar.backprojection(**dict(good, **change))
        # The CPU backend keeps the index it was given and does not use it.
        self.assertEqual(gpuradar.backprojection(**dict(good, device=2)).device(), 2)

    def test_020_factorized_matches_direct_image_for_image(self):
        # Two images of 128 pulses each (restart), formed by FFBP and by direct.
        h = sar_sim.scenario("spotlight", npulses=256, nbins=512, noise_sigma=0.01)
        rec = self.record(h)
        direct, _ = self.form(rec, pulses_per_image=128, precision="accurate")
        ffbp, bp = self.form(rec, pulses_per_image=128, algorithm="factorized")
        self.assertEqual(bp.algorithm(), "factorized")
        self.assertEqual(ffbp.shape, direct.shape)
        self.assertEqual(ffbp.shape[0], 2)
        for i in range(2):
            self.assertGreaterEqual(ser_db(ffbp[i], direct[i]), 30, i)
        self.assert_focused(ffbp[0] + ffbp[1], rec)
        # The knobs reach the kernel: low orders at low oversampling lose accuracy.
        rough, _ = self.form(rec, pulses_per_image=128, algorithm="factorized",
                             ffbp_order_range=2, ffbp_order_angle=2,
                             ffbp_oversample_range=1.25, ffbp_oversample_angle=1.25)
        self.assertLess(ser_db(rough[0], direct[0]), ser_db(ffbp[0], direct[0]) - 10)

    def test_021_bad_factorized_parameters_raise_naming_them(self):
        good = dict(nbins=16, nx=4, ny=4, x0=0.0, y0=0.0, dx=1.0, dy=1.0, z=0.0,
                    pulses_per_image=16, backend="cpu", algorithm="factorized")
        gpuradar.backprojection(**dict(good, ffbp_stages=2, ffbp_order_range=16,
                                       ffbp_oversample_angle=8.0))  # boundaries pass
        for change, name in ((dict(algorithm="fast"), "algorithm"),
                             (dict(ffbp_order_range=3), "order_range"),
                             (dict(ffbp_order_angle=18), "order_angle"),
                             (dict(ffbp_oversample_range=1.0), "oversample_range"),
                             (dict(ffbp_oversample_angle=float("nan")),
                              "oversample_angle"),
                             (dict(ffbp_factor=3), "factor"),
                             (dict(ffbp_stages=3), "stages must be at most 2"),
                             (dict(height=[0.0] * 16), "height")):
            with self.assertRaisesRegex(ValueError, name):
                gpuradar.backprojection(**dict(good, **change))

    def test_008_geometry_of_the_wrong_length_cannot_be_connected(self):
        bp = gpuradar.backprojection(16, 4, 4, 0.0, 0.0, 1.0, 1.0, 0.0, 1, backend="cpu")
        src = blocks.vector_source_f([0.0] * 10, False, 10)  # 40-byte items, not 48
        with self.assertRaises(Exception):
            self.tb.connect(src, (bp, 1))

    def tag_values(self, key):
        """{item offset: value} of the uint64 tags named key."""
        return {t.offset: pmt.to_uint64(t.value) for t in self.tags
                if pmt.symbol_to_string(t.key) == key}

    def test_011_nonfinite_samples_zeroed_counted_and_tagged(self):
        h = sar_sim.scenario("spotlight", npulses=2 * 40, nbins=256, image_size=8)
        clean = self.record(h, "clean")
        h.pulses[3, 128] = complex(np.nan, 0)
        h.pulses[12, 100] = complex(0, np.inf)
        h.pulses[60, 5] = complex(-np.inf, np.nan)
        h.geometry[70, 5] = 1e300  # f0 no precision can carry: skipped
        rec = self.record(h)
        images, bp = self.form(rec, pulses_per_image=40, mode="accumulate")
        self.assertTrue(np.all(np.isfinite(images)))
        self.assertEqual(bp.nonfinite_samples(), 3)
        self.assertEqual(bp.skipped_pulses(), 1)
        ny = rec.grid.ny
        self.assertEqual(self.tag_values("nonfinite_samples"), {0: 2, ny: 1})
        self.assertEqual(self.tag_values("skipped_pulses"), {0: 0, ny: 1})
        # The bad samples count as 0: the image of the clean pulses with them zeroed.
        zeroed = clean.pulses.copy()
        zeroed[3, 128] = zeroed[12, 100] = zeroed[60, 5] = 0
        geometry = clean.geometry.copy()
        geometry[70, 5] = np.nan
        ref = reference_image(zeroed, geometry, rec.grid)
        self.assertGreaterEqual(ser_db(images[1], ref), 60)

    def test_012_volume_slices_lowest_first(self):
        h = sar_sim.scenario("spotlight", npulses=48, nbins=256, image_size=6, pixel=0.2,
                             noise_sigma=0.05)
        rec = self.record(h)
        nz, dz = 3, 2.5
        images, _ = self.form(rec, nz=nz, dz=dz)
        g = rec.grid
        self.assertEqual(images.shape, (1, nz * g.ny, g.nx))
        for k in range(nz):
            at = dataclasses.replace(g, z=g.z + k * dz)
            ref = reference_image(rec.pulses, rec.geometry, at)
            self.assertGreaterEqual(ser_db(images[0, k * g.ny:(k + 1) * g.ny], ref), 60,
                                    f"slice {k}")

    def test_009_simulator_bad_input(self):
        with self.assertRaisesRegex(ValueError, "kind"):
            sar_sim.scenario("zigzag")
        with self.assertRaisesRegex(ValueError, "nbins"):
            sar_sim.scenario("spotlight", nbins=1)


if __name__ == "__main__":
    gr_unittest.run(qa_backprojection)
