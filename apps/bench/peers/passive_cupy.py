#!/usr/bin/env python3
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""Peer of `gpuradar_bench passive/cuda` (issue 33): the same CPI's steps, PR-FM and
PR-DVB, written straightforwardly with CuPy (or NumPy, --numpy, to check it on a machine
without a GPU):

  ECA-B   per batch: the L x K matrix of delayed reference copies, its normal equations
          X^H X a = X^H s by matrix products, a batched solve, s - X a;
  CAF     batched: per batch, the correlation of the batch's surveillance with the
          reference at lags 0..M-1 by FFT, then an FFT across the batches (Hann window)
          for Doppler -K..K, |.|^2;
  CFAR    cell averaging (2 guard + 6 training range cells, 1 + 2 Doppler cells a side,
          Doppler wrapping) by a 2-D FFT convolution with the training window, a
          threshold for pfa 1e-6, detections read back.

Workloads (bench_passive.cc's pr_fm and pr_dvb):
  PR-FM   1.2 M samples, one surveillance channel, ECA-B 50 taps in 10 batches, 400
          range x +-256 Doppler bins;
  PR-DVB  2.285 M samples, four surveillance channels, ECA-B 100 taps in 10 batches,
          1500 range x +-128 Doppler bins; the times are for all four channels. The
          channels share the reference, so its delayed copies and their normal matrices
          are formed once and the four right-hand sides solved together (the plain way
          to write it with arrays; the module forms them per channel).
The CAF batch length is the module's automatic choice (the fewest batches, at least
max(4K, 2K+1), dividing the CPI: 1000 and 3656 samples).

What "straightforward" means here: each step as one would write it in CuPy from the
textbook, on the GPU, without custom kernels. Prints one JSON line per workload like the
bench's: eca_ms, caf_ms, cfar_ms, ms_per_cpi (median of --repeats, after a warm-up run)
and the cancellation achieved (mean over the channels). Before timing, a planted echo
must peak at its lag and Doppler bin in every channel's map and the direct path (40 dB
above the noise) must be cancelled by at least 35 dB. --quick: a tenth of the CPI and
fewer bins (the bench's --quick).

  python3 apps/bench/peers/passive_cupy.py [--quick] [--repeats 5] [--numpy]
                                           [--workload PR-FM|PR-DVB]
"""

import argparse
import json
import math
import sys
import time

import numpy as np


def pr_fm(quick):
    n = 120000 if quick else 1200000
    return dict(nsamples=n, fs=2.4e6, surveillance_channels=1, ntaps=20 if quick else 50,
                eca_batches=10, nrange=100 if quick else 400,
                doppler_half=64 if quick else 256)


def pr_dvb(quick):
    n = 228500 if quick else 2285000
    return dict(nsamples=n, fs=9.14e6, surveillance_channels=4,
                ntaps=20 if quick else 100, eca_batches=10,
                nrange=150 if quick else 1500, doppler_half=32 if quick else 128)


WORKLOADS = {"PR-FM": pr_fm, "PR-DVB": pr_dvb}


def caf_batch_length(n, k_half):
    """cross_ambiguity::choose_batch_length: the fewest batches B >= max(4K, 2K+1)
    dividing N, the batch length N / B."""
    for b in range(max(4 * k_half, 2 * k_half + 1), n):
        if n % b == 0:
            return n // b
    raise ValueError(f"no batch length for N = {n}, K = {k_half}")


def run(xp, w, repeats, sync, check=True):
    """Times the three steps over every surveillance channel. Constants enter the array
    maths as NumPy scalars of the arrays' types: CuPy with NumPy 2 refuses some Python
    scalars (NEP 50)."""
    n, k, nb = w["nsamples"], w["ntaps"], w["eca_batches"]
    m, kd, bl = w["nrange"], w["doppler_half"], w["caf_batch_length"]
    ns = w["surveillance_channels"]
    # the channels made on the host (the same on both array modules), then moved: each
    # surveillance channel its own noise + 100 x the reference (a direct path, 40 dB)
    rng = np.random.default_rng(3)
    r_host = (rng.standard_normal((n, 2)) @ np.array([1, 1j])).astype(np.complex64)
    s_host = (rng.standard_normal((ns, n, 2)) @ np.array([1, 1j])).astype(np.complex64)
    s_host += np.complex64(100) * r_host
    r, s = xp.asarray(r_host), xp.asarray(s_host)
    l = n // nb
    idx = xp.arange(n)[:, None] - xp.arange(k)[None, :]  # sample n, delay d
    before_cpi = xp.asarray((np.arange(n)[:, None] - np.arange(k)[None, :]) >= 0)
    before_cpi = before_cpi.astype(xp.complex64)  # 0 where n - d < 0

    def eca():
        # X (batches x L x K) from the reference, shared by the channels; the channels
        # are the right-hand sides' columns (batches x L x channels)
        x = r[xp.maximum(idx, 0)] * before_cpi
        x = x.reshape(nb, l, k)
        sb = xp.moveaxis(s.reshape(ns, nb, l), 0, 2)
        xh = xp.conj(xp.swapaxes(x, 1, 2))
        a = xp.linalg.solve(xh @ x, xh @ sb)
        return xp.moveaxis(sb - x @ a, 2, 0).reshape(ns, n)

    nbatch = n // bl
    nfft = 1 << math.ceil(math.log2(bl + m - 1))
    window = xp.hanning(nbatch).astype(xp.float32)

    def caf(e):
        # c_b[lag] = sum_i e[bL + i] conj(r[bL + i - lag]), the reference with M - 1
        # samples before each batch; every channel against the one reference
        rp = xp.concatenate([xp.zeros(m - 1, xp.complex64), r])
        starts = xp.arange(nbatch) * bl
        ref_seg = rp[starts[:, None] + xp.arange(bl + m - 1)[None, :]]
        sur_seg = e.reshape(ns, nbatch, bl)
        fr = xp.fft.fft(ref_seg, nfft, axis=1)
        fs = xp.fft.fft(sur_seg, nfft, axis=2)
        # corr[j] = sum_t e_seg[t + j] conj(ref_seg[t]): lag = j + M - 1 (mod nfft)
        corr = xp.fft.ifft(fs * xp.conj(fr)[None], axis=2)
        lags = corr[:, :, (xp.arange(m) - (m - 1)) % nfft]  # channels x nbatch x M
        dop = xp.fft.fftshift(xp.fft.fft(lags * window[None, :, None], axis=1), axes=1)
        mid = nbatch // 2
        # channels x M x (2K+1)
        return xp.square(xp.abs(xp.swapaxes(dop[:, mid - kd:mid + kd + 1], 1, 2)))

    gr_, tr_, gd_, td_ = 2, 6, 1, 2

    def cfar(p):
        _, nr, nd = p.shape
        # range zero-padded (pad rows after the map take both sides' wrap), Doppler
        # periodic; the training window as a kernel on the padded grid
        pad = gr_ + tr_
        rows = nr + 2 * pad
        ker_host = np.zeros((rows, nd), np.float32)
        for i in range(-(gr_ + tr_), gr_ + tr_ + 1):
            for j in range(-(gd_ + td_), gd_ + td_ + 1):
                if abs(i) > gr_ or abs(j) > gd_:
                    ker_host[i % rows, j % nd] = 1.0
        cells = float(ker_host.sum())
        ker = xp.asarray(ker_host)
        pp = xp.concatenate([p, xp.zeros((ns, 2 * pad, nd), p.dtype)], axis=1)
        # sum over the window of p[x + i, y + j]: a correlation with the kernel
        noise = xp.real(xp.fft.ifft2(xp.fft.fft2(pp) * xp.conj(xp.fft.fft2(ker))[None]))
        alpha = cells * (1e-6 ** (-1.0 / cells) - 1.0)
        det = p > noise[:, :nr] * np.float32(alpha / cells)
        return xp.argwhere(det)  # channel, range, Doppler

    def timed(f, *args):
        times = []
        out = f(*args)  # warm-up: plans, kernels compiled
        sync()
        for _ in range(repeats):
            t0 = time.perf_counter()
            out = f(*args)
            sync()
            times.append((time.perf_counter() - t0) * 1e3)
        times.sort()
        return out, times[len(times) // 2]

    if check:
        # an echo at lag 7 + channel, Doppler bin 3 - channel (of the batches) must
        # peak there in each channel's map
        t = np.arange(n)
        want, planted = [], np.empty((ns, n), np.complex64)
        for c in range(ns):
            lag, bin_ = 7 + c, 3 - c
            echo = np.concatenate([np.zeros(lag, np.complex64), r_host[:n - lag]])
            planted[c] = echo * np.exp(2j * np.pi * bin_ * t / n)
            want.append((lag, bin_))
        maps = caf(xp.asarray(planted))
        got = []
        for c in range(ns):
            # NumPy's unravel_index: CuPy's takes arrays only (it calls can_cast on them)
            peak = np.unravel_index(int(xp.argmax(maps[c])), (m, 2 * kd + 1))
            got.append((int(peak[0]), int(peak[1]) - kd))
        if got != want:
            raise SystemExit(f"passive_cupy: CAF check failed: peaks at {got}, "
                             f"want {want}")
    e, eca_ms = timed(eca)
    pmap, caf_ms = timed(caf, e)
    dets, cfar_ms = timed(lambda p: cfar(p).get() if xp.__name__ == "cupy" else cfar(p),
                          pmap)
    before = xp.mean(xp.square(xp.abs(s)), axis=1)
    after = xp.mean(xp.square(xp.abs(e)), axis=1)
    cancellation = [10 * math.log10(float(b) / float(a)) for b, a in zip(before, after)]
    if check and min(cancellation) < 35.0:
        raise SystemExit(f"passive_cupy: ECA-B check failed: cancellation "
                         f"{cancellation} dB, want >= 35 (the direct path is 40 dB)")
    return dict(eca_ms=eca_ms, caf_ms=caf_ms, cfar_ms=cfar_ms,
                ms_per_cpi=eca_ms + caf_ms + cfar_ms,
                realtime_factor=1000.0 * n / w["fs"] / (eca_ms + caf_ms + cfar_ms),
                cancellation_db=sum(cancellation) / ns,
                detections=int(len(dets)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--numpy", action="store_true", help="NumPy on the CPU (a check)")
    ap.add_argument("--workload", choices=sorted(WORKLOADS),
                    help="one workload (default: PR-FM, then PR-DVB)")
    args = ap.parse_args()
    if args.repeats < 1:
        ap.error(f"--repeats must be >= 1 (got {args.repeats})")
    if args.numpy:
        import numpy as xp
        device = "cpu (numpy)"
        sync = lambda: None  # noqa: E731
    else:
        try:
            import cupy as xp
        except ImportError:
            print("passive_cupy: CuPy is not installed here (use --numpy to check the "
                  "steps on the CPU)", file=sys.stderr)
            return 2
        device = xp.cuda.runtime.getDeviceProperties(0)["name"].decode()
        sync = xp.cuda.Device().synchronize
    for name in [args.workload] if args.workload else ["PR-FM", "PR-DVB"]:
        w = WORKLOADS[name](args.quick)
        w["caf_batch_length"] = caf_batch_length(w["nsamples"], w["doppler_half"])
        res = run(xp, w, args.repeats, sync)
        line = dict(bench="passive/cupy_peer", device=device, workload=name, **w, **res)
        print(json.dumps(line), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
