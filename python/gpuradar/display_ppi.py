#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""ppi_sink: the tracker's tracks on a plan-position indicator (PPI), as a QT GUI widget.

Input: the `tracks` message of gpuradar.tracker whose tracks carry azimuths (a CFAR 2-D
with angles upstream). Each track with an azimuth is drawn where it is seen from above:
x = range sin(azimuth) across (km, positive towards +x), y = range cos(azimuth) up (km,
boresight up), with range rings and azimuth spokes over the sector -sector_deg..sector_deg.
Markers as on the track display: confirmed a filled green disc, coasting a hollow orange
circle, tentative (show_tentative) a small grey square; confirmed and coasting tracks
carry their id and a line through their last trail_length positions. Tracks without an
azimuth are counted in the status line, not drawn. Optional input `truth`
(radar_scene_source's truth messages): each target's latest true position as a hollow
orange square. Drawing is decoupled from the tracker as in every display here
(_display.LatestFrame).
"""

import collections

import numpy as np
import pyqtgraph as pg
from PyQt5 import QtCore, QtWidgets

from . import _display
from .display_tracks import TrackMessageSink, _TrackPlot

#: azimuth spokes every this many degrees
SPOKE_STEP_DEG = 30.0
#: colour of the rings and spokes (light enough not to hide a track, dark enough to read)
GRID_COLOR = (150, 150, 150)


def check_params(range_max_m, sector_deg, rings, trail_length, update_rate):
    _display.check_positive("range_max_m", range_max_m, "> 0 m")
    if not (np.isfinite(sector_deg) and 0 < sector_deg <= 180):
        raise ValueError(f"sector_deg must be in (0, 180] degrees (got {sector_deg!r})")
    if int(rings) != rings or not 1 <= rings <= 20:
        raise ValueError(f"rings must be an integer in [1, 20] (got {rings!r})")
    if int(trail_length) != trail_length or trail_length < 0:
        raise ValueError(f"trail_length must be an integer >= 0 scans (got {trail_length!r})")
    _display.check_positive("update_rate", update_rate, "> 0 frames/s")


def plan_xy(range_km, azimuth_deg):
    """(x, y) km of a point at range_km and azimuth_deg (from boresight +y, positive
    towards +x)."""
    a = np.radians(azimuth_deg)
    return range_km * np.sin(a), range_km * np.cos(a)


def ring_step(range_max_km, rings):
    """A round ring spacing (1, 2 or 5 x 10^n km) giving about `rings` rings."""
    raw = range_max_km / rings
    decade = 10 ** np.floor(np.log10(raw))
    return float(min((m * decade for m in (1, 2, 5, 10)), key=lambda s: abs(s - raw)))


class ppi_sink(TrackMessageSink):
    """Tracks with azimuth on a plan-position indicator (widget: qwidget())."""

    def __init__(self, range_max_m=30e3, sector_deg=90.0, rings=5, trail_length=20,
                 show_tentative=False, update_rate=10.0, title="Tracks (PPI)"):
        check_params(range_max_m, sector_deg, rings, trail_length, update_rate)
        TrackMessageSink.__init__(self, "ppi_sink", trail_length, show_tentative)
        self._widget = _PpiWidget(self, title, range_max_m * _display.RANGE_SCALE,
                                  float(sector_deg), int(rings), update_rate)


class _PpiWidget(QtWidgets.QWidget):
    def __init__(self, block, title, range_max_km, sector_deg, rings, update_rate):
        super().__init__()
        self.block = block
        layout = QtWidgets.QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        self.title = QtWidgets.QLabel(f"<b>{title}</b>" if title else "")
        self.status = _display.status_label("waiting for tracks")
        layout.addWidget(self.title)
        layout.addWidget(self.status)
        half_width = range_max_km * (np.sin(np.radians(sector_deg)) if sector_deg < 90 else 1)
        bottom = min(0.0, range_max_km * np.cos(np.radians(sector_deg)))
        self.plane = _TrackPlot("x, cross-range (km, +x right)", (-half_width, half_width),
                                range_max_km)
        item = self.plane.widget.getPlotItem()
        item.setLabel("left", "y, down-range (km, boresight up)")
        item.showGrid(x=False, y=False)
        view = item.getViewBox()
        view.setAspectLocked(True)
        view.setRange(xRange=(-half_width, half_width), yRange=(bottom, range_max_km),
                      padding=0.02)
        self._draw_grid(range_max_km, sector_deg, rings)
        self.plot = self.plane.widget
        layout.addWidget(self.plot, 1)
        self.timer = QtCore.QTimer(self)
        self.timer.timeout.connect(self._tick)
        self.timer.setInterval(max(1, int(round(1000.0 / update_rate))))
        self.timer.start()
        _display.fit_window_on_first_show(self)

    def _draw_grid(self, range_max_km, sector_deg, rings):
        """About `rings` range rings at a round spacing (1, 2 or 5 x 10^n km, labelled)
        and the outer ring at range max; azimuth spokes labelled in degrees."""
        item = self.plane.widget.getPlotItem()
        pen = pg.mkPen(GRID_COLOR, width=1)
        az = np.linspace(-sector_deg, sector_deg, 181)
        step = ring_step(range_max_km, rings)
        radii = list(np.arange(step, range_max_km - 0.25 * step, step)) + [range_max_km]
        for r in radii:
            x, y = plan_xy(r, az)
            item.addItem(pg.PlotDataItem(x, y, pen=pen))
            label = pg.TextItem(f"{r:.3g} km", color=GRID_COLOR, anchor=(0, 1))
            label.setPos(*plan_xy(r, 0.0))
            item.addItem(label)
        for a in np.arange(-np.floor(sector_deg / SPOKE_STEP_DEG) * SPOKE_STEP_DEG,
                           sector_deg + 1e-9, SPOKE_STEP_DEG):
            x, y = plan_xy(np.array([0.0, range_max_km]), a)
            item.addItem(pg.PlotDataItem(x, y, pen=pen))
            label = pg.TextItem(f"{a:+.0f}°", color=GRID_COLOR, anchor=(0.5, 1))
            label.setPos(*plan_xy(range_max_km * 1.0, a))
            item.addItem(label)

    @property
    def markers(self):
        """The markers by status (what tools/check_grc_display.py reads), in x, y km."""
        return self.plane.markers

    def _tick(self):
        frame = self.block._frames.take()
        if frame is None:
            return
        meta, points, trails = frame
        shown = [(i, st, *plan_xy(r, az)) for i, st, _, r, az in points if np.isfinite(az)]
        self.plane.draw(shown,
                        {i: [plan_xy(r, az) for _, r, az in t if np.isfinite(az)]
                         for i, t in trails.items()},
                        self.block.show_tentative)
        self.plane.draw_truth([plan_xy(r, az) for _, r, az in self.block.keeper.truth()])
        n = collections.Counter(p[1] for p in points)
        blind = len(points) - len(shown)
        self.status.setText(f"CPI {meta.get('cpi')}, t = {meta.get('time_s', 0):.3f} s: "
                            f"{n['confirmed']} confirmed, {n['coasting']} coasting, "
                            f"{n['tentative']} tentative"
                            + (f"; {blind} without azimuth (not drawn)" if blind else ""))

    def widget_point(self, x, y):
        """Pixel (column, row) in this widget's grab() of plan coordinates (x, y) km."""
        view = self.plot.getPlotItem().getViewBox()
        scene = view.mapViewToScene(QtCore.QPointF(x, y))
        p = self.plot.mapTo(self, self.plot.mapFromScene(scene))
        return round(p.x()), round(p.y())
