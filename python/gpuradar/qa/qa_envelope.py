#!/usr/bin/env python3
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""QA for gpuradar.envelope on the CPU backend, against numpy in float64."""

import numpy as np
from gnuradio import blocks, gr, gr_unittest
from gnuradio import gpuradar


def random_complex(n, seed):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(np.complex64)


class qa_envelope(gr_unittest.TestCase):
    def setUp(self):
        self.tb = gr.top_block()

    def tearDown(self):
        self.tb = None

    def run_envelope(self, x, vlen, mode, db):
        src = blocks.vector_source_c(x.tolist(), False, vlen)
        env = gpuradar.envelope(vlen, mode, db, "cpu")
        snk = blocks.vector_sink_f(vlen)
        self.tb.connect(src, env, snk)
        self.tb.run()
        self.assertEqual(env.backend(), "cpu")
        return np.array(snk.data())

    def test_001_all_modes_match_numpy(self):
        vlen = 19
        x = random_complex(vlen * 30, 1)
        x64 = x.astype(np.complex128)
        power = np.abs(x64) ** 2
        expected = {
            ("square_law", False): power,
            ("square_law", True): 10 * np.log10(power),
            ("linear", False): np.abs(x64),
            ("linear", True): 20 * np.log10(np.abs(x64)),
        }
        for (mode, db), ref in expected.items():
            self.tb = gr.top_block()
            y = self.run_envelope(x, vlen, mode, db)
            err = np.linalg.norm(y - ref) / np.linalg.norm(ref)
            self.assertLess(err, 1e-6, f"mode={mode} db={db}")

    def test_002_bad_parameters_raise_naming_them(self):
        with self.assertRaisesRegex(ValueError, "vlen"):
            gpuradar.envelope(0, "linear", False, "cpu")
        with self.assertRaisesRegex(ValueError, "mode"):
            gpuradar.envelope(4, "cubic", False, "cpu")
        with self.assertRaisesRegex(ValueError, "backend"):
            gpuradar.envelope(4, "linear", False, "tpu")

    def test_003_cuda_without_device_is_a_runtime_error(self):
        if gpuradar.cuda_available():
            self.skipTest("a CUDA device is present")
        with self.assertRaisesRegex(RuntimeError, "envelope"):
            gpuradar.envelope(4, "linear", False, "cuda")
        self.assertEqual(gpuradar.envelope(4, "linear", False, "auto").backend(), "cpu")


if __name__ == "__main__":
    gr_unittest.run(qa_envelope)
