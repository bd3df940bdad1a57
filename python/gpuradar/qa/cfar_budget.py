#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""A false-alarm budget for CA-CFAR on correlated noise, derived from the processing
chain rather than fitted to a run (used by qa_zmq_two_process).

Windows correlate neighbouring cells: complex noise after the matched filter h has range
correlation rho_r(m) = sum_k h[k] h*[k+m] / sum |h|^2, and after the slow-time window w and
an nfft-point FFT Doppler correlation rho_d(m) = |sum_n w[n]^2 e^(-2 pi i m n / nfft)| /
sum w^2; the square law of unit complex Gaussians has Cov(P_i, P_j) = |rho_ij|^2. The CA
noise estimate (mean of N training cells) then has variance sum_ij |rho_ij|^2 / N^2, i.e.
N_eff = N^2 / sum_ij |rho_ij|^2 independent cells; moment-matching it with a Gamma
(Satterthwaite) gives the realised Pfa = (1 + alpha / N_eff)^-N_eff for the alpha designed
for N independent cells. Correlation between the cell under test and its training cells
(only through the guard cells' far edge) would lower the Pfa and is left out, and a
local-maximum detector reports at most one detection per exceeding cell: both make the
expected count below an upper bound. Detections are rare and, as local maxima, separated,
so their count is taken as Poisson with that mean; the budget is its quantile at the
stated confidence.
"""

import math

import numpy as np


def range_correlation(h, m):
    m = abs(m)
    if m >= len(h):
        return 0.0
    return abs(np.sum(h[:len(h) - m] * np.conj(h[m:]))) / np.sum(np.abs(h) ** 2)


def doppler_correlation(w, nfft, m):
    n = np.arange(len(w))
    return abs(np.sum(w ** 2 * np.exp(-2j * np.pi * m * n / nfft))) / np.sum(w ** 2)


def training_offsets(guard_r, train_r, guard_d, train_d):
    return [(a, b) for a in range(-guard_r - train_r, guard_r + train_r + 1)
            for b in range(-guard_d - train_d, guard_d + train_d + 1)
            if not (abs(a) <= guard_r and abs(b) <= guard_d)]


def effective_cells(offsets, h, w, nfft):
    rr = {m: range_correlation(h, m) ** 2 for m in range(-64, 65)}
    rd = {m: doppler_correlation(w, nfft, m) ** 2 for m in range(-nfft, nfft + 1)}
    s = sum(rr.get(a1 - a2, 0.0) * rd[b1 - b2] for a1, b1 in offsets for a2, b2 in offsets)
    return len(offsets) ** 2 / s


def expected_false_alarms(pfa, nrange, ndoppler, ncpi, guard, h, w):
    """Upper bound on the mean number of CA detections on noise: per range row, the
    training cells its (range-clipped, Doppler-wrapped) window holds, alpha designed for
    them, the realised Pfa on correlated cells."""
    full = training_offsets(*guard)
    realised = {}  # per window shape: rows away from the edges share one
    total = 0.0
    for r in range(nrange):
        cells = tuple((a, b) for a, b in full if 0 <= r + a < nrange)
        if cells not in realised:
            n = len(cells)
            alpha = n * (pfa ** (-1.0 / n) - 1)
            n_eff = effective_cells(cells, h, w, ndoppler)
            realised[cells] = (1 + alpha / n_eff) ** -n_eff
        total += realised[cells]
    return total * ndoppler * ncpi


def poisson_quantile(mean, confidence):
    """Smallest k with P(Poisson(mean) > k) < 1 - confidence."""
    k, p = 0, math.exp(-mean)
    c = p
    while 1 - c >= 1 - confidence:
        k += 1
        p *= mean / k
        c += p
    return k
