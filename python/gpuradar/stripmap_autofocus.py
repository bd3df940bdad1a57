#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""Autofocus of a stripmap (chirp-scaling, ``csa``) image through its raw pulses: the
phase error of each pulse is estimated from the image's point-like targets, the raw
pulses are multiplied by exp(-j e(n)) and the strip is focused again.

Why not image-domain PGA (kernels::autofocus): it assumes every target sees every pulse
and the image's azimuth axis is the DFT of the pulses (spotlight). In stripmap a target
at closest approach y_t and slant range R_t is seen only by the pulses whose Doppler
from it lies in the processed band, about one synthetic aperture (lambda R_t / L pulses'
worth of track, range-dependent), and its azimuth axis maps to slow time through its own
range. So the estimate is made per target, over its own pulses, and chained along the
strip.

Model. A residual motion error leaves pulse n's echoes multiplied by exp(j e(n)), the
same for the whole swath (first order: the error's line-of-sight component at the
targets' look angle; the spread of that angle across the swath is not modelled). The
image and the pulses are related by backprojection on the straight pass chirp scaling
assumes (antenna at (0, first_pulse_y + n v / prf, altitude)): a pixel of the csa image
(row y_p along track, column slant range R_p at zero Doppler) is the point at range

    R_n(p) = sqrt(R_p^2 + (y_n - y_p)^2)

from pulse n, whose contribution to it, from the range-compressed pulse v_n (read at
R_n(p) by a 16-tap Kaiser-windowed sinc: the samples, c / (2 fs), are barely finer than
the resolution, too coarse for linear interpolation), is

    D[n, p] = v_n(R_n(p)) exp(+j 4 pi fc R_n(p) / c)   (CONVENTIONS.md's phase),

over the pulses S_t that see the target in the processed (3 dB) Doppler band widened
1.5 times and at most the PRF wide, |sin(theta) - sin(squint)| <= min(1.5 x 0.443
lambda / L, lambda prf / (4 v)), sin(theta) = (y_t - y_n) / R_n(t) (pulses whose echo of
it falls outside the range gate left out). Each target's chip (its
pixels within ``chip`` rows and ``range_chip`` columns of its peak on the csa image) is
then re-formed exactly under a correction phi as I_t(p) = sum_{n in S_t} exp(-j phi(n))
D[n, p], without running the whole strip again at each iteration. These terms and sums
are kernels::pulse_autofocus's (``backend``: its CPU twin or CUDA; interpolator sinc16)
with the antenna at (0, y_n, 0) and pixel p at (R_p, y_p, 0), one per target over S_t;
its bins outside the range gate give D = 0.

Estimator (generalised phase-gradient autofocus with partial support). Each iteration,
for each target t: its chip's brightest pixel c_t and the pixels within w_t rows of it
are projected back onto each pulse of S_t (backprojection's adjoint):

    g_t(n) = sum_{p in window} tri((R_n(p) - R_n(c_t)) / dr)
             exp(-j 4 pi fc (R_n(p) - R_n(c_t)) / c) I_t(p),

(kernels::pulse_autofocus's target echoes), the target's echo in pulse n: exp(j e(n))
times its amplitude, times exp(j a_t n) from
c_t lying off the true position (a_t unknown per target). The window keeps the chip's
pixels nearer its own target than any other detected one (a neighbour at the same range,
a few metres along track, is common in a strip), and w_t is twice the rows over which
the target's response stays within 10 dB of its peak (gaps of 2 rows bridged), at least
``chip`` / 4 and never wider than the last iteration's: a wider window takes in more of
the neighbours' azimuth ambiguities, which bias the estimate's slow part.

With q_t(n) = g_t(n) conj(g_t(n-1)), the per-pulse differences are first the maximum-
likelihood sum d0(n) = arg sum_t q_t(n) exp(-j arg sum_n q_t(n)) over the targets that
see both pulses, then refined by the weighted least squares over d and the slopes,

    min sum_t sum_n |q_t(n)| (arg(q_t(n) exp(-j d0(n))) - delta(n) - a_t)^2,
    d = d0 + delta,

solved exactly (_differences). Where the targets' windows overlap the slopes a_t are tied
together, so the error's slow part, its curvature integrated twice, is estimated too
(poorly conditioned: over a stretch of several apertures it wanders by ~0.1 rad; a part
slow over several apertures only shifts targets, and the images do not depend on it); a
phase linear over a stretch only shifts its targets and is not observable at all. e is
the running sum of d over each connected stretch of observed pulses (consecutive pulse
pairs some target sees), its least-squares line removed per stretch; phi += e.
Converged when the RMS of e over the observed pulses, each weighted by the energy of
the targets' echoes in it, falls below ``tolerance_rad`` (the pulses at an aperture's
ends, 15 dB down the two-way pattern, move the image little; unweighted, their
estimates, which a window shifted by a row changes by tenths of a radian, kept an
isolated target from converging).
Pulses no target sees (a stretch of the strip without point-like content) get no
correction, zero, and are reported as unobserved: nothing is invented there.

Targets: pulse_autofocus.select_targets, local maxima at least ``min_peak_db`` above the
image's median intensity and within ``dynamic_range_db`` (default 20 dB: the azimuth
ambiguities of the brightest targets, where the PRF is below the beam's Doppler band
between its nulls, stand 25-30 dB below them and are no targets), that also stand
``min_peak_db`` above their own chip's 75th percentile intensity (not speckle's
brightest pixel in a bright distributed area); the ``max_targets`` brightest. Clutter in
a target's chip still enters its estimate: with a speckled patch (cells 2 m apart of
0.05 and 0.15 the targets' amplitude) under the test strip its targets came back within
0.9 dB of their error-free sidelobes. (Leaving out the targets whose residual disagreed
with the others' was tried and made it worse: real targets dropped while the image was
still defocused, their pulses then uncorrected.) No target, or no convergence after
``max_iterations``: Result.converged False, Result.reason says why, and the estimate is
not to be applied.
"""

import math
import os
import tempfile
from dataclasses import dataclass, field
from typing import List, Tuple

import numpy as np

from . import pulse_autofocus as pa
from . import stripmap_sim
from .stripmap_sim import SPEED_OF_LIGHT, Acquisition

METHODS = ("pga",)
#: The chip's level a target must stand min_peak_db above: its 75th percentile
#: intensity, the speckle's level where a quarter of the chip lies on a bright area
#: (the median, at a bright area's edge, let its brightest speckle through), the
#: background's where a defocused target fills less than a quarter of its chip.
CHIP_LEVEL_PERCENTILE = 75
#: Most targets: one stretch's least squares is (its targets' pulse pairs) x (its
#: targets), dense (256 targets of ~100 pulses: ~50 MB).
MAX_TARGETS = 256
#: Half the two-way 3 dB beam, in sin(theta) per lambda / L (kernels::stripmap_params:
#: the processed Doppler band is 0.886 x 2 v / L).
HALF_BEAM = 0.443
#: Each target's pulses: its 3 dB Doppler band widened by this factor (the two-way
#: pattern is -15 dB there), at most the PRF (the chips' rows sample the azimuth spectrum
#: at the PRF). Pulses beyond the processed band still reach a target's csa image where
#: an uncorrected error spreads their Doppler into the band: taken in, they are
#: corrected too (with 1.15 instead, the PSLR of the targets at a stretch's ends came
#: back up to 2 dB off the error-free image's).
SUPPORT_WIDENING = 1.5


@dataclass
class Result(pa.Result):
    """pulse_autofocus.Result plus where the estimate holds: observed[n] is True for the
    pulses some target sees (their phase error estimated), stretches the (first, last)
    pulses of each connected stretch of them; elsewhere phase_error is 0, no estimate."""
    observed: np.ndarray = field(default_factory=lambda: np.zeros(0, bool))
    stretches: List[Tuple[int, int]] = field(default_factory=list)

    def summary(self):
        """One line: targets, iterations, convergence, the pulses observed, where the
        sums ran."""
        n, seen = len(self.phase_error), int(np.count_nonzero(self.observed))
        on = f" (sums on the {self.backend})" if self.backend else ""
        head = f"autofocus {self.method} (stripmap): {len(self.targets)} target(s), "
        if not self.converged:
            return head + (f"did not converge after {self.iterations} iteration(s) "
                           f"({self.reason}); image kept as formed{on}")
        rms = math.sqrt(float(np.mean(self.phase_error[self.observed] ** 2)))
        unseen = (f"; the other {n - seen} pulses, which no point-like target sees, left "
                  f"uncorrected (no estimate there)" if seen < n else "")
        return head + (f"converged after {self.iterations} iteration(s), last correction "
                       f"{self.last_correction_rms:.3g} rad RMS; phase error "
                       f"{rms:.3g} rad RMS removed from the {seen} of {n} pulses the "
                       f"targets see ({len(self.stretches)} stretch(es)){unseen}; chips' "
                       f"entropy {self.entropy_before:.4f} -> {self.entropy_after:.4f}{on}")


def _temporary_recording(tmp, raw, acq: Acquisition, first_pulse_y):
    """A Recording of `raw` (npulses, nrange) in `tmp` for stripmap_sim's focusers."""
    base = os.path.join(tmp, "pulses")
    np.ascontiguousarray(raw, "<c8").tofile(base + stripmap_sim.DATA_SUFFIX)
    scene = stripmap_sim.Scene(acq, [], int(np.shape(raw)[0]),
                               first_pulse_y=first_pulse_y)
    return stripmap_sim.Recording(base, scene)


def focus_csa(raw, acq: Acquisition, first_pulse_y=0.0, backend="auto", naz=0,
              range_window="rectangular", azimuth_window="rectangular", run=None):
    """stripmap_sim.focus_csa of the raw pulses `raw` (npulses, nrange), e.g. corrected
    ones (the Image: rows along track, columns in slant range)."""
    with tempfile.TemporaryDirectory(prefix="gpuradar-stripmap-af-") as tmp:
        rec = _temporary_recording(tmp, raw, acq, first_pulse_y)
        return stripmap_sim.focus_csa(rec, backend, naz, range_window, azimuth_window, run)


def range_compress(raw, acq: Acquisition, backend="auto"):
    """The raw pulses through pulse_compression (rectangular window): (npulses, nrange)
    complex64, bin k at slant range acq.r0 + pulse_width c / 4 + k dr
    (stripmap_sim.geometry)."""
    from gnuradio import blocks, gr
    from . import gpuradar_python as gpr
    pc = gpr.pulse_compression(acq.nrange, 1, 1, "lfm", [], acq.bandwidth,
                               acq.pulse_width, acq.fs, acq.up_chirp, "rectangular", 4,
                               35.0, 6.0, False, "auto", backend)
    with tempfile.TemporaryDirectory(prefix="gpuradar-stripmap-af-") as tmp:
        path = os.path.join(tmp, "raw.cf32")
        np.ascontiguousarray(raw, "<c8").tofile(path)
        tb = gr.top_block()
        src = blocks.file_source(gr.sizeof_gr_complex * acq.nrange, path)
        snk = blocks.vector_sink_c(acq.nrange)
        tb.connect(src, pc, snk)
        tb.run()
    return np.array(snk.data(), np.complex64).reshape(-1, acq.nrange)


#: Bins kept beyond a target's nearest and farthest ranges when its pulses are cut to
#: the bins its chip reads: the interpolator's 8 taps either side, plus slack for the
#: rounding of the ranges (the cut then changes no term: pulse_autofocus reads 0 beyond
#: the pulse's ends only where the gate ends too).
BIN_MARGIN = 10


class _Target:
    """One target's pulses S_t (first..last), chip pixels (prow, pcol) and their terms
    D[n, p] in a kernels::pulse_autofocus (module docstring)."""

    def __init__(self, comp, acq: Acquisition, first_pulse_y, image, iy, ix, chip,
                 range_chip, backend="auto"):
        n = comp.shape[0]
        self.iy, self.ix = iy, ix
        lam = SPEED_OF_LIGHT / acq.fc
        y_t = image.y0 + iy * image.dy
        r_t = image.x0 + ix * image.dx
        y_n = first_pulse_y + np.arange(n) * acq.dy
        rn = np.hypot(r_t, y_n - y_t)
        r0c = acq.r0 + acq.pulse_width * SPEED_OF_LIGHT / 4
        far = r0c + (acq.nrange - 1) * acq.dr
        half = min(SUPPORT_WIDENING * HALF_BEAM * lam / acq.antenna_length,
                   lam * acq.prf / (4 * acq.velocity))
        band = np.abs((y_t - y_n) / rn - math.sin(acq.squint)) <= half
        seen = np.nonzero(band & (rn >= r0c) & (rn <= far))[0]
        self.first = int(seen[0]) if seen.size else 0
        self.last = int(seen[-1]) if seen.size else -1
        rows = np.arange(max(0, iy - chip), min(image.data.shape[0], iy + chip + 1))
        cols = np.arange(max(0, ix - range_chip),
                         min(image.data.shape[1], ix + range_chip + 1))
        self.prow, self.pcol = [a.ravel() for a in np.meshgrid(rows, cols, indexing="ij")]
        self.core = None
        if self.pulses < 3:  # no estimate from it (autofocus leaves it out)
            return
        # Only the bins the chip's pixels read travel to the core: the nearest and
        # farthest ranges of any of its pixels from any of its pulses, plus the margin.
        yn = y_n[[self.first, self.last]]
        yp = image.y0 + rows[[0, -1]] * image.dy
        rp = np.abs(image.x0 + cols[[0, -1]] * image.dx)
        gap = max(0.0, yp.min() - yn.max(), yn.min() - yp.max())
        reach = max(yn.max() - yp.min(), yp.max() - yn.min())
        bins = (np.array([math.hypot(rp.min(), gap), math.hypot(rp.max(), reach)]) -
                r0c) / acq.dr
        nb = comp.shape[1]
        k0 = int(np.clip(math.floor(bins[0]) - BIN_MARGIN, 0, nb - 2))
        k1 = int(np.clip(math.floor(bins[1]) + BIN_MARGIN + 2, k0 + 2, nb))
        geometry = np.zeros((self.pulses, 6))
        geometry[:, 1] = y_n[self.first:self.last + 1]
        geometry[:, 3] = r0c + k0 * acq.dr
        geometry[:, 4] = acq.dr
        geometry[:, 5] = acq.fc
        from . import gpuradar_python as gpr
        self.core = gpr.pulse_autofocus_core(
            backend, np.ascontiguousarray(comp[self.first:self.last + 1, k0:k1],
                                          np.complex64),
            geometry, (image.x0, image.y0, image.dx, image.dy, 0.0),
            np.ascontiguousarray(np.stack([self.prow, self.pcol], 1), np.int32),
            interpolator="sinc16")

    @property
    def pulses(self):
        return self.last - self.first + 1

    def image(self, phi):
        """I_t(p) = sum_{n in S_t} exp(-j phi(n)) D[n, p] over the chip."""
        return self.core.image(np.asarray(phi[self.first:self.last + 1], np.float64))

    def echo(self, img, c, win):
        """g_t(n) over S_t: the window's pixels (indices into the chip) projected back
        onto each pulse around the centre pixel c."""
        win = np.asarray(win, np.int32)
        return self.core.target_echoes(np.array([c], np.int32),
                                       np.array([0, len(win)], np.int32), win,
                                       np.asarray(img, np.complex128))[0]


def _stretches(observed_pairs):
    """(first, last) pulses of each run of consecutive observed pulse pairs: pair n joins
    pulses n - 1 and n."""
    out, n = [], len(observed_pairs)
    i = 1
    while i < n:
        if observed_pairs[i]:
            j = i
            while j + 1 < n and observed_pairs[j + 1]:
                j += 1
            out.append((i - 1, j))
            i = j + 1
        else:
            i += 1
    return out


def _differences(echoes, n):
    """d(n) (pair n - 1, n; 0 where unobserved) and the observed pairs, from the
    targets' echoes (first, g) (module docstring): the maximum-likelihood sum with each
    target's own mean difference removed gives d0; then the weighted least squares of
    the residual phases theta_t(n) = arg(q_t(n) exp(-j d0(n))) over d and the slopes,

        min sum_t sum_n |q_t(n)| (theta_t(n) - delta(n) - a_t)^2,  d = d0 + delta,

    solved exactly, stretch by stretch (the stretches share no target): delta(n) is the
    weighted mean of theta_t(n) - a_t over the targets seeing pair n, which leaves a
    system in the stretch's slopes a_t. Its one free direction, a constant added to
    every delta of a stretch, is a line in e, removed later."""
    prods = [(first + 1, g[1:] * np.conj(g[:-1])) for first, g in echoes if len(g) > 1]
    sums = np.zeros(n, np.complex128)
    for start, q in prods:
        sums[start:start + len(q)] += q * np.exp(-1j * np.angle(np.sum(q)))
    observed = np.abs(sums) > 0
    d = np.where(observed, np.angle(sums), 0.0)
    for first, last in _stretches(observed):
        group = [(start - first - 1, q) for start, q in prods if first < start <= last]
        d[first + 1:last + 1] += _refine(group, d[first + 1:last + 1])
    return d, observed


def _refine(prods, d0):
    """delta over one stretch's pairs (d0: their differences so far) from its targets'
    products (start within the stretch's pairs, q): _differences' least squares."""
    npairs, ntargets = len(d0), len(prods)
    theta = [np.angle(q * np.exp(-1j * d0[start:start + len(q)])) for start, q in prods]
    # delta(n) = (sum_s w_s theta_s - sum_s w_s a_s) / W(n) = b(n) - sum_s m_s(n) a_s
    b = np.zeros(npairs)
    m = np.zeros((npairs, ntargets))
    for s, ((start, q), th) in enumerate(zip(prods, theta)):
        sl = slice(start, start + len(q))
        b[sl] += np.abs(q) * th
        m[sl, s] += np.abs(q)
    weight = m.sum(axis=1)
    safe = np.where(weight > 0, weight, 1.0)
    b /= safe
    m /= safe[:, None]
    rows, rhs = [], []
    for t, ((start, q), th) in enumerate(zip(prods, theta)):
        sl = slice(start, start + len(q))
        sw = np.sqrt(np.abs(q))
        # residual theta - delta - a_t = (theta - b) + (m a) - a_t
        a = m[sl].copy()
        a[:, t] -= 1.0
        rows.append(sw[:, None] * a)
        rhs.append(-sw * (th - b[sl]))
    slopes = np.linalg.lstsq(np.concatenate(rows), np.concatenate(rhs), rcond=1e-9)[0]
    return b - m @ slopes


def _integrate(d, stretches, n):
    """e: the running sum of d over each stretch, its line removed; 0 elsewhere."""
    e = np.zeros(n)
    for first, last in stretches:
        part = np.concatenate([[0.0], np.cumsum(d[first + 1:last + 1])])
        e[first:last + 1] = pa.detrend(part)
    return e


def _point_like(data, found, chip, range_chip, min_peak_db):
    """The maxima of `found` ((iy, ix), brightest first) that also stand min_peak_db
    above their own chip's level (its CHIP_LEVEL_PERCENTILE-th percentile intensity): a
    point above its surroundings, not the brightest speckle of a bright distributed area
    (in a chip of a few hundred pixels speckle's brightest stands ~10 dB above its
    median), whose estimate would be noise."""
    power = np.abs(np.asarray(data, np.complex128)) ** 2
    keep = []
    for iy, ix in found:
        chip_power = power[max(0, iy - chip):iy + chip + 1,
                           max(0, ix - range_chip):ix + range_chip + 1]
        level = float(np.percentile(chip_power, CHIP_LEVEL_PERCENTILE))
        if power[iy, ix] >= 10 ** (min_peak_db / 10) * level:
            keep.append((iy, ix))
    return keep


def _own_pixels(targets, image):
    """Each target's chip pixels nearer its own peak than any other target's (metres
    along track and in slant range): a neighbour in the chip would enter its estimate."""
    ys = np.array([t.iy * image.dy for t in targets])
    rs = np.array([t.ix * image.dx for t in targets])
    for i, t in enumerate(targets):
        py, pr = t.prow * image.dy, t.pcol * image.dx
        dist = np.hypot(py[:, None] - ys[None, :], pr[:, None] - rs[None, :])
        t.own = dist[:, i] <= dist.min(axis=1)


def _extent(power, prow, c, gap=2):
    """Rows from the peak c over which the row maxima of `power` stay within 10 dB of it
    (gaps of up to `gap` rows bridged: a defocused response's paired echoes)."""
    rows = np.unique(prow)
    profile = np.zeros(len(rows))
    np.maximum.at(profile, np.searchsorted(rows, prow), power)
    centre = int(np.searchsorted(rows, prow[c]))
    bright = profile >= 0.1 * power[c]
    reach = 0
    for step in (1, -1):
        i, last, miss = centre, centre, 0
        while 0 <= i + step < len(rows) and miss <= gap:
            i += step
            if bright[i]:
                last, miss = i, 0
            else:
                miss += 1
        reach = max(reach, abs(int(rows[last]) - int(rows[centre])))
    return reach


def autofocus(raw, acq: Acquisition, image, first_pulse_y=0.0, method="pga",
              max_iterations=30, tolerance_rad=0.01, max_targets=64, chip=48,
              range_chip=3, min_peak_db=15.0, dynamic_range_db=20.0, backend="auto",
              compressed=None) -> Result:
    """Estimates the per-pulse phase error of the stripmap `image` (a stripmap_sim.Image
    in slant range, focus_csa's) of the raw pulses `raw` (npulses, nrange) of a pass with
    acquisition `acq` whose pulse 0 lies at along-track `first_pulse_y` (module
    docstring). The terms and sums run on `backend` ('cpu' | 'cuda' | 'auto': CUDA when
    a device is usable), as does the range compression. compressed: range_compress(raw)
    when the caller has it. ValueError naming the parameter on bad arguments."""
    if method not in METHODS:
        raise ValueError(f"stripmap autofocus: method must be one of {', '.join(METHODS)} "
                         f"(got {method!r}; minimum entropy is for backprojected images)")
    if not (isinstance(max_iterations, int) and 1 <= max_iterations <= 1000):
        raise ValueError(f"stripmap autofocus: max_iterations must be 1 to 1000 "
                         f"(got {max_iterations!r})")
    if not (math.isfinite(tolerance_rad) and tolerance_rad > 0):
        raise ValueError(f"stripmap autofocus: tolerance_rad must be > 0 and finite "
                         f"(got {tolerance_rad!r})")
    if not (isinstance(chip, int) and 4 <= chip <= 512):
        raise ValueError(f"stripmap autofocus: chip must be 4 to 512 rows (got {chip!r})")
    if not (isinstance(range_chip, int) and 0 <= range_chip <= 32):
        raise ValueError(f"stripmap autofocus: range_chip must be 0 to 32 columns "
                         f"(got {range_chip!r})")
    if backend not in ("auto", "cuda", "cpu"):
        raise ValueError(f"stripmap autofocus: backend must be one of auto, cuda, cpu "
                         f"(got {backend!r})")
    if not (isinstance(max_targets, int) and 1 <= max_targets <= MAX_TARGETS):
        raise ValueError(f"stripmap autofocus: max_targets must be 1 to {MAX_TARGETS} "
                         f"(got {max_targets!r})")
    raw = np.asarray(raw)
    if raw.ndim != 2 or raw.shape[1] != acq.nrange or raw.shape[0] < 3:
        raise ValueError(f"stripmap autofocus: raw must be npulses (>= 3) x nrange = "
                         f"{acq.nrange} (got shape {raw.shape})")
    if not image.x_is_slant:
        raise ValueError("stripmap autofocus: image must be the csa image (columns in "
                         "slant range, rows along track), not a ground-range one")
    n = raw.shape[0]
    result = Result(method, np.zeros(n), observed=np.zeros(n, bool))
    data = np.asarray(image.data)
    if not np.isfinite(data).all():
        result.reason = "non-finite pixels in the image"
        return result
    found = _point_like(data, pa.select_targets(data, chip, MAX_TARGETS, min_peak_db,
                                                 dynamic_range_db),
                        chip, range_chip, min_peak_db)[:max_targets]
    if not found:
        result.reason = (f"no point-like content: no local maximum {min_peak_db:g} dB "
                         f"above the image's median intensity and its chip's level")
        return result
    comp = range_compress(raw, acq, backend) if compressed is None else compressed
    # A sample with a non-finite part counts as 0 whole.
    comp = np.where(np.isfinite(comp), comp, 0)
    targets = [t for t in (_Target(comp, acq, first_pulse_y, image, iy, ix, chip,
                                   range_chip, backend) for iy, ix in found)
               if t.core is not None]
    result.targets = [(t.ix, t.iy) for t in targets]
    if not targets:
        result.reason = "no point-like target is seen by 3 or more pulses in its band"
        return result
    result.backend = targets[0].core.backend
    phi = np.zeros(n)
    result.entropy_before = pa.image_entropy(
        np.concatenate([t.image(phi) for t in targets]))
    _own_pixels(targets, image)
    for t in targets:
        t.width = chip
    min_window = max(2, chip // 4)
    observed_pairs = np.zeros(n, bool)
    for it in range(1, max_iterations + 1):
        echoes = []
        for t in targets:
            img = t.image(phi)
            power = np.where(t.own, np.abs(img) ** 2, 0.0)
            c = int(np.argmax(power))
            dist = np.abs(t.prow - t.prow[c])
            t.width = min(t.width, max(min_window, 2 * _extent(power, t.prow, c)))
            win = np.nonzero(t.own & (dist <= t.width))[0]
            echoes.append((t.first, t.echo(img, c, win)))
        d, observed_pairs = _differences(echoes, n)
        stretches = _stretches(observed_pairs)
        e = _integrate(d, stretches, n)
        phi = phi + e
        energy = np.zeros(n)
        for first, g in echoes:
            energy[first:first + len(g)] += np.abs(g) ** 2
        energy = np.where(e != 0, energy, 0.0)
        result.iterations = it
        result.last_correction_rms = math.sqrt(float(energy @ e ** 2 / energy.sum())) \
            if energy.sum() > 0 else 0.0
        if result.last_correction_rms < tolerance_rad:
            result.converged = True
            break
    else:
        result.reason = (f"the correction was still {result.last_correction_rms:.3g} rad "
                         f"RMS after {max_iterations} iterations (tolerance "
                         f"{tolerance_rad:g} rad)")
    result.stretches = _stretches(observed_pairs)
    result.observed = np.zeros(n, bool)
    for first, last in result.stretches:
        result.observed[first:last + 1] = True
    result.phase_error = np.where(result.observed, phi, 0.0)
    if result.converged:
        result.entropy_after = pa.image_entropy(
            np.concatenate([t.image(result.phase_error) for t in targets]))
    return result


def correct(raw, phase_error):
    """The raw pulses times exp(-j phase_error[n]) (complex64)."""
    return pa.correct(raw, phase_error)


def read_raw(rec: stripmap_sim.Recording):
    """A recording's raw pulses as complex64 (npulses, nrange): integer datatypes
    (ci16_le, ci8) with 1.0 = full scale, as the flowgraphs read them."""
    from . import sigmf_io
    datatype = getattr(rec, "datatype", "cf32_le")
    component = sigmf_io.SAMPLE_FORMATS[datatype][1]
    raw = np.fromfile(rec.data_path, dtype=component)
    return sigmf_io.to_complex64(raw, datatype).reshape(rec.scene.npulses,
                                                        rec.scene.acq.nrange)
