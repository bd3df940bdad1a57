#!/usr/bin/env python3
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""gpuradar-process: detect targets in a pulse-Doppler recording.

A GNU Radio flowgraph reads the recording (SigMF cf32_le, see gpuradar-sim and
gnuradio.gpuradar.pd_sim for the metadata it needs) and runs

  file_source -> pulse_framer -> pulse_doppler_processor -> cfar_2d -> tracker
                                  (pulse compression, corner turn,      |
                                   Doppler FFT, square law)        detections

on the GPU (CUDA) when one is present, else on the CPU. Without --input the app first
simulates gpuradar-sim's embedded default scenario (into a temporary directory).

Writes <output>.json (parameters, backend, throughput, every detection, the tracks of
every CPI, the truth comparison, the samples with a NaN or infinite part that the framer
processed as 0: per CPI and in total), <output>.csv (one detection a line),
<output>.tracks.csv (one track a line per CPI) and <output>.png (the range-Doppler map
of one CPI in dB, range in metres, velocity in m/s, detections, tracks with their ids
and paths so far, and truth marked). Detections are the CFAR's 3x3 local maxima,
neighbouring ones (within one bin in range and Doppler) merged by the CFAR into their
strongest, at its peak interpolated between bins (cfar_2d's cluster option). The
tracker (M-of-N confirmation, see --track-confirm) follows them from CPI to CPI; the
CPI's time is its rx_time, or its index x the CPI duration. When the recording holds the
truth, a target
counts as detected in a CPI when a detection lies within +-1 range bin and +-1 Doppler
bin of its expected bins; every other detection is a false one. Outputs are written
under temporary names and renamed when all are complete.

A recording from another tool may lack the gpuradar: metadata: give it on the command
line (--fs, --fc, --pri-samples or --prf, --gate-start, --nrange, --npulses,
--first-pulse-sample, --bandwidth, --pulse-width, --up-chirp/--down-chirp); a value given
there replaces the metadata's. Numbers take engineering notation (--fs 10M).
"""

import argparse
import csv
import json
import math
import os
import runpy
import sys
import tempfile
import time

import numpy as np
from gnuradio import blocks, gr
try:
    from gnuradio import gpuradar
except ImportError as error:  # gpuradar-env, beside the app, says what to set
    sys.exit(runpy.run_path(os.path.join(os.path.dirname(os.path.realpath(__file__)),
                                         "gpuradar-env"))["import_failure"](
        "gpuradar-process", error))
from gnuradio.gpuradar import (app_util, detections as gdet, display_geometry, pd_sim,
                               sigmf_io)
from gnuradio.gpuradar.app_util import AppError, number
from gnuradio.gpuradar.sigmf_io import naming_write_errors

PROG = "gpuradar-process"
#: Detections within this many bins (range and Doppler) of a target's expected bins
#: count as that target (the truth is the centre pulse's; straddle and range walk).
MATCH_BINS = 1
#: The PNG shows at most this many range rows (about the pixel height of the axes).
MAX_PLOT_ROWS = 400
#: The colour scale spans at least this many dB above the noise floor.
MIN_PLOT_DB = 10.0


def parse_args(argv):
    p = app_util.ArgumentParser(prog=PROG, description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    app_util.add_recording_args(p, "gpuradar_process",
                                "simulate gpuradar-sim's default scenario",
                                "<output>.json, .csv, .png")
    p.add_argument("--nfft", type=number(int, minimum=0, maximum=1 << 20), default=0,
                   help="Doppler FFT length (default: pulses per CPI)")
    p.add_argument("--range-window", default="taylor",
                   help="pulse-compression window (default: %(default)s, 35 dB, nbar 4)")
    p.add_argument("--doppler-window", default="taylor",
                   help="slow-time window (default: %(default)s)")
    p.add_argument("--mti", default="none", choices=["none", "two_pulse", "three_pulse"],
                   help="MTI canceller before the Doppler FFT (default: %(default)s)")
    p.add_argument("--pfa", type=number(above=0, maximum=0.5), default=1e-6,
                   help="CFAR design Pfa per cell (default: %(default)g)")
    p.add_argument("--cfar", default="ca", choices=["ca", "go", "so", "os"],
                   help="CFAR variant (default: %(default)s)")
    p.add_argument("--guard", metavar="RANGE,DOPPLER", default="1,1",
                   help="CFAR guard cells per side (default: %(default)s)")
    p.add_argument("--train", metavar="RANGE,DOPPLER", default="5,1",
                   help="CFAR training cells per side (default: %(default)s)")
    p.add_argument("--track-confirm", metavar="M,N", default="2,3",
                   help="tracker: confirm a track with M detections in its first N CPIs "
                        "(default: %(default)s)")
    p.add_argument("--plot-cpi", type=number(int), default=-1,
                   help="CPI shown in the PNG (negative: from the end; default: the last, "
                        "where the tracks have their longest paths); the map comes from a "
                        "second pass over the CPIs up to it")
    p.add_argument("--png-size", metavar="WxH", default="960x640",
                   help="PNG size in pixels (default: %(default)s)")
    p.add_argument("--dynamic-range", type=number(above=0, maximum=400), default=50.0,
                   help="PNG colour scale: at most this many dB above the noise floor "
                        "(default: %(default)s; less when the map's peak is lower)")
    p.add_argument("--no-png", action="store_true", help="do not write the PNG")
    p.add_argument("--check", action="store_true",
                   help="exit with status 1 unless every truth target is detected in "
                        "every CPI")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress bar")
    p.add_argument("--verbose", "-v", action="store_true",
                   help="show the blocks' debug log (per-CPI CFAR counts, ...)")
    o = p.add_argument_group(
        "recording parameters", "for a recording whose metadata lacks them (or has them "
        "wrong): each replaces the metadata's value")
    o.add_argument("--fs", type=number(above=0), help="sample rate (Hz)")
    o.add_argument("--fc", type=number(above=0), help="carrier (Hz)")
    pri = o.add_mutually_exclusive_group()
    pri.add_argument("--pri-samples", type=number(minimum=1),
                     help="pulse repetition interval (samples, may be fractional)")
    pri.add_argument("--prf", type=number(above=0), help="pulse repetition frequency (Hz)")
    o.add_argument("--gate-start", type=number(int, minimum=0),
                   help="range gate start (samples after each pulse start)")
    o.add_argument("--nrange", type=number(int, minimum=1), help="range gate (samples)")
    o.add_argument("--npulses", type=number(int, minimum=1), help="pulses per CPI")
    o.add_argument("--first-pulse-sample", type=number(int, minimum=0),
                   help="sample where pulse 0 starts")
    o.add_argument("--bandwidth", type=number(above=0),
                   help="LFM bandwidth (Hz; the waveform becomes an LFM)")
    o.add_argument("--pulse-width", type=number(above=0),
                   help="LFM pulse width (s; the waveform becomes an LFM)")
    chirp = o.add_mutually_exclusive_group()
    chirp.add_argument("--up-chirp", dest="up_chirp", action="store_const", const=True,
                       help="LFM sweeps upwards")
    chirp.add_argument("--down-chirp", dest="up_chirp", action="store_const", const=False,
                       help="LFM sweeps downwards")
    return p.parse_args(argv)


def overrides(args):
    """The recording parameters given on the command line, for pd_sim.read."""
    return {k: ("--" + k.replace("_", "-"), getattr(args, k)) for k in pd_sim.OVERRIDABLE
            if getattr(args, k) is not None}


def pair(text, name, minimum=0, what="RANGE,DOPPLER"):
    try:
        a, b = (int(x) for x in text.split(","))
    except ValueError:
        raise AppError(f"--{name}: expected two integers {what} (got {text!r})") \
            from None
    if a < minimum or b < minimum:
        raise AppError(f"--{name}: values must be >= {minimum} (got {text!r})")
    return a, b


def png_size(text):
    try:
        w, h = (int(x) for x in text.lower().split("x"))
    except ValueError:
        raise AppError(f"--png-size: expected WxH in pixels (got {text!r})") from None
    if not (200 <= w <= 4000 and 200 <= h <= 4000):
        raise AppError(f"--png-size: each side must be 200..4000 px (got {text!r})")
    return w, h


class cpi_capture(gr.sync_block):
    """Keeps the range-Doppler map of one CPI (items [cpi*nrange, (cpi+1)*nrange))."""

    def __init__(self, nfft, nrange, cpi):
        gr.sync_block.__init__(self, name="cpi_capture",
                               in_sig=[(np.float32, nfft)], out_sig=None)
        self.lo, self.hi = cpi * nrange, (cpi + 1) * nrange
        self.map = np.zeros((nrange, nfft), np.float32)
        self.filled = 0

    def work(self, input_items, output_items):
        x = input_items[0]
        n0 = self.nitems_read(0)
        a, b = max(n0, self.lo), min(n0 + len(x), self.hi)
        if a < b:
            self.map[a - self.lo:b - self.lo] = x[a - n0:b - n0]
            self.filled += b - a
        return len(x)


def make_chain(rec, args, nfft):
    """pulse_framer and pulse_doppler_processor for the recording (errors -> AppError)."""
    wf = rec.waveform
    lfm = wf["type"] == "lfm"
    try:
        framer = gpuradar.pulse_framer(rec.pri_samples, rec.gate_start, rec.nrange,
                                       rec.npulses, rec.fs, rec.fc, "free",
                                       backend=args.backend)
        pdp = gpuradar.pulse_doppler_processor(
            rec.nrange, rec.npulses, nfft, 1, "lfm" if lfm else "custom",
            [] if lfm else rec.custom_waveform(),
            float(wf.get("bandwidth", 5e6)), float(wf.get("pulse_width", 10e-6)), rec.fs,
            bool(wf.get("up_chirp", True)), args.range_window, 4, 35.0, 6.0, False, "auto",
            args.mti, args.doppler_window, 4, 35.0, 6.0, True, "square_law", False,
            args.backend)
    except ValueError as e:  # parameter checks name the parameter
        raise AppError(f"{rec.meta_path}: cannot process with these parameters: {e}") \
            from None
    except RuntimeError as e:  # e.g. --backend cuda without a GPU
        raise AppError(f"--backend {args.backend}: {e}") from None
    return framer, pdp


#: GNU Radio's converter of each integer datatype's interleaved components to complex,
#: scaled so that full scale reads as 1.0 (sigmf_io.SAMPLE_FORMATS).
INTEGER_SOURCES = {
    "ci16_le": (gr.sizeof_short, lambda scale: blocks.interleaved_short_to_complex(
        False, False, scale)),
    "ci8": (gr.sizeof_char, lambda scale: blocks.interleaved_char_to_complex(False, scale)),
}


def source(tb, rec, nsamples=None):
    """file_source (-> integer to complex) (-> head) (-> skip_head to pulse 0): the
    recording's samples as complex."""
    datatype = rec.datatype
    if datatype in INTEGER_SOURCES:
        size, converter = INTEGER_SOURCES[datatype]
        src = blocks.file_source(size, rec.data_path, False)
        last = converter(sigmf_io.SAMPLE_FORMATS[datatype][2])
        tb.connect(src, last)
    else:
        src = blocks.file_source(gr.sizeof_gr_complex, rec.data_path, False)
        last = src
    if nsamples is not None:
        head = blocks.head(gr.sizeof_gr_complex, nsamples)
        tb.connect(last, head)
        last = head
    if rec.first_pulse_sample:
        skip = blocks.skip_head(gr.sizeof_gr_complex, rec.first_pulse_sample)
        tb.connect(last, skip)
        last = skip
    return last


def make_tracker(rec, args, nfft):
    """The tracker for the recording's bins: measurement noise of half a bin (range and
    velocity; the interpolated peaks do better at high SNR), manoeuvres to 5 g, a CPI
    duration per index when the CPIs carry no rx_time."""
    m, n = pair(args.track_confirm, "track-confirm", 1, "M,N")
    velocity_bin = rec.prf / nfft * gpuradar.speed_of_light / (2 * rec.fc)
    try:
        return gpuradar.tracker(9.21, m, n, 3, 0.5 * rec.range_bin_m, 0.5 * velocity_bin,
                                50.0, rec.npulses / rec.prf)
    except ValueError as e:
        raise AppError(f"--track-confirm: {e}") from None


def process(rec, args, nfft):
    """The flowgraph file -> framer -> pulse-Doppler chain -> CFAR -> tracker; returns
    (detections, PDU metadata, tracks PDUs, (framer, pdp, cfar, tracker), wall time)."""
    guard, train = pair(args.guard, "guard"), pair(args.train, "train")
    framer, pdp = make_chain(rec, args, nfft)
    try:
        cfar = gpuradar.cfar_2d(rec.nrange, nfft, 1, guard[0], train[0], guard[1],
                                train[1], args.pfa, args.cfar, 0, "clip", "wrap", True, 4096,
                                args.backend, cluster=True)
    except ValueError as e:
        raise AppError(f"cfar_2d: {e}") from None
    except RuntimeError as e:
        raise AppError(f"--backend {args.backend}: {e}") from None
    trk = make_tracker(rec, args, nfft)
    tb = gr.top_block("gpuradar-process")
    mask = blocks.null_sink(nfft)
    dbg = blocks.message_debug()
    tdbg = blocks.message_debug()
    tb.connect(source(tb, rec), framer, pdp, cfar, mask)
    tb.msg_connect(cfar, "detections", dbg, "store")
    tb.msg_connect(cfar, "detections", trk, "detections")
    tb.msg_connect(trk, "tracks", tdbg, "store")
    elapsed = app_util.run_with_progress(tb, lambda: framer.nitems_read(0), rec.nsamples,
                                         f"processing ({pdp.backend()})",
                                         enabled=False if args.quiet else None)
    metas, dets = [], []
    for i in range(dbg.num_messages()):
        meta, d = gdet.pdu_to_python(dbg.get_message(i))
        metas.append(meta)
        dets.extend(d)
    # The tracker may still be handling the last messages when the streams end.
    deadline = time.monotonic() + 10.0
    while trk.scans() + trk.bad_messages() < len(metas) and time.monotonic() < deadline:
        time.sleep(0.01)
    scans = []
    for i in range(tdbg.num_messages()):
        meta, tracks = gdet.pdu_to_python(tdbg.get_message(i))
        scans.append(dict(cpi=meta.get("cpi"), time_s=meta["time_s"], tracks=tracks))
    return dets, metas, scans, (framer, pdp, cfar, trk), elapsed


def nonfinite_report(metas, framer):
    """Samples with a NaN or infinite part that the framer wrote as 0: per_cpi[i] for
    CPI i (from the detections' metadata, i.e. the cpi tags) and the total (the framer's
    counter)."""
    by_cpi = {int(m["cpi"]): int(m.get("nonfinite_samples", 0)) for m in metas}
    per_cpi = [by_cpi.get(c, 0) for c in range(max(by_cpi, default=-1) + 1)]
    total = framer.nonfinite_samples()
    if sum(per_cpi) != total:
        raise AppError(f"internal: the CPIs report {sum(per_cpi)} non-finite samples, "
                       f"the framer counted {total}")
    return {"total": total, "per_cpi": per_cpi}


def power_map(rec, args, nfft, cpi):
    """The range-Doppler power map of one CPI, (nrange, nfft), from a second flowgraph
    over the recording's first cpi + 1 CPIs (the pulse schedule stays the recording's,
    exact for fractional PRIs). Not a tee off the detection chain: on the CUDA backend
    the chain's output is device memory, and GNU Radio 3.10 sets one transfer type per
    output buffer, so one port cannot feed a GPU block and a host block at once."""
    framer, pdp = make_chain(rec, args, nfft)
    tb = gr.top_block("gpuradar-process map")
    cap = cpi_capture(nfft, rec.nrange, cpi)
    nsamples = rec.pulse_start((cpi + 1) * rec.npulses)
    tb.connect(source(tb, rec, nsamples), framer, pdp, cap)
    app_util.run_with_progress(tb, lambda: framer.nitems_read(0), nsamples,
                               f"range-Doppler map of CPI {cpi}",
                               enabled=False if args.quiet else None)
    return cap.map if cap.filled == rec.nrange else None


def doppler_distance(a, b, n):
    d = abs(a - b) % n
    return min(d, n - d)


def compare(dets, rec, nfft, cpis):
    """Matches detections to the truth: per-target results, false detections."""
    results = []
    for d in dets:
        d["target"] = None
    for t in rec.truth:
        if t["cpi"] not in cpis:
            continue
        rb, db = pd_sim.expected_bins(t, rec, nfft)
        hits = [d for d in dets if d["cpi"] == t["cpi"] and
                abs(d["range_bin"] - rb) <= MATCH_BINS and
                doppler_distance(d["doppler_bin"], db, nfft) <= MATCH_BINS]
        for d in hits:
            d["target"] = t["target"]
        best = max(hits, key=lambda d: d["power"]) if hits else None
        results.append(dict(t, expected_range_bin=rb, expected_doppler_bin=db,
                            detected=best is not None,
                            snr_db_measured=best["snr_db"] if best else None))
    false = [d for d in dets if d["target"] is None]
    return results, false


def draw_tracks(ax, scans):
    """Confirmed and coasting tracks of the last scan in `scans` as crosses labelled with
    their ids, and the path of each over the scans before."""
    if not scans:
        return
    paths = {}
    for s in scans:
        for t in s["tracks"]:
            if t["status"] != "tentative":
                paths.setdefault(t["id"], []).append((t["velocity_mps"], t["range_m"] / 1e3))
    shown = [t for t in scans[-1]["tracks"] if t["status"] != "tentative"]
    for t in shown:
        p = np.array(paths[t["id"]])
        ax.plot(p[:, 0], p[:, 1], "-", color="cyan", linewidth=1.0)
        ax.annotate(str(t["id"]), (t["velocity_mps"], t["range_m"] / 1e3),
                    textcoords="offset points", xytext=(7, 5), color="cyan", fontsize=8)
    if shown:
        ax.scatter([t["velocity_mps"] for t in shown], [t["range_m"] / 1e3 for t in shown],
                   marker="x", s=60, color="cyan", linewidths=1.4,
                   label=f"tracks ({len(shown)}; path so far)")


def write_png(path, power, rec, nfft, dets, truth, size, dynamic_range, title, scans=()):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise AppError("matplotlib is not installed (Debian: python3-matplotlib); "
                       "use --no-png") from None
    floor = float(np.median(power[power > 0])) if np.any(power > 0) else 1.0
    # The same geometry as the range_doppler_sink display (display_geometry).
    shown, group = display_geometry.max_pool_rows(power, MAX_PLOT_ROWS)
    db = 10 * np.log10(np.maximum(shown / floor, 1e-3))
    top = float(np.ceil(db.max())) if db.size else dynamic_range
    vmax = min(dynamic_range, max(MIN_PLOT_DB, top))
    axes = display_geometry.MapAxes.of(rec.fs, rec.prf, rec.fc, power.shape[0], nfft, rec.r0)
    left, right, bottom, top_m = axes.extent(shown.shape[0], group)
    extent = [left, right, bottom / 1e3, top_m / 1e3]
    dpi = 100
    fig, ax = plt.subplots(figsize=(size[0] / dpi, size[1] / dpi), dpi=dpi)
    im = ax.imshow(db, origin="lower", extent=extent, aspect="auto", cmap="viridis",
                   vmin=0, vmax=vmax, interpolation="nearest")
    # Hollow markers, so the target's own cells stay visible inside them.
    if truth:
        ax.scatter([t["velocity_mps"] for t in truth], [t["range_m"] / 1e3 for t in truth],
                   marker="s", s=260, facecolors="none", edgecolors="tab:orange", linewidths=1.2,
                   label="truth (expected position)")
    if dets:
        ax.scatter([d.get("velocity_mps", np.nan) for d in dets],
                   [d.get("range_m", np.nan) / 1e3 for d in dets], s=130,
                   facecolors="none", edgecolors="tab:red", linewidths=1.4,
                   label=f"CFAR detections ({len(dets)})")
    draw_tracks(ax, list(scans))
    if truth or dets or scans:
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.1), ncol=3, fontsize=9,
                  frameon=False)
    ax.set_xlabel("radial velocity, m/s (closing positive)")
    ax.set_ylabel("range, km")
    ax.set_title(title, fontsize=10)
    fig.colorbar(im, ax=ax, label="power, dB above the noise floor (median)")
    fig.tight_layout()
    fig.savefig(path, dpi=dpi)  # no bbox_inches: the file is exactly size[0] x size[1]
    plt.close(fig)


def write_csv(path, dets):
    cols = ["cpi", "range_bin", "doppler_bin", "range_m", "velocity_mps", "power",
            "threshold", "snr_db", "cluster_size", "target"]
    with open(path, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(cols)
        for d in dets:
            w.writerow(["" if d.get(c) is None else d.get(c) for c in cols])


def write_tracks_csv(path, scans):
    cols = ["cpi", "time_s", "id", "status", "range_m", "velocity_mps", "range_sigma_m",
            "velocity_sigma_mps", "hits", "misses"]
    with open(path, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(cols)
        for s in scans:
            for t in s["tracks"]:
                cov = t["covariance"]
                w.writerow([s["cpi"], t["time_s"], t["id"], t["status"], t["range_m"],
                            t["velocity_mps"], math.sqrt(cov[0]), math.sqrt(cov[3]),
                            t["hits"], t["misses"]])


def plain(x):
    """JSON-safe copy (tuples as lists, NaN/Inf as None)."""
    if isinstance(x, dict):
        return {str(k): plain(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [plain(v) for v in x]
    if isinstance(x, float) and not math.isfinite(x):
        return None
    if isinstance(x, (np.floating, np.integer)):
        return plain(x.item())
    return x


def warn_partial_cpi(rec):
    """Says so when the data go on past the last whole CPI: those samples are not
    processed (a recording cut short, or one whose size the metadata does not state)."""
    end = rec.pulse_start(rec.ncpi * rec.npulses)
    tail = rec.nsamples - end
    if tail <= 0:
        return
    pulses = 0  # whole pulses (range gates inside the data) among them
    while (rec.pulse_start(rec.ncpi * rec.npulses + pulses) + rec.gate_start + rec.nrange
           <= rec.nsamples):
        pulses += 1
    print(f"{PROG}: warning: {rec.data_path}: {tail} samples after the last whole CPI "
          f"({pulses} pulses, {pulses / rec.npulses:.2f} of a CPI of {rec.npulses}) are "
          f"not processed", file=sys.stderr)


def run(args, tmpdir):
    size = png_size(args.png_size)
    pair(args.guard, "guard")
    pair(args.train, "train")
    m, n = pair(args.track_confirm, "track-confirm", 1, "M,N")
    if m > n or n > 32:
        raise AppError(f"--track-confirm: need M <= N <= 32 (got {args.track_confirm!r})")
    args.output = app_util.output_prefix(args.output, "gpuradar_process")
    if args.input:
        rec = pd_sim.read(args.input, overrides(args),
                          datatypes=tuple(sigmf_io.SAMPLE_FORMATS))
        source = rec.base
    elif overrides(args):
        raise AppError(f"{', '.join(o for o, _ in overrides(args).values())}: recording "
                       f"parameters need --input (the simulated scenario has its own)")
    else:
        sc = pd_sim.scenario("default")
        base = os.path.join(tmpdir, "gpuradar_pd")
        print(f"{PROG}: no --input: simulating gpuradar-sim's default scenario")
        pd_sim.simulate(sc, base, lambda tb, head, total: app_util.run_with_progress(
            tb, lambda: head.nitems_written(0), total, "simulating",
            enabled=False if args.quiet else None))
        rec = pd_sim.read(base)
        source = "simulated default scenario"
    ncpi = rec.ncpi
    warn_partial_cpi(rec)
    plot_cpi = args.plot_cpi if args.plot_cpi >= 0 else ncpi + args.plot_cpi
    if not 0 <= plot_cpi < ncpi:
        raise AppError(f"--plot-cpi: {args.plot_cpi} outside the recording's {ncpi} CPIs")

    with app_util.StagedOutputs() as out:
        # Reserve the outputs first: a bad --output fails before the work.
        tmp_json = out.path(args.output + ".json")
        tmp_csv = out.path(args.output + ".csv")
        tmp_tracks = out.path(args.output + ".tracks.csv")
        tmp_png = None if args.no_png else out.path(args.output + ".png")

        nfft = args.nfft or rec.npulses
        dets, metas, scans, (framer, pdp, cfar, trk), elapsed = process(rec, args, nfft)
        cpis = sorted(int(m["cpi"]) for m in metas)
        if framer.emitted_cpis() != ncpi or len(cpis) != ncpi:
            raise AppError(f"{rec.data_path}: {ncpi} CPIs expected, the framer emitted "
                           f"{framer.emitted_cpis()} and the CFAR reported {len(cpis)} "
                           f"(dropped: framer {framer.dropped_cpis()}, chain "
                           f"{pdp.dropped_cpis()}, CFAR {cfar.dropped_cpis()})")
        for d in dets:
            d["cluster_size"] = d["cells"]
        raw = sum(int(m["cells"]) for m in metas)  # local maxima before merging
        results, false = compare(dets, rec, nfft, set(cpis)) if rec.has_truth \
            else ([], [])
        overflow = sum(1 for m in metas if m.get("overflow"))
        nonfinite = nonfinite_report(metas, framer)
        nsamp = ncpi and rec.pulse_start(ncpi * rec.npulses)
        sps = rec.nsamples / elapsed if elapsed > 0 else float("inf")
        backend = {"pulse_doppler_processor": pdp.backend(), "cfar_2d": cfar.backend()}

        report = {
            "recording": source, "backend": backend,
            "parameters": {
                "fs": rec.fs, "fc": rec.fc, "prf": rec.prf, "pri_samples": rec.pri_samples,
                "gate_start": rec.gate_start, "nrange": rec.nrange, "npulses": rec.npulses,
                "nfft": nfft, "r0": rec.r0, "range_bin_m": rec.range_bin_m,
                "waveform": {k: v for k, v in rec.waveform.items() if k != "samples"},
                "range_window": args.range_window, "doppler_window": args.doppler_window,
                "mti": args.mti, "cfar": args.cfar, "pfa": args.pfa,
                "guard": list(pair(args.guard, "guard")),
                "train": list(pair(args.train, "train")), "alpha": cfar.alpha(),
                "training_cells": cfar.training_cells(), "match_bins": MATCH_BINS},
            "cpis": ncpi, "samples": rec.nsamples, "samples_in_cpis": nsamp,
            "elapsed_s": elapsed, "throughput_sps": sps,
            "raw_detections": raw, "overflowed_cpis": overflow,
            "nonfinite_samples": nonfinite,
            "detections": dets,
            "tracker": {"confirm": list(pair(args.track_confirm, "track-confirm", 1, "M,N")),
                        "scans": trk.scans(), "bad_messages": trk.bad_messages()},
            "tracks": scans,
        }
        if rec.has_truth:
            report["truth"] = {
                "targets": results,
                "detected": sum(r["detected"] for r in results),
                "missed": sum(not r["detected"] for r in results),
                "false": len(false),
                # What the design Pfa predicts over every cell of every CPI (an upper
                # bound: only local maxima are reported).
                "false_expected": args.pfa * ncpi * rec.nrange * nfft,
            }
        with naming_write_errors(tmp_json), open(tmp_json, "w") as f:
            f.write(json.dumps(plain(report), indent=1, allow_nan=False))
        with naming_write_errors(tmp_csv):
            write_csv(tmp_csv, dets)
        with naming_write_errors(tmp_tracks):
            write_tracks_csv(tmp_tracks, scans)
        if tmp_png:
            power = power_map(rec, args, nfft, plot_cpi)
            if power is None:
                raise AppError(f"{rec.data_path}: CPI {plot_cpi} did not come out of the "
                               f"chain: no map to plot")
            title = (f"{PROG}: {os.path.basename(rec.base)}, CPI {plot_cpi} of {ncpi}, "
                     f"{rec.npulses} pulses, backend {pdp.backend()}")
            with naming_write_errors(tmp_png):
                write_png(tmp_png, power, rec, nfft,
                          [d for d in dets if d["cpi"] == plot_cpi],
                          [r for r in results if r["cpi"] == plot_cpi], size,
                          args.dynamic_range, title,
                          [s for s in scans if s["cpi"] is not None and
                           s["cpi"] <= plot_cpi])
            if app_util.png_size(tmp_png) != size:
                raise AppError(f"{args.output}.png: came out {app_util.png_size(tmp_png)} "
                               f"px, not {size}")
        out.commit()

    print(f"{PROG}: {source}: {ncpi} CPIs x {rec.npulses} pulses x {rec.nrange} range "
          f"bins (fs {rec.fs / 1e6:g} MHz, PRF {rec.prf:g} Hz, fc {rec.fc / 1e9:g} GHz)")
    # Why auto chose the CPU is logged once by the blocks; --backend cpu asked for it.
    print(f"  backend: {pdp.backend()} (pulse_doppler_processor), {cfar.backend()} (cfar_2d)")
    print(f"  throughput: {sps / 1e6:.2f} Msamples/s ({rec.nsamples} samples in "
          f"{elapsed:.3f} s, flowgraph wall time including the file read)")
    print(f"  CFAR {args.cfar.upper()} Pfa {args.pfa:g}: {raw} local maxima -> "
          f"{len(dets)} detections" + (f"; {overflow} CPIs overflowed" if overflow else ""))
    final = scans[-1]["tracks"] if scans else []
    print(f"  tracker: {len(scans)} CPIs, {len({t['id'] for s in scans for t in s['tracks']})}"
          f" tracks started, at the end "
          f"{sum(t['status'] != 'tentative' for t in final)} confirmed or coasting"
          + (f"; {trk.bad_messages()} messages skipped" if trk.bad_messages() else ""))
    if nonfinite["total"]:
        bad = [(c, n) for c, n in enumerate(nonfinite["per_cpi"]) if n]
        print(f"  non-finite samples (NaN/Inf, processed as 0): {nonfinite['total']} in "
              f"{len(bad)} of {ncpi} CPIs ("
              + ", ".join(f"CPI {c}: {n}" for c, n in bad) + ")")
    if rec.has_truth:
        print("  target  range (m)  velocity (m/s)  SNR (dB/sample)  expected bins  "
              "detected in")
        by_target = {}
        for r in results:
            by_target.setdefault(r["target"], []).append(r)
        for t, rs in sorted(by_target.items()):
            first = rs[0]
            n = sum(r["detected"] for r in rs)
            print(f"  {t:<6}  {first['range_m']:9.1f}  {first['velocity_mps']:+14.2f}  "
                  f"{first['snr_db']:+15.1f}  ({first['expected_range_bin']:>4}, "
                  f"{first['expected_doppler_bin']:>3})    {n}/{len(rs)} CPIs"
                  f"{'' if n == len(rs) else '  MISSED in ' + str(len(rs) - n)}")
        print(f"  truth: {report['truth']['detected']} detected, {report['truth']['missed']} "
              f"missed, {report['truth']['false']} false (target x CPI; within "
              f"+-{MATCH_BINS} bin; Pfa x cells = "
              f"{report['truth']['false_expected']:.2g} false)")
    else:
        print("  no truth in the recording: no comparison")
    print(f"  wrote {args.output}.json, {args.output}.csv, {args.output}.tracks.csv"
          + ("" if args.no_png else f", {args.output}.png ({size[0]} x {size[1]} px)"))
    if args.check and rec.has_truth and report["truth"]["missed"]:
        print(f"{PROG}: --check: {report['truth']['missed']} target x CPI missed",
              file=sys.stderr)
        return 1
    return 0


def main(argv=None):
    args = parse_args(argv)
    # The blocks log every CPI at debug level; a user wants warnings (dropped CPIs, ...).
    gr.logging().set_default_level(gr.log_levels.debug if args.verbose
                                   else gr.log_levels.info)

    def body():
        with tempfile.TemporaryDirectory(prefix="gpuradar-process-") as tmp:
            return run(args, tmp)

    return app_util.run_app(PROG, body, (pd_sim.RecordingError,))


if __name__ == "__main__":
    sys.exit(app_util.main_guard(main))
