#!/usr/bin/env python3
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""QA of track_sink by the pixels it renders (under a virtual X server): the tracks of a
real gpuradar.tracker run must appear where the axes say, in their status's colour
(confirmed filled green, coasting orange ring, tentative grey only when asked for), with
their trails; bad messages are counted, bad parameters raise ValueError naming them."""

import time

import pmt
from gnuradio import blocks, gr, gr_unittest
from PyQt5 import QtWidgets

from gnuradio import gpuradar
from gnuradio.gpuradar import detections
from gnuradio.gpuradar.display_tracks import COLORS

APP = QtWidgets.QApplication.instance() or QtWidgets.QApplication(["qa_display_tracks"])

# (range m at t = 0, closing velocity m/s), scans 0..5, PERIOD apart (the tracks move
# tens of pixels a scan, so that their trails show beside the markers)
A = (12000.0, 60.0)     # detected every scan: confirmed
B = (20000.0, -80.0)    # missed in the last scan: coasting
C = (15000.0, 100.0)    # first seen in the last scan: tentative
SCANS = 6
PERIOD = 20.0


def pump(seconds, until=lambda: False):
    end = time.monotonic() + seconds
    while time.monotonic() < end and not until():
        APP.processEvents()
        time.sleep(0.005)
    APP.processEvents()


def position(target, t):
    return target[0] - target[1] * t, target[1]


#: azimuths (deg) of A, B and C in the runs with angles
AZIMUTH = {A: 30.0, B: -45.0, C: 60.0}


def detections_pdu(k, targets, azimuths=False):
    meta = pmt.dict_add(pmt.make_dict(), pmt.intern("cpi"), pmt.from_uint64(k))
    v = pmt.make_vector(len(targets), pmt.PMT_NIL)
    for i, tg in enumerate(targets):
        r, vel = position(tg, k * PERIOD)
        d = pmt.dict_add(pmt.make_dict(), pmt.intern("range_m"), pmt.from_double(r))
        d = pmt.dict_add(d, pmt.intern("velocity_mps"), pmt.from_double(vel))
        if azimuths:
            d = pmt.dict_add(d, pmt.intern("azimuth_deg"), pmt.from_double(AZIMUTH[tg]))
            d = pmt.dict_add(d, pmt.intern("azimuth_std_deg"), pmt.from_double(0.5))
        pmt.vector_set(v, i, d)
    return pmt.cons(meta, v)


def tracker_messages(azimuths=False):
    """The tracks PDUs of a tracker fed A every scan, B all but the last, C the last."""
    trk = gpuradar.tracker(9.21, 2, 3, 3, 5.0, 0.5, 5.0, PERIOD)
    tb = gr.top_block()
    dbg = blocks.message_debug()
    tb.msg_connect(trk, "tracks", dbg, "store")
    tb.start()
    for k in range(SCANS):
        targets = [A] + ([B] if k < SCANS - 1 else []) + ([C] if k == SCANS - 1 else [])
        trk.to_basic_block()._post(pmt.intern("detections"),
                                   detections_pdu(k, targets, azimuths))
    end = time.monotonic() + 10
    while dbg.num_messages() < SCANS and time.monotonic() < end:
        time.sleep(0.01)
    tb.stop()
    tb.wait()
    return [dbg.get_message(i) for i in range(dbg.num_messages())]


def colour_near(widget, image, x, y, rgb, radius, tol=60, plane=None):
    """True when a pixel within `radius` px of data point (x, y) of a plane (default
    range-velocity) has colour rgb."""
    col, row = widget.widget_point(x, y, plane)
    for dc in range(-radius, radius + 1):
        for dr in range(-radius, radius + 1):
            c = image.pixelColor(col + dc, row + dr)
            if sum(abs(a - b) for a, b in zip((c.red(), c.green(), c.blue()), rgb)) < tol:
                return True
    return False


class qa_track_sink(gr_unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.msgs = tracker_messages()
        assert len(cls.msgs) == SCANS

    def render(self, msgs=None, **kwargs):
        sink = gpuradar.track_sink(30e3, 150.0, 20, update_rate=50.0, **kwargs)
        w = sink.qwidget()
        w.resize(1000, 600)
        w.show()
        pump(0.3)
        for m in msgs or self.msgs:
            sink._on_tracks(m)
        pump(2.0, lambda: sink.counts()["drawn"] >= 1)
        pump(0.2)
        return sink, w, w.grab().toImage()

    def test_005_truth_overlay(self):
        """Truth messages of a scene source: each target's latest position as an orange
        square on both planes; a malformed one is counted."""
        sink = gpuradar.track_sink(30e3, 150.0, 20, update_rate=50.0)
        w = sink.qwidget()
        w.resize(1400, 600)
        w.show()
        pump(0.3)
        for target, (r, v) in enumerate((A, B)):
            d = {"target": target, "range_m": r, "velocity_mps": v,
                 "azimuth_deg": AZIMUTH[(r, v)]}
            sink._on_truth(pmt.to_pmt(d))
        sink._on_truth(pmt.to_pmt({"target": 9}))  # no position: counted
        for m in tracker_messages(azimuths=True):
            sink._on_tracks(m)
        pump(2.0, lambda: sink.counts()["drawn"] >= 1)
        pump(0.2)
        image = w.grab().toImage()
        orange = (255, 127, 14)
        for r, v in (A, B):
            self.assertTrue(colour_near(w, image, v, r / 1e3, orange, 12))
            self.assertTrue(colour_near(w, image, AZIMUTH[(r, v)], r / 1e3, orange, 12,
                                        plane=w.azimuth_plane))
        self.assertFalse(colour_near(w, image, -A[1], A[0] / 1e3, orange, 12))
        self.assertEqual(sink.counts()["bad_messages"], 1)

    def test_001_statuses_where_the_axes_say(self):
        meta, tracks = detections.pdu_to_python(self.msgs[-1])
        self.assertEqual(sorted(t["status"] for t in tracks),
                         ["coasting", "confirmed", "tentative"])
        sink, w, image = self.render()
        t = (SCANS - 1) * PERIOD
        ra, va = position(A, t)
        rb, vb = position(B, t)
        rc, vc = position(C, t)
        # Confirmed: filled at its centre.
        self.assertTrue(colour_near(w, image, va, ra / 1e3, COLORS["confirmed"], 2))
        # Coasting: an orange ring around the prediction, not filled.
        self.assertTrue(colour_near(w, image, vb, rb / 1e3, COLORS["coasting"], 8))
        self.assertFalse(colour_near(w, image, vb, rb / 1e3, COLORS["coasting"], 1))
        # Tentative: hidden by default.
        self.assertFalse(colour_near(w, image, vc, rc / 1e3, COLORS["tentative"], 5))
        # Nothing green where no track is (the picture is not merely green everywhere).
        self.assertFalse(colour_near(w, image, -va, ra / 1e3, COLORS["confirmed"], 5))
        # A's trail: its position three scans ago lies on the drawn path.
        r3, _ = position(A, t - 3 * PERIOD)
        self.assertTrue(colour_near(w, image, va, r3 / 1e3, (60, 60, 200), 2))
        self.assertIn("1 confirmed, 1 coasting, 1 tentative", w.status.text())
        self.assertEqual(sink.counts()["bad_messages"], 0)
        # No azimuths: no B-scope.
        self.assertFalse(w.azimuth_plane.widget.isVisible())

    def test_002_show_tentative(self):
        sink, w, image = self.render(show_tentative=True)
        rc, vc = position(C, (SCANS - 1) * PERIOD)
        self.assertTrue(colour_near(w, image, vc, rc / 1e3, COLORS["tentative"], 3))

    def test_004_b_scope_with_azimuths(self):
        # Tracks with azimuths: the B-scope shows each at (azimuth, range) in its
        # status's colour, beside the range-velocity plane, which still shows them.
        msgs = tracker_messages(azimuths=True)
        meta, tracks = detections.pdu_to_python(msgs[-1])
        self.assertTrue(all("azimuth_deg" in t for t in tracks))
        sink, w, image = self.render(msgs)
        self.assertTrue(w.azimuth_plane.widget.isVisible())
        bscope = w.azimuth_plane
        t = (SCANS - 1) * PERIOD
        ra, va = position(A, t)
        rb, _ = position(B, t)
        self.assertTrue(colour_near(w, image, AZIMUTH[A], ra / 1e3, COLORS["confirmed"], 2,
                        plane=bscope))
        # Not mirrored: nothing green at minus A's azimuth.
        self.assertFalse(colour_near(w, image, -AZIMUTH[A], ra / 1e3, COLORS["confirmed"],
                         5, plane=bscope))
        self.assertTrue(colour_near(w, image, AZIMUTH[B], rb / 1e3, COLORS["coasting"], 8,
                        plane=bscope))
        self.assertFalse(colour_near(w, image, AZIMUTH[B], rb / 1e3, COLORS["coasting"], 1,
                         plane=bscope))
        # A's trail on the B-scope: its range three scans ago at its azimuth.
        r3, _ = position(A, t - 3 * PERIOD)
        self.assertTrue(colour_near(w, image, AZIMUTH[A], r3 / 1e3, (60, 60, 200), 2,
                        plane=bscope))
        self.assertTrue(colour_near(w, image, va, ra / 1e3, COLORS["confirmed"], 2))

    def test_003_bad_messages_counted_and_parameters_checked(self):
        sink = gpuradar.track_sink()
        sink._on_tracks(pmt.intern("hello"))
        sink._on_tracks(pmt.cons(pmt.make_dict(), pmt.make_vector(1, pmt.make_dict())))
        self.assertEqual(sink.counts()["bad_messages"], 2)
        for kwargs, name in (({"range_max_m": 0}, "range_max_m"),
                             ({"velocity_max_mps": -1}, "velocity_max_mps"),
                             ({"trail_length": -1}, "trail_length"),
                             ({"update_rate": 0}, "update_rate")):
            with self.assertRaisesRegex(ValueError, name):
                gpuradar.track_sink(**kwargs)


if __name__ == "__main__":
    gr_unittest.run(qa_track_sink)
