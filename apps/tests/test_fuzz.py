#!/usr/bin/python3
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""Property tests (hypothesis) of what a hostile recording or command line can reach:

- the SigMF readers (pd_sim.read, sar_sim.read) on valid recordings whose metadata is
  mutated (a field replaced by any JSON value, deleted, or the text's bytes changed) and
  whose data is resized: the result is a valid recording or a RecordingError, never
  another exception;
- the apps' argument parsing (gpuradar-sim, gpuradar-process, gpuradar-sar) on random
  options and values: a Namespace or exit status 2 with one line, and for a parsed
  command line the next checks (scenario, recording overrides) end in a result or a
  clean error.

Bounded (max_examples) and derandomized: the same cases on every run, a few seconds.
"""

import contextlib
import hashlib
import importlib.util
import io
import json
import math
import os
import shutil
import tempfile
import unittest

from hypothesis import HealthCheck, given, settings, strategies as st
from hypothesis.configuration import set_hypothesis_home_dir

from gnuradio.gpuradar import app_util, pd_sim, sar_sim
from gnuradio.gpuradar.sigmf_io import RecordingError

APPS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CASES = settings(max_examples=150, deadline=None, derandomize=True, database=None,
                 suppress_health_check=list(HealthCheck))

scalars = (st.none() | st.booleans() | st.integers(-2**70, 2**70) |
           st.floats(allow_nan=False, allow_infinity=False) |
           st.sampled_from([0, 1, -1, 0.5, 1e300, 1e-300, 2**63, "", "lfm", "custom",
                            "cf32_le", "no", "1e6"]) | st.text(max_size=6))
json_values = st.recursive(scalars, lambda c: st.lists(c, max_size=4) |
                           st.dictionaries(st.text(max_size=6), c, max_size=4),
                           max_leaves=8)


def load_app(name):
    spec = importlib.util.spec_from_file_location(name, os.path.join(APPS, name + ".py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def fields(meta):
    """Every path into the metadata but the root, in a fixed scrambled order (hypothesis
    draws the first entries of a list most often: not always 'global')."""
    return sorted(paths(meta)[1:], key=lambda p: hashlib.sha1(repr(p).encode()).digest())


def paths(value, prefix=()):
    """Every path (tuple of keys / indices) into a JSON value."""
    out = [prefix]
    if isinstance(value, dict):
        for k, v in value.items():
            out += paths(v, prefix + (k,))
    elif isinstance(value, list):
        for i, v in enumerate(value[:3]):  # the first entries of long lists are enough
            out += paths(v, prefix + (i,))
    return out


def mutate(meta, path, op, value):
    """A copy of meta with the node at path replaced by value or deleted."""
    meta = json.loads(json.dumps(meta))
    if not path:
        return value
    parent = meta
    for k in path[:-1]:
        parent = parent[k]
    if op == "delete":
        del parent[path[-1]]
    else:
        parent[path[-1]] = value
    return meta


class Recordings:
    """One valid recording of each kind, written once, copied per case."""

    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="gpuradar-fuzz-")
        self.pd = os.path.join(self.dir, "pd")
        pd_sim.simulate(pd_sim.scenario("tiny"), self.pd)
        self.sar = os.path.join(self.dir, "sar")
        sar_sim.write(self.sar, sar_sim.scenario("spotlight", npulses=16, nbins=64,
                                                 image_size=4.0))
        self.case = os.path.join(self.dir, "case")

    def meta(self, base):
        with open(base + ".sigmf-meta") as f:
            return json.load(f)

    def prepare(self, base, suffixes):
        """A fresh copy of a recording as case/<name>; returns its base."""
        shutil.rmtree(self.case, ignore_errors=True)
        os.mkdir(self.case)
        out = os.path.join(self.case, os.path.basename(base))
        for s in suffixes:
            shutil.copy(base + s, out + s)
        return out


PD_FILES = (".sigmf-meta", ".sigmf-data")
SAR_FILES = (".sigmf-meta", ".sigmf-data", ".geometry.f64")
REC = None


def setUpModule():
    global REC
    REC = Recordings()
    # hypothesis caches data (its unicode tables) in .hypothesis/ of the working
    # directory: keep it out of the source and build trees.
    set_hypothesis_home_dir(os.path.join(REC.dir, ".hypothesis"))


def tearDownModule():
    shutil.rmtree(REC.dir, ignore_errors=True)


def check_pd(test, rec):
    test.assertGreaterEqual(rec.ncpi, 1)
    for v in (rec.fs, rec.fc, rec.pri_samples):
        test.assertTrue(math.isfinite(v) and v > 0, v)
    test.assertLessEqual(rec.gate_start + rec.nrange, math.floor(rec.pri_samples))
    test.assertIn(rec.waveform["type"], ("lfm", "custom"))
    if rec.waveform["type"] == "lfm":
        test.assertIsInstance(rec.waveform["up_chirp"], bool)


def check_sar(test, rec):
    test.assertEqual(rec.pulses.shape, (rec.npulses, rec.nbins))
    test.assertEqual(rec.geometry.shape, (rec.npulses, 6))
    test.assertTrue(rec.grid.nx >= 1 and rec.grid.ny >= 1 and rec.grid.dx > 0)


class Readers(unittest.TestCase):
    def read_or_error(self, reader, base, check):
        try:
            rec = reader(base)
        except RecordingError as e:
            self.assertNotIn("\n", str(e))
            self.assertIn(os.path.basename(base), str(e))  # names the file
            return
        check(self, rec)

    def field_mutated(self, data, src, files, reader, check):
        meta = REC.meta(src)
        path = data.draw(st.sampled_from(fields(meta)))  # the root: test_003
        op = data.draw(st.sampled_from(["replace", "delete"]))
        value = data.draw(json_values)
        base = REC.prepare(src, files)
        with open(base + ".sigmf-meta", "w") as f:
            json.dump(mutate(meta, path, op, value), f)
        self.read_or_error(reader, base, check)

    @CASES
    @given(st.data())
    def test_001_pd_metadata_field_mutated(self, data):
        self.field_mutated(data, REC.pd, PD_FILES, pd_sim.read, check_pd)

    @CASES
    @given(st.data())
    def test_002_sar_metadata_field_mutated(self, data):
        self.field_mutated(data, REC.sar, SAR_FILES, sar_sim.read, check_sar)

    @CASES
    @given(st.booleans(),
           st.lists(st.tuples(st.floats(0, 1), st.binary(max_size=3) |
                              st.text("0123456789.-e[]{}\",:tfn ", max_size=3).map(
                                  str.encode)), max_size=4),
           st.integers(-200, 200))
    def test_003_metadata_bytes_and_data_size_mutated(self, sar, edits, resize):
        src, files = (REC.sar, SAR_FILES) if sar else (REC.pd, PD_FILES)
        base = REC.prepare(src, files)
        with open(base + ".sigmf-meta", "rb") as f:
            text = bytearray(f.read())
        for where, new in edits:
            i = int(where * (len(text) - 1))
            text[i:i + len(new)] = new
        with open(base + ".sigmf-meta", "wb") as f:
            f.write(text)
        size = os.path.getsize(base + ".sigmf-data")
        with open(base + ".sigmf-data", "r+b") as f:
            f.truncate(max(0, size + resize))
        self.read_or_error(sar_sim.read if sar else pd_sim.read, base,
                           check_sar if sar else check_pd)


OPTION_VALUES = (st.sampled_from(["0", "-1", "1", "2", "1.5", "nan", "inf", "-inf", "",
                                  "1k", "10M", "3G", "1e400", "0x10", "1e-300", "x", "5,",
                                  "1,2", "1,2,3", "1000,5,0", "1e9"]) |
                 st.integers(-10**6, 10**6).map(str) |
                 st.floats(allow_nan=True).map(repr) | st.text(max_size=5))


def parse(app, argv):
    """(args or None, status, stderr) of app.parse_args(argv)."""
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            return app.parse_args(argv), None, err.getvalue()
        except SystemExit as e:
            return None, e.code, err.getvalue()


class Arguments(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.sim = load_app("gpuradar_sim")
        cls.process = load_app("gpuradar_process")
        cls.sar = load_app("gpuradar_sar")

    def argv(self, data, options):
        names = data.draw(st.lists(st.sampled_from(options), max_size=4))
        argv = []
        for n in names:
            argv += [n, data.draw(OPTION_VALUES)]
        return argv

    def parsed_or_status_2(self, app, argv):
        args, status, err = parse(app, argv)
        if args is None:
            self.assertEqual(status, 2, err)
            self.assertEqual(len(err.strip().splitlines()), 1, err)
            self.assertIn(": error: ", err)
        return args

    @CASES
    @given(st.data())
    def test_001_sim_pulse_doppler(self, data):
        argv = self.argv(data, ["--fs", "--fc", "--pri-samples", "--bandwidth",
                                "--pulse-width", "--gate-start", "--nrange", "--npulses",
                                "--ncpi", "--noise-power", "--clutter-cnr-db", "--clutter",
                                "--target", "--seed", "--preset"])
        args = self.parsed_or_status_2(self.sim, argv)
        if args is not None:
            try:
                sc = self.sim.build_scenario(args)
            except app_util.AppError:
                return
            self.assertTrue(sc.pri_samples >= 1 and sc.nrange >= 1 and sc.npulses >= 2)

    @CASES
    @given(st.data())
    def test_002_sim_sar_and_sar_app(self, data):
        options = ["--npulses", "--nbins", "--f0", "--bandwidth", "--standoff",
                   "--altitude", "--image-size", "--noise", "--preset"]
        self.parsed_or_status_2(self.sim, ["sar"] + self.argv(data, options + ["--seed"]))
        self.parsed_or_status_2(self.sar, self.argv(
            data, options + ["--grid", "--pulses-per-image", "--dynamic-range"]))

    @CASES
    @given(st.data())
    def test_003_process_overrides_reach_the_reader(self, data):
        argv = self.argv(data, ["--fs", "--fc", "--pri-samples", "--prf", "--gate-start",
                                "--nrange", "--npulses", "--first-pulse-sample",
                                "--bandwidth", "--pulse-width", "--pfa", "--nfft",
                                "--plot-cpi", "--guard", "--train", "--png-size"])
        args = self.parsed_or_status_2(self.process, argv)
        if args is None:
            return
        try:
            self.process.pair(args.guard, "guard")
            self.process.png_size(args.png_size)
        except app_util.AppError:
            return
        try:
            rec = pd_sim.read(REC.pd, self.process.overrides(args))
        except RecordingError:
            return
        check_pd(self, rec)


if __name__ == "__main__":
    unittest.main()
