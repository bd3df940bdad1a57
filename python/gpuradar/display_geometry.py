#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""The geometry of a range-Doppler map and of a SAR image: axes, pixel extents and the
conversion of a map to dB. One piece of code for every picture the module draws (the
range_doppler_sink and sar_image_sink displays; the apps' PNGs can use the same).

Conventions (docs/CONVENTIONS.md): range bin k lies at r0 + k c/(2 fs); with fftshift,
Doppler bin m has radial velocity (m - ndoppler/2) prf/ndoppler c/(2 fc), closing
positive. A map is drawn with range on the vertical axis (near range at the bottom) and
velocity on the horizontal axis (closing to the right); a SAR image with x (east) to the
right and y (north) up. Extents are (left, right, bottom, top) of the pixel edges, so the
centre of a pixel lies exactly on its bin's coordinate.
"""

from dataclasses import dataclass

import numpy as np

from .gpuradar_python import speed_of_light as _speed_of_light

#: m/s, the C++ code's own constant (kernels/constants.h)
SPEED_OF_LIGHT = _speed_of_light
#: smallest linear value taken to dB (keeps log10 finite on zeros)
_TINY = 1e-30


def range_bin_m(fs):
    """Range spacing of fast-time bins (m) at sample rate fs (Hz)."""
    return SPEED_OF_LIGHT / (2.0 * fs)


def velocity_bin_mps(prf, ndoppler, fc):
    """Radial velocity spacing of Doppler bins (m/s)."""
    return prf / ndoppler * SPEED_OF_LIGHT / (2.0 * fc)


def doppler_display_order(ndoppler, fftshift):
    """Indices that put a map's Doppler bins in increasing velocity order."""
    if fftshift:
        return np.arange(ndoppler)
    return np.fft.fftshift(np.arange(ndoppler))


def max_pool_rows(image, max_rows):
    """(pooled, group): rows combined by groups of `group` keeping the largest value, so
    that at most max_rows rows remain and a one-bin target stays visible (an average
    would dilute it into the noise). Trailing rows that do not fill a group are dropped."""
    image = np.asarray(image)
    group = max(1, -(-image.shape[0] // max(1, int(max_rows))))  # ceil
    if group == 1:
        return image, 1
    rows = image.shape[0] // group
    return image[:rows * group].reshape(rows, group, *image.shape[1:]).max(axis=1), group


@dataclass
class MapAxes:
    """Axes of a range-Doppler map: bin k at r0_m + k dr_m, Doppler column j (display
    order) at (j - ndoppler/2) dv_mps."""
    r0_m: float
    dr_m: float
    nrange: int
    dv_mps: float
    ndoppler: int

    @staticmethod
    def of(fs, prf, fc, nrange, ndoppler, r0_m=0.0):
        return MapAxes(float(r0_m), range_bin_m(fs), int(nrange),
                       velocity_bin_mps(prf, ndoppler, fc), int(ndoppler))

    def range_m(self, k):
        return self.r0_m + np.asarray(k) * self.dr_m

    def velocity_mps(self, column):
        return (np.asarray(column) - self.ndoppler // 2) * self.dv_mps

    def extent(self, rows=None, group=1):
        """(left, right, bottom, top) of a map drawn with `rows` rows of `group` range
        bins each (max_pool_rows); by default one row per bin."""
        rows = self.nrange if rows is None else rows
        left = self.velocity_mps(0) - self.dv_mps / 2
        right = self.velocity_mps(self.ndoppler - 1) + self.dv_mps / 2
        bottom = self.r0_m - self.dr_m / 2
        return (float(left), float(right), float(bottom),
                float(bottom + rows * group * self.dr_m))


def image_extent(grid):
    """(left, right, bottom, top) of the pixel edges of an image on grid (a
    sar_sim.Grid: pixel (ix, iy) at (x0 + ix dx, y0 + iy dy), row iy north of iy - 1)."""
    return (grid.x0 - grid.dx / 2, grid.x0 + (grid.nx - 0.5) * grid.dx,
            grid.y0 - grid.dy / 2, grid.y0 + (grid.ny - 0.5) * grid.dy)


def to_db(values, envelope="square_law", db=False):
    """A map in dB: unchanged when already in dB, 10 log10 of power ('square_law'),
    20 log10 of magnitude ('linear'). float32 result."""
    values = np.asarray(values, dtype=np.float32)
    if db:
        return values
    if envelope not in ("square_law", "linear"):
        raise ValueError(f"envelope must be square_law or linear (got {envelope!r})")
    scale = 10.0 if envelope == "square_law" else 20.0
    return (scale * np.log10(np.maximum(np.abs(values), _TINY))).astype(np.float32)


def auto_levels(db_image, dynamic_range_db):
    """(low, high) colour limits that show dynamic_range_db below the image's peak."""
    finite = db_image[np.isfinite(db_image)]
    top = float(finite.max()) if finite.size else 0.0
    return top - float(dynamic_range_db), top
