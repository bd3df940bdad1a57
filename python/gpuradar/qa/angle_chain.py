#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""The chain the angle-estimation QA builds (CPU backend), for any array and beams:
radar_scene_source with nch channels -> one pulse_framer per channel ->
streams_to_vector -> beamformer -> pulse_doppler_processor (beam-major power maps) ->
cfar_2d(angles=True) -> the detections' angles; and the per-channel SNR of the target's
range-Doppler cell, calibrated against the scene source through the same chain.

A test class mixes angle_chain in and says what differs: nch, its beams (`beams`, the
azimuths the beamformer gets by default), scene_direction(direction) (the scene's
keyword arguments placing the target) and beamformer_kwargs(beams, taper) (the array
and the beams' elevations), weights(taper) and pattern(taper, direction) (the beams'
weights and their voltage for a unit wave from the direction)."""

import time

import numpy as np
from gnuradio import blocks, gr
from gnuradio import gpuradar
from gnuradio.gpuradar import detections

C = 299792458.0


class angle_chain:
    fs, fc, pri, nrange, npulses = 2e6, 3e9, 200, 128, 16
    range_m = 6000.0

    def prf(self):
        return self.fs / self.pri

    def velocity(self):
        # Two Doppler bins from zero: a moving target, on a bin.
        return 2 * self.prf() / self.npulses * C / (2 * self.fc)

    def scene_direction(self, direction):
        return {"azimuths_deg": [direction]}

    def beamformer_kwargs(self, beams, taper):
        return {"beam_angles_deg": list(beams)}

    def run_chain(self, direction, snr_db, noise_power, ncpi, seed, taper,
                  angles=True, beams=None, range_window="hamming", guard_range=12,
                  tracker=None):
        """(detection PDUs, power maps ncpi x nrange x nbeams x ndoppler); with a
        tracker on the detections, its tracks PDUs are in self.tracks."""
        tb = gr.top_block()
        scene = gpuradar.radar_scene_source(
            self.fs, self.fc, self.prf(), 1e6, 10e-6, [], [self.range_m],
            [self.velocity()], [snr_db], "snr_db", 0.0, noise_power, 0.0,
            truth_every=0, seed=seed, nchannels=self.nch,
            **self.scene_direction(direction))
        join = blocks.streams_to_vector(gr.sizeof_gr_complex * self.nrange, self.nch)
        for c in range(self.nch):
            head = blocks.head(gr.sizeof_gr_complex, self.pri * self.npulses * ncpi)
            framer = gpuradar.pulse_framer(self.pri, 0, self.nrange, self.npulses,
                                           self.fs, self.fc, "rx_time", backend="cpu")
            tb.connect((scene, c), head, framer, (join, c))
        beams = self.beams if beams is None else np.asarray(beams)
        nb = len(beams)
        proc = gpuradar.pulse_doppler_processor(
            self.nrange, self.npulses, self.npulses, nb, "lfm", [], 1e6, 10e-6, self.fs,
            range_window=range_window, backend="cpu")
        bf = gpuradar.beamformer(self.nch, self.nrange, window=taper,
                                 backend="cpu", **self.beamformer_kwargs(beams, taper))
        tb.connect(join, bf, proc)
        cfar = gpuradar.cfar_2d(self.nrange, self.npulses, nb, guard_range, 8, 1, 2, 1e-6,
                                backend="cpu", cluster=True, angles=angles)
        maps = blocks.vector_sink_f(nb * self.npulses)
        msgs = blocks.message_debug()
        tb.connect(proc, cfar, blocks.null_sink(nb * self.npulses))
        tb.connect(proc, maps)
        tb.msg_connect(cfar, "detections", msgs, "store")
        tracks = blocks.message_debug()
        if tracker is not None:
            tb.msg_connect(cfar, "detections", tracker, "detections")
            tb.msg_connect(tracker, "tracks", tracks, "store")
        tb.run()
        if tracker is not None:
            deadline = time.time() + 10  # messages may trail the stream's end
            while tracks.num_messages() < ncpi and time.time() < deadline:
                time.sleep(0.01)
            self.tracks = [detections.pdu_to_python(tracks.get_message(i))
                           for i in range(tracks.num_messages())]
        pdus = [msgs.get_message(i) for i in range(msgs.num_messages())]
        m = np.array(maps.data()).reshape(-1, self.nrange, nb, self.npulses)
        return pdus, m

    def cell_snr_db_per_unit_snr(self, direction, taper):
        """The per-channel SNR (dB) in the target's range-Doppler cell for a scene
        snr_db of 0: the noise-free target power per channel over the noise power per
        channel, both measured through the chain."""
        _, clean = self.run_chain(direction, 0.0, 0.0, 1, 1, taper, angles=False)
        _, noise = self.run_chain(direction, -300.0, 1.0, 4, 2, taper, angles=False)
        g = self.pattern(taper, direction)
        w = self.weights(taper)
        r, b, d = np.unravel_index(np.argmax(clean[0]), clean[0].shape)
        signal = clean[0, r, b, d] / abs(g[b]) ** 2
        # The gate's last pulse-length rows hold partial matched-filter sums (less
        # noise): the noise is measured before them.
        rows = self.nrange - 2 * int(10e-6 * self.fs)
        gain = np.sum(abs(w) ** 2, axis=1)[None, None, :, None]
        noise_per_channel = np.mean(noise[:, :rows] / gain)
        return 10 * np.log10(signal / noise_per_channel)

    def target_detections(self, pdus):
        """Per CPI the strongest listed detection (the target's; range sidelobes and
        false alarms are weaker), and how many were listed within a range bin of it."""
        out = []
        for msg in pdus:
            dets = detections.pdu_to_dicts(msg)
            best = max(dets, key=lambda d: d["power"])
            near = [d for d in dets if abs(d["range_m"] - best["range_m"]) < 40
                    and d["doppler_bin"] == best["doppler_bin"]]
            out.append((best, len(near)))
        return out

    def monte_carlo_detections(self, direction, taper, seed, ncpi):
        """The target's detection per CPI over ncpi CPIs at 20 dB per channel in its
        cell, after checking that each CPI lists it once at its velocity."""
        snr_db = 20.0 - self.cell_snr_db_per_unit_snr(direction, taper)
        pdus, _ = self.run_chain(direction, snr_db, 1.0, ncpi, seed, taper)
        self.assertEqual(len(pdus), ncpi)
        self.assertTrue(detections.pdu_metadata(pdus[0])["angles"])
        found = self.target_detections(pdus)
        # One target: listed once although several beams detect it.
        self.assertEqual([n for _, n in found], [1] * ncpi)
        # At its velocity (within half a Doppler bin) too.
        half_bin = 0.5 * self.prf() / self.npulses * C / (2 * self.fc)
        vel = np.array([d["velocity_mps"] for d, _ in found])
        self.assertLess(np.max(np.abs(vel - self.velocity())), half_bin)
        return [d for d, _ in found]

    def expect_tracked(self, direction, axes, seed, ncpi=12):
        """The chain with a tracker on the detections (the scan times are the CPIs'
        rx_time) at 20 dB per channel: one confirmed track with every CPI's hit, each
        of its filtered angles in `axes` (names, with the truth in the same order as
        `direction`) within 4 of its standard deviations of the truth and more accurate
        than one detection's."""
        snr_db = 20.0 - self.cell_snr_db_per_unit_snr(direction, "rectangular")
        trk = gpuradar.tracker(range_sigma_m=10.0, velocity_sigma_mps=3.0)
        pdus, _ = self.run_chain(direction, snr_db, 1.0, ncpi, seed, "rectangular",
                                 tracker=trk)
        self.assertEqual(len(self.tracks), ncpi)
        one = [d for d, _ in self.target_detections(pdus)]
        confirmed = [t for t in self.tracks[-1][1] if t["status"] == "confirmed"]
        best = max(confirmed, key=lambda t: t["hits"])
        self.assertEqual(best["hits"], ncpi)
        truths = direction if isinstance(direction, tuple) else (direction,)
        for axis, truth in zip(axes, truths):
            self.assertLess(abs(best[axis + "_deg"] - truth), 4 * best[axis + "_std_deg"])
            self.assertLess(best[axis + "_std_deg"],
                            np.mean([d[axis + "_std_deg"] for d in one]))
