#!/usr/bin/env python3
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""gpuradar-sar's products for other tools, run as a user runs the app (subprocess, CPU
backend, small scenes: seconds).

Products: --geotiff read back by GDAL (size, pixel spacing, corners, values against the
app's own .npy multilooked here), --sigmf read back equal to the .npy, --looks along the
right axes (spotlight: azimuth along x; stripmap: along y), csa's products.
BadInput: a scene centre out of range, looks <= 0 or larger than the image, --geotiff
without a scene centre or on a csa image, GDAL missing: one line naming the flag or the
package, status 2, no outputs.

`test_sar_products.py Products` runs one group.
"""

import contextlib
import importlib.util
import io
import os
import subprocess
import sys
import unittest

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_apps import SAR, AppTest, png_size, run  # noqa: E402
from test_stripmap_apps import stripmap_recording  # noqa: E402

_spec = importlib.util.spec_from_file_location("gpuradar_sar_app", SAR)
APP = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(APP)

#: the app_gpuradar_sar ctest's scene: a 96 x 96 grid of 0.1666 m
SMALL = ("--backend", "cpu", "-q", "--npulses", "192", "--nbins", "384", "--image-size",
         "16")


def gdal_open(path):
    from osgeo import gdal
    gdal.UseExceptions()
    return gdal.Open(path)


class Products(AppTest):
    def test_001_geotiff_sigmf_and_looks_of_a_spotlight_image(self):
        out = self.path("img")
        rc, so, se = run(SAR, *SMALL, "-o", out, "--geotiff", "--sigmf", "--scene-center",
                         "47.3,8.5,400", "--looks", "2,3", "--geotiff-values", "db")
        self.assertEqual(rc, 0, so + se)
        image = np.load(out + ".npy")
        ny, nx = image.shape
        # The spotlight path flies along x: azimuth is x (3 looks), range y (2 looks).
        lx, ly = 3, 2
        power = np.abs(image[:ny // ly * ly, :nx // lx * lx].astype(np.complex128)) ** 2
        ml = power.reshape(ny // ly, ly, nx // lx, lx).mean(axis=(1, 3))
        ds = gdal_open(out + ".tif")
        self.assertEqual((ds.RasterXSize, ds.RasterYSize), (nx // lx, ny // ly))
        from gnuradio.gpuradar import sar_sim
        gt = ds.GetGeoTransform()
        # The scenario's grid: 16 m of c / (2 B) / 3 pixels centred on the origin.
        dx = sar_sim.SPEED_OF_LIGHT / (2 * 300e6) / 3
        x0 = -dx * (nx // 2)
        self.assertAlmostEqual(gt[1], lx * dx, places=9)
        self.assertAlmostEqual(gt[5], -ly * dx, places=9)
        self.assertAlmostEqual(gt[0], x0 - dx / 2, places=9)
        self.assertAlmostEqual(gt[3], x0 + (ny // ly * ly - 0.5) * dx, places=9)
        back = ds.GetRasterBand(1).ReadAsArray()[::-1]
        np.testing.assert_allclose(back, 10 * np.log10(ml), atol=1e-4)
        self.assertIn("+lat_0=47.3", ds.GetSpatialRef().ExportToProj4())
        from gnuradio.gpuradar import sar_products
        rec = sar_products.read_image(out)
        np.testing.assert_array_equal(rec.images[0], image)
        self.assertAlmostEqual(rec.grid.dx, dx, places=12)
        self.assertEqual((rec.grid.nx, rec.grid.ny), (nx, ny))
        self.assertEqual(rec.centre, sar_products.SceneCentre(47.3, 8.5, 400.0))
        self.assertIn("multilook 2 x 3 (range x azimuth): 3 x 2 pixels (x x y)", so)
        self.assertGreater(png_size(out + ".png")[0], 0)

    def test_002_magnitude_and_stripmap_looks_along_track(self):
        base = stripmap_recording(self)
        out = self.path("strip")
        rc, so, se = run(SAR, "--input", base, "-o", out, "--backend", "cpu", "-q",
                         "--algorithm", "both", "--geotiff",
                         "--scene-centre=-20.5,-45,0", "--geotiff-values", "magnitude",
                         "--looks", "1,4", "--sigmf", "--no-png")
        self.assertEqual(rc, 0, so + se)
        self.assertFalse(os.path.exists(out + "-csa.tif"))  # slant range: no GeoTIFF
        bp = np.load(out + "-bp.npy")
        ny, nx = bp.shape
        ds = gdal_open(out + "-bp.tif")
        self.assertEqual((ds.RasterXSize, ds.RasterYSize), (nx, ny // 4))
        back = ds.GetRasterBand(1).ReadAsArray()[::-1]
        cut = np.abs(bp[:ny // 4 * 4].astype(np.complex128)) ** 2
        np.testing.assert_allclose(back, np.sqrt(cut.reshape(ny // 4, 4, nx).mean(axis=1)),
                                   rtol=1e-5)
        from gnuradio.gpuradar import sar_products
        for alg in ("csa", "bp"):
            rec = sar_products.read_image(out + f"-{alg}")
            np.testing.assert_array_equal(rec.images[0], np.load(out + f"-{alg}.npy"))
        self.assertEqual(rec.x_axis, "x (east), m")
        self.assertEqual(sar_products.read_image(out + "-csa").x_axis, "slant range, m")


class BadInput(AppTest):
    def fails(self, args, *needles, env=None):
        out = self.path("bad")
        p = subprocess.run([sys.executable, SAR, *SMALL, "-o", out, *args],
                           capture_output=True, text=True, timeout=120, env=env)
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        err = p.stderr.strip()
        self.assertEqual(len(err.splitlines()), 1, err)
        self.assertNotIn("Traceback", err)
        for n in needles:
            self.assertIn(n, err)
        self.assertEqual([f for f in os.listdir(self.dir) if f.startswith("bad")], [])
        return err

    def parse_fails(self, args, *needles):
        """The argument checks in-process (the app's parse_args; seconds saved per case),
        one line naming the option, status 2."""
        err = io.StringIO()
        with contextlib.redirect_stderr(err), self.assertRaises(SystemExit) as e:
            APP.parse_args([*SMALL, *args])
        self.assertEqual(e.exception.code, 2)
        line = err.getvalue().strip()
        self.assertEqual(len(line.splitlines()), 1, line)
        for n in needles:
            self.assertIn(n, line)

    def test_001_scene_centre_out_of_range(self):
        self.fails(["--geotiff", "--scene-center=91,8,0"], "--scene-center", "latitude")
        for text, word in (("-90,8,0", "latitude"), ("45,181,0", "longitude"),
                           ("45,nan,0", "longitude"), ("45,8,1e6", "height"),
                           ("45", "LAT,LON")):
            self.parse_fails(["--geotiff", "--scene-center=" + text], "--scene-center", word)

    def test_002_looks(self):
        self.fails(["--looks", "0,1"], "--looks")
        for text in ("1,0", "-1,2", "2", "a,b"):
            self.parse_fails(["--looks", text], "--looks")
        # larger than the 96 x 96 image: names the flag and the axis
        self.fails(["--looks", "97,1"], "--looks", "[1, 96]", "range along y")
        self.fails(["--looks", "1,200"], "--looks", "[1, 96]")

    def test_003_geotiff_needs_a_ground_image_and_a_centre(self):
        self.fails(["--geotiff"], "--geotiff", "--scene-center")
        base = stripmap_recording(self, "strip")
        self.fails(["--input", base, "--geotiff", "--scene-center", "1,2"], "--geotiff",
                   "csa", "--algorithm bp")

    def test_004_gdal_missing_names_the_package(self):
        fake = self.path("nogdal")
        os.makedirs(os.path.join(fake, "osgeo"))
        with open(os.path.join(fake, "osgeo", "__init__.py"), "w") as f:
            f.write("raise ImportError('No module named osgeo (test)')\n")
        env = dict(os.environ)
        env["PYTHONPATH"] = fake + os.pathsep + env.get("PYTHONPATH", "")
        self.fails(["--geotiff", "--scene-center", "1,2"], "--geotiff", "python3-gdal",
                   env=env)


if __name__ == "__main__":
    unittest.main()
