#!/usr/bin/env python3
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""QA for gpuradar.tracker: detections PDUs in, tracks PDUs out (ids, status, state,
covariance, time), every parameter shown to act, bad messages counted and survived, bad
parameters rejected with ValueError naming them."""

import os
import re
import sys
import time

import numpy as np
import pmt
from gnuradio import blocks, gr, gr_unittest
from gnuradio import gpuradar
from gnuradio.gpuradar import detections

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import log_lines  # noqa: E402


def detections_pdu(cpi, dets, rx_time=None, drop=None):
    """A cfar_2d-like PDU: dets is a list of (range_m, velocity_mps) or (range_m,
    velocity_mps, azimuth_deg, azimuth_std_deg); `drop` names a field to leave out of
    every detection."""
    meta = pmt.make_dict()
    meta = pmt.dict_add(meta, pmt.intern("cpi"), pmt.from_uint64(cpi))
    if rx_time is not None:
        secs = int(rx_time)
        meta = pmt.dict_add(meta, pmt.intern("rx_time"),
                            pmt.make_tuple(pmt.from_uint64(secs),
                                           pmt.from_double(rx_time - secs)))
    v = pmt.make_vector(len(dets), pmt.PMT_NIL)
    for i, det in enumerate(dets):
        d = pmt.make_dict()
        fields = [("range_m", det[0]), ("velocity_mps", det[1]), ("snr_db", 20.0)]
        if len(det) == 4:
            fields += [("azimuth_deg", det[2]), ("azimuth_std_deg", det[3])]
        for k, x in fields:
            if k != drop:
                d = pmt.dict_add(d, pmt.intern(k), pmt.from_double(x))
        pmt.vector_set(v, i, d)
    return pmt.cons(meta, v)


class qa_tracker(gr_unittest.TestCase):
    def run_tracker(self, trk, msgs, expect):
        """Posts `msgs` to the tracker in a running flowgraph; returns the tracks PDUs
        (as (meta, tracks) in Python) once `expect` of them came out."""
        tb = gr.top_block()
        dbg = blocks.message_debug()
        tb.msg_connect(trk, "tracks", dbg, "store")
        tb.start()
        for m in msgs:
            trk.to_basic_block()._post(pmt.intern("detections"), m)
        deadline = time.time() + 10
        while dbg.num_messages() < expect and time.time() < deadline:
            time.sleep(0.01)
        time.sleep(0.05)  # a surplus message would show here
        tb.stop()
        tb.wait()
        return [detections.pdu_to_python(dbg.get_message(i))
                for i in range(dbg.num_messages())]

    def test_001_two_targets_confirmed_with_stable_ids(self):
        rng = np.random.default_rng(1)
        truth = [(1000.0, 20.0), (1600.0, -10.0)]  # range at t=0, closing velocity
        msgs = []
        for k in range(20):
            t = 100.0 + 0.1 * k
            dets = [(r0 - v * (t - 100.0) + rng.normal(0, 3.0), v + rng.normal(0, 0.3))
                    for r0, v in truth]
            msgs.append(detections_pdu(k, dets, rx_time=t))
        trk = gpuradar.tracker(gate=9.21, confirm_m=3, confirm_n=4, delete_misses=3,
                               range_sigma_m=3.0, velocity_sigma_mps=0.3,
                               acceleration_sigma=1.0)
        out = self.run_tracker(trk, msgs, 20)
        self.assertEqual(len(out), 20)
        self.assertEqual(trk.scans(), 20)
        self.assertEqual(trk.bad_messages(), 0)
        # Tentative for two scans, confirmed at the third hit (M = 3).
        self.assertEqual([t["status"] for t in out[1][1]], ["tentative"] * 2)
        self.assertEqual([t["status"] for t in out[2][1]], ["confirmed"] * 2)
        ids = sorted(t["id"] for t in out[2][1])
        for k, (meta, tracks) in enumerate(out):
            self.assertAlmostEqual(meta["time_s"], 100.0 + 0.1 * k, 6)
            self.assertEqual(meta["cpi"], k)
            self.assertEqual(meta["ntracks"], 2)
            self.assertEqual(sorted(t["id"] for t in tracks), ids)
        meta, tracks = out[-1]
        t_end = 100.0 + 0.1 * 19
        for tr in sorted(tracks, key=lambda x: x["range_m"]):
            r0, v = truth[0] if tr["range_m"] < 1300 else truth[1]
            self.assertAlmostEqual(tr["range_m"], r0 - v * (t_end - 100.0), delta=3.0)
            self.assertAlmostEqual(tr["velocity_mps"], v, delta=0.3)
            # One velocity field, closing positive; the filter state holds range rate.
            self.assertNotIn("range_rate_mps", tr)
            self.assertEqual(list(tr["state"]), [tr["range_m"], -tr["velocity_mps"]])
            p = np.asarray(tr["covariance"]).reshape(2, 2)
            self.assertAlmostEqual(p[0, 1], p[1, 0])
            self.assertTrue(np.all(np.linalg.eigvalsh(p) > 0))
            self.assertLess(p[0, 0], 3.0 ** 2)  # better than one measurement
            self.assertAlmostEqual(tr["time_s"], t_end, 6)
            self.assertEqual((tr["hits"], tr["misses"], tr["scans"]), (20, 0, 20))

    def test_002_parameters_act(self):
        scan = lambda k, dets: detections_pdu(k, dets, rx_time=float(k))
        one = [(500.0, 5.0)]
        # Sigmas: the first scan's covariance is R = diag(range^2, velocity^2).
        out = self.run_tracker(gpuradar.tracker(range_sigma_m=7.0, velocity_sigma_mps=0.25),
                               [scan(0, one)], 1)
        self.assertEqual(list(out[0][1][0]["covariance"]), [49.0, 0.0, 0.0, 0.0625])
        # M of N: 2 of 2 confirms at the second scan; 3 of 3 only at the third.
        for m, n, confirmed_at in ((2, 2, 1), (3, 3, 2)):
            out = self.run_tracker(gpuradar.tracker(confirm_m=m, confirm_n=n),
                                   [scan(k, one) for k in range(3)], 3)
            status = [o[1][0]["status"] for o in out]
            self.assertEqual(status.index("confirmed"), confirmed_at, (m, n))
        # delete_misses: confirmed (1 of 1), then empty scans: coasting, deleted after K.
        for k_del in (1, 3):
            msgs = [scan(0, one)] + [scan(k, []) for k in range(1, 5)]
            out = self.run_tracker(
                gpuradar.tracker(confirm_m=1, confirm_n=1, delete_misses=k_del), msgs, 5)
            counts = [o[0]["ntracks"] for o in out]
            self.assertEqual(counts, [1] * k_del + [0] * (5 - k_del))
            self.assertEqual(out[k_del][0]["deleted_ids"], [out[0][1][0]["id"]])
            if k_del > 1:
                self.assertEqual(out[1][1][0]["status"], "coasting")
        # Gate: a detection 4 sigma away (d2 = 16 / 2 with P = R) joins a track under
        # gate 9 and starts a new one under gate 4.
        far = [(500.0 + 4 * 5.0, 5.0)]
        for gate, ntracks in ((9.0, 1), (4.0, 2)):
            out = self.run_tracker(gpuradar.tracker(gate=gate, acceleration_sigma=0.0,
                                                    range_sigma_m=5.0),
                                   [scan(0, one), scan(1, [(500.0 - 5.0, 5.0)])], 2)
            self.assertEqual(out[1][0]["ntracks"], 1)
            out = self.run_tracker(gpuradar.tracker(gate=gate, acceleration_sigma=0.0,
                                                    range_sigma_m=5.0),
                                   [scan(0, one), scan(1, [(far[0][0] - 5.0, 5.0)])], 2)
            self.assertEqual(out[1][0]["ntracks"], ntracks, gate)
        # acceleration_sigma: a scan without detection reports the prediction, whose
        # velocity variance grows by q dt (dt = 1 s).
        p11 = []
        for q in (0.0, 10.0):
            out = self.run_tracker(
                gpuradar.tracker(acceleration_sigma=q, confirm_m=1, confirm_n=1),
                [scan(0, one), scan(1, [])], 2)
            p11.append(out[1][1][0]["covariance"][3])
        self.assertAlmostEqual(p11[0], 0.5 ** 2)
        self.assertAlmostEqual(p11[1], 0.5 ** 2 + 10.0 ** 2)
        # scan_period_s: time from the cpi index when there is no rx_time.
        out = self.run_tracker(gpuradar.tracker(scan_period_s=0.25),
                               [detections_pdu(4, one), detections_pdu(6, one)], 2)
        self.assertEqual([o[0]["time_s"] for o in out], [1.0, 1.5])
        # max_tracks: three detections, room for two.
        out = self.run_tracker(gpuradar.tracker(max_tracks=2),
                               [scan(0, [(100.0, 0.0), (900.0, 0.0), (1700.0, 0.0)])], 1)
        self.assertEqual(out[0][0]["ntracks"], 2)

    def test_003_bad_messages_counted_and_survived(self):
        good = [(500.0, 5.0)]
        msgs = [
            pmt.intern("hello"),                                  # not a PDU
            detections_pdu(0, good),                              # no time at all
            detections_pdu(1, good, rx_time=10.0),                # good
            detections_pdu(2, good, rx_time=11.0, drop="velocity_mps"),
            detections_pdu(3, good, rx_time=11.0, drop="range_m"),
            detections_pdu(4, good, rx_time=9.0),                 # before the last scan
            detections_pdu(5, [(float("nan"), 1.0)], rx_time=12.0),
            detections_pdu(6, good, rx_time=12.0),                # good
        ]
        trk = gpuradar.tracker()
        out = self.run_tracker(trk, msgs, 2)
        self.assertEqual(trk.bad_messages(), 6)
        self.assertEqual(trk.scans(), 2)
        self.assertEqual(len(out), 2)
        self.assertEqual([o[0]["cpi"] for o in out], [1, 6])
        self.assertEqual(out[1][0]["bad_messages"], 6)
        self.assertEqual(out[1][1][0]["hits"], 2)  # the bad ones never touched the track

    def test_003b_a_stream_of_bad_messages_logs_a_few_lines_with_the_count(self):
        # 1000 garbage messages used to log 1000 lines. Now: the first, then one per
        # hundred (or per 10 s), each with the running count; the total stays exact.
        n = 1000
        code = f"""
import time
import pmt
from gnuradio import blocks, gr, gpuradar
tb = gr.top_block()
trk = gpuradar.tracker()
tb.msg_connect(trk, "tracks", blocks.message_debug(), "store")
t0 = time.monotonic()
tb.start()
for i in range({n}):
    trk.to_basic_block()._post(pmt.intern("detections"), pmt.intern("garbage"))
end = time.monotonic() + 30
while trk.bad_messages() < {n} and time.monotonic() < end:
    time.sleep(0.01)
tb.stop()
tb.wait()
result(trk.bad_messages(), time.monotonic() - t0)
"""
        results, lines = log_lines.run(code)
        bad, elapsed = results[0]
        self.assertEqual(int(bad), n)
        skipped = [line for line in lines if "message skipped" in line]
        self.assertIn("(1 bad messages so far)", skipped[0])
        # One per hundred, plus at most one per 10 s of the run (a slow machine).
        self.assertGreaterEqual(len(skipped), n // 100)
        self.assertLessEqual(len(skipped), n // 100 + 1 + float(elapsed) / 10, skipped)
        for line in skipped[1:]:
            self.assertRegex(line, r"\((\d+) bad messages so far, (\d+) of them since the "
                                   r"last line not logged")
        # Each line's count is the running total: the last says how many came before it.
        last = int(re.search(r"\((\d+) bad messages so far", skipped[-1]).group(1))
        self.assertGreater(last, n - 100 - 1)

    def test_004_bad_parameters_raise_value_error_naming_them(self):
        for kwargs, name in (({"gate": 0.0}, "gate"), ({"gate": -1.0}, "gate"),
                             ({"confirm_m": 0}, "confirm_m"),
                             ({"confirm_m": 4, "confirm_n": 3}, "confirm_n"),
                             ({"confirm_n": 40}, "confirm_n"),
                             ({"delete_misses": 0}, "delete_misses"),
                             ({"range_sigma_m": 0.0}, "range_sigma_m"),
                             ({"velocity_sigma_mps": -1.0}, "velocity_sigma_mps"),
                             ({"acceleration_sigma": -1.0}, "acceleration_sigma"),
                             ({"scan_period_s": -1.0}, "scan_period_s"),
                             ({"max_tracks": 0}, "max_tracks"),
                             ({"azimuth_rate_sigma_dps": 0.0}, "azimuth_rate_sigma_dps")):
            with self.assertRaisesRegex(ValueError, name):
                gpuradar.tracker(**kwargs)

    def test_005_azimuths_filtered_gated_and_reported(self):
        # Two targets at one range and velocity, 10 degrees apart, for 6 scans: with
        # azimuths the tracker keeps one track per target, each with its azimuth; the
        # same detections without azimuths cannot be told apart. A detection with an
        # azimuth but no standard deviation, or one outside [-90, 90], is a bad message.
        rng = np.random.default_rng(5)
        msgs = []
        for k in range(6):
            dets = [(3000.0 - 2 * k + rng.normal(), 20.0, az + 0.3 * rng.normal(), 0.3)
                    for az in (-5.0, 5.0)]
            msgs.append(detections_pdu(k, dets, rx_time=1.0 + 0.1 * k))
        bad_std = detections_pdu(6, [(3000.0, 20.0)], rx_time=2.0)
        bad_std = pmt.cons(pmt.car(bad_std), pmt.make_vector(1, pmt.dict_add(
            pmt.vector_ref(pmt.cdr(bad_std), 0), pmt.intern("azimuth_deg"),
            pmt.from_double(3.0))))
        msgs += [bad_std, detections_pdu(7, [(3000.0, 20.0, 95.0, 0.3)], rx_time=2.1)]
        trk = gpuradar.tracker(confirm_m=3, confirm_n=5, azimuth_rate_sigma_dps=0.5)
        out = self.run_tracker(trk, msgs, 6)
        self.assertEqual(trk.bad_messages(), 2)
        tracks = out[-1][1]
        self.assertEqual(len(tracks), 2)
        self.assertEqual({t["status"] for t in tracks}, {"confirmed"})
        for t in tracks:
            want = 5.0 if t["azimuth_deg"] > 0 else -5.0
            self.assertLess(abs(t["azimuth_deg"] - want), 4 * t["azimuth_std_deg"])
            self.assertLess(t["azimuth_std_deg"], 0.3)  # filtered: below one detection's
            self.assertIn("azimuth_rate_dps", t)
        # Without azimuths: no azimuth fields.
        plain = [detections_pdu(k, [(3000.0, 20.0)], rx_time=1.0 + 0.1 * k)
                 for k in range(3)]
        out = self.run_tracker(gpuradar.tracker(), plain, 3)
        self.assertNotIn("azimuth_deg", out[-1][1][0])


if __name__ == "__main__":
    gr_unittest.run(qa_tracker)
