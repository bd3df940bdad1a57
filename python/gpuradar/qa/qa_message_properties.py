#!/usr/bin/env python3
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""Property tests (hypothesis) of the messages that reach the module from outside: the
`waveform` message of pulse_compression / pulse_doppler_processor, gr-zeromq messages
(zmq_source's parser), the detections message of the tracker, and the detections and
truth messages read by the Python helpers.
Any PMT, any bytes: a result or ValueError, never another exception; what is well formed
comes back exactly. Bounded: derandomized, a modest number of examples, no deadline."""

import struct
import time
import unittest

import numpy as np
import pmt
from gnuradio import blocks, gr, gr_unittest
from gnuradio import gpuradar
from gnuradio.gpuradar import detections, scene_truth
from hypothesis import given, settings, strategies as st

SETTINGS = settings(derandomize=True, max_examples=150, deadline=None, database=None)
FS = 1e6

KEYS = ["bandwidth", "pulse_width", "up", "range_bin", "doppler_bin", "cpi", "rx_time",
        "snr_db", "target", "x"]
finite = st.floats(allow_nan=False, allow_infinity=False, width=64)
any_float = st.floats(width=64)
f32 = st.floats(allow_nan=False, allow_infinity=False, width=32)


def leaves():
    return st.one_of(
        st.sampled_from([pmt.PMT_T, pmt.PMT_F, pmt.PMT_NIL]),
        st.integers(-2**31, 2**31 - 1).map(pmt.from_long),
        st.integers(0, 2**64 - 1).map(pmt.from_uint64),
        any_float.map(pmt.from_double),
        st.builds(complex, finite, finite).map(pmt.from_complex),
        st.text(max_size=12).map(pmt.intern),
        st.lists(st.builds(complex, f32, f32), max_size=16).map(
            lambda v: pmt.init_c32vector(len(v), v)),
        st.lists(f32, max_size=16).map(lambda v: pmt.init_f32vector(len(v), v)),
        st.binary(max_size=16).map(lambda b: pmt.init_u8vector(len(b), list(b))),
    )


def dict_of(children):
    def build(items):
        d = pmt.make_dict()
        for k, v in items:
            d = pmt.dict_add(d, pmt.intern(k), v)
        return d
    return st.lists(st.tuples(st.sampled_from(KEYS), children), max_size=6).map(build)


def vector_of(items):
    v = pmt.make_vector(len(items), pmt.PMT_NIL)
    for i, x in enumerate(items):
        pmt.vector_set(v, i, x)
    return v


pmts = st.recursive(
    leaves(),
    lambda children: st.one_of(
        dict_of(children),
        # Tuples of one or two (GNU Radio cannot deserialize an empty tuple).
        st.lists(children, min_size=1, max_size=2).map(lambda v: pmt.make_tuple(*v)),
        st.lists(children, max_size=5).map(vector_of),
        st.tuples(children, children).map(lambda p: pmt.cons(*p))),
    max_leaves=12)


def field_dict(keys, values):
    return st.lists(st.tuples(st.sampled_from(keys), values), max_size=4).map(
        lambda items: pmt.to_pmt({}) if not items else _dict(items))


def _dict(items):
    d = pmt.make_dict()
    for k, v in items:
        d = pmt.dict_add(d, pmt.intern(k), v)
    return d


#: detections-like PDUs for the tracker: the fields it reads, with any values
tracker_pdus = st.tuples(
    field_dict(["cpi", "rx_time"], st.one_of(leaves(), st.tuples(
        st.integers(0, 2**40).map(pmt.from_uint64), any_float.map(pmt.from_double)).map(
            lambda t: pmt.make_tuple(*t)))),
    st.lists(field_dict(["range_m", "velocity_mps", "snr_db"], leaves()), max_size=4)).map(
        lambda p: pmt.cons(p[0], vector_of(p[1])))


class qa_message_properties(gr_unittest.TestCase):
    @settings(derandomize=True, max_examples=8, deadline=None, database=None)
    @given(st.lists(st.one_of(pmts, tracker_pdus), min_size=1, max_size=40))
    def test_010_tracker_survives_any_messages(self, msgs):
        """Every message is a scan or a counted bad message, never a crash or a hang; a
        well-formed scan at the end is answered (or, if an earlier random time lies
        after it, counted as out of order)."""
        trk = gpuradar.tracker(scan_period_s=1.0)
        tb = gr.top_block()
        out = blocks.message_debug()
        tb.msg_connect(trk, "tracks", out, "store")
        tb.start()
        good = pmt.cons(pmt.dict_add(pmt.make_dict(), pmt.intern("rx_time"),
                                     pmt.make_tuple(pmt.from_uint64(2**41),
                                                    pmt.from_double(0.0))),
                        vector_of([]))
        for m in msgs + [good]:
            trk.to_basic_block()._post(pmt.intern("detections"), m)
        # The tracks message reaches message_debug on its own thread after scans() has
        # counted it: wait for both.
        end = time.monotonic() + 10
        while ((trk.scans() + trk.bad_messages() < len(msgs) + 1
                or out.num_messages() < trk.scans()) and time.monotonic() < end):
            time.sleep(0.005)
        tb.stop()
        tb.wait()
        self.assertEqual(trk.scans() + trk.bad_messages(), len(msgs) + 1)
        self.assertEqual(out.num_messages(), trk.scans())
        for i in range(out.num_messages()):
            meta, tracks = detections.pdu_to_python(out.get_message(i))
            self.assertEqual(meta["ntracks"], len(tracks))

    @SETTINGS
    @given(pmts)
    def test_001_waveform_message_any_pmt(self, msg):
        try:
            w = gpuradar.waveform_from_message(msg, FS)
        except ValueError:
            return
        self.assertGreater(len(w), 0)
        self.assertTrue(np.isfinite(np.asarray(w)).all())

    @SETTINGS
    @given(st.floats(1.0, FS), st.floats(1.0 / FS, 4096.0 / FS), st.booleans())
    def test_002_waveform_message_lfm_dict(self, bandwidth, pulse_width, up):
        d = pmt.make_dict()
        for k, v in [("bandwidth", pmt.from_double(bandwidth)),
                     ("pulse_width", pmt.from_double(pulse_width)),
                     ("up", pmt.from_bool(up))]:
            d = pmt.dict_add(d, pmt.intern(k), v)
        w = np.array(gpuradar.waveform_from_message(d, FS))
        self.assertEqual(len(w), round(pulse_width * FS))
        np.testing.assert_allclose(np.abs(w), 1.0, atol=1e-5)
        if len(w) >= 8:
            # Instantaneous frequency rises for an up-chirp, falls for a down-chirp.
            slope = np.polyfit(np.arange(len(w) - 1), np.angle(w[1:] * np.conj(w[:-1])), 1)[0]
            if abs(slope) > 1e-6:
                self.assertEqual(slope > 0, up)

    @SETTINGS
    @given(st.lists(st.builds(complex, f32, f32), min_size=1, max_size=64))
    def test_003_waveform_message_custom_vector(self, values):
        w = gpuradar.waveform_from_message(pmt.init_c32vector(len(values), values), FS)
        np.testing.assert_array_equal(np.array(w, np.complex64),
                                      np.array(values, np.complex64))

    @SETTINGS
    @given(st.binary(max_size=512), st.sampled_from([1, 2, 8, 16]), st.booleans())
    def test_004_zmq_message_any_bytes(self, data, item_bytes, tagged):
        status, offset, nitems, tags, _ = gpuradar.parse_zmq_message(data, item_bytes, tagged)
        self.assertIn(status, ["ok", "empty", "truncated_header", "bad_magic", "bad_version",
                               "too_many_tags", "bad_tag", "partial_item"])
        if status == "ok":
            self.assertEqual(offset + nitems * item_bytes, len(data))
            self.assertTrue(all(0 <= t[0] < nitems for t in tags))

    @SETTINGS
    @given(st.integers(0, 2**40), st.integers(1, 40),
           st.lists(st.tuples(st.integers(0, 39), st.sampled_from(KEYS), pmts), max_size=5))
    def test_005_zmq_message_well_formed_round_trip(self, first, nitems, tags):
        header = struct.pack("<HBQQ", 0x5FF0, 1, first, len(tags))
        for offset, key, value in tags:
            header += struct.pack("<Q", first + offset) + pmt.serialize_str(pmt.intern(key))
            header += pmt.serialize_str(value) + pmt.serialize_str(pmt.PMT_F)
        message = header + bytes(range(8)) * nitems
        status, offset, n, got, out_of_range = gpuradar.parse_zmq_message(message, 8, True)
        self.assertEqual(status, "ok")
        self.assertEqual((offset, n), (len(header), nitems))
        inside = [(o, k, v) for o, k, v in tags if o < nitems]
        self.assertEqual(out_of_range, len(tags) - len(inside))
        self.assertEqual(len(got), len(inside))
        for (o, k, v), (go, gk, gv) in zip(inside, got):
            self.assertEqual((go, pmt.symbol_to_string(gk)), (o, k))
            self.assertEqual(pmt.serialize_str(gv), pmt.serialize_str(v))

    @SETTINGS
    @given(pmts)
    def test_006_detections_pdu_any_pmt(self, msg):
        try:
            meta, dets = detections.pdu_to_python(msg)
        except ValueError:
            return
        self.assertIsInstance(dets, list)

    @SETTINGS
    @given(st.lists(st.fixed_dictionaries({
        "range_bin": st.integers(0, 2**20), "doppler_bin": st.integers(0, 4096),
        "cpi": st.integers(0, 2**40), "snr_db": finite, "range_m": finite}), max_size=8),
        st.integers(0, 2**40))
    def test_007_detections_pdu_round_trip(self, dets, cpi):
        vec = vector_of([pmt.to_pmt(d) for d in dets])
        meta = pmt.dict_add(pmt.make_dict(), pmt.intern("cpi"), pmt.from_uint64(cpi))
        got_meta, got = detections.pdu_to_python(pmt.cons(meta, vec))
        self.assertEqual(got_meta, {"cpi": cpi})
        self.assertEqual(got, dets)

    @SETTINGS
    @given(pmts)
    def test_008_truth_any_pmt(self, msg):
        try:
            d = scene_truth.truth_to_dict(msg)
        except ValueError:
            return
        self.assertIsInstance(d, dict)

    @SETTINGS
    @given(st.fixed_dictionaries({"target": st.integers(0, 100), "pulse": st.integers(0, 2**40),
                                  "range_m": finite, "velocity_mps": finite,
                                  "snr_db": finite}),
           st.integers(0, 2**40), st.floats(0, 1, exclude_max=True))
    def test_009_truth_round_trip(self, fields, secs, frac):
        d = pmt.to_pmt(fields)
        d = pmt.dict_add(d, pmt.intern("rx_time"),
                         pmt.make_tuple(pmt.from_uint64(secs), pmt.from_double(frac)))
        want = dict(fields, rx_time=[secs, frac])
        self.assertEqual(scene_truth.truth_to_dict(d), want)


if __name__ == "__main__":
    gr_unittest.run(qa_message_properties)
