#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""Pulse-Doppler recordings: simulate one with radar_scene_source, write it as SigMF,
read it back (validated), and the bins where each truth target should show.

The samples come from a GNU Radio flowgraph, ``gpuradar.radar_scene_source -> head ->
file_sink`` (the echo model is the DSP core's, kernels/radar_scene.h); the truth comes
from the source's ``truth`` message port (``scene_truth.truth_recorder``). This module
adds scenarios, the recording format and its reader; it is used by ``gpuradar-sim`` and
``gpuradar-process``.

Recording format (``<base>`` is any path prefix)
-------------------------------------------------
``<base>.sigmf-data``
    The receive stream, SigMF ``cf32_le``, continuous at fs; pulse k starts at sample
    first_pulse_sample + floor(k * pri_samples + 1/2).
``<base>.sigmf-meta``
    SigMF JSON. ``global``: ``core:datatype`` (cf32_le), ``core:sample_rate`` (fs) and,
    in the ``gpuradar`` extension namespace (all SI):

    ========================== ========== ================================================
    field                      required   meaning
    ========================== ========== ================================================
    ``gpuradar:fs``            yes [1]_   sample rate (Hz)
    ``gpuradar:fc``            yes [2]_   carrier (Hz)
    ``gpuradar:pri_samples``   yes [3]_   pulse repetition interval (samples, may be
                                          fractional)
    ``gpuradar:prf``           [3]_       fs / pri_samples (Hz)
    ``gpuradar:gate_start``    yes        range gate start (samples after the pulse start)
    ``gpuradar:nrange``        yes        range gate length (samples)
    ``gpuradar:npulses``       yes        pulses per CPI
    ``gpuradar:waveform``      yes        {"type": "lfm", "bandwidth" (Hz),
                                          "pulse_width" (s), "up_chirp" (bool)} or
                                          {"type": "custom", "samples": [[re, im], ...]}
    ``gpuradar:nsamples``      no         samples in the data file (checked)
    ``gpuradar:first_pulse_sample`` no    sample of pulse 0 (default 0)
    ``gpuradar:ncpi``          no         whole CPIs recorded
    ``gpuradar:r0``            no         range of gate sample 0 (m)
    ``gpuradar:scene``         no         the simulation's parameters and targets
    ========================== ========== ================================================

    .. [1] or ``core:sample_rate``  .. [2] or ``captures[0].core:frequency``
    .. [3] one of the two

    The truth: one annotation per target and CPI, spanning the CPI's samples, with
    ``gpuradar:target``, ``gpuradar:cpi``, ``gpuradar:pulse`` (the CPI's centre pulse,
    where the values hold), ``gpuradar:range_m``, ``gpuradar:velocity_mps`` (closing
    positive), ``gpuradar:doppler_hz``, ``gpuradar:delay_samples``, ``gpuradar:snr_db``.
"""

import json
import math
import os
from dataclasses import asdict, dataclass, field
from typing import List, Optional, Sequence

import numpy as np

from . import scene_truth, sigmf_io
from .sigmf_io import DATA_SUFFIX, META_SUFFIX, NAMESPACE, NS, base_of

SPEED_OF_LIGHT = scene_truth.SPEED_OF_LIGHT
SAMPLE_BYTES = 8  #: cf32_le: two little-endian float32


class RecordingError(ValueError):
    """A recording that cannot be used; the message names the file and the field."""


@dataclass
class Target:
    """A simulated point target at t = 0."""
    range_m: float
    velocity_mps: float   #: radial, closing positive
    snr_db: float         #: per-sample SNR of the echo


class _PulseAxes:
    """prf, r0 and range_bin_m of a class with fs, pri_samples and gate_start."""

    @property
    def prf(self):
        return self.fs / self.pri_samples

    @property
    def r0(self):
        """Range of gate sample 0 (m)."""
        return self.gate_start * SPEED_OF_LIGHT / (2 * self.fs)

    @property
    def range_bin_m(self):
        return SPEED_OF_LIGHT / (2 * self.fs)


@dataclass
class Scenario(_PulseAxes):
    """A pulse-Doppler scenario for radar_scene_source (SI units)."""
    fs: float = 10e6
    fc: float = 3e9
    pri_samples: float = 2000.0
    bandwidth: float = 5e6
    pulse_width: float = 10e-6
    gate_start: int = 100
    nrange: int = 1800
    npulses: int = 64
    ncpi: int = 8
    noise_power: float = 1.0
    clutter_cnr_db: float = 0.0
    clutter_start_m: float = 0.0
    clutter_stop_m: float = 0.0
    seed: int = 1
    targets: List[Target] = field(default_factory=list)

    @property
    def max_unambiguous_velocity(self):
        """|v| below which the Doppler does not alias: prf/2 * c/(2 fc) (m/s)."""
        return self.prf / 2 * SPEED_OF_LIGHT / (2 * self.fc)

    def pulse_start(self, k):
        return int(math.floor(k * self.pri_samples + 0.5))

    @property
    def nsamples(self):
        """Samples recorded: up to the start of the pulse after the last CPI."""
        return self.pulse_start(self.ncpi * self.npulses)

    def warnings(self):
        """Targets the processing cannot see where they are (outside the gate, aliased)."""
        out = []
        hi = self.r0 + (self.nrange - 1) * self.range_bin_m
        for i, t in enumerate(self.targets):
            if not (self.r0 <= t.range_m <= hi):
                out.append(f"target {i}: range {t.range_m:g} m outside the range gate "
                           f"[{self.r0:.0f}, {hi:.0f}] m")
            if abs(t.velocity_mps) >= self.max_unambiguous_velocity:
                out.append(f"target {i}: |velocity| {abs(t.velocity_mps):g} m/s aliases in "
                           f"Doppler (unambiguous below {self.max_unambiguous_velocity:.1f}"
                           f" m/s)")
        return out


def scenario(preset="default") -> Scenario:
    """The embedded scenarios.

    ``default``: S band (3 GHz), fs 10 MHz, PRF 5 kHz, a 10 us 5 MHz LFM pulse, a gate
    of 1800 samples from 1.5 km to 28.5 km, 8 CPIs of 64 pulses (1.02 M samples), four
    targets between -12 and -5 dB per-sample SNR, approaching and receding.
    ``small``: the same radar with PRF 10 kHz, a 800-sample gate, 2 CPIs of 32 pulses
    (64 k samples) and three targets: for tests.
    """
    if preset == "default":
        return Scenario(targets=[Target(5000.0, 60.0, -5.0), Target(12000.0, -35.0, -10.0),
                                 Target(20000.0, 20.0, -12.0), Target(26000.0, 90.0, -8.0)])
    if preset == "small":
        return Scenario(pri_samples=1000.0, nrange=800, npulses=32, ncpi=2,
                        targets=[Target(3000.0, 50.0, -6.0), Target(7000.0, -80.0, -10.0),
                                 Target(11000.0, 10.0, -12.0)])
    raise ValueError(f"scenario: preset must be default or small (got {preset!r})")


def simulate(sc: Scenario, base, progress=None):
    """Runs radar_scene_source -> head -> file_sink into <base>.sigmf-data and writes
    <base>.sigmf-meta; returns the truth annotations (list of dicts).

    progress: optional callable (tb, head block, total samples) that runs the top block
    (e.g. app_util.run_with_progress); default tb.run().
    """
    from gnuradio import blocks, gr
    from . import gpuradar_python as gpr

    n = sc.npulses
    # Truth at every CPI's centre pulse c*n + n//2 (and the CPI starts): every gcd pulses.
    every = math.gcd(n, n // 2) if n > 1 else 1
    tb = gr.top_block("gpuradar pd_sim")
    src = gpr.radar_scene_source(
        sc.fs, sc.fc, sc.prf, sc.bandwidth, sc.pulse_width, [],
        [t.range_m for t in sc.targets], [t.velocity_mps for t in sc.targets],
        [t.snr_db for t in sc.targets], "snr_db", 0.0, sc.noise_power, 0.0,
        sc.clutter_cnr_db, sc.clutter_start_m, sc.clutter_stop_m, False, every, 0.0,
        sc.seed)
    total = sc.nsamples
    head = blocks.head(gr.sizeof_gr_complex, total)
    sink = blocks.file_sink(gr.sizeof_gr_complex, str(base) + DATA_SUFFIX, False)
    sink.set_unbuffered(False)
    rec = scene_truth.truth_recorder()
    tb.connect(src, head, sink)
    tb.msg_connect(src, "truth", rec, "truth")
    if progress is None:
        tb.run()
    else:
        progress(tb, head, total)
    sink.close()
    size = os.path.getsize(str(base) + DATA_SUFFIX)
    if size != total * SAMPLE_BYTES:
        raise RuntimeError(f"{base}{DATA_SUFFIX}: wrote {size} bytes, expected "
                           f"{total * SAMPLE_BYTES}")
    centre = n // 2
    truth = []
    for r in rec.records():
        k = int(r["pulse"])
        if k % n != centre or k // n >= sc.ncpi:
            continue
        c = k // n
        start, stop = sc.pulse_start(c * n), sc.pulse_start((c + 1) * n)
        truth.append({
            "core:sample_start": start, "core:sample_count": stop - start,
            "core:label": f"target {int(r['target'])}",
            NS + "target": int(r["target"]), NS + "cpi": c, NS + "pulse": k,
            NS + "range_m": float(r["range_m"]),
            NS + "velocity_mps": float(r["velocity_mps"]),
            NS + "doppler_hz": float(r["doppler_hz"]),
            NS + "delay_samples": float(r["delay_samples"]),
            NS + "snr_db": float(r["snr_db"]),
        })
    if len(truth) != sc.ncpi * len(sc.targets):
        raise RuntimeError(f"radar_scene_source: {len(truth)} truth records at CPI centres, "
                           f"expected {sc.ncpi * len(sc.targets)}")
    truth.sort(key=lambda a: (a["core:sample_start"], a[NS + "target"]))
    write_meta(base, sc, truth)
    return truth


def write_meta(base, sc: Scenario, truth):
    g = sigmf_io.global_fields(sc.fs, "gpuradar pulse-Doppler simulation "
                               "(radar_scene_source)", "gnuradio.gpuradar.pd_sim")
    g.update({
        NS + "fs": sc.fs,
        NS + "fc": sc.fc,
        NS + "prf": sc.prf,
        NS + "pri_samples": sc.pri_samples,
        NS + "gate_start": sc.gate_start,
        NS + "nrange": sc.nrange,
        NS + "npulses": sc.npulses,
        NS + "ncpi": sc.ncpi,
        NS + "nsamples": sc.nsamples,
        NS + "first_pulse_sample": 0,
        NS + "r0": sc.r0,
        NS + "waveform": {"type": "lfm", "bandwidth": sc.bandwidth,
                          "pulse_width": sc.pulse_width, "up_chirp": True},
        NS + "scene": {
            "noise_power": sc.noise_power, "clutter_cnr_db": sc.clutter_cnr_db,
            "clutter_start_m": sc.clutter_start_m, "clutter_stop_m": sc.clutter_stop_m,
            "seed": sc.seed, "amplitude_unit": "snr_db",
            "targets": [asdict(t) for t in sc.targets],
        },
    })
    sigmf_io.write_meta(base, g, [{"core:sample_start": 0, "core:frequency": sc.fc}], truth,
                        indent=1)


@dataclass
class Recording(_PulseAxes):
    """A pulse-Doppler recording as read back and validated."""
    base: str
    meta: dict
    fs: float
    fc: float
    pri_samples: float
    gate_start: int
    nrange: int
    npulses: int
    nsamples: int                #: samples in the data file
    first_pulse_sample: int
    waveform: dict               #: {"type": "lfm", ...} or {"type": "custom", ...}
    truth: List[dict]            #: annotations with gpuradar:target (keys without prefix)
    #: the recording states its truth (true also for a scene without targets)
    has_truth: bool = False

    @property
    def meta_path(self):
        return self.base + META_SUFFIX

    @property
    def data_path(self):
        return self.base + DATA_SUFFIX

    def pulse_start(self, k):
        return self.first_pulse_sample + int(math.floor(k * self.pri_samples + 0.5))

    @property
    def ncpi(self):
        """Whole CPIs whose every range gate lies inside the data."""
        per = self.npulses
        lo, hi = 0, max(0, int(self.nsamples / self.pri_samples) // per + 1)
        while lo < hi:  # largest c with the last gate of CPI c-1 inside the data
            mid = (lo + hi + 1) // 2
            end = self.pulse_start(mid * per - 1) + self.gate_start + self.nrange
            if end <= self.nsamples:
                lo = mid
            else:
                hi = mid - 1
        return lo

    def custom_waveform(self):
        s = self.waveform.get("samples", [])
        return [complex(re, im) for re, im in s]


def _number(g, key, path, kind=float, positive=True, minimum=None):
    if key not in g:
        raise RecordingError(f"{path}: metadata field 'global.{key}' is missing")
    v = g[key]
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        raise RecordingError(f"{path}: metadata field 'global.{key}' must be a number "
                             f"(got {v!r})")
    if kind is int:
        if float(v) != int(v):
            raise RecordingError(f"{path}: metadata field 'global.{key}' must be an integer "
                                 f"(got {v!r})")
        v = int(v)
    if positive and not v > 0:
        raise RecordingError(f"{path}: metadata field 'global.{key}' must be > 0 (got {v!r})")
    if minimum is not None and v < minimum:
        raise RecordingError(f"{path}: metadata field 'global.{key}' must be >= {minimum} "
                             f"(got {v!r})")
    return kind(v)


def read(path) -> Recording:
    """Reads and validates a recording (any of its file names, or the prefix).

    Raises RecordingError naming the file and the field for anything missing, unreadable,
    inconsistent or truncated."""
    base = base_of(path)
    mpath, dpath = base + META_SUFFIX, base + DATA_SUFFIX
    try:
        with open(mpath, "rb") as f:
            text = f.read()
    except FileNotFoundError:
        raise RecordingError(f"{mpath}: no such file (expected a SigMF recording "
                             f"<base>{META_SUFFIX} + <base>{DATA_SUFFIX})") from None
    except IsADirectoryError:
        raise RecordingError(f"{mpath}: is a directory, not a SigMF metadata file") from None
    except OSError as e:
        raise RecordingError(f"{mpath}: cannot read ({e.strerror})") from None
    try:
        meta = json.loads(text.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise RecordingError(f"{mpath}: not valid SigMF JSON ({e})") from None
    if not isinstance(meta, dict) or not isinstance(meta.get("global"), dict):
        raise RecordingError(f"{mpath}: metadata field 'global' is missing (not a SigMF "
                             f"metadata file)")
    g = meta["global"]
    if "core:datatype" not in g:
        raise RecordingError(f"{mpath}: metadata field 'global.core:datatype' is missing")
    if g["core:datatype"] != "cf32_le":
        raise RecordingError(f"{mpath}: metadata field 'global.core:datatype' must be "
                             f"cf32_le (got {g['core:datatype']!r})")
    fs = _number(g, NS + "fs" if NS + "fs" in g else "core:sample_rate", mpath)
    if NS + "fc" in g:
        fc = _number(g, NS + "fc", mpath)
    else:
        caps = meta.get("captures") or [{}]
        if not isinstance(caps, list) or not isinstance(caps[0], dict) or \
                "core:frequency" not in caps[0]:
            raise RecordingError(f"{mpath}: metadata field 'global.{NS}fc' is missing (nor "
                                 f"captures[0].core:frequency)")
        fc = _number(caps[0], "core:frequency", mpath)
    if NS + "pri_samples" in g:
        pri = _number(g, NS + "pri_samples", mpath)
    elif NS + "prf" in g:
        pri = fs / _number(g, NS + "prf", mpath)
    else:
        raise RecordingError(f"{mpath}: metadata field 'global.{NS}pri_samples' is missing "
                             f"(nor global.{NS}prf)")
    gate_start = _number(g, NS + "gate_start", mpath, int, positive=False, minimum=0)
    nrange = _number(g, NS + "nrange", mpath, int)
    npulses = _number(g, NS + "npulses", mpath, int)
    if gate_start + nrange > math.floor(pri):
        raise RecordingError(f"{mpath}: metadata fields 'global.{NS}gate_start' + "
                             f"'global.{NS}nrange' ({gate_start} + {nrange}) must be <= the "
                             f"PRI ({pri:g} samples)")
    first = (_number(g, NS + "first_pulse_sample", mpath, int, positive=False, minimum=0)
             if NS + "first_pulse_sample" in g else 0)
    wf = g.get(NS + "waveform")
    if wf is None:
        raise RecordingError(f"{mpath}: metadata field 'global.{NS}waveform' is missing")
    if not isinstance(wf, dict) or wf.get("type") not in ("lfm", "custom"):
        raise RecordingError(f"{mpath}: metadata field 'global.{NS}waveform.type' must be "
                             f"lfm or custom (got {wf!r})")
    if wf["type"] == "lfm":
        for k in ("bandwidth", "pulse_width"):
            _number(wf, k, mpath)
    else:
        s = wf.get("samples")
        if not isinstance(s, list) or not s or not all(
                isinstance(x, list) and len(x) == 2 for x in s):
            raise RecordingError(f"{mpath}: metadata field 'global.{NS}waveform.samples' "
                                 f"must be a non-empty list of [re, im]")

    try:
        size = os.path.getsize(dpath)
        with open(dpath, "rb") as f:
            f.read(1)
    except FileNotFoundError:
        raise RecordingError(f"{dpath}: no such file (the data of {mpath})") from None
    except IsADirectoryError:
        raise RecordingError(f"{dpath}: is a directory, not SigMF data") from None
    except OSError as e:
        raise RecordingError(f"{dpath}: cannot read ({e.strerror})") from None
    if size % SAMPLE_BYTES:
        raise RecordingError(f"{dpath}: truncated: {size} bytes is not a whole number of "
                             f"cf32_le samples ({SAMPLE_BYTES} bytes each)")
    nsamples = size // SAMPLE_BYTES
    if NS + "nsamples" in g:
        expected = _number(g, NS + "nsamples", mpath, int)
        if nsamples < expected:
            raise RecordingError(f"{dpath}: truncated: {nsamples} samples, metadata field "
                                 f"'global.{NS}nsamples' says {expected}")
        if nsamples > expected:
            raise RecordingError(f"{dpath}: {nsamples} samples, more than metadata field "
                                 f"'global.{NS}nsamples' ({expected}): not this recording's "
                                 f"data?")
    truth = []
    for i, a in enumerate(meta.get("annotations") or []):
        if not isinstance(a, dict) or NS + "target" not in a:
            continue
        t = {}
        for k in ("target", "cpi", "range_m", "velocity_mps", "doppler_hz", "snr_db"):
            if NS + k not in a:
                raise RecordingError(f"{mpath}: metadata field 'annotations[{i}].{NS}{k}' "
                                     f"is missing")
            t[k] = a[NS + k]
        truth.append(t)
    scene = g.get(NS + "scene")
    has_truth = bool(truth) or (isinstance(scene, dict) and scene.get("targets") == [])
    rec = Recording(base, meta, fs, fc, pri, gate_start, nrange, npulses, nsamples, first,
                    dict(wf), truth, has_truth)
    if rec.ncpi < 1:
        raise RecordingError(f"{dpath}: {nsamples} samples hold no whole CPI of {npulses} "
                             f"pulses (PRI {pri:g} samples)")
    return rec


def expected_bins(truth, rec: Recording, ndoppler, fftshift=True):
    """(range_bin, doppler_bin) where a truth annotation's target should peak."""
    return (scene_truth.expected_range_bin(truth["range_m"], rec.fs, rec.gate_start),
            scene_truth.expected_doppler_bin(truth["velocity_mps"], rec.fc, rec.prf,
                                             ndoppler, fftshift))
