#!/usr/bin/env python3
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""QA for gpuradar.corner_turn on the CPU backend, against a numpy transpose."""

import numpy as np
import pmt
from gnuradio import blocks, gr, gr_unittest
from gnuradio import gpuradar


def cpi_tag(offset, index, npulses, nrange):
    d = pmt.make_dict()
    for k, v in (("index", index), ("npulses", npulses), ("nrange", nrange)):
        d = pmt.dict_add(d, pmt.intern(k), pmt.from_uint64(v))
    return gr.tag_utils.python_to_tag((offset, pmt.intern("cpi"), d))


class qa_corner_turn(gr_unittest.TestCase):
    def setUp(self):
        self.tb = gr.top_block()

    def tearDown(self):
        self.tb = None

    def test_001_transpose_per_channel_with_tags(self):
        npulses, nrange, channels, ncpi = 6, 33, 2, 3
        rng = np.random.default_rng(3)
        x = (rng.standard_normal((ncpi, npulses, channels, nrange)) +
             1j * rng.standard_normal((ncpi, npulses, channels, nrange))).astype(np.complex64)
        tags = [cpi_tag(i * npulses, 10 + i, npulses, nrange) for i in range(ncpi)]
        src = blocks.vector_source_c(x.ravel().tolist(), False, channels * nrange, tags)
        ct = gpuradar.corner_turn(npulses, nrange, channels, "cpu")
        snk = blocks.vector_sink_c(channels * npulses)
        self.tb.connect(src, ct, snk)
        self.tb.run()
        y = np.array(snk.data()).reshape(ncpi, nrange, channels, npulses)
        np.testing.assert_array_equal(y, x.transpose(0, 3, 2, 1))
        out_tags = [gr.tag_to_python(t) for t in snk.tags()]
        self.assertEqual([t.offset for t in out_tags], [i * nrange for i in range(ncpi)])
        self.assertEqual([t.value["index"] for t in out_tags], [10, 11, 12])
        self.assertEqual(ct.dropped_cpis(), 0)

    def test_002_bad_parameters_raise_naming_them(self):
        for args, name in (((0, 4, 1), "npulses"), ((4, 0, 1), "nrange"),
                           ((4, 4, 0), "channels")):
            with self.assertRaisesRegex(ValueError, name):
                gpuradar.corner_turn(*args, "cpu")


if __name__ == "__main__":
    gr_unittest.run(qa_corner_turn)
