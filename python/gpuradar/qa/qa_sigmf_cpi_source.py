#!/usr/bin/env python3
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""QA for gpuradar.sigmf_cpi_source: on the recordings gpuradar-sim writes (pulse-Doppler,
SAR phase history, stripmap), the getters equal the metadata gpuradar-sim wrote, the
samples played equal the data file, the truth messages equal the annotations; ci16_le and
ci8 recordings play scaled to 1.0 = full scale; a recording whose pulse 0 is not at sample
0 is played from pulse 0; a missing file, a missing field, a field of the wrong type, a
recording of another kind and an unknown datatype are refused naming the field and the
metadata key."""

import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import pmt
from gnuradio import blocks, gr, gr_unittest
from gnuradio import gpuradar
from gnuradio.gpuradar import sigmf_io

SIM = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "apps",
                   "gpuradar_sim.py")
SOURCE = sys.modules["gnuradio.gpuradar.sigmf_cpi_source"]


def play(path, kind="auto"):
    """(source, samples played as (items, vlen), truth messages as dicts)."""
    tb = gr.top_block()
    src = gpuradar.sigmf_cpi_source(path, kind)
    snk = blocks.vector_sink_c(src.vlen())
    dbg = blocks.message_debug()
    tb.connect(src, snk)
    tb.msg_connect(src, "truth", dbg, "store")
    tb.run()
    data = np.array(snk.data(), dtype=np.complex64).reshape(-1, src.vlen())
    truth = [pmt.to_python(dbg.get_message(i)) for i in range(dbg.num_messages())]
    return src, data, truth


class qa_sigmf_cpi_source(gr_unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="qa_sigmf_cpi_source_")
        env = dict(os.environ)
        for args, base in ((["pulse-doppler", "--preset", "tiny"], "pd"),
                           (["sar", "--preset", "tiny"], "sar"),
                           (["stripmap", "--preset", "tiny"], "sm")):
            subprocess.run([sys.executable, SIM] + args + ["-q", "-o",
                                                           os.path.join(cls.dir, base)],
                           check=True, env=env, stdout=subprocess.DEVNULL)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir, ignore_errors=True)

    def base(self, name):
        return os.path.join(self.dir, name)

    def meta(self, name):
        with open(self.base(name) + ".sigmf-meta") as f:
            return json.load(f)

    def copy(self, name, new, edit_global=None, data=None, datatype=None):
        """A copy of recording `name` as `new`, its global object edited and its data
        replaced (bytes) when given."""
        meta = self.meta(name)
        if edit_global:
            edit_global(meta["global"])
        if datatype:
            meta["global"]["core:datatype"] = datatype
        with open(self.base(new) + ".sigmf-meta", "w") as f:
            json.dump(meta, f)
        src = self.base(name) + ".sigmf-data"
        if data is None:
            shutil.copy(src, self.base(new) + ".sigmf-data")
        else:
            with open(self.base(new) + ".sigmf-data", "wb") as f:
                f.write(data)
        geometry = self.base(name) + ".geometry.f64"
        if os.path.exists(geometry):
            shutil.copy(geometry, self.base(new) + ".geometry.f64")
        return self.base(new)

    def assertRefused(self, path, kind, *words):
        with self.assertRaises(sigmf_io.RecordingError) as cm:
            gpuradar.sigmf_cpi_source(path, kind)
        for w in words:
            self.assertIn(w, str(cm.exception))
        return str(cm.exception)

    def test_001_pulse_doppler_values_samples_and_truth(self):
        g = self.meta("pd")["global"]
        src, data, truth = play(self.base("pd") + ".sigmf-data", "pulse_doppler")
        ns = "gpuradar:"
        for getter in ("fs", "fc", "pri_samples", "prf", "gate_start", "nrange",
                       "npulses", "ncpi", "nsamples", "r0"):
            self.assertAlmostEqual(getattr(src, getter)(), g[ns + getter], places=6,
                                   msg=getter)
        wf = g[ns + "waveform"]
        self.assertEqual(src.waveform(), "lfm")
        self.assertEqual(src.bandwidth(), wf["bandwidth"])
        self.assertEqual(src.pulse_width(), wf["pulse_width"])
        self.assertEqual(src.up_chirp(), wf["up_chirp"])
        self.assertEqual((src.kind(), src.vlen(), src.datatype()),
                         ("pulse_doppler", 1, "cf32_le"))
        recorded = np.fromfile(self.base("pd") + ".sigmf-data", dtype=np.complex64)
        self.assertGreater(np.abs(recorded).max(), 0)
        np.testing.assert_array_equal(data[:, 0], recorded[:src.nitems()])
        annotations = [a for a in self.meta("pd")["annotations"] if ns + "target" in a]
        self.assertEqual(len(truth), len(annotations))
        self.assertGreater(len(truth), 1)
        for t, a in zip(truth, annotations):
            for key in ("target", "cpi", "range_m", "velocity_mps", "doppler_hz",
                        "snr_db"):
                self.assertEqual(t[key], a[ns + key], key)
            self.assertEqual(t["sample"], a["core:sample_start"])

    def test_002_sar_phase_history(self):
        g = self.meta("sar")["global"]
        src, data, truth = play(self.base("sar"), "sar")
        self.assertEqual((src.kind(), src.nbins(), src.npulses(), src.vlen()),
                         ("sar", g["gpuradar:nbins"], g["gpuradar:npulses"],
                          g["gpuradar:nbins"]))
        for key in ("x0", "y0", "dx", "dy", "nx", "ny"):
            self.assertEqual(getattr(src, key)(), g["gpuradar:grid"][key], key)
        self.assertEqual((src.f0(), src.dr()), (g["gpuradar:f0"], g["gpuradar:dr"]))
        self.assertEqual(os.path.basename(src.geometry_file()), g["gpuradar:geometry_file"])
        recorded = np.fromfile(self.base("sar") + ".sigmf-data", dtype=np.complex64)
        np.testing.assert_array_equal(data.reshape(-1), recorded)
        positions = [a["gpuradar:position"] for a in self.meta("sar")["annotations"]]
        self.assertEqual([[t["x_m"], t["y_m"], t["z_m"]] for t in truth], positions)

    def test_003_stripmap_raw_echoes(self):
        g = self.meta("sm")["global"]
        src, data, _ = play(self.base("sm"))
        acq = g["gpuradar:stripmap"]
        self.assertEqual(src.kind(), "stripmap")
        self.assertEqual(src.block_args(), [acq[k] for k in (
            "fc", "bandwidth", "pulse_width", "up_chirp", "fs", "prf", "velocity",
            "altitude", "r0", "nrange", "squint", "antenna_length")])
        self.assertEqual((src.vlen(), src.npulses()), (acq["nrange"], g["gpuradar:npulses"]))
        recorded = np.fromfile(self.base("sm") + ".sigmf-data", dtype=np.complex64)
        np.testing.assert_array_equal(data.reshape(-1), recorded)

    def test_004_integer_datatypes_scaled_to_full_scale(self):
        recorded = np.fromfile(self.base("pd") + ".sigmf-data", dtype=np.complex64)
        parts = recorded.view(np.float32)
        for datatype, dtype, full in (("ci16_le", "<i2", 32768.0), ("ci8", "i1", 128.0)):
            q = np.clip(np.round(parts / np.abs(parts).max() * (full - 1)), -full,
                        full - 1).astype(dtype)
            path = self.copy("pd", "pd_" + datatype, data=q.tobytes(), datatype=datatype)
            src, data, truth = play(path)
            self.assertEqual(src.datatype(), datatype)
            expected = (q.astype(np.float32) / full).view(np.complex64)
            np.testing.assert_array_equal(data[:, 0], expected[:src.nitems()])
            self.assertGreater(np.abs(data).max(), 0.9)  # full scale reads as ~1
            self.assertEqual(len(truth), len(play(self.base("pd"))[2]))

    def test_005_first_pulse_not_at_sample_zero(self):
        recorded = np.fromfile(self.base("pd") + ".sigmf-data", dtype=np.complex64)
        lead = (np.arange(37) + 5j).astype(np.complex64)

        def shift(g):
            g["gpuradar:first_pulse_sample"] = 37
            g["gpuradar:nsamples"] += 37
        path = self.copy("pd", "pd_late", shift, np.concatenate([lead, recorded]).tobytes())
        with open(path + ".sigmf-meta") as f:
            meta = json.load(f)
        for a in meta["annotations"]:  # the truth moves with the samples
            a["core:sample_start"] += 37
        with open(path + ".sigmf-meta", "w") as f:
            json.dump(meta, f)
        src, data, truth = play(path)
        np.testing.assert_array_equal(data[:, 0], recorded[:src.nitems()])
        self.assertEqual([t["sample"] for t in truth],
                         [t["sample"] for t in play(self.base("pd"))[2]])

    def test_006_refusals_name_the_field_and_key(self):
        missing = self.base("nothing_here")
        text = self.assertRefused(missing, "pulse_doppler", "nothing_here.sigmf-meta",
                                  "gpuradar-sim --preset examples")
        self.assertIn("recording", text)
        self.assertRefused(missing, "sar", "gpuradar-sim sar --preset examples")
        for key, field in (("gpuradar:nrange", "nrange"), ("gpuradar:npulses", "npulses"),
                           ("gpuradar:gate_start", "gate_start"),
                           ("gpuradar:waveform", "waveform")):
            path = self.copy("pd", "pd_no_" + field, lambda g: g.pop(key))
            self.assertRefused(path, "pulse_doppler", f"sigmf_cpi_source: recording: {field}:",
                               f"'global.{key}' is missing")
        path = self.copy("pd", "pd_bad_nrange",
                         lambda g: g.update({"gpuradar:nrange": "512"}))
        self.assertRefused(path, "auto", "nrange:", "'global.gpuradar:nrange'")
        path = self.copy("pd", "pd_no_rate",
                         lambda g: [g.pop("gpuradar:fs"), g.pop("core:sample_rate")])
        self.assertRefused(path, "auto", "fs:", "'global.core:sample_rate' is missing")
        self.assertRefused(self.copy("pd", "pd_cu8", datatype="cu8"), "auto", "datatype:",
                           "'global.core:datatype'", "cf32_le or ci16_le or ci8")
        self.assertRefused(self.base("sar"), "pulse_doppler", "kind:", "SAR phase history",
                           "gpuradar:nbins")
        self.assertRefused(self.base("pd"), "sar", "kind:", "pulse-Doppler",
                           "gpuradar:nbins")
        self.assertRefused(self.base("sm"), "sar", "kind:", "gpuradar:mode")
        with self.assertRaises(ValueError):
            gpuradar.sigmf_cpi_source(self.base("pd"), "pulse-doppler")
        src = gpuradar.sigmf_cpi_source(self.base("pd"))
        with self.assertRaises(sigmf_io.RecordingError) as cm:
            src.nbins()
        self.assertIn("'global.gpuradar:nbins'", str(cm.exception))

    def test_007_preview_while_editing(self):
        # GRC calls the class's preview (the block YAML's value and vlen); the class from
        # its module, as tools that wrap the package's factories leave it untouched.
        block_class = sys.modules["gnuradio.gpuradar.sigmf_cpi_source"].sigmf_cpi_source
        placeholder = block_class.preview(self.base("absent"), "pulse_doppler")
        self.assertTrue(placeholder.placeholder)
        self.assertEqual((placeholder.nrange(), placeholder.npulses()), (512, 32))
        self.assertEqual(block_class.preview(self.base("absent"), "sar").vlen(),
                         512)
        seen = block_class.preview(self.base("pd"), "pulse_doppler")
        self.assertFalse(seen.placeholder)
        self.assertEqual(seen.nrange(), self.meta("pd")["global"]["gpuradar:nrange"])
        # a bad recording is an error on the canvas, not a placeholder
        with self.assertRaises(sigmf_io.RecordingError):
            block_class.preview(self.base("sar"), "pulse_doppler")

    def test_008_drives_a_framer(self):
        tb = gr.top_block()
        src = gpuradar.sigmf_cpi_source(self.base("pd"), "pulse_doppler")
        framer = gpuradar.pulse_framer(src.pri_samples(), src.gate_start(), src.nrange(),
                                       src.npulses(), src.fs(), src.fc(), "free",
                                       backend="cpu")
        snk = blocks.vector_sink_c(src.nrange())
        tb.connect(src, framer, snk)
        tb.run()
        self.assertEqual(framer.emitted_cpis(), src.ncpi())
        self.assertEqual(len(snk.data()), src.ncpi() * src.npulses() * src.nrange())


if __name__ == "__main__":
    gr_unittest.run(qa_sigmf_cpi_source)
