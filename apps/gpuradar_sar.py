#!/usr/bin/env python3
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""gpuradar-sar: form a SAR image from a range-compressed phase-history recording.

The image is formed by a GNU Radio flowgraph: two file sources (the pulses of
<base>.sigmf-data and the per-pulse geometry of <base>.geometry.f64, see
gnuradio.gpuradar.sar_sim for the format) feed the GPU Radar backprojection block
(CUDA when a GPU is present, else the CPU). Without --input the app simulates its
embedded default scenario first: an X-band spotlight (10 GHz, 300 MHz, 0.5 m range
resolution) from 2 km stand-off at 500 m altitude, three point targets in a 40 m scene.

Writes <output>.npy (the complex image, complex64, shape (ny, nx), or
(nimages, ny, nx) when several images were formed) and <output>.png (|image| in dB,
axes in metres, truth marked), and prints for each truth target where it focused, its
level and its -3 dB widths.
"""

import argparse
import math
import os
import sys
import tempfile
import time

import numpy as np
from gnuradio import blocks, gr
from gnuradio import gpuradar
from gnuradio.gpuradar import app_util, sar_sim


def parse_args(argv):
    p = argparse.ArgumentParser(prog="gpuradar-sar", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--input", "-i", metavar="RECORDING",
                   help="recording to image (<base>, <base>.sigmf-meta or .sigmf-data); "
                        "default: simulate the embedded scenario")
    p.add_argument("--output", "-o", default="gpuradar_sar",
                   help="output prefix: <output>.npy and <output>.png (default: %(default)s)")
    p.add_argument("--backend", default="auto", choices=["auto", "cuda", "cpu"])
    p.add_argument("--precision", default="fast", choices=["fast", "accurate"],
                   help="fast: float32 (airborne); accurate: double range and phase "
                        "(spaceborne)")
    p.add_argument("--mode", default="restart", choices=["restart", "accumulate"])
    p.add_argument("--pulses-per-image", type=int, default=0,
                   help="pulses per image (default: all pulses, one image)")
    p.add_argument("--grid", metavar="X0,Y0,DX,DY,NX,NY[,Z]",
                   help="image grid (m, m, m, m, px, px, m); default: the recording's")
    p.add_argument("--no-png", action="store_true", help="do not write the PNG")
    p.add_argument("--dynamic-range", type=float, default=50.0,
                   help="PNG dB range below the peak (default: %(default)s)")
    p.add_argument("--check", action="store_true",
                   help="exit with status 1 unless every truth target focuses within 1 "
                        "pixel of its true position")
    s = p.add_argument_group("simulation (without --input)")
    app_util.add_sar_scenario_args(s)
    s.add_argument("--save-recording", metavar="BASE",
                   help="keep the simulated recording as BASE.sigmf-meta/-data/.geometry.f64")
    return p.parse_args(argv)


def parse_grid(text, z_default):
    v = [float(t) for t in text.split(",")]
    if len(v) not in (6, 7):
        raise ValueError("--grid: expected X0,Y0,DX,DY,NX,NY[,Z]")
    return sar_sim.Grid(v[0], v[1], v[2], v[3], int(v[4]), int(v[5]),
                        v[6] if len(v) == 7 else z_default)


def form_images(rec, grid, args):
    """The flowgraph: file sources -> backprojection -> vector sink."""
    ppi = args.pulses_per_image or rec.npulses
    tb = gr.top_block()
    src = blocks.file_source(gr.sizeof_gr_complex * rec.nbins, rec.data_path)
    geo = blocks.file_source(gr.sizeof_double * sar_sim.GEOMETRY_LENGTH, rec.geometry_path)
    bp = gpuradar.backprojection(rec.nbins, grid.nx, grid.ny, grid.x0, grid.y0, grid.dx,
                                 grid.dy, grid.z, ppi, args.mode, args.precision, [],
                                 args.backend)
    snk = blocks.vector_sink_c(grid.nx)
    tb.connect(src, (bp, 0))
    tb.connect(geo, (bp, 1))
    tb.connect(bp, snk)
    t0 = time.perf_counter()
    tb.run()
    elapsed = time.perf_counter() - t0
    images = np.array(snk.data(), np.complex64).reshape(-1, grid.ny, grid.nx)
    return images, bp, elapsed


def write_png(path, image, grid, targets, dynamic_range, title):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("gpuradar-sar: matplotlib not installed (python3-matplotlib): no PNG",
              file=sys.stderr)
        return False
    mag = np.abs(image)
    top = mag.max() if mag.max() > 0 else 1.0
    db = 20 * np.log10(np.maximum(mag / top, 10 ** (-dynamic_range / 20)))
    fig, ax = plt.subplots(figsize=(7, 6))
    extent = [grid.x0 - grid.dx / 2, grid.x0 + (grid.nx - 0.5) * grid.dx,
              grid.y0 - grid.dy / 2, grid.y0 + (grid.ny - 0.5) * grid.dy]
    im = ax.imshow(db, origin="lower", extent=extent, cmap="gray", vmin=-dynamic_range,
                   vmax=0, interpolation="nearest", aspect="equal")
    if targets:
        ax.scatter([t.position[0] for t in targets], [t.position[1] for t in targets],
                   s=80, facecolors="none", edgecolors="tab:red", linewidths=1,
                   label="truth")
        ax.legend(loc="upper right")
    ax.set_xlabel("x (east), m")
    ax.set_ylabel("y (north), m")
    ax.set_title(title)
    fig.colorbar(im, ax=ax, label="|image|, dB re peak")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def main(argv=None):
    args = parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        if args.input:
            rec = sar_sim.read(args.input)
            source = rec.base
        else:
            history = app_util.sar_scenario(args)
            base = args.save_recording or os.path.join(tmp, "scenario")
            rec = sar_sim.read(sar_sim.write(base, history))
            source = f"simulated {args.scenario} scenario" + (
                f" (saved as {base})" if args.save_recording else "")
        grid = parse_grid(args.grid, rec.grid.z) if args.grid else rec.grid
        images, bp, elapsed = form_images(rec, grid, args)

    if images.shape[0] == 0:
        print(f"gpuradar-sar: no image formed ({rec.npulses} pulses < pulses per image "
              f"{args.pulses_per_image})", file=sys.stderr)
        return 1
    out = images[0] if images.shape[0] == 1 else images
    np.save(args.output + ".npy", out)
    last = images[-1]
    bps = float(grid.nx) * grid.ny * (images.shape[0] * (args.pulses_per_image or rec.npulses))
    print(f"gpuradar-sar: {source}: {rec.npulses} pulses x {rec.nbins} bins, "
          f"f0 {rec.field('f0', float('nan')) / 1e9:.3f} GHz")
    print(f"  image {grid.nx} x {grid.ny} px of {grid.dx:.4g} x {grid.dy:.4g} m, "
          f"{images.shape[0]} image(s), backend {bp.backend()}, {bp.precision()}, "
          f"{bp.mode()}: {elapsed:.3f} s flowgraph ({bps / elapsed / 1e9:.3f} Gbp/s "
          f"incl. file I/O), {bp.skipped_pulses()} pulses skipped")
    print(f"  wrote {args.output}.npy", end="")
    if not args.no_png:
        title = (f"gpuradar-sar: {os.path.basename(rec.base)} ({bp.backend()}, "
                 f"{bp.precision()})")
        if write_png(args.output + ".png", last, grid, rec.targets, args.dynamic_range,
                     title):
            print(f" and {args.output}.png", end="")
    print()

    ok = True
    if rec.targets:
        print("  target  position (m)                 pixel      peak at    offset  level    "
              "-3 dB width x / y")
        for i, f in enumerate(sar_sim.focus(last, grid, rec.targets)):
            good = f.offset_px <= math.sqrt(2)
            ok = ok and good
            pos = ", ".join(f"{v:.2f}" for v in f.target.position)
            print(f"  {i:<6}  ({pos:<24}) {str(f.expected):<10} {str(f.peak):<10} "
                  f"{f.offset_px:4.1f} px {f.peak_db:6.1f} dB  "
                  f"{f.width_x_m:.3f} / {f.width_y_m:.3f} m  {'ok' if good else 'NOT FOCUSED'}")
    if args.check and not ok:
        print("gpuradar-sar: --check: a target did not focus within 1 pixel", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
