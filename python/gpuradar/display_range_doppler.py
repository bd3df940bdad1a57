#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""range_doppler_sink: a QT GUI display of one range-Doppler map per frame.

Input: the `map` message of pulse_doppler_processor's tap (a pair: dict with cpi,
nrange, ndoppler, channels, fs, prf, fc, fftshift, db, envelope, rx_time, r0_m; an
f32vector of nrange x channels x ndoppler, the processor's stream output bit for bit),
or with
input="stream" the processor's output stream on the CPU backend (items of
channels x ndoppler floats, one range bin each, a CPI starting at each `cpi` tag, whose
fs, prf, fc, r0 and fftshift give the axes). Optional messages: cfar_2d's `detections`
(hollow circles) and radar_scene_source's `truth` (hollow squares).

Drawing is decoupled from processing (see _display.LatestFrame): the handlers keep the
newest map; a Qt timer draws it update_rate times a second; frames that arrive faster
are dropped here and counted (counts()).

A bistatic map (cross_ambiguity's: the metadata or cpi tag holds bistatic = true) has
range bins of c / fs (bistatic range: the echo path minus the baseline) and velocity bins
of prf / ndoppler x c / fc (the bistatic range's rate of closing): the axes follow and
are labelled bistatic range (km) and bistatic velocity (m/s, closing +).
"""

import collections
import threading

import numpy as np
import pmt
from gnuradio import gr
from PyQt5 import QtWidgets

from . import _display, detections, display_geometry
from .display_geometry import MapAxes

INPUTS = ("message", "stream")
ENVELOPES = ("square_law", "linear")
#: detection PDUs kept to match a map's CPI (the tap publishes every Nth CPI)
DETECTION_HISTORY = 64
MAP_PORT, DETECTIONS_PORT, TRUTH_PORT = "map", "detections", "truth"
#: axis labels of a bistatic map (the units of _display's monostatic labels)
BISTATIC_RANGE_LABEL = "bistatic range (km)"
BISTATIC_VELOCITY_LABEL = "bistatic velocity (m/s, closing +)"


def map_axes(meta, nrange, ndoppler, r0_key):
    """MapAxes of a map from its metadata (fs, prf, fc, r0 under r0_key, bistatic):
    monostatic bins c / (2 fs) and prf / ndoppler x c / (2 fc); bistatic ones (a one-way
    path per unit of range) twice those."""
    axes = MapAxes.of(float(meta.get("fs", 1.0)), float(meta.get("prf", 1.0)),
                      float(meta.get("fc", 1.0)), nrange, ndoppler,
                      float(meta.get(r0_key, 0.0)))
    if bool(meta.get("bistatic", False)):
        axes = MapAxes(axes.r0_m, 2.0 * axes.dr_m, axes.nrange, 2.0 * axes.dv_mps,
                       axes.ndoppler)
    return axes


class MapFrame:
    """One CPI's map: data (channels, nrange, ndoppler) float32 and its metadata."""

    def __init__(self, data, axes, cpi, time_s, envelope, db, fftshift, bistatic=False):
        self.data, self.axes, self.cpi, self.time_s = data, axes, cpi, time_s
        self.envelope, self.db, self.fftshift = envelope, db, fftshift
        self.bistatic = bool(bistatic)

    @staticmethod
    def from_message(msg):
        """The frame of one `map` message; ValueError when it is malformed."""
        if not pmt.is_pair(msg) or not pmt.is_f32vector(pmt.cdr(msg)):
            raise ValueError("a map message is a pair (dict, f32vector)")
        meta = detections._value(pmt.car(msg))
        if not isinstance(meta, dict):
            raise ValueError("a map message's car must be a dict")
        try:
            channels, nrange, ndoppler = (int(meta[k]) for k in ("channels", "nrange",
                                                                  "ndoppler"))
            for k in ("fs", "prf", "fc"):
                if k not in meta:
                    raise KeyError(k)
            axes = map_axes(meta, nrange, ndoppler, "r0_m")
        except KeyError as e:
            raise ValueError(f"a map message lacks the field {e}") from None
        values = np.asarray(pmt.f32vector_elements(pmt.cdr(msg)), dtype=np.float32)
        if values.size != channels * nrange * ndoppler:
            raise ValueError(f"a map message holds {values.size} values, not channels x "
                             f"nrange x ndoppler = {channels * nrange * ndoppler}")
        return MapFrame(stream_layout_to_channels(values, nrange, channels, ndoppler), axes,
                        meta.get("cpi"), _display.rx_time_seconds(meta.get("rx_time")),
                        str(meta.get("envelope", "square_law")), bool(meta.get("db", False)),
                        bool(meta.get("fftshift", True)), bool(meta.get("bistatic", False)))


def stream_layout_to_channels(values, nrange, channels, ndoppler):
    """(channels, nrange, ndoppler) view of a map in the processor's output layout (one
    range bin after another, each holding every channel's Doppler vector in turn): the
    layout of both the stream and the tap's f32vector."""
    return np.asarray(values).reshape(nrange, channels, ndoppler).transpose(1, 0, 2)


class range_doppler_sink(gr.sync_block, _display.DisplayBlock):
    """Range-Doppler map display: range (km) up, radial velocity (m/s, closing positive)
    right (bistatic range and velocity for a bistatic map), dB colour scale, CFAR detections and truth overlaid. Widget: qwidget()."""

    def __init__(self, input="message", nrange=512, ndoppler=32, channels=1, channel=0,
                 envelope="square_law", db=False, auto_scale=True, dynamic_range=40.0,
                 zmin=0.0, zmax=60.0, update_rate=10.0, max_rows=512,
                 title="Range-Doppler map"):
        _check_parameters(input, nrange, ndoppler, channels, channel, envelope, max_rows)
        _display.check_levels(auto_scale, zmin, zmax, dynamic_range)
        in_sig = [(np.float32, channels * ndoppler)] if input == "stream" else None
        gr.sync_block.__init__(self, name="range_doppler_sink", in_sig=in_sig, out_sig=None)
        self._channels, self._channel = channels, channel
        self._auto_scale, self._dynamic_range = bool(auto_scale), float(dynamic_range)
        self._zmin, self._zmax, self._max_rows = float(zmin), float(zmax), int(max_rows)
        self._frames = _display.LatestFrame()
        self._lock = threading.Lock()
        self._detections = collections.OrderedDict()  # cpi -> PDU
        self._truth = {}  # target -> (velocity_mps, range_m)
        self.bad_messages = 0
        self._last_error = ""
        self._assembly = (_StreamAssembly(nrange, channels, ndoppler, envelope, bool(db))
                          if in_sig else None)
        for port, handler in ((MAP_PORT, self._on_map), (DETECTIONS_PORT, self._on_detections),
                              (TRUTH_PORT, self._on_truth)):
            self.message_port_register_in(pmt.intern(port))
            self.set_msg_handler(pmt.intern(port), handler)
        self._widget = _MapWidget(self, title, update_rate)

    # --- GNU Radio side: store only --------------------------------------------------
    def _on_map(self, msg):
        self._frames.put(msg)  # converted when drawn: a dropped frame costs nothing

    def _on_detections(self, msg):
        if not pmt.is_pair(msg) or not pmt.is_dict(pmt.car(msg)):
            self.bad_messages += 1
            return
        cpi = pmt.dict_ref(pmt.car(msg), pmt.intern("cpi"), pmt.PMT_NIL)
        key = int(pmt.to_uint64(cpi)) if pmt.is_uint64(cpi) else None
        with self._lock:
            self._detections[key] = msg
            while len(self._detections) > DETECTION_HISTORY:
                self._detections.popitem(last=False)

    def _on_truth(self, msg):
        try:
            d = pmt.to_python(msg)
            target, point = int(d["target"]), (float(d["velocity_mps"]), float(d["range_m"]))
        except Exception:  # a malformed truth message is counted, never fatal
            self.bad_messages += 1
            return
        with self._lock:
            self._truth[target] = point

    def work(self, input_items, output_items):
        n = len(input_items[0])
        tags = self.get_tags_in_window(0, 0, n, pmt.intern("cpi"))
        for frame in self._assembly.feed(input_items[0], self.nitems_read(0), tags):
            self._frames.put(frame)
        return n

    # --- GUI side ----------------------------------------------------------------------
    def take_frame(self):
        """The newest frame not yet drawn as a MapFrame (None: none, or malformed)."""
        item = self._frames.take()
        if item is None or isinstance(item, MapFrame):
            return item
        try:
            return MapFrame.from_message(item)
        except ValueError as e:
            self.bad_messages += 1
            self._last_error = f"bad map message: {e}"
            return None

    def detections_for(self, cpi, channel):
        """(velocity, range) of the detections of CPI cpi (else of the newest CPI)."""
        with self._lock:
            msg = self._detections.get(cpi)
            if msg is None and self._detections:
                msg = next(reversed(self._detections.values()))
        if msg is None:
            return []
        dets = detections.pdu_to_dicts(msg)
        return [(d["velocity_mps"], d["range_m"]) for d in dets
                if "range_m" in d and "velocity_mps" in d and d.get("channel", 0) == channel]

    def truth_points(self):
        with self._lock:
            return list(self._truth.values())

    # --- settings (GRC callbacks) ------------------------------------------------------
    def channel(self):
        return self._channel

    def set_channel(self, channel):
        """Channel shown, 0 <= channel < channels; a bad value raises and is not kept."""
        _check_channel(channel, self._channels)
        self._channel = int(channel)
        self._widget.channel_box.setValue(self._channel)

    def set_auto_scale(self, auto_scale):
        self._auto_scale = bool(auto_scale)

    def set_dynamic_range(self, dynamic_range):
        _display.check_levels(True, 0.0, 1.0, dynamic_range)
        self._dynamic_range = float(dynamic_range)

    def set_levels(self, zmin, zmax):
        """Fixed colour limits (dB), used when auto_scale is off."""
        _display.check_levels(False, zmin, zmax, 1.0)
        self._zmin, self._zmax = float(zmin), float(zmax)

    def set_update_rate(self, update_rate):
        self._widget.set_update_rate(update_rate)

    def levels_for(self, db_image):
        if self._auto_scale:
            return display_geometry.auto_levels(db_image, self._dynamic_range)
        return self._zmin, self._zmax

    def frame_db(self, frame, max_rows):
        """(db image (rows, ndoppler) of the selected channel, range bins per row; at
        most max_rows rows) or raises ValueError when the frame lacks the channel."""
        if self._channel >= frame.data.shape[0]:
            raise ValueError(f"channel {self._channel} does not exist: the map has "
                             f"{frame.data.shape[0]} channel(s)")
        order = display_geometry.doppler_display_order(frame.data.shape[2], frame.fftshift)
        db = display_geometry.to_db(frame.data[self._channel][:, order], frame.envelope,
                                    frame.db)
        return display_geometry.max_pool_rows(db, min(max_rows, self._max_rows))


class _StreamAssembly:
    """Collects a stream of range items into whole CPIs (starting at `cpi` tags)."""

    def __init__(self, nrange, channels, ndoppler, envelope, db):
        self.nrange, self.channels, self.ndoppler = nrange, channels, ndoppler
        self.envelope, self.db = envelope, db
        self.buffer = None
        self.filled = 0
        self.meta = None

    def feed(self, items, first, tags):
        """Complete CPIs among items (the window starting at absolute item `first`);
        items before the first `cpi` tag, and a CPI cut short by the next tag, are
        not shown."""
        starts = sorted((int(t.offset - first), t.value) for t in tags)
        done = []
        i, n = 0, len(items)
        while i < n:
            if starts and starts[0][0] == i:
                self._start(starts.pop(0)[1])
            end = starts[0][0] if starts else n
            if self.buffer is None:
                i = end
                continue
            take = min(end - i, self.nrange - self.filled)
            self.buffer[self.filled:self.filled + take] = items[i:i + take]
            self.filled += take
            i += take
            if self.filled == self.nrange:
                done.append(self._frame())
                self.buffer = None
        return done

    def _start(self, value):
        self.meta = detections._value(value) if pmt.is_dict(value) else {}
        self.buffer = np.empty((self.nrange, self.channels * self.ndoppler), np.float32)
        self.filled = 0

    def _frame(self):
        m = self.meta
        data = stream_layout_to_channels(self.buffer, self.nrange, self.channels, self.ndoppler)
        axes = map_axes(m, self.nrange, self.ndoppler, "r0")
        return MapFrame(data, axes, m.get("index"), _display.rx_time_seconds(m.get("rx_time")),
                        self.envelope, self.db, bool(m.get("fftshift", True)),
                        bool(m.get("bistatic", False)))


def _check_channel(channel, channels):
    if not 0 <= int(channel) < channels:
        raise ValueError(f"channel must be in [0, {channels - 1}] (channels = {channels}); "
                         f"got {channel!r}")


def _check_parameters(input, nrange, ndoppler, channels, channel, envelope, max_rows):
    if input not in INPUTS:
        raise ValueError(f"input must be one of {', '.join(INPUTS)} (got {input!r})")
    for name, value in (("nrange", nrange), ("ndoppler", ndoppler), ("channels", channels),
                        ("max_rows", max_rows)):
        if int(value) < 1:
            raise ValueError(f"{name} must be >= 1 (got {value!r})")
    _check_channel(channel, channels)
    if envelope not in ENVELOPES:
        raise ValueError(f"envelope must be one of {', '.join(ENVELOPES)} (got {envelope!r})")


class _MapWidget(_display.ImagePlot):
    """The sink's widget: channel selector, status line, map, overlays."""

    def __init__(self, sink, title, update_rate):
        super().__init__(title, _display.VELOCITY_LABEL, _display.RANGE_LABEL,
                         "dB", update_rate, self._tick, y_scale=_display.RANGE_SCALE)
        self.sink = sink
        self.channel_box = QtWidgets.QSpinBox()
        self.channel_box.setPrefix("channel ")
        self.channel_box.setRange(0, sink._channels - 1)
        self.channel_box.setValue(sink.channel())
        self.channel_box.setVisible(sink._channels > 1)
        self.channel_box.valueChanged.connect(self._channel_chosen)
        self.header.addWidget(self.channel_box)
        self.truth_marks = _display.markers("#ff7f0e", "s", 22)
        self.detection_marks = _display.markers("#d62728", "o", 14)
        item = self.plot.getPlotItem()
        item.addItem(self.truth_marks)
        item.addItem(self.detection_marks)
        self.frame = None
        self.row_group = 1  # range bins per drawn row of the frame shown

    def _mark(self, marks, points):
        """Markers at points [(velocity m/s, range m)], drawn on the km axis."""
        if points:
            marks.setData(pos=[(v, r * self.y_scale) for v, r in points])
        else:
            marks.clear()

    def _channel_chosen(self, value):
        if value != self.sink.channel():
            self.sink.set_channel(value)
            self._draw()  # show the other channel of the same CPI at once

    def _tick(self):
        frame = self.sink.take_frame()
        if frame is None:
            if self.sink._last_error:
                self.status.setText(self.sink._last_error)
            return
        self.frame = frame
        self._draw()

    def _draw(self):
        frame, sink = self.frame, self.sink
        if frame is None:
            return
        try:
            # no more rows than screen pixels: each row stays visible
            db, group = sink.frame_db(frame, self.view_height_px())
        except ValueError as e:
            self.status.setText(str(e))
            return
        self.row_group = group
        item = self.plot.getPlotItem()
        labels = ((BISTATIC_VELOCITY_LABEL, BISTATIC_RANGE_LABEL) if frame.bistatic else
                  (_display.VELOCITY_LABEL, _display.RANGE_LABEL))
        for side, label in zip(("bottom", "left"), labels):
            if item.getAxis(side).labelText != label:
                item.setLabel(side, label)
        self.set_image(db, frame.axes.extent(db.shape[0], group), sink.levels_for(db))
        dets = sink.detections_for(frame.cpi, sink.channel())
        self._mark(self.detection_marks, dets)
        self._mark(self.truth_marks, sink.truth_points())
        c = sink.counts()
        when = "" if frame.time_s is None else f" · t = {frame.time_s:.6f} s"
        self.status.setText(f"CPI {frame.cpi}{when} · {len(dets)} detections · frames "
                            f"{c['received']} received, {c['drawn']} drawn, "
                            f"{c['dropped']} dropped")
