#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""rti_sink: a range-time-intensity (waterfall) display of one slice of each
range-Doppler map, as a QT GUI widget.

Input: the `map` message of pulse_doppler_processor's tap (as range_doppler_sink takes
it). From each map one profile in dB becomes a row, the newest at the top, the last
`history` rows kept:
  * profile "range": power against range (km) across; the Doppler slice is the strongest
    cell of each range bin over all velocities (select "max": every target shows
    whatever its velocity) or the Doppler bin nearest `at` m/s (select "at");
  * profile "velocity": power against radial velocity (m/s, closing positive) across;
    the strongest over all range bins (select "max") or the range bin nearest `at` m
    (select "at").
The vertical axis is the CPI number. Rows are made in the message handler, from every
map that arrives (a redraw skipped by a slow GUI leaves no gap); a Qt timer draws the
newest rows update_rate times a second.
"""

import collections
import threading

import numpy as np
import pmt
from gnuradio import gr

from . import _display, display_geometry
from .display_range_doppler import MapFrame

PROFILES = ("range", "velocity")
SELECTS = ("max", "at")
#: px: the waterfall asks for less width than the map, to sit beside it
PLOT_WIDTH = 440


def check_params(profile, select, at, history, channel, update_rate):
    if profile not in PROFILES:
        raise ValueError(f"profile must be one of {', '.join(PROFILES)} (got {profile!r})")
    if select not in SELECTS:
        raise ValueError(f"select must be one of {', '.join(SELECTS)} (got {select!r})")
    if not np.isfinite(at):
        raise ValueError(f"at must be finite (m/s for a range profile, m for a velocity "
                         f"profile; got {at!r})")
    if int(history) != history or not 2 <= history <= 10000:
        raise ValueError(f"history must be an integer in [2, 10000] CPIs (got {history!r})")
    if int(channel) != channel or channel < 0:
        raise ValueError(f"channel must be an integer >= 0 (got {channel!r})")
    _display.check_positive("update_rate", update_rate, "> 0 frames/s")


def profile_of(frame, channel, profile, select, at):
    """(x values of the profile's cells: m for range, m/s for velocity; the profile in dB)
    of one MapFrame; ValueError when the map lacks the channel."""
    if channel >= frame.data.shape[0]:
        raise ValueError(f"channel {channel} does not exist: the map has "
                         f"{frame.data.shape[0]} channel(s)")
    axes = frame.axes
    order = display_geometry.doppler_display_order(frame.data.shape[2], frame.fftshift)
    db = display_geometry.to_db(frame.data[channel][:, order], frame.envelope, frame.db)
    if profile == "range":
        x = axes.range_m(np.arange(axes.nrange))
        if select == "max":
            return x, db.max(axis=1)
        column = int(np.clip(round(at / axes.dv_mps) + axes.ndoppler // 2, 0,
                             axes.ndoppler - 1))
        return x, db[:, column]
    x = axes.velocity_mps(np.arange(axes.ndoppler))
    if select == "max":
        return x, db.max(axis=0)
    row = int(np.clip(round((at - axes.r0_m) / axes.dr_m), 0, axes.nrange - 1))
    return x, db[row, :]


class rti_sink(gr.basic_block, _display.DisplayBlock):
    """Range-time-intensity (waterfall) of one slice per map (widget: qwidget())."""

    def __init__(self, profile="range", select="max", at=0.0, history=100, channel=0,
                 auto_scale=True, dynamic_range=40.0, zmin=0.0, zmax=60.0,
                 update_rate=10.0, title="Range-time intensity (dB)"):
        check_params(profile, select, at, history, channel, update_rate)
        _display.check_levels(auto_scale, zmin, zmax, dynamic_range)
        gr.basic_block.__init__(self, name="rti_sink", in_sig=None, out_sig=None)
        self.profile, self.select, self.at = profile, select, float(at)
        self.channel = int(channel)
        self._auto_scale, self._dynamic_range = bool(auto_scale), float(dynamic_range)
        self._zmin, self._zmax = float(zmin), float(zmax)
        self.bad_messages = 0
        self.last_error = ""
        self._frames = _display.LatestFrame()  # counts maps; holds the newest rows
        self._lock = threading.Lock()
        self._rows = collections.deque(maxlen=int(history))  # (cpi, profile dB)
        self._x = None
        self.time_s = None
        self.col_group = 1  # cells per drawn column
        self.message_port_register_in(pmt.intern("map"))
        self.set_msg_handler(pmt.intern("map"), self._on_map)
        x_label = (_display.RANGE_LABEL if profile == "range" else _display.VELOCITY_LABEL)
        self._widget = _display.ImagePlot(
            title, x_label, "CPI (newest at the top)", "dB", update_rate, self._tick,
            x_scale=_display.RANGE_SCALE if profile == "range" else 1.0,
            plot_width=PLOT_WIDTH)
        self._widget.status.setText("waiting for maps")

    def _on_map(self, msg):
        try:
            frame = MapFrame.from_message(msg)
            x, row = profile_of(frame, self.channel, self.profile, self.select, self.at)
        except ValueError as e:
            self.bad_messages += 1
            self.last_error = f"bad map message: {e}"
            return
        with self._lock:
            if self._x is None or len(self._x) != len(x) or not np.allclose(self._x, x):
                self._rows.clear()  # new geometry: start again
                self._x = x
            cpi = frame.cpi if frame.cpi is not None else (
                self._rows[-1][0] + 1 if self._rows else 0)
            self._rows.append((int(cpi), row))
            self.time_s = frame.time_s  # of the newest row (None without rx_time)
            frame_rows = (self._x, list(self._rows))
        self._frames.put(frame_rows)

    def rows(self):
        """(x of the cells, [(cpi, profile dB)]) as last received, oldest first."""
        with self._lock:
            return self._x, list(self._rows)

    def set_update_rate(self, update_rate):
        self._widget.set_update_rate(update_rate)

    def set_at(self, at):
        """The slice (m/s or m, select "at"); the rows already made stay as they are."""
        check_params(self.profile, self.select, at, 2, 0, 1.0)
        self.at = float(at)

    def levels_for(self, db_image):
        if self._auto_scale:
            return display_geometry.auto_levels(db_image, self._dynamic_range)
        return self._zmin, self._zmax

    def extent(self, x, cpis, columns=None, group=1):
        """(left, right, bottom, top) of the image: cell edges in x for `columns`
        columns of `group` cells each (default one per cell), CPIs in y (rows taken as
        evenly spaced from the oldest to the newest)."""
        dx = (x[-1] - x[0]) / (len(x) - 1) if len(x) > 1 else 1.0
        columns = len(x) if columns is None else columns
        step = (cpis[-1] - cpis[0]) / (len(cpis) - 1) if len(cpis) > 1 else 1.0
        step = step if step > 0 else 1.0
        left = float(x[0] - dx / 2)
        return (left, left + columns * group * float(dx),
                float(cpis[0] - step / 2), float(cpis[-1] + step / 2))

    def _tick(self):
        taken = self._frames.take()
        w = self._widget
        if taken is None:
            if self.last_error:
                w.status.setText(self.last_error)
            return
        x, rows = taken
        image = np.array([r for _, r in rows], dtype=np.float32)
        cpis = [c for c, _ in rows]
        # no more columns than screen pixels (cells pooled keeping the strongest), so a
        # one-cell target is never dropped by the scaling
        width = max(1, int(w.plot.getPlotItem().getViewBox().width()))
        pooled, self.col_group = display_geometry.max_pool_rows(image.T, width)
        image = np.ascontiguousarray(pooled.T)
        w.set_image(image, self.extent(x, cpis, image.shape[1], self.col_group),
                    self.levels_for(image))
        c = self.counts()
        what = ("strongest over velocity" if self.select == "max" and self.profile == "range"
                else "strongest over range" if self.select == "max"
                else f"at {self.at:g} m/s" if self.profile == "range"
                else f"at {self.at * _display.RANGE_SCALE:g} km")
        w.status.setText(f"CPI {cpis[-1]} · {len(rows)} rows, {what} · maps "
                         f"{c['received']} received, {c['drawn']} drawn")
