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
    The receive stream, continuous at fs; pulse k starts at sample
    first_pulse_sample + floor(k * pri_samples + 1/2). SigMF ``cf32_le``, or ``ci16_le`` /
    ``ci8`` (interleaved integers as an SDR's sc16 / sc8, read back with full scale =
    1.0; written at the scenario's full_scale).
``<base>.sigmf-meta``
    SigMF JSON. ``global``: ``core:datatype``, ``core:sample_rate`` (fs) and,
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
    ``gpuradar:full_scale``    no         integer datatypes: the amplitude written as
                                          full scale (informative)
    ``gpuradar:clipped_samples`` no       integer datatypes: samples clipped on writing
    ========================== ========== ================================================

    .. [1] or ``core:sample_rate``  .. [2] or ``captures[0].core:frequency``
    .. [3] one of the two

    The truth: one annotation per target and CPI, spanning the CPI's samples, with
    ``gpuradar:target``, ``gpuradar:cpi``, ``gpuradar:pulse`` (the CPI's centre pulse,
    where the values hold), ``gpuradar:range_m``, ``gpuradar:velocity_mps`` (closing
    positive), ``gpuradar:doppler_hz``, ``gpuradar:delay_samples``, ``gpuradar:snr_db``.
"""

import math
import os
from dataclasses import asdict, dataclass, field
from typing import List, Optional

import numpy as np

from . import scene_truth, sigmf_io
from .sigmf_io import DATA_SUFFIX, META_SUFFIX, NS, RecordingError, base_of  # noqa: F401

SPEED_OF_LIGHT = scene_truth.SPEED_OF_LIGHT
SAMPLE_BYTES = 8  #: cf32_le: two little-endian float32
#: Largest range gate x pulses of a CPI a recording may declare (cells): the processing
#: holds a few CPIs of this many complex samples.
MAX_CPI_CELLS = 1 << 26
#: Longest custom waveform read from metadata (samples).
MAX_WAVEFORM_SAMPLES = 1 << 16


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
    #: SigMF datatype written (sigmf_io.SAMPLE_FORMATS): cf32_le, or ci16_le / ci8 as an
    #: SDR delivers them (sc16 / sc8), quantised at full_scale
    datatype: str = "cf32_le"
    #: integer datatypes: the component amplitude written as the integers' full scale
    #: (it reads back as 1.0); larger components clip and are counted
    full_scale: float = 8.0

    @property
    def sample_bytes(self):
        """Bytes per complex sample of the datatype written."""
        return sigmf_io.sample_bytes(self.datatype)

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


def _examples_scenario():
    """The radar of the GRC pulse-Doppler examples (pulse_doppler_offline, _uhd, _soapy,
    zmq_scene_tx: fs 2 MHz, fc 10 GHz, PRI 1000 samples, LFM 1 MHz x 10 us, gate 512
    samples from 100, 32 pulses) and zmq_scene_tx's two targets: gate bins 100 and 300,
    Doppler bins +6 and -10 of 32, 0 and -3 dB, seed 7."""
    sc = Scenario(fs=2e6, fc=10e9, pri_samples=1000.0, bandwidth=1e6, pulse_width=10e-6,
                  gate_start=100, nrange=512, npulses=32, ncpi=4, noise_power=1.0, seed=7)
    doppler_bin_mps = sc.prf / sc.npulses * SPEED_OF_LIGHT / (2 * sc.fc)
    sc.targets = [Target((sc.gate_start + 100) * sc.range_bin_m + 1.0,
                         6 * doppler_bin_mps, 0.0),
                  Target((sc.gate_start + 300) * sc.range_bin_m + 1.0,
                         -10 * doppler_bin_mps, -3.0)]
    return sc


def _tiny_scenario():
    """Two CPIs of 16 pulses of 256 range samples, one target: the installed-apps test."""
    sc = Scenario(fs=2e6, fc=10e9, pri_samples=500.0, bandwidth=1e6, pulse_width=10e-6,
                  gate_start=50, nrange=256, npulses=16, ncpi=2, seed=3)
    doppler_bin_mps = sc.prf / sc.npulses * SPEED_OF_LIGHT / (2 * sc.fc)
    sc.targets = [Target((sc.gate_start + 100) * sc.range_bin_m + 1.0,
                         3 * doppler_bin_mps, 3.0)]
    return sc


def _default_scenario():
    return Scenario(targets=[Target(5000.0, 60.0, -5.0), Target(12000.0, -35.0, -10.0),
                             Target(20000.0, 20.0, -12.0), Target(26000.0, 90.0, -8.0)])


def _small_scenario():
    return Scenario(pri_samples=1000.0, nrange=800, npulses=32, ncpi=2,
                    targets=[Target(3000.0, 50.0, -6.0), Target(7000.0, -80.0, -10.0),
                             Target(11000.0, 10.0, -12.0)])


#: The embedded scenarios by name (gpuradar-sim --preset).
PRESETS = {"default": _default_scenario, "small": _small_scenario,
           "examples": _examples_scenario, "tiny": _tiny_scenario}


def scenario(preset="default") -> Scenario:
    """The embedded scenarios.

    ``default``: S band (3 GHz), fs 10 MHz, PRF 5 kHz, a 10 us 5 MHz LFM pulse, a gate
    of 1800 samples from 1.5 km to 28.5 km, 8 CPIs of 64 pulses (1.02 M samples), four
    targets between -12 and -5 dB per-sample SNR, approaching and receding.
    ``small``: the same radar with PRF 10 kHz, a 800-sample gate, 2 CPIs of 32 pulses
    (64 k samples) and three targets: for tests.
    ``examples``: the parameters of the GRC pulse-Doppler examples (X band, fs 2 MHz, PRI
    1000 samples, 4 CPIs of 32 pulses, two targets); the recording
    examples/pulse_doppler_offline.grc reads.
    ``tiny``: 2 CPIs of 16 pulses x 256 range samples and one target (16 k samples).
    """
    if preset not in PRESETS:
        raise ValueError(f"scenario: preset must be one of {', '.join(PRESETS)} "
                         f"(got {preset!r})")
    return PRESETS[preset]()


def _file_writer(path, datatype="cf32_le", full_scale=1.0):
    """A sink writing its complex input to path in a datatype of sigmf_io.SAMPLE_FORMATS
    (integers quantised at full_scale; writer.clipped counts the clipped samples). Not
    blocks.file_sink: when its write fails (disk full) it throws in its thread, which
    ends while the rest of the flowgraph waits for it forever; this one stores the error
    and returns WORK_DONE, so the flowgraph ends and the error is reported
    (writer.error)."""
    from gnuradio import gr

    class file_writer(gr.sync_block):
        def __init__(self):
            gr.sync_block.__init__(self, name="gpuradar_file_writer",
                                   in_sig=[np.complex64], out_sig=None)
            self.file = open(path, "wb")
            self.error = None
            self.clipped = 0

        def work(self, input_items, output_items):
            raw, clipped = sigmf_io.from_complex64(input_items[0], datatype, full_scale)
            self.clipped += clipped
            try:
                self.file.write(memoryview(raw).cast("B"))
            except OSError as e:
                self.error = e
                return -1  # WORK_DONE: the flowgraph stops
            return len(input_items[0])

        def close(self):
            try:
                self.file.close()
            except OSError as e:
                self.error = self.error or e

    return file_writer()


def simulate(sc: Scenario, base, progress=None):
    """Runs radar_scene_source -> head -> file writer into <base>.sigmf-data and writes
    <base>.sigmf-meta; returns the truth annotations (list of dicts). A failed write
    (disk full) stops the flowgraph and raises WriteError naming the file.

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
    data_path = str(base) + DATA_SUFFIX
    sink = _file_writer(data_path, sc.datatype, sc.full_scale)
    rec = scene_truth.truth_recorder()
    tb.connect(src, head, sink)
    tb.msg_connect(src, "truth", rec, "truth")
    try:
        if progress is None:
            tb.run()
        else:
            progress(tb, head, total)
    finally:
        sink.close()
    if sink.error is not None:
        raise sigmf_io.WriteError(sink.error.errno, sink.error.strerror,
                         data_path)
    size = os.path.getsize(data_path)
    if size != total * sc.sample_bytes:
        raise RuntimeError(f"{base}{DATA_SUFFIX}: wrote {size} bytes, expected "
                           f"{total * sc.sample_bytes}")
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
    write_meta(base, sc, truth, sink.clipped)
    return truth


def write_meta(base, sc: Scenario, truth, clipped=0):
    g = sigmf_io.global_fields(sc.fs, "gpuradar pulse-Doppler simulation "
                               "(radar_scene_source)", "gnuradio.gpuradar.pd_sim")
    g["core:datatype"] = sc.datatype
    if sc.datatype != "cf32_le":
        # what an integer recording's 1.0 stood for, and what did not fit
        g.update({NS + "full_scale": sc.full_scale, NS + "clipped_samples": int(clipped)})
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
    #: a raw cf32 file read without SigMF metadata (its parameters all from overrides)
    raw_file: Optional[str] = None

    @property
    def datatype(self):
        """The data file's SigMF datatype (cf32_le, ci16_le or ci8)."""
        return self.meta["global"].get("core:datatype", "cf32_le")

    @property
    def meta_path(self):
        return self.raw_file or self.base + META_SUFFIX

    @property
    def data_path(self):
        return self.raw_file or self.base + DATA_SUFFIX

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


#: Recording fields the apps may give on the command line (Recording.read overrides):
#: field name -> the gpuradar: global field it replaces.
OVERRIDABLE = ("fs", "fc", "pri_samples", "prf", "gate_start", "nrange", "npulses",
               "first_pulse_sample", "bandwidth", "pulse_width", "up_chirp")
#: The option of gpuradar-process that gives each field (named when a field is missing).
OPTIONS = {NS + k: "--" + k.replace("_", "-") for k in OVERRIDABLE}
OPTIONS[NS + "waveform"] = "--bandwidth and --pulse-width"
OPTIONS["core:sample_rate"] = "--fs"


def read(path, overrides=None, datatypes=("cf32_le",), options=None) -> Recording:
    """Reads and validates a recording (any of its file names, or the prefix).

    overrides: {field: (option, value)} for fields of OVERRIDABLE given on the command line
    (e.g. {"fs": ("--fs", 2e6)}): used instead of the metadata's, and named by the option
    in messages; a given bandwidth and pulse width make the waveform an LFM, a given prf or
    pri_samples replaces both of the metadata's PRI fields. A path naming an existing file
    that is not part of a SigMF recording is read as raw cf32 samples, every parameter
    from the overrides. datatypes: the SigMF datatypes accepted (sigmf_io.SAMPLE_FORMATS;
    the apps read cf32_le only). options: field -> the option that gives it, named when
    the field is missing (default: gpuradar-process's OPTIONS; {} names none).

    Raises RecordingError naming the file and the field for anything missing, unreadable,
    of the wrong type, inconsistent or truncated."""
    base = base_of(path)
    mpath, dpath = base + META_SUFFIX, base + DATA_SUFFIX
    raw = _is_raw(str(path), mpath)
    if raw:  # every parameter from the command line; messages name the file
        base = dpath = str(path)
        mpath = f"{path} (raw cf32 samples, no {META_SUFFIX})"
        meta = {"global": {"core:datatype": "cf32_le"}}
    else:
        meta = sigmf_io.read_meta(mpath)
    ov = {k: v for k, v in (overrides or {}).items() if v[1] is not None}
    unknown = set(ov) - set(OVERRIDABLE)
    if unknown:
        raise ValueError(f"pd_sim.read: overrides of {sorted(unknown)}: not overridable")
    g = sigmf_io.Fields(meta["global"], mpath, "global",
                        {NS + k: v for k, v in ov.items()},
                        OPTIONS if options is None else options)
    datatype = g.string("core:datatype")
    if datatype not in datatypes:
        raise g.error("core:datatype", f"must be {' or '.join(datatypes)} (got "
                                       f"{datatype!r})")
    sample_bytes = sigmf_io.sample_bytes(datatype)
    fs, fc = _sample_rate(g), _carrier(g, meta, mpath)
    pri = _pri(g, fs, ov)
    gate_start = g.number(NS + "gate_start", int, minimum=0)
    nrange = g.number(NS + "nrange", int, minimum=1)
    npulses = g.number(NS + "npulses", int, minimum=1)
    if nrange * npulses > MAX_CPI_CELLS:
        raise g.error(NS + "nrange", f"x {g.name(NS + 'npulses')} ({nrange} x {npulses}) "
                                     f"must be <= {MAX_CPI_CELLS} cells per CPI")
    if gate_start + nrange > math.floor(pri):
        raise RecordingError(f"{mpath}: {g.name(NS + 'gate_start')} + "
                             f"{g.name(NS + 'nrange')} ({gate_start} + {nrange}) must be "
                             f"<= the PRI ({pri:g} samples)")
    first = g.number(NS + "first_pulse_sample", int, minimum=0, default=0)
    wf = _waveform(g, ov, fs, pri)
    _check_r0(g, gate_start, fs)

    size = sigmf_io.data_file(dpath, mpath)
    if size % sample_bytes:
        raise RecordingError(f"{dpath}: truncated: {size} bytes is not a whole number of "
                             f"{datatype} samples ({sample_bytes} bytes each)")
    nsamples = size // sample_bytes
    if g.has(NS + "nsamples"):
        expected = g.number(NS + "nsamples", int, minimum=0)
        if nsamples < expected:
            raise RecordingError(f"{dpath}: truncated: {nsamples} samples, metadata field "
                                 f"'global.{NS}nsamples' says {expected}")
        if nsamples > expected:
            raise RecordingError(f"{dpath}: {nsamples} samples, more than metadata field "
                                 f"'global.{NS}nsamples' ({expected}): not this recording's "
                                 f"data?")
    truth = _truth(meta, mpath)
    scene = g.raw(NS + "scene", None)
    has_truth = bool(truth) or (isinstance(scene, dict) and scene.get("targets") == [])
    rec = Recording(base, meta, fs, fc, pri, gate_start, nrange, npulses, nsamples, first,
                    wf, truth, has_truth, dpath if raw else None)
    if rec.ncpi < 1:
        raise RecordingError(f"{dpath}: {nsamples} samples hold no whole CPI of {npulses} "
                             f"pulses (PRI {pri:g} samples)")
    if g.has(NS + "ncpi") and not ov:
        stated = g.number(NS + "ncpi", int, minimum=0)
        if stated != rec.ncpi:
            raise RecordingError(f"{dpath}: holds {rec.ncpi} whole CPIs at the metadata's "
                                 f"PRI ({pri:g} samples), metadata field 'global.{NS}ncpi' "
                                 f"says {stated}: the PRI or the sizes disagree with the data")
    return rec


def _is_raw(path, mpath):
    """Whether path names a raw cf32 file (a GNU Radio file sink's output, ...): an
    existing file that is not part of a SigMF recording."""
    return not path.endswith((META_SUFFIX, DATA_SUFFIX)) and os.path.isfile(path) and \
        not os.path.exists(mpath)


def _sample_rate(g):
    """gpuradar:fs or core:sample_rate; both present: they must agree."""
    if not g.has(NS + "fs"):
        return g.number("core:sample_rate", above=0)
    fs = g.number(NS + "fs", above=0)
    if NS + "fs" not in g.overrides and "core:sample_rate" in g.obj:
        core = g.number("core:sample_rate", above=0)
        if not sigmf_io.agree(fs, core):
            raise RecordingError(f"{g.path}: metadata fields 'global.{NS}fs' ({fs:g}) and "
                                 f"'global.core:sample_rate' ({core:g}) disagree")
    return fs


def _carrier(g, meta, mpath):
    if g.has(NS + "fc"):
        return g.number(NS + "fc", above=0)
    caps = meta.get("captures")
    if not isinstance(caps, list) or not caps or not isinstance(caps[0], dict) or \
            "core:frequency" not in caps[0]:
        hint = f"; or give {g.options[NS + 'fc']}" if NS + "fc" in g.options else ""
        raise RecordingError(f"{mpath}: metadata field 'global.{NS}fc' is missing (nor "
                             f"captures[0].core:frequency{hint})")
    return sigmf_io.Fields(caps[0], mpath, "captures[0]").number("core:frequency", above=0)


def _pri(g, fs, ov):
    """PRI in samples from gpuradar:pri_samples or gpuradar:prf; both present: they must
    agree. A PRI given on the command line replaces both."""
    if "pri_samples" in ov or "prf" in ov:
        if "pri_samples" in ov:
            return g.number(NS + "pri_samples", above=0, maximum=MAX_CPI_CELLS)
        return _pri_of_prf(g, fs)
    has_pri, has_prf = g.has(NS + "pri_samples"), g.has(NS + "prf")
    if not has_pri and not has_prf:
        hint = "; or give --pri-samples or --prf" if NS + "prf" in g.options else ""
        raise g.error(NS + "pri_samples", f"is missing (nor 'global.{NS}prf'{hint})")
    pri = g.number(NS + "pri_samples", above=0, maximum=MAX_CPI_CELLS) if has_pri else None
    if pri is None:
        return _pri_of_prf(g, fs)
    prf = g.number(NS + "prf", above=0) if has_prf else None
    if prf is not None and not sigmf_io.agree(pri, fs / prf):
        raise RecordingError(f"{g.path}: metadata fields 'global.{NS}pri_samples' ({pri:g}) "
                             f"and 'global.{NS}prf' ({prf:g} Hz, {fs / prf:g} samples at fs "
                             f"{fs:g}) disagree")
    return pri


def _pri_of_prf(g, fs):
    prf = g.number(NS + "prf", above=0)
    pri = fs / prf
    if not 1 <= pri <= MAX_CPI_CELLS:
        raise g.error(NS + "prf", f"({prf:g} Hz) gives a PRI of {pri:g} samples at fs "
                                  f"{fs:g}: must be 1..{MAX_CPI_CELLS}")
    return pri


def _waveform(g, ov, fs, pri):
    """The waveform dict: {"type": "lfm", bandwidth, pulse_width, up_chirp} or
    {"type": "custom", "samples": [[re, im], ...]}, every value type-checked."""
    if "bandwidth" in ov or "pulse_width" in ov or "up_chirp" in ov:
        src = g.object(NS + "waveform", default={})
        src = src.obj if isinstance(src, sigmf_io.Fields) else src
        lfm = ("bandwidth", "pulse_width", "up_chirp")
        w = sigmf_io.Fields(dict(src, type="lfm"), g.path, f"global.{NS}waveform",
                            {k: ov[k] for k in lfm if k in ov},
                            {k: OPTIONS[NS + k] for k in lfm})
    else:
        w = g.object(NS + "waveform")
    kind = w.string("type", ("lfm", "custom"))
    if kind == "lfm":
        out = {"type": "lfm", "bandwidth": w.number("bandwidth", above=0),
               "pulse_width": w.number("pulse_width", above=0),
               "up_chirp": w.boolean("up_chirp", default=True)}
        if out["pulse_width"] * fs > pri:
            raise w.error("pulse_width", f"({out['pulse_width']:g} s, "
                                         f"{out['pulse_width'] * fs:g} samples) must fit in "
                                         f"the PRI ({pri:g} samples)")
        return out
    samples = w.array("samples", max_length=MAX_WAVEFORM_SAMPLES)
    if not samples or not all(isinstance(x, list) and len(x) == 2 and
                              all(sigmf_io._finite(v) for v in x) for x in samples):
        raise w.error("samples", "must be a non-empty list of [re, im] finite numbers")
    return {"type": "custom", "samples": [[float(a), float(b)] for a, b in samples]}


def _check_r0(g, gate_start, fs):
    """gpuradar:r0, when present, must be the range of gate sample 0."""
    if NS + "r0" in g.obj and NS + "fs" not in g.overrides and \
            NS + "gate_start" not in g.overrides:
        r0 = g.number(NS + "r0", minimum=0)
        expected = gate_start * SPEED_OF_LIGHT / (2 * fs)
        if abs(r0 - expected) > 1e-6 * max(1.0, expected):
            raise g.error(NS + "r0", f"({r0:g} m) disagrees with the gate start "
                                     f"({gate_start} samples = {expected:g} m)")


#: Truth annotation fields: name -> (kind, minimum).
TRUTH_FIELDS = {"target": (int, 0), "cpi": (int, 0), "range_m": (float, None),
                "velocity_mps": (float, None), "doppler_hz": (float, None),
                "snr_db": (float, None)}


def _truth(meta, mpath):
    """The truth annotations (those with gpuradar:target), keys without the prefix."""
    return [{k: f.number(NS + k, kind, minimum=least) for k, (kind, least) in
             TRUTH_FIELDS.items()} for f in sigmf_io.annotations_with(meta, mpath,
                                                                      NS + "target")]


def expected_bins(truth, rec: Recording, ndoppler, fftshift=True):
    """(range_bin, doppler_bin) where a truth annotation's target should peak."""
    return (scene_truth.expected_range_bin(truth["range_m"], rec.fs, rec.gate_start),
            scene_truth.expected_doppler_bin(truth["velocity_mps"], rec.fc, rec.prf,
                                             ndoppler, fftshift))
