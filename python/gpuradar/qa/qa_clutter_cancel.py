#!/usr/bin/env python3
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""QA of the clutter_cancel block (CPU backend) on passive_scene_source scenes: ECA-B
suppresses the direct path and clutter by >= 50 dB and its output is the least-squares
residual computed here with NumPy; the reference passes unchanged; a moving target
keeps its cross-ambiguity peak while a zero-Doppler target inside the taps is cancelled
(documented); NLMS converges over a stream to the same suppression; the report (message,
tags, getter) says what each CPI achieved; a CPI whose channels' rx_rate tags disagree
is refused (zeros, counted) and the next cancelled afresh; bad parameters refused by
name."""

import os
import sys

import numpy as np
import pmt
from gnuradio import blocks, gr, gr_unittest
from gnuradio import gpuradar
from gnuradio.gpuradar import passive_sim

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from stream_tags import rate_tags  # noqa: E402

C = passive_sim.SPEED_OF_LIGHT
FS, FC, N, K, B = 1e6, 100e6, 8192, 16, 4  # ECA-B: 4 batches of 2048 samples, 16 taps


def scene(targets=(), nsurv=1, **kw):
    """OFDM illuminator; the direct path 70 dB and clutter (delays 1..12, inside the
    taps) 50 dB above the noise; a clean reference (its noise would bound the
    cancellation at dpi_db - ref_snr_db above the noise). targets: (delay, Doppler bin
    of an N-sample CPI, SNR dB)."""
    args = dict(fs=FS, fc=FC, illuminator="ofdm", ofdm_fft=256, ofdm_used=200, ofdm_cp=32,
                nsurv=nsurv, ref_snr_db=100.0, dpi_db=70.0, clutter_count=8,
                clutter_max_delay=12, clutter_cnr_db=50.0,
                ranges_m=[d * C / FS for d, _, _ in targets],
                velocities_mps=[k * FS / N * C / FC for _, k, _ in targets],
                snr_db=[s for _, _, s in targets], truth_every=N)
    args.update(kw)
    return args


def numpy_eca_b(ref, surv, ntaps, nbatches, cpi=0, n=N):
    """CPI `cpi` of the streams, least squares per batch over the delayed reference
    (the previous CPI's samples before it; 0 before the stream)."""
    padded = np.concatenate([np.zeros(ntaps - 1, complex), ref])
    start = cpi * n + ntaps - 1  # r[cpi n] in padded
    surv = surv[cpi * n:(cpi + 1) * n]
    l = n // nbatches
    cols = np.stack([padded[start - d:start - d + n] for d in range(ntaps)], axis=1)
    out = np.empty(n, complex)
    for b in range(nbatches):
        x, s = cols[b * l:(b + 1) * l], surv[b * l:(b + 1) * l]
        a = np.linalg.lstsq(x, s, rcond=None)[0]
        out[b * l:(b + 1) * l] = s - x @ a
    return out


def target_alone(targets, ncpi=1):
    """The same scene's reference and first surveillance channel without direct path and
    clutter: the same illuminator (its draws come before the clutter's)."""
    gen = passive_sim.PassiveSceneGenerator(passive_sim.PassiveScene(
        **scene(targets, dpi_db=-300.0, clutter_count=0)))
    ref, surv = gen.next(ncpi * N)
    return ref, surv[0]


def caf_cell(ref, surv, delay, k):
    """|sum_n s[n] conj(r[n - delay]) exp(-j 2 pi k n / N)|^2 over one CPI."""
    n = ref.size
    shifted = np.concatenate([np.zeros(delay, complex), ref[:n - delay]])
    return abs(np.sum(surv * np.conj(shifted) * np.exp(-2j * np.pi * k * np.arange(n) / n))) ** 2


class qa_clutter_cancel(gr_unittest.TestCase):

    def run_block(self, sc, ncpi, **cc_kw):
        """The scene through clutter_cancel: (inputs, outputs, block, messages, tags)."""
        nsurv = sc.get("nsurv", 1)
        src = gpuradar.passive_scene_source(**sc)
        cc = gpuradar.clutter_cancel(N, K, nsurv=nsurv, backend="cpu", **cc_kw)
        msgs = blocks.message_debug()
        tb = gr.top_block()
        ins, outs = [], []
        for port in range(nsurv + 1):
            head = blocks.head(gr.sizeof_gr_complex, ncpi * N)
            sink_in, sink_out = blocks.vector_sink_c(), blocks.vector_sink_c()
            tb.connect((src, port), head, (cc, port))
            tb.connect(head, sink_in)
            tb.connect((cc, port), sink_out)
            ins.append(sink_in)
            outs.append(sink_out)
        tb.msg_connect(cc, "cancellation", msgs, "store")
        tb.run()
        reports = [pmt.to_python(msgs.get_message(i)) for i in range(msgs.num_messages())]
        return ([np.array(s.data()) for s in ins], [np.array(s.data()) for s in outs], cc,
                reports, outs[1].tags())

    def test_001_eca_b_suppresses_direct_path_and_clutter_50_db(self):
        target = (40, 25, -5.0)  # beyond the taps, moving
        ins, outs, cc, reports, tags = self.run_block(scene([target]), 2, nbatches=B)
        ref, surv = ins
        alone_ref, alone_surv = target_alone([target], 2)
        self.assertEqual((cc.method(), cc.backend(), cc.cpis()), ("eca_b", "cpu", 2))
        np.testing.assert_array_equal(outs[0], ref)  # the reference passes unchanged
        self.assertEqual([r["cpi"] for r in reports], [0, 1])
        for c in range(2):
            sl = slice(c * N, (c + 1) * N)
            want = numpy_eca_b(ref, surv, K, B, cpi=c)
            err = np.linalg.norm(outs[1][sl] - want) / np.linalg.norm(want)
            self.assertLess(err, 1e-4, f"CPI {c}")
            before, after = np.mean(abs(surv[sl]) ** 2), np.mean(abs(outs[1][sl]) ** 2)
            db = reports[c]["cancellation_db"][0]
            self.assertAlmostEqual(db, 10 * np.log10(before / after), places=2)
            # 70 dB of direct path and clutter down to about the noise (and target)
            self.assertGreaterEqual(db, 50.0, f"CPI {c}")
            self.assertLess(after, 2.0)
            self.assertEqual(reports[c]["loaded_batches"], 0)
            # the moving target keeps its CAF peak: within 0.5 dB of the same target
            # alone (it loses about K / L = -0.03 dB of its power to the fit; the noise
            # is 34 dB below the peak)
            kept = caf_cell(ref[sl], outs[1][sl], 40, 25) / caf_cell(
                alone_ref[sl], alone_surv[sl], 40, 25)
            self.assertLess(abs(10 * np.log10(kept)), 0.5, f"CPI {c}")
        # one cancellation_db tag per CPI on the cleaned channel, the getter the last
        cc_tags = [t for t in tags if pmt.symbol_to_string(t.key) == "cancellation_db"]
        self.assertEqual([t.offset for t in cc_tags], [0, N])
        self.assertAlmostEqual(pmt.to_double(cc_tags[1].value),
                               reports[1]["cancellation_db"][0])
        self.assertAlmostEqual(cc.cancellation_db()[0], reports[1]["cancellation_db"][0])

    def test_002_target_peak_emerges_and_zero_doppler_target_is_cancelled(self):
        # documented: a target inside the taps at zero Doppler is clutter to ECA-B
        moving, still = (40, 25, -5.0), (6, 0, -5.0)
        ins, outs, _, _, _ = self.run_block(scene([moving, still]), 1, nbatches=B)
        ref, surv, clean = ins[0], ins[1], outs[1]
        # before: the direct path's range sidelobes bury the moving target
        lags = range(0, 48)
        raw = [caf_cell(ref, surv, m, 25) for m in lags]
        cleaned = [caf_cell(ref, clean, m, 25) for m in lags]
        self.assertNotEqual(int(np.argmax(raw)), 40)
        self.assertEqual(int(np.argmax(cleaned)), 40)
        # after: the moving target stands over the rest of its Doppler row by about its
        # CAF SNR (-5 dB + 10 log10 N = 34 dB over the noise's cells)
        others = np.median(np.delete(cleaned, 40))
        self.assertGreater(10 * np.log10(cleaned[40] / others), 25.0)
        # the zero-Doppler one: its cell falls to the noise's level, >= 30 dB down from
        # where the scene without the direct path and clutter would have it
        peak_alone = caf_cell(*target_alone([still]), 6, 0)
        self.assertLess(10 * np.log10(caf_cell(ref, clean, 6, 0) / peak_alone), -30.0)

    def test_003_nlms_converges_over_a_stream(self):
        # OFDM's empty subcarriers make the reference coloured: NLMS's slow modes need
        # a large step and frequent updates to converge within a few CPIs
        ins, outs, cc, reports, _ = self.run_block(scene([(40, 25, -5.0)]), 4, method="nlms",
                                                   nlms_step=1.0, nlms_block=8)
        db = [r["cancellation_db"][0] for r in reports]
        self.assertEqual(cc.method(), "nlms")
        self.assertGreaterEqual(db[-1], 50.0, db)  # converged: the last CPI
        self.assertLess(db[0], db[-1], db)  # the first CPI holds the convergence
        # the report is the stream's: the last CPI's residual power
        self.assertAlmostEqual(reports[-1]["power_after"][0] / np.mean(abs(outs[1][-N:]) ** 2),
                               1.0, places=4)

    def test_007_fm_illuminator(self):
        # PR-FM's narrowband, strongly coloured reference: ECA-B still at >= 50 dB
        ins, outs, _, reports, _ = self.run_block(scene(illuminator="fm"), 1, nbatches=B)
        self.assertGreaterEqual(reports[0]["cancellation_db"][0], 50.0)
        want = numpy_eca_b(ins[0], ins[1], K, B)
        err = np.linalg.norm(outs[1] - want) / np.linalg.norm(want)
        self.assertLess(err, 1e-3)

    def test_004_two_surveillance_channels(self):
        ins, outs, cc, reports, _ = self.run_block(scene([(40, 25, -5.0)], nsurv=2), 1,
                                                   nbatches=B)
        self.assertEqual(len(reports[0]["cancellation_db"]), 2)
        for ch in (1, 2):
            want = numpy_eca_b(ins[0], ins[ch], K, B)
            err = np.linalg.norm(outs[ch] - want) / np.linalg.norm(want)
            self.assertLess(err, 1e-4, f"channel {ch}")
            self.assertGreaterEqual(reports[0]["cancellation_db"][ch - 1], 50.0)
        self.assertEqual(len(cc.cancellation_db()), 2)

    def test_005_silent_reference_survives(self):
        # a reference of zeros: every batch singular, solved loaded, nothing removed,
        # never NaN; the report says so
        src = gpuradar.passive_scene_source(**scene([]))
        cc = gpuradar.clutter_cancel(N, K, B, backend="cpu")
        msgs, out = blocks.message_debug(), blocks.vector_sink_c()
        surv = blocks.vector_sink_c()
        tb = gr.top_block()
        tb.connect(blocks.null_source(gr.sizeof_gr_complex),
                   blocks.head(gr.sizeof_gr_complex, N), (cc, 0))
        head = blocks.head(gr.sizeof_gr_complex, N)
        tb.connect((src, 1), head, (cc, 1))
        tb.connect(head, surv)
        tb.connect((src, 0), blocks.null_sink(gr.sizeof_gr_complex))
        tb.connect((cc, 0), blocks.null_sink(gr.sizeof_gr_complex))
        tb.connect((cc, 1), out)
        tb.msg_connect(cc, "cancellation", msgs, "store")
        tb.run()
        report = pmt.to_python(msgs.get_message(0))
        self.assertEqual(report["loaded_batches"], B)
        self.assertTrue(np.all(np.isfinite(out.data())))
        np.testing.assert_allclose(out.data(), surv.data(), rtol=1e-6)

    def test_008_rx_rate_disagreement_refused_per_cpi(self):
        # surveillance at the reference's rate, then another rate from inside CPI 1
        # (a retuned or misconfigured receiver), then the same rate again from CPI 2:
        # CPI 1 is not cancelled (zeros, counted, no report), CPIs 0 and 2 are, CPI 2
        # afresh (no reference history from the skipped CPI)
        rng = np.random.default_rng(81)
        ref = (rng.standard_normal(3 * N) + 1j * rng.standard_normal(3 * N)) / np.sqrt(2)
        delayed = np.concatenate([np.zeros(3, complex), ref[:-3]])
        surv = (1000 * ref + (80 - 40j) * delayed + rng.standard_normal(3 * N)
                + 1j * rng.standard_normal(3 * N))
        ref, surv = ref.astype(np.complex64), surv.astype(np.complex64)

        cc = gpuradar.clutter_cancel(N, K, B, backend="cpu")
        msgs, outs = blocks.message_debug(), [blocks.vector_sink_c() for _ in range(2)]
        tb = gr.top_block()
        tb.connect(blocks.vector_source_c(ref, False, 1, rate_tags([(0, FS)])), (cc, 0))
        tb.connect(blocks.vector_source_c(surv, False, 1, rate_tags(
            [(0, FS), (N + 100, 2 * FS), (2 * N, FS)])), (cc, 1))
        for port in range(2):
            tb.connect((cc, port), outs[port])
        tb.msg_connect(cc, "cancellation", msgs, "store")
        tb.run()
        out = np.array(outs[1].data())
        self.assertEqual((cc.cpis(), cc.rate_mismatch_cpis()), (2, 1))
        self.assertEqual(msgs.num_messages(), 2)
        np.testing.assert_array_equal(outs[0].data(), ref)  # the reference passes
        np.testing.assert_array_equal(out[N:2 * N], 0)
        for c, want in ((0, numpy_eca_b(ref, surv, K, B, cpi=0)),
                        (2, numpy_eca_b(ref[2 * N:], surv[2 * N:], K, B, cpi=0))):
            got = out[c * N:(c + 1) * N]
            self.assertLess(np.linalg.norm(got - want) / np.linalg.norm(want), 1e-4, c)
            # the direct path 60 dB above the noise, cancelled (CPI 2's first 3 samples
            # keep their echo of the samples before the restart)
            before = np.mean(abs(surv[c * N:(c + 1) * N]) ** 2)
            self.assertGreater(10 * np.log10(before / np.mean(abs(got) ** 2)), 50.0, c)
        # the tags still pass one to one, the rate change included
        rates = [(t.offset, pmt.to_double(t.value)) for t in outs[1].tags()
                 if pmt.symbol_to_string(t.key) == "rx_rate"]
        self.assertEqual(rates, [(0, FS), (N + 100, 2 * FS), (2 * N, FS)])

    def test_009_rx_rate_compared_only_where_both_tagged(self):
        # the scene source stamps every channel with fs: everything is cancelled; a
        # surveillance channel without a tag (a source that stamps none) is not compared
        ins, outs, cc, reports, tags = self.run_block(scene([]), 1, nbatches=B)
        rates = [pmt.to_double(t.value) for t in tags
                 if pmt.symbol_to_string(t.key) == "rx_rate"]
        self.assertEqual(rates, [FS])
        self.assertEqual((cc.cpis(), cc.rate_mismatch_cpis()), (1, 0))
        cc = gpuradar.clutter_cancel(N, K, B, backend="cpu")
        t = gr.tag_t()
        t.offset, t.key, t.value = 0, pmt.intern("rx_rate"), pmt.from_double(FS)
        ref = ins[0].astype(np.complex64)
        tb = gr.top_block()
        tb.connect(blocks.vector_source_c(ref, False, 1, [t]), (cc, 0))
        tb.connect(blocks.vector_source_c(ins[1].astype(np.complex64)), (cc, 1))
        sinks = [blocks.vector_sink_c() for _ in range(2)]
        for port in range(2):
            tb.connect((cc, port), sinks[port])
        tb.run()
        self.assertEqual((cc.cpis(), cc.rate_mismatch_cpis()), (1, 0))
        after = np.mean(abs(np.array(sinks[1].data())) ** 2)
        self.assertGreater(np.mean(abs(ins[1]) ** 2) / after, 1e5)  # cancelled

    def test_006_bad_parameters(self):
        for args, kw, name in (((0, K), {}, "nsamples"), ((N, 0), {}, "ntaps"),
                               ((N, 2049), dict(nbatches=4), "ntaps"),
                               ((N, K), dict(nbatches=3), "nbatches"),
                               ((N, K), dict(method="rls"), "method"),
                               ((N, K), dict(nsurv=0), "nsurv"),
                               ((N, K), dict(nsurv=65), "nsurv"),
                               ((N, K), dict(diagonal_loading=-1.0), "diagonal_loading"),
                               ((N, K), dict(method="nlms", nlms_step=2.0), "nlms_step"),
                               ((N, K), dict(method="nlms", nlms_block=100), "nlms_block"),
                               ((N, K), dict(method="nlms", doppler_taps=True),
                                "doppler_taps"),
                               ((N, K), dict(device=-1), "device"),
                               ((N, K), dict(backend="gpu"), "backend")):
            with self.subTest(parameter=name):
                with self.assertRaisesRegex(ValueError, name):
                    gpuradar.clutter_cancel(*args, **kw)


if __name__ == "__main__":
    gr_unittest.run(qa_clutter_cancel)
