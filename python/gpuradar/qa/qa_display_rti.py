#!/usr/bin/env python3
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""QA of rti_sink by the pixels it renders (under a virtual X server), on the maps of a
real scene -> framer -> processor run (qa_display_sinks' targets A near and closing, B
far and receding): the newest row shows each target at its range (km) or velocity, a
slice at one target's velocity shows that target and not the other, rows stack newest
at the top; bad messages are counted and bad parameters raise ValueError naming them."""

import os
import sys

import numpy as np
import pmt
from gnuradio import gr_unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from qa_display_sinks import (DR, DV, map_message, processed_maps, pump,  # noqa: E402
                              show, target_points)

from gnuradio import gpuradar  # noqa: E402
from gnuradio.gpuradar import display_check  # noqa: E402

NCPI = 4


def render(**kwargs):
    maps, _ = processed_maps(NCPI)
    sink = gpuradar.rti_sink(update_rate=50.0, **kwargs)
    show(sink.qwidget())
    for k, m in enumerate(maps):
        sink._on_map(map_message(m, k))
    pump(2.0, lambda: sink.counts()["drawn"] >= 1)
    pump(0.2)
    return sink, sink.qwidget()


def newest_db(plot, xs, cpi=NCPI - 1, cell=(DR, 1.0)):
    return display_check.rendered_db(plot, [(x, cpi) for x in xs], cell)


class qa_rti_sink(gr_unittest.TestCase):

    def test_001_range_profile_strongest_over_velocity(self):
        sink, plot = render(profile="range", select="max")
        x, rows = sink.rows()
        self.assertEqual([c for c, _ in rows], list(range(NCPI)))
        top = plot.levels()[1]
        (_, ra), (_, rb) = target_points()
        a, b = newest_db(plot, [ra, rb])
        self.assertGreater(a, top - 8.0)
        self.assertGreater(b, top - 8.0 - 3.0)  # B is 3 dB weaker
        # background between the targets, and the targets in the oldest row too
        self.assertLess(np.median(newest_db(plot, np.linspace(ra + 20 * DR, rb - 20 * DR, 9))),
                        top - 15.0)
        self.assertGreater(newest_db(plot, [ra], cpi=0)[0], top - 8.0)
        self.assertEqual(display_check.orientation_errors(plot, "range (km)", "CPI"), [])
        self.assertEqual(display_check.axis_colour_errors(plot), [])
        self.assertIn(f"CPI {NCPI - 1}", plot.status.text())

    def test_002_range_profile_at_one_velocity(self):
        (va, ra), (_, rb) = target_points()
        sink, plot = render(profile="range", select="at", at=va)
        top = plot.levels()[1]
        a, b = newest_db(plot, [ra, rb])
        self.assertGreater(a, top - 8.0)
        self.assertLess(b, top - 15.0)  # B moves at another velocity: not in this slice

    def test_003_velocity_profile_at_one_range(self):
        (va, ra), (vb, _) = target_points()
        sink, plot = render(profile="velocity", select="at", at=ra)
        top = plot.levels()[1]
        a, b = newest_db(plot, [va, vb], cell=(DV, 1.0))
        self.assertGreater(a, top - 8.0)
        self.assertLess(b, top - 15.0)
        self.assertEqual(display_check.orientation_errors(plot, "closing +", "CPI"), [])

    def test_004_bad_messages_and_parameters(self):
        sink = gpuradar.rti_sink()
        sink._on_map(pmt.intern("not a map"))
        self.assertEqual(sink.counts()["bad_messages"], 1)
        for kwargs, name in (({"profile": "time"}, "profile"), ({"select": "min"}, "select"),
                             ({"at": float("nan")}, "at"), ({"history": 1}, "history"),
                             ({"channel": -1}, "channel"), ({"update_rate": 0}, "update_rate"),
                             ({"auto_scale": False, "zmin": 5, "zmax": 5}, "zmin")):
            with self.assertRaisesRegex(ValueError, name):
                gpuradar.rti_sink(**kwargs)


if __name__ == "__main__":
    gr_unittest.run(qa_rti_sink)
