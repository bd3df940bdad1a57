#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""sigmf_cpi_source: plays a SigMF radar recording into a flowgraph and gives the chain
the recording's parameters.

The recordings are those of gpuradar-sim (docs/APPS.md), or any recording with the same
metadata:

- ``pulse_doppler`` (pd_sim): a continuous receive stream; the output is one complex
  sample per item from the start of pulse 0 (``gpuradar:first_pulse_sample`` skipped) to
  the end of the last whole CPI, for a pulse_framer with trigger "free";
- ``sar`` (sar_sim): range-compressed pulses, one pulse of ``nbins`` samples per item,
  for backprojection (its geometry side file: geometry_file());
- ``stripmap`` (stripmap_sim): raw echoes, one pulse of ``nrange`` samples per item, for
  sar_focus.

Every value the chain needs is a getter (``fs()``, ``pri_samples()``, ``nrange()``,
``npulses()``, ``waveform()``...), read and checked by the module's recording readers;
a getter the recording's kind does not have raises naming the field and its metadata
key. The samples may be cf32_le, ci16_le or ci8 (integers scaled to 1.0 = full scale).
The truth annotations are published on the ``truth`` message port as the stream reaches
them, as radar_scene_source's truth messages (the range-Doppler map's truth input).

In GNU Radio Companion the block is also a variable: its id names it in other blocks'
parameters (``src.nrange()``), evaluated while editing by preview(), which reads the
metadata only (and shows the preset of gpuradar-sim --preset examples while the file does
not exist yet).
"""

import math
import os
import re

import numpy as np
import pmt
from gnuradio import gr

from . import pd_sim, sar_sim, scene_truth, sigmf_io, stripmap_sim
from .sigmf_io import DATA_SUFFIX, META_SUFFIX, NS, RecordingError

KINDS = ("pulse_doppler", "sar", "stripmap")
KIND_NAMES = {"pulse_doppler": "a pulse-Doppler recording",
              "sar": "a SAR phase history", "stripmap": "a stripmap SAR raw recording"}
#: The command that writes a recording of each kind, named when one is missing, and the
#: base it writes without -o.
WRITERS = {"pulse_doppler": "gpuradar-sim --preset examples -o {base}",
           "sar": "gpuradar-sim sar --preset examples -o {base}",
           "stripmap": "gpuradar-sim stripmap -o {base}"}
DEFAULT_BASES = {"pulse_doppler": "gpuradar_pd", "sar": "gpuradar_sar_ph",
                 "stripmap": "gpuradar_stripmap"}


def writer(kind, base):
    """The gpuradar-sim command that writes <base> (without -o where it is the default)."""
    command = WRITERS[kind].format(base=base)
    return command.replace(" -o " + base, "") if base == DEFAULT_BASES[kind] else command
#: The metadata key of each getter (named in errors), by kind.
KEYS = {
    "pulse_doppler": {
        "datatype": "core:datatype", "fs": NS + "fs", "fc": NS + "fc",
        "pri_samples": NS + "pri_samples", "prf": NS + "prf",
        "gate_start": NS + "gate_start", "nrange": NS + "nrange",
        "npulses": NS + "npulses", "ncpi": NS + "ncpi", "nsamples": NS + "nsamples",
        "first_pulse_sample": NS + "first_pulse_sample", "r0": NS + "r0",
        "waveform": NS + "waveform", "bandwidth": NS + "waveform.bandwidth",
        "pulse_width": NS + "waveform.pulse_width", "up_chirp": NS + "waveform.up_chirp",
        "custom_waveform": NS + "waveform.samples"},
    "sar": {
        "datatype": "core:datatype", "fs": "core:sample_rate", "npulses": NS + "npulses",
        "nbins": NS + "nbins", "f0": NS + "f0", "fc": NS + "f0",
        "bandwidth": NS + "bandwidth", "dr": NS + "dr", "geometry_file": NS + "geometry_file",
        "x0": NS + "grid.x0", "y0": NS + "grid.y0", "dx": NS + "grid.dx",
        "dy": NS + "grid.dy", "nx": NS + "grid.nx", "ny": NS + "grid.ny",
        "z": NS + "grid.z"},
    "stripmap": dict({"datatype": "core:datatype", "npulses": NS + "npulses",
                      "first_pulse_y": NS + "first_pulse_y"},
                     **{f: NS + "stripmap." + f for f in stripmap_sim.ACQ_FIELDS}),
}
_KEY_FIELD = {key: field for keys in KEYS.values() for field, key in keys.items()}
_KEY_FIELD.update({NS + "stripmap": "the stripmap acquisition", NS + "mode": "kind",
                   NS + "grid": "the image grid (x0, y0, dx, dy, nx, ny)",
                   NS + "fs": "fs", "core:sample_rate": "fs"})


def _prefixed(e):
    """A RecordingError whose message starts with the block, its parameter (recording) and
    the chain's field the metadata key in it belongs to."""
    text = str(e)
    for m in re.finditer(r"'(?:global\.)?([a-z]+:[a-z0-9_]+(?:\.[a-z0-9_]+)?)", text):
        key = m.group(1)
        field = _KEY_FIELD.get(key) or _KEY_FIELD.get(key.split(".")[0])
        if field:
            return RecordingError(f"sigmf_cpi_source: recording: {field}: {text}")
    return RecordingError(f"sigmf_cpi_source: recording: {text}")


def kind_of(meta):
    """The kind of a recording's metadata: stripmap (gpuradar:mode), sar (gpuradar:nbins),
    else pulse_doppler."""
    g = meta.get("global", {})
    if g.get(NS + "mode") == stripmap_sim.MODE:
        return "stripmap"
    if NS + "nbins" in g:
        return "sar"
    return "pulse_doppler"


class recording_parameters:
    """The getters of a recording's parameters (the chain's values); see the module."""

    def __init__(self, kind, values, truth, path, data_path, datatype, nitems, vlen,
                 start_byte=0, placeholder=False):
        self._kind, self._values, self._truth = kind, dict(values), list(truth)
        self._path, self._data_path, self._datatype = path, data_path, datatype
        self._nitems, self._vlen, self._start_byte = int(nitems), int(vlen), start_byte
        #: True: the file did not exist; the values are gpuradar-sim's examples preset
        self.placeholder = placeholder

    def _get(self, field):
        if field not in self._values:
            owners = [k for k in KINDS if field in KEYS[k]]
            where = "".join(f" (metadata field 'global.{KEYS[k][field]}' of "
                            f"{KIND_NAMES[k]})" for k in owners[:1])
            raise RecordingError(f"sigmf_cpi_source: {field}: {self._path} is "
                                 f"{KIND_NAMES[self._kind]}, which has no {field}{where}")
        return self._values[field]

    # --- every kind ---------------------------------------------------------------------
    def kind(self):
        """pulse_doppler, sar or stripmap."""
        return self._kind

    def recording(self):
        """The metadata file read."""
        return self._path

    def data_file(self):
        return self._data_path

    def datatype(self):
        """The SigMF datatype of the data file (cf32_le, ci16_le or ci8)."""
        return self._datatype

    def vlen(self):
        """Samples per output item: 1 (pulse_doppler), nbins (sar), nrange (stripmap)."""
        return self._vlen

    def nitems(self):
        """Output items the source plays."""
        return self._nitems

    def truth(self):
        """The truth messages (dicts) the source publishes, in order."""
        return [dict(t) for t in self._truth]

    def fs(self):
        """Sample rate (Hz): fast-time rate (sar: core:sample_rate = c / (2 dr))."""
        return self._get("fs")

    def fc(self):
        """Carrier (Hz) (sar: the reference frequency f0)."""
        return self._get("fc")

    def npulses(self):
        """Pulses per CPI (pulse_doppler); pulses recorded (sar, stripmap)."""
        return self._get("npulses")

    def nrange(self):
        """Range gate length (pulse_doppler) or samples per pulse (stripmap)."""
        return self._get("nrange")

    def bandwidth(self):
        """Waveform bandwidth (Hz); 0 for a custom pulse-Doppler waveform."""
        return self._get("bandwidth")

    def pulse_width(self):
        """Pulse length (s); 0 for a custom pulse-Doppler waveform."""
        return self._get("pulse_width")

    def up_chirp(self):
        return self._get("up_chirp")

    def prf(self):
        """Pulse repetition frequency (Hz)."""
        return self._get("prf")

    def r0(self):
        """Range of gate sample 0 (pulse_doppler) or near slant range (stripmap) (m)."""
        return self._get("r0")

    # --- pulse_doppler -----------------------------------------------------------------
    def pri_samples(self):
        """PRI (samples, may be fractional)."""
        return self._get("pri_samples")

    def gate_start(self):
        return self._get("gate_start")

    def ncpi(self):
        """Whole CPIs the source plays."""
        return self._get("ncpi")

    def nsamples(self):
        """Samples in the data file."""
        return self._get("nsamples")

    def first_pulse_sample(self):
        """Sample of pulse 0 in the file (the source starts there)."""
        return self._get("first_pulse_sample")

    def waveform(self):
        """'lfm' or 'custom' (pulse_doppler_processor's waveform)."""
        return self._get("waveform")

    def custom_waveform(self):
        """The custom waveform's samples; [1] for an LFM (the processor ignores it)."""
        return list(self._get("custom_waveform"))

    # --- sar -----------------------------------------------------------------------------
    def nbins(self):
        return self._get("nbins")

    def f0(self):
        return self._get("f0")

    def dr(self):
        return self._get("dr")

    def geometry_file(self):
        """The geometry side file (sar_geometry_source's file)."""
        return self._get("geometry_file")

    def x0(self):
        return self._get("x0")

    def y0(self):
        return self._get("y0")

    def dx(self):
        return self._get("dx")

    def dy(self):
        return self._get("dy")

    def nx(self):
        return self._get("nx")

    def ny(self):
        return self._get("ny")

    def z(self):
        return self._get("z")

    # --- stripmap ------------------------------------------------------------------------
    def velocity(self):
        return self._get("velocity")

    def altitude(self):
        return self._get("altitude")

    def squint(self):
        return self._get("squint")

    def antenna_length(self):
        return self._get("antenna_length")

    def first_pulse_y(self):
        return self._get("first_pulse_y")

    def block_args(self):
        """The acquisition as sar_focus's / stripmap_source's first arguments."""
        return [self._get(f) for f in stripmap_sim.ACQ_FIELDS]


def _meta_path(recording):
    if not isinstance(recording, str) or not recording:
        raise RecordingError(f"sigmf_cpi_source: recording must be the path of a SigMF "
                             f"recording (<base>{META_SUFFIX}, <base>{DATA_SUFFIX} or "
                             f"<base>) (got {recording!r})")
    return sar_sim.base_of(recording) + META_SUFFIX


def read(recording, kind="auto"):
    """The recording_parameters of a recording (any of its file names, or the prefix):
    RecordingError naming the field and its metadata key when the recording cannot feed
    a chain of this kind (auto: the recording's own)."""
    if kind not in ("auto",) + KINDS:
        raise ValueError(f"sigmf_cpi_source: kind must be one of auto, {', '.join(KINDS)} "
                         f"(got {kind!r})")
    mpath = _meta_path(recording)
    base = mpath[:-len(META_SUFFIX)]
    if not os.path.exists(mpath):
        command = writer(kind if kind in KINDS else "pulse_doppler", base)
        raise RecordingError(f"sigmf_cpi_source: recording: {mpath}: no such file (a SigMF "
                             f"recording is <base>{META_SUFFIX} + <base>{DATA_SUFFIX}; "
                             f"write this one with: {command})")
    try:
        meta = sigmf_io.read_meta(mpath)
        found = kind_of(meta)
        if kind != "auto" and found != kind:
            tells = {"sar": NS + "nbins", "stripmap": NS + "mode"}
            why = (f" (metadata field 'global.{tells[found]}')" if found in tells else
                   f" (it has no metadata field 'global.{tells[kind]}')")
            raise RecordingError(
                f"sigmf_cpi_source: kind: {mpath} is {KIND_NAMES[found]}{why}, not "
                f"{KIND_NAMES[kind]}: this chain needs kind {kind} (e.g. "
                f"{writer(kind, DEFAULT_BASES[kind])})")
        return {"pulse_doppler": _read_pd, "sar": _read_sar,
                "stripmap": _read_stripmap}[found](mpath)
    except RecordingError as e:
        raise e if str(e).startswith("sigmf_cpi_source:") else _prefixed(e) from None


def _datatypes():
    return tuple(sigmf_io.SAMPLE_FORMATS)


def _read_pd(mpath):
    rec = pd_sim.read(mpath, datatypes=_datatypes(), options={})
    datatype = rec.meta["global"]["core:datatype"]
    wf = rec.waveform
    lfm = wf["type"] == "lfm"
    ncpi = rec.ncpi
    end = min(rec.nsamples, rec.pulse_start(ncpi * rec.npulses))
    values = {
        "fs": rec.fs, "fc": rec.fc, "pri_samples": rec.pri_samples, "prf": rec.prf,
        "gate_start": rec.gate_start, "nrange": rec.nrange, "npulses": rec.npulses,
        "ncpi": ncpi, "nsamples": rec.nsamples, "first_pulse_sample": rec.first_pulse_sample,
        "r0": rec.r0, "waveform": wf["type"],
        "bandwidth": wf["bandwidth"] if lfm else 0.0,
        "pulse_width": wf["pulse_width"] if lfm else 0.0,
        "up_chirp": wf["up_chirp"] if lfm else True,
        "custom_waveform": [1] if lfm else rec.custom_waveform()}
    truth = []
    first = rec.first_pulse_sample
    for f in sigmf_io.annotations_with(rec.meta, mpath, NS + "target"):
        start = f.number("core:sample_start", int, minimum=0, default=first)
        t = {k: f.number(NS + k, kind, minimum=least)
             for k, (kind, least) in pd_sim.TRUTH_FIELDS.items()}
        for k in ("pulse", "delay_samples"):
            if f.has(NS + k):
                t[k] = f.number(NS + k, int if k == "pulse" else float)
        t.update(sample=max(0, start - first), fs=rec.fs, fc=rec.fc, prf=rec.prf)
        if t["cpi"] < ncpi:  # the truth of a CPI the source does not play is not sent
            truth.append(t)
    truth.sort(key=lambda t: (t["sample"], t["target"]))
    return recording_parameters("pulse_doppler", values, truth, mpath, rec.data_path,
                                datatype, end - first, 1,
                                first * sigmf_io.sample_bytes(datatype))


def _read_sar(mpath):
    rec = sar_sim.read(mpath, datatypes=_datatypes())
    g = sigmf_io.Fields(rec.meta["global"], mpath, "global")
    datatype = g.string("core:datatype")
    f0 = g.number(NS + "f0", above=0)
    values = {"npulses": rec.npulses, "nbins": rec.nbins, "f0": f0, "fc": f0,
              "bandwidth": g.number(NS + "bandwidth", above=0),
              "dr": g.number(NS + "dr", above=0),
              "fs": g.number("core:sample_rate", above=0),
              "geometry_file": rec.geometry_path}
    for name in ("x0", "y0", "dx", "dy", "nx", "ny", "z"):
        values[name] = getattr(rec.grid, name)
    truth = [{"target": i, "sample": 0, "x_m": t.position[0], "y_m": t.position[1],
              "z_m": t.position[2], "amplitude_re": complex(t.amplitude).real,
              "amplitude_im": complex(t.amplitude).imag} for i, t in enumerate(rec.targets)]
    return recording_parameters("sar", values, truth, mpath, rec.data_path, datatype,
                                rec.npulses, rec.nbins)


def _read_stripmap(mpath):
    rec = stripmap_sim.read(mpath, datatypes=_datatypes())
    sc, a = rec.scene, rec.scene.acq
    datatype = sigmf_io.read_meta(mpath)["global"]["core:datatype"]
    values = {f: getattr(a, f) for f in stripmap_sim.ACQ_FIELDS}
    values.update(npulses=sc.npulses, first_pulse_y=sc.first_pulse_y)
    truth = [{"target": i, "sample": 0, "x_m": t.x, "y_m": t.y, "z_m": t.z,
              "amplitude_re": float(t.amplitude), "amplitude_im": 0.0,
              "slant_range_m": t.slant_range(a), "azimuth_m": t.y}
             for i, t in enumerate(sc.targets)]
    return recording_parameters("stripmap", values, truth, mpath, rec.data_path, datatype,
                                sc.npulses, a.nrange)


def preview(recording, kind="pulse_doppler"):
    """The parameters GNU Radio Companion shows while editing: the recording's (its
    errors raised, naming the field), or while its metadata file does not exist the
    preset of the recording gpuradar-sim writes for the examples (placeholder True); the
    flowgraph itself refuses a missing recording when it starts."""
    if kind not in KINDS:
        kind = "pulse_doppler" if kind == "auto" else kind
    try:
        missing = not os.path.exists(_meta_path(recording))
    except RecordingError:
        missing = True
    if missing:
        return _placeholder(recording, kind)
    # GRC evaluates the block's value and its port's length at every edit: read a file
    # again only when it changed.
    mpath = _meta_path(recording)
    stamp = (mpath, kind) + tuple((st.st_mtime_ns, st.st_size) for st in
                                  (os.stat(mpath),))
    cached = _PREVIEWS.get(stamp)
    if cached is None:
        cached = read(recording, kind)
        _PREVIEWS.clear()
        _PREVIEWS[stamp] = cached
    return cached


_PREVIEWS = {}


def _placeholder(recording, kind):
    name = f"{recording} (missing)"
    if kind == "sar":
        p = sar_sim.PRESETS["examples"]
        bandwidth, f0 = 300e6, 10e9
        res = sar_sim.SPEED_OF_LIGHT / (2 * bandwidth)
        grid = sar_sim.Grid.around((0.0, 0.0, 0.0), p["image_size"], p["image_size"],
                                   res / 3)
        values = {"npulses": p["npulses"], "nbins": p["nbins"], "f0": f0, "fc": f0,
                  "bandwidth": bandwidth, "dr": res / 2,
                  "fs": sar_sim.SPEED_OF_LIGHT / res, "geometry_file": name}
        values.update({k: getattr(grid, k) for k in ("x0", "y0", "dx", "dy", "nx", "ny",
                                                      "z")})
        return recording_parameters(kind, values, [], name, name, "cf32_le", p["npulses"],
                                    p["nbins"], placeholder=True)
    if kind == "stripmap":
        sc = stripmap_sim.presets()["default"]
        values = {f: getattr(sc.acq, f) for f in stripmap_sim.ACQ_FIELDS}
        values.update(npulses=sc.npulses, first_pulse_y=sc.first_pulse_y)
        return recording_parameters(kind, values, [], name, name, "cf32_le", sc.npulses,
                                    sc.acq.nrange, placeholder=True)
    sc = pd_sim.scenario("examples")
    values = {"fs": sc.fs, "fc": sc.fc, "pri_samples": sc.pri_samples, "prf": sc.prf,
              "gate_start": sc.gate_start, "nrange": sc.nrange, "npulses": sc.npulses,
              "ncpi": sc.ncpi, "nsamples": sc.nsamples, "first_pulse_sample": 0,
              "r0": sc.r0, "waveform": "lfm", "bandwidth": sc.bandwidth,
              "pulse_width": sc.pulse_width, "up_chirp": True, "custom_waveform": [1]}
    return recording_parameters(kind, values, [], name, name, "cf32_le", sc.nsamples, 1,
                                placeholder=True)


class sigmf_cpi_source(gr.sync_block, recording_parameters):
    """Plays a SigMF radar recording (see the module): output complex64 items of vlen()
    samples, truth messages on the `truth` port, the recording's parameters as getters.

    recording: any of the recording's file names, or its prefix. kind: the chain it feeds
    (pulse_doppler, sar, stripmap), or auto (the recording's own); a recording of another
    kind is refused, naming it and the metadata field that tells."""

    #: Largest number of output items read from the file per work() call.
    MAX_ITEMS_PER_CALL = 1 << 16
    #: GNU Radio Companion's view of a recording while editing (see preview()).
    preview = staticmethod(preview)
    read = staticmethod(read)

    def __init__(self, recording, kind="auto"):
        try:
            p = read(recording, kind)
        except RecordingError as e:
            gr.logger("sigmf_cpi_source").error(str(e))
            raise
        recording_parameters.__init__(self, p._kind, p._values, p._truth, p._path,
                                      p._data_path, p._datatype, p._nitems, p._vlen,
                                      p._start_byte)
        out = np.complex64 if self._vlen == 1 else (np.complex64, self._vlen)
        gr.sync_block.__init__(self, name="sigmf_cpi_source", in_sig=None, out_sig=[out])
        self.message_port_register_out(pmt.intern("truth"))
        self._component = np.dtype(sigmf_io.SAMPLE_FORMATS[self._datatype][1])
        self._file = None
        self._pos = 0          # items played
        self._next_truth = 0   # index into self._truth
        self.short_read_items = 0
        if self._kind == "pulse_doppler":
            rest = self.nsamples() - self.first_pulse_sample() - self._nitems
            if rest > 0:
                self.logger.info(f"{self._data_path}: the {rest} samples after the last "
                                 f"whole CPI ({self.ncpi()} CPIs of {self.npulses()} "
                                 f"pulses) are not played")

    def start(self):
        self._file = open(self._data_path, "rb")
        self._file.seek(self._start_byte + self._pos * self._vlen *
                        sigmf_io.sample_bytes(self._datatype))
        return True

    def stop(self):
        if self._file is not None:
            self._file.close()
            self._file = None
        return True

    def played(self):
        """Items played so far."""
        return self._pos

    def work(self, input_items, output_items):
        out = output_items[0]
        n = min(len(out), self._nitems - self._pos, self.MAX_ITEMS_PER_CALL)
        if n <= 0:
            return -1  # WORK_DONE
        want = n * self._vlen * 2
        raw = np.fromfile(self._file, dtype=self._component, count=want)
        if raw.size < want:
            # The file shrank after it was checked: play what is there, count the rest.
            got = raw.size // (2 * self._vlen)
            self.short_read_items += n - got
            self.logger.error(f"{self._data_path}: ends {self._nitems - self._pos - got} "
                              f"items early (the file changed while playing)")
            self._nitems = self._pos + got
            n = got
            if n == 0:
                return -1
            raw = raw[:n * self._vlen * 2]
        sigmf_io.to_complex64(raw, self._datatype, out[:n].reshape(-1))
        self._pos += n
        end_sample = self._pos * self._vlen if self._kind == "pulse_doppler" else self._pos
        while self._next_truth < len(self._truth) and \
                self._truth[self._next_truth]["sample"] < end_sample:
            truth = scene_truth.dict_to_truth(self._truth[self._next_truth])
            self.message_port_pub(pmt.intern("truth"), truth)
            self._next_truth += 1
        return n
