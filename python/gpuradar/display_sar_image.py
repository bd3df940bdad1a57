#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""sar_image_sink: a QT GUI display of gpuradar.backprojection's images.

Input: the complex image stream of backprojection, ny items of nx gr_complex per image
(row iy at y = y0 + iy dy, column ix at x = x0 + ix dx). Drawn with x (east) to the
right and y (north) up, in metres on both axes with equal scales, |pixel| in dB
relative to the image's peak (the colour scale spans dynamic_range dB below it).
Drawing is decoupled from processing as in range_doppler_sink: work() copies the rows,
a Qt timer draws the newest complete image; images in between are dropped and counted.
The scene's true targets, when given (truth), are drawn as hollow squares at their x, y.

Truth is a parameter, not a message input: a SAR scene's targets are known before the
image is formed (sigmf_cpi_source's truth()), and a message connection from a source
would end this display when the source ends, before the image (GNU Radio 3.10 marks a
block finished when any block sending it messages is done).
"""

import numpy as np
from gnuradio import gr

from . import _display
from .display_geometry import image_extent
from .sar_sim import Grid


class sar_image_sink(gr.sync_block, _display.DisplayBlock):
    """SAR image display: x east right, y north up (m), dB re peak. Widget: qwidget()."""

    def __init__(self, nx=240, ny=240, x0=0.0, y0=0.0, dx=1.0, dy=1.0, dynamic_range=50.0,
                 update_rate=5.0, title="SAR image", truth=()):
        for name, value in (("nx", nx), ("ny", ny)):
            if int(value) < 1:
                raise ValueError(f"{name} must be >= 1 (got {value!r})")
        for name, value in (("x0", x0), ("y0", y0)):
            if not np.isfinite(value):
                raise ValueError(f"{name} must be finite metres (got {value!r})")
        _display.check_positive("dx", dx, "> 0 m")
        _display.check_positive("dy", dy, "> 0 m")
        _display.check_positive("dynamic_range", dynamic_range, "> 0 dB")
        truth_points = _truth_points(truth)
        gr.sync_block.__init__(self, name="sar_image_sink", in_sig=[(np.complex64, int(nx))],
                               out_sig=None)
        self.axes = Grid(float(x0), float(y0), float(dx), float(dy), int(nx), int(ny))
        self.bad_messages = 0  # no messages in
        self._dynamic_range = float(dynamic_range)
        self._frames = _display.LatestFrame()
        self._rows = np.empty((int(ny), int(nx)), np.complex64)
        self._filled = 0
        self.images = 0
        self._widget = _display.ImagePlot(title, "x, east (m)", "y, north (m)",
                                          "dB re peak", update_rate, self._tick,
                                          aspect_locked=True)
        self.truth_marks = _display.markers("#ff7f0e", "s", 22)
        self._widget.plot.getPlotItem().addItem(self.truth_marks)
        self._truth = []
        self._set_truth_points(truth_points)

    def work(self, input_items, output_items):
        rows = input_items[0]
        i = 0
        while i < len(rows):
            take = min(len(rows) - i, self.axes.ny - self._filled)
            self._rows[self._filled:self._filled + take] = rows[i:i + take]
            self._filled += take
            i += take
            if self._filled == self.axes.ny:
                self._frames.put((self.images, np.abs(self._rows)))
                self.images += 1
                self._filled = 0
        return len(rows)

    def set_dynamic_range(self, dynamic_range):
        _display.check_positive("dynamic_range", dynamic_range, "> 0 dB")
        self._dynamic_range = float(dynamic_range)

    def set_update_rate(self, update_rate):
        self._widget.set_update_rate(update_rate)

    def set_truth(self, truth):
        """The true targets drawn over the image: see _truth_points."""
        self._set_truth_points(_truth_points(truth))

    def truth_points(self):
        """The true targets drawn, [(x_m, y_m)]."""
        return list(self._truth)

    def _set_truth_points(self, points):
        self._truth = points
        if points:
            self.truth_marks.setData(pos=points)
        else:
            self.truth_marks.clear()

    def _tick(self):
        frame = self._frames.take()
        if frame is None:
            return
        index, magnitude = frame
        top = float(magnitude.max())
        db = 20.0 * np.log10(np.maximum(magnitude / top if top > 0 else magnitude, 1e-15))
        self._widget.set_image(db.astype(np.float32), image_extent(self.axes),
                               (-self._dynamic_range, 0.0))
        c = self.counts()
        self._widget.status.setText(f"image {index} · peak {20 * np.log10(max(top, 1e-30)):.1f}"
                                    f" dB · images {c['received']} received, {c['drawn']} "
                                    f"drawn, {c['dropped']} dropped")


def _truth_points(truth):
    """[(x_m, y_m)] of truth: dicts with x_m and y_m (sigmf_cpi_source's truth()), or
    (x, y) pairs; ValueError naming truth for anything else."""
    points = []
    for i, t in enumerate(truth if truth is not None else ()):
        try:
            x, y = (t["x_m"], t["y_m"]) if isinstance(t, dict) else t[:2]
            x, y = float(x), float(y)
        except (KeyError, TypeError, ValueError, IndexError):
            raise ValueError(f"truth[{i}] must be a dict with x_m and y_m or an (x, y) "
                             f"pair in metres (got {t!r})") from None
        if not (np.isfinite(x) and np.isfinite(y)):
            raise ValueError(f"truth[{i}] must be finite metres (got {t!r})")
        points.append((x, y))
    return points
