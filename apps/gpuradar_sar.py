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
Recordings may hold cf32_le samples, or ci16_le / ci8 integers as an SDR gives them (sc16 /
sc8: gpuradar-sim sar|stripmap --datatype), converted in the flowgraph with 1.0 = full
scale (int16 32768, int8 128): the image is then in full-scale units.

Writes <output>.npy (the complex image, complex64, shape (ny, nx), or
(nimages, ny, nx) when several images were formed) and <output>.png (|image| in dB,
axes in metres, truth marked), and prints for each truth target where it focused, its
level and its -3 dB widths. Outputs are written under temporary names and renamed when
all are complete; errors are one line naming the file and field (status 2).

A stripmap recording (raw echoes, gpuradar-sim stripmap) is focused with --algorithm csa
(the default for one: gpuradar.sar_focus, chirp scaling in overlapping azimuth blocks;
the image in zero-Doppler geometry, columns in slant range, rows along track) or
--algorithm bp (pulse_compression then backprojection onto a ground grid around the
targets and the distributed scene) or --algorithm both (the two images side by side in
one PNG, <output>-csa.npy and <output>-bp.npy). For each point target the app then prints
a focus report: the interpolated
peak's position error, the range and azimuth -3 dB impulse-response widths, PSLR and
ISLR, each beside its theory for the windows used (the azimuth theory includes the
antenna's two-way pattern over the processed Doppler band).

Products for other tools (see docs/APPS.md): --geotiff writes <output>.tif, the detected
image (dB or magnitude, float32) north up in a transverse Mercator projection centred on
--scene-center LAT,LON[,H] (the image's x/y metres are its easting/northing; GDAL:
python3-gdal); --sigmf writes the complex image as <output>.sigmf-data (cf32_le) +
<output>.sigmf-meta with its grid (gnuradio.gpuradar.sar_products.read_image reads it);
--looks RANGE,AZIMUTH averages the detected power over blocks of that many pixels for the
GeoTIFF and the PNG (pixel spacing times the looks; the .npy and SigMF images stay
single-look complex).

Autofocus (--autofocus pga|entropy, bp of a phase-history recording, one image): the
phase error of each pulse, e.g. from a measured track a few centimetres off the true one,
is estimated from the image's point-like targets (gnuradio.gpuradar.pulse_autofocus:
generalised phase-gradient autofocus, or minimum entropy by gradient descent; its sums
on --backend), removed from the range-compressed pulses and the pulses backprojected again; the app prints the
iterations and whether it converged, and writes the estimate to
<output>.phase_error.npy (rad per pulse, its line removed). Not converged (e.g. no
point-like content: noise, a flat scene) the image is kept as formed, and said so. A
stripmap recording (--algorithm csa, --autofocus pga) is autofocused through its raw
pulses (gnuradio.gpuradar.stripmap_autofocus: each target over its own aperture, its
sums on --backend, the estimates chained along the strip); pulses that no point-like
target sees get no correction (0 in the estimate) and the app says how many.

A recording whose metadata lacks gpuradar:npulses, gpuradar:nbins or
gpuradar:geometry_file takes them from --npulses, --nbins and --geometry. Numbers take
engineering notation (--f0 10G).
"""

import argparse
import math
import os
import runpy
import sys
import tempfile

import numpy as np
from gnuradio import blocks, gr
try:
    from gnuradio import gpuradar
except ImportError as error:  # gpuradar-env, beside the app, says what to set
    sys.exit(runpy.run_path(os.path.join(os.path.dirname(os.path.realpath(__file__)),
                                         "gpuradar-env"))["import_failure"](
        "gpuradar-sar", error))
from gnuradio.gpuradar import (app_util, display_geometry, pulse_autofocus, sar_products,
                               sar_sim, sigmf_io, stripmap_autofocus, stripmap_sim)
from gnuradio.gpuradar.app_util import AppError, number
from gnuradio.gpuradar.sigmf_io import naming_write_errors

PROG = "gpuradar-sar"
#: Most image memory (bytes) the app collects from the flowgraph (all images together).
MAX_IMAGE_BYTES = 1 << 31
WINDOWS = ["rectangular", "hamming", "hann", "blackman", "taylor", "kaiser", "chebyshev"]


def parse_args(argv):
    p = app_util.ArgumentParser(prog=PROG, description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--input", "-i", metavar="RECORDING",
                   help="recording to image (<base>, <base>.sigmf-meta or .sigmf-data); "
                        "default: simulate the embedded scenario")
    p.add_argument("--output", "-o", default="gpuradar_sar",
                   help="output prefix: <output>.npy and <output>.png; a directory: "
                        "<dir>/gpuradar_sar (default: %(default)s)")
    p.add_argument("--backend", default="auto", choices=["auto", "cuda", "cpu"])
    p.add_argument("--algorithm", choices=["csa", "bp", "both"],
                   help="csa (chirp scaling; stripmap recordings only, their default), "
                        "bp (backprojection; the default for phase-history recordings) or "
                        "both (stripmap: csa and bp of the same recording side by side)")
    p.add_argument("--naz", type=number(int, minimum=0, maximum=1 << 20), default=0,
                   help="csa: pulses per azimuth block (0: sar_focus picks)")
    p.add_argument("--range-window", default="rectangular", choices=WINDOWS,
                   help="stripmap: range window (csa and bp's pulse compression)")
    p.add_argument("--azimuth-window", default="rectangular", choices=WINDOWS,
                   help="csa: azimuth window")
    p.add_argument("--precision", default="fast", choices=["fast", "accurate"],
                   help="fast: float32 (airborne); accurate: double range and phase "
                        "(spaceborne)")
    p.add_argument("--mode", default="restart", choices=["restart", "accumulate"])
    p.add_argument("--pulses-per-image", type=number(int, minimum=0), default=0,
                   help="pulses per image; 0 (the default): all the recording's pulses, "
                        "one image")
    p.add_argument("--grid", metavar="X0,Y0,DX,DY,NX,NY[,Z]", type=parse_grid,
                   help="image grid (m, m, m, m, px, px, m); default: the recording's")
    p.add_argument("--no-png", action="store_true", help="do not write the PNG")
    p.add_argument("--dynamic-range", type=number(above=0, maximum=400), default=50.0,
                   help="PNG dB range below the peak (default: %(default)s)")
    p.add_argument("--autofocus", choices=pulse_autofocus.METHODS,
                   help="bp of a phase-history recording, or csa of a stripmap one (pga "
                        "only): estimate each pulse's phase "
                        "error from the image's point-like targets (pga: generalised "
                        "phase-gradient autofocus; entropy: minimum entropy by gradient), "
                        "remove it from the pulses and form the image again; the iterations "
                        "and convergence are reported, the estimate written to "
                        "<output>.phase_error.npy (rad per pulse); not converged: the "
                        "image kept as formed")
    p.add_argument("--autofocus-iterations", type=number(int, minimum=1, maximum=1000),
                   default=50, metavar="N",
                   help="most autofocus iterations, 1 to 1000 (default: %(default)s)")
    p.add_argument("--check", action="store_true",
                   help="exit with status 1 unless every truth target focuses within 1 "
                        "pixel of its true position")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress bar")
    g = p.add_argument_group("products for other tools")
    g.add_argument("--scene-center", "--scene-centre", metavar="LAT,LON[,H]",
                   type=parse_scene_centre,
                   help="WGS 84 latitude and longitude (degrees) and height above the "
                        "ellipsoid (m, default 0) of the image grid's origin x = y = 0; "
                        "the GeoTIFF's projection is centred there (a negative latitude: "
                        "--scene-center=-33.9,151.2)")
    g.add_argument("--geotiff", action="store_true",
                   help="write <output>.tif: the detected image, float32, north up, in a "
                        "transverse Mercator centred on --scene-center (needs it; "
                        "easting = x, northing = y; GDAL, Debian: python3-gdal)")
    g.add_argument("--geotiff-values", choices=sar_products.SCALES, default="db",
                   help="GeoTIFF pixel values: db, 10 log10 of the (multilooked) power "
                        f"|pixel|^2 ({sar_products.NODATA:g}, the band's no-data value, "
                        "where it is 0), or magnitude, its square root (default: "
                        "%(default)s)")
    g.add_argument("--sigmf", action="store_true",
                   help="also write the complex image as <output>.sigmf-data (cf32_le) + "
                        "<output>.sigmf-meta carrying its grid")
    g.add_argument("--looks", metavar="RANGE,AZIMUTH", type=parse_looks, default=(1, 1),
                   help="multilook the detected products (GeoTIFF, PNG): mean power over "
                        "RANGE x AZIMUTH pixels, pixel spacing multiplied by the looks "
                        "(default: 1,1, none)")
    r = p.add_argument_group(
        "recording parameters (with --input)",
        "for a recording whose metadata lacks them: --npulses and --nbins (below) replace "
        "the metadata's gpuradar:npulses and gpuradar:nbins")
    r.add_argument("--geometry", metavar="FILE",
                   help="per-pulse geometry file (npulses x 6 float64), instead of the "
                        "metadata's gpuradar:geometry_file")
    s = p.add_argument_group("simulation (without --input)")
    app_util.add_sar_scenario_args(s)
    s.add_argument("--save-recording", metavar="BASE",
                   help="keep the simulated recording as BASE.sigmf-meta/-data/.geometry.f64")
    return p.parse_args(argv)


def parse_grid(text):
    """X0,Y0,DX,DY,NX,NY[,Z] -> (x0, y0, dx, dy, nx, ny, z or None)."""
    parts = text.split(",")
    if len(parts) not in (6, 7):
        raise argparse.ArgumentTypeError(f"expected X0,Y0,DX,DY,NX,NY[,Z] (got {text!r})")
    try:
        x0, y0 = (number()(t) for t in parts[:2])
        dx, dy = (number(above=0)(t) for t in parts[2:4])
        nx, ny = (number(int, minimum=1)(t) for t in parts[4:6])
        z = number()(parts[6]) if len(parts) == 7 else None
    except argparse.ArgumentTypeError as e:
        raise argparse.ArgumentTypeError(f"{e} in {text!r} (X0,Y0,DX,DY,NX,NY[,Z])") \
            from None
    if nx * ny > sar_sim.MAX_GRID_PIXELS:
        raise argparse.ArgumentTypeError(f"NX x NY = {nx * ny} pixels, more than "
                                         f"{sar_sim.MAX_GRID_PIXELS}")
    return x0, y0, dx, dy, nx, ny, z


def parse_scene_centre(text):
    try:
        return sar_products.SceneCentre.parse(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def parse_looks(text):
    """RANGE,AZIMUTH -> (looks in range, looks in azimuth), whole numbers >= 1."""
    parts = text.split(",")
    if len(parts) != 2:
        raise argparse.ArgumentTypeError(f"expected RANGE,AZIMUTH looks (got {text!r})")
    try:
        return tuple(number(int, minimum=1)(t) for t in parts)
    except argparse.ArgumentTypeError as e:
        raise argparse.ArgumentTypeError(f"{e} in {text!r} (RANGE,AZIMUTH looks)") from None


def check_products(args, ground=True):
    """Refuses products that cannot be made, before anything runs."""
    if args.geotiff:
        if args.scene_center is None:
            raise AppError("--geotiff: needs --scene-center LAT,LON[,H], the geographic "
                           "position of the grid's origin")
        if not ground:
            raise AppError("--geotiff: the csa image is in slant range and zero-Doppler "
                           "geometry, not on the ground: use --algorithm bp (or both)")
        try:
            sar_products.require_gdal()
        except sar_products.GdalMissing as e:
            raise AppError(f"--geotiff: {e}") from None


def stage_products(out, output, images, grid, args, azimuth_axis, ground, x_axis, y_axis,
                   description):
    """Writes the products the options ask for into `out`; returns the detected image to
    draw and its grid (multilooked with --looks) and the names written."""
    last = images[-1] if images.ndim == 3 else images
    lx, ly = sar_products.looks_xy(*args.looks, azimuth_axis)
    try:
        power = sar_products.multilook(last, lx, ly, "--looks")
    except ValueError as e:
        raise AppError(f"{e} (range along {'y' if azimuth_axis == 'x' else 'x'}, "
                       f"azimuth along {azimuth_axis})") from None
    ml_grid = sar_products.multilook_grid(grid, lx, ly)
    written = []
    if args.sigmf:
        data = out.path(output + sar_sim.DATA_SUFFIX)
        out.path(output + sar_sim.META_SUFFIX)
        with naming_write_errors(data):
            sar_products.write_image(sar_sim.base_of(data), images, grid, args.scene_center,
                                     x_axis, y_axis, description, "gpuradar-sar")
        written += [output + sar_sim.DATA_SUFFIX, output + sar_sim.META_SUFFIX]
    if args.geotiff and ground:
        tif = out.path(output + ".tif")
        try:
            sar_products.write_geotiff(
                tif, sar_products.detected(power, args.geotiff_values), ml_grid,
                args.scene_center, args.geotiff_values, description)
        except RuntimeError as e:  # GDAL's own errors
            raise AppError(f"{output}.tif: {e}") from None
        written.append(output + ".tif")
    return np.sqrt(power), ml_grid, written


def form_images(rec, grid, ppi, args):
    """The flowgraph: file sources -> backprojection -> vector sink."""
    tb = gr.top_block()
    src = sigmf_io.complex_file_source(tb, rec.data_path, rec.datatype, rec.nbins)
    geo = blocks.file_source(gr.sizeof_double * sar_sim.GEOMETRY_LENGTH, rec.geometry_path)
    try:
        bp = gpuradar.backprojection(rec.nbins, grid.nx, grid.ny, grid.x0, grid.y0,
                                     grid.dx, grid.dy, grid.z, ppi, args.mode,
                                     args.precision, [], args.backend)
    except ValueError as e:  # parameter checks name the parameter
        raise AppError(f"backprojection: {e}") from None
    except RuntimeError as e:  # e.g. --backend cuda without a GPU
        raise AppError(f"--backend {args.backend}: {e}") from None
    snk = blocks.vector_sink_c(grid.nx)
    tb.connect(src, (bp, 0))
    tb.connect(geo, (bp, 1))
    tb.connect(bp, snk)
    elapsed = app_util.run_with_progress(tb, lambda: bp.nitems_read(0), rec.npulses,
                                         "backprojection",
                                         enabled=False if args.quiet else None)
    images = np.array(snk.data(), np.complex64).reshape(-1, grid.ny, grid.nx)
    return images, bp, elapsed


def refocus(rec, grid, images, args):
    """--autofocus: the phase error per pulse from the image, the pulses corrected and
    backprojected again (not converged: the image as formed)."""
    result = pulse_autofocus.autofocus(rec.complex_pulses(), rec.geometry, images[0], grid,
                                       args.autofocus, args.autofocus_iterations,
                                       backend=args.backend)
    if result.converged:
        corrected = pulse_autofocus.correct(rec.complex_pulses(), result.phase_error)
        images = pulse_autofocus.backproject(corrected, rec.geometry, grid, args.backend,
                                             args.precision)[None]
    return images, result


def require_matplotlib():
    try:
        import matplotlib
        matplotlib.use("Agg")
    except ImportError:
        raise AppError("matplotlib is not installed (Debian: python3-matplotlib); "
                       "use --no-png") from None


def write_png(path, image, grid, targets, dynamic_range, title,
              xlabel="x (east), m", ylabel="y (north), m"):
    """One image: |image| in dB re its peak, truth (x, y) marked."""
    write_png_panels(path, [(image, grid, targets, title, xlabel, ylabel)], dynamic_range)


def write_png_panels(path, panels, dynamic_range):
    """Images side by side, each (image, grid, targets, title, xlabel, ylabel) in dB re
    its own peak."""
    import matplotlib.pyplot as plt  # require_matplotlib() chose the Agg backend
    fig, axes = plt.subplots(1, len(panels), figsize=(7 * len(panels), 6), squeeze=False)
    for ax, panel in zip(axes[0], panels):
        draw_panel(fig, ax, *panel, dynamic_range)
    fig.tight_layout()
    fig.savefig(path, dpi=110, format="png")
    plt.close(fig)


def draw_panel(fig, ax, image, grid, targets, title, xlabel, ylabel, dynamic_range):
    mag = np.nan_to_num(np.abs(image), nan=0.0, posinf=0.0)
    top = mag.max() if mag.size and mag.max() > 0 else 1.0
    db = 20 * np.log10(np.maximum(mag / top, 10 ** (-dynamic_range / 20)))
    extent = display_geometry.image_extent(grid)  # as the sar_image_sink display
    im = ax.imshow(db, origin="lower", extent=extent, cmap="gray", vmin=-dynamic_range,
                   vmax=0, interpolation="nearest", aspect="equal")
    if targets:  # positions (x, y) in the image's axes
        ax.scatter([t[0] for t in targets], [t[1] for t in targets],
                   s=80, facecolors="none", edgecolors="tab:red", linewidths=1,
                   label="truth")
        ax.legend(loc="upper right")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    fig.colorbar(im, ax=ax, label="|image|, dB re peak")


#: SigMF datatypes of --input: cf32_le, and the integers an SDR gives (sc16 / sc8), read
#: with 1.0 = full scale (sigmf_io.SAMPLE_FORMATS).
INPUT_DATATYPES = tuple(sigmf_io.SAMPLE_FORMATS)


def integer_note(datatype, meta):
    """', ci16_le samples (read with 1.0 = full scale ...)' for an integer recording,
    else ''."""
    if datatype == "cf32_le":
        return ""
    full_scale = meta["global"].get(sigmf_io.NS + "full_scale")
    return (f", {datatype} samples (read with 1.0 = full scale" +
            (f"; full scale = amplitude {full_scale:g}" if isinstance(full_scale, (int, float))
             else "") + ")")


def recording(args, tmp):
    """The recording to image: --input, or the simulated scenario (saved with
    --save-recording)."""
    if args.input:
        ov = {k: ("--" + k.replace("_", "-"), getattr(args, k)) for k in ("npulses", "nbins")}
        ov["geometry_file"] = ("--geometry", args.geometry)
        return sar_sim.read(args.input, ov, INPUT_DATATYPES), args.input
    if args.geometry:
        raise AppError("--geometry: needs --input (the simulated scenario has its own)")
    history = app_util.sar_scenario(args)
    if not args.save_recording:
        return sar_sim.read(sar_sim.write(os.path.join(tmp, "scenario"), history)), \
            f"simulated {args.scenario} scenario"
    base = app_util.output_prefix(args.save_recording, "gpuradar_sar_ph", "--save-recording")
    with app_util.StagedOutputs() as out:
        staged = [out.path(base + s) for s in (sar_sim.DATA_SUFFIX, sar_sim.META_SUFFIX,
                                               sar_sim.GEOMETRY_SUFFIX)]
        sar_sim.write(sar_sim.base_of(staged[0]), history)
        out.commit()
    return sar_sim.read(base), f"simulated {args.scenario} scenario (saved as {base})"


def check_pulses_usable(rec):
    """Refuses a geometry that cannot give an image: f0 <= 0 on a pulse (the phase would
    be conjugated or absent: an unfocused image without a word), or no pulse usable at
    all (each non-finite or with dr <= 0, which the block skips: a blank image). Some bad
    pulses among good ones are a data error the block skips and counts."""
    g = rec.geometry
    finite = np.isfinite(g).all(axis=1)
    bad_f0 = finite & (g[:, 5] <= 0)
    if bad_f0.any():
        i = int(np.argmax(bad_f0))
        raise AppError(f"{rec.geometry_path}: pulse {i}: f0 (column 6 of [x, y, z, r0, dr, "
                       f"f0]) must be > 0 Hz (got {g[i, 5]:g}; {int(bad_f0.sum())} of "
                       f"{len(g)} pulses)")
    usable = finite & (g[:, 4] > 0)
    if not usable.any():
        why = "non-finite values" if not finite.any() else "non-finite values or dr <= 0"
        raise AppError(f"{rec.geometry_path}: no usable pulse: all {len(g)} have {why} "
                       f"in [x, y, z, r0, dr, f0] (the backprojection would skip every "
                       f"one and form a blank image)")


def image_grid(args, rec):
    if not args.grid:
        return rec.grid
    x0, y0, dx, dy, nx, ny, z = args.grid
    return sar_sim.Grid(x0, y0, dx, dy, nx, ny, rec.grid.z if z is None else z)


def run(args, tmp):
    output = app_util.output_prefix(args.output, "gpuradar_sar")
    if not args.no_png:
        require_matplotlib()
    if args.input and stripmap_sim.is_stripmap(args.input):
        if args.autofocus and (args.algorithm or "csa") != "csa":
            raise AppError(f"--autofocus: a stripmap recording is autofocused with "
                           f"--algorithm csa (its default), not {args.algorithm}")
        if args.autofocus and args.autofocus not in stripmap_autofocus.METHODS:
            raise AppError(f"--autofocus {args.autofocus}: phase-history recordings only; "
                           f"a stripmap recording takes --autofocus "
                           f"{'|'.join(stripmap_autofocus.METHODS)}")
        return run_stripmap(args, output)
    if args.algorithm in ("csa", "both"):
        raise AppError(f"--algorithm {args.algorithm}: needs a stripmap recording of raw "
                       "echoes (gpuradar-sim stripmap); this one is a range-compressed "
                       "phase history (use --algorithm bp)")
    check_products(args)
    rec, source = recording(args, tmp)
    check_pulses_usable(rec)
    grid = image_grid(args, rec)
    azimuth_axis = sar_products.along_track_axis(rec.geometry)
    ppi = args.pulses_per_image or rec.npulses
    if ppi > rec.npulses:
        raise AppError(f"--pulses-per-image: {ppi} is more than the recording's "
                       f"{rec.npulses} pulses: no image would be formed")
    nimages = rec.npulses // ppi
    if args.autofocus and nimages != 1:
        raise AppError(f"--autofocus: needs one image of all the pulses (got "
                       f"--pulses-per-image {ppi}: {nimages} images)")
    if nimages * grid.nx * grid.ny * 8 > MAX_IMAGE_BYTES:
        raise AppError(f"--pulses-per-image / --grid: {nimages} images of {grid.nx} x "
                       f"{grid.ny} pixels need more than {MAX_IMAGE_BYTES >> 20} MiB")
    with app_util.StagedOutputs() as out:
        tmp_npy = out.path(output + ".npy")
        tmp_png = None if args.no_png else out.path(output + ".png")
        images, bp, elapsed = form_images(rec, grid, ppi, args)
        if images.shape[0] != nimages:
            raise AppError(f"{rec.data_path}: {images.shape[0]} images formed, "
                           f"{nimages} expected ({bp.skipped_pulses()} pulses skipped)")
        if bp.skipped_pulses() >= rec.npulses:
            # Geometry check_pulses_usable cannot see (f0 = 1e300: no precision carries
            # its phase): a blank image is no result.
            raise AppError(f"{rec.geometry_path}: no usable pulse: the backprojection "
                           f"skipped all {bp.skipped_pulses()} (geometry its precision "
                           f"cannot carry): no image formed")
        focus_result = None
        if args.autofocus:
            images, focus_result = refocus(rec, grid, images, args)
            if focus_result.converged:
                tmp_phase = out.path(output + ".phase_error.npy")
                with naming_write_errors(tmp_phase), open(tmp_phase, "wb") as f:
                    np.save(f, focus_result.phase_error)
        with naming_write_errors(tmp_npy), open(tmp_npy, "wb") as f:
            np.save(f, images[0] if nimages == 1 else images)
        last = images[-1]
        shown, shown_grid, products = stage_products(
            out, output, images[0] if nimages == 1 else images, grid, args, azimuth_axis,
            True, "x (east), m", "y (north), m",
            f"{PROG}: {os.path.basename(rec.base)} ({bp.backend()}, {bp.precision()})")
        if tmp_png:
            with naming_write_errors(tmp_png):
                write_png(tmp_png, shown, shown_grid, [t.position[:2] for t in rec.targets],
                          args.dynamic_range,
                          f"{PROG}: {os.path.basename(rec.base)} ({bp.backend()}, "
                          f"{bp.precision()})")
        out.commit()
    report(rec, source, grid, images, ppi, bp, elapsed, output, args)
    if focus_result is not None:
        print(f"  {focus_result.summary()}")
        if focus_result.converged:
            print(f"  wrote {output}.phase_error.npy; the image is the corrected pulses' "
                  f"backprojection (a phase linear over the pulses, which shifts the "
                  f"image, is not observable: targets may lie shifted by the error's "
                  f"linear part)")
    report_products(products, args, azimuth_axis)
    ok = focus_table(rec, grid, last)
    if args.check and not ok:
        print(f"{PROG}: --check: a target did not focus within 1 pixel", file=sys.stderr)
        return 1
    return 0


def report(rec, source, grid, images, ppi, bp, elapsed, output, args):
    bps = float(grid.nx) * grid.ny * images.shape[0] * ppi
    f0 = rec.field("f0", float("nan"))
    f0 = f0 if isinstance(f0, (int, float)) else float("nan")
    print(f"{PROG}: {source}: {rec.npulses} pulses x {rec.nbins} bins, "
          f"f0 {f0 / 1e9:.3f} GHz" + integer_note(rec.datatype, rec.meta))
    rate = f"{bps / elapsed / 1e9:.3f} Gbp/s" if elapsed > 0 else "-"
    print(f"  image {grid.nx} x {grid.ny} px of {grid.dx:.4g} x {grid.dy:.4g} m, "
          f"{images.shape[0]} image(s), backend {bp.backend()}, {bp.precision()}, "
          f"{bp.mode()}: {elapsed:.3f} s flowgraph ({rate} incl. file I/O), "
          f"{bp.skipped_pulses()} pulses skipped, {bp.nonfinite_samples()} non-finite "
          f"samples zeroed")
    print(f"  wrote {output}.npy" + ("" if args.no_png else f" and {output}.png"))


def report_products(products, args, azimuth_axis):
    if products:
        print(f"  wrote {', '.join(products)}")
    if args.looks != (1, 1):
        lx, ly = sar_products.looks_xy(*args.looks, azimuth_axis)
        print(f"  multilook {args.looks[0]} x {args.looks[1]} (range x azimuth): {lx} x "
              f"{ly} pixels (x x y) per detected pixel")


def focus_table(rec, grid, image):
    """Prints where each truth target focused; True when every one is within a pixel."""
    ok = True
    if rec.targets:
        print("  target  position (m)                 pixel      peak at    offset  level    "
              "-3 dB width x / y")
        for i, f in enumerate(sar_sim.focus(image, grid, rec.targets)):
            good = f.offset_px <= math.sqrt(2)
            ok = ok and good
            pos = ", ".join(f"{v:.2f}" for v in f.target.position)
            print(f"  {i:<6}  ({pos:<24}) {str(f.expected):<10} {str(f.peak):<10} "
                  f"{f.offset_px:4.1f} px {f.peak_db:6.1f} dB  "
                  f"{f.width_x_m:.3f} / {f.width_y_m:.3f} m  {'ok' if good else 'NOT FOCUSED'}")
    return ok


def run_stripmap(args, output):
    """A stripmap recording: csa (sar_focus), bp, or both side by side; the images, the
    focus report of each."""
    rec = stripmap_sim.read(args.input, INPUT_DATATYPES)
    sc, a = rec.scene, rec.scene.acq
    algorithms = ["csa", "bp"] if args.algorithm == "both" else [args.algorithm or "csa"]
    check_products(args, ground="bp" in algorithms)
    with app_util.StagedOutputs() as out:
        npys = {alg: out.path(output + (f"-{alg}" if len(algorithms) > 1 else "") + ".npy")
                for alg in algorithms}
        tmp_png = None if args.no_png else out.path(output + ".png")
        images = {alg: stripmap_image(rec, alg, args) for alg in algorithms}
        focus_result = None
        if args.autofocus:
            images["csa"], focus_result = refocus_stripmap(rec, images["csa"], args)
            if focus_result.converged:
                tmp_phase = out.path(output + ".phase_error.npy")
                with naming_write_errors(tmp_phase), open(tmp_phase, "wb") as f:
                    np.save(f, focus_result.phase_error)
        panels, products = [], []
        for alg, image in images.items():
            with naming_write_errors(npys[alg]), open(npys[alg], "wb") as f:
                np.save(f, image.data)
            # rows along track: azimuth is y for both algorithms
            shown, shown_grid, written = stage_products(
                out, output + (f"-{alg}" if len(algorithms) > 1 else ""), image.data,
                image.grid, args, "y", not image.x_is_slant,
                "slant range, m" if image.x_is_slant else "x (east), m",
                "y (along track, north), m",
                f"{PROG}: {os.path.basename(rec.base)} ({alg}, {image.backend})")
            products += written
            panels.append(stripmap_panel(rec, alg, image, shown, shown_grid))
        if tmp_png:
            with naming_write_errors(tmp_png):
                write_png_panels(tmp_png, panels, args.dynamic_range)
        out.commit()
    ok = True
    for alg, image in images.items():
        print(f"{PROG}: {rec.base}: stripmap, {sc.npulses} pulses x {a.nrange} samples"
              f"{integer_note(rec.datatype, sigmf_io.read_meta(rec.meta_path))}; "
              f"{image.detail}, backend {image.backend}")
        if rec.track is not None:
            print("  track: " + ("the recording's measured track" if alg == "bp" else
                                 "the straight pass (csa ignores the recording's measured "
                                 "track)"))
        print(f"  image {image.data.shape[1]} x {image.data.shape[0]} px of {image.dx:.4g} x "
              f"{image.dy:.4g} m (rows from y = {image.y0:.2f} m)")
        name = output + (f"-{alg}" if len(algorithms) > 1 else "")
        print(f"  wrote {name}.npy" + ("" if args.no_png else f" and {output}.png"))
        if alg == "csa" and focus_result is not None:
            print(f"  {focus_result.summary()}")
            if focus_result.converged:
                print(f"  wrote {output}.phase_error.npy; the image is the corrected "
                      f"pulses' csa (a phase linear over a stretch of pulses shifts its "
                      f"targets and is not observable)")
        ok = stripmap_report(image, a, sc.targets, args) and ok
    report_products(products, args, "y")
    if args.check and not ok:
        print(f"{PROG}: --check: a target did not focus within one resolution cell",
              file=sys.stderr)
        return 1
    return 0


def stripmap_image(rec, algorithm, args):
    """The Image of one algorithm (AppError naming the field or option on bad input)."""
    sc, a = rec.scene, rec.scene.acq
    progress = lambda tb, blk, total: app_util.run_with_progress(  # noqa: E731
        tb, lambda: blk.nitems_read(0), total, algorithm,
        enabled=False if args.quiet else None)
    try:
        if algorithm == "csa":
            image = stripmap_sim.focus_csa(rec, args.backend, args.naz, args.range_window,
                                           args.azimuth_window, progress)
        else:
            grid = stripmap_sim.bp_grid(a, sc.targets, sc.npulses, sc.first_pulse_y,
                                        reflectivity=sc.reflectivity)
            if args.grid:
                x0, y0, dx, dy, nx, ny, z = args.grid
                grid = sar_sim.Grid(x0, y0, dx, dy, nx, ny, z or 0.0)
            image = stripmap_sim.focus_bp(rec, grid, args.backend, args.range_window,
                                          progress)
    except ValueError as e:  # the blocks name the parameter: the recording's field
        raise AppError(f"{rec.meta_path}: metadata field 'global.gpuradar:stripmap' "
                       f"(or --naz): {e}") from None
    except RuntimeError as e:  # e.g. --backend cuda without a GPU
        raise AppError(f"--backend {args.backend}: {e}") from None
    if image.data.shape[0] == 0:
        raise AppError(f"{rec.data_path}: {sc.npulses} pulses, fewer than one azimuth "
                       f"block ({image.detail}): nothing focused")
    return image


def refocus_stripmap(rec, image, args):
    """--autofocus on a stripmap recording: the phase error per pulse from the csa image
    and the raw pulses (stripmap_autofocus), the pulses corrected and focused again (not
    converged: the image as formed)."""
    sc, a = rec.scene, rec.scene.acq
    raw = stripmap_autofocus.read_raw(rec)
    result = stripmap_autofocus.autofocus(raw, a, image, sc.first_pulse_y, args.autofocus,
                                          args.autofocus_iterations,
                                          backend=args.backend)
    if result.converged:
        corrected = stripmap_autofocus.correct(raw, result.phase_error)
        try:
            image = stripmap_autofocus.focus_csa(corrected, a, sc.first_pulse_y,
                                                 args.backend, args.naz, args.range_window,
                                                 args.azimuth_window)
        except RuntimeError as e:  # formed once already: a device failing since
            raise AppError(f"--backend {args.backend}: {e}") from None
    return image, result


def stripmap_panel(rec, algorithm, image, shown, shown_grid):
    """write_png_panels' entry of one image (drawn: `shown` on `shown_grid`, multilooked
    with --looks): truth in the image's axes."""
    a = rec.scene.acq
    marks = [((t.slant_range(a) if image.x_is_slant else t.x), t.y)
             for t in rec.scene.targets]
    return (shown, shown_grid, marks,
            f"{PROG}: {os.path.basename(rec.base)} ({algorithm}, {image.backend})",
            "slant range, m" if image.x_is_slant else "x (east), m",
            "y (along track, north), m")


def stripmap_report(image, a, targets, args):
    """Prints the focus report; True when every target lies in the image within one
    -3 dB width of its truth on both axes. The azimuth theory is the csa's processed 3 dB
    Doppler band; backprojection integrates the whole beam, so it has none here."""
    rng = stripmap_sim.theory_range(a, args.range_window)
    az = stripmap_sim.theory_azimuth(a, args.azimuth_window) if image.x_is_slant else None
    reports = stripmap_sim.focus_report(image, a, targets)
    az_name = args.azimuth_window if az else "none (bp integrates the whole beam)"
    print(f"  focus report ({len(reports)} of {len(targets)} targets in the image); "
          f"theory in []: range {args.range_window}, azimuth {az_name}")
    print("  target  slant range  along track  error rg/az (m)   IRW rg/az (m)             "
          "PSLR rg/az (dB)               ISLR rg/az (dB)")

    def theory(v, fmt):
        return f"[{v:{fmt}}]" if v is not None else "[" + " " * (len(f"{0:{fmt}}") - 1) + \
            "-]"

    ok = len(reports) == len(targets)
    for r in reports:
        t = r.target
        az_irw = az.irw_m if az else r.azimuth.irw_m
        good = abs(r.error_range_m) <= rng.irw_m and abs(r.error_azimuth_m) <= az_irw
        ok = ok and good
        print(f"  {targets.index(t):<6}  {t.slant_range(a):9.1f}  {t.y:10.1f}   "
              f"{r.error_range_m:+6.2f} / {r.error_azimuth_m:+6.2f}   "
              f"{r.range_.irw_m:5.2f} {theory(rng.irw_m, '5.2f')} / {r.azimuth.irw_m:5.2f} "
              f"{theory(az and az.irw_m, '5.2f')}   {r.range_.pslr_db:6.1f} "
              f"{theory(rng.pslr_db, '6.1f')} / {r.azimuth.pslr_db:6.1f} "
              f"{theory(az and az.pslr_db, '6.1f')}   {r.range_.islr_db:6.1f} "
              f"{theory(rng.islr_db, '6.1f')} / {r.azimuth.islr_db:6.1f} "
              f"{theory(az and az.islr_db, '6.1f')}{'' if good else '  NOT FOCUSED'}")
    return ok


def main(argv=None):
    args = parse_args(argv)

    def body():
        with tempfile.TemporaryDirectory(prefix="gpuradar-sar-") as tmp:
            return run(args, tmp)

    return app_util.run_app(PROG, body, (sar_sim.RecordingError,))


if __name__ == "__main__":
    sys.exit(app_util.main_guard(main))
