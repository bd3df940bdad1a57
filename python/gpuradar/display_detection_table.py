#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""detection_table: the detections of the latest CPI as a QT GUI table.

Input: the `detections` message of cfar_2d / cfar_1d. One row per detection, strongest
first (at most max_rows): range (km, as on the maps), radial velocity (m/s, closing
positive), SNR (dB),
range bin, Doppler bin, channel. With print_every_cpi, every CPI's list is printed as
one line (a log of the run) and published on `summary` (e.g. for a QT GUI Message
Edit Box); without it the handler only keeps the PDU. The table is redrawn by a Qt
timer at update_rate from the newest PDU only, so a busy CFAR never waits for the GUI.
"""

import pmt
from gnuradio import gr
from PyQt5 import QtCore, QtWidgets

from . import _display, detections

#: rows the table shows without scrolling
TABLE_ROWS_SHOWN = 5
#: px: every column header readable
TABLE_MIN_WIDTH = 560
COLUMNS = ("range (km)", "velocity (m/s)", "SNR (dB)", "range bin", "Doppler bin", "channel")


def summary_line(meta, dets, max_rows):
    """'CPI n: k detections: R m V m/s S dB; ...' (strongest first, at most max_rows)."""
    cells = []
    for d in strongest(dets, max_rows):
        where = f"{d['range_m']:.0f} m" if "range_m" in d else f"bin {d['range_bin']}"
        speed = (f"{d['velocity_mps']:+.1f} m/s" if "velocity_mps" in d
                 else f"Doppler bin {d.get('doppler_bin')}")
        cells.append(f"{where} {speed} {d['snr_db']:.1f} dB")
    return f"CPI {meta.get('cpi')}: {len(dets)} detections" + (
        ": " + "; ".join(cells) if cells else "")


def strongest(dets, max_rows):
    return sorted(dets, key=lambda d: -d["snr_db"])[:max_rows]


def table_cells(d):
    """The row of one detection, as strings in COLUMNS order."""
    def fmt(key, spec, scale=1):
        return format(d[key] * scale, spec) if key in d else ""
    return (fmt("range_m", ".4f", _display.RANGE_SCALE), fmt("velocity_mps", "+.2f"), fmt("snr_db", ".1f"),
            fmt("range_bin", "d"), fmt("doppler_bin", "d"), fmt("channel", "d"))


class detection_table(gr.basic_block, _display.DisplayBlock):
    """Detection list of the latest CPI (table widget: qwidget())."""

    def __init__(self, max_rows=16, print_every_cpi=False, update_rate=5.0,
                 title="Detections (latest CPI)"):
        if int(max_rows) < 1:
            raise ValueError(f"max_rows must be >= 1 (got {max_rows!r})")
        gr.basic_block.__init__(self, name="detection_table", in_sig=None, out_sig=None)
        self.max_rows = int(max_rows)
        self.print_every_cpi = bool(print_every_cpi)
        self._frames = _display.LatestFrame()
        self.bad_messages = 0
        self.message_port_register_in(pmt.intern("detections"))
        self.message_port_register_out(pmt.intern("summary"))
        self.set_msg_handler(pmt.intern("detections"), self._on_detections)
        self._widget = _TableWidget(self, title, update_rate)

    def _on_detections(self, msg):
        self._frames.put(msg)
        if not self.print_every_cpi:
            return
        try:
            meta, dets = detections.pdu_to_python(msg)
        except ValueError:
            self.bad_messages += 1
            return
        line = summary_line(meta, dets, self.max_rows)
        if self.print_every_cpi:
            print(line, flush=True)
        self.message_port_pub(pmt.intern("summary"), pmt.intern(line))

    def set_max_rows(self, max_rows):
        if int(max_rows) < 1:
            raise ValueError(f"max_rows must be >= 1 (got {max_rows!r})")
        self.max_rows = int(max_rows)

    def set_update_rate(self, update_rate):
        _display.check_positive("update_rate", update_rate, "> 0 updates/s")
        self._widget.timer.setInterval(max(1, int(round(1000.0 / update_rate))))

    def take(self):
        """(meta, detections) of the newest PDU not yet shown, or None."""
        msg = self._frames.take()
        if msg is None:
            return None
        try:
            return detections.pdu_to_python(msg)
        except ValueError:
            self.bad_messages += 1
            return None


class _TableWidget(QtWidgets.QWidget):
    def __init__(self, block, title, update_rate):
        super().__init__()
        _display.check_positive("update_rate", update_rate, "> 0 updates/s")
        self.block = block
        layout = QtWidgets.QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        self.title = QtWidgets.QLabel(f"<b>{title}</b>" if title else "")
        self.status = _display.status_label("waiting for detections")
        self.table = QtWidgets.QTableWidget(0, len(COLUMNS))
        self.table.setHorizontalHeaderLabels(COLUMNS)
        self.table.verticalHeader().setVisible(False)
        self.table.setEditTriggers(QtWidgets.QAbstractItemView.NoEditTriggers)
        self.table.horizontalHeader().setSectionResizeMode(QtWidgets.QHeaderView.Stretch)
        for w in (self.title, self.status):
            layout.addWidget(w)
        layout.addWidget(self.table, 1)
        # the header and TABLE_ROWS_SHOWN rows without scrolling
        self.table.setMinimumHeight(self.table.horizontalHeader().sizeHint().height() +
                                    TABLE_ROWS_SHOWN * self.table.verticalHeader()
                                    .defaultSectionSize() + 2 * self.table.frameWidth())
        self.table.setMinimumWidth(TABLE_MIN_WIDTH)
        _display.fit_window_on_first_show(self)
        self.timer = QtCore.QTimer(self)
        self.timer.timeout.connect(self._tick)
        self.timer.setInterval(max(1, int(round(1000.0 / update_rate))))
        self.timer.start()

    def _tick(self):
        latest = self.block.take()
        if latest is None:
            return
        meta, dets = latest
        rows = strongest(dets, self.block.max_rows)
        self.table.setRowCount(len(rows))
        for r, d in enumerate(rows):
            for c, text in enumerate(table_cells(d)):
                item = QtWidgets.QTableWidgetItem(text)
                item.setTextAlignment(QtCore.Qt.AlignRight | QtCore.Qt.AlignVCenter)
                self.table.setItem(r, c, item)
        shown = f" (strongest {len(rows)} shown)" if len(rows) < len(dets) else ""
        self.status.setText(f"CPI {meta.get('cpi')}: {len(dets)} detections{shown}")
