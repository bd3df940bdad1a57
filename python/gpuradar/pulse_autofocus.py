#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""Autofocus of a backprojected image through its phase history: the phase error of
each pulse is estimated from the image's point-like targets and removed from the
range-compressed pulses, which are then backprojected again.

A navigation error of d metres along the line of sight of pulse n multiplies that
pulse's echo by exp(j e(n)), e(n) = 4 pi f0 d / c (a few centimetres are radians at X
band), and so defocuses every target the pulse sees. Image-domain PGA (kernels::
autofocus, the sar_autofocus block) assumes the image's azimuth axis is the DFT of the
pulses, which a backprojected image on a ground grid is only approximately (and a
stripmap one not at all: each target sees its own pulses). Here the pulses are kept:
the contribution of pulse n to pixel p is exactly backprojection's term

    D[n, p] = v_n(p) exp(+j 4 pi f0 R_n(p) / c)

(R_n(p) the range from the antenna, v_n the pulse interpolated linearly at bin
(R - r0) / dr; CONVENTIONS.md), so the image of the pixels near the targets under a
correction phi is I(p) = sum_n exp(-j phi(n)) D[n, p], exactly, without re-forming the
whole image at each iteration.

Targets: the image's local maxima over a (2 chip + 1)^2 neighbourhood that stand at
least ``min_peak_db`` above the image's median intensity (a point above the clutter or
noise: speckle's brightest pixel of a million stands ~13 dB above its median) and within
``dynamic_range_db`` of the brightest, the ``max_targets`` brightest. Each gets a chip
of (2 chip + 1)^2 pixels around it. No such pixel: "no point-like content", not
converged.

method ``pga``, generalised phase-gradient autofocus for backprojection (after Jakowatz
and Wahl): each iteration, for each target t, its chip's brightest pixel c_t (centring)
and the pixels within w of it (Chebyshev distance; the window, w twice the distance over
which the targets' intensity stays within 10 dB of their peaks, at least 2 pixels and
never wider than the previous iteration's) are projected back onto each pulse at c_t's
range (backprojection's adjoint, the pulse's term of a point at c_t):

    g_t(n) = sum_{p in window} conj(H_n(p)) I(p),
    H_n(p) = tri(b_n(p) - b_n(c_t)) exp(j 4 pi f0 (R_n(p) - R_n(c_t)) / c),

(tri the linear interpolation's weight), so that g_t(n) is the target's echo in pulse n,
exp(j e(n)) times its amplitude, up to a phase linear in n from c_t lying off the true
position, which is removed (g_t times exp(-j s_t n), s_t = arg sum_n g_t(n+1)
conj(g_t(n))). Then, as image-domain PGA: d(n) = arg sum_t g_t(n) conj(g_t(n-1)) (the
maximum-likelihood phase difference), e = the sum of d, its least-squares line removed
(a linear phase only shifts the image); phi += e. Converged when the RMS of e falls below
``tolerance_rad``.

method ``entropy``, minimum entropy by gradient descent over the chips' pixels (their
union): H = -sum p ln p, p = |I|^2 / E, E = sum |I|^2, with

    dH/dphi(n) = -(2 / E) Im(exp(-j phi(n)) sum_p D[n, p] conj(I(p)) (ln p + H)),

steps from 0.5 / max |gradient| (then four times the last accepted one), halved until
the Armijo margin 1e-4 x step x |gradient|^2 is met (at most 40 halvings); converged when
a step lowers H by less than ``tolerance_entropy`` x H, or no step lowers it. phi is
reported with its line removed.

Either way, without convergence after ``max_iterations`` the estimate is not to be
applied (Result.converged False, Result.reason why).

The heavy sums (D, the chip image under phi, the targets' echoes g_t, the entropy
gradient's projection sum_p D[n, p] w[p]) run in C++, kernels::pulse_autofocus, on the
``backend`` asked for ('cpu' | 'cuda' | 'auto'), in double over terms kept in float; the
target choice, the windows and the per-iteration bookkeeping (O(targets x pulses)) stay
here. Memory: D, U = exp(j k R) and the bins take 20 bytes per pulse and chip pixel (on
the GPU with CUDA); the chips shrink (then the targets) to keep that under
``max_terms`` terms.
"""

import math
from dataclasses import dataclass, field
from typing import List, Optional, Tuple

import numpy as np

from .sar_sim import SPEED_OF_LIGHT, Grid

METHODS = ("pga", "entropy")
#: Most pulse x chip-pixel terms held (D, U and the bin: 20 bytes each).
MAX_TERMS = 1 << 24


@dataclass
class Result:
    """What one autofocus did; phase_error per pulse (rad, line removed): the pulses
    are corrected by exp(-j phase_error)."""
    method: str
    phase_error: np.ndarray
    iterations: int = 0
    converged: bool = False
    last_correction_rms: float = 0.0
    reason: str = ""
    targets: List[Tuple[int, int]] = field(default_factory=list)  #: (ix, iy) pixels
    entropy_before: float = float("nan")  #: of the chips' pixels, before and after
    entropy_after: float = float("nan")
    backend: str = ""  #: where the sums ran ('cpu' | 'cuda'; "" when none ran)

    def summary(self):
        """One line: method, iterations, convergence, where the sums ran."""
        head = f"autofocus {self.method}: {len(self.targets)} target(s), "
        on = f" (sums on the {self.backend})" if self.backend else ""
        if not self.converged:
            return head + (f"did not converge after {self.iterations} iteration(s) "
                           f"({self.reason}); image kept as formed{on}")
        rms = math.sqrt(float(np.mean(self.phase_error ** 2)))
        return head + (f"converged after {self.iterations} iteration(s), last correction "
                       f"{self.last_correction_rms:.3g} rad RMS; phase error "
                       f"{rms:.3g} rad RMS removed from the pulses; chips' entropy "
                       f"{self.entropy_before:.4f} -> {self.entropy_after:.4f}{on}")


def image_entropy(image):
    """-sum p ln p of p = |image|^2 / sum |image|^2 (nats)."""
    q = np.abs(np.asarray(image, np.complex128)).ravel() ** 2
    e = q.sum()
    if not e > 0:
        return 0.0
    p = q[q > 0] / e
    return float(-(p * np.log(p)).sum())


def detrend(phase):
    """phase minus its least-squares line."""
    n = np.arange(len(phase), dtype=np.float64)
    if len(phase) < 2:
        return phase - phase.mean()
    a, b = np.polyfit(n, phase, 1)
    return phase - (a * n + b)


def select_targets(image, chip, max_targets, min_peak_db, dynamic_range_db):
    """(iy, ix) of the point-like targets, brightest first (module docstring)."""
    from scipy.ndimage import maximum_filter
    power = np.abs(np.asarray(image, np.complex128)) ** 2
    top = float(power.max()) if power.size else 0.0
    if not top > 0:
        return []
    median = float(np.median(power))
    local = power == maximum_filter(power, size=2 * max(2, chip // 4) + 1,
                                    mode="constant")
    floor = max(median * 10 ** (min_peak_db / 10), top * 10 ** (-dynamic_range_db / 10))
    iy, ix = np.nonzero(local & (power >= floor) & (power > 0))
    order = np.argsort(-power[iy, ix], kind="stable")[:max_targets]
    return [(int(iy[i]), int(ix[i])) for i in order]


class _Terms:
    """D[n, p], U[n, p] = exp(+j k R) and the bins b[n, p] of the chips' pixels, and
    the sums over them each iteration takes, in C++ (kernels::pulse_autofocus, CPU twin
    or CUDA; sums in double, the terms in float)."""

    def __init__(self, pulses, geometry, grid: Grid, pixels, backend="auto"):
        from . import gpuradar_python as gpr
        self.npulses = int(np.shape(pulses)[0])
        self.core = gpr.pulse_autofocus_core(
            backend, np.ascontiguousarray(pulses, np.complex64),
            np.ascontiguousarray(geometry, np.float64),
            (grid.x0, grid.y0, grid.dx, grid.dy, grid.z),
            np.ascontiguousarray(pixels, np.int32))
        self.backend = self.core.backend

    def image(self, phi):
        """sum_n exp(-j phi(n)) D[n, p] over the pixels."""
        return self.core.image(np.asarray(phi, np.float64))

    def project(self, w):
        """sum_p D[n, p] w[p] per pulse."""
        return self.core.project(np.asarray(w, np.complex128))

    def echoes(self, centres, windows, img):
        """g_t(n) (module docstring) of each target t with centre pixel centres[t] and
        window pixels windows[t] (indices into the pixels), shape (targets, pulses)."""
        start = np.concatenate([[0], np.cumsum([len(w) for w in windows])])
        return self.core.target_echoes(np.asarray(centres, np.int32),
                                       start.astype(np.int32),
                                       np.concatenate(windows).astype(np.int32),
                                       np.asarray(img, np.complex128))


def _make_terms(pulses, geometry, grid, pixels, backend):
    return _Terms(pulses, geometry, grid, pixels, backend)


def autofocus(pulses, geometry, image, grid: Grid, method="pga", max_iterations=30,
              tolerance_rad=0.01, tolerance_entropy=1e-6, max_targets=8, chip=48,
              min_peak_db=15.0, dynamic_range_db=30.0,
              max_terms=MAX_TERMS, backend="auto") -> Result:
    """Estimates the per-pulse phase error of `image` (ny, nx), the backprojection of
    `pulses` (npulses, nbins) with `geometry` (npulses, 6) on `grid` (module
    docstring). The sums run on `backend` ('cpu' | 'cuda' | 'auto': CUDA when a device
    is usable); ValueError naming the parameter on bad arguments."""
    if backend not in ("auto", "cuda", "cpu"):
        raise ValueError(f"autofocus: backend must be one of auto, cuda, cpu "
                         f"(got {backend!r})")
    if method not in METHODS:
        raise ValueError(f"autofocus: method must be one of {', '.join(METHODS)} "
                         f"(got {method!r})")
    if not (isinstance(max_iterations, int) and 1 <= max_iterations <= 1000):
        raise ValueError(f"autofocus: max_iterations must be 1 to 1000 "
                         f"(got {max_iterations!r})")
    for name, v in (("tolerance_rad", tolerance_rad),
                    ("tolerance_entropy", tolerance_entropy)):
        if not (math.isfinite(v) and v > 0):
            raise ValueError(f"autofocus: {name} must be > 0 and finite (got {v!r})")
    if not (isinstance(chip, int) and 2 <= chip <= 256):
        raise ValueError(f"autofocus: chip must be 2 to 256 pixels (got {chip!r})")
    if not (isinstance(max_targets, int) and 1 <= max_targets <= 256):
        raise ValueError(f"autofocus: max_targets must be 1 to 256 (got {max_targets!r})")
    pulses = np.asarray(pulses)
    image = np.asarray(image)
    n = pulses.shape[0]
    if pulses.ndim != 2 or n < 3:
        raise ValueError(f"autofocus: pulses must be npulses (>= 3) x nbins "
                         f"(got shape {pulses.shape})")
    if np.shape(geometry) != (n, 6):
        raise ValueError(f"autofocus: geometry must be {n} x 6 (got {np.shape(geometry)})")
    if image.shape != (grid.ny, grid.nx):
        raise ValueError(f"autofocus: image must be grid.ny x grid.nx = {grid.ny} x "
                         f"{grid.nx} (got {image.shape})")
    result = Result(method, np.zeros(n))
    if not np.isfinite(image).all():
        result.reason = "non-finite pixels in the image"
        return result
    targets = select_targets(image, chip, max_targets, min_peak_db, dynamic_range_db)
    # Chips shrink, then the targets go, until the terms fit.
    # Targets go (down to 4), then the chips shrink, until the terms fit: a chip
    # narrower than the blur smooths the estimate.
    while targets and n * len(targets) * (2 * chip + 1) ** 2 > max_terms:
        if len(targets) > 4 or chip <= 4:
            targets = targets[:-1]
        else:
            chip = max(4, chip * 3 // 4)
    result.targets = [(ix, iy) for iy, ix in targets]
    if not targets:
        result.reason = (f"no point-like content: no local maximum {min_peak_db:g} dB "
                         f"above the image's median intensity")
        return result
    pixels, chips = [], []
    index = {}
    if method == "entropy":
        # Entropy over chips alone falls by pushing energy out of them: the whole image,
        # or the largest square around the brightest target that fits in max_terms.
        half = max(1, int((math.sqrt(max_terms / n) - 1) // 2))
        cy, cx = targets[0]
        y0, y1 = max(0, cy - half), min(grid.ny, cy + half + 1)
        x0, x1 = max(0, cx - half), min(grid.nx, cx + half + 1)
        targets = [(cy, cx)]
    for cy, cx in targets:
        if method == "entropy":
            ys, xs = range(y0, y1), range(x0, x1)
        else:
            ys = range(max(0, cy - chip), min(grid.ny, cy + chip + 1))
            xs = range(max(0, cx - chip), min(grid.nx, cx + chip + 1))
        rows = []
        for y in ys:
            for x in xs:
                if (y, x) not in index:
                    index[(y, x)] = len(pixels)
                    pixels.append((y, x))
                rows.append(index[(y, x)])
        chips.append(np.array(rows))
    pixels = np.array(pixels)
    terms = _make_terms(pulses, geometry, grid, pixels, backend)
    result.backend = terms.backend
    result.entropy_before = image_entropy(terms.image(np.zeros(n)))
    run = _pga if method == "pga" else _entropy
    phi = run(terms, pixels, chips, result, max_iterations,
              tolerance_rad if method == "pga" else tolerance_entropy, chip)
    if method == "entropy":
        # Per-pulse phases are found modulo 2 pi: a shift of the image (a linear phase)
        # may come back wrapped, and only unwrapped is it a line to remove.
        phi = np.unwrap(phi)
    # Not converged: the estimate so far, not to be applied.
    result.phase_error = detrend(phi)
    if result.converged:
        result.entropy_after = image_entropy(terms.image(result.phase_error))
    return result


def _pga(terms, pixels, chips, result, max_iterations, tolerance, chip):
    n = terms.npulses
    # A window narrower than the blur smooths the estimate over ~3 n / width pulses
    # (images ~3x oversampled): never below half the chip.
    min_window = max(2, chip // 2)
    phi = np.zeros(n)
    width = chip
    ramp = np.arange(n)
    for it in range(1, max_iterations + 1):
        img = terms.image(phi)
        power = np.abs(img) ** 2
        centres, extent = [], 0
        for rows in chips:
            c = rows[int(np.argmax(power[rows]))]
            dist = np.abs(pixels[rows] - pixels[c]).max(axis=1)
            bright = power[rows] >= 0.1 * power[c]
            extent = max(extent, int(dist[bright].max()))
            centres.append((c, rows, dist))
        width = min(width, max(min_window, 2 * extent))
        g_all = terms.echoes([c for c, _, _ in centres],
                             [rows[dist <= width] for _, rows, dist in centres], img)
        sums = np.zeros(n - 1, np.complex128)
        for g in g_all:
            s = np.angle(np.sum(g[1:] * np.conj(g[:-1])))
            g = g * np.exp(-1j * s * ramp)
            sums += g[1:] * np.conj(g[:-1])
        e = detrend(np.concatenate([[0.0], np.cumsum(np.angle(sums))]))
        phi = phi + e
        result.iterations = it
        result.last_correction_rms = math.sqrt(float(np.mean(e ** 2)))
        if result.last_correction_rms < tolerance:
            result.converged = True
            return phi
    result.reason = (f"the correction was still {result.last_correction_rms:.3g} rad RMS "
                     f"after {max_iterations} iterations (tolerance {tolerance:g} rad)")
    return phi


def _entropy_and_gradient(terms, phi, want_gradient=True):
    rot = np.exp(-1j * phi)
    img = terms.image(phi)
    q = np.abs(img) ** 2
    energy = q.sum()
    if not energy > 0:
        return 0.0, np.zeros_like(phi)
    p = q / energy
    logp = np.where(p > 0, np.log(np.where(p > 0, p, 1.0)), 0.0)
    h = float(-(p * logp).sum())
    if not want_gradient:
        return h, None
    grad = -(2 / energy) * np.imag(rot * terms.project(np.conj(img) * (logp + h)))
    return h, grad


def _entropy(terms, pixels, chips, result, max_iterations, tolerance, chip):
    n = terms.npulses
    phi = np.zeros(n)
    h, grad = _entropy_and_gradient(terms, phi)
    step = None
    for it in range(1, max_iterations + 1):
        result.iterations = it
        gmax = float(np.abs(grad).max())
        if not gmax > 0:
            result.converged = True
            return phi
        step = 0.5 / gmax if step is None else 4 * step
        g2 = float(grad @ grad)
        for _ in range(41):
            trial = phi - step * grad
            ht, _ = _entropy_and_gradient(terms, trial, False)
            if ht <= h - 1e-4 * step * g2:
                break
            step /= 2
        else:
            result.converged = True  # no step lowers it: a minimum
            return phi
        result.last_correction_rms = math.sqrt(float(np.mean((step * grad) ** 2)))
        decrease = h - ht
        phi = trial
        h, grad = _entropy_and_gradient(terms, phi)
        if decrease < tolerance * h:
            result.converged = True
            return phi
    result.reason = (f"the entropy still fell by more than {tolerance:g} of itself per "
                     f"step after {max_iterations} iterations")
    return phi


def correct(pulses, phase_error):
    """The pulses times exp(-j phase_error[n]) (complex64)."""
    return (np.asarray(pulses) * np.exp(-1j * np.asarray(phase_error))[:, None]) \
        .astype(np.complex64)


def backproject(pulses, geometry, grid: Grid, backend="auto", precision="fast"):
    """One image (ny, nx) of all the pulses through the backprojection block (the image
    re-formed after correct()); the pulses and geometry pass through temporary files
    (a vector source would copy them into a Python list)."""
    import os
    import tempfile
    from gnuradio import blocks, gr
    from . import gpuradar_python as gpr
    n, nbins = np.shape(pulses)
    bp = gpr.backprojection(nbins, grid.nx, grid.ny, grid.x0, grid.y0, grid.dx, grid.dy,
                            grid.z, n, "restart", precision, [], backend)
    with tempfile.TemporaryDirectory(prefix="gpuradar-autofocus-") as tmp:
        data, geo_path = os.path.join(tmp, "pulses.cf32"), os.path.join(tmp, "geometry.f64")
        np.asarray(pulses, "<c8").tofile(data)
        np.asarray(geometry, "<f8").tofile(geo_path)
        tb = gr.top_block()
        src = blocks.file_source(gr.sizeof_gr_complex * nbins, data)
        geo = blocks.file_source(gr.sizeof_double * 6, geo_path)
        snk = blocks.vector_sink_c(grid.nx)
        tb.connect(src, (bp, 0))
        tb.connect(geo, (bp, 1))
        tb.connect(bp, snk)
        tb.run()
    return np.array(snk.data(), np.complex64).reshape(grid.ny, grid.nx)
