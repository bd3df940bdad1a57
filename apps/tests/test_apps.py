#!/usr/bin/env python3
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""End-to-end tests of gpuradar-sim and gpuradar-process (CPU backend, small built-in
scenario): the apps run as a user runs them (subprocess), files exist, PNGs decode and
have the stated size, every simulated target is detected, and bad inputs give a clear
message naming the file and field, an exit status != 0 and no output files.

Run with Debian's GNU Radio Python and PYTHONPATH=<build>/test_modules (ctest does);
`test_apps.py SimProcess` runs one group.
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
APPS = os.path.dirname(HERE)
SIM = os.path.join(APPS, "gpuradar_sim.py")
PROCESS = os.path.join(APPS, "gpuradar_process.py")
SAR = os.path.join(APPS, "gpuradar_sar.py")
PNG_SIZE = (640, 480)
OUTPUT_SUFFIXES = (".json", ".csv", ".png", ".tracks.csv")


def run(script, *args, cwd=None):
    p = subprocess.run([sys.executable, script, *args], cwd=cwd, capture_output=True,
                       text=True, timeout=120)
    return p.returncode, p.stdout, p.stderr


def png_size(path):
    """(width, height) from the IHDR chunk, after checking the PNG signature."""
    with open(path, "rb") as f:
        head = f.read(24)
    assert head[:8] == b"\x89PNG\r\n\x1a\n", f"{path}: no PNG signature"
    assert head[12:16] == b"IHDR", f"{path}: no IHDR chunk"
    return int.from_bytes(head[16:20], "big"), int.from_bytes(head[20:24], "big")


class AppTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="gpuradar-apps-test-")

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def path(self, *parts):
        return os.path.join(self.dir, *parts)

    def simulate_small(self, base="rec"):
        rc, out, err = run(SIM, "--preset", "small", "--output", self.path(base), "-q")
        self.assertEqual(rc, 0, out + err)
        return self.path(base)

    def assert_no_outputs(self, prefix):
        for s in OUTPUT_SUFFIXES:
            self.assertFalse(os.path.exists(prefix + s), prefix + s)
        leftovers = [n for n in os.listdir(os.path.dirname(prefix))
                     if n.startswith(".gpuradar-tmp")]
        self.assertEqual(leftovers, [], "temporary files left behind")


class SimProcess(AppTest):
    def test_001_sim_then_process_detects_every_target(self):
        base = self.simulate_small()
        for s in (".sigmf-data", ".sigmf-meta"):
            self.assertTrue(os.path.isfile(base + s), base + s)
        with open(base + ".sigmf-meta") as f:
            meta = json.load(f)
        g = meta["global"]
        self.assertEqual(g["core:datatype"], "cf32_le")
        for k in ("fs", "fc", "prf", "pri_samples", "gate_start", "nrange", "npulses",
                  "waveform", "nsamples"):
            self.assertIn("gpuradar:" + k, g)
        self.assertEqual(os.path.getsize(base + ".sigmf-data"), 8 * g["gpuradar:nsamples"])
        ntargets = len(g["gpuradar:scene"]["targets"])
        ncpi = g["gpuradar:ncpi"]
        self.assertEqual(len(meta["annotations"]), ntargets * ncpi)

        prefix = self.path("out")
        rc, out, err = run(PROCESS, "--input", base + ".sigmf-meta", "--backend", "cpu",
                           "--output", prefix, "--png-size", "%dx%d" % PNG_SIZE, "--check",
                           "-q")
        self.assertEqual(rc, 0, out + err)
        self.assertIn("backend: cpu", out)
        self.assertIn("throughput:", out)
        self.assertIn("Msamples/s", out)
        for s in OUTPUT_SUFFIXES:
            self.assertTrue(os.path.isfile(prefix + s), prefix + s)
        self.assertEqual(png_size(prefix + ".png"), PNG_SIZE)
        try:
            import matplotlib.image as mpimg
            img = mpimg.imread(prefix + ".png")
            self.assertEqual(img.shape[:2], (PNG_SIZE[1], PNG_SIZE[0]))
        except ImportError:
            pass
        with open(prefix + ".json") as f:
            report = json.load(f)
        self.assertEqual(report["backend"]["pulse_doppler_processor"], "cpu")
        self.assertEqual(report["backend"]["cfar_2d"], "cpu")
        self.assertEqual(report["cpis"], ncpi)
        self.assertGreater(report["throughput_sps"], 0)
        truth = report["truth"]
        self.assertEqual(len(truth["targets"]), ntargets * ncpi)
        self.assertEqual(truth["missed"], 0, truth)
        self.assertEqual(truth["detected"], ntargets * ncpi)
        self.assertTrue(all(t["detected"] for t in truth["targets"]))
        # Pfa 1e-6 over ~5e4 cells: no false detection expected with this seed.
        self.assertEqual(truth["false"], 0, report["detections"])
        with open(prefix + ".csv") as f:
            lines = f.read().splitlines()
        self.assertTrue(lines[0].startswith("cpi,range_bin,doppler_bin,range_m,velocity_mps"))
        self.assertEqual(len(lines) - 1, len(report["detections"]))
        for d in report["detections"]:
            self.assertIn("range_m", d)
            self.assertIn("velocity_mps", d)
        # Merged by the CFAR at the interpolated peak.
        for d in report["detections"]:
            self.assertGreaterEqual(d["cluster_size"], 1)
            self.assertLess(abs(d["range_bin_interp"] - d["range_bin"]), 0.51)
        # The tracker: one track per target, confirmed (2 of 3) and kept to the end, its
        # range near the truth; the tracks CSV has a line per track and CPI.
        self.assertEqual(len(report["tracks"]), ncpi)
        final = [t for t in report["tracks"][-1]["tracks"] if t["status"] == "confirmed"]
        self.assertEqual(len(final), ntargets)
        last_truth = [t for t in truth["targets"] if t["cpi"] == ncpi - 1]
        for t in last_truth:
            near = [k for k in final if abs(k["range_m"] - t["range_m"]) < 3 *
                    report["parameters"]["range_bin_m"]]
            self.assertEqual(len(near), 1, (t, final))
            self.assertEqual(near[0]["hits"], ncpi)
        with open(prefix + ".tracks.csv") as f:
            lines = f.read().splitlines()
        self.assertEqual(lines[0].split(",")[:4], ["cpi", "time_s", "id", "status"])
        self.assertEqual(len(lines) - 1, sum(len(s["tracks"]) for s in report["tracks"]))
        self.assertIn(f"at the end {ntargets} confirmed", out)
        # The table printed for the user.
        self.assertIn(f"{ntargets * ncpi} detected, 0 missed, 0 false (", out)

    def test_001b_noise_only_and_fractional_pri(self):
        # No targets: the truth says so, every detection is false (Pfa 1e-6 over 5e4
        # cells: none expected). A fractional PRI: the framer follows the source's
        # drift-free schedule and the targets are still found.
        base = self.path("noise")
        rc, out, err = run(SIM, "--preset", "small", "--no-targets", "-o", base, "-q")
        self.assertEqual(rc, 0, out + err)
        rc, out, err = run(PROCESS, "-i", base, "--backend", "cpu", "-o", self.path("n"),
                           "--no-png", "-q")
        self.assertEqual(rc, 0, out + err)
        with open(self.path("n.json")) as f:
            truth = json.load(f)["truth"]
        self.assertEqual((truth["detected"], truth["missed"]), (0, 0))
        self.assertLessEqual(truth["false"], 1)
        self.assertFalse(os.path.exists(self.path("n.png")))
        base = self.path("frac")
        rc, out, err = run(SIM, "--preset", "small", "--pri-samples", "1000.25", "-o", base,
                           "-q")
        self.assertEqual(rc, 0, out + err)
        rc, out, err = run(PROCESS, "-i", base, "--backend", "cpu", "-o", self.path("f"),
                           "--no-png", "--check", "-q")
        self.assertEqual(rc, 0, out + err)

    def test_002_list_writes_nothing(self):
        rc, out, err = run(SIM, "--list", "--output", self.path("x"))
        self.assertEqual(rc, 0, out + err)
        self.assertIn("target 0", out)
        self.assertEqual(os.listdir(self.dir), [])

    def test_003_help(self):
        for cmd in ((SIM, "--help"), (SIM, "pulse-doppler", "--help"), (PROCESS, "--help")):
            rc, out, err = run(*cmd)
            self.assertEqual(rc, 0, err)
            self.assertIn("usage:", out)
            self.assertIn("--output" if len(cmd) == 3 or cmd[0] == PROCESS else
                          "pulse-doppler --help", out)
        rc, out, err = run(PROCESS, "--help")
        self.assertIn("--backend", out)
        rc, out, err = run(SIM, "sar", "--help")
        self.assertEqual(rc, 0, err)
        self.assertIn("--scenario", out)


class Defaults(AppTest):
    def test_001_no_arguments(self):
        # What a new user types first: both apps with no argument, in an empty directory.
        rc, out, err = run(SIM, "-q", cwd=self.dir)
        self.assertEqual(rc, 0, out + err)
        for s in (".sigmf-data", ".sigmf-meta"):
            self.assertTrue(os.path.isfile(self.path("gpuradar_pd" + s)))
        rc, out, err = run(PROCESS, "--backend", "cpu", "-q", cwd=self.dir)
        self.assertEqual(rc, 0, out + err)
        for s in OUTPUT_SUFFIXES:
            self.assertTrue(os.path.isfile(self.path("gpuradar_process" + s)), s)
        self.assertEqual(png_size(self.path("gpuradar_process.png")), (960, 640))
        with open(self.path("gpuradar_process.json")) as f:
            truth = json.load(f)["truth"]
        self.assertEqual(truth["missed"], 0)
        self.assertEqual(truth["detected"], 4 * 8)
        self.assertLessEqual(truth["false"], 3)  # Pfa 1e-6 x 0.92 M cells


class SimSar(AppTest):
    def test_001_sar_recording_images_with_gpuradar_sar(self):
        base = self.path("ph")
        rc, out, err = run(SIM, "sar", "--npulses", "192", "--nbins", "384",
                           "--image-size", "16", "--output", base)
        self.assertEqual(rc, 0, out + err)
        for s in (".sigmf-data", ".sigmf-meta", ".geometry.f64"):
            self.assertTrue(os.path.isfile(base + s), base + s)
        self.assertEqual([n for n in os.listdir(self.dir) if n.startswith(".")], [])
        img = self.path("img")
        rc, out, err = run(SAR, "--input", base, "--backend", "cpu", "--check",
                           "--output", img)
        self.assertEqual(rc, 0, out + err)
        self.assertTrue(os.path.isfile(img + ".png"))
        png_size(img + ".png")


class IntegerRecordings(AppTest):
    """gpuradar-sim writes ci16_le and ci8 as an SDR gives sc16 / sc8; gpuradar-process
    reads them (GNU Radio's interleaved-integer-to-complex blocks, full scale = 1.0)."""

    FULL_SCALE = 8.0

    def simulate(self, datatype, *extra):
        base = self.path(datatype)
        rc, out, err = run(SIM, "--preset", "small", "--datatype", datatype, "-o", base,
                           "-q", *extra)
        self.assertEqual(rc, 0, out + err)
        return base, err

    def detections(self, base):
        prefix = self.path("out_" + os.path.basename(base))
        rc, out, err = run(PROCESS, "--input", base, "--backend", "cpu", "-q",
                           "--output", prefix)
        self.assertEqual(rc, 0, out + err)
        with open(prefix + ".csv") as f:
            rows = [line.strip().split(",") for line in f][1:]
        return {(r[0], r[1], r[2]): (float(r[5]), float(r[7])) for r in rows}

    def test_001_same_detections_as_the_float_recording(self):
        ref = self.detections(self.simulate("cf32_le")[0])
        self.assertGreater(len(ref), 0)
        # Quantisation adds an error e of variance q = LSB^2 / 12 per component (LSB =
        # full scale / 32768 or / 128; uncorrelated with the signal, the noise being far
        # above an LSB) to every sample of the unit-noise-power preset. Through the
        # coherent chain a detection's power |S|^2 = snr N (N samples summed, S the
        # target) moves by 2 Re(e_sum S*) / |S|^2, of RMS 2 sqrt(q / snr): bounded at 4
        # of these, in dB for the SNR (the training cells' noise moves far less).
        for datatype, lsb in (("ci16_le", self.FULL_SCALE / 32768),
                              ("ci8", self.FULL_SCALE / 128)):
            with self.subTest(datatype=datatype):
                base, _ = self.simulate(datatype)
                with open(base + ".sigmf-meta") as f:
                    g = json.load(f)["global"]
                self.assertEqual((g["core:datatype"], g["gpuradar:full_scale"],
                                  g["gpuradar:clipped_samples"]),
                                 (datatype, self.FULL_SCALE, 0))
                self.assertEqual(os.path.getsize(base + ".sigmf-data"),
                                 g["gpuradar:nsamples"] * (4 if datatype == "ci16_le" else 2))
                got = self.detections(base)
                self.assertEqual(sorted(got), sorted(ref))  # same cells
                q = lsb ** 2 / 12
                for cell, (power, snr_db) in got.items():
                    rms = 2 * np.sqrt(q / 10 ** (ref[cell][1] / 10))
                    # read back with 1.0 = full scale: powers scale by 1 / full_scale^2
                    self.assertAlmostEqual(power * self.FULL_SCALE ** 2 / ref[cell][0], 1.0,
                                           delta=4 * rms)
                    self.assertAlmostEqual(snr_db, ref[cell][1],
                                           delta=4 * 10 * np.log10(1 + rms))

    def test_002_clipping_counted(self):
        # A full scale below the noise: the clipped samples are counted in the metadata
        # and a warning, as a recount from the float recording of the same scene says.
        full_scale = 0.5
        base, err = self.simulate("ci8", "--full-scale", str(full_scale))
        with open(base + ".sigmf-meta") as f:
            clipped = json.load(f)["global"]["gpuradar:clipped_samples"]
        ref, _ = self.simulate("cf32_le")
        x = np.fromfile(ref + ".sigmf-data", dtype="<f4").reshape(-1, 2)
        q = np.rint(x.astype(np.float64) * 128 / full_scale)
        self.assertEqual(clipped, int(np.count_nonzero(((q < -128) | (q > 127)).any(axis=1))))
        self.assertGreater(clipped, 0)
        self.assertIn(f"{clipped} of", err)
        self.assertIn("--full-scale", err)

    def test_003_bad_datatype_and_full_scale(self):
        for extra, needle in ((("--datatype", "cu8"), "--datatype"),
                              (("--datatype", "ci8", "--full-scale", "0"), "--full-scale"),
                              (("--datatype", "ci8", "--full-scale", "nan"), "--full-scale")):
            with self.subTest(extra=extra):
                rc, out, err = run(SIM, "--preset", "tiny", "-o", self.path("bad"), "-q",
                                   *extra)
                self.assertNotEqual(rc, 0)
                self.assertIn(needle, err)
                self.assertNotIn("Traceback", err)


class IntegerSarRecordings(unittest.TestCase):
    """gpuradar-sim sar and stripmap --datatype ci16_le / ci8 (full scale: by default the
    smallest that clips nothing); gpuradar-sar reads them with 1.0 = full scale and forms
    the image of the float recording, less the quantisation noise."""

    LEVELS = {"ci16_le": 32768, "ci8": 128}

    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="gpuradar-apps-test-")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir, ignore_errors=True)

    def path(self, *parts):
        return os.path.join(self.dir, *parts)

    def simulate(self, command, datatype, name, *extra):
        base = self.path(name)
        rc, out, err = run(SIM, command, "-o", base, "-q", "--datatype", datatype, *extra)
        self.assertEqual(rc, 0, out + err)
        with open(base + ".sigmf-meta") as f:
            return base, json.load(f)["global"], out, err

    def image(self, base, *extra):
        prefix = base + "_img"
        rc, out, err = run(SAR, "--input", base, "--backend", "cpu", "--no-png", "-q",
                           "--output", prefix, *extra)
        self.assertEqual(rc, 0, out + err)
        return np.load(prefix + ".npy"), out

    @staticmethod
    def focus_rows(out):
        """The focus table's rows (target, position, pixel, peak at ...) of gpuradar-sar."""
        return [line.split(")")[1:3] for line in out.splitlines()
                if line.strip()[:1].isdigit() and "px" in line]

    def test_001_phase_history_same_image(self):
        # 192 pulses x 384 bins of 3 point targets; bp (linear interpolation in range).
        # The quantisation error e (variance q = LSB^2 / 12 per component, LSB = full
        # scale / 32768 or / 128) is white, so the image error, the backprojection of e,
        # has E|err|^2 = npulses * 2q * E[w^2 + (1-w)^2] = npulses * 2q * 2/3 per pixel
        # (w: the interpolation weight, uniform over the pixels).
        geometry = ("--npulses", "192", "--nbins", "384")
        ref_base, g, _, _ = self.simulate("sar", "cf32_le", "ph_cf32", *geometry)
        self.assertEqual(g["core:datatype"], "cf32_le")
        self.assertNotIn("gpuradar:full_scale", g)
        ref, ref_out = self.image(ref_base)
        self.assertEqual(len(self.focus_rows(ref_out)), 3)
        peak = np.abs(ref).max()
        for datatype, levels in self.LEVELS.items():
            with self.subTest(datatype=datatype):
                base, g, out, err = self.simulate("sar", datatype, "ph_" + datatype,
                                                  *geometry)
                self.assertEqual((g["core:datatype"], g["gpuradar:clipped_samples"]),
                                 (datatype, 0))
                self.assertIn(f"{datatype}, full scale", out)
                self.assertEqual(os.path.getsize(base + ".sigmf-data"),
                                 192 * 384 * 2 * np.dtype(
                                     "<i2" if datatype == "ci16_le" else "i1").itemsize)
                # the default full scale: the largest component written as 32767 / 127
                raw = np.fromfile(base + ".sigmf-data",
                                  "<i2" if datatype == "ci16_le" else "i1")
                self.assertEqual(np.abs(raw.astype(np.int32)).max(), levels - 1)
                full_scale = g["gpuradar:full_scale"]
                img, out = self.image(base)
                self.assertIn(f"{datatype} samples (read with 1.0 = full scale", out)
                self.assertEqual(self.focus_rows(out), self.focus_rows(ref_out))
                self.assertEqual(np.unravel_index(np.abs(img).argmax(), img.shape),
                                 np.unravel_index(np.abs(ref).argmax(), ref.shape))
                err_power = np.mean(np.abs(img * full_scale - ref) ** 2)
                q = (full_scale / levels) ** 2 / 12
                predicted = 192 * 2 * q * 2 / 3
                self.assertAlmostEqual(err_power / predicted, 1.0, delta=0.15)
                # SER at the peak: ~122 dB (ci16), ~74 dB (ci8)
                ser_db = 10 * np.log10(peak ** 2 / err_power)
                self.assertAlmostEqual(ser_db, 10 * np.log10(peak ** 2 / predicted),
                                       delta=1.0)

    def test_002_stripmap_same_image(self):
        # Raw echoes through chirp scaling: the images of ci16 and ci8 differ from the
        # float one by their quantisation noise alone, so the error powers scale as the
        # LSBs squared (a wrong scale would leave an error proportional to the image,
        # the same for both).
        ref_base, _, _, _ = self.simulate("stripmap", "cf32_le", "sm_cf32",
                                          "--preset", "tiny")
        ref, ref_out = self.image(ref_base, "--algorithm", "csa")
        errors = {}
        for datatype, levels in self.LEVELS.items():
            with self.subTest(datatype=datatype):
                base, g, _, _ = self.simulate("stripmap", datatype, "sm_" + datatype,
                                              "--preset", "tiny")
                self.assertEqual((g["core:datatype"], g["gpuradar:clipped_samples"]),
                                 (datatype, 0))
                self.assertFalse(os.path.exists(base + ".sigmf-data.cf32"))
                img, out = self.image(base, "--algorithm", "csa")
                self.assertIn(f"{datatype} samples", out)
                self.assertEqual(img.shape, ref.shape)
                self.assertEqual(np.unravel_index(np.abs(img).argmax(), img.shape),
                                 np.unravel_index(np.abs(ref).argmax(), ref.shape))
                full_scale = g["gpuradar:full_scale"]
                errors[datatype] = (np.mean(np.abs(img * full_scale - ref) ** 2),
                                    (full_scale / levels) ** 2)
        (e16, lsb16), (e8, lsb8) = errors["ci16_le"], errors["ci8"]
        self.assertGreater(e16, 0)
        self.assertAlmostEqual((e8 / e16) / (lsb8 / lsb16), 1.0, delta=0.2)

    def test_003_clipping_counted(self):
        # A full scale at a tenth of the peak clips: counted in the metadata and warned
        # about, as a recount from the float recording says.
        ref_base, _, _, _ = self.simulate("sar", "cf32_le", "clip_cf32", "--npulses", "64",
                                          "--nbins", "256")
        x = np.fromfile(ref_base + ".sigmf-data", "<f4").reshape(-1, 2)
        full_scale = float(np.abs(x).max()) / 10
        base, g, _, err = self.simulate("sar", "ci8", "clip_ci8", "--npulses", "64",
                                        "--nbins", "256", "--full-scale", repr(full_scale))
        q = np.rint(x.astype(np.float64) * 128 / full_scale)
        clipped = int(np.count_nonzero(((q < -128) | (q > 127)).any(axis=1)))
        self.assertGreater(clipped, 0)
        self.assertEqual((g["gpuradar:full_scale"], g["gpuradar:clipped_samples"]),
                         (full_scale, clipped))
        self.assertIn(f"{clipped} samples clipped", err)
        self.assertIn("--full-scale", err)

    def test_004_bad_input(self):
        for command in ("sar", "stripmap"):
            for extra, needle in ((("--datatype", "cu8"), "--datatype"),
                                  (("--datatype", "ci8", "--full-scale", "0"),
                                   "--full-scale"),
                                  (("--datatype", "ci16_le", "--full-scale", "-1"),
                                   "--full-scale")):
                with self.subTest(command=command, extra=extra):
                    out_base = self.path("bad_" + command)
                    rc, out, err = run(SIM, command, "-o", out_base, "-q", *extra)
                    self.assertNotEqual(rc, 0)
                    self.assertIn(needle, err)
                    self.assertNotIn("Traceback", err)
                    self.assertFalse(os.path.exists(out_base + ".sigmf-data"))
        # a recording whose full scale is not > 0: the reader names the field
        base, _, _, _ = self.simulate("sar", "ci16_le", "bad_meta", "--npulses", "16",
                                      "--nbins", "64")
        with open(base + ".sigmf-meta") as f:
            meta = json.load(f)
        meta["global"]["gpuradar:full_scale"] = -2.0
        with open(base + ".sigmf-meta", "w") as f:
            json.dump(meta, f)
        rc, out, err = run(SAR, "--input", base, "--backend", "cpu", "--no-png", "-q",
                           "--output", base + "_img")
        self.assertNotEqual(rc, 0)
        self.assertIn("gpuradar:full_scale", err)
        self.assertNotIn("Traceback", err)


class Presets(unittest.TestCase):
    """gpuradar-sim --preset examples is what the GRC examples say they read: their
    variables (and zmq_scene_tx's targets) against the preset, so that a change on
    either side fails here."""

    @staticmethod
    def grc_variables(name):
        import yaml
        from gnuradio.gpuradar import sigmf_cpi_source
        with open(os.path.join(os.path.dirname(APPS), "examples", name + ".grc")) as f:
            doc = yaml.safe_load(f)
        ns = {}
        # An example that reads its sizes from a sigmf_cpi_source (src.nrange()...) is
        # evaluated as GRC shows it before the recording exists: on the examples preset.
        for b in doc["blocks"]:
            if b["id"] == "gpuradar_sigmf_cpi_source":
                ns[b["name"]] = sigmf_cpi_source.preview(
                    "/nonexistent/recording", b["parameters"].get("kind", "pulse_doppler"))
        pending = [b for b in doc["blocks"] if b["id"] == "variable"]
        # Blocks are saved in any order: evaluate until no further variable resolves.
        while pending:
            unresolved = []
            for b in pending:
                try:
                    ns[b["name"]] = eval(b["parameters"]["value"], {}, dict(ns))
                except Exception:  # needs a later variable, a block or an import
                    unresolved.append(b)
            if len(unresolved) == len(pending):
                break
            pending = unresolved
        return ns, doc

    def test_001_pulse_doppler_examples(self):
        from gnuradio.gpuradar import pd_sim
        sc = pd_sim.scenario("examples")
        for name in ("pulse_doppler_offline", "pulse_doppler_uhd", "pulse_doppler_soapy",
                     "zmq_processing_rx", "zmq_scene_tx"):
            with self.subTest(example=name):
                v, doc = self.grc_variables(name)
                self.assertEqual((sc.fs, sc.fc, sc.pri_samples, sc.gate_start, sc.nrange,
                                  sc.npulses, sc.bandwidth, sc.pulse_width),
                                 (v["samp_rate"], v["fc"], v["pri"], v["gate_start"],
                                  v["nrange"], v["npulses"], v["bandwidth"],
                                  v["pulse_width"]))
        v, doc = self.grc_variables("zmq_scene_tx")
        scene = [b for b in doc["blocks"] if b["id"] == "gpuradar_radar_scene_source"][0]
        p = scene["parameters"]
        self.assertEqual([t.range_m for t in sc.targets], eval(p["ranges"], {}, v))
        self.assertEqual([t.velocity_mps for t in sc.targets], eval(p["velocities"], {}, v))
        self.assertEqual([t.snr_db for t in sc.targets], eval(p["amplitudes"], {}, v))
        self.assertEqual(sc.seed, int(p["seed"]))

    def test_002_sar_example(self):
        from gnuradio.gpuradar import sar_sim
        v, _ = self.grc_variables("sar_offline")
        p = sar_sim.PRESETS["examples"]
        self.assertEqual((p["npulses"], p["nbins"]), (v["npulses"], v["nbins"]))
        # The grid sar_sim.scenario derives from the preset is the example's.
        grid = sar_sim.scenario("spotlight", npulses=8, nbins=p["nbins"],
                                image_size=p["image_size"]).grid
        self.assertEqual((grid.nx, grid.ny), (v["nx"], v["ny"]))
        self.assertAlmostEqual(grid.dx, v["dx"])
        self.assertAlmostEqual(grid.x0, v["x0"])


class BadInput(AppTest):
    def process_fails(self, recording, *needles, prefix=None):
        prefix = prefix or self.path("out")
        rc, out, err = run(PROCESS, "--input", recording, "--backend", "cpu", "--output",
                           prefix, "-q")
        self.assertNotEqual(rc, 0, out + err)
        self.assertNotIn("Traceback", err)
        for n in needles:
            self.assertIn(n, err)
        if os.path.isdir(os.path.dirname(prefix)):
            self.assert_no_outputs(prefix)
        return err

    def edit_meta(self, base, edit):
        with open(base + ".sigmf-meta") as f:
            meta = json.load(f)
        edit(meta)
        with open(base + ".sigmf-meta", "w") as f:
            json.dump(meta, f)

    def test_001_missing_recording(self):
        self.process_fails(self.path("nothing"), self.path("nothing.sigmf-meta"),
                           "no such file")

    def test_002_missing_data_file(self):
        base = self.simulate_small()
        os.remove(base + ".sigmf-data")
        self.process_fails(base, base + ".sigmf-data", "no such file")

    def test_003_directory_instead_of_file(self):
        os.mkdir(self.path("d.sigmf-meta"))
        self.process_fails(self.path("d"), self.path("d.sigmf-meta"), "directory")

    def test_004_not_json(self):
        base = self.simulate_small()
        with open(base + ".sigmf-meta", "w") as f:
            f.write('{"global": {"core:datatype": "cf32_le", ')
        self.process_fails(base, base + ".sigmf-meta", "JSON")

    def test_005_each_required_field_missing(self):
        base = self.simulate_small()
        with open(base + ".sigmf-meta") as f:
            original = f.read()
        cases = {
            "gpuradar:nrange": ["gpuradar:nrange"],
            "gpuradar:npulses": ["gpuradar:npulses"],
            "gpuradar:gate_start": ["gpuradar:gate_start"],
            "gpuradar:waveform": ["gpuradar:waveform"],
            "core:datatype": ["core:datatype"],
        }
        for field, needles in cases.items():
            with self.subTest(field=field):
                with open(base + ".sigmf-meta", "w") as f:
                    f.write(original)
                self.edit_meta(base, lambda m: m["global"].pop(field))
                self.process_fails(base, base + ".sigmf-meta", *needles)
        # PRI: neither pri_samples nor prf; fs: neither gpuradar:fs nor core:sample_rate.
        for fields, needle in ((("gpuradar:pri_samples", "gpuradar:prf"),
                                "gpuradar:pri_samples"),
                               (("gpuradar:fs", "core:sample_rate"), "core:sample_rate")):
            with self.subTest(fields=fields):
                with open(base + ".sigmf-meta", "w") as f:
                    f.write(original)
                self.edit_meta(base, lambda m: [m["global"].pop(k) for k in fields])
                self.process_fails(base, base + ".sigmf-meta", needle)
        with open(base + ".sigmf-meta", "w") as f:
            f.write(original)
        self.edit_meta(base, lambda m: m["global"].update({"gpuradar:nrange": "many"}))
        self.process_fails(base, base + ".sigmf-meta", "gpuradar:nrange", "number")

    def test_006_truncated_data(self):
        base = self.simulate_small()
        size = os.path.getsize(base + ".sigmf-data")
        with open(base + ".sigmf-data", "r+b") as f:
            f.truncate(size - 8 * 1000)
        self.process_fails(base, base + ".sigmf-data", "truncated", "gpuradar:nsamples")
        with open(base + ".sigmf-data", "r+b") as f:
            f.truncate(size - 8 * 1000 - 3)
        self.process_fails(base, base + ".sigmf-data", "truncated")

    def test_006b_data_is_a_directory(self):
        base = self.simulate_small()
        os.remove(base + ".sigmf-data")
        os.mkdir(base + ".sigmf-data")
        self.process_fails(base, base + ".sigmf-data", "directory")

    def test_007_unreadable_data(self):
        if hasattr(os, "geteuid") and os.geteuid() == 0:
            self.skipTest("root reads any file")
        base = self.simulate_small()
        os.chmod(base + ".sigmf-data", 0)
        self.process_fails(base, base + ".sigmf-data", "cannot read")

    def test_008_output_directory_missing(self):
        base = self.simulate_small()
        self.process_fails(base, self.path("no_such_dir"),
                           prefix=self.path("no_such_dir", "out"))

    def test_009_bad_option_writes_nothing(self):
        base = self.simulate_small()
        prefix = self.path("out")
        rc, out, err = run(PROCESS, "--input", base, "--backend", "cpu", "--output", prefix,
                           "--plot-cpi", "7", "-q")
        self.assertNotEqual(rc, 0)
        self.assertIn("--plot-cpi", err)
        self.assert_no_outputs(prefix)

    def test_009b_staged_outputs_failure_half_way(self):
        # The mechanism both apps write through: files staged, then an error before
        # commit(): no final name appears, no temporary is left.
        from gnuradio.gpuradar import app_util
        prefix = self.path("out")
        with self.assertRaises(RuntimeError):
            with app_util.StagedOutputs() as out:
                for s in OUTPUT_SUFFIXES[:2]:
                    with open(out.path(prefix + s), "w") as f:
                        f.write("partial")
                raise RuntimeError("failed half-way")
        self.assert_no_outputs(prefix)

    def test_010_sim_bad_parameters(self):
        rc, out, err = run(SIM, "--preset", "small", "--gate-start", "500", "--nrange", "800",
                           "--output", self.path("x"))
        self.assertNotEqual(rc, 0)
        self.assertIn("--gate-start", err)
        rc, out, err = run(SIM, "--output", self.path("no_dir", "x"), "--preset", "small")
        self.assertNotEqual(rc, 0)
        self.assertIn(self.path("no_dir"), err)
        self.assertNotIn("Traceback", err)
        rc, out, err = run(SIM, "--target", "1000,2", "--output", self.path("x"))
        self.assertNotEqual(rc, 0)
        self.assertIn("--target", err)
        self.assertEqual(os.listdir(self.dir), [])


if __name__ == "__main__":
    unittest.main()
