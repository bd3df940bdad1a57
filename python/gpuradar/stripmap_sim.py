#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""Stripmap SAR recordings: simulation, the recording format, the reader, and the focus
report (impulse-response width, PSLR, ISLR and position of each point target against the
theory of the window used).

The echoes are the DSP core's (gpuradar::kernels::stripmap_sim, run by the
``gpuradar.stripmap_source`` block in a flowgraph): raw (uncompressed) LFM echoes of a
straight, level pass flying north (+y), looking east (+x); see kernels/stripmap.h.

Recording format (``<base>`` is any path prefix)
-------------------------------------------------
``<base>.sigmf-data``
    The raw pulses, SigMF datatype ``cf32_le``: npulses x nrange complex64, pulse-major;
    or ``ci16_le`` / ``ci8`` interleaved integers (sc16 / sc8), read with 1.0 = full
    scale, with ``gpuradar:full_scale`` (the amplitude written as full scale) and
    ``gpuradar:clipped_samples`` in ``global`` (simulate()).
    ``blocks.file_source(gr.sizeof_gr_complex * nrange, path)`` reads one pulse per item:
    the input of ``gpuradar.sar_focus``.
``<base>.sigmf-meta``
    SigMF JSON. ``global`` holds the core fields (``core:datatype`` ``cf32_le``,
    ``core:sample_rate`` = fs, the range sampling rate) and ``gpuradar:mode``
    ``"stripmap"``, ``gpuradar:npulses``, ``gpuradar:noise_sigma``, ``gpuradar:seed``,
    ``gpuradar:first_pulse_y`` (m, along-track position of pulse 0) and
    ``gpuradar:stripmap``: the acquisition, an object with the fields of the ``stripmap``
    stream tag (docs/CONVENTIONS.md): fc, bandwidth, pulse_width, up_chirp, fs, prf,
    velocity, altitude, r0 (slant range of sample 0), nrange, squint, antenna_length.
    With a distributed scene, ``gpuradar:scene`` describes it: ``source`` (the .npy file
    or ``patch``), ``nx``, ``ny``, ``x0``, ``y0`` (m, cell (0, 0)), ``spacing`` (m),
    ``phase_seed`` (the random phases given to a real image) and ``mean_intensity``
    (mean |reflectivity|^2).
    The truth is one annotation per target with ``gpuradar:position`` [x, y, z] (m),
    ``gpuradar:amplitude`` [re, im] and, for convenience, ``gpuradar:slant_range_m``
    and ``gpuradar:azimuth_m`` (its closest approach).
``<base>.track.f64``, ``<base>.true_track.f64`` (only with navigation errors)
    The measured and the true antenna positions, float64 little-endian, npulses x 3
    ([x, y, z] m), named by ``gpuradar:track_file`` and ``gpuradar:true_track_file``; the
    model is ``gpuradar:motion_errors`` (sar_sim.MotionErrors' fields, its prf the
    acquisition's). The echoes are the true track's, the straight level pass
    (x = 0, y = first_pulse_y + i v / prf, z = altitude) that stripmap_source flies: these
    are navigation errors, the measured track true + e(t) (sar_sim's module docstring has
    the models). Backprojection (focus_bp) uses the measured track; chirp scaling
    assumes the straight pass whatever the track.
"""

import dataclasses
import math
import os
from dataclasses import asdict, dataclass, field
from typing import List, Optional, Sequence

import numpy as np

from . import sigmf_io
from .sar_sim import MotionErrors
from .gpuradar_python import speed_of_light as _speed_of_light
from .gpuradar_python import window_coefficients
from .sigmf_io import DATA_SUFFIX, META_SUFFIX, NAMESPACE, RecordingError

SPEED_OF_LIGHT = _speed_of_light
MODE = "stripmap"
TRACK_SUFFIX = ".track.f64"
TRUE_TRACK_SUFFIX = ".true_track.f64"
#: Largest recording read or simulated (samples).
MAX_SAMPLES = 1 << 31
#: The acquisition's fields, in the blocks' argument order.
ACQ_FIELDS = ("fc", "bandwidth", "pulse_width", "up_chirp", "fs", "prf", "velocity",
              "altitude", "r0", "nrange", "squint", "antenna_length")


@dataclass
class Acquisition:
    """kernels::stripmap_params in the tag's names (r0 = near slant range)."""
    fc: float = 9.6e9
    bandwidth: float = 50e6
    pulse_width: float = 1e-6
    up_chirp: bool = True
    fs: float = 60e6
    prf: float = 200.0
    velocity: float = 150.0
    altitude: float = 1000.0
    r0: float = 2000.0
    nrange: int = 256
    squint: float = 0.0
    antenna_length: float = 2.0

    @property
    def dr(self):
        """Slant-range spacing of the samples (m)."""
        return SPEED_OF_LIGHT / (2 * self.fs)

    @property
    def dy(self):
        """Along-track spacing of the pulses (m)."""
        return self.velocity / self.prf

    @property
    def doppler_bandwidth(self):
        """Processed (3 dB) Doppler bandwidth (Hz), as kernels::stripmap_params."""
        return 0.886 * 2 * self.velocity / self.antenna_length

    def block_args(self):
        """Positional arguments of stripmap_source / sar_focus (the acquisition)."""
        return [getattr(self, f) for f in ACQ_FIELDS]


@dataclass
class Target:
    x: float
    y: float
    z: float = 0.0
    amplitude: float = 1.0

    def slant_range(self, acq: Acquisition):
        """Closest-approach slant range (m)."""
        return math.hypot(self.x, self.z - acq.altitude)


#: Most cells of a distributed scene (each costs about an aperture of echoes).
MAX_SCENE_CELLS = 1 << 20


@dataclass
class Reflectivity:
    """A distributed scene (kernels::stripmap_sim::reflectivity_grid): data[j, i] is the
    complex amplitude of a scatterer at (x0 + i spacing, y0 + j spacing, 0), rows along
    track. data is None for a scene read back from a recording's metadata."""
    data: Optional[np.ndarray]
    x0: float
    y0: float
    spacing: float
    source: str
    phase_seed: int = 0
    shape: Optional[tuple] = None  #: (ny, nx) when data is None

    @property
    def ny(self):
        return (self.data.shape if self.data is not None else self.shape)[0]

    @property
    def nx(self):
        return (self.data.shape if self.data is not None else self.shape)[1]

    def extent(self):
        """(x_min, x_max, y_min, y_max) of the cell centres (m)."""
        return (self.x0, self.x0 + (self.nx - 1) * self.spacing,
                self.y0, self.y0 + (self.ny - 1) * self.spacing)


@dataclass
class Scene:
    acq: Acquisition
    targets: List[Target]
    npulses: int
    noise_sigma: float = 0.05
    seed: int = 1
    first_pulse_y: float = 0.0
    reflectivity: Optional[Reflectivity] = None
    #: navigation errors (None: the measured track is the true one, no track files)
    motion: Optional[MotionErrors] = None

    def true_track(self):
        """(npulses, 3) antenna positions of the straight pass the echoes come from."""
        p = np.zeros((self.npulses, 3))
        p[:, 1] = self.first_pulse_y + np.arange(self.npulses) * self.acq.dy
        p[:, 2] = self.acq.altitude
        return p

    def motion_at_prf(self):
        """motion with the acquisition's prf (the pulses' times), or None."""
        if self.motion is None:
            return None
        return dataclasses.replace(self.motion, prf=self.acq.prf)

    def measured_track(self):
        """true_track() plus the navigation errors."""
        motion = self.motion_at_prf()
        true = self.true_track()
        return true if motion is None else true + motion.errors(true)


def textured_patch(n=64):
    """The built-in distributed scene: n x n amplitudes in four quadrants, 1 and 1/2
    (near and far range) on the southern half, 1/4 and 0 on the northern half; intensities
    1, 1/4, 1/16 and 0."""
    h = n // 2
    amp = np.zeros((n, n))
    amp[:h, :h], amp[:h, h:], amp[h:, :h] = 1.0, 0.5, 0.25
    return amp


def reflectivity_from_image(image, acq: Acquisition, npulses, first_pulse_y, spacing,
                            source, centre=None, phase_seed=1):
    """A Reflectivity of `image` (2-D, real: amplitudes given uniform random phases from
    phase_seed, i.e. speckle; complex: used as is) with square cells of `spacing` m,
    centred on `centre` (x, y) or on the swath's centre at the middle of the strip.
    ValueError naming `source` for an image that is not 2-D, empty, too large, or not
    finite numbers."""
    a = np.asarray(image)
    if a.ndim != 2 or a.size == 0:
        raise ValueError(f"{source}: the scene must be a non-empty 2-D array (rows along "
                         f"track, columns across), got shape {a.shape}")
    if a.size > MAX_SCENE_CELLS:
        raise ValueError(f"{source}: {a.size} scene cells, more than {MAX_SCENE_CELLS}")
    if a.dtype.kind not in "iufc":
        raise ValueError(f"{source}: the scene must hold real or complex numbers (dtype "
                         f"{a.dtype})")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{source}: the scene holds non-finite values")
    if not (math.isfinite(spacing) and spacing > 0):
        raise ValueError(f"scene spacing: must be > 0 and finite (got {spacing})")
    if np.iscomplexobj(a):
        data = a.astype(np.complex64)
    else:
        rng = np.random.default_rng(phase_seed)
        data = (a * np.exp(2j * np.pi * rng.random(a.shape))).astype(np.complex64)
    if centre is None:
        far = acq.r0 + (acq.nrange - 1) * acq.dr
        mid = 0.5 * (acq.r0 + far)
        centre = (math.sqrt(max(mid ** 2 - acq.altitude ** 2, 0.0)),
                  first_pulse_y + 0.5 * npulses * acq.dy)
    ny, nx = data.shape
    return Reflectivity(data, centre[0] - 0.5 * (nx - 1) * spacing,
                        centre[1] - 0.5 * (ny - 1) * spacing, spacing, source,
                        phase_seed if not np.iscomplexobj(a) else 0)


def load_reflectivity_image(path):
    """The array of a .npy file; ValueError naming the file when it cannot be read."""
    try:
        return np.load(path, allow_pickle=False)
    except (OSError, ValueError, EOFError) as e:
        raise ValueError(f"{path}: not a readable .npy array ({e})") from None


def presets():
    """The apps' embedded scenes. default: X band, 3 m x ~1 m resolution, a 640 m swath at
    2 km, 1500 pulses (1.1 km of strip), six targets; tiny: the same radar, 700 pulses and
    three targets (tests)."""
    acq = Acquisition()

    def at(r0, y, a=1.0):
        return Target(math.sqrt(r0 ** 2 - acq.altitude ** 2), y, 0.0, a)

    default = Scene(acq, [at(2100, 150), at(2100, 420, 0.8), at(2300, 300),
                          at(2300, 316, 0.7), at(2500, 600, 0.5), at(2550, 900)], 1500)
    tiny = Scene(acq, [at(2150, 110), at(2300, 200, 0.8), at(2480, 300, 0.6)], 700)
    return {"default": default, "tiny": tiny}


def simulate(scene: Scene, base, progress=None, datatype="cf32_le", full_scale=None):
    """Writes <base>.sigmf-data through a flowgraph (stripmap_source -> file_sink) and
    <base>.sigmf-meta; returns base. ValueError (the block's, naming the parameter) for a
    bad scene. progress(tb, src, total) runs the flowgraph when given. datatype: cf32_le,
    or ci16_le / ci8 (sigmf_io.SAMPLE_FORMATS) quantised with full_scale (> 0) reading
    back as 1.0; None: sigmf_io.unclipped_full_scale of the echoes (nothing clips). An
    integer recording is simulated to a cf32_le file beside it first
    (<base>.sigmf-data.cf32, removed after), then quantised block by block."""
    from gnuradio import blocks, gr
    from . import gpuradar_python as gpr
    a = scene.acq
    if scene.npulses * a.nrange > MAX_SAMPLES:
        raise ValueError(f"npulses x nrange = {scene.npulses} x {a.nrange} samples, more "
                         f"than {MAX_SAMPLES}")
    if scene.motion is not None:
        scene.motion_at_prf().check()
    src = gpr.stripmap_source(*a.block_args(), [t.x for t in scene.targets],
                              [t.y for t in scene.targets], [t.z for t in scene.targets],
                              [t.amplitude for t in scene.targets], scene.noise_sigma,
                              scene.first_pulse_y, scene.npulses, scene.seed,
                              *_scene_args(scene.reflectivity))
    tb = gr.top_block()
    data_path = str(base) + DATA_SUFFIX
    float_path = data_path + (".cf32" if datatype != "cf32_le" else "")
    snk = blocks.file_sink(gr.sizeof_gr_complex * a.nrange, float_path)
    snk.set_unbuffered(False)
    tb.connect(src, snk)
    quantised = None
    try:
        if progress:
            progress(tb, src, scene.npulses)
        else:
            tb.run()
        snk.close()
        if datatype != "cf32_le":
            quantised = sigmf_io.quantise_file(float_path, data_path, datatype, full_scale,
                                               chunk=max(1, (1 << 20) // a.nrange) * a.nrange)
    finally:
        if datatype != "cf32_le" and os.path.exists(float_path):
            os.remove(float_path)
    write_meta(base, scene, datatype=datatype, quantised=quantised)
    if scene.motion is not None:
        sigmf_io.write_file(str(base) + TRACK_SUFFIX,
                            np.ascontiguousarray(scene.measured_track(), "<f8"))
        sigmf_io.write_file(str(base) + TRUE_TRACK_SUFFIX,
                            np.ascontiguousarray(scene.true_track(), "<f8"))
    return base


def _scene_args(r: Optional[Reflectivity]):
    """stripmap_source's scene_* arguments."""
    if r is None:
        return [[], 0, 0.0, 0.0, 1.0]
    return [r.data.ravel().tolist(), r.nx, r.x0, r.y0, r.spacing]


def write_meta(base, scene: Scene, description="gpuradar stripmap SAR simulation",
               datatype="cf32_le", quantised=None):
    """<base>.sigmf-meta of the scene; quantised: (full scale, clipped samples) of an
    integer datatype (sigmf_io.quantise_file's)."""
    ns = NAMESPACE + ":"
    a = scene.acq
    g = sigmf_io.global_fields(a.fs, description, "gnuradio.gpuradar.stripmap_source")
    if datatype != "cf32_le":
        g.update({"core:datatype": datatype, ns + "full_scale": quantised[0],
                  ns + "clipped_samples": int(quantised[1])})
    g.update({ns + "mode": MODE, ns + "npulses": scene.npulses,
              ns + "noise_sigma": scene.noise_sigma, ns + "seed": scene.seed,
              ns + "first_pulse_y": scene.first_pulse_y, ns + "stripmap": asdict(a)})
    r = scene.reflectivity
    if r is not None:
        g[ns + "scene"] = {"source": r.source, "nx": r.nx, "ny": r.ny, "x0": r.x0,
                           "y0": r.y0, "spacing": r.spacing, "phase_seed": r.phase_seed,
                           "mean_intensity": float(np.mean(np.abs(r.data) ** 2))}
    if scene.motion is not None:
        name = os.path.basename(str(base))
        g[ns + "track_file"] = name + TRACK_SUFFIX
        g[ns + "true_track_file"] = name + TRUE_TRACK_SUFFIX
        g[ns + "motion_errors"] = asdict(scene.motion_at_prf())
    n = scene.npulses * a.nrange
    annotations = [
        {"core:sample_start": 0, "core:sample_count": n, "core:label": f"target {i}",
         ns + "position": [t.x, t.y, t.z], ns + "amplitude": [t.amplitude, 0.0],
         ns + "slant_range_m": t.slant_range(a), ns + "azimuth_m": t.y}
        for i, t in enumerate(scene.targets)]
    sigmf_io.write_meta(base, g, [{"core:sample_start": 0}], annotations, indent=2)


@dataclass
class Recording:
    base: str
    scene: Scene
    #: (npulses, 3) measured and true antenna positions of a recording with navigation
    #: errors (gpuradar:track_file, gpuradar:true_track_file), else None
    track: Optional[np.ndarray] = None
    true_track: Optional[np.ndarray] = None
    #: the data file's SigMF datatype: cf32_le, or ci16_le / ci8 (1.0 = full scale)
    datatype: str = "cf32_le"

    @property
    def data_path(self):
        return self.base + DATA_SUFFIX

    @property
    def meta_path(self):
        return self.base + META_SUFFIX


def base_of(path):
    return sigmf_io.base_of(path, (TRUE_TRACK_SUFFIX, TRACK_SUFFIX))


def is_stripmap(path):
    """True when the recording's metadata says gpuradar:mode stripmap (errors: False)."""
    try:
        meta = sigmf_io.read_meta(base_of(path) + META_SUFFIX)
        return meta.get("global", {}).get(NAMESPACE + ":mode") == MODE
    except (RecordingError, OSError, AttributeError):
        return False


def read(path, datatypes=("cf32_le",)) -> Recording:
    """Reads and checks a recording written by simulate(): RecordingError naming the file
    and the field for anything missing, of the wrong type, or disagreeing with the data
    (its size must be npulses x nrange samples). datatypes: the SigMF datatypes accepted
    (sigmf_io.SAMPLE_FORMATS; gpuradar-sar takes all three)."""
    base = base_of(path)
    mpath, dpath = base + META_SUFFIX, base + DATA_SUFFIX
    meta = sigmf_io.read_meta(mpath)
    ns = NAMESPACE + ":"
    g = sigmf_io.Fields(meta["global"], mpath, "global")
    datatype = g.string("core:datatype")
    if datatype not in datatypes:
        raise g.error("core:datatype", f"must be {' or '.join(datatypes)} (got "
                                       f"{datatype!r})")
    sample_bytes = sigmf_io.sample_bytes(datatype)
    if g.has(ns + "full_scale"):
        g.number(ns + "full_scale", above=0)
    g.string(ns + "mode", choices=(MODE,))
    s = g.object(ns + "stripmap")
    a = Acquisition(
        fc=s.number("fc", above=0), bandwidth=s.number("bandwidth", above=0),
        pulse_width=s.number("pulse_width", above=0), up_chirp=s.boolean("up_chirp"),
        fs=s.number("fs", above=0), prf=s.number("prf", above=0),
        velocity=s.number("velocity", above=0), altitude=s.number("altitude", minimum=0),
        r0=s.number("r0", above=0), nrange=s.number("nrange", int, minimum=2,
                                                    maximum=1 << 24),
        squint=s.number("squint", minimum=-0.35, maximum=0.35),
        antenna_length=s.number("antenna_length", above=0))
    rate = g.number("core:sample_rate", above=0)
    if not sigmf_io.agree(rate, a.fs, 1e-9):
        raise RecordingError(f"{mpath}: metadata fields 'global.core:sample_rate' ({rate:g})"
                             f" and 'global.{ns}stripmap.fs' ({a.fs:g}) disagree")
    npulses = g.number(ns + "npulses", int, minimum=1, maximum=MAX_SAMPLES // a.nrange)
    size = sigmf_io.data_file(dpath, mpath)
    if size != npulses * a.nrange * sample_bytes:
        raise RecordingError(f"{dpath}: {size} bytes, not metadata fields "
                             f"'global.{ns}npulses' x 'global.{ns}stripmap.nrange' = "
                             f"{npulses} x {a.nrange} {datatype} samples "
                             f"({npulses * a.nrange * sample_bytes} bytes): truncated or not "
                             f"this recording's data")
    targets = []
    for f in sigmf_io.annotations_with(meta, mpath, ns + "position"):
        x, y, z = f.numbers(ns + "position", 3)
        amp = f.numbers(ns + "amplitude", 2, default=[1.0, 0.0])
        targets.append(Target(x, y, z, amp[0]))
    scene = Scene(a, targets, npulses, g.number(ns + "noise_sigma", minimum=0, default=0.0),
                  g.number(ns + "seed", int, minimum=0, default=1),
                  g.number(ns + "first_pulse_y", default=0.0),
                  _read_scene(g.object(ns + "scene", default=None)))
    tracks = [_read_track(base, g, ns + key, npulses, mpath)
              for key in ("track_file", "true_track_file")]
    return Recording(base, scene, *tracks, datatype=datatype)


def _read_track(base, g, key, npulses, mpath):
    """The npulses x 3 float64 side file the field `key` names, or None without it."""
    if not g.has(key):
        return None
    path = sigmf_io.side_file(base, g.raw(key), f"global.{key}", mpath)
    size = sigmf_io.data_file(path, mpath, "track file")
    if size != npulses * 3 * 8:
        raise RecordingError(f"{path}: {size} bytes, not metadata field "
                             f"'global.{NAMESPACE}:npulses' x 3 float64 = {npulses * 24} "
                             f"bytes")
    track = np.fromfile(path, dtype="<f8").reshape(npulses, 3)
    if not np.isfinite(track).all():
        i = int(np.argmax(~np.isfinite(track).all(axis=1)))
        raise RecordingError(f"{path}: pulse {i}: non-finite position {track[i].tolist()}")
    return track


def _read_scene(f):
    """The Reflectivity (without data) of the metadata's gpuradar:scene, or None."""
    if f is None:
        return None
    shape = (f.number("ny", int, minimum=1, maximum=MAX_SCENE_CELLS),
             f.number("nx", int, minimum=1, maximum=MAX_SCENE_CELLS))
    if shape[0] * shape[1] > MAX_SCENE_CELLS:
        raise f.error("nx", f"x ny must be at most {MAX_SCENE_CELLS} cells (got "
                            f"{shape[1]} x {shape[0]})")
    return Reflectivity(None, f.number("x0"), f.number("y0"), f.number("spacing", above=0),
                        f.string("source"), f.number("phase_seed", int, minimum=0,
                                                     default=0), shape)


# --- focus quality -------------------------------------------------------------------

@dataclass
class Response:
    """One axis of a focused point target: -3 dB width (m), peak and integrated sidelobe
    ratios (dB)."""
    irw_m: float
    pslr_db: float
    islr_db: float


@dataclass
class FocusReport:
    target: Target
    row: float                  #: interpolated peak, image rows (azimuth)
    col: float                  #: interpolated peak, image columns (slant range)
    error_azimuth_m: float      #: peak minus truth, along track (m)
    error_range_m: float        #: peak minus truth, slant range (m)
    peak_db: float              #: re the image maximum
    range_: Response = field(default=None)
    azimuth: Response = field(default=None)


def _interpolated_power(cut, up):
    """|cut|^2 interpolated `up` times (zero-padded spectrum; the cut decays at its ends)."""
    n = len(cut)
    spec = np.fft.fftshift(np.fft.fft(cut))
    padded = np.zeros(n * up, complex)
    padded[(n * up - n) // 2:(n * up - n) // 2 + n] = spec
    return np.abs(np.fft.ifft(np.fft.ifftshift(padded)) * up) ** 2


def measure(power, spacing):
    """(peak index, Response) of the power profile `power` sampled every `spacing` m: the
    -3 dB width, the highest sidelobe beyond the first nulls and the sidelobe-to-main-lobe
    energy (within the profile)."""
    p = np.asarray(power, float)
    m = int(np.argmax(p))
    half = p[m] / 2

    def edge(d):
        i = m
        while 0 < i + d < len(p) - 1 and p[i + d] > half:
            i += d
        return i + d * (p[i] - half) / (p[i] - p[i + d])

    def null(d):
        i = m
        while 0 < i + d < len(p) - 1 and p[i + d] < p[i]:
            i += d
        return i

    lo, hi = null(-1), null(+1)
    side = np.concatenate([p[:lo + 1], p[hi:]])
    main = p[lo + 1:hi]
    return m, Response((edge(1) - edge(-1)) * spacing,
                       10 * math.log10(side.max() / p[m]) if side.size else -math.inf,
                       10 * math.log10(side.sum() / main.sum()) if side.size else -math.inf)


def theory(weights, bandwidth, scale, up=64):
    """Response of a band of `bandwidth` weighted by `weights` (samples across the band),
    in metres of `scale` per second of time (c/2 for range, the speed for azimuth)."""
    w = np.asarray(weights, float)
    n = len(w)
    power = np.abs(np.fft.fftshift(np.fft.ifft(w, n * up))) ** 2
    return measure(power, scale / (up * bandwidth))[1]


def theory_range(acq: Acquisition, window):
    return theory(window_coefficients(window, 512), acq.bandwidth, SPEED_OF_LIGHT / 2)


def theory_azimuth(acq: Acquisition, window):
    """The processed Doppler band carries the two-way antenna pattern sinc^2(L f / 2v)
    (f from the centroid) times the azimuth window."""
    n = 512
    f = (np.arange(n) - (n - 1) / 2) / n * acq.doppler_bandwidth
    pattern = np.sinc(acq.antenna_length * f / (2 * acq.velocity)) ** 2
    return theory(window_coefficients(window, n) * pattern, acq.doppler_bandwidth,
                  acq.velocity)


def focus_report(image, acq: Acquisition, targets: Sequence[Target], cut=64, up=16):
    """For each target inside `image` (an Image: rows along track, columns in slant range
    or ground x): its interpolated peak, the position error and both axes' responses;
    range widths and errors in slant range (ground x scaled by x / R)."""
    img = image.data
    mag = np.abs(img)
    top = float(mag.max()) if mag.size else 0.0
    out = []
    for t in targets:
        r0 = t.slant_range(acq)
        # slant metres per column metre (1 for slant-range columns)
        slant_per_x = 1.0 if image.x_is_slant else t.x / r0
        row = (t.y - image.y0) / image.dy
        col = ((r0 if image.x_is_slant else t.x) - image.x0) / image.dx
        r, c = int(round(row)), int(round(col))
        if not (cut // 2 + 3 <= r < img.shape[0] - cut // 2 - 3 and
                cut // 2 + 3 <= c < img.shape[1] - cut // 2 - 3):
            continue  # not (fully) in the image
        win = mag[r - 3:r + 4, c - 3:c + 4]
        pr, pc = np.unravel_index(int(np.argmax(win)), win.shape)
        pr, pc = r - 3 + int(pr), c - 3 + int(pc)
        az = _interpolated_power(img[pr - cut // 2:pr + cut // 2, pc], up)
        rg = _interpolated_power(img[pr, pc - cut // 2:pc + cut // 2], up)
        ia, a_resp = measure(az, image.dy / up)
        ir, r_resp = measure(rg, image.dx * slant_per_x / up)
        prow = pr - cut // 2 + ia / up
        pcol = pc - cut // 2 + ir / up
        peak = math.sqrt(max(az.max(), rg.max()))
        out.append(FocusReport(t, prow, pcol, (prow - row) * image.dy,
                               (pcol - col) * image.dx * slant_per_x,
                               20 * math.log10(peak / top) if top > 0 else -math.inf,
                               r_resp, a_resp))
    return out


# --- focusing a recording (the gpuradar-sar app, QA) ----------------------------------

@dataclass
class Image:
    data: np.ndarray    #: complex64 (rows, columns)
    x0: float           #: coordinate of column 0 (m)
    dx: float
    y0: float           #: along-track y of row 0 (m)
    dy: float
    x_is_slant: bool    #: columns in slant range (csa) or ground x (bp)
    backend: str
    detail: str

    @property
    def grid(self):
        from .sar_sim import Grid
        return Grid(self.x0, self.y0, self.dx, self.dy, self.data.shape[1],
                    self.data.shape[0])


def focus_csa(rec: Recording, backend="auto", naz=0, range_window="rectangular",
              azimuth_window="rectangular", run=None):
    """file_source -> sar_focus -> vector sink. ValueError: the block's parameter checks
    (naming the parameter); run(tb, block, total) runs the flowgraph when given."""
    from gnuradio import blocks, gr
    from . import gpuradar_python as gpr
    a = rec.scene.acq
    focus = gpr.sar_focus(*a.block_args(), "csa", naz, range_window, azimuth_window,
                          backend)
    tb = gr.top_block()
    src = sigmf_io.complex_file_source(tb, rec.data_path, rec.datatype, a.nrange)
    snk = blocks.vector_sink_c(a.nrange)
    tb.connect(src, focus, snk)
    if run:
        run(tb, focus, rec.scene.npulses)
    else:
        tb.run()
    data = np.array(snk.data(), np.complex64).reshape(-1, a.nrange)
    row0_y = rec.scene.first_pulse_y + focus.lead() * a.dy
    return Image(data, a.r0, a.dr, row0_y, a.dy, True, focus.backend(),
                 f"csa, naz {focus.naz()} (lead {focus.lead()}, trail {focus.trail()}), "
                 f"{focus.blocks()} blocks")


def geometry(acq: Acquisition, npulses, first_pulse_y, track=None):
    """backprojection's per-pulse geometry [x, y, z, r0, dr, f0] of range-compressed
    pulses: pulse_compression puts an echo *starting* at sample d at bin d, and the echo of
    slant range R is centred at (R - r0)/dr, half a pulse after its start, so bin 0 lies
    half a pulse farther than the raw sample 0. track: (npulses, 3) antenna positions
    (default: the straight level pass)."""
    g = np.zeros((npulses, 6))
    g[:, 1] = first_pulse_y + np.arange(npulses) * acq.dy
    g[:, 2] = acq.altitude
    if track is not None:
        g[:, :3] = track
    g[:, 3] = acq.r0 + acq.pulse_width * SPEED_OF_LIGHT / 4
    g[:, 4] = acq.dr
    g[:, 5] = acq.fc
    return g


def focus_bp(rec: Recording, grid, backend="auto", range_window="rectangular", run=None,
             track=None):
    """file_source -> pulse_compression -> backprojection (all pulses, one image) on the
    ground grid (a sar_sim.Grid), from the recording's measured track (or `track`, e.g.
    rec.true_track). ValueError: the blocks' parameter checks."""
    from gnuradio import blocks, gr
    from . import gpuradar_python as gpr
    a, n = rec.scene.acq, rec.scene.npulses
    pc = gpr.pulse_compression(a.nrange, 1, 1, "lfm", [], a.bandwidth, a.pulse_width,
                               a.fs, a.up_chirp, range_window, 4, 35.0, 6.0, False,
                               "auto", backend)
    bp = gpr.backprojection(a.nrange, grid.nx, grid.ny, grid.x0, grid.y0, grid.dx,
                            grid.dy, 0.0, n, "restart", "fast", [], backend)
    # GNU Radio has no double vector source: the geometry goes as 48-byte items
    track = rec.track if track is None else track
    geo_bytes = np.ascontiguousarray(geometry(a, n, rec.scene.first_pulse_y, track), "<f8")
    geo = blocks.vector_source_b(geo_bytes.ravel().view(np.uint8).tolist(), False, 6 * 8)
    tb = gr.top_block()
    src = sigmf_io.complex_file_source(tb, rec.data_path, rec.datatype, a.nrange)
    snk = blocks.vector_sink_c(grid.nx)
    tb.connect(src, pc, (bp, 0))
    tb.connect(geo, (bp, 1))
    tb.connect(bp, snk)
    if run:
        run(tb, bp, n)
    else:
        tb.run()
    data = np.array(snk.data(), np.complex64).reshape(-1, grid.nx)
    return Image(data, grid.x0, grid.dx, grid.y0, grid.dy, False, bp.backend(),
                 f"backprojection of {n} pulses")


def bp_grid(acq: Acquisition, targets, npulses, first_pulse_y, margin=40.0,
            reflectivity: Optional[Reflectivity] = None):
    """A ground grid around the targets and the distributed scene (or the whole swath),
    pixels a third of the resolutions (c/(2B) in ground range at the near edge, L/2 along
    track)."""
    from .sar_sim import Grid
    dx = acq.dr / 3
    dy = acq.antenna_length / 2 / 3
    ground = lambda r: math.sqrt(max(r * r - acq.altitude ** 2, 0.0))
    xs, ys = [t.x for t in targets], [t.y for t in targets]
    if reflectivity is not None:
        ex = reflectivity.extent()
        xs += ex[:2]
        ys += ex[2:]
    if xs:
        x0, x1 = min(xs) - margin, max(xs) + margin
        y0, y1 = min(ys) - margin, max(ys) + margin
    else:
        x0, x1 = ground(acq.r0), ground(acq.r0 + (acq.nrange - 1) * acq.dr)
        y0, y1 = first_pulse_y, first_pulse_y + npulses * acq.dy
    return Grid(x0, y0, dx, dy, int((x1 - x0) / dx) + 1, int((y1 - y0) / dy) + 1)
