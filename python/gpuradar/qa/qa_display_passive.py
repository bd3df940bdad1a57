#!/usr/bin/env python3
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""QA of the displays on a passive radar's bistatic maps and tracks, by the pixels they
render under a (virtual) X server: passive_scene_source -> cross_ambiguity (CPU) ->
range_doppler_sink shows the target at its bistatic range and velocity on axes of c / fs
and fs / N x c / fc per bin labelled bistatic; cfar_2d -> tracker -> track_sink draws the
confirmed track there, labelled bistatic; a monostatic frame after a bistatic one gets
its labels back."""

import time

import numpy as np
import pmt
from gnuradio import blocks, gr, gr_unittest
from PyQt5 import QtWidgets

from gnuradio import gpuradar
from gnuradio.gpuradar import (_display, display_check, display_range_doppler,
                               display_tracks, passive_sim)

APP = QtWidgets.QApplication.instance() or QtWidgets.QApplication(["qa_display_passive"])

C = passive_sim.SPEED_OF_LIGHT
FS, FC, N, M, K = 1e6, 100e6, 4096, 48, 6
DELAY, BIN, SNR_DB = 22, 4, -5.0
NCPI = 4
_SHOWN = []  # shown widgets stay referenced (see qa_display_sinks)


def pump(seconds, until=lambda: False):
    end = time.monotonic() + seconds
    while time.monotonic() < end and not until():
        APP.processEvents()
        time.sleep(0.005)
    APP.processEvents()


def show(widget, size=(700, 600)):
    _SHOWN.append(widget)
    widget.resize(*size)
    widget.show()
    pump(0.3)


def target():
    """(bistatic velocity m/s, bistatic range m) of the target: delay DELAY samples,
    Doppler bin BIN of an N-sample CPI."""
    return BIN * FS / N * C / FC, DELAY * C / FS


def run_chain():
    """(range_doppler_sink, track_sink) fed by the passive chain for NCPI CPIs."""
    v, r = target()
    src = gpuradar.passive_scene_source(
        fs=FS, fc=FC, illuminator="ofdm", ofdm_fft=256, ofdm_used=200, ofdm_cp=32,
        ref_snr_db=30.0, dpi_db=-300.0, ranges_m=[r], velocities_mps=[v],
        snr_db=[SNR_DB], truth_every=N, seed=5)
    caf = gpuradar.cross_ambiguity(FS, FC, N, M, K, backend="cpu", window="hann")
    cfar = gpuradar.cfar_2d(M, 2 * K + 1, guard_range=2, train_range=6, guard_doppler=1,
                            train_doppler=2, pfa=1e-6, local_max_only=True, backend="cpu")
    trk = gpuradar.tracker(9.21, 2, 3, 3, 0.5 * C / FS, 0.5 * FS / N * C / FC, 50.0,
                           N / FS)
    rd = gpuradar.range_doppler_sink("stream", M, 2 * K + 1, update_rate=50.0)
    tracks = gpuradar.track_sink(2 * M * C / FS, K * FS / N * C / FC, 20, update_rate=50.0)
    show(rd.qwidget())
    show(tracks.qwidget(), (900, 600))
    tb = gr.top_block()
    for port in (0, 1):
        tb.connect((src, port), blocks.head(gr.sizeof_gr_complex, NCPI * N), (caf, port))
    tb.connect(caf, rd)
    tb.connect(caf, cfar, blocks.null_sink(gr.sizeof_char * (2 * K + 1)))
    tb.msg_connect(cfar, "detections", rd, "detections")
    tb.msg_connect(cfar, "detections", trk, "detections")
    tb.msg_connect(trk, "tracks", tracks, "tracks")
    tb.run()
    deadline = time.monotonic() + 5.0
    while trk.scans() < NCPI and time.monotonic() < deadline:
        time.sleep(0.01)
    pump(2.0, lambda: rd.counts()["drawn"] >= 1 and tracks.counts()["drawn"] >= 1)
    pump(0.3)
    return rd, tracks, trk


class qa_display_passive(gr_unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        cls.rd, cls.tracks, cls.trk = run_chain()

    def test_001_map_bistatic_axes_and_target(self):
        plot = self.rd.qwidget()
        axes = plot.frame.axes
        self.assertTrue(plot.frame.bistatic)
        # one-way axes: c / fs per range bin, fs / N x c / fc per Doppler bin
        self.assertAlmostEqual(axes.dr_m, C / FS, places=6)
        self.assertAlmostEqual(axes.dv_mps, FS / N * C / FC, places=9)
        v, r = target()
        self.assertEqual(display_check.map_targets_errors(self.rd, [(v, r, SNR_DB)]), [])
        item = plot.plot.getPlotItem()
        self.assertEqual(item.getAxis("left").labelText,
                         display_range_doppler.BISTATIC_RANGE_LABEL)
        self.assertEqual(item.getAxis("bottom").labelText,
                         display_range_doppler.BISTATIC_VELOCITY_LABEL)
        # the CFAR's detection drawn on the target's cell
        marks = plot.detection_marks.getData()
        self.assertTrue(np.any((np.abs(marks[0] - v) < 0.5 * axes.dv_mps) &
                               (np.abs(marks[1] * 1e3 - r) < 0.5 * axes.dr_m)),
                        (marks, v, r))

    def test_002_track_at_the_bistatic_position_labelled(self):
        self.assertEqual(self.trk.bad_messages(), 0)
        w = self.tracks.qwidget()
        v, r = target()
        image = w.grab().toImage()
        green = display_tracks.COLORS["confirmed"]
        col, row = w.widget_point(v, r * _display.RANGE_SCALE)
        found = any(
            sum(abs(a - b) for a, b in zip((c.red(), c.green(), c.blue()), green)) < 60
            for c in (image.pixelColor(col + dc, row + dr)
                      for dc in range(-2, 3) for dr in range(-2, 3)))
        self.assertTrue(found, "no confirmed track drawn at the target's bistatic range "
                               "and velocity")
        col, row = w.widget_point(-v, r * _display.RANGE_SCALE)  # mirrored: nothing
        self.assertFalse(any(
            sum(abs(a - b) for a, b in zip((c.red(), c.green(), c.blue()), green)) < 60
            for c in (image.pixelColor(col + dc, row + dr)
                      for dc in range(-5, 6) for dr in range(-5, 6))))
        item = w.velocity_plane.widget.getPlotItem()
        self.assertEqual(item.getAxis("left").labelText, display_tracks.BISTATIC_RANGE_LABEL)
        self.assertEqual(item.getAxis("bottom").labelText,
                         display_tracks.BISTATIC_VELOCITY_LABEL)

    def test_003_monostatic_frames_get_their_labels_back(self):
        sink = gpuradar.track_sink(30e3, 150.0, 20, update_rate=50.0)
        show(sink.qwidget())
        for bistatic, want in ((True, display_tracks.BISTATIC_RANGE_LABEL),
                               (False, _display.RANGE_LABEL)):
            meta = {"cpi": 0, "time_s": 0.0, "ntracks": 0}
            if bistatic:
                meta["bistatic"] = True
            sink._on_tracks(pmt.cons(pmt.to_pmt(meta), pmt.make_vector(0, pmt.PMT_NIL)))
            drawn = sink.counts()["drawn"]
            pump(2.0, lambda: sink.counts()["drawn"] > drawn)
            label = sink.qwidget().velocity_plane.widget.getPlotItem().getAxis("left")
            self.assertEqual(label.labelText, want)


if __name__ == "__main__":
    gr_unittest.run(qa_display_passive)
