#!/usr/bin/env python3
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""QA for gpuradar.cfar_1d on the CPU backend: targets on range lines reported as plain
dicts, mask against a numpy fp64 CA reference, threshold output, bad input."""

import numpy as np
import pmt
from gnuradio import blocks, gr, gr_unittest
from gnuradio import gpuradar
from gnuradio.gpuradar import detections

C = 299792458.0


def ca_1d_reference(line, guard, train, pfa):
    """fp64 CA-CFAR on one line, clipped edges, alpha for the cells present."""
    n = len(line)
    mask = np.zeros(n, dtype=np.uint8)
    thr = np.zeros(n)
    for i in range(n):
        idx = [j for j in range(i - guard - train, i + guard + train + 1)
               if 0 <= j < n and abs(j - i) > guard]
        m = len(idx)
        alpha = m * (pfa ** (-1.0 / m) - 1.0)
        thr[i] = alpha * np.mean(line[idx])
        mask[i] = line[i] > thr[i]
    return mask, thr


class qa_cfar_1d(gr_unittest.TestCase):
    def setUp(self):
        self.tb = gr.top_block()

    def tearDown(self):
        self.tb = None

    def test_001_targets_and_reference_mask(self):
        nrange, nitems, guard, train, pfa = 200, 6, 2, 10, 1e-3
        rng = np.random.default_rng(5)
        x = rng.exponential(1.0, (nitems, nrange)).astype(np.float32)
        x[2, 77] = 1e5
        x[5, 0] = 1e5
        d = pmt.make_dict()
        for k, v in (("index", 9), ("nrange", nrange)):
            d = pmt.dict_add(d, pmt.intern(k), pmt.from_uint64(v))
        d = pmt.dict_add(d, pmt.intern("fs"), pmt.from_double(1e6))
        tag = gr.tag_utils.python_to_tag((0, pmt.intern("cpi"), d))
        src = blocks.vector_source_f(x.ravel().tolist(), False, nrange, [tag])
        blk = gpuradar.cfar_1d(nrange, guard=guard, train=train, pfa=pfa, variant="ca",
                               items_per_cpi=3, backend="cpu")
        mask_snk = blocks.vector_sink_b(nrange)
        thr_snk = blocks.vector_sink_f(nrange)
        dbg = blocks.message_debug()
        self.tb.connect(src, blk, mask_snk)
        self.tb.connect((blk, 1), thr_snk)
        self.tb.msg_connect(blk, "detections", dbg, "store")
        self.tb.run()
        mask = np.array(mask_snk.data()).reshape(nitems, nrange)
        thr = np.array(thr_snk.data()).reshape(nitems, nrange)
        for i in range(nitems):
            ref_mask, ref_thr = ca_1d_reference(x[i].astype(np.float64), guard, train, pfa)
            np.testing.assert_allclose(thr[i], ref_thr, rtol=1e-5)
            ok = (mask[i] == ref_mask) | (np.abs(x[i] - ref_thr) <= 1e-5 * ref_thr)
            self.assertTrue(ok.all(), np.argwhere(~ok))
        self.assertEqual(dbg.num_messages(), 2)
        dets = detections.collect(dbg)
        self.assertEqual(len(dets), int(mask.sum()))
        found = {(d["item"], d["range_bin"]) for d in dets}
        self.assertIn((2, 77), found)
        self.assertIn((5, 0), found)
        for d in dets:
            self.assertEqual(d["cpi"], 9)
            self.assertEqual(d["doppler_bin"], 0)
            self.assertAlmostEqual(d["range_m"], d["range_bin"] * C / 2e6, 6)
            self.assertNotIn("velocity_mps", d)
        self.assertEqual([detections.pdu_metadata(dbg.get_message(i))["first_item"]
                          for i in range(2)], [0, 3])

    def test_002_bad_parameters_raise_value_error_naming_them(self):
        good = dict(nrange=64, channels=1, guard=1, train=8, pfa=1e-4, variant="ca",
                    os_k=0, edge="clip", backend="cpu")
        gpuradar.cfar_1d(**good)
        for key, value, name in (("guard", -1, "guard"), ("train", 0, "train"),
                                 ("pfa", 0.0, "pfa"), ("pfa", 2.0, "pfa"),
                                 ("variant", "cfar", "variant"), ("edge", "x", "edge"),
                                 ("nrange", 18, "nrange"), ("items_per_cpi", 0, "items_per_cpi"),
                                 ("max_detections", 0, "max_detections")):
            with self.assertRaisesRegex(ValueError, name, msg=f"{key}={value}"):
                gpuradar.cfar_1d(**dict(good, **{key: value}))
        gpuradar.cfar_1d(**dict(good, nrange=19))  # 2 (1 + 8) + 1 = 19 fits
        self.assertEqual(gpuradar.cfar_1d(**dict(good, variant="os", os_k=16)).os_k(), 16)
        with self.assertRaisesRegex(ValueError, "os_k"):
            gpuradar.cfar_1d(**dict(good, variant="os", os_k=17))


if __name__ == "__main__":
    gr_unittest.run(qa_cfar_1d)
