#!/usr/bin/env python3
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""QA for gnuradio.gpuradar.sar_products: the GeoTIFF read back by GDAL (size, pixel
spacing, corners against an independent east-north-up -> ECEF -> geodetic conversion,
values), the complex image recording read back equal, multilook against block sums
written here, and bad input."""

import math
import os
import sys
import tempfile
import unittest
from unittest import mock

import numpy as np
from gnuradio.gpuradar import sar_products
from gnuradio.gpuradar.sar_products import SceneCentre
from gnuradio.gpuradar.sar_sim import Grid
from gnuradio.gpuradar.sigmf_io import RecordingError

A, F = 6378137.0, 1 / 298.257223563   # WGS 84, written out again: the test's own
E2 = F * (2 - F)


def geodetic_to_ecef(lat, lon, h):
    la, lo = math.radians(lat), math.radians(lon)
    n = A / math.sqrt(1 - E2 * math.sin(la) ** 2)
    return np.array([(n + h) * math.cos(la) * math.cos(lo),
                     (n + h) * math.cos(la) * math.sin(lo),
                     (n * (1 - E2) + h) * math.sin(la)])


def ecef_to_geodetic(p):
    """Iterated latitude (converges to < 1e-12 rad in a few steps off the poles)."""
    x, y, z = p
    lon = math.atan2(y, x)
    r = math.hypot(x, y)
    lat = math.atan2(z, r * (1 - E2))
    for _ in range(10):
        n = A / math.sqrt(1 - E2 * math.sin(lat) ** 2)
        h = r / math.cos(lat) - n
        lat = math.atan2(z, r * (1 - E2 * n / (n + h)))
    return math.degrees(lat), math.degrees(lon), h


def enu_to_geodetic(centre, e, n):
    """The point e metres east and n north of centre in its tangent plane."""
    la, lo = math.radians(centre.latitude_deg), math.radians(centre.longitude_deg)
    east = np.array([-math.sin(lo), math.cos(lo), 0.0])
    north = np.array([-math.sin(la) * math.cos(lo), -math.sin(la) * math.sin(lo),
                      math.cos(la)])
    p = geodetic_to_ecef(centre.latitude_deg, centre.longitude_deg, centre.height_m)
    return ecef_to_geodetic(p + e * east + n * north)[:2]


def random_image(shape, seed):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(np.complex64)


class qa_sar_products(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory(prefix="qa_sar_products-")
        self.dir = self._tmp.name

    def tearDown(self):
        self._tmp.cleanup()

    def test_001_geotiff_reads_back_with_its_grid_corners_and_values(self):
        gdal, osr = sar_products.require_gdal()
        # Unequal spacings and sizes: swapped axes or a missed row flip show.
        grid = Grid(-740.0, -610.0, 5.0, 7.5, 300, 170, 0.0)
        image = random_image((grid.ny, grid.nx), 1)
        image[3, 5] = 0  # no power: NODATA in dB
        path = os.path.join(self.dir, "img.tif")
        for centre in (SceneCentre(48.85, 2.35, 3000.0), SceneCentre(-33.9, 151.2, 40.0),
                       SceneCentre(64.1, -21.9, 0.0)):
            for scale in sar_products.SCALES:
                with self.subTest(centre=centre, scale=scale):
                    values = sar_products.detected(np.abs(image) ** 2, scale)
                    sar_products.write_geotiff(path, values, grid, centre, scale)
                    ds = gdal.Open(path)
                    self.assertEqual((ds.RasterXSize, ds.RasterYSize, ds.RasterCount),
                                     (grid.nx, grid.ny, 1))
                    band = ds.GetRasterBand(1)
                    self.assertEqual(band.DataType, gdal.GDT_Float32)
                    back = band.ReadAsArray()[::-1]  # north up -> row 0 south
                    np.testing.assert_array_equal(back, values)
                    if scale == "db":
                        self.assertEqual(band.GetNoDataValue(), sar_products.NODATA)
                        self.assertEqual(back[3, 5], sar_products.NODATA)
                        self.assertAlmostEqual(float(back[7, 9]), 10 * math.log10(
                            abs(complex(image[7, 9])) ** 2), places=4)
                    else:
                        self.assertAlmostEqual(float(back[7, 9]), abs(complex(image[7, 9])),
                                               places=5)
                    gt = ds.GetGeoTransform()
                    self.assertEqual((gt[1], gt[2], gt[4], gt[5]), (grid.dx, 0.0, 0.0, -grid.dy))
                    srs = osr.SpatialReference(wkt=ds.GetProjection())
                    geo = osr.SpatialReference()
                    geo.ImportFromEPSG(4326)
                    geo.SetAxisMappingStrategy(osr.OAMS_TRADITIONAL_GIS_ORDER)
                    srs.SetAxisMappingStrategy(osr.OAMS_TRADITIONAL_GIS_ORDER)
                    to_geo = osr.CoordinateTransformation(srs, geo)
                    # The four outer corners of the raster, through GDAL's geotransform
                    # and projection, against the grid's own corners (x east, y north
                    # metres of the local tangent plane at the centre's height).
                    for col, row in ((0, 0), (grid.nx, 0), (0, grid.ny), (grid.nx, grid.ny)):
                        east = gt[0] + col * gt[1]
                        north = gt[3] + row * gt[5]
                        lon, lat, _ = to_geo.TransformPoint(east, north)
                        e = grid.x0 - grid.dx / 2 + col * grid.dx
                        n = grid.y0 + (grid.ny - 0.5) * grid.dy - row * grid.dy
                        self.assertAlmostEqual(east, e, places=6)
                        self.assertAlmostEqual(north, n, places=6)
                        lat_ref, lon_ref = enu_to_geodetic(centre, e, n)
                        # metres: 1 cm (the map and the tangent plane differ by ~d^3/R^2,
                        # 0.1 mm here; a scale without the height would be 0.3 m off)
                        dn = math.radians(lat - lat_ref) * A
                        de = math.radians(lon - lon_ref) * A * math.cos(math.radians(lat))
                        self.assertLess(math.hypot(dn, de), 0.01, (col, row, dn, de))
                    ds = None

    def test_002_image_recording_reads_back_equal(self):
        grid = Grid(10.5, -3.25, 0.25, 0.5, 33, 21, 1.5)
        base = os.path.join(self.dir, "cimg")
        centre = SceneCentre(51.5, -0.12, 35.0)
        for images in (random_image((grid.ny, grid.nx), 2),
                       random_image((3, grid.ny, grid.nx), 3)):
            sar_products.write_image(base, images, grid, centre, "slant range, m")
            rec = sar_products.read_image(base + ".sigmf-meta")
            np.testing.assert_array_equal(rec.images.reshape(images.shape), images)
            self.assertEqual(rec.grid, grid)
            self.assertEqual(rec.centre, centre)
            self.assertEqual(rec.x_axis, "slant range, m")
        np.save(os.path.join(self.dir, "c.npy"), images)
        np.testing.assert_array_equal(np.load(os.path.join(self.dir, "c.npy")), images)

    def test_003_image_recording_errors_name_the_field(self):
        grid = Grid(0.0, 0.0, 1.0, 1.0, 8, 4)
        base = os.path.join(self.dir, "bad")
        sar_products.write_image(base, random_image((4, 8), 4), grid)
        with open(base + ".sigmf-data", "ab") as f:
            f.write(b"\0" * 8)
        with self.assertRaisesRegex(RecordingError, r"bad\.sigmf-data: 264 bytes.*image"):
            sar_products.read_image(base)
        sar_products.write_image(base, random_image((4, 8), 4), grid)
        with open(base + ".sigmf-meta") as f:
            text = f.read()
        with open(base + ".sigmf-meta", "w") as f:
            f.write(text.replace('"dx": 1.0', '"dx": -1.0'))
        with self.assertRaisesRegex(RecordingError, r"'global\.gpuradar:image\.dx' must be > 0"):
            sar_products.read_image(base)

    def test_004_multilook_against_block_means(self):
        ny, nx, ly, lx = 37, 50, 4, 3
        image = random_image((ny, nx), 5)
        out = sar_products.multilook(image, lx, ly)
        self.assertEqual(out.shape, (ny // ly, nx // lx))
        for j in range(out.shape[0]):
            for i in range(out.shape[1]):
                block = image[j * ly:(j + 1) * ly, i * lx:(i + 1) * lx].astype(np.complex128)
                self.assertAlmostEqual(out[j, i], np.mean(block.real ** 2 + block.imag ** 2),
                                       places=9)
        # several images at once, and looks of 1 are the power itself
        stack = random_image((2, ny, nx), 6)
        np.testing.assert_allclose(sar_products.multilook(stack, lx, ly)[1],
                                   sar_products.multilook(stack[1], lx, ly))
        np.testing.assert_allclose(sar_products.multilook(image, 1, 1),
                                   np.abs(image.astype(np.complex128)) ** 2, rtol=1e-6)
        g = sar_products.multilook_grid(Grid(-10.0, 4.0, 0.5, 2.0, nx, ny, 3.0), lx, ly)
        self.assertEqual(g, Grid(-10.0 + 0.5, 4.0 + 3.0, 1.5, 8.0, nx // lx, ny // ly, 3.0))

    def test_005_bad_input_is_named(self):
        for args, word in (((90.5, 0.0, 0.0), "latitude"), ((-95.0, 0.0, 0.0), "latitude"),
                           ((10.0, 180.5, 0.0), "longitude"),
                           ((10.0, float("nan"), 0.0), "longitude"),
                           ((10.0, 20.0, 2e5), "height")):
            with self.assertRaisesRegex(ValueError, word):
                SceneCentre(*args)
        for text in ("1,2,3,4", "north,2", "1"):
            with self.assertRaisesRegex(ValueError, "LAT,LON"):
                SceneCentre.parse(text)
        self.assertEqual(SceneCentre.parse("1,2"), SceneCentre(1.0, 2.0, 0.0))
        image = random_image((6, 9), 7)
        for lx, ly in ((0, 1), (1, 0), (10, 1), (1, 7), (-2, 2), (1.5, 1)):
            with self.assertRaisesRegex(ValueError, r"--looks: looks along"):
                sar_products.multilook(image, lx, ly, "--looks")
        sar_products.multilook(image, 9, 6)  # the whole image is one look block
        with self.assertRaisesRegex(ValueError, "scale"):
            sar_products.detected(np.ones((2, 2)), "linear")

    def test_006_gdal_missing_names_the_package(self):
        with mock.patch.dict(sys.modules, {"osgeo": None}):
            with self.assertRaisesRegex(sar_products.GdalMissing, "python3-gdal"):
                sar_products.require_gdal()


if __name__ == "__main__":
    unittest.main(verbosity=2)
