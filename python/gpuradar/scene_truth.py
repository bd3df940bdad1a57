#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""Truth of a radar_scene_source: record its `truth` messages, write and read them as
JSON, and the range / Doppler bins a chain should find each target in.

Each truth message is a dict per target and pulse (see radar_scene_source.h): target,
pulse, sample, time_s, rx_time (secs, frac), range_m, velocity_mps (closing positive),
doppler_hz, delay_samples, snr_db, amplitude, fs, fc, prf.
"""

import json
import threading

import pmt
from gnuradio import gr

from .gpuradar_python import speed_of_light as _speed_of_light

#: m/s, the C++ code's own constant (kernels/constants.h)
SPEED_OF_LIGHT = _speed_of_light


def dict_to_truth(d):
    """A truth dict of bool, integer and real values as the PMT dict a truth message is
    (the inverse of truth_to_dict for such values)."""
    out = pmt.make_dict()
    for k, v in d.items():
        if isinstance(v, bool):
            p = pmt.from_bool(v)
        elif isinstance(v, int):
            p = pmt.from_long(v)
        else:
            p = pmt.from_double(float(v))
        out = pmt.dict_add(out, pmt.intern(k), p)
    return out


def truth_to_dict(msg):
    """One truth message (PMT dict) as a plain dict; rx_time becomes [secs, frac]."""
    d = pmt.to_python(msg)
    if not isinstance(d, dict):
        raise ValueError("gpuradar.scene_truth: a truth message must be a dict, got %r" % (d,))
    out = {}
    for k, v in d.items():
        if isinstance(v, tuple):
            v = list(v)
        out[str(k)] = v
    return out


class truth_recorder(gr.basic_block):
    """Message sink for radar_scene_source's `truth` port: keeps every message as a dict.

    Connect with tb.msg_connect(scene, "truth", recorder, "truth"); read records() or
    write_json(path) after (or while) the flowgraph runs.
    """

    def __init__(self):
        gr.basic_block.__init__(self, name="truth_recorder", in_sig=None, out_sig=None)
        self._lock = threading.Lock()
        self._records = []
        self.message_port_register_in(pmt.intern("truth"))
        self.set_msg_handler(pmt.intern("truth"), self._handle)

    def _handle(self, msg):
        rec = truth_to_dict(msg)
        with self._lock:
            self._records.append(rec)

    def records(self):
        """A copy of the records so far, in arrival order."""
        with self._lock:
            return list(self._records)

    def write_json(self, path, **metadata):
        """Writes {"metadata": {...}, "truth": [records]} to path."""
        write_truth_json(self.records(), path, **metadata)


def write_truth_json(records, path, **metadata):
    """Writes truth records (dicts) with optional metadata (scene parameters) as JSON."""
    with open(path, "w") as f:
        json.dump({"metadata": metadata, "truth": list(records)}, f, indent=1, sort_keys=True)


def read_truth_json(path):
    """(records, metadata) from a file written by write_truth_json."""
    with open(path) as f:
        doc = json.load(f)
    return doc["truth"], doc.get("metadata", {})


def expected_range_bin(range_m, fs, gate_start):
    """Fast-time bin where the echo of a target at range_m starts (and, after the matched
    filter, peaks): round(2 R fs / c) - gate_start."""
    return int(round(2.0 * range_m * fs / SPEED_OF_LIGHT)) - int(gate_start)


def expected_doppler_bin(velocity_mps, fc, prf, ndoppler, fftshift=True):
    """Doppler bin of a target (closing positive, f_d = 2 v fc / c), aliased into
    [0, ndoppler); with fftshift zero Doppler is bin ndoppler // 2 (CONVENTIONS.md)."""
    fd = 2.0 * velocity_mps * fc / SPEED_OF_LIGHT
    m = int(round(fd / prf * ndoppler))
    if fftshift:
        m += ndoppler // 2
    return m % ndoppler
