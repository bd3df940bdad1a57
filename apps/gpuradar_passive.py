#!/usr/bin/env python3
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""gpuradar-passive: a passive radar's bistatic map, detections and tracks from a
recording of coherent channels.

A GNU Radio flowgraph reads the recording (SigMF cf32_le, core:num_channels channels
interleaved sample by sample: a reference channel pointed at the broadcast transmitter
and one or more surveillance channels; gpuradar-sim passive writes one) and runs

  file_source -> reference + one surveillance channel -> clutter_cancel (ECA-B:
  direct path and clutter) -> cross_ambiguity -> cfar_2d -> tracker
                                                   |            |
                                              detections      tracks

on the GPU (CUDA) when one is present, else on the CPU, one map every --cpi samples.
With --beam AZIMUTH every surveillance channel goes through the beamformer first, one
beam steered there (the array: the recording's scene, else a line array of
--element-spacing wavelengths), and that beam is the surveillance stream.
Without --input the app first simulates a small DVB-T-like scene (three targets,
direct path and clutter) into a temporary directory.

Writes <output>.json (parameters, backends, the cancellation per CPI, every detection,
the tracks of every CPI and, when the recording holds the truth, the comparison),
<output>.csv (one detection a line: CPI, bistatic range m, bistatic velocity m/s, SNR),
<output>.tracks.csv and <output>.png (one CPI's map in dB: bistatic range in km up,
bistatic velocity in m/s right, detections circled, truth squared). A target counts as
detected in a CPI when a detection lies within +-1 range bin (c / fs) and +-1 Doppler
bin (fs / CPI x c / fc) of it; every other detection is a false one. The direct path and
the clutter are cancelled with the targets' echoes that do not move: a target at zero
bistatic velocity is cancelled too. Outputs are written under temporary names and
renamed when all are complete. Numbers take engineering notation (--cpi 64k).
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
import pmt
from gnuradio import blocks, gr
try:
    from gnuradio import gpuradar
except ImportError as error:  # gpuradar-env, beside the app, says what to set
    sys.exit(runpy.run_path(os.path.join(os.path.dirname(os.path.realpath(__file__)),
                                         "gpuradar-env"))["import_failure"](
        "gpuradar-passive", error))
from gnuradio.gpuradar import app_util, detections as gdet, passive_sim, sigmf_io
from gnuradio.gpuradar.app_util import AppError, number

PROG = "gpuradar-passive"
C = passive_sim.SPEED_OF_LIGHT
#: Detections within this many bins (range and Doppler) of a target count as it.
MATCH_BINS = 1
#: The default scene (no --input): passive_sim.default_scene(), 4 CPIs.
DEFAULT_CPI = passive_sim.DEFAULT_CPI


def pair(text, name, minimum=0, what="RANGE,DOPPLER"):
    try:
        a, b = (int(v) for v in text.split(","))
    except ValueError:
        raise AppError(f"--{name}: expected {what} as two integers (got {text!r})") from None
    if a < minimum or b < minimum:
        raise AppError(f"--{name}: each value must be >= {minimum} (got {text!r})")
    return a, b


def parse_args(argv):
    p = app_util.ArgumentParser(prog=PROG, description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    app_util.add_recording_args(p, "gpuradar_passive", "simulate a small DVB-T-like scene",
                                "<output>.json, .csv, .tracks.csv, .png")
    p.add_argument("--cpi", type=number(int, minimum=16, maximum=1 << 26),
                   default=DEFAULT_CPI, help="samples per CPI (default: %(default)s)")
    p.add_argument("--nrange", type=number(int, minimum=1, maximum=1 << 16), default=64,
                   help="bistatic range bins (lags of c / fs; default: %(default)s)")
    p.add_argument("--doppler-half", type=number(int, minimum=1, maximum=1 << 15),
                   default=24, help="Doppler bins each side of zero (default: %(default)s)")
    p.add_argument("--taps", type=number(int, minimum=0, maximum=1 << 12), default=16,
                   help="clutter_cancel's reference delays (samples; 0: no cancellation; "
                        "default: %(default)s)")
    p.add_argument("--batches", type=number(int, minimum=1, maximum=1 << 12), default=4,
                   help="ECA-B batches per CPI (default: %(default)s)")
    p.add_argument("--window", default="hann",
                   choices=["rectangular", "hann", "hamming", "blackman", "taylor", "kaiser"],
                   help="slow-time window of the cross-ambiguity (default: %(default)s)")
    p.add_argument("--pfa", type=number(above=0, maximum=0.5), default=1e-6,
                   help="CFAR design false-alarm probability (default: %(default)s)")
    p.add_argument("--guard", metavar="RANGE,DOPPLER", default="2,1",
                   help="CFAR guard cells (default: %(default)s)")
    p.add_argument("--train", metavar="RANGE,DOPPLER", default="6,2",
                   help="CFAR training cells (default: %(default)s)")
    p.add_argument("--track-confirm", metavar="M,N", default="2,3",
                   help="a track is confirmed after M detections in N CPIs "
                        "(default: %(default)s)")
    p.add_argument("--reference-channel", type=number(int, minimum=0),
                   help="channel index of the reference (default: the metadata's, or 0)")
    p.add_argument("--surveillance-channel", type=number(int, minimum=0),
                   help="channel index of the surveillance channel processed (default: "
                        "the metadata's first, or 1)")
    p.add_argument("--beam", type=number(minimum=-90, maximum=90), metavar="AZIMUTH_DEG",
                   help="beamform every surveillance channel into one beam steered at this "
                        "azimuth (deg from boresight, positive towards +x) before the "
                        "cancellation and the cross-ambiguity (default: no beamforming, "
                        "one surveillance channel)")
    p.add_argument("--element-spacing", type=number(above=0), metavar="WAVELENGTHS",
                   help="with --beam: the surveillance channels are a uniform line array "
                        "of this spacing (default: the recording's scene, else 0.5)")
    p.add_argument("--plot-cpi", type=number(int), default=-1,
                   help="CPI drawn in the PNG (negative: from the end; default: the last)")
    p.add_argument("--no-png", action="store_true", help="do not write the PNG")
    p.add_argument("--check", action="store_true",
                   help="exit 1 unless every truth target is detected in every CPI and "
                        "confirmed as a track, with no other detection or track")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress bar")
    return p.parse_args(argv)


class map_capture(gr.sync_block):
    """Keeps the cross-ambiguity map of one CPI (items [cpi*nrange, (cpi+1)*nrange))."""

    def __init__(self, ndoppler, nrange, cpi):
        gr.sync_block.__init__(self, name="map_capture", in_sig=[(np.float32, ndoppler)],
                               out_sig=None)
        self.lo, self.hi = cpi * nrange, (cpi + 1) * nrange
        self.map = np.zeros((nrange, ndoppler), np.float32)

    def work(self, input_items, output_items):
        x = input_items[0]
        n0 = self.nitems_read(0)
        a, b = max(n0, self.lo), min(n0 + len(x), self.hi)
        if a < b:
            self.map[a - self.lo:b - self.lo] = x[a - n0:b - n0]
        return len(x)


def open_recording(args, tmpdir):
    if args.input is None:
        base = os.path.join(tmpdir, "passive_scene")
        passive_sim.write_recording(base, passive_sim.default_scene(), 4 * DEFAULT_CPI)
        path = base
    else:
        path = args.input
    surv = None if args.surveillance_channel is None else [args.surveillance_channel]
    if args.beam is not None and surv is not None:
        raise AppError("--beam uses every surveillance channel: leave out "
                       "--surveillance-channel")
    return passive_sim.read_recording(path, args.reference_channel, surv)


def process(rec, args, ncpi, plot_cpi):
    n, m, khalf = args.cpi, args.nrange, args.doppler_half
    guard, train = pair(args.guard, "guard"), pair(args.train, "train")
    confirm = pair(args.track_confirm, "track-confirm", 1, "M,N")
    try:
        cancel = (gpuradar.clutter_cancel(n, args.taps, args.batches, "eca_b", 1,
                                          backend=args.backend) if args.taps else None)
        caf = gpuradar.cross_ambiguity(rec.fs, rec.fc, n, m, khalf, window=args.window,
                                       backend=args.backend)
        cfar = gpuradar.cfar_2d(m, 2 * khalf + 1, 1, guard[0], train[0], guard[1], train[1],
                                args.pfa, "ca", 0, "clip", "wrap", True, 4096, args.backend,
                                cluster=True)
    except ValueError as e:  # the blocks' checks name the parameter
        raise AppError(f"cannot process {rec.meta_path} with these parameters: {e}") \
            from None
    except RuntimeError as e:  # e.g. --backend cuda without a GPU
        raise AppError(f"--backend {args.backend}: {e}") from None
    try:
        trk = gpuradar.tracker(9.21, confirm[0], confirm[1], 3, 0.5 * C / rec.fs,
                               0.5 * rec.fs / n * C / rec.fc, 50.0, n / rec.fs)
    except ValueError as e:
        raise AppError(f"--track-confirm: {e}") from None
    tb = gr.top_block(PROG)
    src = blocks.file_source(gr.sizeof_gr_complex * rec.nchannels, rec.data_path, False)
    head = blocks.head(gr.sizeof_gr_complex * rec.nchannels, ncpi * n)
    split = blocks.vector_to_streams(gr.sizeof_gr_complex, rec.nchannels)
    tb.connect(src, head, split)
    # (block, port) of the reference and of the surveillance stream processed
    ref, surv = (split, rec.reference), (split, rec.surveillance[0])
    used = {rec.reference, rec.surveillance[0]}
    if args.beam is not None:
        surv = beam_stream(tb, split, rec, args, n)
        used |= set(rec.surveillance)
    for c in range(rec.nchannels):
        if c not in used:
            tb.connect((split, c), blocks.null_sink(gr.sizeof_gr_complex))
    for port, (block, out) in enumerate((ref, surv)):
        if cancel is not None:
            tb.connect((block, out), (cancel, port), (caf, port))
        else:
            tb.connect((block, out), (caf, port))
    capture = map_capture(2 * khalf + 1, m, plot_cpi)
    tb.connect(caf, capture)
    tb.connect(caf, cfar, blocks.null_sink(gr.sizeof_char * (2 * khalf + 1)))
    dets, tracks = blocks.message_debug(), blocks.message_debug()
    reports = blocks.message_debug()
    tb.msg_connect(cfar, "detections", dets, "store")
    tb.msg_connect(cfar, "detections", trk, "detections")
    tb.msg_connect(trk, "tracks", tracks, "store")
    if cancel is not None:
        tb.msg_connect(cancel, "cancellation", reports, "store")
    elapsed = app_util.run_with_progress(tb, lambda: head.nitems_written(0), ncpi * n,
                                         f"processing ({caf.backend()})",
                                         enabled=False if args.quiet else None)
    deadline = time.monotonic() + 10.0  # the tracker may still handle the last PDUs
    while trk.scans() + trk.bad_messages() < dets.num_messages() and \
            time.monotonic() < deadline:
        time.sleep(0.01)
    found, metas = [], []
    for i in range(dets.num_messages()):
        meta, d = gdet.pdu_to_python(dets.get_message(i))
        metas.append(meta)
        found.extend(d)
    scans = []
    for i in range(tracks.num_messages()):
        meta, t = gdet.pdu_to_python(tracks.get_message(i))
        scans.append(dict(cpi=meta.get("cpi"), time_s=meta["time_s"], tracks=t))
    cancellation = [plain(pmt.to_python(reports.get_message(i)))
                    for i in range(reports.num_messages())]
    backends = {"cross_ambiguity": caf.backend(), "cfar_2d": cfar.backend()}
    if cancel is not None:
        backends["clutter_cancel"] = cancel.backend()
    return found, metas, scans, cancellation, capture.map, backends, elapsed


def array_geometry(rec, args):
    """(element_spacing_wl, element_positions_m) of the surveillance array: the
    recording's scene (gpuradar-sim passive), else a ULA of --element-spacing."""
    scene = rec.scene or {}
    positions = scene.get("element_positions_m") or []
    if args.element_spacing is not None or not positions:
        spacing = args.element_spacing if args.element_spacing is not None else \
            float(scene.get("element_spacing_wl", 0.5))
        return spacing, []
    return 0.5, [float(v) for v in positions]


def beam_stream(tb, split, rec, args, n):
    """Every surveillance channel -> one beam steered at --beam degrees (the module's
    beamformer, uniform taper) -> a stream: the surveillance stream for the cancellation
    and the cross-ambiguity."""
    nsurv = len(rec.surveillance)
    chunk = math.gcd(n, 4096)  # items of whole CPIs: none is cut at the end
    spacing, positions = array_geometry(rec, args)
    try:
        bf = gpuradar.beamformer(nsurv, chunk, [args.beam], 1, -45.0, 45.0, spacing,
                                 positions, rec.fc, "rectangular", backend=args.backend)
    except ValueError as e:
        raise AppError(f"--beam {args.beam:g}: {e}") from None
    join = blocks.streams_to_vector(gr.sizeof_gr_complex * chunk, nsurv)
    for k, c in enumerate(rec.surveillance):
        tb.connect((split, c), blocks.stream_to_vector(gr.sizeof_gr_complex, chunk),
                   (join, k))
    out = blocks.vector_to_stream(gr.sizeof_gr_complex, chunk)
    tb.connect(join, bf, out)
    return out, 0


def plain(x):
    """JSON-ready: numpy scalars and arrays to Python numbers and lists."""
    if isinstance(x, dict):
        return {str(k): plain(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [plain(v) for v in x]
    if isinstance(x, np.ndarray):
        return plain(x.tolist())
    if isinstance(x, np.generic):
        return x.item()
    if isinstance(x, float) and not math.isfinite(x):
        return None
    return x


def compare(found, scans, rec, ncpi, n):
    """Truth comparison: per target, the CPIs it was detected in; false detections; the
    last scan's confirmed tracks matched to targets."""
    dr, dv = C / rec.fs, rec.fs / n * C / rec.fc
    near = lambda d, t: (abs(d["range_m"] - t["bistatic_range_m"]) <= MATCH_BINS * dr and
                         abs(d["velocity_mps"] - t["velocity_mps"]) <= MATCH_BINS * dv)
    per_target, false = [], 0
    for i, t in enumerate(rec.truth):
        cpis = sorted({int(d["cpi"]) for d in found if near(d, t)})
        per_target.append(dict(target=i, bistatic_range_m=t["bistatic_range_m"],
                               velocity_mps=t["velocity_mps"], detected_cpis=cpis,
                               missed_cpis=ncpi - len(cpis)))
    false = sum(1 for d in found if not any(near(d, t) for t in rec.truth))
    last = scans[-1]["tracks"] if scans else []
    confirmed = [t for t in last if t["status"] == "confirmed"]
    tracked = [any(near(c, t) for c in confirmed) for t in rec.truth]
    other = sum(1 for c in confirmed if not any(near(c, t) for t in rec.truth))
    return dict(targets=per_target, false_detections=false,
                detected=sum(1 for p in per_target if p["missed_cpis"] == 0),
                missed=sum(1 for p in per_target if p["missed_cpis"]),
                tracked=sum(tracked), other_tracks=other)


def write_png(path, power, rec, n, khalf, dets, title):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    db = 10 * np.log10(np.maximum(power, 1e-30))
    floor = float(np.median(db))
    dr, dv = C / rec.fs, rec.fs / n * C / rec.fc
    m = power.shape[0]
    extent = (-(khalf + 0.5) * dv, (khalf + 0.5) * dv, -0.5 * dr / 1e3, (m - 0.5) * dr / 1e3)
    fig, ax = plt.subplots(figsize=(9.6, 6.4), dpi=100)
    im = ax.imshow(db, origin="lower", aspect="auto", extent=extent, cmap="viridis",
                   vmin=floor, vmax=max(floor + 10.0, float(db.max())))
    fig.colorbar(im, ax=ax, label="dB")
    if dets:
        ax.scatter([d["velocity_mps"] for d in dets], [d["range_m"] / 1e3 for d in dets],
                   s=120, facecolors="none", edgecolors="red", label="detections")
    if rec.truth:
        ax.scatter([t["velocity_mps"] for t in rec.truth],
                   [t["bistatic_range_m"] / 1e3 for t in rec.truth], s=220, marker="s",
                   facecolors="none", edgecolors="orange", label="truth")
    if dets or rec.truth:
        ax.legend(loc="upper right")
    ax.set_xlabel("bistatic velocity (m/s, closing +)")
    ax.set_ylabel("bistatic range (km)")
    ax.set_title(title)
    with sigmf_io.naming_write_errors(path):
        fig.savefig(path, format="png")
    plt.close(fig)


def run(args, tmpdir):
    rec = open_recording(args, tmpdir)
    n = args.cpi
    ncpi = rec.nsamples // n
    if ncpi < 1:
        raise AppError(f"--cpi {n}: the recording holds {rec.nsamples} samples per "
                       f"channel, less than one CPI")
    plot_cpi = args.plot_cpi if args.plot_cpi >= 0 else ncpi + args.plot_cpi
    if not 0 <= plot_cpi < ncpi:
        raise AppError(f"--plot-cpi {args.plot_cpi}: the recording holds {ncpi} CPIs")
    output = app_util.output_prefix(args.output, "gpuradar_passive")
    found, metas, scans, cancellation, power, backends, elapsed = process(rec, args, ncpi,
                                                                          plot_cpi)
    truth = compare(found, scans, rec, ncpi, n) if rec.truth else None
    report = dict(recording=rec.meta_path, fs=rec.fs, fc=rec.fc, cpi_samples=n, cpis=ncpi,
                  reference_channel=rec.reference,
                  surveillance_channel=rec.surveillance[0] if args.beam is None else None,
                  surveillance_channels=rec.surveillance if args.beam is not None else
                  [rec.surveillance[0]], beam_deg=args.beam, nrange=args.nrange,
                  doppler_half=args.doppler_half, taps=args.taps, batches=args.batches,
                  window=args.window, pfa=args.pfa, backend=backends,
                  seconds=elapsed, samples_per_second=ncpi * n / max(elapsed, 1e-9),
                  range_bin_m=C / rec.fs, velocity_bin_mps=rec.fs / n * C / rec.fc,
                  cancellation=cancellation, detections=found, tracks=scans, truth=truth)
    with app_util.StagedOutputs() as out:
        with sigmf_io.naming_write_errors(output + ".json"), \
                open(out.path(output + ".json"), "w") as f:
            json.dump(plain(report), f, indent=1, allow_nan=False)
        with sigmf_io.naming_write_errors(output + ".csv"), \
                open(out.path(output + ".csv"), "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["cpi", "bistatic_range_m", "bistatic_velocity_mps", "snr_db",
                        "range_bin", "doppler_bin"])
            for d in found:
                w.writerow([d["cpi"], f"{d['range_m']:.3f}", f"{d['velocity_mps']:.4f}",
                            f"{d['snr_db']:.2f}", d["range_bin"], d["doppler_bin"]])
        with sigmf_io.naming_write_errors(output + ".tracks.csv"), \
                open(out.path(output + ".tracks.csv"), "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["cpi", "time_s", "id", "status", "bistatic_range_m",
                        "bistatic_velocity_mps"])
            for s in scans:
                for t in s["tracks"]:
                    w.writerow([s["cpi"], f"{s['time_s']:.6f}", t["id"], t["status"],
                                f"{t['range_m']:.3f}", f"{t['velocity_mps']:.4f}"])
        if not args.no_png:
            write_png(out.path(output + ".png"), power, rec, n, args.doppler_half,
                      [d for d in found if d["cpi"] == plot_cpi],
                      f"{os.path.basename(rec.base)}: CPI {plot_cpi} of {ncpi}")
        out.commit()
    confirmed = [t for t in (scans[-1]["tracks"] if scans else [])
                 if t["status"] == "confirmed"]
    print(f"{PROG}: {ncpi} CPIs of {n} samples ({backends['cross_ambiguity']}): "
          f"{len(found)} detections, {len(confirmed)} confirmed tracks at the end; wrote "
          f"{output}.json, .csv, .tracks.csv" + ("" if args.no_png else ", .png"))
    for c in cancellation:
        db = c.get("cancellation_db")
        if db is not None:
            print(f"  CPI {c.get('cpi')}: cancellation {np.round(db, 1).tolist()} dB")
            break
    if truth is not None:
        print(f"  truth: {truth['detected']} of {len(rec.truth)} targets detected in every "
              f"CPI, {truth['tracked']} tracked, {truth['false_detections']} false "
              f"detections, {truth['other_tracks']} other tracks")
        if args.check and (truth["missed"] or truth["false_detections"] or
                           truth["tracked"] != len(rec.truth) or truth["other_tracks"]):
            print(f"{PROG}: check failed", file=sys.stderr)
            return 1
    elif args.check:
        raise AppError(f"--check: {rec.meta_path} holds no truth annotations")
    return 0


def main(argv=None):
    args = parse_args(argv)

    def body():
        with tempfile.TemporaryDirectory(prefix="gpuradar-passive-") as tmp:
            return run(args, tmp)

    return app_util.run_app(PROG, body, (sigmf_io.RecordingError,))


if __name__ == "__main__":
    sys.exit(app_util.main_guard(main))
