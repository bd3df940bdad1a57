#!/usr/bin/env python3
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""The transmit path closed without hardware: pulse_tx_source -> radar_channel ->
pulse_framer -> pulse_doppler_processor -> cfar_2d on the CPU backend detects every target
at its range and velocity (+-1 bin), with the burst tags (times, lengths) and the CPI
times that follow from them checked."""

import numpy as np
import pmt
from gnuradio import blocks, gr, gr_unittest
from gnuradio import gpuradar
from gnuradio.gpuradar import detections, scene_truth

C = 299792458.0
FS, FC, PRI, NPULSES, NCPI = 5e6, 3e9, 1000, 32, 4
GATE_START, NRANGE = 100, 800
T0 = 5.0  # tx_time of pulse 0 (s)
VBIN = FS / PRI / NPULSES * C / (2 * FC)  # one Doppler bin (m/s)
RANGES = [6000.0, 12030.0, 18000.0]
VELOCITIES = [3 * VBIN, -5 * VBIN, 8 * VBIN]
SNR_DB = [0.0, -3.0, 3.0]  # per sample, before 20 dB of compression and 15 of Doppler


class recorder(gr.basic_block):
    def __init__(self):
        gr.basic_block.__init__(self, "recorder", None, None)
        self.message_port_register_in(pmt.intern("in"))
        self.set_msg_handler(pmt.intern("in"), self.msgs_append)
        self.msgs = []

    def msgs_append(self, msg):
        self.msgs.append(msg)


class qa_transmit_loop(gr_unittest.TestCase):
    def run_loop(self, waveform, bandwidth, pulse_width):
        tb = gr.top_block()
        tx = gpuradar.pulse_tx_source(waveform, [], bandwidth, pulse_width, FS, True,
                                      FS / PRI, 0.5, "cpi", NPULSES, NCPI, T0, "device")
        ch = gpuradar.radar_channel(FS, FC, RANGES, VELOCITIES, SNR_DB, "snr_db", 0.0,
                                    0.25, 1.0, 30.0, 0, 9)
        framer = gpuradar.pulse_framer(PRI, GATE_START, NRANGE, NPULSES, FS, FC, "rx_time",
                                       backend="cpu")
        pd = gpuradar.pulse_doppler_processor(
            nrange=NRANGE, npulses=NPULSES, nfft=NPULSES, channels=1, waveform=waveform,
            custom_waveform=[], bandwidth=bandwidth, pulse_width=pulse_width, samp_rate=FS,
            up_chirp=True, range_window="hann", normalize=True, doppler_window="hann",
            fftshift=True, envelope_mode="square_law", db=False, backend="cpu")
        cfar = gpuradar.cfar_2d(NRANGE, NPULSES, 1, 2, 8, 1, 4, 1e-6, "ca", 0, "clip",
                                "wrap", True, 4096, "cpu")
        tx_copy = blocks.vector_sink_c()  # keeps the transmitter's tags
        rec = recorder()
        tb.connect(tx, ch, framer, pd, cfar, blocks.null_sink(NPULSES))  # mask: a byte per cell
        tb.connect(tx, tx_copy)
        tb.msg_connect(cfar, "detections", rec, "in")
        tb.run()
        return tx_copy.tags(), rec.msgs, framer

    def check_burst_tags(self, tags):
        by_key = {}
        for t in tags:
            by_key.setdefault(pmt.symbol_to_string(t.key), []).append(t)
        burst = NPULSES * PRI
        self.assertEqual([t.offset for t in by_key["tx_sob"]], [b * burst for b in range(NCPI)])
        self.assertEqual([t.offset for t in by_key["tx_eob"]],
                         [(b + 1) * burst - 1 for b in range(NCPI)])
        for b, t in enumerate(by_key["tx_time"]):
            self.assertEqual(t.offset, b * burst)
            secs = pmt.to_uint64(pmt.tuple_ref(t.value, 0))
            frac = pmt.to_double(pmt.tuple_ref(t.value, 1))
            self.assertEqual(secs, 5)
            self.assertAlmostEqual(frac, b * burst / FS, places=12)

    def check_detections(self, msgs, framer):
        self.assertEqual(framer.emitted_cpis(), NCPI)
        self.assertEqual(framer.dropped_cpis(), 0)
        self.assertEqual(len(msgs), NCPI)
        for cpi, msg in enumerate(msgs):
            meta, dets = detections.pdu_to_python(msg)
            for r, v in zip(RANGES, VELOCITIES):
                rb = scene_truth.expected_range_bin(r, FS, GATE_START)
                db = scene_truth.expected_doppler_bin(v, FC, FS / PRI, NPULSES)
                hits = [d for d in dets
                        if abs(d["range_bin"] - rb) <= 1 and abs(d["doppler_bin"] - db) <= 1]
                self.assertTrue(hits, f"CPI {cpi}: target at {r} m, {v:.2f} m/s (bins {rb}, "
                                      f"{db}) not detected: {dets}")
                best = max(hits, key=lambda d: d["power"])
                self.assertAlmostEqual(best["range_m"], r, delta=1.5 * C / (2 * FS))
                self.assertAlmostEqual(best["velocity_mps"], v, delta=1.5 * VBIN)
                # The CPI's time follows from the burst's tx_time through rx_time.
                secs, frac = best["rx_time"]
                self.assertEqual(secs, 5)
                self.assertAlmostEqual(frac, cpi * NPULSES * PRI / FS, places=9)
            # Nothing far from the targets (pfa 1e-6 over 25600 cells).
            far = [d for d in dets
                   if all(abs(d["range_bin"] - scene_truth.expected_range_bin(r, FS, GATE_START))
                          > 3 for r in RANGES)]
            self.assertLessEqual(len(far), 1, far)

    def test_003_clock_offset_20ppm_framer_stays_on_the_pulses(self):
        # A receive sample clock 20 ppm fast: over 10 000 PRIs of 100 samples the pulses
        # walk 20 samples through a fixed schedule. The channel's rx_time tags (one per
        # CPI burst) carry true time, the framer measures the drift and moves its
        # schedule: every pulse's leakage (system delay 4) starts within one sample of
        # gate sample 4 in all 625 CPIs, none dropped, and the cpi tags report the drift.
        fs, pri, nrange, npulses, ncpi, delay, ppm = 1e6, 100, 16, 16, 625, 4, 20.0
        tb = gr.top_block()
        tx = gpuradar.pulse_tx_source("lfm", [], 2e5, 10e-6, fs, True, fs / pri, 0.5,
                                      "cpi", npulses, ncpi, T0, "device")
        ch = gpuradar.radar_channel(fs, FC, [], [], [], "snr_db", 0.0, 0.25, 0.0, 1.0,
                                    delay, 9, clock_offset_ppm=ppm)
        framer = gpuradar.pulse_framer(pri, 0, nrange, npulses, fs, FC, "rx_time",
                                       backend="cpu")
        sink = blocks.vector_sink_c(nrange)
        tb.connect(tx, ch, framer, sink)
        tb.run()
        self.assertEqual(framer.dropped_cpis(), 0)
        self.assertEqual(framer.rejected_time_jumps(), 0)
        self.assertGreaterEqual(framer.emitted_cpis(), ncpi - 1)  # the last may run short
        pulses = np.abs(np.array(sink.data()).reshape(-1, nrange)) > 0.1
        first = np.argmax(pulses, axis=1)  # each gate's first leakage sample
        cpi_of = np.arange(len(first)) // npulses
        misaligned = np.unique(cpi_of[(np.abs(first - delay) > 1) | ~pulses.any(axis=1)])
        self.assertEqual(len(misaligned), 0, f"misaligned CPIs: {misaligned[:10]}")
        tags = [t for t in sink.tags() if pmt.symbol_to_string(t.key) == "cpi"]
        slips = [pmt.to_long(pmt.dict_ref(t.value, pmt.intern("clock_slip_samples"),
                                          pmt.PMT_NIL)) for t in tags]
        self.assertEqual(slips[0], 0)
        self.assertTrue(all(b - a in (0, 1) for a, b in zip(slips, slips[1:])), slips)
        self.assertAlmostEqual(slips[-1], len(first) * pri * ppm * 1e-6, delta=1.5)
        self.assertAlmostEqual(framer.clock_offset_ppm(), ppm, delta=0.01)
        last_ppm = pmt.to_double(pmt.dict_ref(tags[-1].value, pmt.intern("clock_offset_ppm"),
                                              pmt.PMT_NIL))
        self.assertAlmostEqual(last_ppm, ppm, delta=0.01)

    def test_001_lfm_loop(self):
        tags, msgs, framer = self.run_loop("lfm", 1e6, 20e-6)
        self.check_burst_tags(tags)
        self.check_detections(msgs, framer)

    def test_002_p4_loop(self):
        tags, msgs, framer = self.run_loop("p4:100", 0.0, 20e-6)
        self.check_burst_tags(tags)
        self.check_detections(msgs, framer)


if __name__ == "__main__":
    gr_unittest.run(qa_transmit_loop)
