#!/usr/bin/env python3
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""End-to-end QA of the passive radar chain on the CPU (issue 33):

  passive_scene_source -> clutter_cancel (ECA-B) -> cross_ambiguity -> cfar_2d -> tracker

- every simulated target above the detection threshold is detected in every CPI at its
  bistatic range and velocity (within half a bin) and confirmed as a track there;
- no detection and no track on the direct path or the clutter (zero Doppler, delays below
  the cancellation's taps), nor anywhere else;
- the false-alarm rate on target-free scenes (direct path and clutter cancelled, noise
  left) is the CFAR's design Pfa within +-10 %.

Small sizes (CPIs of a few thousand samples at 1 Msps, a UHF DVB-T-like illuminator): a
few seconds."""

import time

import numpy as np
from gnuradio import blocks, gr, gr_unittest
from gnuradio import gpuradar
from gnuradio.gpuradar import detections, passive_sim

C = passive_sim.SPEED_OF_LIGHT
FS, FC = 1e6, 600e6


def velocity_of_bin(k, n):
    return k * FS / n * C / FC


def scene_args(n, targets, **kw):
    """targets: [(delay samples, Doppler bin of an n-sample CPI, SNR dB per sample)].
    The reference's SNR is well above the direct path's: the cancellation subtracts the
    reference scaled to the direct path, its noise with it (a reference 20 dB weaker
    than the direct path would add 20 dB of noise to the surveillance channel)."""
    args = dict(fs=FS, fc=FC, illuminator="ofdm", ofdm_fft=256, ofdm_used=255, ofdm_cp=32,
                ref_snr_db=70.0, dpi_db=50.0, dpi_azimuth_deg=-40.0, clutter_count=16,
                clutter_max_delay=12, clutter_cnr_db=35.0,
                ranges_m=[d * C / FS for d, _, _ in targets],
                velocities_mps=[velocity_of_bin(k, n) for _, k, _ in targets],
                snr_db=[s for _, _, s in targets], truth_every=n)
    args.update(kw)
    return args


def run_chain(sc, n, ncpi, nrange, khalf, ntaps, nbatches, cfar_kw, window):
    """(detections PDUs, tracks PDUs, the CFAR mask (ncpi, nrange, 2K+1), cancel block)."""
    src = gpuradar.passive_scene_source(**sc)
    cancel = gpuradar.clutter_cancel(n, ntaps, nbatches, "eca_b", 1, backend="cpu")
    caf = gpuradar.cross_ambiguity(FS, FC, n, nrange, khalf, method="direct",
                                   window=window, backend="cpu")
    cfar = gpuradar.cfar_2d(nrange, 2 * khalf + 1, backend="cpu", **cfar_kw)
    trk = gpuradar.tracker(9.21, 2, 3, 3, 0.5 * C / FS, 0.5 * velocity_of_bin(1, n), 50.0,
                           n / FS)
    tb = gr.top_block()
    dets, tracks = blocks.message_debug(), blocks.message_debug()
    mask = blocks.vector_sink_b(2 * khalf + 1)
    for port in (0, 1):
        tb.connect((src, port), blocks.head(gr.sizeof_gr_complex, ncpi * n), (cancel, port))
        tb.connect((cancel, port), (caf, port))
    tb.connect(caf, cfar, mask)
    tb.msg_connect(cfar, "detections", dets, "store")
    tb.msg_connect(cfar, "detections", trk, "detections")
    tb.msg_connect(trk, "tracks", tracks, "store")
    tb.run()
    deadline = time.monotonic() + 10.0
    while trk.scans() + trk.bad_messages() < dets.num_messages() and \
            time.monotonic() < deadline:
        time.sleep(0.01)
    self_check = trk.bad_messages()
    return ([dets.get_message(i) for i in range(dets.num_messages())],
            [tracks.get_message(i) for i in range(tracks.num_messages())],
            np.array(mask.data(), np.uint8).reshape(-1, nrange, 2 * khalf + 1), cancel,
            self_check)


class qa_passive_chain(gr_unittest.TestCase):

    def setUp(self):
        if not hasattr(gpuradar, "clutter_cancel"):
            self.skipTest("this build has no clutter_cancel block")

    def test_001_targets_detected_and_tracked_nothing_else(self):
        n, ncpi, nrange, khalf, ntaps, nbatches = 4096, 5, 64, 10, 16, 4
        # Integrated SNR: per-sample SNR + 10 log10(N) (36.1 dB) - the Hann window's
        # processing loss (1.8 dB) - ECA-B's loss (ntaps / batch: 0.07 dB): 17-25 dB,
        # above the CA-CFAR's threshold (104 training cells at Pfa 1e-6: alpha = 14.8,
        # 11.7 dB) by 5 dB or more: Pd > 0.999 for a steady target. Targets 12 range
        # bins apart: none in another's training window (8 bins), which would raise its
        # threshold.
        targets = [(20, 3, -17.0), (32, -5, -14.0), (44, 6, -12.0), (56, -2, -9.0)]
        sc = scene_args(n, targets, seed=11)
        cfar_kw = dict(guard_range=2, train_range=6, guard_doppler=1, train_doppler=2,
                       pfa=1e-6, local_max_only=True, cluster=True)
        pdus, track_pdus, _, cancel, bad = run_chain(sc, n, ncpi, nrange, khalf, ntaps,
                                                     nbatches, cfar_kw, "hann")
        self.assertEqual(bad, 0)
        self.assertEqual(len(pdus), ncpi)
        # the direct path (50 dB) and clutter (35 dB) cancelled by well over 30 dB
        self.assertGreater(float(np.min(cancel.cancellation_db())), 30.0)
        dr, dv = C / FS, velocity_of_bin(1, n)
        truth = passive_sim.PassiveScene(**sc).truth(0)
        for cpi, pdu in enumerate(pdus):
            meta, found = detections.pdu_to_python(pdu)
            self.assertTrue(meta.get("bistatic"))
            for t in truth:
                near = [d for d in found if abs(d["range_m"] - t["bistatic_range_m"]) <= 0.5 * dr
                        and abs(d["velocity_mps"] - t["velocity_mps"]) <= 0.5 * dv]
                self.assertEqual(len(near), 1, (cpi, t, found))
            # nothing else: no direct path, no clutter, no false alarm
            self.assertEqual(len(found), len(truth), (cpi, found))
            self.assertFalse(any(abs(d["velocity_mps"]) < dv and
                                 d["range_m"] < (sc["clutter_max_delay"] + 1) * dr
                                 for d in found))
        meta, last = detections.pdu_to_python(track_pdus[-1])
        self.assertTrue(meta.get("bistatic"))
        confirmed = [t for t in last if t["status"] == "confirmed"]
        self.assertEqual(len(confirmed), len(truth), last)
        for t in truth:
            self.assertTrue(any(abs(c["range_m"] - t["bistatic_range_m"]) <= 0.5 * dr and
                                abs(c["velocity_mps"] - t["velocity_mps"]) <= 0.5 * dv
                                for c in confirmed), (t, confirmed))
        self.assertEqual(len(last), len(truth), last)  # no tentative track either

    def test_002_pfa_on_target_free_scenes(self):
        # CA-CFAR on exponential noise cells gives exactly its design Pfa. After the
        # cancellation the CAF of noise against a white illuminator (all OFDM subcarriers
        # but DC) with a rectangular window has independent cells, except in the
        # cancellation's notch (lags < ntaps, |Doppler bin| < nbatches: the residual
        # there is projected out, quieter). Cells counted: those whose whole CFAR window
        # lies inside the map and outside the notch.
        n, ncpi, nrange, khalf, ntaps, nbatches = 1024, 150, 40, 12, 8, 4
        gr_, tr, gd, td, pfa = 1, 4, 1, 2, 1e-2
        sc = scene_args(n, [], seed=23, clutter_max_delay=6)
        cfar_kw = dict(guard_range=gr_, train_range=tr, guard_doppler=gd, train_doppler=td,
                       pfa=pfa, local_max_only=False, cluster=False, range_edge="clip",
                       doppler_edge="clip")
        _, _, mask, _, bad = run_chain(sc, n, ncpi, nrange, khalf, ntaps, nbatches, cfar_kw,
                                       "rectangular")
        self.assertEqual(bad, 0)
        self.assertEqual(mask.shape[0], ncpi)
        reach_r, reach_d = gr_ + tr, gd + td
        rows = np.arange(ntaps + reach_r, nrange - reach_r)
        cols = np.arange(reach_d, 2 * khalf + 1 - reach_d)
        cells = mask[:, rows][:, :, cols]
        measured = float(cells.mean())
        # ~ncpi x 20 x 19 x 0.01 = 570 false alarms: 1 sigma = 4.2 %
        self.assertGreater(cells.size * pfa, 500)
        self.assertLess(abs(measured / pfa - 1.0), 0.10, (measured, cells.size))


if __name__ == "__main__":
    gr_unittest.run(qa_passive_chain)
