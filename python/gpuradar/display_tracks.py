#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""track_sink: the tracker's tracks on a range-velocity plane, as a QT GUI widget.

Input: the `tracks` message of gpuradar.tracker. Each track of the newest message is a
marker at (velocity m/s, range km): confirmed tracks a filled green disc, coasting ones
(missed in the last scan) a hollow orange circle, tentative ones (show_tentative) a small
grey square; each confirmed or coasting track carries its id and a line through its last
trail_length positions. When tracks carry azimuths (a CFAR with angles upstream of the
tracker) a B-scope appears beside it: the same markers and trails at (azimuth deg,
range km), azimuth from -90 to 90 degrees (boresight 0, positive towards +x). Optional
input `truth` (radar_scene_source's truth messages): each target's latest true position
as a hollow orange square on both planes. The handler only keeps the newest message; a
Qt timer draws at update_rate, so a slow display never holds up the tracker (frames it
skips are counted).

Bistatic tracks (a passive radar's: the tracks message's metadata says `bistatic`, which
the tracker passes on from the cross-ambiguity map's cpi tag through cfar_2d) are drawn
on the same planes with the axes labelled bistatic range and bistatic velocity.
"""

import collections

import numpy as np
import pmt
import pyqtgraph as pg
from gnuradio import gr
from PyQt5 import QtCore, QtWidgets

from . import _display, detections

#: marker colours by status (RGB)
COLORS = {"confirmed": (0, 160, 0), "coasting": (230, 120, 0), "tentative": (128, 128, 128)}
CONFIRMED_SIZE = 14
#: truth markers: the range-Doppler map's colour and symbol
TRUTH_COLOR, TRUTH_SYMBOL, TRUTH_SIZE = "#ff7f0e", "s", 22
#: axis labels of bistatic tracks (the units of _display's monostatic labels)
BISTATIC_RANGE_LABEL = "bistatic range (km)"
BISTATIC_VELOCITY_LABEL = "bistatic velocity (m/s, closing +)"


def track_points(msg):
    """(meta, [(id, status, velocity m/s, range km, azimuth deg or NaN)]) of a tracks
    message; ValueError, KeyError or TypeError when it is malformed."""
    meta, tracks = detections.pdu_to_python(msg)
    return meta, [(t["id"], t["status"], float(t["velocity_mps"]),
                   float(t["range_m"]) * _display.RANGE_SCALE,
                   float(t["azimuth_deg"]) if "azimuth_deg" in t else np.nan)
                  for t in tracks]


def truth_point(msg):
    """(target, (velocity m/s, range km, azimuth deg or NaN)) of a radar_scene_source
    truth message; ValueError, KeyError or TypeError when it is malformed."""
    d = pmt.to_python(msg)
    if not isinstance(d, dict):
        raise ValueError("a truth message is a dict")
    return int(d["target"]), (float(d["velocity_mps"]),
                              float(d["range_m"]) * _display.RANGE_SCALE,
                              float(d.get("azimuth_deg", np.nan)))


class TrailKeeper:
    """Each live track's last positions, built from every message (not only from the
    drawn ones) and the latest truth of each target. Thread-safe."""

    def __init__(self, trail_length):
        self.trail_length = int(trail_length)
        self._trails = collections.defaultdict(collections.deque)
        self._truth = {}
        self._lock = QtCore.QMutex()

    def update(self, points):
        """points as track_points gives them; returns {id: [(v, r, az), ...]}."""
        self._lock.lock()
        try:
            live = {p[0] for p in points}
            for gone in [i for i in self._trails if i not in live]:
                del self._trails[gone]
            for i, status, v, r, az in points:
                trail = self._trails[i]
                trail.append((v, r, az))
                while len(trail) > max(1, self.trail_length):
                    trail.popleft()
            return {i: list(t) for i, t in self._trails.items()}
        finally:
            self._lock.unlock()

    def set_truth(self, target, point):
        self._lock.lock()
        try:
            self._truth[target] = point
        finally:
            self._lock.unlock()

    def truth(self):
        """[(velocity m/s, range km, azimuth deg or NaN)] of every target seen."""
        self._lock.lock()
        try:
            return list(self._truth.values())
        finally:
            self._lock.unlock()


def check_params(range_max_m, velocity_max_mps, trail_length, update_rate):
    _display.check_positive("range_max_m", range_max_m, "> 0 m")
    _display.check_positive("velocity_max_mps", velocity_max_mps, "> 0 m/s")
    if int(trail_length) != trail_length or trail_length < 0:
        raise ValueError(f"trail_length must be an integer >= 0 scans (got {trail_length!r})")
    _display.check_positive("update_rate", update_rate, "> 0 frames/s")


class TrackMessageSink(gr.basic_block, _display.DisplayBlock):
    """The message side every track display shares: the `tracks` and `truth` ports, the
    trails, the newest frame for the widget's timer, the malformed-message count and the
    setters. A subclass makes its widget (self._widget) after calling this __init__."""

    def __init__(self, name, trail_length, show_tentative):
        gr.basic_block.__init__(self, name=name, in_sig=None, out_sig=None)
        self.trail_length = int(trail_length)
        self.show_tentative = bool(show_tentative)
        self.bad_messages = 0
        self._frames = _display.LatestFrame()
        self.keeper = TrailKeeper(self.trail_length)
        for port, handler in (("tracks", self._on_tracks), ("truth", self._on_truth)):
            self.message_port_register_in(pmt.intern(port))
            self.set_msg_handler(pmt.intern(port), handler)

    def _on_tracks(self, msg):
        try:
            meta, points = track_points(msg)
        except (ValueError, KeyError, TypeError):
            self.bad_messages += 1
            return
        self._frames.put((meta, points, self.keeper.update(points)))

    def _on_truth(self, msg):
        try:
            self.keeper.set_truth(*truth_point(msg))
        except (ValueError, KeyError, TypeError):
            self.bad_messages += 1

    def set_update_rate(self, update_rate):
        _display.check_positive("update_rate", update_rate, "> 0 frames/s")
        self._widget.timer.setInterval(max(1, int(round(1000.0 / update_rate))))

    def set_show_tentative(self, show):
        self.show_tentative = bool(show)


class track_sink(TrackMessageSink):
    """Tracks in range and velocity (widget: qwidget())."""

    def __init__(self, range_max_m=30e3, velocity_max_mps=150.0, trail_length=20,
                 show_tentative=False, update_rate=10.0, title="Tracks"):
        check_params(range_max_m, velocity_max_mps, trail_length, update_rate)
        TrackMessageSink.__init__(self, "track_sink", trail_length, show_tentative)
        self._widget = _TrackWidget(self, title, range_max_m, velocity_max_mps, update_rate)


class _TrackPlot:
    """One plane of the tracks: markers by status, trails and id labels at (x, y)."""

    def __init__(self, x_label, x_range, y_range_km):
        self.widget = pg.PlotWidget(background="w")
        _display.style_plot(self.widget)
        item = self.widget.getPlotItem()
        item.setLabel("bottom", x_label)
        item.setLabel("left", _display.RANGE_LABEL)
        item.setMenuEnabled(False)
        item.showGrid(x=True, y=True, alpha=0.3)
        item.getViewBox().setRange(xRange=x_range, yRange=(0, y_range_km), padding=0)
        self.trails = pg.PlotDataItem(pen=pg.mkPen((60, 60, 200), width=2), connect="finite")
        self.markers = {
            "confirmed": pg.ScatterPlotItem(pen=None, brush=pg.mkBrush(COLORS["confirmed"]),
                                            symbol="o", size=CONFIRMED_SIZE, pxMode=True),
            "coasting": _display.markers(COLORS["coasting"], "o", CONFIRMED_SIZE),
            "tentative": pg.ScatterPlotItem(pen=None, brush=pg.mkBrush(COLORS["tentative"]),
                                            symbol="s", size=8, pxMode=True),
        }
        self.truth = _display.markers(TRUTH_COLOR, TRUTH_SYMBOL, TRUTH_SIZE)
        item.addItem(self.truth)
        item.addItem(self.trails)
        for m in self.markers.values():
            item.addItem(m)
        self.labels = []

    def set_axis_labels(self, x_label, y_label):
        item = self.widget.getPlotItem()
        if item.getAxis("left").labelText != y_label:
            item.setLabel("left", y_label)
        if x_label is not None and item.getAxis("bottom").labelText != x_label:
            item.setLabel("bottom", x_label)

    def draw_truth(self, points):
        """Truth markers at points [(x, y)]; NaN points are skipped."""
        points = [p for p in points if np.all(np.isfinite(p))]
        self.truth.setData(pos=points) if points else self.truth.clear()

    def draw(self, points, trails, show_tentative):
        """points: (id, status, x, y); trails: id -> [(x, y)]. NaN points are skipped."""
        points = [p for p in points if np.isfinite(p[2])]
        for status, m in self.markers.items():
            shown = [p for p in points if p[1] == status]
            if status == "tentative" and not show_tentative:
                shown = []
            m.setData([p[2] for p in shown], [p[3] for p in shown])
        item = self.widget.getPlotItem()
        for label in self.labels:
            item.removeItem(label)
        self.labels = []
        xs, ys = [], []
        for i, status, x, y in points:
            if status == "tentative":
                continue
            trail = trails.get(i, [])
            xs += [p[0] for p in trail] + [np.nan]
            ys += [p[1] for p in trail] + [np.nan]
            label = pg.TextItem(str(i), color=(0, 0, 0), anchor=(-0.3, 1.2))
            label.setPos(x, y)
            item.addItem(label)
            self.labels.append(label)
        self.trails.setData(np.array(xs, float), np.array(ys, float))


class _TrackWidget(QtWidgets.QWidget):
    def __init__(self, block, title, range_max_m, velocity_max_mps, update_rate):
        super().__init__()
        self.block = block
        layout = QtWidgets.QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        self.title = QtWidgets.QLabel(f"<b>{title}</b>" if title else "")
        self.status = _display.status_label("waiting for tracks")
        layout.addWidget(self.title)
        layout.addWidget(self.status)
        self.velocity_plane = _TrackPlot(_display.VELOCITY_LABEL,
                                         (-velocity_max_mps, velocity_max_mps),
                                         range_max_m * _display.RANGE_SCALE)
        self.plot = self.velocity_plane.widget
        # The B-scope: shown once a track has an azimuth.
        self.azimuth_plane = _TrackPlot("azimuth (deg, boresight 0)", (-90.0, 90.0),
                                        range_max_m * _display.RANGE_SCALE)
        self.azimuth_plane.widget.hide()
        planes = QtWidgets.QHBoxLayout()
        planes.addWidget(self.plot, 1)
        planes.addWidget(self.azimuth_plane.widget, 1)
        layout.addLayout(planes, 1)
        self.timer = QtCore.QTimer(self)
        self.timer.timeout.connect(self._tick)
        self.timer.setInterval(max(1, int(round(1000.0 / update_rate))))
        self.timer.start()
        _display.fit_window_on_first_show(self)

    @property
    def markers(self):
        """The range-velocity plane's markers by status (what tools/check_grc_display.py
        reads)."""
        return self.velocity_plane.markers

    def _tick(self):
        frame = self.block._frames.take()
        if frame is None:
            return
        meta, points, trails = frame
        show = self.block.show_tentative
        bistatic = bool(meta.get("bistatic", False))
        self.velocity_plane.set_axis_labels(
            BISTATIC_VELOCITY_LABEL if bistatic else _display.VELOCITY_LABEL,
            BISTATIC_RANGE_LABEL if bistatic else _display.RANGE_LABEL)
        self.azimuth_plane.set_axis_labels(
            None, BISTATIC_RANGE_LABEL if bistatic else _display.RANGE_LABEL)
        self.velocity_plane.draw([p[:4] for p in points],
                                 {i: [(v, r) for v, r, _ in t] for i, t in trails.items()},
                                 show)
        with_azimuth = any(np.isfinite(p[4]) for p in points)
        if with_azimuth and self.azimuth_plane.widget.isHidden():
            self.azimuth_plane.widget.show()
            # the B-scope doubles the width the display asks for
            _display.fit_window_to_content(self)
        self.azimuth_plane.draw([(i, st, az, r) for i, st, _, r, az in points],
                                {i: [(az, r) for _, r, az in t] for i, t in trails.items()},
                                show)
        truth = self.block.keeper.truth()
        self.velocity_plane.draw_truth([(v, r) for v, r, _ in truth])
        self.azimuth_plane.draw_truth([(az, r) for _, r, az in truth])
        n = collections.Counter(p[1] for p in points)
        self.status.setText(f"CPI {meta.get('cpi')}, t = {meta.get('time_s', 0):.3f} s: "
                            f"{n['confirmed']} confirmed, {n['coasting']} coasting, "
                            f"{n['tentative']} tentative")

    def widget_point(self, x, y, plane=None):
        """Pixel (column, row) in this widget's grab() of data coordinates (x, y) of a
        plane (default: range-velocity; azimuth_plane for the B-scope)."""
        plot = (plane or self.velocity_plane).widget
        view = plot.getPlotItem().getViewBox()
        scene = view.mapViewToScene(QtCore.QPointF(x, y))
        p = plot.mapTo(self, plot.mapFromScene(scene))
        return round(p.x()), round(p.y())
