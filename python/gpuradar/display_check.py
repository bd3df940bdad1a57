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


def rendered_db(plot, points):
    """dB shown by an ImagePlot (the widget of range_doppler_sink / sar_image_sink) at
    data coordinates points [(x, y), ...], read from its grab() as on screen."""
    image = plot.grab().toImage()
    lut = np.asarray(plot.image.lut, dtype=np.float64)[:, :3]  # as drawn
    low, high = plot.levels()
    out = []
    for x, y in points:
        col, row = plot.widget_point(x, y)
        if not (0 <= col < image.width() and 0 <= row < image.height()):
            raise ValueError(f"point ({x:g}, {y:g}) lies outside the widget")
        rgb = image.pixelColor(col, row)
        d = np.sum((lut - (rgb.red(), rgb.green(), rgb.blue())) ** 2, axis=1)
        out.append(low + (high - low) * int(np.argmin(d)) / (len(lut) - 1))
    return np.array(out)


def orientation_errors(plot, x_label, y_label):
    """Axes increase to the right and upwards and carry the expected labels."""
    item = plot.plot.getPlotItem()
    view = item.getViewBox()
    errors = []
    if view.xInverted() or view.yInverted():
        errors.append("an axis is inverted")
    (left, right), (bottom, top) = view.viewRange()
    (x0, y0), (x1, y1) = plot.widget_point(left, bottom), plot.widget_point(right, top)
    if not (x1 > x0 and y1 < y0):
        errors.append("data x does not grow to the right or y upwards on screen")
    for side, label in (("bottom", x_label), ("left", y_label)):
        if label not in item.getAxis(side).labelText:
            errors.append(f"{side} axis label is not {label!r}")
    return errors


def shown_errors(plot, targets, background, near_db=NEAR_PEAK_DB,
                 below_db=BACKGROUND_BELOW_DB):
    """targets [(x, y, expected dB below the top)] must be shown within near_db of their
    expected level; background [(x, y)] must lie below_db under the top (median)."""
    top = plot.levels()[1]
    errors = []
    shown = rendered_db(plot, [(x, y) for x, y, _ in targets])
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
    return (orientation_errors(plot, "closing +", "range (m)") +
            shown_errors(plot, centred, cells))


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
