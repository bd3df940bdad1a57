#!/usr/bin/env python3
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""QA for gpuradar.stripmap_source and gpuradar.sar_focus (CPU backend).

stripmap_source -> sar_focus -> vector sink: exactly the rows whole blocks yield, point
targets focused at the line and range sample their closest approach gives, the stripmap
tags in and out; bad parameters refused with ValueError naming them.
"""

import math

import numpy as np
import pmt
from gnuradio import blocks, gr, gr_unittest
from gnuradio import gpuradar

C = 299792458.0
# X band, 50 MHz chirp of 1 us at 60 MHz (2.5 m bins), 2 m antenna, 150 m/s at 200 Hz
# (0.75 m per pulse), 1 km altitude, slant ranges 2000 m .. 2637.5 m.
ACQ = dict(fc=9.6e9, bandwidth=50e6, pulse_width=1e-6, up_chirp=True, fs=60e6, prf=200.0,
           velocity=150.0, altitude=1000.0, near_range=2000.0, nrange=256, squint=0.0,
           antenna_length=2.0)
DR = C / (2 * ACQ["fs"])
DY = ACQ["velocity"] / ACQ["prf"]


def ground_x(r0):
    return math.sqrt(r0 ** 2 - ACQ["altitude"] ** 2)


class qa_sar_focus(gr_unittest.TestCase):
    def run_chain(self, targets, npulses, noise=0.05, **focus_args):
        """targets: [(slant range r0, along-track y, amplitude)] -> (image, tags, focus)."""
        src = gpuradar.stripmap_source(
            **ACQ, target_x=[ground_x(t[0]) for t in targets],
            target_y=[t[1] for t in targets], target_amplitude=[t[2] for t in targets],
            noise_sigma=noise, max_pulses=npulses, seed=5)
        focus = gpuradar.sar_focus(**ACQ, backend="cpu", **focus_args)
        snk = blocks.vector_sink_c(ACQ["nrange"])
        tb = gr.top_block()
        tb.connect(src, focus, snk)
        tb.run()
        img = np.array(snk.data(), np.complex64).reshape(-1, ACQ["nrange"])
        return img, snk.tags(), focus

    def test_001_source_stream_and_tag(self):
        src = gpuradar.stripmap_source(**ACQ, target_x=[ground_x(2300.0)], target_y=[20.0],
                                       noise_sigma=0.1, first_pulse_y=-4.0, max_pulses=130)
        snk = blocks.vector_sink_c(ACQ["nrange"])
        tb = gr.top_block()
        tb.connect(src, snk)
        tb.run()
        data = np.array(snk.data()).reshape(-1, ACQ["nrange"])
        self.assertEqual(data.shape[0], 130)
        self.assertEqual(src.pulses(), 130)
        tags = snk.tags()
        self.assertEqual(len(tags), 1)
        self.assertEqual(pmt.symbol_to_string(tags[0].key), "stripmap")
        d = pmt.to_python(tags[0].value)
        # every flat make() argument lands in its own field (ACQ's values are distinct,
        # so two swapped arguments show)
        for name, value in ACQ.items():
            self.assertEqual(d["r0" if name == "near_range" else name], value, name)
        self.assertEqual(d["y0"], -4.0)
        # the echo: the pulse nearest the target (y = 20 m) peaks after range
        # compression near the target's range sample
        nearest = int(round((20.0 + 4.0) / DY))
        t = np.arange(int(ACQ["pulse_width"] * ACQ["fs"])) / ACQ["fs"]
        t -= ACQ["pulse_width"] / 2
        k = ACQ["bandwidth"] / ACQ["pulse_width"]
        chirp = np.exp(1j * math.pi * k * t ** 2)
        mf = np.abs(np.correlate(data[nearest], chirp, "same"))
        expect = (2300.0 - ACQ["near_range"]) / DR
        self.assertLessEqual(abs(int(np.argmax(mf)) - expect), 2)

    def test_002_rows_and_targets_focus_where_they_should(self):
        f = gpuradar.sar_focus(**ACQ, backend="cpu")
        lead, stride = f.lead(), f.stride()
        overlap = lead + f.trail()
        npulses = overlap + 3 * stride + 17  # 17 pulses of an incomplete block
        targets = [(2100.0, 60.0, 1.0), (2400.0, (lead + stride) * DY, 0.7),
                   (2550.0, 330.0, 0.5)]
        img, tags, focus = self.run_chain(targets, npulses)
        self.assertEqual(img.shape[0], 3 * stride)
        self.assertEqual(focus.blocks(), 3)
        # sar_focus's acquisition (its flat make()) is the source's, field by field
        self.assertEqual(focus.mismatched_tags(), 0)
        mag = np.abs(img)
        for r0, y, _ in targets:
            row = y / DY - lead
            col = (r0 - ACQ["near_range"]) / DR
            win = mag[int(row) - 8:int(row) + 9, int(col) - 8:int(col) + 9]
            pr, pc = np.unravel_index(np.argmax(win), win.shape)
            self.assertLessEqual(abs(int(row) - 8 + pr - row), 1.0, (r0, y))
            self.assertLessEqual(abs(int(col) - 8 + pc - col), 1.0, (r0, y))
            # focused: the peak stands well above the noise floor of the image
            self.assertGreater(win.max(), 30 * np.median(mag))
        self.assertEqual(len(tags), 1)
        d = pmt.to_python(tags[0].value)
        self.assertEqual(d["pulse"], lead)
        self.assertAlmostEqual(d["y0"], lead * DY)

    def test_003_window_lowers_the_sidelobes(self):
        target = [(2300.0, 100.0, 1.0)]
        rows = {}
        for w in ("rectangular", "hamming"):
            img, _, f = self.run_chain(target, 500, noise=0.0, range_window=w)
            row = int(round(100.0 / DY)) - f.lead()
            cut = np.abs(img[row - 2:row + 3]).max(axis=0)
            rows[w] = cut / cut.max()
        col = int(round((2300.0 - ACQ["near_range"]) / DR))
        # the first range sidelobe region (1.5 .. 4 samples from the peak: about 0.9 to
        # 2.5 resolution cells at 1.2 samples per cell)
        side = lambda c: max(c[col + 2:col + 5].max(), c[col - 4:col - 1].max())
        self.assertLess(side(rows["hamming"]), side(rows["rectangular"]))

    def test_004_bad_parameters(self):
        def focus(**kw):
            args = dict(ACQ)
            args.update(kw)
            return gpuradar.sar_focus(**args)
        with self.assertRaisesRegex(ValueError, r"algorithm 'rda' is not implemented yet "
                                                r"\(allowed: csa\)"):
            focus(algorithm="rda")
        with self.assertRaisesRegex(ValueError, r"algorithm must be one of csa"):
            focus(algorithm="bp")
        f = gpuradar.sar_focus(**ACQ, backend="cpu")
        overlap = f.lead() + f.trail()
        with self.assertRaisesRegex(ValueError, rf"naz must be > {overlap} pulses"):
            focus(naz=overlap)
        with self.assertRaisesRegex(ValueError, "azimuth_window"):
            focus(azimuth_window="square")
        with self.assertRaisesRegex(ValueError, "squint"):
            focus(squint=0.5)
        with self.assertRaisesRegex(ValueError, "target_y"):
            gpuradar.stripmap_source(**ACQ, target_x=[1.0, 2.0], target_y=[1.0])
        with self.assertRaisesRegex(ValueError, "noise_sigma"):
            gpuradar.stripmap_source(**ACQ, target_x=[1.0], target_y=[1.0], noise_sigma=-1)
        with self.assertRaisesRegex(ValueError, "scene_nx"):
            gpuradar.stripmap_source(**ACQ, target_x=[], target_y=[],
                                     scene_reflectivity=[1.0] * 6, scene_nx=4)
        with self.assertRaisesRegex(ValueError, "scene_spacing"):
            gpuradar.stripmap_source(**ACQ, target_x=[], target_y=[],
                                     scene_reflectivity=[1.0] * 6, scene_nx=3,
                                     scene_spacing=0.0)
        with self.assertRaisesRegex(ValueError, r"scene_reflectivity\[2\]"):
            gpuradar.stripmap_source(**ACQ, target_x=[], target_y=[],
                                     scene_reflectivity=[1.0, 1.0, complex(0, math.nan)],
                                     scene_nx=3)

    def test_005_scene_focuses_where_its_cells_are(self):
        """A distributed scene of one bright cell among dim ones: the focused image's
        brightest pixel is the bright cell's closest approach (row and range sample); a
        swapped scene_x0 / scene_y0 or an ignored scene would put it elsewhere or
        nowhere."""
        refl = np.full((5, 7), 0.05, np.complex64)
        refl[3, 1] = 1.0  # row j = 3 (y), column i = 1 (x)
        x0, y0, spacing = ground_x(2300.0), 180.0, 2.0
        src = gpuradar.stripmap_source(
            **ACQ, target_x=[], target_y=[], noise_sigma=0.0, max_pulses=700,
            scene_reflectivity=refl.ravel().tolist(), scene_nx=7, scene_x0=x0,
            scene_y0=y0, scene_spacing=spacing)
        focus = gpuradar.sar_focus(**ACQ, backend="cpu")
        snk = blocks.vector_sink_c(ACQ["nrange"])
        tb = gr.top_block()
        tb.connect(src, focus, snk)
        tb.run()
        img = np.abs(np.array(snk.data()).reshape(-1, ACQ["nrange"]))
        self.assertGreater(img.size, 0)
        row, col = np.unravel_index(int(np.argmax(img)), img.shape)
        x, y = x0 + 1 * spacing, y0 + 3 * spacing
        want_col = (math.hypot(x, ACQ["altitude"]) - ACQ["near_range"]) / DR
        want_row = y / DY - focus.lead()
        self.assertLessEqual(abs(col - want_col), 1.0)
        self.assertLessEqual(abs(row - want_row), 1.0)


if __name__ == "__main__":
    gr_unittest.run(qa_sar_focus)
