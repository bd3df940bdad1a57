#!/usr/bin/env python3
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""QA of ppi_sink by the pixels it renders (under a virtual X server): the tracks of a
real gpuradar.tracker run with azimuths appear where the plan axes say (x = range
sin(azimuth), y = range cos(azimuth), km), in their status's colour, with the scene's
truth as orange squares; tracks without azimuth are counted, not drawn; bad messages are
counted and bad parameters raise ValueError naming them."""

import os
import sys

import numpy as np
import pmt
from gnuradio import gr_unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from qa_display_tracks import (A, AZIMUTH, B, PERIOD, SCANS, colour_near,  # noqa: E402
                               pump, tracker_messages)

from gnuradio import gpuradar  # noqa: E402
from gnuradio.gpuradar.display_ppi import plan_xy  # noqa: E402
from gnuradio.gpuradar.display_tracks import COLORS  # noqa: E402

ORANGE = (255, 127, 14)


class _Plane:
    """colour_near's view of the PPI: widget_point(x, y, plane) in plan km."""

    def __init__(self, widget):
        self.widget = widget

    def widget_point(self, x, y, plane=None):
        return self.widget.widget_point(x, y)


class qa_ppi_sink(gr_unittest.TestCase):

    def render(self, msgs, truth=()):
        sink = gpuradar.ppi_sink(30e3, 90.0, 5, 20, False, 50.0)
        w = sink.qwidget()
        w.resize(800, 600)
        w.show()
        pump(0.3)
        for d in truth:
            sink._on_truth(pmt.to_pmt(d))
        for m in msgs:
            sink._on_tracks(m)
        pump(2.0, lambda: sink.counts()["drawn"] >= 1)
        pump(0.2)
        return sink, w, w.grab().toImage()

    def test_001_tracks_and_truth_where_the_plan_axes_say(self):
        truth = [{"target": i, "range_m": r, "velocity_mps": v, "azimuth_deg": AZIMUTH[(r, v)]}
                 for i, (r, v) in enumerate((A, B))]
        sink, w, image = self.render(tracker_messages(azimuths=True), truth)
        t = (SCANS - 1) * PERIOD
        ra = (A[0] - A[1] * t) / 1e3
        p = _Plane(w)
        # A confirmed (filled green) at its plan position, not mirrored across boresight
        self.assertTrue(colour_near(p, image, *plan_xy(ra, AZIMUTH[A]), COLORS["confirmed"], 2))
        self.assertFalse(colour_near(p, image, *plan_xy(ra, -AZIMUTH[A]),
                                     COLORS["confirmed"], 5))
        # B missed in the last scan: coasting, an orange ring around its prediction
        rb = (B[0] - B[1] * t) / 1e3
        self.assertTrue(colour_near(p, image, *plan_xy(rb, AZIMUTH[B]), COLORS["coasting"], 8))
        # truth squares at each target's (time 0) position
        for r, v in (A, B):
            self.assertTrue(colour_near(p, image, *plan_xy(r / 1e3, AZIMUTH[(r, v)]),
                                        ORANGE, 12))
        self.assertIn("confirmed", w.status.text())
        self.assertEqual(sink.counts()["bad_messages"], 0)
        xs, ys = w.markers["confirmed"].getData()
        self.assertTrue(np.allclose(np.hypot(xs, ys) * 1e3, [A[0] - A[1] * t], atol=20))

    def test_002_tracks_without_azimuth_counted_not_drawn(self):
        sink, w, image = self.render(tracker_messages(azimuths=False))
        self.assertEqual(w.markers["confirmed"].getData()[0].size, 0)
        self.assertIn("without azimuth (not drawn)", w.status.text())

    def test_003_bad_messages_and_parameters(self):
        sink = gpuradar.ppi_sink()
        sink._on_tracks(pmt.intern("not tracks"))
        sink._on_truth(pmt.to_pmt({"target": 1}))
        self.assertEqual(sink.counts()["bad_messages"], 2)
        for kwargs, name in (({"range_max_m": 0}, "range_max_m"),
                             ({"sector_deg": 181}, "sector_deg"),
                             ({"sector_deg": 0}, "sector_deg"),
                             ({"rings": 0}, "rings"),
                             ({"trail_length": -1}, "trail_length"),
                             ({"update_rate": 0}, "update_rate")):
            with self.assertRaisesRegex(ValueError, name):
                gpuradar.ppi_sink(**kwargs)


if __name__ == "__main__":
    gr_unittest.run(qa_ppi_sink)
