#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""Point-target SAR phase histories, their recordings, and the reader.

The simulation itself is the DSP core's (gpuradar::kernels::sar_sim, bound as
``gnuradio.gpuradar.sar_sim_core``): sample k of pulse i is

    sum over targets t of  a_t sinc(2B (r0_i + k dr - R_it)/c) exp(-j 4 pi f0 R_it / c)

with R_it the distance from antenna position i to target t (the range-compressed echo of
a band-B pulse, its phase formed in double so any band and range work). This module adds
scenarios (flight paths, radar, image grid, truth), the recording format, a reader and a
focus-quality helper; it is used by the QA tests and by the ``gpuradar-sar`` app.

Recording format (``<base>`` is any path prefix)
-------------------------------------------------
``<base>.sigmf-data``
    The range-compressed pulses, SigMF datatype ``cf32_le``: npulses x nbins complex64,
    pulse-major (pulse i is samples i*nbins ... i*nbins + nbins - 1). Or ``ci16_le`` /
    ``ci8``, interleaved integers as an SDR gives them (sc16 / sc8), read with 1.0 = full
    scale (int16 32768, int8 128); the metadata's ``gpuradar:full_scale`` is the sample
    amplitude the simulation wrote as full scale and ``gpuradar:clipped_samples`` the
    samples clipped (write()). A GNU Radio
    ``blocks.file_source(gr.sizeof_gr_complex * nbins, path)`` reads one pulse per item:
    input 0 of ``gpuradar.backprojection``.
``<base>.geometry.f64``
    The per-pulse geometry, raw little-endian float64, npulses x 6, row i =
    ``[x, y, z, r0, dr, f0]`` of pulse i: antenna phase centre (local Cartesian metres, x
    east, y north, z up), range of bin 0 (m), bin spacing (m), reference (centre)
    frequency (Hz); CONVENTIONS.md. ``blocks.file_source(gr.sizeof_double * 6, path)`` reads
    one pulse's geometry per item: input 1 of ``gpuradar.backprojection``.
``<base>.sigmf-meta``
    SigMF JSON. ``global`` holds the core fields (``core:datatype`` ``cf32_le``,
    ``core:sample_rate`` = c / (2 dr), the fast-time rate) and, in the ``gpuradar``
    extension namespace: ``gpuradar:npulses``, ``gpuradar:nbins``, ``gpuradar:f0`` (Hz),
    ``gpuradar:bandwidth`` (Hz), ``gpuradar:dr`` (m), ``gpuradar:path`` (the flight path
    description), ``gpuradar:grid`` (the suggested image grid: ``x0, y0, dx, dy, nx, ny,
    z``), ``gpuradar:geometry_file`` (the side file's name, relative to the meta file)
    and ``gpuradar:geometry_format``. The truth is one annotation per target spanning
    the whole recording, with ``gpuradar:position`` [x, y, z] (m) and
    ``gpuradar:amplitude`` [re, im].
``<base>.true_geometry.f64`` (only with navigation errors)
    The geometry of the track the echoes were simulated on, in the format of
    ``<base>.geometry.f64``, named by ``gpuradar:true_geometry_file``; the metadata's
    ``gpuradar:motion_errors`` holds the error model (``MotionErrors``' fields).

Navigation errors (``MotionErrors``, off by default)
----------------------------------------------------
The echoes are simulated on the scenario's track (the true one); the recording's
geometry file carries the measured track, true + e(t), with r0, dr and f0 unchanged (the
range gate is timed by the radar, not by its navigation). Pulse i is at time
t_i = (i - (npulses - 1) / 2) / prf and along-track distance s_i from the first pulse.
e(t) has three components on the track's local axes: along track (the horizontal unit
tangent), cross track (the horizontal normal to its left, tangent x z-up) and vertical
(z up):

- along track: ``velocity_error_mps`` x t_i (a constant velocity error, zero at the
  aperture centre);
- cross track and vertical, each the sum of: sinusoids (``Sinusoid``: amplitude A m,
  period T s or P m, phase phi: A sin(2 pi t_i / T + phi) or A sin(2 pi s_i / P + phi)), a
  random walk (sigma m/sqrt(s): the sum of independent N(0, sigma^2 / prf) steps, 0 at
  the first pulse) and white noise (m RMS, independent per pulse), both from ``seed``.
"""

import math
import os
from dataclasses import asdict, dataclass, field
from typing import List, Optional, Sequence, Tuple

import numpy as np

from . import sigmf_io
from .gpuradar_python import sar_sim_core as _core
from .gpuradar_python import speed_of_light as _speed_of_light
from .sigmf_io import DATA_SUFFIX, META_SUFFIX, NAMESPACE, RecordingError

#: m/s, the C++ code's own constant (kernels/constants.h)
SPEED_OF_LIGHT = _speed_of_light
GEOMETRY_LENGTH = 6
GEOMETRY_SUFFIX = ".geometry.f64"
TRUE_GEOMETRY_SUFFIX = ".true_geometry.f64"
GEOMETRY_FORMAT = ("float64 little-endian, npulses x 6, row = [x, y, z, r0, dr, f0] "
                   "(m, m, m, m, m, Hz)")
#: Sizes and noise of the apps' embedded scenarios (gpuradar-sim sar --preset, gpuradar-sar
#: without --input). ``examples``: what examples/sar_offline.grc reads (its variables
#: npulses, nbins, a 240 x 240 grid of c / (2 B) / 3 pixels = 40 m at 300 MHz).
PRESETS = {
    "default": dict(npulses=512, nbins=1024, image_size=40.0, noise=0.01),
    "examples": dict(npulses=256, nbins=512, image_size=40.0, noise=0.0),
    "tiny": dict(npulses=64, nbins=256, image_size=8.0, noise=0.01),
}


@dataclass
class Target:
    """A point scatterer (the truth): position (m) and complex amplitude."""
    position: Tuple[float, float, float]
    amplitude: complex = 1.0


@dataclass
class Grid:
    """Image grid of gpuradar.backprojection: pixel (ix, iy) at (x0 + ix dx, y0 + iy dy, z)."""
    x0: float
    y0: float
    dx: float
    dy: float
    nx: int
    ny: int
    z: float = 0.0

    def nearest_pixel(self, position) -> Tuple[int, int]:
        """(ix, iy) of the pixel nearest position (x, y[, z]); may lie outside the grid."""
        return tuple(_core.nearest_pixel(self.x0, self.y0, self.dx, self.dy,
                                         float(position[0]), float(position[1])))

    def x_axis(self):
        return self.x0 + self.dx * np.arange(self.nx)

    def y_axis(self):
        return self.y0 + self.dy * np.arange(self.ny)

    @staticmethod
    def around(centre, width, height, dx, dy=None, z=None):
        """A grid of about width x height metres centred on centre (x, y[, z])."""
        dy = dx if dy is None else dy
        nx = max(1, int(round(width / dx)))
        ny = max(1, int(round(height / dy)))
        zc = (centre[2] if len(centre) > 2 else 0.0) if z is None else z
        return Grid(centre[0] - dx * (nx // 2), centre[1] - dy * (ny // 2), dx, dy, nx, ny,
                    float(zc))


@dataclass
class Radar:
    """Radar parameters of a simulation (SI units)."""
    f0: float = 10e9            #: reference (centre) frequency (Hz)
    bandwidth: float = 300e6    #: range resolution c/(2B) (Hz)
    dr: float = 0.25            #: range bin spacing (m)
    nbins: int = 512            #: range bins per pulse
    r0: float = 0.0             #: range of bin 0 (m), when gate_centre is None
    #: motion-compensated gate: each pulse's gate is centred on this point
    gate_centre: Optional[Tuple[float, float, float]] = None
    sinc_half_width: int = 0    #: sinc samples kept each side of a target (0: all)
    noise_sigma: float = 0.0    #: std. dev. of each noise component per sample
    seed: int = 1


class _Pulses:
    """npulses and nbins of a class holding pulses (npulses, nbins)."""

    @property
    def npulses(self):
        return self.pulses.shape[0]

    @property
    def nbins(self):
        return self.pulses.shape[1]


@dataclass
class Sinusoid:
    """A sinusoidal track error A sin(2 pi t / T + phi) (period_s) or
    A sin(2 pi s / P + phi) (period_m, s the along-track distance); exactly one period."""
    amplitude_m: float
    period_s: Optional[float] = None
    period_m: Optional[float] = None
    phase_rad: float = 0.0

    def check(self, name):
        if not (math.isfinite(self.amplitude_m) and self.amplitude_m >= 0):
            raise ValueError(f"{name}: amplitude must be >= 0 m and finite (got "
                             f"{self.amplitude_m!r})")
        if (self.period_s is None) == (self.period_m is None):
            raise ValueError(f"{name}: give exactly one period, in s or in m")
        period = self.period_s if self.period_s is not None else self.period_m
        if not (math.isfinite(period) and period > 0):
            raise ValueError(f"{name}: period must be > 0 and finite (got {period!r})")
        if not math.isfinite(self.phase_rad):
            raise ValueError(f"{name}: phase must be finite (got {self.phase_rad!r})")

    def __call__(self, t, s):
        if self.period_s is not None:
            return self.amplitude_m * np.sin(2 * np.pi * t / self.period_s + self.phase_rad)
        return self.amplitude_m * np.sin(2 * np.pi * s / self.period_m + self.phase_rad)


@dataclass
class AxisErrors:
    """Cross-track or vertical error: sinusoids, a random walk (m/sqrt(s)) and white
    noise (m RMS)."""
    sinusoids: List[Sinusoid] = field(default_factory=list)
    random_walk: float = 0.0
    white: float = 0.0

    def check(self, name):
        for i, sn in enumerate(self.sinusoids):
            sn.check(f"{name} sinusoid {i}")
        for what, v, unit in (("random walk", self.random_walk, "m/sqrt(s)"),
                              ("white noise", self.white, "m RMS")):
            if not (math.isfinite(v) and v >= 0):
                raise ValueError(f"{name} {what}: must be >= 0 {unit} and finite (got {v!r})")


@dataclass
class MotionErrors:
    """Navigation errors of a simulation (module docstring): measured = true + e(t)."""
    prf: float = 1000.0                     #: pulse rate giving the pulses' times (Hz)
    velocity_error_mps: float = 0.0         #: along-track velocity error (m/s)
    cross_track: AxisErrors = field(default_factory=AxisErrors)
    vertical: AxisErrors = field(default_factory=AxisErrors)
    seed: int = 1

    def check(self):
        if not (math.isfinite(self.prf) and self.prf > 0):
            raise ValueError(f"motion errors: prf must be > 0 Hz and finite (got {self.prf!r})")
        if not math.isfinite(self.velocity_error_mps):
            raise ValueError(f"motion errors: along-track velocity error must be finite "
                             f"(got {self.velocity_error_mps!r})")
        self.cross_track.check("cross-track")
        self.vertical.check("vertical")

    def track_axes(self, path):
        """(tangent, cross, up): unit vectors (npulses, 3) of each pulse's local axes."""
        p = np.asarray(path, np.float64)
        tangent = np.gradient(p, axis=0) if len(p) > 1 else np.zeros_like(p)
        tangent[:, 2] = 0.0
        norm = np.linalg.norm(tangent, axis=1, keepdims=True)
        tangent = np.where(norm > 0, tangent / np.where(norm > 0, norm, 1.0), [[0.0, 1.0, 0.0]])
        up = np.zeros_like(p)
        up[:, 2] = 1.0
        cross = np.cross(up, tangent)  # horizontal, to the left of the direction of travel
        return tangent, cross, up

    def errors(self, path):
        """e (npulses, 3), measured minus true position of each pulse (m)."""
        self.check()
        p = np.asarray(path, np.float64)
        n = len(p)
        t = (np.arange(n) - (n - 1) / 2) / self.prf
        steps = np.linalg.norm(np.diff(p, axis=0), axis=1)
        s = np.concatenate([[0.0], np.cumsum(steps)])
        rng = np.random.default_rng(self.seed)
        tangent, cross, up = self.track_axes(p)
        e = self.velocity_error_mps * t[:, None] * tangent
        for axis, errs in ((cross, self.cross_track), (up, self.vertical)):
            value = np.zeros(n)
            for sn in errs.sinusoids:
                value += sn(t, s)
            # Drawn whatever the amplitudes so that one component's seed stream does not
            # shift when another is switched on.
            walk_steps = rng.standard_normal(n)
            white = rng.standard_normal(n)
            walk = np.concatenate([[0.0], np.cumsum(walk_steps[1:])])
            value += errs.random_walk / math.sqrt(self.prf) * walk + errs.white * white
            e += value[:, None] * axis
        return e

    def describe(self):
        return asdict(self)


@dataclass
class PhaseHistory(_Pulses):
    """Range-compressed pulses, their geometry, and the truth."""
    pulses: np.ndarray          #: complex64 (npulses, nbins)
    geometry: np.ndarray        #: float64 (npulses, 6): [x, y, z, r0, dr, f0], measured
    targets: List[Target]
    radar: Radar
    grid: Grid                  #: the suggested image grid
    path: dict = field(default_factory=dict)  #: flight path description
    #: with navigation errors: the true track's geometry (the echoes'), else None
    true_geometry: Optional[np.ndarray] = None
    motion: Optional[MotionErrors] = None


def straight_path(start, end, npulses):
    """npulses antenna positions (npulses, 3) evenly spaced from start to end."""
    return _core.straight_path(tuple(map(float, start)), tuple(map(float, end)), int(npulses))


def circular_path(centre, radius, start_rad, span_rad, npulses):
    """npulses positions (npulses, 3) on a circle around centre, at its height."""
    return _core.circular_path(tuple(map(float, centre)), float(radius), float(start_rad),
                               float(span_rad), int(npulses))


def simulate(path, targets: Sequence[Target], radar: Radar, grid: Grid,
             path_description=None, motion: Optional[MotionErrors] = None) -> PhaseHistory:
    """Phase history of targets seen from path ((npulses, 3) antenna positions, the true
    track). With `motion`, the geometry is the measured track (true + motion.errors())
    and true_geometry the true one."""
    path = np.ascontiguousarray(path, dtype=np.float64)
    if motion is not None:
        motion.check()
    positions = np.array([t.position for t in targets], dtype=np.float64).reshape(-1, 3)
    amplitudes = [complex(t.amplitude) for t in targets]
    gate = None if radar.gate_centre is None else tuple(map(float, radar.gate_centre))
    pulses, geometry = _core.simulate(path, positions, amplitudes, radar.f0,
                                      radar.bandwidth, radar.dr, radar.nbins, radar.r0,
                                      gate, radar.sinc_half_width, radar.noise_sigma,
                                      radar.seed)
    true_geometry = None
    if motion is not None:
        true_geometry = geometry
        geometry = geometry.copy()
        geometry[:, :3] += motion.errors(path)
    return PhaseHistory(pulses, geometry, list(targets), radar, grid,
                        dict(path_description or {"kind": "custom"}), true_geometry,
                        motion)


def scenario(kind="spotlight", npulses=256, nbins=512, f0=10e9, bandwidth=300e6,
             standoff=2000.0, altitude=500.0, aperture=None, image_size=40.0,
             pixel=None, targets=None, noise_sigma=0.0, seed=1,
             motion: Optional[MotionErrors] = None) -> PhaseHistory:
    """A ready-made scenario around the origin.

    kind: ``spotlight`` (straight path along x at y = -standoff, gate centred on the
    scene), ``stripmap`` (the same path, a fixed gate covering the scene) or
    ``circular`` (a full circle of radius standoff, gate centred on the scene).
    aperture: path length (m) for straight paths; by default one giving a cross-range
    resolution equal to the range resolution. pixel: image pixel spacing (m); by default
    a third of the range resolution. targets: list of Target; by default three on the
    ground (z = 0) inside the image, on pixel centres (a full circular aperture resolves
    ~lambda/4, far finer than any pixel: off-centre points would be sampled off their
    main lobe). motion: navigation errors (None: the measured track is the true one).
    """
    res = SPEED_OF_LIGHT / (2 * bandwidth)
    dr = res / 2  # two samples per resolution cell
    pixel = res / 3 if pixel is None else pixel
    wavelength = SPEED_OF_LIGHT / f0
    centre = (0.0, 0.0, 0.0)
    grid = Grid.around(centre, image_size, image_size, pixel)
    if targets is None:
        q = image_size / 4
        targets = []
        for (x, y), a in (((0.0, 0.0), 1.0), ((-q, 0.6 * q), 0.8j), ((0.7 * q, -q), 0.6)):
            ix, iy = grid.nearest_pixel((x, y))
            targets.append(Target((grid.x0 + ix * grid.dx, grid.y0 + iy * grid.dy, 0.0), a))
    slant = float(np.hypot(standoff, altitude))
    if kind in ("spotlight", "stripmap"):
        if aperture is None:
            # Cross-range resolution ~ lambda R / (2 L) = res.
            aperture = wavelength * slant / (2 * res)
        path = straight_path((-aperture / 2, -standoff, altitude),
                             (aperture / 2, -standoff, altitude), npulses)
        desc = {"kind": kind, "start": [-aperture / 2, -standoff, altitude],
                "end": [aperture / 2, -standoff, altitude], "npulses": npulses}
    elif kind == "circular":
        path = circular_path((0.0, 0.0, altitude), standoff, -np.pi / 2, 2 * np.pi, npulses)
        desc = {"kind": kind, "centre": [0.0, 0.0, altitude], "radius": standoff,
                "start_rad": -np.pi / 2, "span_rad": 2 * np.pi, "npulses": npulses}
    else:
        raise ValueError(f"scenario: kind must be one of spotlight, stripmap, circular "
                         f"(got {kind!r})")
    radar = Radar(f0=f0, bandwidth=bandwidth, dr=dr, nbins=nbins, noise_sigma=noise_sigma,
                  seed=seed)
    if kind == "stripmap":
        # One fixed gate for every pulse, centred on the nearest slant range to the scene.
        radar.r0 = slant - dr * (nbins // 2)
    else:
        radar.gate_centre = centre
    return simulate(path, targets, radar, grid, desc, motion)


def write(base, history: PhaseHistory, description="gpuradar point-target SAR simulation",
          datatype="cf32_le", full_scale=None):
    """Writes <base>.sigmf-data, <base>.sigmf-meta and <base>.geometry.f64; returns base.
    datatype: cf32_le, or ci16_le / ci8 (sigmf_io.SAMPLE_FORMATS) quantised with
    full_scale (> 0) reading back as 1.0; None: sigmf_io.unclipped_full_scale (the
    largest component quantised to the largest integer: nothing clips). The integer datatypes record
    gpuradar:full_scale and gpuradar:clipped_samples."""
    base = str(base)
    clipped = 0
    if datatype == "cf32_le":
        data = np.ascontiguousarray(history.pulses, dtype="<c8")
    else:
        if full_scale is None:
            full_scale = sigmf_io.unclipped_full_scale(history.pulses, datatype)
        data, clipped = sigmf_io.from_complex64(history.pulses.ravel(), datatype,
                                                full_scale)
    sigmf_io.write_file(base + DATA_SUFFIX, data)
    sigmf_io.write_file(base + GEOMETRY_SUFFIX,
                        np.ascontiguousarray(history.geometry, dtype="<f8"))
    if history.true_geometry is not None:
        sigmf_io.write_file(base + TRUE_GEOMETRY_SUFFIX,
                            np.ascontiguousarray(history.true_geometry, dtype="<f8"))
    r = history.radar
    n = history.npulses * history.nbins
    ns = NAMESPACE + ":"
    g = sigmf_io.global_fields(SPEED_OF_LIGHT / (2 * r.dr), description,
                               "gnuradio.gpuradar.sar_sim")
    g.update({
        ns + "npulses": history.npulses,
        ns + "nbins": history.nbins,
        ns + "f0": r.f0,
        ns + "bandwidth": r.bandwidth,
        ns + "dr": r.dr,
        ns + "noise_sigma": r.noise_sigma,
        ns + "path": history.path,
        ns + "grid": asdict(history.grid),
        ns + "geometry_file": os.path.basename(base) + GEOMETRY_SUFFIX,
        ns + "geometry_format": GEOMETRY_FORMAT,
    })
    if datatype != "cf32_le":
        g.update({"core:datatype": datatype, ns + "full_scale": float(full_scale),
                  ns + "clipped_samples": int(clipped)})
    if history.true_geometry is not None:
        g[ns + "true_geometry_file"] = os.path.basename(base) + TRUE_GEOMETRY_SUFFIX
        g[ns + "motion_errors"] = history.motion.describe()
    annotations = [
        {"core:sample_start": 0, "core:sample_count": n,
         "core:label": f"target {i}",
         ns + "position": [float(v) for v in t.position],
         ns + "amplitude": [complex(t.amplitude).real, complex(t.amplitude).imag]}
        for i, t in enumerate(history.targets)
    ]
    sigmf_io.write_meta(base, g, [{"core:sample_start": 0}], annotations, indent=2)
    return base


@dataclass
class Recording(_Pulses):
    """A phase-history recording as read back (pulses memory-mapped)."""
    base: str
    meta: dict
    #: (npulses, nbins) read-only memory map: complex64 (cf32_le), or (re, im) integer
    #: records (ci16_le, ci8; complex_pulses() converts them)
    pulses: np.ndarray
    geometry: np.ndarray        #: float64 (npulses, 6)
    targets: List[Target]
    grid: Grid
    #: the geometry file read: named by the metadata (beside the recording) or given on
    #: the command line
    geometry_file: Optional[str] = None
    #: float64 (npulses, 6): the true track's geometry of a recording with navigation
    #: errors (gpuradar:true_geometry_file), else None
    true_geometry: Optional[np.ndarray] = None

    @property
    def data_path(self):
        return self.base + DATA_SUFFIX

    @property
    def geometry_path(self):
        return self.geometry_file

    def field(self, name, default=None):
        """A gpuradar: global field, e.g. field('f0')."""
        return self.meta["global"].get(NAMESPACE + ":" + name, default)

    @property
    def datatype(self):
        """The data file's SigMF datatype (cf32_le, ci16_le or ci8)."""
        return self.meta["global"]["core:datatype"]

    def complex_pulses(self):
        """The pulses as complex64 (npulses, nbins): the memory map of a cf32_le
        recording, integers converted with 1.0 = full scale (sigmf_io.to_complex64)."""
        if self.datatype == "cf32_le":
            return self.pulses
        raw = np.asarray(self.pulses).view(sigmf_io.SAMPLE_FORMATS[self.datatype][1])
        return sigmf_io.to_complex64(raw.ravel(), self.datatype).reshape(self.pulses.shape)


def base_of(path):
    """The recording prefix of any of its files (or of the prefix itself)."""
    return sigmf_io.base_of(path, (TRUE_GEOMETRY_SUFFIX, GEOMETRY_SUFFIX))


#: Largest recording read (samples) and image grid accepted from metadata (pixels).
MAX_SAMPLES = 1 << 31
MAX_GRID_PIXELS = 1 << 26


def read(path, overrides=None, datatypes=("cf32_le",)) -> Recording:
    """Reads and validates a recording written by write() (any of its file names, or the
    prefix).

    overrides: {"npulses" | "nbins" | "geometry_file": (option, value)} given on the
    command line, used instead of the metadata's (a geometry file given there may be any
    path). Without npulses anywhere, it is the data's size over nbins. Raises
    sigmf_io.RecordingError naming the file and the field for anything missing, of the
    wrong type, or disagreeing with the data (its size must be npulses x nbins samples,
    the geometry's npulses x 6 values, its bin spacing the metadata's dr). datatypes: the
    SigMF datatypes accepted (sigmf_io.SAMPLE_FORMATS; gpuradar-sar takes all three;
    pulses of an integer datatype are mapped as (re, im) records: complex_pulses())."""
    base = base_of(path)
    mpath, dpath = base + META_SUFFIX, base + DATA_SUFFIX
    meta = sigmf_io.read_meta(mpath)
    ns = NAMESPACE + ":"
    ov = {ns + k: v for k, v in (overrides or {}).items() if v[1] is not None}
    g = sigmf_io.Fields(meta["global"], mpath, "global", ov)
    datatype = g.string("core:datatype")
    if datatype not in datatypes:
        raise g.error("core:datatype", f"must be {' or '.join(datatypes)} (got "
                                       f"{datatype!r})")
    sample_bytes = sigmf_io.sample_bytes(datatype)
    if g.has(ns + "full_scale"):
        g.number(ns + "full_scale", above=0)
    nbins = g.number(ns + "nbins", int, minimum=1, maximum=MAX_SAMPLES)
    size = sigmf_io.data_file(dpath, mpath)
    samples = size // sample_bytes
    if g.has(ns + "npulses"):
        npulses = g.number(ns + "npulses", int, minimum=1, maximum=MAX_SAMPLES)
        npulses_name = g.name(ns + "npulses")
    else:
        npulses = samples // nbins
        npulses_name = f"npulses (the data's samples / {g.name(ns + 'nbins')})"
        if npulses < 1:
            raise RecordingError(f"{dpath}: {samples} samples, not one pulse of "
                                 f"{g.name(ns + 'nbins')} = {nbins}")
    if size != npulses * nbins * sample_bytes:
        raise RecordingError(f"{dpath}: {size} bytes, not {npulses_name} x "
                             f"{g.name(ns + 'nbins')} = {npulses} x {nbins} {datatype} "
                             f"samples ({npulses * nbins * sample_bytes} bytes)")
    for key in ("f0", "bandwidth", "dr"):
        if ns + key in g.obj:
            g.number(ns + key, above=0)
    if ns + "dr" in g.obj and "core:sample_rate" in g.obj:
        rate, dr = g.number("core:sample_rate", above=0), g.number(ns + "dr", above=0)
        if not sigmf_io.agree(rate, SPEED_OF_LIGHT / (2 * dr), 1e-6):
            raise RecordingError(f"{mpath}: metadata fields 'global.core:sample_rate' "
                                 f"({rate:g}) and 'global.{ns}dr' ({dr:g} m, c / (2 dr) = "
                                 f"{SPEED_OF_LIGHT / (2 * dr):g}) disagree")
    if ns + "geometry_file" in ov:
        geo_path = ov[ns + "geometry_file"][1]
    else:
        geo_path = sigmf_io.side_file(base, g.raw(ns + "geometry_file"),
                                      f"global.{ns}geometry_file", mpath)
    geo_size = sigmf_io.data_file(geo_path, mpath, "geometry file")
    if geo_size != npulses * GEOMETRY_LENGTH * 8:
        raise RecordingError(f"{geo_path}: {geo_size} bytes, not {npulses_name} "
                             f"x {GEOMETRY_LENGTH} float64 = {npulses * GEOMETRY_LENGTH * 8} "
                             f"bytes")
    geometry = np.fromfile(geo_path, dtype="<f8").reshape(npulses, GEOMETRY_LENGTH)
    _check_geometry(geometry, geo_path, g, mpath)
    true_geometry = None
    if g.has(ns + "true_geometry_file"):
        true_path = sigmf_io.side_file(base, g.raw(ns + "true_geometry_file"),
                                       f"global.{ns}true_geometry_file", mpath)
        true_size = sigmf_io.data_file(true_path, mpath, "true geometry file")
        if true_size != npulses * GEOMETRY_LENGTH * 8:
            raise RecordingError(f"{true_path}: {true_size} bytes, not {npulses_name} x "
                                 f"{GEOMETRY_LENGTH} float64 = "
                                 f"{npulses * GEOMETRY_LENGTH * 8} bytes")
        true_geometry = np.fromfile(true_path, dtype="<f8").reshape(npulses,
                                                                    GEOMETRY_LENGTH)
    component = sigmf_io.SAMPLE_FORMATS[datatype][1]
    sample = "<c8" if datatype == "cf32_le" else [("re", component), ("im", component)]
    pulses = np.memmap(dpath, dtype=sample, mode="r", shape=(npulses, nbins))
    grid = _grid(g, ns)
    targets = _targets(meta, mpath, ns)
    meta = dict(meta, **{"global": dict(meta["global"], **{k: v for k, (_, v) in ov.items()
                                                            if k != ns + "geometry_file"})})
    return Recording(base, meta, pulses, geometry, targets, grid, geo_path, true_geometry)


def _check_geometry(geometry, geo_path, g, mpath):
    """The bin spacing of every usable pulse is the metadata's gpuradar:dr, when it has
    one. A pulse with non-finite geometry or dr <= 0 is a data error the backprojection
    block skips and counts (skipped_pulses), not a reason to refuse the recording."""
    key = NAMESPACE + ":dr"
    if key not in g.obj or not len(geometry):
        return
    dr = g.number(key, above=0)
    usable = np.isfinite(geometry).all(axis=1) & (geometry[:, 4] > 0)
    off = usable & ~np.isclose(geometry[:, 4], dr, rtol=1e-6, atol=0)
    if off.any():
        i = int(np.argmax(off))
        raise RecordingError(f"{geo_path}: pulse {i}: bin spacing {geometry[i, 4]:g} m "
                             f"disagrees with {mpath} metadata field 'global.{key}' "
                             f"({dr:g} m)")


def _grid(g, ns):
    """The suggested image grid: x0, y0, z finite, dx, dy > 0, nx, ny >= 1."""
    f = g.object(ns + "grid")
    grid = Grid(f.number("x0"), f.number("y0"), f.number("dx", above=0),
                f.number("dy", above=0), f.number("nx", int, minimum=1),
                f.number("ny", int, minimum=1), f.number("z", default=0.0))
    if grid.nx * grid.ny > MAX_GRID_PIXELS:
        raise f.error("nx", f"x ny ({grid.nx} x {grid.ny}) must be <= {MAX_GRID_PIXELS} "
                            f"pixels")
    return grid


def _targets(meta, mpath, ns):
    """The truth: annotations with gpuradar:position [x, y, z] and gpuradar:amplitude
    [re, im]."""
    return [Target(tuple(f.numbers(ns + "position", 3)),
                   complex(*f.numbers(ns + "amplitude", 2, default=[1.0, 0.0])))
            for f in sigmf_io.annotations_with(meta, mpath, ns + "position")]


@dataclass
class Focus:
    """How one truth target came out in an image."""
    target: Target
    expected: Tuple[int, int]   #: (ix, iy) nearest the truth
    peak: Tuple[int, int]       #: (ix, iy) of the largest |pixel| near it
    offset_px: float            #: distance between the two (pixels)
    peak_db: float              #: 20 log10 |peak| relative to the image maximum
    width_x_m: float = float("nan")  #: -3 dB width of |image| along x through the peak (m)
    width_y_m: float = float("nan")  #: the same along y (m)


def _width_3db(profile, i, spacing):
    """-3 dB width (linear interpolation) of |profile| around its sample i; nan at edges."""
    half = profile[i] / np.sqrt(2)
    lo = i
    while lo > 0 and profile[lo] > half:
        lo -= 1
    hi = i
    while hi < len(profile) - 1 and profile[hi] > half:
        hi += 1
    if profile[lo] > half or profile[hi] > half:
        return float("nan")
    left = lo + (half - profile[lo]) / (profile[lo + 1] - profile[lo])
    right = hi - (half - profile[hi]) / (profile[hi - 1] - profile[hi])
    return float((right - left) * spacing)


def focus(image, grid: Grid, targets: Sequence[Target], search_px=4) -> List[Focus]:
    """For each target, the brightest pixel within search_px of its true pixel, how far
    it lies from the truth, its level and its -3 dB widths along x and y."""
    mag = np.abs(np.asarray(image))
    top = float(mag.max()) if mag.size else 0.0
    out = []
    for t in targets:
        ix, iy = grid.nearest_pixel(t.position)
        x0, x1 = max(0, ix - search_px), min(grid.nx, ix + search_px + 1)
        y0, y1 = max(0, iy - search_px), min(grid.ny, iy + search_px + 1)
        if x0 >= x1 or y0 >= y1:
            out.append(Focus(t, (ix, iy), (-1, -1), float("inf"), float("-inf")))
            continue
        win = mag[y0:y1, x0:x1]
        py, px = np.unravel_index(int(np.argmax(win)), win.shape)
        peak = (x0 + int(px), y0 + int(py))
        value = float(win[py, px])
        db = 20 * np.log10(value / top) if value > 0 and top > 0 else float("-inf")
        out.append(Focus(t, (ix, iy), peak, float(np.hypot(peak[0] - ix, peak[1] - iy)), db,
                         _width_3db(mag[peak[1], :], peak[0], grid.dx),
                         _width_3db(mag[:, peak[0]], peak[1], grid.dy)))
    return out
