#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""fp64 numpy reference windows for the QA tests, written from their definitions
(not from gpuradar's code): symmetric, length n."""

import numpy as np


def taylor(n, nbar, sll_db):
    """Taylor (1955): 1 + 2 sum_m F_m cos(2 pi m (k - n/2 + 1/2) / n), unit centre."""
    a = np.arccosh(10 ** (sll_db / 20.0)) / np.pi
    sigma2 = nbar ** 2 / (a ** 2 + (nbar - 0.5) ** 2)
    m = np.arange(1, nbar, dtype=float)
    f = np.empty(nbar - 1)
    for i, mi in enumerate(m):
        num = (-1) ** (mi + 1) * np.prod(1 - mi ** 2 / sigma2 / (a ** 2 + (m - 0.5) ** 2))
        others = np.delete(m, i)
        den = 2 * np.prod(1 - mi ** 2 / others ** 2)
        f[i] = num / den

    def shape(k):
        return 1 + 2 * np.sum(f[:, None] * np.cos(2 * np.pi * m[:, None] *
                                                  (np.atleast_1d(k) - n / 2 + 0.5) / n),
                              axis=0)

    return shape(np.arange(n)) / shape((n - 1) / 2.0)[0]


def chebyshev(n, sll_db):
    """Dolph (1946): inverse DFT of T_{n-1}(x0 cos(pi k / n)), peak 1."""
    if n == 1:
        return np.ones(1)
    order = n - 1
    x0 = np.cosh(np.arccosh(10 ** (sll_db / 20.0)) / order)
    x = x0 * np.cos(np.pi * np.arange(n) / n)
    t = np.where(np.abs(x) <= 1, np.cos(order * np.arccos(np.clip(x, -1, 1))),
                 np.sign(x) ** order * np.cosh(order * np.arccosh(np.maximum(np.abs(x), 1))))
    # Direct DFT with the half-sample shift that centres the window.
    k = np.arange(n)
    idx = np.arange(n) - (n - 1) / 2.0
    w = np.real(np.exp(2j * np.pi * np.outer(idx, k) / n) @ t)
    return w / w.max()


def window(name, n, nbar=4, sll_db=35.0, beta=6.0):
    if name == "rectangular":
        return np.ones(n)
    if name == "hamming":
        return np.hamming(n)
    if name == "hann":
        return np.hanning(n)
    if name == "blackman":
        return np.blackman(n)
    if name == "kaiser":
        return np.kaiser(n, beta)
    if name == "taylor":
        return taylor(n, nbar, sll_db)
    if name == "chebyshev":
        return chebyshev(n, sll_db)
    raise ValueError(name)


WINDOWS = ("rectangular", "hamming", "hann", "blackman", "taylor", "kaiser", "chebyshev")
