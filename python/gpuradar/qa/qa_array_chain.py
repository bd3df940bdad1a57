#!/usr/bin/env python3
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""QA for the receive array through a flowgraph (CPU backend): radar_scene_source with
several channels -> one pulse_framer per channel -> streams_to_vector (channel-major
pulses) -> beamformer. The target's echo must come out of the beam steered at its
azimuth, the channels must differ by the array phase written from the geometry, and the
truth must carry the azimuth. radar_channel with several outputs: the same array phase,
and rx_time on every output."""

import numpy as np
import pmt
from gnuradio import blocks, gr, gr_unittest
from gnuradio import gpuradar
from gnuradio.gpuradar import scene_truth

C = 299792458.0


class qa_array_chain(gr_unittest.TestCase):
    fs, fc, pri, gate, nrange, npulses, nch = 2e6, 3e9, 1000, 0, 512, 8, 6

    def setUp(self):
        self.tb = gr.top_block()

    def tearDown(self):
        self.tb = None

    def scene(self, azimuth, **kw):
        return gpuradar.radar_scene_source(
            self.fs, self.fc, self.fs / self.pri, 1e6, 20e-6, [], [15000.0], [0.0], [10.0],
            "snr_db", 0.0, kw.pop("noise_power", 1.0), 0.0, truth_every=0,
            azimuths_deg=[azimuth], nchannels=self.nch, **kw)

    def channel_major_pulses(self, scene, tail):
        """scene outputs -> framers -> one channel-major pulse stream -> tail block."""
        join = blocks.streams_to_vector(gr.sizeof_gr_complex * self.nrange, self.nch)
        for c in range(self.nch):
            head = blocks.head(gr.sizeof_gr_complex, self.pri * self.npulses * 2)
            framer = gpuradar.pulse_framer(self.pri, self.gate, self.nrange, self.npulses,
                                           self.fs, self.fc, "rx_time", backend="cpu")
            self.tb.connect((scene, c), head, framer, (join, c))
        self.tb.connect(join, tail)

    def test_001_echo_in_the_beam_steered_at_the_target(self):
        angles = np.linspace(-60.0, 60.0, 13)
        for azimuth in (-40.0, 20.0):
            self.tb = gr.top_block()
            scene = self.scene(azimuth)
            bf = gpuradar.beamformer(self.nch, self.nrange, [], len(angles), -60.0, 60.0,
                                     0.5, [], 0.0, "rectangular", backend="cpu")
            snk = blocks.vector_sink_c(len(angles) * self.nrange)
            rec = scene_truth.truth_recorder()
            self.channel_major_pulses(scene, bf)
            self.tb.connect(bf, snk)
            self.tb.msg_connect(scene, "truth", rec, "truth")
            self.tb.run()
            y = np.array(snk.data()).reshape(-1, len(angles), self.nrange)
            self.assertEqual(y.shape[0], 2 * self.npulses)
            b = scene_truth.expected_range_bin(15000.0, self.fs, self.gate)
            energy = np.sum(np.abs(y[:, :, b:b + 40]) ** 2, axis=(0, 2))
            self.assertEqual(angles[np.argmax(energy)], azimuth)
            self.assertEqual(rec.records()[0]["azimuth_deg"], azimuth)
            tag = [gr.tag_to_python(t) for t in snk.tags()
                   if str(gr.tag_to_python(t).key) == "cpi"][0]
            self.assertEqual(tag.value["beams"], len(angles))

    def test_002_channels_differ_by_array_phase_and_errors(self):
        azimuth, gains, phases = 30.0, [0, 0, 6, 0, 0, -3], [0, 10, 0, 0, -20, 0]
        scene = self.scene(azimuth, noise_power=0.0, channel_gain_db=gains,
                           channel_phase_deg=phases, element_spacing_wl=0.4)
        snk = blocks.vector_sink_c(self.nch * self.nrange)
        self.channel_major_pulses(scene, snk)
        self.tb.run()
        y = np.array(snk.data()).reshape(-1, self.nch, self.nrange)
        b = scene_truth.expected_range_bin(15000.0, self.fs, self.gate)
        seg = y[:, :, b:b + 40]
        ratio = seg / seg[:, :1, :]
        c = np.arange(self.nch)
        want = (10 ** (np.array(gains) / 20.0) *
                np.exp(1j * (2 * np.pi * 0.4 * c * np.sin(np.radians(azimuth)) +
                             np.radians(phases))))
        np.testing.assert_allclose(ratio, np.broadcast_to(want[None, :, None], ratio.shape),
                                   rtol=1e-4, atol=1e-4)

    def test_003_monopulse_finds_the_scene_azimuth(self):
        # Scene -> framers -> beamformer -> monopulse at the echo's samples: the
        # estimate lands within 4 of its own standard deviations of the truth, which
        # lies between two beams.
        azimuth = 11.3
        scene = self.scene(azimuth)
        angles = np.linspace(-60.0, 60.0, 13)
        bf = gpuradar.beamformer(self.nch, self.nrange, [], len(angles), -60.0, 60.0,
                                 0.5, [], 0.0, "rectangular", backend="cpu")
        snk = blocks.vector_sink_c(len(angles) * self.nrange)
        self.channel_major_pulses(scene, bf)
        self.tb.connect(bf, snk)
        self.tb.run()
        y = np.array(snk.data()).reshape(-1, len(angles), self.nrange)
        lam = C / self.fc
        xyz = [v for c in range(self.nch)
               for v in ((c - (self.nch - 1) / 2) * 0.5 * lam, 0.0, 0.0)]
        w = gpuradar.beamformer_weights(xyz, lam, angles.tolist(), "rectangular")
        mp = gpuradar.monopulse(xyz, lam, w, angles.tolist())
        b = scene_truth.expected_range_bin(15000.0, self.fs, self.gate)
        # One sample inside the echo per pulse (10 dB per channel): every estimate within
        # 4 of its standard deviations, their mean within 4 standard errors.
        est = [mp.estimate(y[p, :, b + 20].tolist(), 1.0) for p in range(y.shape[0])]
        az = np.array([e["azimuth_deg"] for e in est])
        std = np.array([e["std_deg"] for e in est])
        self.assertTrue(np.all(np.abs(az - azimuth) < 4 * std))
        self.assertLess(abs(az.mean() - azimuth), 4 * std.mean() / np.sqrt(len(az)))
        with self.assertRaisesRegex(ValueError, "beams"):
            mp.estimate([1.0, 2.0], 1.0)

    def test_004_radar_channel_array_outputs(self):
        # A transmit stream through radar_channel with 4 channels: every output carries
        # the echo with the array phase of the target's azimuth and the tx_time -> rx_time
        # tag.
        nch, az, n, fs, fc = 4, -25.0, 20000, 1e6, 5e9
        rng = np.random.default_rng(4)
        x = (rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(np.complex64)
        tag = gr.tag_utils.python_to_tag((100, pmt.intern("tx_time"),
                                          pmt.make_tuple(pmt.from_uint64(3),
                                                         pmt.from_double(0.5))))
        src = blocks.vector_source_c(x.tolist(), False, 1, [tag])
        ch = gpuradar.radar_channel(fs, fc, [3000.0], [10.0], [6.0], noise_power=0.0,
                                    azimuths_deg=[az], nchannels=nch,
                                    element_spacing_wl=0.5)
        snks = [blocks.vector_sink_c() for _ in range(nch)]
        self.tb.connect(src, ch)
        for c in range(nch):
            self.tb.connect((ch, c), snks[c])
        self.tb.run()
        y = np.array([s.data() for s in snks])
        active = np.abs(y[0]) > 0
        self.assertGreater(active.sum(), n // 2)
        for c in range(1, nch):
            want = np.exp(1j * np.pi * c * np.sin(np.radians(az)))
            np.testing.assert_allclose(y[c][active] / y[0][active], want, atol=1e-4)
            rx = [gr.tag_to_python(t) for t in snks[c].tags()]
            self.assertEqual([(t.offset, str(t.key)) for t in rx], [(100, "rx_time")])

    def test_005_bad_array_parameters_raise_naming_them(self):
        base = (self.fs, self.fc, self.fs / self.pri, 1e6, 20e-6, [], [15000.0], [0.0],
                [10.0])
        for kwargs, name in (
                (dict(nchannels=4, channel_gain_db=[0.0, 1.0]), "channel_gain_db"),
                (dict(nchannels=4, channel_phase_deg=[0.0] * 5), "channel_phase_deg"),
                (dict(nchannels=2, element_positions_m=[0.0] * 5), "element_positions_m"),
                (dict(nchannels=4, element_spacing_wl=-1.0), "element_spacing_wl"),
                (dict(nchannels=0), "nchannels"),
                (dict(azimuths_deg=[95.0]), "azimuths_deg"),
                (dict(azimuths_deg=[0.0, 1.0]), "azimuths_deg")):
            with self.assertRaisesRegex(ValueError, name):
                gpuradar.radar_scene_source(*base, **kwargs)


if __name__ == "__main__":
    gr_unittest.run(qa_array_chain)
