#!/usr/bin/env python3
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""zmq_source against GNU Radio's own ZMQ sinks (PUSH with tags, PUB with a key, without
tags), behind CURVE, and against hostile messages from a pyzmq PUSH socket. Endpoints are
ipc:// in a private directory (mode 0700), as the block's documentation asks."""

import os
import re
import shutil
import struct
import sys
import tempfile
import time
import unittest

import numpy as np
import pmt
import zmq
from gnuradio import blocks, gr, gr_unittest, zeromq
from gnuradio import gpuradar

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import grc_asserts  # noqa: E402

C64 = gr.sizeof_gr_complex


def wait_until(done, seconds=10.0):
    end = time.monotonic() + seconds
    while not done():
        if time.monotonic() > end:
            return False
        time.sleep(0.01)
    return True


def tag(offset, key, value):
    t = gr.tag_t()
    t.offset, t.key, t.value = offset, pmt.intern(key), value
    return t


def tagged_message(first, tags, items):
    """gr-zeromq's wire format: u16 magic, u8 version, u64 offset, u64 count, tags, items."""
    out = struct.pack("<HBQQ", 0x5FF0, 1, first, len(tags))
    for offset, key, value in tags:
        out += struct.pack("<Q", offset) + pmt.serialize_str(pmt.intern(key))
        out += pmt.serialize_str(value) + pmt.serialize_str(pmt.PMT_F)
    return out + np.asarray(items, np.complex64).tobytes()


class qa_zmq_source(gr_unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="gpuradar-zmq-")
        os.chmod(self.dir, 0o700)
        self.tb = gr.top_block()

    def tearDown(self):
        self.tb.stop()
        self.tb.wait()
        shutil.rmtree(self.dir)

    def endpoint(self, name):
        return f"ipc://{self.dir}/{name}"

    def test_001_from_gnuradio_push_sink_with_tags(self):
        rng = np.random.default_rng(1)
        data = (rng.standard_normal(5000) + 1j * rng.standard_normal(5000)).astype(np.complex64)
        rx_time = pmt.make_tuple(pmt.from_uint64(17), pmt.from_double(0.125))
        cpi = pmt.dict_add(pmt.make_dict(), pmt.intern("index"), pmt.from_uint64(4))
        tags = [tag(0, "rx_time", rx_time), tag(1234, "cpi", cpi), tag(4999, "end", pmt.PMT_T)]
        tx = gr.top_block()
        src = blocks.vector_source_c(data.tolist(), False, 1, tags)
        push = zeromq.push_sink(C64, 1, self.endpoint("push"), 100, True, -1)
        tx.connect(src, push)
        rx = gpuradar.zmq_source(C64, 1, self.endpoint("push"), "pull", False, True, 20)
        sink = blocks.vector_sink_c()
        self.tb.connect(rx, sink)
        self.tb.start()
        tx.run()
        self.assertTrue(wait_until(lambda: len(sink.data()) >= len(data)))
        np.testing.assert_array_equal(np.array(sink.data(), np.complex64), data)
        got = [(t.offset, pmt.symbol_to_string(t.key), t.value) for t in sink.tags()]
        self.assertEqual([(o, k) for o, k, _ in got], [(0, "rx_time"), (1234, "cpi"),
                                                       (4999, "end")])
        self.assertTrue(pmt.equal(got[0][2], rx_time))
        self.assertTrue(pmt.equal(got[1][2], cpi))
        self.assertEqual(rx.dropped_messages(), 0)
        self.assertEqual(rx.received_items(), len(data))

    def test_002_from_pub_sink_with_key_without_tags(self):
        # A SUB socket misses what was published before it joined: the PUB side repeats a
        # ramp (throttled), and what arrives must be one unbroken run of it.
        period = 3000
        ramp = (np.arange(period) * (1 - 2j)).astype(np.complex64)
        tx = gr.top_block()
        src = blocks.vector_source_c(ramp.tolist(), True)
        pub = zeromq.pub_sink(C64, 1, self.endpoint("pub"), 100, False, -1, "radar")
        tx.connect(src, blocks.throttle(C64, 500e3), pub)
        rx = gpuradar.zmq_source(C64, 1, self.endpoint("pub"), "sub", False, False, 20,
                                 topic="radar")
        sink = blocks.vector_sink_c()
        self.tb.connect(rx, sink)
        self.tb.start()
        tx.start()
        ok = wait_until(lambda: len(sink.data()) >= 3 * period)
        tx.stop()
        tx.wait()
        self.assertTrue(ok, f"{len(sink.data())} items")
        got = np.array(sink.data(), np.complex64)
        k = np.rint(got.real).astype(np.int64)
        np.testing.assert_array_equal(got, ramp[k])          # every item a ramp value
        np.testing.assert_array_equal(np.diff(k) % period, 1)  # in order, none missing
        self.assertEqual(rx.dropped_messages(), 0)

    def test_003_hostile_messages_counted_from_python(self):
        ctx = zmq.Context()
        push = ctx.socket(zmq.PUSH)
        push.setsockopt(zmq.LINGER, 0)
        push.bind(self.endpoint("hostile"))
        rx = gpuradar.zmq_source(C64, 1, self.endpoint("hostile"))
        sink = blocks.vector_sink_c()
        self.tb.connect(rx, sink)
        self.tb.start()
        good = [np.full(10, k + 1j, np.complex64) for k in range(3)]
        absurd = struct.pack("<HBQQ", 0x5FF0, 1, 0, 1 << 32) + bytes(8)  # 27 bytes
        for m in [tagged_message(0, [], good[0]), absurd, b"", b"\x01" * 33,
                  tagged_message(10, [], good[1])[:-3], tagged_message(10, [], good[1]),
                  b"\xf0\x5f\x02" + bytes(16), tagged_message(20, [], good[2])]:
            push.send(m)
        try:
            self.assertTrue(wait_until(lambda: len(sink.data()) >= 30))
            time.sleep(0.05)
            np.testing.assert_array_equal(np.array(sink.data()), np.concatenate(good))
            counts = rx.drop_counts()
            self.assertEqual(counts["too_many_tags"], 1)
            self.assertEqual(counts["empty"], 1)
            self.assertEqual(counts["bad_magic"], 1)
            self.assertEqual(counts["partial_item"], 1)
            self.assertEqual(counts["bad_version"], 1)
            self.assertEqual(rx.dropped_messages(), 5)
            self.assertEqual(rx.received_messages(), 3)
        finally:
            push.close()
            ctx.term()

    @unittest.skipIf(not zmq.has("curve"), "libzmq without CURVE")
    def test_004_curve_only_the_keyed_server_feeds_the_source(self):
        server_public, server_secret = zmq.curve_keypair()
        client_public, client_secret = zmq.curve_keypair()
        ctx = zmq.Context()
        push = ctx.socket(zmq.PUSH)
        push.setsockopt(zmq.LINGER, 0)
        push.curve_secretkey, push.curve_publickey = server_secret, server_public
        push.curve_server = True
        port = push.bind_to_random_port("tcp://127.0.0.1")
        address = f"tcp://127.0.0.1:{port}"
        other_public, _ = zmq.curve_keypair()
        wrong = gpuradar.zmq_source(C64, 1, address, "pull", False, True, 20,
                                    curve_server_key=other_public.decode(),
                                    curve_secret_key=client_secret.decode())
        right = gpuradar.zmq_source(C64, 1, address, "pull", False, True, 20,
                                    curve_server_key=server_public.decode(),
                                    curve_secret_key=client_secret.decode())
        sink_wrong, sink_right = blocks.vector_sink_c(), blocks.vector_sink_c()
        self.tb.connect(wrong, sink_wrong)
        self.tb.connect(right, sink_right)
        self.tb.start()
        data = np.arange(100, dtype=np.complex64)
        try:
            # PUSH round-robins over completed handshakes only: the wrongly keyed client
            # never completes one, so all the data must reach the right one.
            for k in range(4):
                push.send(tagged_message(25 * k, [], data[25 * k:25 * (k + 1)]))
            self.assertTrue(wait_until(lambda: len(sink_right.data()) >= 100))
            time.sleep(0.2)
            np.testing.assert_array_equal(np.array(sink_right.data()), data)
            self.assertEqual(len(sink_wrong.data()), 0)
        finally:
            push.close()
            ctx.term()

    def test_005_bad_parameters_raise_value_error_naming_them(self):
        ep = self.endpoint("x")
        for kwargs, name in [(dict(itemsize=0), "itemsize"), (dict(vlen=0), "vlen"),
                             (dict(address="udp://h:1"), "address"),
                             (dict(socket_type="dealer"), "socket_type"),
                             (dict(timeout_ms=0), "timeout_ms"),
                             (dict(max_message_bytes=7), "max_message_bytes"),
                             (dict(hwm=-5), "hwm"),
                             (dict(curve_server_key="x" * 40, curve_secret_key="y"),
                              "curve_secret_key"),
                             (dict(bind=True, curve_server_key="x" * 40,
                                   curve_secret_key="y" * 40), "bind=false")]:
            args = dict(itemsize=C64, vlen=1, address=ep)
            args.update(kwargs)
            with self.assertRaisesRegex(ValueError, name):
                gpuradar.zmq_source(**args)

    def test_006_address_libzmq_refuses_is_named(self):
        # libzmq said only "Invalid argument".
        for address, bind in (("tcp://nonsense:abc", False), ("tcp://nonsense:abc", True),
                              ("tcp://127.0.0.1:", False), ("tcp://*:abc", True)):
            with self.subTest(address=address, bind=bind):
                with self.assertRaisesRegex(ValueError,
                                            f"zmq_source: address '{re.escape(address)}' "
                                            "cannot be "
                                            ".*Invalid argument.*a valid endpoint: "
                                            r"tcp://HOST:PORT"):
                    gpuradar.zmq_source(itemsize=C64, vlen=1, address=address, bind=bind)
        # Well formed, but no interface of this host: not a parameter error, still named.
        with self.assertRaisesRegex(RuntimeError, "zmq_source: address 'tcp://nonsense:5555' "
                                    "cannot be bound: No such device .*tcp://\\*:PORT"):
            gpuradar.zmq_source(itemsize=C64, vlen=1, address="tcp://nonsense:5555",
                                bind=True)

    def test_007_grc_asserts_refuse_what_make_refuses(self):
        # The address has no assert: the examples compute it from a variable
        # (gpuradar.ipc_endpoint) that GRC cannot evaluate without the module on its
        # path, and make() names it clearly at run time.
        block = "gpuradar_zmq_source"
        good = dict(address="tcp://127.0.0.1:5555", hwm="-1")
        self.assertEqual(grc_asserts.failed_asserts(block, **good), [])
        for param, value, name in (("hwm", "-5", "hwm"),):
            with self.subTest(param=param):
                failed = grc_asserts.failed_asserts(block, **dict(good, **{param: value}))
                self.assertEqual(len(failed), 1, failed)
                self.assertIn(param, failed[0])
                args = dict(itemsize=C64, vlen=1, address=good["address"])
                args[param] = int(value)
                with self.assertRaisesRegex(ValueError, name):
                    gpuradar.zmq_source(**args)


if __name__ == "__main__":
    gr_unittest.run(qa_zmq_source)
