#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""Checks of the display blocks by the pixels they render (used by the QA tests and by
tools/check_grc_display.py on the shipped examples).

A rendered pixel is mapped back to dB through the display's colour map and levels; the
pixel is found from data coordinates through the plot's own axes, so a picture drawn
upside down or shifted puts the background where a target should be and fails.
"""

import numpy as np

#: a target is shown when its pixel is within this of the colour scale's top (dB)
NEAR_PEAK_DB = 6.0
#: the background's median lies at least this far below the top (dB)
BACKGROUND_BELOW_DB = 15.0


#: an axis line or label is readable when its colour's lightness (0..255) is below this
#: (pyqtgraph's default grey, 150, was faint on the white plots)
AXIS_MAX_LIGHTNESS = 100


def plot_widgets(display):
    """{name: QWidget} of what must be seen of a display widget: its plots (axes
    included) and tables."""
    import pyqtgraph as pg
    from PyQt5 import QtWidgets
    found = {}
    for w in [display] + display.findChildren(QtWidgets.QWidget):
        if isinstance(w, (pg.PlotWidget, QtWidgets.QTableWidget)) and not w.isHidden():
            found[f"{type(w).__name__} {len(found)}"] = w
    return found


def hidden_errors(display):
    """Parts of a display (plots with their axes, tables) not wholly visible in its
    window as it is: cut by the window's edge or scrolled out of grcc's scroll area; and
    a window larger than the screen."""
    from PyQt5 import QtCore, QtWidgets
    errors = []
    window = display.window()
    for name, w in plot_widgets(display).items():
        # w's rectangle in window coordinates, clipped by the window and by the
        # viewport of every scroll area it sits in (grcc's top_scroll)
        rect = QtCore.QRect(w.mapTo(window, QtCore.QPoint(0, 0)), w.size())
        visible = rect.intersected(window.rect())
        parent = w.parentWidget()
        while parent is not None and parent is not window:
            if isinstance(parent, QtWidgets.QAbstractScrollArea):
                port = parent.viewport()
                visible = visible.intersected(
                    QtCore.QRect(port.mapTo(window, QtCore.QPoint(0, 0)), port.size()))
            parent = parent.parentWidget()
        if w.width() < 50 or w.height() < 50 or visible != rect or not w.isVisible():
            errors.append(f"{name} of {w.width()} x {w.height()} px shows only "
                          f"{visible.width()} x {visible.height()} px in the "
                          f"{window.width()} x {window.height()} px window (at "
                          f"{rect.x()}, {rect.y()}; visible from {visible.x()}, "
                          f"{visible.y()})")
    screen = window.screen().availableGeometry()
    if window.width() > screen.width() or window.height() > screen.height():
        errors.append(f"window {window.width()} x {window.height()} px exceeds the screen "
                      f"{screen.width()} x {screen.height()} px")
    return errors


def axis_colour_errors(display):
    """Axis lines and labels of every plot of a display are dark (readable on white)."""
    import pyqtgraph as pg
    errors = []
    for name, w in plot_widgets(display).items():
        if not isinstance(w, pg.PlotWidget):
            continue
        for side in ("left", "bottom"):
            axis = w.getPlotItem().getAxis(side)
            for what, pen in (("line", axis.pen()), ("labels", axis.textPen())):
                if pen.color().lightness() > AXIS_MAX_LIGHTNESS:
                    errors.append(f"{name}: {side} axis {what} colour {pen.color().name()} "
                                  "is too light to read")
    return errors


def rendered_db(plot, points, cell=None):
    """dB shown by an ImagePlot (the widget of range_doppler_sink / sar_image_sink) at
    data coordinates points [(x, y), ...], read from its grab() as on screen with the
    markers drawn over the image hidden (a detection's outline may cross its target's
    cell). With cell = (width, height) in data units, the highest level over the pixels
    of the middle half of the drawn cell centred on each point: a cell one or two
    pixels high may have its centre rounded onto its neighbour's pixel row."""
    import pyqtgraph as pg
    overlays = [i for i in plot.plot.getPlotItem().items
                if isinstance(i, pg.ScatterPlotItem) and i.isVisible()]
    for item in overlays:
        item.hide()
    try:
        image = plot.grab().toImage()
    finally:
        for item in overlays:
            item.show()
    lut = np.asarray(plot.image.lut, dtype=np.float64)[:, :3]  # as drawn
    low, high = plot.levels()
    out = []
    for x, y in points:
        col, row = plot.widget_point(x, y)
        if not (0 <= col < image.width() and 0 <= row < image.height()):
            raise ValueError(f"point ({x:g}, {y:g}) lies outside the widget")
        pixels = {(col, row)}
        if cell is not None:
            (c0, r0), (c1, r1) = (plot.widget_point(x - cell[0] / 4, y - cell[1] / 4),
                                  plot.widget_point(x + cell[0] / 4, y + cell[1] / 4))
            pixels |= {(c, r) for c in range(min(c0, c1), max(c0, c1) + 1)
                       for r in range(min(r0, r1), max(r0, r1) + 1)}
        levels = []
        for c, r in pixels:
            rgb = image.pixelColor(c, r)
            d = np.sum((lut - (rgb.red(), rgb.green(), rgb.blue())) ** 2, axis=1)
            levels.append(low + (high - low) * int(np.argmin(d)) / (len(lut) - 1))
        out.append(max(levels))
    return np.array(out)


def orientation_errors(plot, x_label, y_label):
    """Axes increase to the right and upwards and carry the expected labels."""
    item = plot.plot.getPlotItem()
    view = item.getViewBox()
    errors = []
    if view.xInverted() or view.yInverted():
        errors.append("an axis is inverted")
    (left, right), (bottom, top) = view.viewRange()
    # view coordinates are data coordinates times the plot's scales
    sx, sy = getattr(plot, "x_scale", 1.0), getattr(plot, "y_scale", 1.0)
    (x0, y0), (x1, y1) = (plot.widget_point(left / sx, bottom / sy),
                          plot.widget_point(right / sx, top / sy))
    if not (x1 > x0 and y1 < y0):
        errors.append("data x does not grow to the right or y upwards on screen")
    for side, label in (("bottom", x_label), ("left", y_label)):
        if label not in item.getAxis(side).labelText:
            errors.append(f"{side} axis label is not {label!r}")
    return errors


def shown_errors(plot, targets, background, near_db=NEAR_PEAK_DB,
                 below_db=BACKGROUND_BELOW_DB, cell=None):
    """targets [(x, y, expected dB below the top)] must be shown within near_db of their
    expected level (read over the middle of their cell, rendered_db); background
    [(x, y)] must lie below_db under the top (median)."""
    top = plot.levels()[1]
    errors = []
    shown = rendered_db(plot, [(x, y) for x, y, _ in targets], cell)
    for (x, y, below), level in zip(targets, shown):
        if level < top - below - near_db:
            errors.append(f"target at ({x:g}, {y:g}) shows {level:.1f} dB, expected near "
                          f"{top - below:.1f} dB")
    off = rendered_db(plot, background)
    if np.median(off) > top - below_db:
        errors.append(f"background median {np.median(off):.1f} dB, not {below_db} dB under "
                      f"the top {top:.1f} dB")
    return errors


def map_targets_errors(sink, targets):
    """range_doppler_sink: targets [(velocity m/s, range m, SNR dB)] shown near the peak
    (less the target's SNR deficit against the strongest one), the rest of the drawn map
    (cells 8 range and 3 Doppler bins away) well below it; axes oriented."""
    plot = sink.qwidget()
    axes = plot.frame.axes
    cells = []
    for k in np.linspace(4, axes.nrange - 5, 14).astype(int):
        for m in np.linspace(1, axes.ndoppler - 2, 6).astype(int):
            v, r = float(axes.velocity_mps(m)), float(axes.range_m(k))
            if all(abs(r - tr) > 8 * axes.dr_m or abs(v - tv) > 3 * axes.dv_mps
                   for tv, tr, _ in targets):
                cells.append((v, r))
    strongest = max(snr for _, _, snr in targets)
    # Each target is read at the centre of the drawn cell holding it (range bins may be
    # pooled by row_group per row): where its energy is, and inside the hollow marker of
    # its detection (a marker's outline is not the map).
    g = plot.row_group  # range bins per drawn row
    centred = [(float(axes.velocity_mps(round(v / axes.dv_mps) + axes.ndoppler // 2)),
                float(axes.range_m(round((r - axes.r0_m) / axes.dr_m) // g * g + (g - 1) / 2)),
                strongest - snr)
               for v, r, snr in targets]
    return (orientation_errors(plot, "closing +", "range (km)") +
            shown_errors(plot, centred, cells, cell=(axes.dv_mps, g * axes.dr_m)))


def rti_targets_errors(sink, targets):
    """rti_sink with a "max" slice: targets [(velocity m/s, range m, SNR dB)] shown in the
    newest row near the peak (less the target's SNR deficit), the rest of that row (cells
    8 away from every target) well below it; axes oriented and labelled."""
    plot = sink.qwidget()
    x, rows = sink.rows()
    if not rows:
        return ["no row drawn"]
    if sink.select != "max":
        return []  # a slice at one velocity / range need not hold every target
    newest = rows[-1][0]
    dx = float(x[1] - x[0]) if len(x) > 1 else 1.0
    g = sink.col_group  # cells per drawn column
    along = [r if sink.profile == "range" else v for v, r, _ in targets]
    strongest = max(snr for _, _, snr in targets)
    # each target read at the centre of the drawn column holding its cell
    shown = [(float(x[0] + (int(np.argmin(np.abs(x - a))) // g * g + (g - 1) / 2) * dx),
              newest, strongest - snr) for a, (_, _, snr) in zip(along, targets)]
    background = [(float(c), newest) for c in x[::max(1, len(x) // 40)]
                  if all(abs(c - a) > 8 * abs(dx) for a in along)]
    label = "range (km)" if sink.profile == "range" else "closing +"
    return (orientation_errors(plot, label, "CPI") +
            shown_errors(plot, shown, background, cell=(g * dx, 1.0)))


def image_targets_errors(sink, targets, keep_out_m):
    """sar_image_sink: targets [(x, y, dB re peak)] shown; points of a 5 x 5 grid over
    the image farther than keep_out_m from every target are background."""
    plot = sink.qwidget()
    a = sink.axes
    background = [(a.x0 + fx * a.dx * (a.nx - 1), a.y0 + fy * a.dy * (a.ny - 1))
                  for fx in np.linspace(0.05, 0.95, 5) for fy in np.linspace(0.05, 0.95, 5)]
    background = [p for p in background
                  if all(np.hypot(p[0] - x, p[1] - y) > keep_out_m for x, y, _ in targets)]
    return (orientation_errors(plot, "east", "north") +
            shown_errors(plot, [(x, y, -db) for x, y, db in targets], background))
