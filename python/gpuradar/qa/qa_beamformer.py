#!/usr/bin/env python3
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""QA for gpuradar.beamformer on the CPU backend, against numpy weights written from the
array geometry (not from gpuradar's code)."""

import unittest

import numpy as np
import pmt
from gnuradio import blocks, gr, gr_unittest
from gnuradio import gpuradar

from window_reference import window

C = 299792458.0


def ula_weights(nch, spacing_wl, angles_deg, taper):
    """W[b, n] = t_n exp(-j 2 pi x_n sin(theta_b)) / sum(t), x_n in wavelengths."""
    x = (np.arange(nch) - (nch - 1) / 2.0) * spacing_wl
    u = np.sin(np.radians(angles_deg))
    return taper[None, :] * np.exp(-2j * np.pi * np.outer(u, x)) / taper.sum()


def cpi_tag(offset, index, channels):
    d = pmt.make_dict()
    for k, v in (("index", index), ("npulses", 4), ("nrange", 9), ("channels", channels)):
        d = pmt.dict_add(d, pmt.intern(k), pmt.from_uint64(v))
    return gr.tag_utils.python_to_tag((offset, pmt.intern("cpi"), d))


class qa_beamformer(gr_unittest.TestCase):
    def setUp(self):
        self.tb = gr.top_block()

    def tearDown(self):
        self.tb = None

    def run_block(self, bf, x, nch, ns, nbeams, tags=()):
        src = blocks.vector_source_c(x.ravel().tolist(), False, nch * ns, list(tags))
        snk = blocks.vector_sink_c(nbeams * ns)
        self.tb.connect(src, bf, snk)
        self.tb.run()
        return np.array(snk.data()).reshape(-1, nbeams, ns), snk.tags()

    def test_001_fan_matches_numpy_and_tags_carry_beams(self):
        nch, ns, nitems, nbeams = 6, 9, 8, 5
        rng = np.random.default_rng(7)
        x = (rng.standard_normal((nitems, nch, ns)) +
             1j * rng.standard_normal((nitems, nch, ns))).astype(np.complex64)
        bf = gpuradar.beamformer(nch, ns, [], nbeams, -40.0, 20.0, 0.45, [], 0.0,
                                 "taylor", 3, 25.0, 6.0, "cpu")
        angles = np.linspace(-40.0, 20.0, nbeams)
        np.testing.assert_allclose(bf.beam_angles_deg(), angles, atol=1e-12)
        tags = [cpi_tag(0, 0, nch), cpi_tag(4, 1, nch)]
        y, out_tags = self.run_block(bf, x, nch, ns, nbeams, tags)
        w = ula_weights(nch, 0.45, angles, window("taylor", nch, nbar=3, sll_db=25.0))
        want = np.einsum("bc,ics->ibs", w, x.astype(np.complex128))
        err = np.linalg.norm(y - want) / np.linalg.norm(want)
        self.assertLess(err, 1e-5)
        out = [gr.tag_to_python(t) for t in out_tags]
        self.assertEqual([t.offset for t in out], [0, 4])
        for t in out:
            self.assertEqual(t.value["channels"], nbeams)
            self.assertEqual(t.value["beams"], nbeams)
            np.testing.assert_allclose(t.value["beam_angles_deg"], angles, atol=1e-12)
            self.assertEqual(t.value["nrange"], 9)

    def test_002_angle_list_and_positions_steer_the_beams(self):
        # An L-shaped array given in metres: a plane wave from each listed angle is
        # strongest in the beam steered at it.
        nch, fc = 8, 3e9
        lam = C / fc
        pos = np.array([[0.5 * lam * k, 0.0, 0.0] for k in range(5)] +
                       [[0.0, 0.5 * lam * k, 0.0] for k in range(1, 4)])
        angles = [-50.0, -10.0, 25.0, 60.0]
        u = np.stack([np.sin(np.radians(angles)), np.cos(np.radians(angles)),
                      np.zeros(len(angles))])
        # sample s of the item: unit plane wave from angles[s]
        x = np.exp(2j * np.pi * (pos @ u) / lam).astype(np.complex64)[None]
        bf = gpuradar.beamformer(nch, len(angles), angles, 0, 0.0, 0.0, 0.5,
                                 pos.ravel().tolist(), fc, "rectangular", 4, 35.0, 6.0,
                                 "cpu")
        y, _ = self.run_block(bf, x, nch, len(angles), len(angles))
        power = np.abs(y[0])
        np.testing.assert_array_equal(np.argmax(power, axis=0), np.arange(len(angles)))
        np.testing.assert_allclose(np.diag(power), 1.0, atol=1e-5)

    def test_003_taper_sets_the_sidelobes(self):
        # A wave from 40 degrees in the broadside beam of a 32-element ULA: the Taylor
        # 40 dB taper holds it under its design sidelobe level, the rectangular one not.
        nch = 32
        x = np.exp(2j * np.pi * (np.arange(nch) - 15.5) * 0.5 *
                   np.sin(np.radians(40.0))).astype(np.complex64).reshape(1, nch, 1)
        leak = {}
        for name in ("rectangular", "taylor"):
            self.tb = gr.top_block()
            bf = gpuradar.beamformer(nch, 1, [0.0], 0, 0.0, 0.0, 0.5, [], 0.0, name, 5,
                                     40.0, 6.0, "cpu")
            y, _ = self.run_block(bf, x, nch, 1, 1)
            leak[name] = abs(y[0, 0, 0])
            w = ula_weights(nch, 0.5, [0.0], window(name, nch, nbar=5, sll_db=40.0))
            self.assertAlmostEqual(leak[name], abs(w[0] @ x[0, :, 0]), delta=1e-6)
        self.assertLess(20 * np.log10(leak["taylor"]), -40.0 + 1.0)
        self.assertGreater(20 * np.log10(leak["rectangular"]), -35.0)

    def test_004_bad_parameters_raise_naming_them(self):
        cases = (
            (dict(element_positions_m=[0.0] * 7, fc=1e9), "element_positions_m"),
            (dict(element_positions_m=[0.0] * 12, fc=0.0), "fc"),
            (dict(beam_angles_deg=[10.0, 95.0]), "beam_angles_deg"),
            (dict(nbeams=0), "nbeams"),
            (dict(nbeams=4, fan_first_deg=-91.0), "fan_first_deg"),
            (dict(nbeams=4, element_spacing_wl=0.0), "element_spacing_wl"),
            (dict(nbeams=4, window="taylor", sll_db=-3.0), "sll_db"),
            (dict(nbeams=4, window="triangle"), "window"),
            (dict(nbeams=4, backend="gpu"), "backend"),
        )
        for kwargs, name in cases:
            with self.assertRaisesRegex(ValueError, name):
                gpuradar.beamformer(4, 16, **kwargs)
        with self.assertRaisesRegex(ValueError, "nchannels"):
            gpuradar.beamformer(0, 16, nbeams=2)

    def test_007_grc_angle_list_reaches_make(self):
        # GRC hands the template the typed text: the list must arrive as numbers, both
        # in the generated Python (built and run here) and in the generated C++.
        from grc_asserts import rendered_make
        params = dict(nchannels="4", nsamples="16", steering="list",
                      beam_angles_deg="[-20, 10]", beam_elevations_deg="[]",
                      geometry="positions", element_positions_m="[0, 0, 0, 0.1, 0, 0, 0.2, 0, 0, 0.3, 0, 0]",
                      fc="1.5e9", backend="cpu")
        code = rendered_make("gpuradar_beamformer", **params)
        bf = eval(code, {"gpuradar": gpuradar})
        self.assertEqual(bf.beam_angles_deg(), [-20.0, 10.0])
        cpp = rendered_make("gpuradar_beamformer", cpp=True, **params)
        self.assertIn("{-20.0, 10.0}", cpp)
        self.assertIn("{0.0, 0.0, 0.0, 0.1, 0.0, 0.0, 0.2, 0.0, 0.0, 0.3, 0.0, 0.0}", cpp)

    def test_006_sc16_and_sc8_items_equal_their_float_values(self):
        # An SDR's interleaved integers (short / byte vectors of 2 per sample): bit for
        # bit the block on the codes' exact float values (x / 32768, x / 128); tags
        # still get the beams. Another input_type is refused naming it.
        nch, ns, nitems, nbeams = 5, 33, 6, 3
        rng = np.random.default_rng(12)
        for input_type, dtype, scale, source in (
                ("sc16", np.int16, 32768.0, blocks.vector_source_s),
                ("sc8", np.int8, 128.0, blocks.vector_source_b)):
            info = np.iinfo(dtype)
            codes = rng.integers(info.min, info.max + 1, size=(nitems, nch, ns, 2),
                                 dtype=dtype)
            codes.flat[:2] = info.min, info.max
            exact = ((codes[..., 0] / scale) + 1j * (codes[..., 1] / scale)).astype(
                np.complex64)
            out = {}
            for kind in ("int", "float"):
                self.tb = gr.top_block()
                tags = [cpi_tag(0, 0, nch)]
                if kind == "int":
                    raw = codes.ravel().view(np.uint8) if dtype == np.int8 else codes.ravel()
                    src = source(raw.tolist(), False, 2 * nch * ns, tags)
                    bf = gpuradar.beamformer(nch, ns, nbeams=nbeams, backend="cpu",
                                             input_type=input_type)
                else:
                    src = blocks.vector_source_c(exact.ravel().tolist(), False, nch * ns,
                                                 tags)
                    bf = gpuradar.beamformer(nch, ns, nbeams=nbeams, backend="cpu")
                snk = blocks.vector_sink_c(nbeams * ns)
                self.tb.connect(src, bf, snk)
                self.tb.run()
                out[kind] = (np.array(snk.data()), snk.tags())
            self.assertEqual(out["int"][0].size, nitems * nbeams * ns)
            np.testing.assert_array_equal(out["int"][0], out["float"][0])
            (tag,) = [gr.tag_to_python(t) for t in out["int"][1]]
            self.assertEqual(tag.value["channels"], nbeams)
        with self.assertRaisesRegex(ValueError, "input_type"):
            gpuradar.beamformer(4, 16, nbeams=2, backend="cpu", input_type="cs16")

    @unittest.skipUnless(gpuradar.cuda_available(), "no CUDA device")
    def test_005_cuda_block_equals_cpu_block(self):
        # Through the scheduler and the device buffers, on fresh random data.
        nch, ns, nitems, nbeams = 16, 900, 40, 16
        rng = np.random.default_rng(11)
        x = (rng.standard_normal((nitems, nch, ns)) +
             1j * rng.standard_normal((nitems, nch, ns))).astype(np.complex64)
        out = {}
        for backend in ("cpu", "cuda"):
            self.tb = gr.top_block()
            bf = gpuradar.beamformer(nch, ns, [], nbeams, -50.0, 50.0, backend=backend)
            out[backend], _ = self.run_block(bf, x, nch, ns, nbeams)
            self.assertEqual(bf.backend(), backend)
        err = np.linalg.norm(out["cuda"] - out["cpu"]) / np.linalg.norm(out["cpu"])
        self.assertLess(err, 1e-5)


if __name__ == "__main__":
    gr_unittest.run(qa_beamformer)
