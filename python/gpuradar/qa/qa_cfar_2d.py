#!/usr/bin/env python3
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""QA for gpuradar.cfar_2d on the CPU backend: detections as plain dicts (bins, range_m,
velocity_mps, rx_time from the cpi tag), mask against a numpy fp64 CA-CFAR, bad input."""

import math
import os
import sys

import numpy as np
import pmt
from gnuradio import blocks, gr, gr_unittest
from gnuradio import gpuradar
from gnuradio.gpuradar import detections

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import log_lines  # noqa: E402

C = 299792458.0


def cpi_tag(offset, **fields):
    d = pmt.make_dict()
    for k, v in fields.items():
        if isinstance(v, bool):
            p = pmt.from_bool(v)
        elif isinstance(v, int):
            p = pmt.from_uint64(v)
        elif isinstance(v, tuple):
            p = pmt.make_tuple(pmt.from_uint64(v[0]), pmt.from_double(v[1]))
        else:
            p = pmt.from_double(v)
        d = pmt.dict_add(d, pmt.intern(k), p)
    return gr.tag_utils.python_to_tag((offset, pmt.intern("cpi"), d))


def ca_reference(x, gr_, tr, gd, td, pfa):
    """fp64 CA-CFAR of one map (nrange x ndoppler): range clipped, Doppler wrapped, with
    alpha recomputed for the cells present (as the block documents)."""
    nr, nd = x.shape
    mask = np.zeros_like(x, dtype=np.uint8)
    for r in range(nr):
        for d in range(nd):
            cells = []
            for dr in range(-(gr_ + tr), gr_ + tr + 1):
                rr = r + dr
                if rr < 0 or rr >= nr:
                    continue
                for dd in range(-(gd + td), gd + td + 1):
                    if abs(dr) <= gr_ and abs(dd) <= gd:
                        continue
                    cells.append(x[rr, (d + dd) % nd])
            n = len(cells)
            alpha = n * (pfa ** (-1.0 / n) - 1.0)
            mask[r, d] = x[r, d] > alpha * np.mean(cells)
    return mask


class qa_cfar_2d(gr_unittest.TestCase):
    def setUp(self):
        self.tb = gr.top_block()

    def tearDown(self):
        self.tb = None

    def run_block(self, blk, x, vlen, tags=()):
        src = blocks.vector_source_f(x.ravel().astype(np.float32).tolist(), False, vlen,
                                     list(tags))
        snk = blocks.vector_sink_b(vlen)
        dbg = blocks.message_debug()
        self.tb.connect(src, blk, snk)
        self.tb.msg_connect(blk, "detections", dbg, "store")
        self.tb.run()
        return np.array(snk.data(), dtype=np.uint8), dbg, snk

    def test_001_detections_are_plain_dicts_with_range_and_velocity(self):
        nrange, ndoppler = 48, 32
        rng = np.random.default_rng(1)
        x = rng.exponential(1.0, (2, nrange, ndoppler))
        targets = [(0, 20, 4), (0, 30, 17), (1, 12, 28)]
        for c, r, d in targets:
            x[c, r, d] = 1e4
        fs, prf, fc, r0 = 20e6, 5e3, 3e9, 750.0
        tags = [cpi_tag(i * nrange, index=40 + i, nrange=nrange, npulses=32,
                        ndoppler=ndoppler, fs=fs, prf=prf, fc=fc, r0=r0,
                        fftshift=(i == 0), rx_time=(1700000000, 0.5 + i))
                for i in range(2)]
        blk = gpuradar.cfar_2d(nrange, ndoppler, 1, 1, 5, 1, 2, 1e-6, "ca",
                               local_max_only=True, backend="cpu")
        mask, dbg, snk = self.run_block(blk, x, ndoppler, tags)
        self.assertEqual(dbg.num_messages(), 2)
        meta = detections.pdu_metadata(dbg.get_message(0))
        self.assertEqual(meta["cpi"], 40)
        self.assertEqual(meta["nonfinite"], 0)
        self.assertIs(meta["overflow"], False)
        self.assertEqual(meta["variant"], "ca")
        dets = detections.collect(dbg)
        self.assertEqual([(d["cpi"] - 40, d["range_bin"], d["doppler_bin"]) for d in dets],
                         targets)
        for d in dets:
            self.assertIsInstance(d, dict)
            self.assertIsInstance(d["range_bin"], int)
            self.assertAlmostEqual(d["power"], 1e4)
            self.assertAlmostEqual(d["snr_db"], 10 * math.log10(1e4 / d["noise"]))
            self.assertGreater(d["power"], d["threshold"])
            self.assertAlmostEqual(d["range_m"], r0 + d["range_bin"] * C / (2 * fs), 6)
            m = d["doppler_bin"]
            k = m - ndoppler // 2 if d["cpi"] == 40 else (m - ndoppler if m >= 16 else m)
            self.assertAlmostEqual(d["velocity_mps"], k * prf / ndoppler * C / (2 * fc), 9)
            self.assertEqual(d["rx_time"], (1700000000, 0.5 + d["cpi"] - 40))
        # The mask marks exactly the detections; the cpi tags pass through.
        self.assertEqual(int(mask.sum()), len(dets))
        out_tags = [gr.tag_to_python(t) for t in snk.tags()]
        self.assertEqual([t.offset for t in out_tags], [0, nrange])
        self.assertEqual([t.value["index"] for t in out_tags], [40, 41])

    def test_002_mask_matches_numpy_ca_reference(self):
        nrange, ndoppler, pfa = 30, 16, 1e-2
        rng = np.random.default_rng(2)
        x = rng.exponential(1.0, (nrange, ndoppler)).astype(np.float32)
        blk = gpuradar.cfar_2d(nrange, ndoppler, guard_range=1, train_range=3,
                               guard_doppler=1, train_doppler=2, pfa=pfa, variant="ca",
                               backend="cpu")
        mask, dbg, _ = self.run_block(blk, x, ndoppler)
        ref = ca_reference(x.astype(np.float64), 1, 3, 1, 2, pfa)
        got = mask.reshape(nrange, ndoppler)
        diff = np.argwhere(got != ref)
        self.assertEqual(len(diff), 0, diff[:5])
        self.assertGreater(int(ref.sum()), 0)
        self.assertEqual(len(detections.pdu_to_dicts(dbg.get_message(0))), int(ref.sum()))

    def test_003_nan_cells_never_detected_and_counted(self):
        nrange, ndoppler = 20, 16
        x = np.ones((nrange, ndoppler), dtype=np.float32)
        x[3, 3] = np.nan
        x[10, 0] = np.inf
        x[15, 8] = 1e6
        blk = gpuradar.cfar_2d(nrange, ndoppler, pfa=1e-3, backend="cpu")
        mask, dbg, _ = self.run_block(blk, x, ndoppler)
        mask = mask.reshape(nrange, ndoppler)
        self.assertEqual(mask[3, 3], 0)
        self.assertEqual(mask[10, 0], 0)
        self.assertEqual(mask[15, 8], 1)
        self.assertEqual(blk.nonfinite_cells(), 2)
        self.assertEqual(detections.pdu_metadata(dbg.get_message(0))["nonfinite"], 2)

    def test_003b_a_map_in_db_is_counted_and_warned_about_not_every_cpi(self):
        # 10 log10 of exponential noise: mostly negative values, as a dB map would be.
        # The CA threshold, alpha times a negative mean, lies below most cells: nearly
        # every cell used to be flagged, with only a max_detections warning per CPI.
        nrange, ndoppler, ncpi = 24, 16, 5
        code = f"""
import numpy as np
from gnuradio import blocks, gr, gpuradar
from gnuradio.gpuradar import detections
rng = np.random.default_rng(3)
power = rng.exponential(1.0, ({ncpi}, {nrange}, {ndoppler}))
for name, x in (("power", power), ("db", 10 * np.log10(power))):
    tb = gr.top_block()
    blk = gpuradar.cfar_2d({nrange}, {ndoppler}, pfa=1e-3, backend="cpu")
    src = blocks.vector_source_f(x.ravel().astype(np.float32).tolist(), False, {ndoppler})
    dbg = blocks.message_debug()
    tb.connect(src, blk, blocks.null_sink(gr.sizeof_char * {ndoppler}))
    tb.msg_connect(blk, "detections", dbg, "store")
    tb.run()
    metas = [detections.pdu_metadata(dbg.get_message(i))
             for i in range(dbg.num_messages())]
    result(name, *[m["negative_power"] for m in metas])
"""
        results, lines = log_lines.run(code)
        counts = {w[0]: [int(v) for v in w[1:]] for w in results}
        self.assertEqual(counts["power"], [0] * ncpi)
        self.assertEqual(len(counts["db"]), ncpi)
        self.assertTrue(all(c > 0 for c in counts["db"]), counts)
        warned = [line for line in lines if "not power" in line]
        self.assertEqual(len(warned), 1, lines)  # five CPIs, one line
        self.assertIn("cpi 0:", warned[0])
        self.assertIn("(1 such maps so far", warned[0])

    def test_004_bad_parameters_raise_value_error_naming_them(self):
        good = dict(nrange=40, ndoppler=16, channels=1, guard_range=1, train_range=5,
                    guard_doppler=1, train_doppler=1, pfa=1e-6, variant="ca", os_k=0,
                    range_edge="clip", doppler_edge="wrap", backend="cpu")
        gpuradar.cfar_2d(**good)
        cases = [("guard_range", -1, "guard_range"), ("train_doppler", -1, "train_doppler"),
                 ("pfa", 0.0, "pfa"), ("pfa", 1.0, "pfa"), ("variant", "xx", "variant"),
                 ("range_edge", "pad", "range_edge"), ("doppler_edge", "x", "doppler_edge"),
                 ("nrange", 0, "nrange"), ("ndoppler", 0, "ndoppler"),
                 ("channels", 0, "channels"), ("backend", "gpu", "backend"),
                 ("nrange", 12, "nrange")]  # 2 (1 + 5) + 1 = 13 > 12, clipped
        for key, value, name in cases:
            with self.assertRaisesRegex(ValueError, name, msg=f"{key}={value}"):
                gpuradar.cfar_2d(**dict(good, **{key: value}))
        with self.assertRaisesRegex(ValueError, "train_range \\+ train_doppler"):
            gpuradar.cfar_2d(**dict(good, train_range=0, train_doppler=0))
        n = 13 * 5 - 3 * 3  # training cells of the full window
        blk = gpuradar.cfar_2d(**dict(good, variant="os", os_k=n))
        self.assertEqual(blk.training_cells(), n)
        self.assertEqual(gpuradar.cfar_2d(**dict(good, variant="os")).os_k(), round(0.75 * n))
        with self.assertRaisesRegex(ValueError, "os_k"):
            gpuradar.cfar_2d(**dict(good, variant="os", os_k=n + 1))

    def test_005_pdu_helper_rejects_other_messages(self):
        with self.assertRaises(ValueError):
            detections.pdu_to_python(pmt.intern("hello"))

    def test_006_cluster_gives_one_detection_per_target_at_its_peak(self):
        """Gaussian blobs (several cells above threshold each) at fractional bins, one
        across the Doppler wrap: cluster=True lists one detection per blob at the
        interpolated peak; cluster=False lists every cell."""
        nrange, ndoppler = 64, 32
        fs, prf, fc = 20e6, 5e3, 3e9
        rng = np.random.default_rng(6)
        x = rng.exponential(1.0, (nrange, ndoppler))
        blobs = [(20.3, 5.6), (40.0, 31.7), (52.45, 16.0)]  # (range, Doppler) bins
        rr, dd = np.meshgrid(np.arange(nrange), np.arange(ndoppler), indexing="ij")
        for r0, d0 in blobs:
            ddist = (dd - d0 + ndoppler / 2) % ndoppler - ndoppler / 2  # Doppler wraps
            x += 1e5 * np.exp(-((rr - r0) ** 2 + ddist ** 2) / (2 * 0.8 ** 2))
        tag = cpi_tag(0, index=0, nrange=nrange, npulses=32, ndoppler=ndoppler, fs=fs,
                      prf=prf, fc=fc, fftshift=False)

        def run(cluster):
            self.tb = gr.top_block()
            blk = gpuradar.cfar_2d(nrange, ndoppler, 1, 2, 6, 2, 3, 1e-6, "ca",
                                   backend="cpu", cluster=cluster)
            mask, dbg, _ = self.run_block(blk, x, ndoppler, [tag])
            return int(mask.sum()), detections.pdu_to_python(dbg.get_message(0))

        cells, (meta, dets) = run(True)
        self.assertIs(meta["clustered"], True)
        self.assertEqual(meta["cells"], cells)
        self.assertEqual(meta["ndetections"], len(dets))
        self.assertEqual(len(dets), len(blobs))
        self.assertGreater(cells, 3 * len(blobs))  # the blobs did light several cells
        dets.sort(key=lambda d: d["range_bin_interp"])
        for d, (r0, d0) in zip(dets, blobs):
            self.assertAlmostEqual(d["range_bin_interp"], r0, delta=0.01)
            self.assertAlmostEqual(d["doppler_bin_interp"], d0, delta=0.01)
            self.assertGreater(d["cells"], 1)
            self.assertAlmostEqual(d["range_m"], d["range_bin_interp"] * C / (2 * fs), 6)
            k = d["doppler_bin_interp"]
            k = k - ndoppler if k >= ndoppler / 2 else k
            self.assertAlmostEqual(d["velocity_mps"], k * prf / ndoppler * C / (2 * fc), 6)
            self.assertAlmostEqual(d["snr_db"], 10 * math.log10(d["power"] / d["noise"]))
        self.assertEqual(sum(d["cells"] for d in dets), cells)

        cells_off, (meta_off, dets_off) = run(False)
        self.assertNotIn("clustered", meta_off)
        self.assertEqual(len(dets_off), cells_off)
        self.assertEqual(cells_off, cells)
        self.assertNotIn("range_bin_interp", dets_off[0])


if __name__ == "__main__":
    gr_unittest.run(qa_cfar_2d)
