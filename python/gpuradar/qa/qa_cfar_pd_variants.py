#!/usr/bin/env python3
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""cfar_2d's probability of detection for GO, SO and OS (and CA), measured through the
block on Swerling-1 targets in exponential noise, against closed forms written here from
the literature. A Swerling-1 target in noise has square law Exp(1 + SNR), so its
detection probability is the false-alarm probability at alpha / (1 + SNR):
  CA: (1 + a/N)^-N                                          (Richards 2005)
  SO: 2 sum_{k<n} C(n-1+k, k) (2 + a/n)^-(n+k), halves of n = N/2 (Gandhi & Kassam 1988)
  GO: 2 (1 + a/n)^-n - SO
  OS: prod_{i<k} (N - i) / (N - i + a)                      (Rohling 1983)
The block's alpha is first checked to give the design Pfa through the same forms.
Budget: 10000 targets per variant and SNR, sigma <= 0.005; tolerance 0.02 (4 sigma).
CPU backend, and the CUDA backend where a GPU is present (skipped otherwise)."""

import math
import unittest

import numpy as np
from gnuradio import blocks, gr, gr_unittest
from gnuradio import gpuradar

NRANGE, NDOPPLER = 13 * 40, 128
GUARD_R, TRAIN_R, GUARD_D, TRAIN_D = 1, 5, 1, 1
N = (2 * (GUARD_R + TRAIN_R) + 1) * (2 * (GUARD_D + TRAIN_D) + 1) - \
    (2 * GUARD_R + 1) * (2 * GUARD_D + 1)                      # 56 training cells
PFA = 1e-4
SNR_DB = [8.0, 13.0, 18.0]
CPIS_PER_SNR = 10
TOL = 0.02


def pfa_ca(a):
    return (1 + a / N) ** -N


def pfa_so(a):
    n = N // 2
    t = a / n
    return 2 * sum(math.comb(n - 1 + k, k) * (2 + t) ** -(n + k) for k in range(n))


def pfa_go(a):
    n = N // 2
    return 2 * (1 + a / n) ** -n - pfa_so(a)


def pfa_os(a, k):
    return math.prod((N - i) / (N - i + a) for i in range(k))


def scene(seed):
    """Exponential noise maps; per CPI a grid of targets (13 range x 5 Doppler bins apart,
    so no target lies in another's window) of one SNR. Returns the maps and, per SNR,
    the flat indices of its targets."""
    rng = np.random.default_rng(seed)
    ncpi = CPIS_PER_SNR * len(SNR_DB)
    x = rng.exponential(1.0, (ncpi, NRANGE, NDOPPLER))
    r, d = np.meshgrid(np.arange(6, NRANGE - 6, 13), np.arange(2, NDOPPLER - 2, 5),
                       indexing="ij")
    targets = {}
    for i, snr_db in enumerate(SNR_DB):
        idx = []
        for c in range(i * CPIS_PER_SNR, (i + 1) * CPIS_PER_SNR):
            x[c, r, d] = rng.exponential(1 + 10 ** (snr_db / 10), r.shape)
            idx.append(np.ravel_multi_index((np.full(r.size, c), r.ravel(), d.ravel()),
                                            x.shape))
        targets[snr_db] = np.concatenate(idx)
    return x.astype(np.float32), targets


class qa_cfar_pd_variants(gr_unittest.TestCase):
    def check(self, backend):
        x, targets = scene(4242)
        self.assertGreaterEqual(min(len(t) for t in targets.values()), 10000)
        tb = gr.top_block()
        src = blocks.vector_source_f(x.ravel().tolist(), False, NDOPPLER)
        cfars, sinks = {}, {}
        for v in ("ca", "go", "so", "os"):
            cfars[v] = gpuradar.cfar_2d(NRANGE, NDOPPLER, 1, GUARD_R, TRAIN_R, GUARD_D,
                                        TRAIN_D, PFA, v, 0, "clip", "wrap", False, 100000,
                                        backend)
            sinks[v] = blocks.vector_sink_b(NDOPPLER)
            tb.connect(src, cfars[v], sinks[v])
        tb.run()
        for v, cfar in cfars.items():
            self.assertEqual(cfar.training_cells(), N)
            k = cfar.os_k()
            pfa = {"ca": pfa_ca, "go": pfa_go, "so": pfa_so,
                   "os": lambda a: pfa_os(a, k)}[v]
            a = cfar.alpha()
            self.assertLess(abs(pfa(a) / PFA - 1), 1e-6, f"{v}: alpha {a} misses the Pfa")
            mask = np.array(sinks[v].data(), np.uint8)
            self.assertEqual(mask.size, x.size)
            for snr_db, idx in targets.items():
                with self.subTest(variant=v, snr_db=snr_db, backend=backend):
                    pd = mask[idx].mean()
                    want = pfa(a / (1 + 10 ** (snr_db / 10)))
                    self.assertLess(abs(pd - want), TOL,
                                    f"{v} at {snr_db} dB: Pd {pd:.4f}, closed form {want:.4f}")

    def test_001_pd_cpu(self):
        self.check("cpu")

    @unittest.skipUnless(gpuradar.cuda_available(), "no CUDA device")
    def test_002_pd_cuda(self):
        self.check("cuda")


if __name__ == "__main__":
    gr_unittest.run(qa_cfar_pd_variants)
