#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""What the display blocks share: the latest-frame store that decouples drawing from
processing, the image plot (pyqtgraph) with its dB colour bar, and parameter checks.

Message handlers and work() run in GNU Radio's threads; they only hand the newest frame
to a LatestFrame. A Qt timer in the GUI thread takes it and draws. A frame replaced
before the timer took it is counted as dropped: a slow display drops frames here, never
blocks or slows the flowgraph.
"""

import threading

import numpy as np
import pyqtgraph as pg
from PyQt5 import QtCore, QtWidgets

#: colour map of every dB image (perceptually uniform, readable in grey)
COLORMAP = "viridis"


class LatestFrame:
    """Thread-safe single-slot store: put() from any thread, take() from the GUI timer."""

    def __init__(self):
        self._lock = threading.Lock()
        self._frame = None
        self.received = 0
        self.drawn = 0
        self.dropped = 0

    def put(self, frame):
        with self._lock:
            if self._frame is not None:
                self.dropped += 1
            self._frame = frame
            self.received += 1

    def take(self):
        """The newest frame not yet taken (counted as drawn), or None."""
        with self._lock:
            frame, self._frame = self._frame, None
            if frame is not None:
                self.drawn += 1
            return frame

    def counts(self):
        """{'received', 'drawn', 'dropped'}: every received frame is drawn, dropped or
        still waiting for the next timer tick."""
        with self._lock:
            return {"received": self.received, "drawn": self.drawn, "dropped": self.dropped}


class DisplayBlock:
    """What every display block offers besides GNU Radio's block interface. Expects
    self._widget, self._frames (LatestFrame) and self.bad_messages."""

    def qwidget(self):
        """The QWidget to place in a QT GUI flowgraph (gui_hint)."""
        return self._widget

    def widget(self):
        return self._widget

    def counts(self):
        """Frames received, drawn and dropped by the display, and malformed messages."""
        c = self._frames.counts()
        c["bad_messages"] = self.bad_messages
        return c


def check_positive(name, value, allowed="> 0"):
    if not np.isfinite(value) or value <= 0:
        raise ValueError(f"{name} must be {allowed} (got {value!r})")


def check_levels(auto_scale, zmin, zmax, dynamic_range):
    """Colour-scale parameters: fixed limits must be finite and increasing."""
    if auto_scale:
        check_positive("dynamic_range", dynamic_range, "> 0 dB")
    elif not (np.isfinite(zmin) and np.isfinite(zmax) and zmin < zmax):
        raise ValueError(f"zmin must be < zmax, both finite dB (got zmin={zmin!r}, "
                         f"zmax={zmax!r})")


class ImagePlot(QtWidgets.QWidget):
    """A title line, a status line and an image plot with a dB colour bar.

    set_image() draws a (rows, cols) dB array over extent (left, right, bottom, top) in
    data coordinates: row 0 at the bottom, column 0 at the left.
    """

    def __init__(self, title, x_label, y_label, bar_label, update_rate, on_tick,
                 aspect_locked=False, parent=None):
        super().__init__(parent)
        check_positive("update_rate", update_rate, "> 0 frames/s")
        layout = QtWidgets.QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        self.header = QtWidgets.QHBoxLayout()  # title, then controls (e.g. channel)
        self.title = QtWidgets.QLabel(f"<b>{title}</b>" if title else "")
        self.status = QtWidgets.QLabel("waiting for data")
        self.status.setWordWrap(True)
        self.header.addWidget(self.title)
        self.header.addStretch(1)
        layout.addLayout(self.header)
        layout.addWidget(self.status)
        self.plot = pg.PlotWidget(background="w")
        self.plot.setMinimumSize(320, 240)
        item = self.plot.getPlotItem()
        item.setLabel("bottom", x_label)
        item.setLabel("left", y_label)
        item.setMenuEnabled(False)
        item.getViewBox().setAspectLocked(aspect_locked)
        self.image = pg.ImageItem(axisOrder="row-major")
        item.addItem(self.image)
        # The colour bar also sets the image's lookup table and levels.
        self.bar = pg.ColorBarItem(values=(0.0, 1.0), colorMap=pg.colormap.get(COLORMAP),
                                   label=bar_label, interactive=False)
        self.bar.setImageItem(self.image, insert_in=item)
        layout.addWidget(self.plot, 1)
        self._extent = None
        self.timer = QtCore.QTimer(self)
        self.timer.timeout.connect(on_tick)
        self.set_update_rate(update_rate)
        self.timer.start()

    def set_update_rate(self, rate):
        check_positive("update_rate", rate, "> 0 frames/s")
        self.timer.setInterval(max(1, int(round(1000.0 / rate))))

    def set_image(self, db, extent, levels):
        left, right, bottom, top = extent
        self.image.setImage(db, autoLevels=False, levels=levels)
        self.bar.setLevels(values=levels)
        self.image.setRect(QtCore.QRectF(left, bottom, right - left, top - bottom))
        if extent != self._extent:  # new geometry: show all of it once
            self._extent = extent
            self.plot.getPlotItem().getViewBox().setRange(
                xRange=(left, right), yRange=(bottom, top), padding=0)

    def levels(self):
        return tuple(float(v) for v in self.image.levels)

    def view_height_px(self):
        """Height of the image area in screen pixels (at least 1)."""
        return max(1, int(self.plot.getPlotItem().getViewBox().height()))

    def widget_point(self, x, y):
        """Pixel (column, row) in this widget's grab() of data coordinates (x, y)."""
        view = self.plot.getPlotItem().getViewBox()
        scene = view.mapViewToScene(QtCore.QPointF(x, y))
        p = self.plot.mapTo(self, self.plot.mapFromScene(scene))
        return round(p.x()), round(p.y())


def markers(color, symbol, size):
    """A hollow-marker scatter item (the image stays visible inside the marker)."""
    return pg.ScatterPlotItem(pen=pg.mkPen(color, width=2), brush=None, symbol=symbol,
                              size=size, pxMode=True)


def rx_time_seconds(value):
    """Seconds of an rx_time given as a double or as UHD's (full secs, frac secs)."""
    if value is None:
        return None
    if isinstance(value, (tuple, list)):
        return float(value[0]) + float(value[1])
    return float(value)

