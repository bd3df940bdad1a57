#!/usr/bin/env python3
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""QA of the display blocks (range_doppler_sink, sar_image_sink, detection_table) by the
pixels they render, under a (virtual) X server: targets from radar_scene_source ->
pulse_doppler_processor (CPU) and from a simulated SAR phase history -> backprojection
(CPU) must appear where the axes say, within a few dB of the peak, over a darker
background; a slow display must not slow a paced run."""

import threading
import time

import numpy as np
import pmt
from gnuradio import blocks, gr, gr_unittest
from PyQt5 import QtWidgets

from gnuradio import gpuradar
from gnuradio.gpuradar import display_check, display_geometry, sar_sim

APP = QtWidgets.QApplication.instance() or QtWidgets.QApplication(["qa_display_sinks"])

C = display_geometry.SPEED_OF_LIGHT
FS, FC, PRI, GATE, NRANGE, NPULSES, NFFT = 2e6, 10e9, 1000, 100, 512, 32, 32
BANDWIDTH, PULSE_WIDTH = 1e6, 10e-6
PRF = FS / PRI
DR = C / (2 * FS)
DV = PRF / NFFT * C / (2 * FC)
R0 = GATE * DR
# (range bin, Doppler bins from zero, SNR dB): near and closing, far and receding
TARGETS = [(100, 6, 0.0), (300, -10, -3.0)]


def pump(seconds, until=lambda: False):
    """Runs the Qt event loop (timers, painting) for up to `seconds`."""
    end = time.monotonic() + seconds
    while time.monotonic() < end and not until():
        APP.processEvents()
        time.sleep(0.005)
    APP.processEvents()


#: Every widget shown stays referenced until the process ends: a widget (and its block)
#: collected by Python's garbage collector while Qt paints (the collector runs inside
#: pyqtgraph's paint code too) is deleted mid-paint and crashes the process.
_SHOWN = []


def show(widget):
    _SHOWN.append(widget)
    widget.resize(700, 600)
    widget.show()
    pump(0.3)


def target_points(targets=TARGETS):
    """(velocity m/s, range m) of each target's cell centre."""
    return [(m * DV, R0 + k * DR) for k, m, _ in targets]


def shown_targets(targets=TARGETS):
    """(velocity m/s, range m, SNR dB) of each target, as display_check takes them."""
    return [(v, r, snr) for (v, r), (_, _, snr) in zip(target_points(targets), targets)]


def scene(targets=TARGETS, paced=False):
    ranges = [R0 + k * DR + 1.0 for k, _, _ in targets]
    return gpuradar.radar_scene_source(FS, FC, PRF, BANDWIDTH, PULSE_WIDTH, [], ranges,
                                       [m * DV for _, m, _ in targets],
                                       [s for _, _, s in targets], "snr_db", paced=paced,
                                       seed=3)


def processor(db=False, tap_every=0):
    return gpuradar.pulse_doppler_processor(
        NRANGE, NPULSES, NFFT, 1, "lfm", [], BANDWIDTH, PULSE_WIDTH, FS, True, "taylor", 4,
        35.0, 6.0, True, "auto", "none", "hann", 4, 35.0, 6.0, True, "square_law", db, "cpu",
        tap_every)


def cfar():
    return gpuradar.cfar_2d(NRANGE, NFFT, 1, 2, 8, 2, 2, 1e-6, "ca", 0, "clip", "wrap", True,
                            4096, "cpu")


def map_message(values, cpi, channels=1, db=False, fftshift=True):
    """A `map` message as pulse_doppler_processor's tap publishes it."""
    meta = pmt.make_dict()
    for key, value in (("cpi", pmt.from_uint64(cpi)), ("nrange", pmt.from_uint64(NRANGE)),
                       ("ndoppler", pmt.from_uint64(NFFT)),
                       ("channels", pmt.from_uint64(channels)), ("fs", pmt.from_double(FS)),
                       ("prf", pmt.from_double(PRF)), ("fc", pmt.from_double(FC)),
                       ("fftshift", pmt.from_bool(fftshift)), ("db", pmt.from_bool(db)),
                       ("envelope", pmt.intern("square_law")),
                       ("rx_time", pmt.from_double(cpi * NPULSES / PRF)),
                       ("r0_m", pmt.from_double(R0))):
        meta = pmt.dict_add(meta, pmt.intern(key), value)
    return pmt.cons(meta, pmt.init_f32vector(values.size, values.ravel().tolist()))


def processed_maps(ncpi=2):
    """(maps (ncpi, NRANGE, NFFT) power, detections PDUs) of the scene on the CPU."""
    tb = gr.top_block()
    src, proc, detector = scene(), processor(), cfar()
    framer = gpuradar.pulse_framer(PRI, GATE, NRANGE, NPULSES, FS, FC, "rx_time")
    snk, dets, truth = blocks.vector_sink_f(NFFT), blocks.message_debug(), blocks.message_debug()
    tb.connect(src, blocks.head(gr.sizeof_gr_complex, (ncpi * NPULSES + 1) * PRI), framer,
               proc, snk)
    tb.connect(proc, detector, blocks.null_sink(NFFT))
    tb.msg_connect(detector, "detections", dets, "store")
    tb.msg_connect(src, "truth", truth, "store")
    tb.run()
    maps = np.array(snk.data(), np.float32).reshape(-1, NRANGE, NFFT)
    PROCESSED["truth"] = [truth.get_message(i) for i in range(truth.num_messages())]
    return maps, [dets.get_message(i) for i in range(dets.num_messages())]


#: side results of the last processed_maps() run
PROCESSED = {}


class qa_range_doppler_sink(gr_unittest.TestCase):

    def check_targets_shown(self, sink, targets=TARGETS):
        self.assertEqual(display_check.map_targets_errors(sink, shown_targets(targets)), [])
        # Orientation as labelled: near range lower on the screen, closing velocity right
        # of zero (and the near target really is there: checked above).
        plot = sink.qwidget()
        (v_near, r_near), (v_far, r_far) = target_points(targets)[:2]
        self.assertGreater(v_near, 0.0)
        self.assertGreater(plot.widget_point(v_near, r_near)[1],
                           plot.widget_point(v_far, r_far)[1])
        self.assertGreater(plot.widget_point(v_near, r_near)[0],
                           plot.widget_point(0.0, r_near)[0])

    def test_001_map_message_targets_where_the_axes_say(self):
        maps, pdus = processed_maps()
        sink = gpuradar.range_doppler_sink("message", update_rate=50.0)
        show(sink.qwidget())
        for pdu in pdus:
            sink._on_detections(pdu)
        sink._on_map(map_message(maps[1], 1))
        pump(2.0, lambda: sink.counts()["drawn"] >= 1)
        self.assertEqual(sink.counts()["drawn"], 1)
        self.check_targets_shown(sink)
        status = sink.qwidget().status.text()
        self.assertIn("CPI 1", status)
        self.assertIn(f"t = {NPULSES / PRF:.6f} s", status)
        # The CFAR found both targets; they are drawn at their range and velocity.
        marks = sink.qwidget().detection_marks.getData()  # drawn on the km axis
        for v, r in target_points():
            self.assertTrue(np.any((np.abs(marks[0] - v) < 1.5 * DV) &
                                   (np.abs(marks[1] * 1e3 - r) < 1.5 * DR)))
        self.assertEqual(sink.qwidget().truth_marks.getData()[0].size, 0)

    def test_007_truth_overlay(self):
        maps, _ = processed_maps(1)
        sink = gpuradar.range_doppler_sink("message", update_rate=50.0)
        show(sink.qwidget())
        self.assertEqual(len(PROCESSED["truth"]), len(TARGETS))
        for msg in PROCESSED["truth"]:
            sink._on_truth(msg)
        sink._on_truth(pmt.intern("not a truth dict"))
        sink._on_map(map_message(maps[0], 0))
        pump(2.0, lambda: sink.counts()["drawn"] >= 1)
        xs, ys = sink.qwidget().truth_marks.getData()
        ys = ys * 1e3  # drawn on the km axis
        for v, r in target_points():  # the scene's targets lie 1 m beyond the bin centre
            self.assertTrue(np.any((np.abs(xs - v) < 1e-6) & (np.abs(ys - r - 1.0) < 1e-3)),
                            f"no truth mark at {v} m/s, {r} m")
        self.assertEqual(sink.counts()["bad_messages"], 1)

    def test_008_processor_tap_to_display_one_chain(self):
        """scene -> framer -> processor (tap every 2nd CPI) -> CFAR; the tap and the
        CFAR's detections feed the display: even CPIs arrive, the one drawn shows the
        targets where the axes say, circled by the CFAR's detections."""
        tb = gr.top_block()
        # Paced and endless: a message posted as a finite flowgraph ends may never be
        # handled (GNU Radio stops message-only blocks with it); this one is stopped here.
        src, proc, detector = scene(paced=True), processor(tap_every=2), cfar()
        sink = gpuradar.range_doppler_sink("message", update_rate=50.0)
        show(sink.qwidget())
        framer = gpuradar.pulse_framer(PRI, GATE, NRANGE, NPULSES, FS, FC, "rx_time")
        tb.connect(src, framer, proc, detector, blocks.null_sink(NFFT))
        tb.msg_connect(proc, "map", sink, "map")
        tb.msg_connect(detector, "detections", sink, "detections")
        tb.msg_connect(src, "truth", sink, "truth")
        tb.start()
        pump(10.0, lambda: sink.counts()["received"] >= 2 and sink.qwidget().frame is not None)
        tb.stop()
        tb.wait()
        self.assertGreaterEqual(sink.counts()["received"], 2)
        self.assertEqual(sink.qwidget().frame.cpi % 2, 0)  # CPIs 0, 2, 4, ...
        sink.qwidget()._draw()  # the CFAR's PDU of this CPI may have come after the map
        self.check_targets_shown(sink)
        marks = sink.qwidget().detection_marks.getData()  # drawn on the km axis
        for v, r in target_points():
            self.assertTrue(np.any((np.abs(marks[0] - v) < 1.5 * DV) &
                                   (np.abs(marks[1] * 1e3 - r) < 1.5 * DR)))
        self.assertEqual(sink.qwidget().truth_marks.getData()[0].size, len(TARGETS))

    def test_002_stream_input_reads_axes_from_the_cpi_tag(self):
        tb = gr.top_block()
        sink = gpuradar.range_doppler_sink("stream", NRANGE, NFFT, db=True, update_rate=50.0)
        show(sink.qwidget())
        framer = gpuradar.pulse_framer(PRI, GATE, NRANGE, NPULSES, FS, FC, "rx_time")
        tb.connect(scene(), blocks.head(gr.sizeof_gr_complex, (2 * NPULSES + 1) * PRI),
                   framer, processor(db=True), sink)
        tb.run()
        pump(2.0, lambda: sink.counts()["drawn"] >= 1)
        self.assertEqual(sink.counts()["received"], 2)
        self.check_targets_shown(sink)
        self.assertIn("CPI 1", sink.qwidget().status.text())

    def test_003_channel_selector(self):
        maps, _ = processed_maps(1)
        other = np.roll(maps[0], 50, axis=0)  # channel 1: the targets 50 bins further
        sink = gpuradar.range_doppler_sink("message", channels=2, channel=0, update_rate=50.0)
        show(sink.qwidget())
        both = np.stack([maps[0], other], axis=1)  # the processor's layout: range, channel
        sink._on_map(map_message(both, 0, channels=2))
        pump(2.0, lambda: sink.counts()["drawn"] >= 1)
        self.check_targets_shown(sink)
        sink.set_channel(1)
        pump(0.3)
        sink.qwidget()._draw()
        moved = [(k + 50, m, s) for k, m, s in TARGETS]
        self.check_targets_shown(sink, moved)
        with self.assertRaisesRegex(ValueError, r"channel must be in \[0, 1\]"):
            sink.set_channel(2)
        self.assertEqual(sink.channel(), 1)
        with self.assertRaisesRegex(ValueError, r"channel must be in \[0, 0\]"):
            gpuradar.range_doppler_sink("message", channels=1, channel=1)
        # A map with fewer channels than the one shown: said so, the last picture kept.
        sink._on_map(map_message(maps[0], 1, channels=1))
        pump(2.0, lambda: sink.counts()["drawn"] >= 2)
        self.assertIn("channel 1 does not exist: the map has 1 channel",
                      sink.qwidget().status.text())
        self.check_targets_shown(sink, moved)

    def test_004_fixed_levels_and_bad_parameters(self):
        maps, _ = processed_maps(1)
        sink = gpuradar.range_doppler_sink("message", auto_scale=False, zmin=-10.0,
                                           zmax=70.0, update_rate=50.0)
        show(sink.qwidget())
        sink._on_map(map_message(maps[0], 0))
        pump(2.0, lambda: sink.counts()["drawn"] >= 1)
        self.assertEqual(sink.qwidget().levels(), (-10.0, 70.0))
        with self.assertRaisesRegex(ValueError, "zmin must be < zmax"):
            sink.set_levels(5.0, 5.0)
        self.assertEqual(sink._zmin, -10.0)
        for kwargs, name in ((dict(input="pdu"), "input"), (dict(nrange=0), "nrange"),
                             (dict(envelope="cubic"), "envelope"),
                             (dict(update_rate=0.0), "update_rate"),
                             (dict(dynamic_range=-1.0), "dynamic_range"),
                             (dict(auto_scale=False, zmin=1.0, zmax=0.0), "zmin")):
            with self.assertRaisesRegex(ValueError, name):
                gpuradar.range_doppler_sink(**kwargs)

    def test_005_malformed_map_is_counted_not_fatal(self):
        sink = gpuradar.range_doppler_sink("message", update_rate=50.0)
        meta = pmt.dict_add(pmt.make_dict(), pmt.intern("cpi"), pmt.from_uint64(0))
        sink._on_map(pmt.cons(meta, pmt.init_f32vector(3, [1.0, 2.0, 3.0])))
        pump(0.5, lambda: sink.counts()["bad_messages"] >= 1)
        self.assertEqual(sink.counts()["bad_messages"], 1)
        self.assertIn("lacks the field", sink.qwidget().status.text())

    def test_006_slow_display_never_slows_a_paced_run(self):
        """A display drawing 2 frames/s on a paced run of 31 CPIs in real time: the
        processor still produces as many CPIs as without a display, in real time; the
        display drops frames and counts them."""
        nsamples = 31 * NPULSES * PRI
        baseline = self.processed_cpis(nsamples, paced=False, display=None)
        # the same paced run without a display, on this machine as loaded as it is now
        t0 = time.monotonic()
        self.processed_cpis(nsamples, paced=True, display=None)
        paced_alone = time.monotonic() - t0
        sink = gpuradar.range_doppler_sink("message", update_rate=2.0)
        show(sink.qwidget())
        t0 = time.monotonic()
        self.assertEqual(self.processed_cpis(nsamples, paced=True, display=sink), baseline)
        elapsed = time.monotonic() - t0
        pump(0.6)
        c = sink.counts()
        self.assertGreaterEqual(baseline, 30)
        # every map reached the display (the last ones may still be queued at the end)
        self.assertGreaterEqual(c["received"], baseline - 2)
        # kept pace with the source: no slower than the paced run without a display
        self.assertLess(elapsed, max(paced_alone, nsamples / FS) + 0.5)
        self.assertLessEqual(c["drawn"], 2 * elapsed + 2)
        self.assertGreater(c["dropped"], baseline // 2)
        self.assertLessEqual(c["received"] - c["drawn"] - c["dropped"], 1)

    def processed_cpis(self, nsamples, paced, display):
        """CPIs out of the processor for nsamples of the scene (Qt events served)."""
        tb = gr.top_block()
        framer = gpuradar.pulse_framer(PRI, GATE, NRANGE, NPULSES, FS, FC, "rx_time")
        proc, counter = processor(tap_every=1), blocks.vector_sink_f(NFFT)
        tb.connect(scene(paced=paced), blocks.head(gr.sizeof_gr_complex, nsamples), framer,
                   proc, counter)
        if display is not None:  # every CPI's map to the display
            tb.msg_connect(proc, "map", display, "map")
        tb.start()
        done = threading.Event()
        threading.Thread(target=lambda: (tb.wait(), done.set()), daemon=True).start()
        pump(nsamples / FS + 5.0, done.is_set)
        tb.wait()
        return len(counter.data()) // (NRANGE * NFFT)


    def test_009_unshifted_doppler_drawn_in_velocity_order(self):
        maps, _ = processed_maps(1)
        unshifted = np.fft.ifftshift(maps[0], axes=1)  # zero Doppler at bin 0
        sink = gpuradar.range_doppler_sink("message", update_rate=50.0)
        show(sink.qwidget())
        sink._on_map(map_message(unshifted, 0, fftshift=False))
        pump(2.0, lambda: sink.counts()["drawn"] >= 1)
        self.check_targets_shown(sink)


class qa_display_geometry(gr_unittest.TestCase):

    def test_001_max_pool_keeps_one_bin_peaks_and_the_extent(self):
        image = np.zeros((512, 4), np.float32)
        image[301, 2] = 7.0
        pooled, group = display_geometry.max_pool_rows(image, 400)
        self.assertEqual((pooled.shape, group), ((256, 4), 2))  # never more rows than 400
        self.assertEqual(pooled[150, 2], 7.0)
        axes = display_geometry.MapAxes(100.0, 10.0, 512, 0.5, 4)
        left, right, bottom, top = axes.extent(pooled.shape[0], group)
        self.assertEqual((left, right), (-1.25, 0.75))  # columns at -1, -0.5, 0, 0.5
        self.assertEqual((bottom, top), (95.0, 95.0 + 512 * 10.0))
        self.assertEqual(display_geometry.max_pool_rows(image, 512)[1], 1)

    def test_002_doppler_order_and_db(self):
        order = display_geometry.doppler_display_order(8, False)
        self.assertEqual(list(order), [4, 5, 6, 7, 0, 1, 2, 3])  # -4 .. 3 bins
        self.assertEqual(list(display_geometry.doppler_display_order(8, True)), list(range(8)))
        self.assertAlmostEqual(float(display_geometry.to_db([100.0])[0]), 20.0, places=5)
        self.assertAlmostEqual(float(display_geometry.to_db([100.0], "linear")[0]), 40.0,
                               places=5)
        self.assertEqual(float(display_geometry.to_db([3.0], db=True)[0]), 3.0)
        with self.assertRaisesRegex(ValueError, "envelope"):
            display_geometry.to_db([1.0], "cubic")


class qa_sar_image_sink(gr_unittest.TestCase):

    def test_001_targets_at_their_east_north_position(self):
        history = sar_sim.scenario("spotlight", npulses=128, nbins=256, image_size=30.0)
        g = history.grid
        tb = gr.top_block()
        pulses = blocks.vector_source_c(history.pulses.ravel().tolist(), False, history.nbins)
        geo = gpuradar_geometry_source(history.geometry)
        bp = gpuradar.backprojection(history.nbins, g.nx, g.ny, g.x0, g.y0, g.dx, g.dy, g.z,
                                     history.npulses, "restart", "fast", [], "cpu")
        truth = [{"target": i, "x_m": t.position[0], "y_m": t.position[1]}
                 for i, t in enumerate(history.targets)]
        sink = gpuradar.sar_image_sink(g.nx, g.ny, g.x0, g.y0, g.dx, g.dy, 40.0, 50.0,
                                       "SAR", truth)
        show(sink.qwidget())
        tb.connect(pulses, (bp, 0))
        tb.connect(geo, (bp, 1))
        tb.connect(bp, sink)
        tb.run()
        pump(2.0, lambda: sink.counts()["drawn"] >= 1)
        self.assertEqual(sink.counts()["received"], 1)
        plot = sink.qwidget()
        self.assertEqual(plot.levels(), (-40.0, 0.0))
        # Both ends of the colour scale labelled (0 dB, the peak, was missing), the
        # labels drawn even where they reach past the bar's ends; axes dark.
        labels = plot.bar_labels()
        self.assertEqual((labels[0], labels[-1]), ("-40", "0"))
        self.assertFalse(plot.bar.axis.style["hideOverlappingLabels"])
        self.assertEqual(display_check.axis_colour_errors(plot), [])
        targets = [(t.position[0], t.position[1], 20 * np.log10(abs(t.amplitude)))
                   for t in history.targets]
        self.assertEqual(display_check.image_targets_errors(sink, targets, 3.0), [])
        # North up, east right: the northern target higher, the eastern one further right.
        pts = [t.position[:2] for t in history.targets]
        north, south = max(pts, key=lambda p: p[1]), min(pts, key=lambda p: p[1])
        self.assertLess(plot.widget_point(*north)[1], plot.widget_point(*south)[1])
        east, west = max(pts, key=lambda p: p[0]), min(pts, key=lambda p: p[0])
        self.assertGreater(plot.widget_point(*east)[0], plot.widget_point(*west)[0])
        # The truth squares sit on the targets (where the image peaks, checked above).
        xs, ys = sink.truth_marks.getData()
        self.assertEqual(sorted(zip(xs.tolist(), ys.tolist())), sorted(map(tuple, pts)))
        sink.set_truth([(1.0, 2.0)])
        self.assertEqual(sink.truth_points(), [(1.0, 2.0)])
        sink.set_truth([])
        self.assertEqual(len(sink.truth_marks.getData()[0]), 0)

    def test_002_bad_parameters(self):
        for args, name in (((0, 10), "nx"), ((10, 10, 0.0, 0.0, -1.0), "dx"),
                           ((10, 10, float("nan")), "x0"),
                           ((10, 10, 0.0, 0.0, 1.0, 1.0, 0.0), "dynamic_range"),
                           ((10, 10, 0.0, 0.0, 1.0, 1.0, 50.0, 5.0, "t", [{"x_m": 1.0}]),
                            "truth"),
                           ((10, 10, 0.0, 0.0, 1.0, 1.0, 50.0, 5.0, "t",
                             [(float("inf"), 0.0)]), "truth")):
            with self.assertRaisesRegex(ValueError, name):
                gpuradar.sar_image_sink(*args)


def gpuradar_geometry_source(geometry):
    """A stream of 6-double geometry items (the backprojection's input 1)."""
    class _geometry(gr.sync_block):
        def __init__(self, rows):
            gr.sync_block.__init__(self, "geometry", None, [(np.float64, 6)])
            self.rows, self.next = rows, 0

        def work(self, input_items, output_items):
            n = min(len(output_items[0]), len(self.rows) - self.next)
            if n == 0:
                return -1
            output_items[0][:n] = self.rows[self.next:self.next + n]
            self.next += n
            return n
    return _geometry(np.ascontiguousarray(geometry, np.float64))


class qa_detection_table(gr_unittest.TestCase):

    def test_001_rows_of_the_latest_cpi_strongest_first(self):
        _, pdus = processed_maps(2)
        table = gpuradar.detection_table(4, False, 50.0)
        show(table.qwidget())
        for pdu in pdus:
            table._on_detections(pdu)
        pump(1.0, lambda: table.counts()["drawn"] >= 1)
        w = table.qwidget()
        self.assertIn("CPI 1", w.status.text())
        ranges = [float(w.table.item(r, 0).text()) * 1e3  # km
                  for r in range(w.table.rowCount())]
        snrs = [float(w.table.item(r, 2).text()) for r in range(w.table.rowCount())]
        self.assertEqual(snrs, sorted(snrs, reverse=True))
        self.assertLessEqual(len(ranges), 4)
        for _, r in target_points():
            self.assertTrue(any(abs(x - r) < 1.5 * DR for x in ranges), f"{r} m missing")
        grabbed = w.grab()
        self.assertGreater(grabbed.width(), 100)

    def test_002_print_every_cpi_publishes_a_summary(self):
        _, pdus = processed_maps(1)
        tb = gr.top_block()
        table, summary = gpuradar.detection_table(2, True, 50.0), blocks.message_debug()
        tb.msg_connect(table, "summary", summary, "store")
        tb.start()
        try:
            table.to_basic_block()._post(pmt.intern("detections"), pdus[0])
            pump(2.0, lambda: summary.num_messages() >= 1)
        finally:
            tb.stop()
            tb.wait()
        line = pmt.symbol_to_string(summary.get_message(0))
        self.assertRegex(line, r"^CPI 0: \d+ detections: ")
        self.assertLessEqual(line.count(" dB"), 2)

    def test_003_bad_parameters(self):
        with self.assertRaisesRegex(ValueError, "max_rows"):
            gpuradar.detection_table(0)
        with self.assertRaisesRegex(ValueError, "update_rate"):
            gpuradar.detection_table(4, False, 0.0)


if __name__ == "__main__":
    gr_unittest.run(qa_range_doppler_sink)  # unittest.main: every class here
