#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""SAR image products that other tools open: a georeferenced GeoTIFF of the detected
image, the complex image as a SigMF-style annotated binary (and its reader), and
multilooking.

Grid and orientation
--------------------
An image here is ``image[iy, ix]`` on a sar_sim.Grid: pixel (ix, iy) at
(x0 + ix dx, y0 + iy dy), local Cartesian metres with x east and y north
(docs/CONVENTIONS.md), row 0 the southernmost.

Projection
----------
The scene centre (latitude, longitude in degrees on WGS 84, height in metres above the
ellipsoid) is the local origin x = y = 0 (z = 0 at that height). The GeoTIFF is in a
transverse Mercator projection centred there: ``lat_0`` and ``lon_0`` the centre,
false easting and northing 0, so easting = x and northing = y. A projection centred on the
scene rather than the nearest UTM zone because its central meridian passes through the
scene: grid north is true north there (no meridian convergence to rotate the image by),
and within a few kilometres it agrees with the local east-north tangent plane the image
is formed in to a millimetre (the difference grows as d^3 / R^2). Its scale factor is
k0 = 1 + h / R (R the ellipsoid's Gaussian mean radius at the latitude), so a metre of
easting is a metre on the ground at the scene's height h rather than on the ellipsoid
(0.8 mm per km per 5 km of height otherwise).
The GeoTIFF is north up: its first row is the image's last (northernmost), columns run
east; the geotransform's pixel sizes are dx and -dy and its origin the north-west corner
of the north-west pixel (pixels are areas centred on the grid points).

Multilook
---------
``multilook(image, looks_x, looks_y)`` averages the detected power |pixel|^2 over
non-overlapping blocks of looks_x columns by looks_y rows; rows and columns beyond the
last whole block are dropped. The output's pixel spacing is looks_x dx by looks_y dy and
its pixel (0, 0) lies at the centre of the first block, x0 + (looks_x - 1) dx / 2,
y0 + (looks_y - 1) dy / 2 (``multilook_grid``). Speckle's standard deviation over the mean
falls as 1 / sqrt(looks_x looks_y) for independent looks.

Complex image recording (``<base>`` any prefix)
-----------------------------------------------
``<base>.sigmf-data``: cf32_le, nimages x ny x nx complex64, row-major (row iy at
y0 + iy dy). ``<base>.sigmf-meta``: ``core:datatype`` cf32_le and ``gpuradar:mode``
``"image"``, ``gpuradar:image`` {nimages, nx, ny, x0, y0, dx, dy, z, x_axis, y_axis}
(axis descriptions; x is ground east or slant range) and, when known,
``gpuradar:scene_centre`` {latitude_deg, longitude_deg, height_m}. ``read_image`` loads
it back.
"""

import math
from dataclasses import asdict, dataclass
from typing import Optional

import numpy as np

from . import sigmf_io
from .sigmf_io import DATA_SUFFIX, META_SUFFIX, NAMESPACE, RecordingError

IMAGE_MODE = "image"
#: WGS 84 semi-major axis (m) and flattening.
WGS84_A = 6378137.0
WGS84_F = 1 / 298.257223563
#: GeoTIFF value of a pixel with no detected power in dB (log of 0), or non-finite.
NODATA = -999.0
#: Heights accepted for a scene centre (m): below the deepest ground, above any aircraft.
MIN_HEIGHT, MAX_HEIGHT = -11000.0, 100000.0
#: |latitude| accepted (degrees): the poles have no east to align a grid with.
MAX_LATITUDE = 89.9
SCALES = ("db", "magnitude")


class GdalMissing(RuntimeError):
    """GDAL's Python bindings are not installed."""


@dataclass
class SceneCentre:
    """The local origin on the Earth: WGS 84 latitude and longitude (degrees) and height
    above the ellipsoid (m)."""
    latitude_deg: float
    longitude_deg: float
    height_m: float = 0.0

    def __post_init__(self):
        for name, v, lo, hi in (
                ("latitude", self.latitude_deg, -MAX_LATITUDE, MAX_LATITUDE),
                ("longitude", self.longitude_deg, -180.0, 180.0),
                ("height", self.height_m, MIN_HEIGHT, MAX_HEIGHT)):
            if not (math.isfinite(v) and lo <= v <= hi):
                raise ValueError(f"{name} must be in [{lo:g}, {hi:g}] (got {v!r})")

    @staticmethod
    def parse(text):
        """``LAT,LON[,H]`` (degrees, degrees, metres); ValueError saying what is wrong."""
        parts = str(text).split(",")
        if len(parts) not in (2, 3):
            raise ValueError(f"expected LAT,LON[,H] (got {text!r})")
        try:
            values = [float(p) for p in parts]
        except ValueError:
            raise ValueError(f"expected LAT,LON[,H] numbers (got {text!r})") from None
        return SceneCentre(*values)


def gaussian_radius(latitude_deg):
    """sqrt(M N): the WGS 84 ellipsoid's mean radius of curvature at a latitude (m)."""
    e2 = WGS84_F * (2 - WGS84_F)
    s2 = math.sin(math.radians(latitude_deg)) ** 2
    w = 1 - e2 * s2
    return WGS84_A * math.sqrt(1 - e2) / w


def projection_proj4(centre: SceneCentre):
    """The transverse Mercator of the module docstring, as a PROJ string."""
    k0 = 1 + centre.height_m / gaussian_radius(centre.latitude_deg)
    return (f"+proj=tmerc +lat_0={centre.latitude_deg:.12f} "
            f"+lon_0={centre.longitude_deg:.12f} +k_0={k0:.15f} +x_0=0 +y_0=0 "
            f"+ellps=WGS84 +towgs84=0,0,0,0,0,0,0 +units=m +no_defs")


def check_looks(looks_x, looks_y, nx, ny, name="looks"):
    """ValueError naming `name` unless 1 <= looks <= the image's size on each axis."""
    for axis, looks, n in (("x (columns)", looks_x, nx), ("y (rows)", looks_y, ny)):
        if isinstance(looks, bool) or int(looks) != looks or not 1 <= looks <= n:
            raise ValueError(f"{name}: looks along {axis} must be a whole number in "
                             f"[1, {n}] (the image's size; got {looks!r})")


def multilook(image, looks_x, looks_y, name="looks"):
    """Mean detected power over blocks of looks_x x looks_y pixels: float64
    (..., ny // looks_y, nx // looks_x). image: complex (its |.|^2 is averaged) or real
    power, its last two axes (y, x)."""
    a = np.asarray(image)
    ny, nx = a.shape[-2:]
    check_looks(looks_x, looks_y, nx, ny, name)
    if np.iscomplexobj(a):
        c = a.astype(np.complex128)
        power = c.real ** 2 + c.imag ** 2
    else:
        power = a.astype(np.float64)
    my, mx = ny // looks_y, nx // looks_x
    cut = power[..., :my * looks_y, :mx * looks_x]
    return cut.reshape(cut.shape[:-2] + (my, looks_y, mx, looks_x)).mean(axis=(-3, -1))


def multilook_grid(grid, looks_x, looks_y):
    """The Grid of multilook()'s output (spacing looks times the input's, pixel (0, 0)
    at the centre of the first block)."""
    from .sar_sim import Grid
    return Grid(grid.x0 + 0.5 * (looks_x - 1) * grid.dx, grid.y0 + 0.5 * (looks_y - 1) * grid.dy,
                grid.dx * looks_x, grid.dy * looks_y, grid.nx // looks_x,
                grid.ny // looks_y, grid.z)


def detected(power, scale):
    """float32 of a detected power image: 'db' 10 log10(power) (dB re a pixel amplitude
    of 1; NODATA where the power is 0 or not finite) or 'magnitude' sqrt(power) (NaN
    where not finite)."""
    p = np.asarray(power, np.float64)
    if scale == "db":
        good = np.isfinite(p) & (p > 0)
        out = np.full(p.shape, NODATA, np.float64)
        out[good] = 10 * np.log10(p[good])
        return out.astype(np.float32)
    if scale == "magnitude":
        return np.sqrt(np.where(np.isfinite(p), p, np.nan)).astype(np.float32)
    raise ValueError(f"scale must be one of {', '.join(SCALES)} (got {scale!r})")


def require_gdal():
    """osgeo.gdal and osgeo.osr, or GdalMissing naming Debian's package."""
    try:
        from osgeo import gdal, osr
    except ImportError as e:
        raise GdalMissing(f"GDAL's Python bindings are not installed (Debian: "
                          f"python3-gdal): {e}") from None
    gdal.UseExceptions()
    osr.UseExceptions()
    return gdal, osr


def geotransform(grid):
    """GDAL's geotransform of a north-up raster of `grid` (rows flipped: row 0 north)."""
    west = grid.x0 - 0.5 * grid.dx
    north = grid.y0 + (grid.ny - 0.5) * grid.dy
    return (west, grid.dx, 0.0, north, 0.0, -grid.dy)


def write_geotiff(path, values, grid, centre: SceneCentre, scale, description=""):
    """Writes values (float (ny, nx), row iy at y0 + iy dy: detected() output of `scale`)
    as a one-band float32 GeoTIFF, north up, in the scene-centred transverse Mercator."""
    gdal, osr = require_gdal()
    v = np.asarray(values, np.float32)
    if v.shape != (grid.ny, grid.nx):
        raise ValueError(f"values: shape {v.shape} is not the grid's (ny, nx) = "
                         f"({grid.ny}, {grid.nx})")
    srs = osr.SpatialReference()
    srs.ImportFromProj4(projection_proj4(centre))
    ds = gdal.GetDriverByName("GTiff").Create(str(path), grid.nx, grid.ny, 1,
                                              gdal.GDT_Float32)
    if ds is None:
        raise OSError(f"GDAL could not create {path}")
    try:
        ds.SetGeoTransform(geotransform(grid))
        ds.SetProjection(srs.ExportToWkt())
        ds.SetMetadata({"GPURADAR_VALUES": "dB (10 log10 |pixel|^2)" if scale == "db"
                        else "magnitude |pixel|",
                        "GPURADAR_SCENE_CENTRE": f"{centre.latitude_deg!r},"
                                                 f"{centre.longitude_deg!r},"
                                                 f"{centre.height_m!r}",
                        "GPURADAR_DESCRIPTION": description})
        band = ds.GetRasterBand(1)
        band.SetDescription("power_db" if scale == "db" else "magnitude")
        if scale == "db":
            band.SetNoDataValue(NODATA)
        band.WriteArray(v[::-1])
        band.FlushCache()
        ds.FlushCache()
    finally:
        ds = None  # GDAL writes and closes the file when the dataset goes


# --- the complex image as a SigMF-style recording -------------------------------------

def write_image(base, images, grid, centre: Optional[SceneCentre] = None,
                x_axis="x (east), m", y_axis="y (north), m",
                description="gpuradar SAR image", recorder="gnuradio.gpuradar"):
    """Writes <base>.sigmf-data (cf32_le) and <base>.sigmf-meta of complex images
    ((ny, nx) or (nimages, ny, nx)) on grid; returns base."""
    a = np.asarray(images)
    a = a.reshape((1,) + a.shape) if a.ndim == 2 else a
    if a.ndim != 3 or a.shape[1:] != (grid.ny, grid.nx):
        raise ValueError(f"images: shape {np.shape(images)} is not (ny, nx) or "
                         f"(nimages, ny, nx) of the grid ({grid.ny}, {grid.nx})")
    base = str(base)
    sigmf_io.write_file(base + DATA_SUFFIX, np.ascontiguousarray(a, dtype="<c8"))
    ns = NAMESPACE + ":"
    g = {"core:datatype": "cf32_le", "core:version": "1.0.0",
         "core:description": description, "core:recorder": recorder,
         "core:extensions": [{"name": NAMESPACE, "version": "1.0.0", "optional": True}],
         ns + "mode": IMAGE_MODE,
         ns + "image": dict(asdict(grid), nimages=int(a.shape[0]), x_axis=x_axis,
                            y_axis=y_axis,
                            layout="nimages x ny x nx, row-major: pixel (ix, iy) at "
                                   "(x0 + ix dx, y0 + iy dy, z)")}
    if centre is not None:
        g[ns + "scene_centre"] = asdict(centre)
    sigmf_io.write_meta(base, g, [{"core:sample_start": 0}], [], indent=2)
    return base


@dataclass
class ImageRecording:
    base: str
    meta: dict
    images: np.ndarray          #: complex64 (nimages, ny, nx), read-only memory map
    grid: object                #: sar_sim.Grid
    centre: Optional[SceneCentre]
    x_axis: str
    y_axis: str


MAX_IMAGE_PIXELS = 1 << 31


def read_image(path) -> ImageRecording:
    """Reads a recording of write_image() back (any of its file names or the prefix);
    RecordingError naming the file and the field for anything missing or wrong."""
    from .sar_sim import Grid
    base = sigmf_io.base_of(path)
    mpath, dpath = base + META_SUFFIX, base + DATA_SUFFIX
    meta = sigmf_io.read_meta(mpath)
    ns = NAMESPACE + ":"
    g = sigmf_io.Fields(meta["global"], mpath, "global")
    datatype = g.string("core:datatype")
    if datatype != "cf32_le":
        raise g.error("core:datatype", f"must be cf32_le (got {datatype!r})")
    g.string(ns + "mode", choices=(IMAGE_MODE,))
    f = g.object(ns + "image")
    grid = Grid(f.number("x0"), f.number("y0"), f.number("dx", above=0),
                f.number("dy", above=0), f.number("nx", int, minimum=1),
                f.number("ny", int, minimum=1), f.number("z", default=0.0))
    nimages = f.number("nimages", int, minimum=1, default=1)
    n = nimages * grid.nx * grid.ny
    if n > MAX_IMAGE_PIXELS:
        raise f.error("nimages", f"x ny x nx must be <= {MAX_IMAGE_PIXELS} (got {n})")
    size = sigmf_io.data_file(dpath, mpath)
    if size != n * 8:
        raise RecordingError(f"{dpath}: {size} bytes, not metadata fields 'global.{ns}"
                             f"image' nimages x ny x nx = {nimages} x {grid.ny} x "
                             f"{grid.nx} cf32_le samples ({n * 8} bytes)")
    centre = None
    c = g.object(ns + "scene_centre", default=None)
    if c is not None:
        try:
            centre = SceneCentre(c.number("latitude_deg"), c.number("longitude_deg"),
                                 c.number("height_m", default=0.0))
        except ValueError as e:
            if isinstance(e, RecordingError):
                raise
            raise RecordingError(f"{mpath}: metadata field 'global.{ns}scene_centre': "
                                 f"{e}") from None
    images = np.memmap(dpath, dtype="<c8", mode="r", shape=(nimages, grid.ny, grid.nx))
    return ImageRecording(base, meta, images, grid, centre,
                          f.string("x_axis", default="x (east), m"),
                          f.string("y_axis", default="y (north), m"))


def along_track_axis(positions):
    """'x' or 'y': the image axis nearer the platform's direction of travel at the middle
    of the aperture (positions: (npulses, >= 2) antenna x, y, non-finite rows skipped),
    i.e. the azimuth axis of a ground image formed from them; 'y' when it cannot be told
    (fewer than two usable pulses, no motion)."""
    p = np.asarray(positions, np.float64)[:, :2]
    p = p[np.isfinite(p).all(axis=1)]
    if len(p) < 2:
        return "y"
    mid = len(p) // 2
    v = p[min(mid + 1, len(p) - 1)] - p[max(mid - 1, 0)]
    return "x" if abs(v[0]) > abs(v[1]) else "y"


def looks_xy(looks_range, looks_azimuth, azimuth_axis):
    """(looks_x, looks_y) of looks in range and azimuth, azimuth along `azimuth_axis`."""
    if azimuth_axis == "x":
        return looks_azimuth, looks_range
    return looks_range, looks_azimuth
