#!/usr/bin/env python3
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""QA of passive_scene_source (gnuradio.gpuradar.passive_sim): each part of the signal
model measured by an estimator written here (least squares, cross-ambiguity by FFT,
phase differences), the block's stream equal to simulate() across work() calls, the
truth messages, and the refusals."""

import math

import numpy as np
import pmt
from gnuradio import blocks, gr, gr_unittest
from gnuradio import gpuradar
from gnuradio.gpuradar import passive_sim

C = passive_sim.SPEED_OF_LIGHT
OFF_DB = -300.0  # a level far below the noise: the part is absent
N = 1 << 16


def scene(**kw):
    base = dict(ref_snr_db=OFF_DB, dpi_db=OFF_DB)
    base.update(kw)
    return passive_sim.PassiveScene(**base)


def illuminator(sc, n=N):
    """The illuminator alone (reference at 200 dB SNR, divided by its gain)."""
    sc.ref_snr_db = 200.0
    ref, _, _ = passive_sim.simulate(sc, n)
    return ref.astype(np.complex128) / 1e10


class qa_passive_scene_source(gr_unittest.TestCase):

    def test_001_noise_only_unit_power(self):
        # |noise|^2 has mean 1 and variance 1 per sample: the mean of N is within
        # 5 / sqrt(N) of 1.
        ref, surv, truth = passive_sim.simulate(scene(nsurv=3), N)
        self.assertEqual(truth, [])
        for x in (ref, *surv):
            self.assertAlmostEqual(float(np.mean(np.abs(x) ** 2)), 1.0, delta=5 / math.sqrt(N))
        # independent channels: cross-correlation within 5 / sqrt(N)
        self.assertLess(abs(np.vdot(surv[0], surv[1])) / N, 5 / math.sqrt(N))

    def test_002_target_peaks_at_its_delay_and_doppler(self):
        fs, fc, k = 2.4e6, 98e6, 5
        doppler = k * fs / N  # on a Doppler bin of an N-point FFT
        velocity = doppler * C / fc
        delay = 37
        for illum in passive_sim.ILLUMINATORS:
            with self.subTest(illuminator=illum):
                sc = scene(fs=fs, fc=fc, illuminator=illum, ref_snr_db=40.0,
                           ranges_m=[delay * C / fs], velocities_mps=[velocity],
                           snr_db=[0.0])
                ref, surv, _ = passive_sim.simulate(sc, N)
                lags = np.arange(0, 80)
                caf = np.array([np.abs(np.fft.fft(surv[0] * np.conj(np.roll(ref, d))))
                                for d in lags])
                d, f = np.unravel_index(np.argmax(caf), caf.shape)
                self.assertEqual((int(lags[d]), int(f)), (delay, k))

    def test_003_direct_path_level_and_steering(self):
        sc = scene(nsurv=4, dpi_db=30.0, dpi_azimuth_deg=30.0)
        x = illuminator(sc)
        sc.ref_snr_db = OFF_DB
        _, surv, _ = passive_sim.simulate(sc, N)
        # least-squares amplitude on the unit-power illuminator; the unit noise leaves an
        # error of RMS 1 / sqrt(N) on it
        a = surv.astype(np.complex128) @ np.conj(x) / np.vdot(x, x)
        np.testing.assert_allclose(np.abs(a), 10 ** (30 / 20), atol=5 / math.sqrt(N))
        # a half-wavelength array: pi sin(30 deg) = pi / 2 between neighbours
        np.testing.assert_allclose(np.angle(a[1:] / a[:-1]), np.pi / 2, atol=1e-3)

    def test_004_clutter_static_within_its_delays(self):
        # Least squares on delays 0..max of the illuminator: the clutter's powers sum
        # to its CNR, nothing sits at delay 0 (no direct path here), and the residual is
        # the unit noise (zero Doppler: a moving scatterer would not fit).
        sc = scene(clutter_count=12, clutter_max_delay=20, clutter_cnr_db=20.0,
                   illuminator="ofdm")
        x = illuminator(sc, 1 << 14)
        sc.ref_snr_db = OFF_DB
        _, surv, _ = passive_sim.simulate(sc, 1 << 14)
        n0 = 32
        a = np.stack([x[n0 - d:x.size - d] for d in range(0, 21)], axis=1)
        coef, *_ = np.linalg.lstsq(a, surv[0, n0:].astype(np.complex128), rcond=None)
        self.assertAlmostEqual(float(np.sum(np.abs(coef) ** 2)), 100.0, delta=1.0)
        self.assertLess(abs(coef[0]), 0.1)
        residual = surv[0, n0:] - a @ coef
        self.assertAlmostEqual(float(np.mean(np.abs(residual) ** 2)), 1.0, delta=0.05)

    def test_005_fm_deviation_and_band(self):
        sc = scene(deviation_hz=50e3, audio_bandwidth_hz=15e3)
        x = illuminator(sc)
        np.testing.assert_allclose(np.abs(x), 1.0, atol=1e-6)  # constant envelope
        f = np.diff(np.unwrap(np.angle(x))) * sc.fs / (2 * np.pi)
        # the programme decorrelates over ~fs / (2 B) samples: N 2 B / fs independent
        # ones give the RMS a relative error of about 1 / sqrt(2 N 2B/fs) (5 of them)
        independent = N * 2 * sc.audio_bandwidth_hz / sc.fs
        self.assertAlmostEqual(float(np.sqrt(np.mean(f ** 2))) / 50e3, 1.0,
                               delta=5 / math.sqrt(2 * independent))
        # Woodward: the spectrum follows the deviation's (Gaussian) distribution
        spectrum = np.abs(np.fft.fftshift(np.fft.fft(x))) ** 2
        freqs = np.fft.fftshift(np.fft.fftfreq(N, 1 / sc.fs))
        outside = spectrum[np.abs(freqs) > 3 * 50e3 + 15e3].sum() / spectrum.sum()
        self.assertLess(outside, 0.01)

    def test_006_ofdm_prefix_and_subcarriers(self):
        sc = scene(illuminator="ofdm", ofdm_fft=256, ofdm_used=200, ofdm_cp=64)
        x = illuminator(sc, 10 * 320)
        symbols = x.reshape(10, 320)
        np.testing.assert_allclose(symbols[:, :64], symbols[:, 256:], atol=1e-6)
        spectrum = np.abs(np.fft.fft(symbols[:, 64:], axis=1)) ** 2
        used = spectrum.sum(axis=0) > 1e-6 * spectrum.sum() / 256
        self.assertEqual(int(used.sum()), 200)
        self.assertFalse(used[0])  # DC empty
        # unit power: QPSK of unit modulus on `used` bins (Parseval over each body)
        self.assertAlmostEqual(float(np.mean(np.abs(symbols[:, 64:]) ** 2)), 1.0, delta=1e-5)

    def test_007_block_stream_equals_simulate_and_truth(self):
        sc_args = dict(fs=1e6, nsurv=2, ref_snr_db=20.0, dpi_db=40.0, clutter_count=5,
                       ranges_m=[9000.0, 21000.0], velocities_mps=[-150.0, 90.0],
                       snr_db=[-10.0, -5.0], azimuths_deg=[10.0, -20.0],
                       truth_every=10000, seed=7)
        n = 30001
        src = gpuradar.passive_scene_source(**sc_args)
        tb = gr.top_block()
        sinks = [blocks.vector_sink_c() for _ in range(3)]
        truth = blocks.message_debug()
        for k in range(3):
            tb.connect((src, k), blocks.head(gr.sizeof_gr_complex, n), sinks[k])
        tb.msg_connect(src, "truth", truth, "store")
        tb.run()
        ref, surv, want = passive_sim.simulate(passive_sim.PassiveScene(**sc_args), n)
        # streamed in work() calls of any length: the same samples as one call
        np.testing.assert_allclose(np.array(sinks[0].data()), ref, rtol=0, atol=1e-3)
        for k in range(2):
            np.testing.assert_allclose(np.array(sinks[1 + k].data()), surv[k], rtol=0,
                                       atol=1e-3)
        got = [pmt.to_python(truth.get_message(i)) for i in range(truth.num_messages())]
        self.assertGreaterEqual(len(got), len(want))  # the source may run past the head
        for g, w in zip(got, want):
            self.assertEqual(set(g), set(w))
            for key in w:
                self.assertAlmostEqual(g[key], w[key], places=6)
        first = want[0]
        self.assertEqual((first["delay_samples"], first["sample"]), (30, 0))
        self.assertAlmostEqual(first["doppler_hz"], -150.0 * 98e6 / C)

    def test_008_bad_parameters(self):
        for kw, name in ((dict(fs=0.0), "fs"), (dict(fc=float("nan")), "fc"),
                         (dict(illuminator="dab"), "illuminator"), (dict(nsurv=0), "nsurv"),
                         (dict(ranges_m=[1e3], velocities_mps=[], snr_db=[0.0]),
                          "velocities_mps"),
                         (dict(ranges_m=[1e3], velocities_mps=[0.0], snr_db=[]), "snr_db"),
                         (dict(ranges_m=[-5.0], velocities_mps=[0.0], snr_db=[0.0]),
                          "ranges_m"),
                         (dict(ranges_m=[1e3], velocities_mps=[0.0], snr_db=[0.0],
                               azimuths_deg=[95.0]), "azimuths_deg"),
                         (dict(dpi_azimuth_deg=-91.0), "dpi_azimuth_deg"),
                         (dict(clutter_count=-1), "clutter_count"),
                         (dict(clutter_max_delay=0), "clutter_max_delay"),
                         (dict(audio_bandwidth_hz=2e6), "audio_bandwidth_hz"),
                         (dict(illuminator="ofdm", ofdm_used=4096), "ofdm_used"),
                         (dict(illuminator="ofdm", ofdm_cp=5000), "ofdm_cp"),
                         (dict(truth_every=0), "truth_every"),
                         (dict(nsurv=2, element_spacing_wl=0.0), "element_spacing_wl"),
                         (dict(nsurv=2, element_positions_m=[0.0] * 5),
                          "element_positions_m"),
                         (dict(nsurv=1, element_positions_m=[0.0, float("inf"), 0.0]),
                          "element_positions_m"),
                         (dict(dc_offset_i=float("nan")), "dc_offset_i"),
                         (dict(dc_offset_q=float("inf")), "dc_offset_q"),
                         (dict(iq_gain_db=float("nan")), "iq_gain_db"),
                         (dict(iq_phase_deg=90.0), "iq_phase_deg"),
                         (dict(phase_noise_linewidth_hz=-1.0), "phase_noise_linewidth_hz"),
                         (dict(fs=1e6, phase_noise_linewidth_hz=5e5),
                          "phase_noise_linewidth_hz"),
                         (dict(adc_bits=33), "adc_bits"),
                         (dict(adc_bits=-1), "adc_bits"),
                         (dict(adc_bits=8, adc_full_scale=0.0), "adc_full_scale")):
            with self.subTest(parameter=name):
                with self.assertRaisesRegex(ValueError, name):
                    gpuradar.passive_scene_source(**kw)

    def test_009_array_geometry_as_the_beamformer(self):
        # element positions: the direct path's least-squares amplitude per channel is
        # its level times exp(+j 2 pi p . u / lambda), u = (sin a, cos a, 0)
        fc = 98e6
        lam = C / fc
        pos = [0.0, 0.0, 0.0, 0.9, 0.2, 0.0, -1.3, 0.5, 0.4, 2.1, -0.7, 0.0]
        for kw in (dict(element_positions_m=pos),
                   dict(element_spacing_wl=0.7)):
            with self.subTest(**{k: str(v) for k, v in kw.items()}):
                sc = scene(nsurv=4, fc=fc, dpi_db=30.0, dpi_azimuth_deg=25.0, **kw)
                x = illuminator(sc)
                sc.ref_snr_db = OFF_DB
                _, surv, _ = passive_sim.simulate(sc, N)
                a = surv.astype(np.complex128) @ np.conj(x) / np.vdot(x, x)
                if "element_positions_m" in kw:
                    p = np.reshape(pos, (4, 3))
                else:  # centred on x, channel 0 most negative
                    p = np.zeros((4, 3))
                    p[:, 0] = (np.arange(4) - 1.5) * 0.7 * lam
                az = math.radians(25.0)
                want = 10 ** 1.5 * np.exp(2j * np.pi * (p @ [math.sin(az), math.cos(az),
                                                            0.0]) / lam)
                np.testing.assert_allclose(a, want, atol=10 ** 1.5 * 1e-3 + 5 / math.sqrt(N))

    def test_010_beamformer_steers_at_a_target(self):
        # The module's beamformer with the same ULA, steered at the target, passes the
        # target's echo at its level (a unit plane wave gives 1 in its beam) and puts the
        # direct path from elsewhere in a sidelobe (OFDM: the illuminator is white over
        # the 20-sample lag, so the direct path does not bias the echo's estimate).
        nsurv, n = 4, 1 << 14
        sc = scene(nsurv=nsurv, fc=98e6, illuminator="ofdm", ref_snr_db=200.0, dpi_db=30.0,
                   dpi_azimuth_deg=-50.0, ranges_m=[20 * C / 2.4e6], velocities_mps=[0.0],
                   snr_db=[10.0], azimuths_deg=[20.0])
        ref, surv, _ = passive_sim.simulate(sc, n)
        x = np.roll(ref.astype(np.complex128), 20) / 1e10
        bf = gpuradar.beamformer(nchannels=nsurv, nsamples=n, beam_angles_deg=[20.0],
                                 window="rectangular", backend="cpu")
        tb = gr.top_block()
        sink = blocks.vector_sink_c(n)
        tb.connect(blocks.vector_source_c(surv.reshape(-1).tolist(), False, nsurv * n), bf,
                   sink)
        tb.run()
        beam = np.array(sink.data(), np.complex128)
        echo = abs(np.vdot(x[64:], beam[64:]) / np.vdot(x[64:], x[64:]))
        self.assertAlmostEqual(echo, 10 ** 0.5, delta=0.05 * 10 ** 0.5)
        w = sc.steering(20.0) / nsurv
        self.assertLess(abs(np.vdot(w, sc.steering(-50.0))), 0.5)

    def test_011_front_end_each_impairment(self):
        fs = 2.4e6
        base = dict(fs=fs, nsurv=2, ref_snr_db=20.0, dpi_db=20.0)
        n = 1 << 15

        def run(**kw):
            gen = passive_sim.PassiveSceneGenerator(scene(**base, **kw))
            ref, surv = gen.next(n)
            return np.vstack([ref[None, :], surv]), gen.front_end
        clean, fe = run()
        self.assertFalse(fe.active())
        # DC: the mean moves by the offset, nothing else changes
        dc, _ = run(dc_offset_i=0.3, dc_offset_q=-0.2)
        np.testing.assert_allclose(dc - clean, 0.3 - 0.2j, atol=1e-12)
        # I/Q imbalance: exactly mu z + nu conj(z); 1 dB and 5 degrees: image -22.83 dB
        iq, fe = run(iq_gain_db=1.0, iq_phase_deg=5.0)
        np.testing.assert_allclose(iq, fe.mu * clean + fe.nu * np.conj(clean), atol=1e-12)
        g, p = 10 ** (1 / 20), math.radians(5.0)
        np.testing.assert_allclose(iq.real, clean.real, atol=1e-12)
        np.testing.assert_allclose(iq.imag, g * (clean.imag * math.cos(p) -
                                                 clean.real * math.sin(p)), atol=1e-12)
        irr = (1 - 2 * g * math.cos(p) + g * g) / (1 + 2 * g * math.cos(p) + g * g)
        self.assertAlmostEqual(abs(fe.nu) ** 2 / abs(fe.mu) ** 2, irr, delta=1e-12 * irr)
        self.assertAlmostEqual(10 * math.log10(irr), -22.83, delta=0.01)
        # phase noise: every channel rotated by the same Wiener phase, whose steps have
        # variance 2 pi linewidth / fs (N steps: relative error ~ sqrt(2 / N), 5 sigma)
        pn, _ = run(phase_noise_linewidth_hz=2000.0)
        rot = pn / clean
        np.testing.assert_allclose(np.abs(rot), 1.0, atol=1e-9)
        np.testing.assert_allclose(rot[1:], np.broadcast_to(rot[0], rot[1:].shape),
                                   atol=1e-9)
        steps = np.angle(rot[0, 1:] / rot[0, :-1])
        self.assertAlmostEqual(float(np.var(steps)) / (2 * np.pi * 2000.0 / fs), 1.0,
                               delta=5 * math.sqrt(2 / n))
        # ADC: the model on the clean samples, to the bit; clamped rails counted
        adc, fe = run(adc_bits=6, adc_full_scale=12.0)
        d = 2 * 12.0 / 2 ** 6
        want, clipped = [], 0
        for rail in (clean.real, clean.imag):
            q = np.sign(rail) * np.floor(np.abs(rail) / d + 0.5)
            clipped += int(np.sum(q > 31) + np.sum(q < -32))
            want.append(np.clip(q, -32, 31) * d)
        np.testing.assert_array_equal(adc, want[0] + 1j * want[1])
        self.assertGreater(clipped, 0)  # 12 is about 1.2 sigma of a 20 dB signal's rail
        self.assertEqual(fe.clipped, clipped)
        # noise-only quantisation error: D^2 / 12 per rail (uniform), no clipping
        sc = scene(fs=fs, adc_bits=10, adc_full_scale=8.0)
        gen = passive_sim.PassiveSceneGenerator(sc)
        q, _ = gen.next(n)
        raw, _ = passive_sim.PassiveSceneGenerator(scene(fs=fs)).next(n)
        d = 2 * 8.0 / 2 ** 10
        self.assertEqual(gen.front_end.clipped, 0)
        self.assertAlmostEqual(float(np.mean(np.abs(q - raw) ** 2)) / (2 * d * d / 12), 1.0,
                               delta=0.05)

    def test_012_block_counts_adc_clipping(self):
        kw = dict(fs=1e6, nsurv=2, ref_snr_db=20.0, dpi_db=30.0, adc_bits=8,
                  adc_full_scale=20.0, phase_noise_linewidth_hz=100.0, iq_gain_db=0.5,
                  ranges_m=[15e3], velocities_mps=[150.0], snr_db=[-10.0], seed=3)
        n = 20000
        src = gpuradar.passive_scene_source(**kw)
        tb = gr.top_block()
        sinks = [blocks.vector_sink_c() for _ in range(3)]
        for k in range(3):
            tb.connect((src, k), blocks.head(gr.sizeof_gr_complex, n), sinks[k])
        tb.run()
        gen = passive_sim.PassiveSceneGenerator(passive_sim.PassiveScene(**kw))
        ref, surv = gen.next(n)
        # the same impaired stream as the generator, however work() cut it
        np.testing.assert_allclose(np.array(sinks[0].data()), ref, rtol=0, atol=1e-4)
        np.testing.assert_allclose(np.array(sinks[2].data()), surv[1], rtol=0, atol=1e-4)
        self.assertGreater(gen.front_end.clipped, 0)
        # the block may have produced past the head: at least the generator's count
        self.assertGreaterEqual(src.adc_clipped(), gen.front_end.clipped)

    def test_013_recording_round_trip_and_refusals(self):
        import json
        import os
        import tempfile
        from gnuradio.gpuradar import sigmf_io
        sc = passive_sim.PassiveScene(fs=1e6, nsurv=2, ref_snr_db=20.0, dpi_db=30.0,
                                      ranges_m=[9000.0], velocities_mps=[-120.0],
                                      snr_db=[-10.0], seed=4)
        n = passive_sim.WRITE_CHUNK + 1001  # more than one chunk
        with tempfile.TemporaryDirectory() as tmp:
            base = os.path.join(tmp, "rec")
            truth = passive_sim.write_recording(base, sc, n)
            rec = passive_sim.read_recording(base + ".sigmf-meta")
            self.assertEqual((rec.nchannels, rec.nsamples, rec.reference, rec.surveillance),
                             (3, n, 0, [1, 2]))
            self.assertEqual((rec.fs, rec.fc), (1e6, sc.fc))
            ref, surv, _ = passive_sim.simulate(sc, n)
            np.testing.assert_array_equal(rec.channel_samples(0), ref)
            np.testing.assert_array_equal(rec.channel_samples(2), surv[1])
            self.assertEqual(len(rec.truth), 1)
            self.assertAlmostEqual(rec.truth[0]["bistatic_range_m"],
                                   truth[0]["bistatic_range_m"])
            self.assertAlmostEqual(rec.truth[0]["velocity_mps"], -120.0)
            # channels chosen by the caller; refusals name the field or the channel
            self.assertEqual(passive_sim.read_recording(base, 2, [0]).surveillance, [0])
            for ref_ch, surv_ch, needle in ((3, None, "reference channel"),
                                            (0, [0], "surveillance channels"),
                                            (0, [5], "surveillance channels")):
                with self.assertRaisesRegex(sigmf_io.RecordingError, needle):
                    passive_sim.read_recording(base, ref_ch, surv_ch)
            with open(base + ".sigmf-meta") as f:
                meta = json.load(f)
            for field, value, needle in (("core:num_channels", 1, "core:num_channels"),
                                         ("core:datatype", "ci16_le", "core:datatype"),
                                         ("core:sample_rate", -1, "core:sample_rate")):
                bad = json.loads(json.dumps(meta))
                bad["global"][field] = value
                with open(base + ".sigmf-meta", "w") as f:
                    json.dump(bad, f)
                with self.assertRaisesRegex(sigmf_io.RecordingError, needle):
                    passive_sim.read_recording(base)
            with open(base + ".sigmf-meta", "w") as f:
                json.dump(meta, f)
            with open(base + ".sigmf-data", "ab") as f:
                f.write(b"\0" * 8)  # not a whole sample of 3 channels
            with self.assertRaisesRegex(sigmf_io.RecordingError, "whole number"):
                passive_sim.read_recording(base)


if __name__ == "__main__":
    gr_unittest.run(qa_passive_scene_source)
