#!/usr/bin/env python3
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""QA of sar_autofocus (CPU backend): images blurred by a known phase error come out
focused (entropy, the estimated error against the injected one), whichever axis the
azimuth runs along; an image without point-like content passes unchanged; one message
per image; bad parameters refused by name."""

import numpy as np
import pmt
from gnuradio import blocks, gr, gr_unittest
from gnuradio import gpuradar

NRANGE, NAZ = 24, 128


def blurred_images(count, seed, targets=True):
    """(blurred, phase error) images of NRANGE range lines x NAZ azimuth samples (azimuth
    contiguous): point targets on every third line, the image the DFT of the pulses."""
    rng = np.random.default_rng(seed)
    n = np.arange(NAZ)
    x = (n - NAZ / 2) / (NAZ / 2)
    error = 2.5 * np.sin(2 * np.pi * 2 * n / NAZ + 0.3) + 6 * x * x
    images = []
    for _ in range(count):
        pulses = 0.1 * (rng.standard_normal((NRANGE, NAZ)) +
                        1j * rng.standard_normal((NRANGE, NAZ)))
        if targets:
            for r in range(0, NRANGE, 3):
                k, a = rng.integers(NAZ), 10 * (1 + rng.random())
                pulses[r] += a * np.exp(1j * (2 * np.pi * rng.random() + 2 * np.pi * k * n / NAZ))
        images.append(np.fft.fft(pulses * np.exp(1j * error), axis=1).astype(np.complex64))
    return images, error


def entropy(image):
    p = np.abs(image.astype(np.complex128)) ** 2
    p /= p.sum()
    return float(-np.sum(p[p > 0] * np.log(p[p > 0])))


def detrended_rms(a, b):
    d = np.asarray(a) - np.asarray(b)
    n = np.arange(d.size)
    return float(np.sqrt(np.mean((d - np.polyval(np.polyfit(n, d, 1), n)) ** 2)))


def run(images, nx, ny, axis, **kw):
    tb = gr.top_block()
    src = blocks.vector_source_c(np.concatenate([i.ravel() for i in images]).tolist(), False, nx)
    af = gpuradar.sar_autofocus(nx, ny, axis, backend="cpu", **kw)
    sink = blocks.vector_sink_c(nx)
    msgs = blocks.message_debug()
    tb.connect(src, af, sink)
    tb.msg_connect(af, "autofocus", msgs, "store")
    tb.run()
    out = np.array(sink.data(), np.complex64).reshape(len(images), ny, nx)
    reports = [pmt.to_python(msgs.get_message(i)) for i in range(msgs.num_messages())]
    return out, reports, af


class qa_sar_autofocus(gr_unittest.TestCase):

    def test_001_focuses_along_x(self):
        images, error = blurred_images(2, 1)
        out, reports, af = run(images, NAZ, NRANGE, "x")
        self.assertEqual([r["image"] for r in reports], [0, 1])
        self.assertEqual(af.converged_images(), 2)
        for image, focused, r in zip(images, out, reports):
            self.assertTrue(r["converged"], r["reason"])
            self.assertLess(entropy(focused), entropy(image) - 0.5)
            self.assertLessEqual(detrended_rms(r["phase_error_rad"], error), 0.1)

    def test_002_azimuth_along_y(self):
        # The same images transposed (azimuth along the rows, as sar_focus gives them)
        # focus with azimuth_axis y; with x the block would treat range as azimuth.
        images, error = blurred_images(1, 2)
        along_y = [np.ascontiguousarray(i.T) for i in images]
        out, reports, _ = run(along_y, NRANGE, NAZ, "y")
        self.assertTrue(reports[0]["converged"], reports[0]["reason"])
        self.assertLessEqual(detrended_rms(reports[0]["phase_error_rad"], error), 0.1)
        want, _, _ = run(images, NAZ, NRANGE, "x")
        np.testing.assert_allclose(out[0].T, want[0], rtol=0, atol=1e-3 * np.abs(want).max())
        wrong, wrong_reports, _ = run(along_y, NRANGE, NAZ, "x", min_window=8)
        self.assertGreater(entropy(wrong[0]) if wrong_reports[0]["converged"] else
                           entropy(along_y[0]), entropy(out[0]) + 0.5)

    def test_005_minimum_entropy(self):
        images, error = blurred_images(1, 4)
        out, reports, _ = run(images, NAZ, NRANGE, "x", method="entropy")
        self.assertTrue(reports[0]["converged"], reports[0]["reason"])
        self.assertLess(entropy(out[0]), entropy(images[0]) - 0.5)
        # phases per pulse, modulo 2 pi: compared unwrapped
        d = np.unwrap(np.angle(np.exp(1j * (np.array(reports[0]["phase_error_rad"]) - error))))
        self.assertLessEqual(detrended_rms(d, np.zeros_like(d)), 0.1)

    def test_003_unfocusable_image_unchanged(self):
        images, _ = blurred_images(1, 3, targets=False)
        out, reports, af = run(images, NAZ, NRANGE, "x", max_iterations=5)
        self.assertFalse(reports[0]["converged"])
        self.assertIn("did not converge", reports[0]["reason"])
        np.testing.assert_array_equal(out[0], images[0])
        self.assertEqual(af.unconverged_images(), 1)

    def test_004_bad_parameters(self):
        for args, kw, name in (((0, 8), {}, "nx"), ((8, 0), {}, "ny"),
                               ((16, 16, "z"), {}, "azimuth_axis"),
                               ((4, 16, "x"), {}, "nx"), ((16, 4, "y"), {}, "ny"),
                               ((16, 16), dict(max_iterations=0), "max_iterations"),
                               ((16, 16), dict(method="sharpness"), "method"),
                               ((16, 16), dict(tolerance_rad=-1.0), "tolerance_rad"),
                               ((16, 16), dict(min_window=2), "min_window"),
                               ((16, 16), dict(backend="gpu"), "backend"),
                               ((16, 16), dict(device=-1), "device")):
            with self.subTest(parameter=name):
                with self.assertRaisesRegex(ValueError, name):
                    gpuradar.sar_autofocus(*args, **kw)


if __name__ == "__main__":
    gr_unittest.run(qa_sar_autofocus)
