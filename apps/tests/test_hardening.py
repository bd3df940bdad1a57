#!/usr/bin/python3
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""Every error path of gpuradar-sim, gpuradar-process and gpuradar-sar, run as a user runs
them (subprocess, CPU backend): the exit status (2 bad input, 130 Ctrl-C, 143 SIGTERM),
one line on stderr naming the file and the field or option, no traceback, and no output
or temporary file left behind. Also the command-line overrides of a foreign recording's
metadata, engineering notation, --version and `-o DIR/`.

Run with Debian's GNU Radio Python and PYTHONPATH=<build>/test_modules (ctest does).
"""

import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_apps import PROCESS, SAR, SIM, AppTest, run  # noqa: E402

from gnuradio import gpuradar  # noqa: E402

META, DATA, GEOMETRY = ".sigmf-meta", ".sigmf-data", ".geometry.f64"


class Hardening(AppTest):
    """Helpers: recordings made once per test, and the failure assertions."""

    def fails(self, cmd, status, *needles, outputs=(), rlimit_fsize=None, timeout=60):
        """Runs cmd; checks the status, one stderr line holding every needle, no
        traceback, and none of `outputs` (nor a staged temporary) left."""
        preexec = None
        if rlimit_fsize is not None:
            def preexec():
                resource.setrlimit(resource.RLIMIT_FSIZE, (rlimit_fsize, rlimit_fsize))
        t0 = time.monotonic()
        p = subprocess.run([sys.executable, *cmd], capture_output=True, text=True,
                           timeout=timeout, preexec_fn=preexec, cwd=self.dir)
        self.assertEqual(p.returncode, status, p.stdout + p.stderr)
        self.assertNotIn("Traceback", p.stderr)
        lines = [line for line in p.stderr.splitlines() if "error" in line]
        self.assertEqual(len(lines), 1, p.stderr)
        for n in needles:
            self.assertIn(n, lines[0])
        for o in outputs:
            self.assertFalse(os.path.exists(o), o)
        self.assertEqual([n for n in os.listdir(self.dir) if n.startswith(".gpuradar-tmp")],
                         [], "temporary files left behind")
        return lines[0], time.monotonic() - t0

    def edit(self, base, edit, suffix=META):
        with open(base + suffix) as f:
            meta = json.load(f)
        edit(meta)
        with open(base + suffix, "w") as f:
            json.dump(meta, f)

    def each_edit_fails(self, base, cases, fails):
        """For each (edit, needles): the original metadata edited, then fails(base,
        *needles)."""
        with open(base + META) as f:
            original = f.read()
        for edit, needles in cases:
            with self.subTest(needles=needles):
                self.write_meta_text(base, original)
                self.edit(base, edit)
                fails(base, *needles)

    def write_meta_text(self, base, text):
        with open(base + META, "w") as f:
            f.write(text)

    def process_fails(self, base, *needles, extra=()):
        out = self.path("out")
        line, _ = self.fails([PROCESS, "-i", base, "--backend", "cpu", "-o", out, "-q",
                              *extra], 2, *needles,
                             outputs=[out + s for s in (".json", ".csv", ".png")])
        return line

    def sar_recording(self, base="ph", *extra):
        base = self.path(base)
        rc, out, err = run(SIM, "sar", "--preset", "tiny", "-o", base, *extra)
        self.assertEqual(rc, 0, out + err)
        return base

    def sar_fails(self, base, *needles, extra=()):
        out = self.path("img")
        line, _ = self.fails([SAR, "-i", base, "--backend", "cpu", "-o", out, "-q", *extra],
                             2, *needles, outputs=[out + ".npy", out + ".png"])
        return line


class ProcessMetadata(Hardening):
    def test_001_types_checked(self):
        base = self.simulate_small()
        ns = "gpuradar:"
        cases = [
            (lambda m: m["global"][ns + "waveform"].update(up_chirp="no"),
             ["'global.gpuradar:waveform.up_chirp'", "true or false"]),
            (lambda m: m["global"][ns + "waveform"].update(up_chirp=0),
             ["up_chirp", "true or false"]),
            (lambda m: m["global"].update({ns + "waveform": {"type": "custom",
                                                              "samples": [["a", "b"]]}}),
             ["'global.gpuradar:waveform.samples'", "finite numbers"]),
            (lambda m: m["global"].update({ns + "waveform": "lfm"}),
             ["'global.gpuradar:waveform'", "object"]),
            (lambda m: m["annotations"][0].update({ns + "range_m": "far"}),
             ["'annotations[0].gpuradar:range_m'", "finite number"]),
            (lambda m: m["annotations"][1].update({ns + "target": 1.5}),
             ["'annotations[1].gpuradar:target'", "whole number"]),
            (lambda m: m["global"].update({ns + "nrange": True}),
             ["'global.gpuradar:nrange'", "finite number"]),
            (lambda m: m["global"].update({ns + "npulses": 1 << 30}),
             ["gpuradar:nrange", "cells per CPI"]),
            (lambda m: m["global"].update({"core:datatype": "cu8"}),
             ["'global.core:datatype'", "cf32_le or ci16_le or ci8"]),
            (lambda m: m.update(annotations={"a": 1}), ["'annotations'", "list"]),
            (lambda m: m.update({"global": []}), ["'global'", "not an object"]),
            (lambda m: m["global"][ns + "waveform"].update(pulse_width=1.0),
             ["pulse_width", "must fit in the PRI"]),
        ]
        # a datatype the reader takes, over a data file of another one's size
        with open(base + META) as f:
            original = f.read()
        self.each_edit_fails(
            base, [(lambda m: m["global"].update({"core:datatype": "ci16_le"}),
                    ["'global.gpuradar:nsamples'", "not this recording's data"])],
            lambda b, *needles: self.process_fails(b, b + DATA, *needles))
        self.write_meta_text(base, original)
        self.each_edit_fails(base, cases,
                             lambda b, *needles: self.process_fails(b, b + META, *needles))

    def test_002_fields_that_must_agree(self):
        base = self.simulate_small()
        ns = "gpuradar:"
        cases = [
            (lambda m: m["global"].update({"core:sample_rate": 9e6}),
             ["'global.gpuradar:fs'", "'global.core:sample_rate'", "disagree"]),
            # A fractional PRI that disagrees with the PRF (and the data).
            (lambda m: m["global"].update({ns + "pri_samples": 1000.5}),
             ["'global.gpuradar:pri_samples'", "'global.gpuradar:prf'", "disagree"]),
            (lambda m: m["global"].update({ns + "ncpi": 3}),
             ["'global.gpuradar:ncpi' says 3", "2 whole CPIs"]),
            (lambda m: m["global"].update({ns + "r0": 1.0}),
             ["'global.gpuradar:r0'", "disagrees with the gate start"]),
        ]
        self.each_edit_fails(base, cases, self.process_fails)

    def test_003_json_not_standard_or_too_deep(self):
        base = self.simulate_small()
        with open(base + META) as f:
            original = f.read()
        self.write_meta_text(base, original.replace('"gpuradar:fc": 3000000000.0',
                                                    '"gpuradar:fc": NaN'))
        self.process_fails(base, base + META, "not valid SigMF JSON", "NaN")
        self.write_meta_text(base, "[" * 100000 + "]" * 100000)
        self.process_fails(base, base + META, "nested more than")
        self.write_meta_text(base, '{"global": ' + "[" * 40 + "]" * 40 + "}")
        self.process_fails(base, base + META, "nested more than")
        with open(base + META, "wb") as f:
            f.write(b"\xff\xfe{}")
        self.process_fails(base, base + META, "not valid SigMF JSON")


class ProcessFiles(Hardening):
    def test_004_metadata_not_a_regular_file(self):
        base = self.path("fifo")
        os.mkfifo(base + META)
        _, elapsed = self.fails([PROCESS, "-i", base, "--backend", "cpu", "-q"], 2,
                                base + META, "not a regular file", timeout=30)
        self.assertLess(elapsed, 20)  # refused at once, not read
        base = self.path("zero")
        os.symlink("/dev/zero", base + META)
        self.fails([PROCESS, "-i", base, "--backend", "cpu", "-q"], 2, base + META,
                   "not a regular file", timeout=30)

    def test_005_metadata_too_large(self):
        base = self.path("big")
        with open(base + META, "wb") as f:
            f.truncate(65 << 20)  # sparse: no disk used
        _, elapsed = self.fails([PROCESS, "-i", base, "--backend", "cpu", "-q"], 2,
                                base + META, "larger than", timeout=30)
        self.assertLess(elapsed, 20)

    def test_006_data_size_and_kind(self):
        base = self.simulate_small()
        with open(base + DATA, "ab") as f:
            f.write(b"\0" * 16)
        self.process_fails(base, base + DATA, "more than", "'global.gpuradar:nsamples'")
        os.remove(base + DATA)
        os.mkfifo(base + DATA)
        self.process_fails(base, base + DATA, "not a regular file")

    def test_007_output_is_a_directory(self):
        base = self.simulate_small()
        os.mkdir(self.path("results"))
        rc, out, err = run(PROCESS, "-i", base, "--backend", "cpu", "-o",
                           self.path("results") + "/", "-q")
        self.assertEqual(rc, 0, out + err)
        for s in (".json", ".csv", ".png"):
            self.assertTrue(os.path.isfile(self.path("results", "gpuradar_process" + s)), s)
        self.assertNotIn("/.png", out)
        self.assertIn("results/gpuradar_process.png", out)

    def test_007b_output_prefix_not_a_file_prefix(self):
        # -o /dev/full used to write /dev/full.json, .csv, .png and .tracks.csv into
        # /dev. A FIFO here stands for the device (the same refusal, and a failure would
        # leave its files in this test's folder, not in /dev).
        base = self.simulate_small()
        fifo = self.path("pipe")
        os.mkfifo(fifo)
        self.fails([PROCESS, "-i", base, "--backend", "cpu", "-o", fifo, "-q"], 2,
                   "--output", fifo, "not a directory or a file prefix",
                   outputs=[fifo + s for s in (".json", ".csv", ".png", ".tracks.csv")])
        # A file where the folder should be.
        with open(self.path("afile"), "w") as f:
            f.write("x")
        self.fails([PROCESS, "-i", base, "--backend", "cpu", "-o",
                    self.path("afile", "sub", "out"), "-q"], 2, "--output",
                   self.path("afile") + " is not a directory")
        self.fails([SAR, "--preset", "tiny", "-o", fifo, "-q"], 2, "--output", fifo,
                   outputs=[fifo + ".npy", fifo + ".png"])

    def test_007c_data_past_the_last_whole_cpi_is_reported(self):
        # Cut to 1.7 CPIs with nsamples and ncpi removed: the 0.7 CPI used to be dropped
        # without a word. 1.7 x 32 pulses x 1000 samples; pulse k's gate ends at
        # 1000 k + 900, so 22 whole pulses lie past CPI 0.
        base = self.simulate_small()

        def strip(m):
            del m["global"]["gpuradar:nsamples"]
            del m["global"]["gpuradar:ncpi"]
        self.edit(base, strip)
        with open(base + DATA, "r+b") as f:
            f.truncate(54400 * 8)
        rc, out, err = run(PROCESS, "-i", base, "--backend", "cpu", "-o", self.path("o"),
                           "--no-png", "-q")
        self.assertEqual(rc, 0, out + err)
        self.assertIn("warning: " + base + DATA + ": 22400 samples after the last whole "
                      "CPI (22 pulses, 0.69 of a CPI of 32) are not processed", err)
        with open(self.path("o.json")) as f:
            report = json.load(f)
        self.assertEqual((report["cpis"], report["samples"], report["samples_in_cpis"]),
                         (1, 54400, 32000))
        # A recording of whole CPIs says nothing.
        base = self.simulate_small("whole")
        rc, out, err = run(PROCESS, "-i", base, "--backend", "cpu", "-o", self.path("w"),
                           "--no-png", "-q")
        self.assertEqual(rc, 0, out + err)
        self.assertNotIn("not processed", err)

    def test_008_bad_arguments(self):
        cases = [(["--pfa", "0"], ["argument --pfa", "> 0"]),
                 (["--pfa", "nan"], ["argument --pfa", "finite"]),
                 (["--nfft", "-1"], ["argument --nfft", ">= 0"]),
                 (["--fs", ""], ["argument --fs", "engineering notation"]),
                 (["--fs", "10X"], ["argument --fs"]),
                 (["--dynamic-range", "inf"], ["argument --dynamic-range"]),
                 (["--guard", "a,b"], ["--guard"]),
                 (["--png-size", "10x10"], ["--png-size"]),
                 (["--fs", "1M"], ["--fs", "need --input"])]
        for args, needles in cases:
            with self.subTest(args=args):
                self.fails([PROCESS, "--backend", "cpu", "-q", *args], 2, *needles)

    def test_009_nonfinite_samples_counted_and_survived(self):
        # NaN / +-Inf in gate samples of CPI 1 and NaNs between its gates: the run
        # succeeds, CPI 1 still detects every target (one NaN would otherwise make its
        # whole map NaN), and the report counts exactly the gate samples, per CPI.
        import numpy as np
        from gnuradio.gpuradar import pd_sim
        base = self.simulate_small()
        rec = pd_sim.read(base)
        self.assertEqual(rec.ncpi, 2)
        x = np.fromfile(base + DATA, np.complex64)
        rng = np.random.default_rng(9)
        pulses = rec.npulses + rng.choice(rec.npulses, 5, replace=False)
        gate = [rec.pulse_start(int(k)) + rec.gate_start + int(rng.integers(rec.nrange))
                for k in pulses]
        for s, v in zip(gate, (complex(np.nan, 0), complex(0, np.inf), complex(-np.inf, 1),
                               complex(np.nan, np.nan), complex(1, -np.inf))):
            x[s] = v
        for k in pulses[:2]:  # after the gate, before the next pulse: in no CPI
            x[rec.pulse_start(int(k)) + rec.gate_start + rec.nrange + 3] = np.nan
        x.tofile(base + DATA)
        rc, out, err = run(PROCESS, "-i", base, "--backend", "cpu", "-o", self.path("o"),
                           "--no-png", "-q")
        self.assertEqual(rc, 0, out + err)
        with open(self.path("o.json")) as f:
            report = json.load(f)
        self.assertEqual(report["nonfinite_samples"], {"total": 5, "per_cpi": [0, 5]})
        self.assertIn("non-finite samples (NaN/Inf, processed as 0): 5 in 1 of 2 CPIs "
                      "(CPI 1: 5)", out)
        self.assertEqual(report["truth"]["missed"], 0, out)


class ProcessOverrides(Hardening):
    def foreign(self):
        """A recording as another tool writes it: only SigMF core fields."""
        base = self.simulate_small()

        def strip(m):
            g = m["global"]
            for k in [k for k in g if k.startswith("gpuradar:")]:
                del g[k]
            m["annotations"] = []
        self.edit(base, strip)
        return base

    def finds_the_small_targets(self, recording, *params):
        """Processes recording (the small preset's samples) with params; checks its 2 CPIs
        and the three targets (the truth stripped) where they are; returns the report."""
        rc, out, err = run(PROCESS, "-i", recording, "--backend", "cpu", "-o",
                           self.path("o"), "--no-png", "-q", *params)
        self.assertEqual(rc, 0, out + err)
        with open(self.path("o.json")) as f:
            report = json.load(f)
        self.assertEqual(report["cpis"], 2)
        ranges = sorted({round(d["range_m"] / 100) for d in report["detections"]})
        for r in (30, 70, 110):
            self.assertTrue(any(abs(x - r) <= 1 for x in ranges), ranges)
        return report

    def test_001_foreign_recording_needs_the_parameters(self):
        base = self.foreign()
        self.process_fails(base, "'global.gpuradar:pri_samples' is missing", "--pri-samples")
        self.process_fails(base, "'global.gpuradar:gate_start' is missing", "--gate-start",
                           extra=["--pri-samples", "1000"])
        self.process_fails(base, "'global.gpuradar:waveform' is missing", "--bandwidth",
                           extra=["--pri-samples", "1000", "--gate-start", "100",
                                  "--nrange", "800", "--npulses", "32"])

    def test_002_foreign_recording_with_overrides(self):
        report = self.finds_the_small_targets(
            self.foreign(), "--pri-samples", "1k", "--gate-start", "100", "--nrange", "800",
            "--npulses", "32", "--bandwidth", "5M", "--pulse-width", "10u")
        p = report["parameters"]
        self.assertEqual((p["pri_samples"], p["nrange"], p["npulses"], p["fs"], p["fc"]),
                         (1000.0, 800, 32, 10e6, 3e9))  # fs, fc: core fields, captures
        self.assertEqual((p["waveform"]["type"], p["waveform"]["bandwidth"],
                          p["waveform"]["up_chirp"]), ("lfm", 5e6, True))
        self.assertAlmostEqual(p["waveform"]["pulse_width"], 10e-6, delta=1e-15)

    def test_002b_raw_samples_with_every_parameter_given(self):
        # A GNU Radio file sink's output: no SigMF metadata at all.
        base = self.simulate_small()
        raw = self.path("capture.cf32")
        os.rename(base + DATA, raw)
        os.remove(base + META)
        self.process_fails(raw, raw, "raw cf32", "--fs")
        params = ["--fs", "10M", "--fc", "3G", "--pri-samples", "1k", "--gate-start", "100",
                  "--nrange", "800", "--npulses", "32", "--bandwidth", "5M",
                  "--pulse-width", "10u"]
        self.process_fails(raw, raw, "--fc", extra=params[:2])
        self.finds_the_small_targets(raw, *params)

    def test_003_override_replaces_metadata(self):
        # A wrong --fs makes the ranges scale: the override is used, not ignored.
        base = self.simulate_small()
        rc, out, err = run(PROCESS, "-i", base, "--backend", "cpu", "-o", self.path("o"),
                           "--no-png", "-q", "--fs", "5M", "--prf", "5k")
        self.assertEqual(rc, 0, out + err)
        with open(self.path("o.json")) as f:
            p = json.load(f)["parameters"]
        self.assertEqual((p["fs"], p["prf"], p["pri_samples"]), (5e6, 5e3, 1000.0))
        self.assertAlmostEqual(p["range_bin_m"], 299792458.0 / 1e7)
        rc, out, err = run(PROCESS, "-i", base, "--backend", "cpu", "-o", self.path("d"),
                           "--no-png", "-q", "--down-chirp")
        self.assertEqual(rc, 0, out + err)
        with open(self.path("d.json")) as f:
            self.assertFalse(json.load(f)["parameters"]["waveform"]["up_chirp"])


class Sim(Hardening):
    def test_001_bad_numbers(self):
        cases = [(["--fc", "0"], ["argument --fc", "> 0"]),
                 (["--fs", "-1"], ["argument --fs"]),
                 (["--fs", "nan"], ["argument --fs", "finite"]),
                 (["--npulses", "1"], ["argument --npulses", ">= 2"]),
                 (["--npulses", "2.5"], ["argument --npulses", "whole"]),
                 (["--pri-samples", "0"], ["argument --pri-samples"]),
                 (["--target", "1000,2"], ["argument --target"]),
                 (["--target", "1000,2,nan"], ["argument --target"]),
                 (["--clutter", "5,1"], ["argument --clutter"]),
                 (["--pulse-width", "1"], ["--pulse-width", "longer than the PRI"]),
                 # The default 10 us pulse in the default 2000-sample PRI.
                 (["--fs", "1e15"], ["--fs: must be in (0, 2e+08] Hz", "got 1e+15"]),
                 (["sar", "--bandwidth", "0"], ["argument --bandwidth", "> 0"]),
                 (["sar", "--f0", "nan"], ["argument --f0", "finite"]),
                 (["sar", "--npulses", "0"], ["argument --npulses"]),
                 (["sar", "--image-size", "1e9"], ["--image-size", "pixels"])]
        for args, needles in cases:
            with self.subTest(args=args):
                self.fails([SIM, *args, "-o", self.path("x")], 2, *needles,
                           outputs=[self.path("x" + s) for s in (META, DATA, GEOMETRY)])

    def test_002_engineering_notation(self):
        rc, out, err = run(SIM, "--list", "--fs", "10M", "--fc", "3G", "--pulse-width",
                           "10u", "--pri-samples", "2k")
        self.assertEqual(rc, 0, out + err)
        self.assertIn("fc 3 GHz, fs 10 MHz, PRF 5000 Hz (PRI 2000 samples)", out)

    def test_003_refuses_more_than_the_free_space(self):
        # Twice the free space, in CPIs of the default preset (64 x 2000 samples of 8 B).
        ncpi = 2 * shutil.disk_usage(self.dir).free // (64 * 2000 * 8) + 1
        if ncpi * 64 * 2000 > 1 << 40:
            self.skipTest("more free space than the largest recording gpuradar-sim writes")
        line, _ = self.fails([SIM, "--ncpi", str(ncpi), "-o", self.path("x")], 2,
                             "MB free", "--allow-large-output",
                             outputs=[self.path("x" + META), self.path("x" + DATA)])

    def test_004_write_error_exits_promptly_and_cleanly(self):
        # A file-size limit makes the writes fail as a full disk does (EFBIG / ENOSPC).
        out = self.path("x")
        _, elapsed = self.fails([SIM, "--preset", "small", "-o", out, "-q",
                                 "--allow-large-output"], 2, out + DATA, "cannot write",
                                outputs=[out + META, out + DATA], rlimit_fsize=100000)
        self.assertLess(elapsed, 30)
        self.fails([SIM, "sar", "--preset", "tiny", "-o", out], 2, "cannot write",
                   outputs=[out + META, out + DATA, out + GEOMETRY], rlimit_fsize=20000)

    def test_005_disk_full_on_a_small_tmpfs(self):
        mnt = self.path("small_fs")
        os.mkdir(mnt)
        if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1M", "tmpfs", mnt],
                          capture_output=True).returncode != 0:
            self.skipTest("cannot mount a tmpfs here (not root?)")
        try:
            out = os.path.join(mnt, "x")
            # Larger than the free space: refused before writing.
            self.fails([SIM, "-o", out, "-q"], 2, "MB free")
            # Forced: the write fails (ENOSPC), the app ends cleanly and leaves nothing.
            _, elapsed = self.fails([SIM, "-o", out, "-q",
                                     "--allow-large-output"], 2, "cannot write",
                                    "No space left")
            self.assertLess(elapsed, 30)
            self.assertEqual(os.listdir(mnt), [])
        finally:
            subprocess.run(["umount", mnt])

    def interrupt(self, sig, status, word):
        out = self.path("x")
        p = subprocess.Popen([sys.executable, SIM, "--ncpi", "200", "-o", out, "-q"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 60
        while not self.writing():  # the flowgraph runs: interrupt it mid-write
            self.assertLess(time.monotonic(), deadline, "the run never started writing")
            self.assertIsNone(p.poll(), "finished before it could be interrupted")
            time.sleep(0.02)
        p.send_signal(sig)
        _, err = p.communicate(timeout=30)
        self.assertEqual(p.returncode, status, err)
        self.assertNotIn("Traceback", err)
        self.assertIn(word, err)
        self.assertEqual(os.listdir(self.dir), [])

    def writing(self):
        """Whether a staged data file has some bytes written."""
        for d in os.listdir(self.dir):
            try:
                if d.startswith(".gpuradar-tmp") and \
                        os.path.getsize(os.path.join(self.dir, d, "x" + DATA)) > 0:
                    return True
            except FileNotFoundError:  # not created yet, or already removed
                pass
        return False

    def test_006_ctrl_c(self):
        self.interrupt(signal.SIGINT, 130, "interrupted")

    def test_007_sigterm_removes_partial_files(self):
        self.interrupt(signal.SIGTERM, 143, "terminated")

    def test_007b_interrupt_as_the_flowgraph_starts(self):
        """A Ctrl-C that lands as start() returns, or again while stopping: the
        flowgraph is stopped and waited for before the interrupt goes on (threads left
        running hung or crashed the app at exit)."""
        from gnuradio.gpuradar import app_util

        class FakeTopBlock:
            def __init__(self, interrupt_in):
                self.calls, self.interrupt_in = [], set(interrupt_in)

            def call(self, name):
                self.calls.append(name)
                if name in self.interrupt_in:
                    self.interrupt_in.discard(name)
                    raise KeyboardInterrupt

            def start(self):
                self.call("start")

            def stop(self):
                self.call("stop")

            def wait(self):
                self.call("wait")

        for interrupt_in, calls in ((["start"], ["start", "stop", "wait"]),
                                    (["start", "stop"],
                                     ["start", "stop", "stop", "wait"]),
                                    (["start", "wait"],
                                     ["start", "stop", "wait", "stop", "wait"])):
            tb = FakeTopBlock(interrupt_in)
            with self.assertRaises(KeyboardInterrupt):
                app_util.run_with_progress(tb, lambda: 0, 1, "x", enabled=False)
            self.assertEqual(tb.calls, calls, interrupt_in)

    def test_008_output_directory(self):
        os.mkdir(self.path("recs"))
        rc, out, err = run(SIM, "--preset", "tiny", "-o", self.path("recs") + "/", "-q")
        self.assertEqual(rc, 0, out + err)
        self.assertTrue(os.path.isfile(self.path("recs", "gpuradar_pd" + META)))
        self.fails([SIM, "--preset", "tiny", "-o", self.path("none", "x")], 2,
                   self.path("none"), "does not exist")

    def test_009_sar_metadata_is_standard_json(self):
        base = self.sar_recording("ph", "--f0", "1e300")
        with open(base + META) as f:
            json.loads(f.read(), parse_constant=lambda c: self.fail(c))


class SarRecording(Hardening):
    def test_001_missing_and_not_json(self):
        self.sar_fails(self.path("nothing"), self.path("nothing" + META), "no such file")
        base = self.sar_recording()
        self.write_meta_text(base, "{")
        self.sar_fails(base, base + META, "not valid SigMF JSON")

    def test_002_data_disagrees_with_metadata(self):
        base = self.sar_recording()
        with open(base + META) as f:
            original = f.read()
        size = os.path.getsize(base + DATA)
        with open(base + DATA, "r+b") as f:
            f.truncate(size - 8)
        self.sar_fails(base, base + DATA, "bytes, not", "'global.gpuradar:nbins'")
        with open(base + DATA, "r+b") as f:
            f.truncate(size)
        # nbins halved (the data holds twice as many bins per pulse): the pulses would be
        # cut wrong; the geometry has the original npulses rows.
        self.edit(base, lambda m: m["global"].update({"gpuradar:nbins": 128,
                                                      "gpuradar:npulses": 128}))
        self.sar_fails(base, base + GEOMETRY, "'global.gpuradar:npulses'")
        self.write_meta_text(base, original)
        self.edit(base, lambda m: m["global"].update({"gpuradar:nbins": 128}))
        self.sar_fails(base, base + DATA, "'global.gpuradar:nbins'")
        self.write_meta_text(base, original)
        self.edit(base, lambda m: m["global"].update({"core:datatype": "cu8"}))
        self.sar_fails(base, "'global.core:datatype'", "cf32_le or ci16_le or ci8")
        self.write_meta_text(base, original)
        # ci16_le is read (gpuradar-sim sar --datatype): the float data is twice its size
        self.edit(base, lambda m: m["global"].update({"core:datatype": "ci16_le"}))
        self.sar_fails(base, base + DATA, "bytes, not", "ci16_le")

    def test_003_geometry(self):
        base = self.sar_recording()
        with open(base + META) as f:
            original = f.read()
        with open(base + GEOMETRY, "r+b") as f:
            f.truncate(os.path.getsize(base + GEOMETRY) - 48)
        self.sar_fails(base, base + GEOMETRY, "float64")
        os.remove(base + GEOMETRY)
        self.sar_fails(base, base + GEOMETRY, "no such file")
        for name in ("/etc/passwd", "../ph.geometry.f64", "sub/../../x", 5):
            with self.subTest(name=name):
                self.write_meta_text(base, original)
                self.edit(base, lambda m: m["global"].update(
                    {"gpuradar:geometry_file": name}))
                self.sar_fails(base, "'global.gpuradar:geometry_file'")

    def test_004_geometry_not_finite_is_skipped_and_counted(self):
        # A data error, not a bad recording: the block skips the pulse and counts it.
        import numpy as np
        base = self.sar_recording()
        g = np.fromfile(base + GEOMETRY, "<f8")
        g[6 * 3 + 1] = np.nan
        g.tofile(base + GEOMETRY)
        rc, out, err = run(SAR, "-i", base, "--backend", "cpu", "-o", self.path("ok"),
                           "-q")
        self.assertEqual(rc, 0, out + err)
        self.assertIn(", 1 pulses skipped", out)
        # Non-finite samples: used as 0, counted and reported; the image stays finite.
        d = np.fromfile(base + DATA, "<c8")
        d[[7, 300]] = [complex(np.nan, 0), complex(0, np.inf)]
        d.tofile(base + DATA)
        rc, out, err = run(SAR, "-i", base, "--backend", "cpu", "-o", self.path("nan"),
                           "-q", "--no-png")
        self.assertEqual(rc, 0, out + err)
        self.assertIn(", 2 non-finite samples zeroed", out)
        self.assertTrue(np.all(np.isfinite(np.load(self.path("nan") + ".npy"))))
        # A bin spacing that disagrees with the metadata's gpuradar:dr is an error.
        g[6 * 3 + 1] = 0.0
        g[6 * 5 + 4] *= 1.5
        g.tofile(base + GEOMETRY)
        self.sar_fails(base, base + GEOMETRY, "pulse 5", "'global.gpuradar:dr'")

    def test_004b_geometry_without_a_usable_pulse_or_with_f0_not_positive(self):
        # All positions NaN: every pulse skipped, and the app used to exit 0 with a blank
        # image. f0 negated on every pulse: it exited 0, "0 pulses skipped", unfocused.
        import numpy as np
        base = self.sar_recording()
        g0 = np.fromfile(base + GEOMETRY, "<f8").reshape(-1, 6)
        g = g0.copy()
        g[:, :3] = np.nan
        g.tofile(base + GEOMETRY)
        self.sar_fails(base, base + GEOMETRY, "no usable pulse", f"all {len(g)}")
        g = g0.copy()
        g[:, 4] = -g[:, 4]
        g[0, 0] = np.inf
        g.tofile(base + GEOMETRY)
        self.sar_fails(base, base + GEOMETRY, "no usable pulse", "dr <= 0")
        g = g0.copy()
        g[:, 5] = -g[:, 5]
        g.tofile(base + GEOMETRY)
        self.sar_fails(base, base + GEOMETRY, "pulse 0: f0", "must be > 0 Hz",
                       f"{len(g)} of {len(g)} pulses")
        g = g0.copy()
        g[7, 5] = 0.0
        g.tofile(base + GEOMETRY)
        self.sar_fails(base, base + GEOMETRY, "pulse 7: f0", "must be > 0 Hz (got 0")
        # One usable pulse is enough to form the image (the others skipped and counted).
        g = g0.copy()
        g[1:, 0] = np.nan
        g.tofile(base + GEOMETRY)
        rc, out, err = run(SAR, "-i", base, "--backend", "cpu", "-o", self.path("one"),
                           "-q", "--no-png")
        self.assertEqual(rc, 0, out + err)
        self.assertIn(f", {len(g) - 1} pulses skipped", out)

    def test_005_grid_and_targets_types(self):
        base = self.sar_recording()
        cases = [(lambda m: m["global"]["gpuradar:grid"].update(nx=0),
                  ["'global.gpuradar:grid.nx'", ">= 1"]),
                 (lambda m: m["global"]["gpuradar:grid"].update(dx="small"),
                  ["'global.gpuradar:grid.dx'"]),
                 (lambda m: m["annotations"][0].update({"gpuradar:position": [1, 2]}),
                  ["'annotations[0].gpuradar:position'", "3 finite numbers"]),
                 (lambda m: m["global"].update({"gpuradar:dr": 0.3}),
                  ["disagree"])]
        self.each_edit_fails(base, cases, self.sar_fails)

    def test_006_arguments_and_outputs(self):
        base = self.sar_recording()
        self.sar_fails(base, "--pulses-per-image", extra=["--pulses-per-image", "1000"])
        # 0 is the default, all pulses in one image; --help says so.
        rc, out, err = run(SAR, "--help")
        self.assertEqual(rc, 0, err)
        self.assertIn("0 (the default): all the recording's pulses, one image",
                      " ".join(out.split()))
        self.sar_fails(base, "argument --grid", extra=["--grid", "0,0,1,1,10"])
        self.sar_fails(base, "argument --grid", extra=["--grid", "0,0,0,1,10,10"])
        self.fails([SAR, "--geometry", "g.f64", "--preset", "tiny", "-q"], 2, "--geometry",
                   "needs --input")
        self.fails([SAR, "-o", self.path("none", "img"), "--preset", "tiny", "-q"], 2,
                   self.path("none"), "does not exist")
        # A write error (file-size limit) leaves neither the .npy nor the PNG.
        out = self.path("img")
        self.fails([SAR, "-i", base, "--backend", "cpu", "-o", out, "-q"], 2, "cannot write",
                   outputs=[out + ".npy", out + ".png"], rlimit_fsize=8000)

    def test_007_overrides(self):
        base = self.sar_recording()
        os.rename(base + GEOMETRY, self.path("elsewhere.f64"))

        def strip(m):
            for k in ("gpuradar:npulses", "gpuradar:nbins", "gpuradar:geometry_file"):
                del m["global"][k]
        self.edit(base, strip)
        self.sar_fails(base, "'global.gpuradar:nbins' is missing")
        self.sar_fails(base, "'global.gpuradar:geometry_file' is missing",
                       extra=["--nbins", "256"])
        rc, out, err = run(SAR, "-i", base, "--backend", "cpu", "-o", self.path("ok"),
                           "-q", "--nbins", "256", "--geometry", self.path("elsewhere.f64"),
                           "--check")
        self.assertEqual(rc, 0, out + err)
        self.assertIn("64 pulses x 256 bins", out)  # npulses from the data's size
        self.sar_fails(base, "--nbins", extra=["--nbins", "128", "--geometry",
                                                self.path("elsewhere.f64")])


class Versions(Hardening):
    def test_001_version(self):
        for app, name in ((SIM, "gpuradar-sim"), (PROCESS, "gpuradar-process"),
                          (SAR, "gpuradar-sar")):
            rc, out, err = run(app, "--version")
            self.assertEqual((rc, out.strip()),
                             (0, f"{name} (gr-gpuradar) {gpuradar.__version__}"), err)
        self.assertRegex(gpuradar.__version__, r"^\d+\.\d+\.\d+$")


if __name__ == "__main__":
    unittest.main()
