#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""What the display blocks share: the latest-frame store that decouples drawing from
processing, the image plot (pyqtgraph) with its dB colour bar, and parameter checks.

Message handlers and work() run in GNU Radio's threads; they only hand the newest frame
to a LatestFrame. A Qt timer in the GUI thread takes it and draws. A frame replaced
before the timer took it is counted as dropped: a slow display drops frames here, never
blocks or slows the flowgraph.

Window size: a grcc-generated QT flowgraph puts its widgets (placed by gui_hint) in a
scroll area and shows its window at Qt's default size, which for a scroll area is about
634 x 430 px whatever it holds (GRC's options block has no window size for QT GUI
flowgraphs; its window_size is for Bokeh). Every display here therefore has a size hint
that shows its axes and labels whole, and, the first time it is shown, grows its window
to the size hint of everything in the scroll area (fit_window_to_content), within the
screen. A window whose geometry was set before it was shown (a size the user left,
restored by the flowgraph from QSettings) keeps it.

Units, one per axis in every display: range in km (RANGE_LABEL), radial velocity in m/s
closing positive, azimuth in degrees from boresight, positive towards +x.
"""

import threading

import numpy as np
import pyqtgraph as pg
from PyQt5 import QtCore, QtWidgets

#: colour map of every dB image (perceptually uniform, readable in grey)
COLORMAP = "viridis"
#: range axes of every display are in km: data in metres times RANGE_SCALE
RANGE_SCALE = 1e-3
RANGE_LABEL = "range (km)"
VELOCITY_LABEL = "radial velocity (m/s, closing +)"
#: axis lines, ticks and labels: black on the white plots (pyqtgraph's default grey is
#: faint on white)
AXIS_COLOR = (0, 0, 0)
#: smallest plot area that keeps tick labels apart (px)
PLOT_MIN_SIZE = (360, 320)
#: the size a plot asks for (px): room for ~10 ticks on each axis and the labels
PLOT_SIZE_HINT = (560, 400)
#: room left around a window's content for its frame and title bar when fitting it to
#: the screen (px)
WINDOW_DECORATION = (16, 48)


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


def status_label(text):
    """A one-line status label that never widens its display (a long line is cut, not
    wrapped: a wrapping label makes grcc's scroll area size the window's content by
    height-for-width, past the screen)."""
    label = QtWidgets.QLabel(text)
    label.setSizePolicy(QtWidgets.QSizePolicy.Ignored, QtWidgets.QSizePolicy.Preferred)
    return label


def style_plot(plot_widget):
    """Black, readable axes (lines, ticks, tick labels and titles) on a white plot, the
    plot's minimum size and size hint."""
    item = plot_widget.getPlotItem()
    for side in ("left", "bottom", "right", "top"):
        axis = item.getAxis(side)
        axis.setPen(pg.mkPen(AXIS_COLOR, width=1))
        axis.setTextPen(pg.mkPen(AXIS_COLOR))
    plot_widget.setMinimumSize(*PLOT_MIN_SIZE)
    plot_widget.sizeHint = lambda: QtCore.QSize(*PLOT_SIZE_HINT)
    plot_widget.updateGeometry()


def _scroll_area_of(widget):
    """The QScrollArea holding widget inside its window (grcc's top_scroll), or None."""
    w = widget.parentWidget()
    while w is not None and not w.isWindow():
        if isinstance(w, QtWidgets.QScrollArea):
            return w
        w = w.parentWidget()
    return None


def content_size(window, widget):
    """The window size (QSize) that shows all of widget's scroll-area content (or, with
    no scroll area, the window's own size hint) without scrolling."""
    area = _scroll_area_of(widget)
    if area is None or area.widget() is None:
        return window.sizeHint().expandedTo(window.minimumSizeHint())
    content = area.widget()
    need = content.sizeHint().expandedTo(content.minimumSizeHint())
    # what the window adds around the scroll area's viewport: its layout's margins,
    # the area's frame and anything placed beside the area
    outer = window.layout().contentsMargins() if window.layout() else QtCore.QMargins()
    frame = 2 * area.frameWidth()
    # a scroll bar's width to spare: content that grows by a pixel once drawing starts
    # (a label's font, an axis' tick text) must not bring in a scroll bar that hides
    # that much of every display
    spare = area.style().pixelMetric(QtWidgets.QStyle.PM_ScrollBarExtent)
    return QtCore.QSize(need.width() + outer.left() + outer.right() + frame + spare,
                        need.height() + outer.top() + outer.bottom() + frame + spare)


def fit_window_to_content(widget):
    """Grows widget's window to show its whole scroll-area content, within the screen's
    available area; never shrinks it. Returns the window's new size."""
    window = widget.window()
    if window is widget:
        return window.size()
    target = content_size(window, widget)
    screen = window.screen() if hasattr(window, "screen") else None
    screen = screen or QtWidgets.QApplication.primaryScreen()
    if screen is not None:
        avail = screen.availableGeometry()
        target = target.boundedTo(QtCore.QSize(avail.width() - WINDOW_DECORATION[0],
                                               avail.height() - WINDOW_DECORATION[1]))
    size = window.size().expandedTo(target)
    if size != window.size():
        window.resize(size)
    return window.size()


class _FitOnFirstShow(QtCore.QObject):
    """Event filter: at the widget's first Show, fit its window unless the window's
    geometry was set before (Qt::WA_Resized: restored or chosen by the program)."""

    def eventFilter(self, obj, event):
        if event.type() == QtCore.QEvent.Show:
            obj.removeEventFilter(self)
            window = obj.window()
            if window is not obj and not window.property("gpuradar_fitted") and \
                    not window.testAttribute(QtCore.Qt.WA_Resized):
                window.setProperty("gpuradar_fitted", True)
                # now, before the window is first laid out at Qt's default size (a
                # scroll bar shown there can stay after the window grows)
                fit_window_to_content(obj)
        return False


def fit_window_on_first_show(widget):
    """Installs the first-show window fit on widget (every display's top widget)."""
    widget._fit_filter = _FitOnFirstShow(widget)
    widget.installEventFilter(widget._fit_filter)


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
    data coordinates: row 0 at the bottom, column 0 at the left. x_scale and y_scale
    convert data x and y to the axes' units (RANGE_SCALE: metres drawn in km); extents
    and points given to set_image, widget_point and the overlays of subclasses are in
    data units. plot_width: the width (px) the plot asks for.
    """

    def __init__(self, title, x_label, y_label, bar_label, update_rate, on_tick,
                 aspect_locked=False, parent=None, y_scale=1.0, x_scale=1.0,
                 plot_width=PLOT_SIZE_HINT[0]):
        super().__init__(parent)
        check_positive("update_rate", update_rate, "> 0 frames/s")
        layout = QtWidgets.QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        self.header = QtWidgets.QHBoxLayout()  # title, then controls (e.g. channel)
        self.title = QtWidgets.QLabel(f"<b>{title}</b>" if title else "")
        self.status = status_label("waiting for data")
        self.header.addWidget(self.title)
        self.header.addStretch(1)
        layout.addLayout(self.header)
        layout.addWidget(self.status)
        self.x_scale, self.y_scale = float(x_scale), float(y_scale)
        self._plot_width = int(plot_width)
        self.plot = pg.PlotWidget(background="w")
        style_plot(self.plot)
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
        self.bar.axis.setPen(pg.mkPen(AXIS_COLOR, width=1))
        self.bar.axis.setTextPen(pg.mkPen(AXIS_COLOR))
        # the end labels (0 dB at the top of a scale relative to the peak) reach past
        # the bar's ends by half a line: pyqtgraph would hide them
        self.bar.axis.setStyle(hideOverlappingLabels=False)
        self.bar.getAxis("left").setLabel(bar_label, color=AXIS_COLOR)
        item.setContentsMargins(2, 10, 2, 2)  # room above for the top label's upper half
        layout.addWidget(self.plot, 1)
        fit_window_on_first_show(self)
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
        left, right = left * self.x_scale, right * self.x_scale
        bottom, top = bottom * self.y_scale, top * self.y_scale
        self.image.setImage(db, autoLevels=False, levels=levels)
        self.bar.setLevels(values=levels)
        self._label_bar_ends(levels)
        self.image.setRect(QtCore.QRectF(left, bottom, right - left, top - bottom))
        if extent != self._extent:  # new geometry: show all of it once
            self._extent = extent
            self.plot.getPlotItem().getViewBox().setRange(
                xRange=(left, right), yRange=(bottom, top), padding=0)

    def _label_bar_ends(self, levels):
        """Ticks of the colour bar: both ends labelled (the top, 0 dB on a scale
        relative to the peak, fell between pyqtgraph's automatic ticks) and round steps
        between."""
        low, high = (float(v) for v in levels)
        span = high - low
        step = 10 ** np.floor(np.log10(span)) if span > 0 else 1.0
        if span / step < 3:
            step /= 2
        inner = np.arange(np.ceil(low / step) * step, high, step)
        inner = [v for v in inner if low + 0.15 * span < v < high - 0.15 * span]
        # the end ticks a hair inside the axis range, which drops ticks beyond it by
        # rounding
        eps = 1e-6 * span
        # whole dB at the ends (an auto-scaled peak of 45.0312 dB is wider than the
        # bar's axis, which then drops the label)
        digits = 0 if span >= 10 else 1
        ticks = ([(low + eps, f"{low:.{digits}f}")] + [(v, f"{v:g}") for v in inner] +
                 [(high - eps, f"{high:.{digits}f}")])
        self.bar.axis.setTicks([ticks, []])

    def levels(self):
        return tuple(float(v) for v in self.image.levels)

    def bar_labels(self):
        """The colour bar's tick labels, bottom to top."""
        return [text for _, text in sorted(self.bar.axis._tickLevels[0])]

    def view_height_px(self):
        """Height of the image area in screen pixels (at least 1)."""
        return max(1, int(self.plot.getPlotItem().getViewBox().height()))

    def sizeHint(self):
        return QtCore.QSize(self._plot_width + 80, PLOT_SIZE_HINT[1] + 50)

    def widget_point(self, x, y):
        """Pixel (column, row) in this widget's grab() of data coordinates (x, y)."""
        view = self.plot.getPlotItem().getViewBox()
        scene = view.mapViewToScene(QtCore.QPointF(x * self.x_scale, y * self.y_scale))
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

