#!/usr/bin/env python3
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""QA of the cross_ambiguity block (CPU backend): each CPI's map equals a cross-ambiguity
computed here with NumPy from the same two streams; a target of passive_scene_source
peaks at its bistatic delay and Doppler bin; the cpi tag gives cfar_2d bistatic range
and velocity; a CPI whose channels' rx_rate tags disagree gives no map; bad parameters
refused by name."""

import os
import sys

import numpy as np
import pmt
from gnuradio import blocks, gr, gr_unittest
from gnuradio import gpuradar
from gnuradio.gpuradar import detections, passive_sim

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from stream_tags import rate_tags  # noqa: E402

C = passive_sim.SPEED_OF_LIGHT
FS, FC, N, M, K = 1e6, 100e6, 4096, 48, 6


def numpy_caf(ref, surv, m_lags, k_half):
    """|sum_n s[n] conj(r[n-m]) exp(-j 2 pi k n / N)|^2, r[n] = 0 for n < 0."""
    n = ref.size
    out = np.empty((m_lags, 2 * k_half + 1))
    ks = np.arange(-k_half, k_half + 1)
    steer = np.exp(-2j * np.pi * np.outer(ks, np.arange(n)) / n)
    for m in range(m_lags):
        shifted = np.concatenate([np.zeros(m, complex), ref[:n - m]])
        out[m] = np.abs(steer @ (surv * np.conj(shifted))) ** 2
    return out


def scene(delay, k, **kw):
    velocity = k * FS / N * C / FC  # on Doppler bin k of an N-sample CPI
    args = dict(fs=FS, fc=FC, illuminator="ofdm", ofdm_fft=256, ofdm_used=200, ofdm_cp=32,
                ref_snr_db=30.0, dpi_db=-300.0, ranges_m=[delay * C / FS],
                velocities_mps=[velocity], snr_db=[-5.0], truth_every=N)
    args.update(kw)
    return args


class qa_cross_ambiguity(gr_unittest.TestCase):

    def run_chain(self, sc, ncpi, **caf_kw):
        src = gpuradar.passive_scene_source(**sc)
        caf = gpuradar.cross_ambiguity(FS, FC, N, M, K, backend="cpu", **caf_kw)
        tb = gr.top_block()
        refs, survs = blocks.vector_sink_c(), blocks.vector_sink_c()
        maps = blocks.vector_sink_f(2 * K + 1)
        head0 = blocks.head(gr.sizeof_gr_complex, ncpi * N)
        head1 = blocks.head(gr.sizeof_gr_complex, ncpi * N)
        tb.connect((src, 0), head0, refs)
        tb.connect((src, 1), head1, survs)
        tb.connect(head0, (caf, 0))
        tb.connect(head1, (caf, 1))
        tb.connect(caf, maps)
        tb.run()
        out = np.array(maps.data(), np.float64).reshape(-1, M, 2 * K + 1)
        return np.array(refs.data()), np.array(survs.data()), out, maps.tags(), caf

    def test_001_equals_numpy_caf_and_peaks_at_the_target(self):
        delay, k = 17, 3
        ref, surv, maps, tags, caf = self.run_chain(scene(delay, k), 2, method="direct",
                                                    window="rectangular")
        self.assertEqual(maps.shape[0], 2)
        self.assertEqual(caf.method(), "direct")
        for c in range(2):
            want = numpy_caf(ref[c * N:(c + 1) * N], surv[c * N:(c + 1) * N], M, K)
            np.testing.assert_allclose(maps[c], want, rtol=1e-3, atol=1e-4 * want.max())
            m, kk = np.unravel_index(np.argmax(maps[c]), maps[c].shape)
            self.assertEqual((m, kk - K), (delay, k))
        # one cpi tag per map, on its first item, with the bistatic axes
        self.assertEqual([t.offset for t in tags], [0, M])
        d = pmt.to_python(tags[1].value)
        self.assertEqual((d["index"], d["nrange"], d["ndoppler"], d["bistatic"]), (1, M, 2 * K + 1, True))
        self.assertAlmostEqual(d["prf"] / d["ndoppler"], FS / N)

    def test_002_cfar_reports_bistatic_range_and_velocity(self):
        delay, k = 22, -4
        sc = scene(delay, k, snr_db=[0.0])
        src = gpuradar.passive_scene_source(**sc)
        caf = gpuradar.cross_ambiguity(FS, FC, N, M, K, backend="cpu", window="hann")
        cfar = gpuradar.cfar_2d(M, 2 * K + 1, guard_range=2, train_range=6, guard_doppler=1,
                                train_doppler=2, pfa=1e-6, local_max_only=True, backend="cpu")
        dets = blocks.message_debug()
        tb = gr.top_block()
        for port in (0, 1):
            tb.connect((src, port), blocks.head(gr.sizeof_gr_complex, N), (caf, port))
        tb.connect(caf, cfar, blocks.null_sink(gr.sizeof_char * (2 * K + 1)))
        tb.msg_connect(cfar, "detections", dets, "store")
        tb.run()
        found = detections.collect(dets)
        truth = passive_sim.PassiveScene(**sc).truth(0)[0]
        ranges = [f["range_m"] for f in found]
        velocities = [f["velocity_mps"] for f in found]
        self.assertTrue(any(abs(r - truth["bistatic_range_m"]) < 0.5 * C / FS and
                            abs(v - truth["velocity_mps"]) < 0.5 * FS / N * C / FC
                            for r, v in zip(ranges, velocities)),
                        (ranges, velocities, truth))

    def test_004_rx_rate_disagreement_gives_no_map(self):
        # the surveillance channel at another rate from inside CPI 1 until CPI 2's
        # start: CPI 1 gives no map (counted), CPIs 0 and 2 the maps of their samples
        rng = np.random.default_rng(44)
        ref = (rng.standard_normal(3 * N) + 1j * rng.standard_normal(3 * N)) / np.sqrt(2)
        echo = np.concatenate([np.zeros(9, complex), ref[:-9]])
        surv = 0.3 * echo * np.exp(2j * np.pi * 5 * np.arange(3 * N) / N) + (
            rng.standard_normal(3 * N) + 1j * rng.standard_normal(3 * N)) / np.sqrt(2)
        ref, surv = ref.astype(np.complex64), surv.astype(np.complex64)

        caf = gpuradar.cross_ambiguity(FS, FC, N, M, K, method="direct",
                                       window="rectangular", backend="cpu")
        maps = blocks.vector_sink_f(2 * K + 1)
        tb = gr.top_block()
        tb.connect(blocks.vector_source_c(ref, False, 1, rate_tags([(0, FS)])), (caf, 0))
        tb.connect(blocks.vector_source_c(surv, False, 1, rate_tags(
            [(0, FS), (N + 7, 1.5 * FS), (2 * N, FS)])), (caf, 1))
        tb.connect(caf, maps)
        tb.run()
        out = np.array(maps.data(), np.float64).reshape(-1, M, 2 * K + 1)
        self.assertEqual(caf.rate_mismatch_cpis(), 1)
        self.assertEqual(out.shape[0], 2)
        for got, c in zip(out, (0, 2)):
            want = numpy_caf(ref[c * N:(c + 1) * N], surv[c * N:(c + 1) * N], M, K)
            np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-4 * want.max())
            m, kk = np.unravel_index(np.argmax(got), got.shape)
            self.assertEqual((m, kk - K), (9, 5))
        self.assertEqual([(t.offset, pmt.to_python(t.value)["index"]) for t in maps.tags()],
                         [(0, 0), (M, 1)])

    def test_003_bad_parameters(self):
        for args, kw, name in (((0.0, FC, N, M, K), {}, "fs"), ((FS, -1.0, N, M, K), {}, "fc"),
                               ((FS, FC, N, M, K), dict(method="fast"), "method"),
                               ((FS, FC, N, M, K), dict(window="boxcar"), "window"),
                               ((FS, FC, N, 0, K), {}, "nrange"),
                               ((FS, FC, 1, 1, 0), {}, "nsamples"),
                               ((FS, FC, N, M, K), dict(batch_length=3), "batch_length"),
                               ((FS, FC, N, M, K), dict(device=-1), "device"),
                               ((FS, FC, 8, 4, 8), {}, "doppler_half"),
                               ((FS, FC, N, M, K), dict(backend="gpu"), "backend")):
            with self.subTest(parameter=name):
                with self.assertRaisesRegex(ValueError, name):
                    gpuradar.cross_ambiguity(*args, **kw)


if __name__ == "__main__":
    gr_unittest.run(qa_cross_ambiguity)
