#!/usr/bin/env python3
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""gpuradar-sim: write a simulated radar recording (SigMF) with its truth.

  gpuradar-sim [pulse-doppler] [options]   (the default)
      A pulsed radar's receive stream, produced by a GNU Radio flowgraph
      (gpuradar.radar_scene_source -> head -> file_sink): <output>.sigmf-data (cf32_le,
      continuous at fs) and <output>.sigmf-meta (the radar parameters under "gpuradar:"
      in the global metadata -- fs, fc, prf and PRI in samples, range gate, pulses per
      CPI, the LFM waveform -- and the truth: one annotation per target and CPI with its
      range, velocity and Doppler). Process it with gpuradar-process. The embedded
      default scenario: S band (3 GHz), fs 10 MHz, PRF 5 kHz, 10 us 5 MHz LFM, gate
      1.5-28.5 km, 8 CPIs of 64 pulses, four targets (see --list).

  gpuradar-sim sar [options]
      A range-compressed SAR phase history (gnuradio.gpuradar.sar_sim): <output>.sigmf-data,
      .sigmf-meta and .geometry.f64, the point targets as annotations. Image it with
      gpuradar-sar --input <output>.

  gpuradar-sim stripmap [options]
      Raw (uncompressed) stripmap SAR echoes of point targets and, with --scene, a
      distributed scene (a reflectivity image, one scatterer per cell) from a straight
      airborne pass (gpuradar.stripmap_source -> file_sink): <output>.sigmf-data (one
      pulse of nrange cf32 samples after another) and <output>.sigmf-meta (the
      acquisition under gpuradar:stripmap, the scene under gpuradar:scene, the targets as
      annotations; gnuradio.gpuradar.stripmap_sim).
      Focus it with gpuradar-sar --input <output> --algorithm csa (or bp).

  gpuradar-sim passive [options]
      A passive radar's coherent channels (gnuradio.gpuradar.passive_sim, as
      passive_scene_source plays them): <output>.sigmf-data (cf32_le, core:num_channels
      channels interleaved sample by sample: 0 the reference, 1.. the surveillance
      channels) and <output>.sigmf-meta (the scene under gpuradar:passive_scene, each
      target's bistatic range and velocity as an annotation). An FM or DVB-T-like
      illuminator, direct path, static clutter, targets, noise and, optionally, the
      receiver's front-end impairments. Process it with gpuradar-passive --input <output>.

Files are written under temporary names and renamed when complete: an interrupted
(Ctrl-C: status 130, SIGTERM: 143) or failed (status 2) run leaves nothing half-written,
and a run that would not fit in the free space is refused before it starts
(--allow-large-output to try anyway). Numbers take engineering notation (--fs 10M).
Options of each recording: gpuradar-sim pulse-doppler --help, gpuradar-sim sar --help,
gpuradar-sim stripmap --help.
"""

import argparse
import math
import os
import runpy
import sys

try:
    from gnuradio import gpuradar  # noqa: F401
except ImportError as error:  # gpuradar-env, beside the app, says what to set
    sys.exit(runpy.run_path(os.path.join(os.path.dirname(os.path.realpath(__file__)),
                                         "gpuradar-env"))["import_failure"](
        "gpuradar-sim", error))
from gnuradio.gpuradar import app_util, passive_sim, pd_sim, sar_sim, sigmf_io, stripmap_sim
from gnuradio.gpuradar.app_util import AppError, number

PROG = "gpuradar-sim"
COMMANDS = ("pulse-doppler", "sar", "stripmap", "passive")
#: Scenario fields settable from the command line (--pri-samples sets pri_samples, ...).
SCENARIO_FIELDS = ("fs", "fc", "pri_samples", "bandwidth", "pulse_width", "gate_start",
                   "nrange", "npulses", "ncpi", "noise_power", "clutter_cnr_db", "seed",
                   "datatype", "full_scale")
#: Most samples one pulse-Doppler recording may have (2^40: 8 TB), beside the free space.
MAX_SAMPLES = 1 << 40


def parse_target(text):
    try:
        r, v, s = (app_util._parse_number(x, float) for x in text.split(","))
    except (ValueError, argparse.ArgumentTypeError):
        raise argparse.ArgumentTypeError(
            f"expected RANGE_M,VELOCITY_MPS,SNR_DB, finite numbers (got {text!r})") from None
    if not r > 0:
        raise argparse.ArgumentTypeError(f"range must be > 0 m (got {text!r})")
    return pd_sim.Target(r, v, s)


def parse_clutter(text):
    try:
        a, b = (app_util._parse_number(x, float) for x in text.split(","))
    except (ValueError, argparse.ArgumentTypeError):
        raise argparse.ArgumentTypeError(
            f"expected START_M,STOP_M, finite numbers (got {text!r})") from None
    if not 0 <= a < b:
        raise argparse.ArgumentTypeError(f"must be 0 <= START_M < STOP_M (got {text!r})")
    return a, b


def parse_args(argv):
    p = app_util.ArgumentParser(prog=PROG, description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", metavar="{pulse-doppler,sar,stripmap,passive}")

    pd = sub.add_parser("pulse-doppler", help="pulse-Doppler receive stream (default)",
                        description="Pulse-Doppler recording from radar_scene_source. "
                        "Scenario parameters left out come from --preset.")
    pd.add_argument("--output", "-o", default="gpuradar_pd",
                    help="recording prefix: <output>.sigmf-data/.sigmf-meta; a directory: "
                         "<dir>/gpuradar_pd (default: %(default)s)")
    pd.add_argument("--preset", default="default", choices=list(pd_sim.PRESETS),
                    help="embedded scenario (examples: the GRC pulse-Doppler examples' "
                         "parameters; small, tiny: for tests)")
    pd.add_argument("--list", action="store_true",
                    help="print the scenario and exit without writing anything")
    pd.add_argument("--allow-large-output", action="store_true",
                    help="write even when the recording is larger than the free space")
    pd.add_argument("--fs", type=number(above=0), help="sample rate (Hz)")
    pd.add_argument("--fc", type=number(above=0), help="carrier (Hz)")
    pd.add_argument("--pri-samples", type=number(minimum=1),
                    help="PRI in samples (PRF = fs / PRI)")
    pd.add_argument("--bandwidth", type=number(above=0), help="LFM bandwidth (Hz)")
    pd.add_argument("--pulse-width", type=number(above=0), help="LFM pulse width (s)")
    pd.add_argument("--gate-start", type=number(int, minimum=0),
                    help="range gate start (samples after the pulse start)")
    pd.add_argument("--nrange", type=number(int, minimum=1),
                    help="range gate length (samples)")
    pd.add_argument("--npulses", type=number(int, minimum=2), help="pulses per CPI")
    pd.add_argument("--ncpi", type=number(int, minimum=1), help="CPIs to record")
    pd.add_argument("--noise-power", type=number(minimum=0), help="noise power per sample")
    pd.add_argument("--clutter-cnr-db", type=number(), help="stationary clutter CNR (dB)")
    pd.add_argument("--clutter", metavar="START_M,STOP_M", type=parse_clutter,
                    help="clutter extent (m); none by default")
    pd.add_argument("--target", action="append", type=parse_target,
                    metavar="RANGE_M,VELOCITY_MPS,SNR_DB",
                    help="a target (repeat; replaces the preset's targets; velocity "
                         "closing positive, SNR per sample)")
    pd.add_argument("--no-targets", action="store_true", help="noise (and clutter) only")
    pd.add_argument("--seed", type=number(int, minimum=0, maximum=2**63 - 1),
                    help="noise seed")
    pd.add_argument("--datatype", choices=list(sigmf_io.SAMPLE_FORMATS),
                    help="samples written: cf32_le (default), or ci16_le / ci8, interleaved "
                         "integers as an SDR's sc16 / sc8 give them")
    pd.add_argument("--full-scale", type=number(above=0),
                    help="ci16_le / ci8: the sample component amplitude written as the "
                         "integers' full scale (it reads back as 1.0; default 8, about 11 "
                         "noise standard deviations at noise power 1); larger ones clip "
                         "and are counted")
    pd.add_argument("--quiet", "-q", action="store_true", help="no progress bar")

    sar = sub.add_parser("sar", help="SAR phase history (sar_sim)",
                         description="SAR phase-history recording (gnuradio.gpuradar."
                         "sar_sim), for gpuradar-sar --input.")
    sar.add_argument("--output", "-o", default="gpuradar_sar_ph",
                     help="recording prefix: <output>.sigmf-data/.sigmf-meta/.geometry.f64; "
                          "a directory: <dir>/gpuradar_sar_ph (default: %(default)s)")
    sar.add_argument("--allow-large-output", action="store_true",
                     help="write even when the recording is larger than the free space")
    app_util.add_sar_scenario_args(sar, seed=True)
    add_motion_args(sar.add_argument_group(
        "navigation errors (off by default)",
        "the echoes come from the scenario's (true) track; the geometry file carries the "
        "measured track, true + errors, and <output>.true_geometry.f64 the true one "
        "(models: gnuradio.gpuradar.sar_sim.MotionErrors)"))
    add_integer_args(sar)
    sar.add_argument("--quiet", "-q", action="store_true", help="(no effect: quick)")

    add_stripmap_parser(sub)
    add_passive_parser(sub)

    argv = list(sys.argv[1:] if argv is None else argv)
    # No command (or options only): the pulse-Doppler recording.
    if not argv or (argv[0] not in COMMANDS and argv[0] not in ("-h", "--help",
                                                                "--version")):
        argv.insert(0, "pulse-doppler")
    return p.parse_args(argv)


def parse_sinusoid(text):
    """A,PERIOD[s|m][,PHASE] -> sar_sim.Sinusoid (m, s or m, rad)."""
    parts = text.split(",")
    if len(parts) not in (2, 3):
        raise argparse.ArgumentTypeError(f"expected AMPLITUDE_M,PERIOD(s|m)[,PHASE_RAD] "
                                         f"(got {text!r})")
    period = parts[1].strip()
    unit = period[-1:]
    if unit not in ("s", "m"):
        raise argparse.ArgumentTypeError(f"the period needs its unit, s (seconds) or m "
                                         f"(metres along track): e.g. 2s or 50m (got "
                                         f"{text!r})")
    try:
        amp = number(minimum=0)(parts[0])
        value = number(above=0)(period[:-1])
        phase = number()(parts[2]) if len(parts) == 3 else 0.0
    except argparse.ArgumentTypeError as e:
        raise argparse.ArgumentTypeError(f"{e} in {text!r} (AMPLITUDE_M,PERIOD(s|m)"
                                         f"[,PHASE_RAD])") from None
    return sar_sim.Sinusoid(amp, value if unit == "s" else None,
                            value if unit == "m" else None, phase)


def add_integer_args(p):
    """--datatype and --full-scale of the SAR recordings (sar, stripmap)."""
    p.add_argument("--datatype", choices=list(sigmf_io.SAMPLE_FORMATS), default="cf32_le",
                   help="samples written: cf32_le (default), or ci16_le / ci8, interleaved "
                        "integers as an SDR gives them (sc16 / sc8); gpuradar-sar reads "
                        "them with 1.0 = full scale")
    p.add_argument("--full-scale", type=number(above=0),
                   help="ci16_le / ci8: the sample component amplitude written as the "
                        "integers' full scale (it reads back as 1.0; default: the "
                        "smallest that clips nothing, the recording's largest component "
                        "written as the largest integer); larger ones clip and are "
                        "counted")


def quantisation_summary(output, datatype):
    """The integer recording's full scale and clipped samples (metadata), printed; a
    warning on stderr when samples clipped."""
    if datatype == "cf32_le":
        return
    g = sigmf_io.read_meta(output + sigmf_io.META_SUFFIX)["global"]
    full_scale, clipped = g[sigmf_io.NS + "full_scale"], g[sigmf_io.NS + "clipped_samples"]
    print(f"  {datatype}, full scale {full_scale:g} (reads back as 1.0), {clipped} samples "
          f"clipped")
    if clipped:
        print(f"{PROG}: warning: {clipped} samples clipped at full scale {full_scale:g} "
              f"(--full-scale)", file=sys.stderr)


MOTION_OPTIONS = ("velocity_error", "cross_track_sine", "vertical_sine", "cross_track_walk",
                  "vertical_walk", "cross_track_noise", "vertical_noise")


def add_motion_args(g, prf=True):
    """The navigation error options (sar_sim.MotionErrors); prf: add --prf (the pulse
    times), which stripmap has already."""
    if prf:
        g.add_argument("--prf", type=number(above=0, maximum=1e7), default=1000.0,
                       help="pulse rate giving each pulse's time for the error models "
                            "(Hz; default: %(default)s)")
    g.add_argument("--velocity-error", type=number(minimum=-1e3, maximum=1e3),
                   metavar="M_PER_S",
                   help="along-track velocity error: measured - true = this x t, t from "
                        "the aperture's centre")
    for axis in ("cross-track", "vertical"):
        g.add_argument(f"--{axis}-sine", action="append", type=parse_sinusoid,
                       metavar="A_M,PERIOD(s|m)[,PHASE_RAD]",
                       help=f"{axis} error A sin(2 pi t / T + phase) (period in s) or of "
                            f"the along-track distance (in m); repeat to add")
        g.add_argument(f"--{axis}-walk", type=number(minimum=0, maximum=1e3),
                       metavar="M_PER_SQRT_S",
                       help=f"{axis} random walk (m/sqrt(s), from 0 at the first pulse)")
        g.add_argument(f"--{axis}-noise", type=number(minimum=0, maximum=1e3),
                       metavar="M_RMS", help=f"{axis} white noise (m RMS, per pulse)")
    g.add_argument("--motion-seed", type=number(int, minimum=0, maximum=2**63 - 1),
                   default=1, help="seed of the random walks and white noise")


def motion_errors(args):
    """The MotionErrors of the options, or None when none was given."""
    if all(getattr(args, k) is None for k in MOTION_OPTIONS):
        return None
    return sar_sim.MotionErrors(
        prf=args.prf or 1000.0, velocity_error_mps=args.velocity_error or 0.0,
        cross_track=sar_sim.AxisErrors(args.cross_track_sine or [],
                                       args.cross_track_walk or 0.0,
                                       args.cross_track_noise or 0.0),
        vertical=sar_sim.AxisErrors(args.vertical_sine or [], args.vertical_walk or 0.0,
                                    args.vertical_noise or 0.0),
        seed=args.motion_seed)


#: Acquisition options of gpuradar-sim stripmap: (option, Acquisition field, check, help).
STRIPMAP_OPTIONS = (
    ("--fc", "fc", number(above=0), "carrier (Hz)"),
    ("--bandwidth", "bandwidth", number(above=0), "chirp bandwidth (Hz)"),
    ("--pulse-width", "pulse_width", number(above=0), "chirp length (s)"),
    ("--fs", "fs", number(above=0), "range sampling rate (Hz)"),
    ("--prf", "prf", number(above=0), "pulse repetition frequency (Hz)"),
    ("--velocity", "velocity", number(above=0), "platform speed (m/s)"),
    ("--altitude", "altitude", number(minimum=0), "platform height (m)"),
    ("--near-range", "r0", number(above=0), "slant range of sample 0 (m)"),
    ("--nrange", "nrange", number(int, minimum=2, maximum=1 << 24),
     "range samples per pulse"),
    ("--squint", "squint", number(minimum=-0.35, maximum=0.35),
     "beam squint forward of broadside (rad)"),
    ("--antenna-length", "antenna_length", number(above=0), "azimuth antenna length (m)"),
)


def parse_stripmap_target(text):
    parts = text.split(",")
    try:
        if len(parts) not in (2, 3, 4):
            raise ValueError
        v = [app_util._parse_number(x, float) for x in parts]
    except (ValueError, argparse.ArgumentTypeError):
        raise argparse.ArgumentTypeError(
            f"expected X_M,Y_M[,Z_M[,AMPLITUDE]], finite numbers (got {text!r})") from None
    return stripmap_sim.Target(*v)


def parse_xy(text):
    parts = text.split(",")
    try:
        if len(parts) != 2:
            raise ValueError
        return tuple(app_util._parse_number(x, float) for x in parts)
    except (ValueError, argparse.ArgumentTypeError):
        raise argparse.ArgumentTypeError(
            f"expected X_M,Y_M, finite numbers (got {text!r})") from None


def parse_passive_target(text):
    """RANGE_M,VELOCITY_MPS,SNR_DB[,AZIMUTH_DEG] of --target (passive)."""
    try:
        values = [float(v) for v in text.split(",")]
    except ValueError:
        values = []
    if len(values) not in (3, 4) or not all(math.isfinite(v) for v in values):
        raise argparse.ArgumentTypeError(
            f"expected RANGE_M,VELOCITY_MPS,SNR_DB[,AZIMUTH_DEG], finite numbers (got "
            f"{text!r})")
    return values


def add_passive_parser(sub):
    pv = sub.add_parser("passive", help="passive radar channels (passive_sim)",
                        description="Passive radar recording of a reference and "
                        "surveillance channels (gnuradio.gpuradar.passive_sim), for "
                        "gpuradar-passive --input. Left out: gpuradar-passive's default "
                        "scene (DVB-T-like at 1 Msps, UHF, three targets).")
    pv.add_argument("--output", "-o", default="gpuradar_passive_rec",
                    help="recording prefix: <output>.sigmf-data/.sigmf-meta; a directory: "
                         "<dir>/gpuradar_passive_rec (default: %(default)s)")
    pv.add_argument("--nsamples", type=number(int, minimum=1, maximum=1 << 31),
                    default=1 << 16, help="samples per channel (default: %(default)s)")
    pv.add_argument("--illuminator", choices=passive_sim.ILLUMINATORS)
    pv.add_argument("--fs", type=number(above=0), help="sample rate (Hz)")
    pv.add_argument("--fc", type=number(above=0), help="carrier (Hz)")
    pv.add_argument("--nsurv", type=number(int, minimum=1, maximum=64),
                    help="surveillance channels")
    pv.add_argument("--ref-snr-db", type=number(), help="reference channel SNR (dB)")
    pv.add_argument("--dpi-db", type=number(), help="direct path to noise (dB)")
    pv.add_argument("--clutter-count", type=number(int, minimum=0, maximum=10000),
                    help="static clutter scatterers")
    pv.add_argument("--clutter-cnr-db", type=number(), help="clutter to noise (dB)")
    pv.add_argument("--target", action="append", type=parse_passive_target,
                    metavar="RANGE_M,VELOCITY_MPS,SNR_DB[,AZIMUTH_DEG]",
                    help="a target: bistatic range, bistatic velocity (closing +), SNR per "
                         "sample (repeat; replaces the default scene's)")
    pv.add_argument("--no-targets", action="store_true", help="no targets")
    for name in ("dc_offset_i", "dc_offset_q", "iq_gain_db", "iq_phase_deg",
                 "phase_noise_linewidth_hz", "adc_full_scale"):
        pv.add_argument("--" + name.replace("_", "-"), type=number(),
                        help=f"front end: {name} (passive_scene_source's; off by default)")
    pv.add_argument("--adc-bits", type=number(int, minimum=0, maximum=32),
                    help="front end: ADC bits per rail (0: none)")
    pv.add_argument("--seed", type=number(int, minimum=0), help="random seed")
    pv.add_argument("--quiet", "-q", action="store_true", help="print only the summary")
    pv.add_argument("--allow-large-output", action="store_true",
                    help="write even when the recording is larger than the free space")


def passive_scene(args):
    """gpuradar-passive's default scene with the options given."""
    sc = passive_sim.default_scene()
    for name in ("illuminator", "fs", "fc", "nsurv", "ref_snr_db", "dpi_db", "clutter_count",
                 "clutter_cnr_db", "dc_offset_i", "dc_offset_q", "iq_gain_db",
                 "iq_phase_deg", "phase_noise_linewidth_hz", "adc_bits", "adc_full_scale",
                 "seed"):
        if getattr(args, name) is not None:
            setattr(sc, name, getattr(args, name))
    if args.no_targets or args.target:
        targets = args.target or []
        sc.ranges_m = [t[0] for t in targets]
        sc.velocities_mps = [t[1] for t in targets]
        sc.snr_db = [t[2] for t in targets]
        sc.azimuths_deg = [t[3] if len(t) > 3 else 0.0 for t in targets] \
            if any(len(t) > 3 for t in targets) else []
    return sc


def run_passive(args):
    sc = passive_scene(args)
    try:
        sc.check()
    except ValueError as e:
        raise AppError(f"passive scene: {e}") from None
    output = app_util.output_prefix(args.output, "gpuradar_passive_rec")
    nbytes = args.nsamples * 8 * (1 + sc.nsurv)
    if not args.allow_large_output:
        app_util.check_free_space(output, nbytes + 65536)
    with app_util.StagedOutputs() as out:
        tmp = out.path(output + sigmf_io.DATA_SUFFIX)
        out.path(output + sigmf_io.META_SUFFIX)
        truth = passive_sim.write_recording(sigmf_io.base_of(tmp), sc, args.nsamples)
        out.commit()
    print(f"{PROG}: passive {sc.illuminator} scene: fs {sc.fs / 1e6:g} MHz, fc "
          f"{sc.fc / 1e6:g} MHz, 1 reference + {sc.nsurv} surveillance channel(s) x "
          f"{args.nsamples} samples; direct path {sc.dpi_db:g} dB, {sc.clutter_count} "
          f"clutter scatterers at {sc.clutter_cnr_db:g} dB")
    for t in truth:
        print(f"  target {t['target']}: bistatic {t['bistatic_range_m']:9.1f} m "
              f"{t['velocity_mps']:+8.2f} m/s  SNR {t['snr_db']:+.1f} dB/sample")
    print(f"  wrote {output}{sigmf_io.DATA_SUFFIX} and {output}{sigmf_io.META_SUFFIX}")
    print(f"  next: gpuradar-passive --input {output}")
    return 0


def add_stripmap_parser(sub):
    sm = sub.add_parser("stripmap", help="raw stripmap SAR echoes (stripmap_source)",
                        description="Stripmap SAR recording (raw echoes, "
                        "gnuradio.gpuradar.stripmap_sim), for gpuradar-sar --input. "
                        "Acquisition options left out come from --preset.")
    sm.add_argument("--output", "-o", default="gpuradar_stripmap",
                    help="recording prefix: <output>.sigmf-data/.sigmf-meta; a directory: "
                         "<dir>/gpuradar_stripmap (default: %(default)s)")
    sm.add_argument("--preset", default="default", choices=sorted(stripmap_sim.presets()),
                    help="embedded scene (tiny: for tests)")
    sm.add_argument("--allow-large-output", action="store_true",
                    help="write even when the recording is larger than the free space")
    for opt, _, check, text in STRIPMAP_OPTIONS:
        sm.add_argument(opt, type=check, help=text)
    sm.add_argument("--down-chirp", action="store_true", help="negative chirp rate")
    sm.add_argument("--npulses", type=number(int, minimum=1, maximum=1 << 24),
                    help="pulses to record")
    sm.add_argument("--noise", type=number(minimum=0),
                    help="noise std. dev. per component (target amplitude 1)")
    sm.add_argument("--first-pulse-y", type=number(), help="along-track y of pulse 0 (m)")
    sm.add_argument("--target", action="append", type=parse_stripmap_target,
                    metavar="X_M,Y_M[,Z_M[,AMPLITUDE]]",
                    help="a point target on the ground (repeat; replaces the preset's)")
    sm.add_argument("--no-targets", action="store_true",
                    help="no point targets (e.g. a distributed scene alone)")
    sm.add_argument("--scene", metavar="FILE.npy|patch",
                    help="a distributed scene: a 2-D .npy reflectivity image (rows along "
                         "track, columns across; real: amplitudes given random phases from "
                         "--seed, i.e. speckle; complex: as is), or 'patch', the built-in "
                         "64 x 64 four-level patch; each cell one scatterer")
    sm.add_argument("--scene-spacing", type=number(above=0), default=1.0,
                    help="scene cell spacing, both axes (m; default: %(default)s)")
    sm.add_argument("--scene-centre", type=parse_xy, metavar="X_M,Y_M",
                    help="ground position of the scene's centre (default: the swath's "
                         "centre at the middle of the strip)")
    sm.add_argument("--seed", type=number(int, minimum=0, maximum=2**32 - 1),
                    help="noise seed")
    add_motion_args(sm.add_argument_group(
        "navigation errors (off by default)",
        "the echoes come from the straight pass (the true track); <output>.track.f64 "
        "carries the measured track, true + errors, <output>.true_track.f64 the true one "
        "(models: gnuradio.gpuradar.sar_sim.MotionErrors; pulse times from --prf); "
        "gpuradar-sar's bp images from the measured track, csa assumes the straight pass"),
        prf=False)
    add_integer_args(sm)
    sm.add_argument("--quiet", "-q", action="store_true", help="no progress bar")


def stripmap_scene(args):
    sc = stripmap_sim.presets()[args.preset]
    for opt, name, _, _ in STRIPMAP_OPTIONS:
        v = getattr(args, opt[2:].replace("-", "_"))
        if v is not None:
            setattr(sc.acq, name, v)
    if args.down_chirp:
        sc.acq.up_chirp = False
    for name, field in (("npulses", "npulses"), ("noise", "noise_sigma"), ("seed", "seed"),
                        ("first_pulse_y", "first_pulse_y")):
        if getattr(args, name) is not None:
            setattr(sc, field, getattr(args, name))
    if args.target:
        sc.targets = list(args.target)
    if args.no_targets:
        sc.targets = []
    if args.scene:
        image = stripmap_sim.textured_patch() if args.scene == "patch" else None
        try:
            if image is None:
                image = stripmap_sim.load_reflectivity_image(args.scene)
            sc.reflectivity = stripmap_sim.reflectivity_from_image(
                image, sc.acq, sc.npulses, sc.first_pulse_y, args.scene_spacing,
                args.scene, args.scene_centre, sc.seed)
        except ValueError as e:
            raise AppError(f"--scene: {e}") from None
    if sc.npulses * sc.acq.nrange > stripmap_sim.MAX_SAMPLES:
        raise AppError(f"--npulses x --nrange: {sc.npulses} x {sc.acq.nrange} samples, "
                       f"more than {stripmap_sim.MAX_SAMPLES}")
    sc.motion = motion_errors(args)  # its prf: the acquisition's (--prf or the preset's)
    return sc


def scene_summary(r):
    if r is None:
        return ""
    x0, x1, y0, y1 = r.extent()
    return (f", scene {r.source} of {r.nx} x {r.ny} cells of {r.spacing:g} m over x "
            f"{x0:.0f}..{x1:.0f} m, y {y0:.0f}..{y1:.0f} m")


def run_stripmap(args):
    sc = stripmap_scene(args)
    a = sc.acq
    args.output = app_util.output_prefix(args.output, "gpuradar_stripmap")
    if not args.allow_large_output:
        # an integer recording is simulated as cf32_le beside it first
        extra = sigmf_io.sample_bytes(args.datatype) if args.datatype != "cf32_le" else 0
        app_util.check_free_space(args.output, sc.npulses * a.nrange * (8 + extra) + 65536)

    def progress(tb, src, total):
        return app_util.run_with_progress(tb, src.pulses, total, "simulating",
                                          enabled=False if args.quiet else None)

    with app_util.StagedOutputs() as out:
        tmp = out.path(args.output + stripmap_sim.DATA_SUFFIX)
        out.path(args.output + stripmap_sim.META_SUFFIX)
        if sc.motion is not None:
            out.path(args.output + stripmap_sim.TRACK_SUFFIX)
            out.path(args.output + stripmap_sim.TRUE_TRACK_SUFFIX)
        try:
            stripmap_sim.simulate(sc, stripmap_sim.base_of(tmp), progress, args.datatype,
                                  args.full_scale)
        except ValueError as e:  # the block's checks name the parameter
            raise AppError(f"stripmap_source: {e}") from None
        out.commit()
    far = a.r0 + (a.nrange - 1) * a.dr
    print(f"{PROG}: stripmap: {sc.npulses} pulses x {a.nrange} samples, fc "
          f"{a.fc / 1e9:g} GHz, B {a.bandwidth / 1e6:g} MHz, PRF {a.prf:g} Hz, "
          f"{a.velocity:g} m/s, slant range {a.r0:.0f}..{far:.0f} m, "
          f"{len(sc.targets)} point targets" + scene_summary(sc.reflectivity))
    print(f"  wrote {args.output}{stripmap_sim.DATA_SUFFIX} and "
          f"{args.output}{stripmap_sim.META_SUFFIX}")
    quantisation_summary(args.output, args.datatype)
    if sc.motion is not None:
        e = sc.measured_track() - sc.true_track()
        rms = " / ".join(f"{math.sqrt(float((e[:, i] ** 2).mean())):.4g}" for i in range(3))
        print(f"  navigation errors: measured - true track RMS {rms} m (x / y / z) in "
              f"{args.output}{stripmap_sim.TRACK_SUFFIX}; the true track in "
              f"{args.output}{stripmap_sim.TRUE_TRACK_SUFFIX}")
    print(f"  next: gpuradar-sar --input {args.output} --algorithm csa")
    return 0


def build_scenario(args):
    sc = pd_sim.scenario(args.preset)
    for name in SCENARIO_FIELDS:
        v = getattr(args, name)
        if v is not None:
            setattr(sc, name, v)
    if args.clutter:
        sc.clutter_start_m, sc.clutter_stop_m = args.clutter
    if args.target:
        sc.targets = list(args.target)
    if args.no_targets:
        sc.targets = []
    # A Doppler filter needs two pulses at least.
    for name, least in (("npulses", 2), ("ncpi", 1), ("nrange", 1)):
        if getattr(sc, name) < least:
            raise AppError(f"--{name}: must be >= {least} (got {getattr(sc, name)})")
    if sc.gate_start < 0:
        raise AppError(f"--gate-start: must be >= 0 (got {sc.gate_start})")
    if not sc.pri_samples > 0:
        raise AppError(f"--pri-samples: must be > 0 (got {sc.pri_samples})")
    if sc.gate_start + sc.nrange > int(sc.pri_samples):
        raise AppError(f"--gate-start + --nrange ({sc.gate_start} + {sc.nrange}) must be <= "
                       f"the PRI ({sc.pri_samples:g} samples)")
    if sc.pulse_width * sc.fs > sc.pri_samples:
        # Name the option the user gave (fs too high reads as a pulse-width error else).
        if args.fs is not None and args.pulse_width is None:
            raise AppError(f"--fs: must be in (0, {sc.pri_samples / sc.pulse_width:g}] Hz "
                           f"(PRI {sc.pri_samples:g} samples / pulse width "
                           f"{sc.pulse_width:g} s) (got {sc.fs:g}: the pulse would be "
                           f"{sc.pulse_width * sc.fs:g} samples, longer than the PRI)")
        raise AppError(f"--pulse-width: {sc.pulse_width:g} s is {sc.pulse_width * sc.fs:g} "
                       f"samples at fs {sc.fs:g} Hz, longer than the PRI "
                       f"({sc.pri_samples:g} samples): must be <= "
                       f"{sc.pri_samples / sc.fs:g} s")
    if not math.isfinite(sc.prf) or not math.isfinite(sc.max_unambiguous_velocity):
        raise AppError(f"--fs / --pri-samples / --fc: PRF {sc.prf:g} Hz, not usable")
    if sc.npulses * sc.ncpi * sc.pri_samples > MAX_SAMPLES:
        raise AppError(f"--ncpi x --npulses x --pri-samples: {sc.ncpi} x {sc.npulses} x "
                       f"{sc.pri_samples:g} samples, more than {MAX_SAMPLES}")
    return sc


def describe(sc):
    print(f"  radar: fc {sc.fc / 1e9:g} GHz, fs {sc.fs / 1e6:g} MHz, PRF {sc.prf:g} Hz "
          f"(PRI {sc.pri_samples:g} samples), LFM {sc.bandwidth / 1e6:g} MHz x "
          f"{sc.pulse_width * 1e6:g} us")
    hi = sc.r0 + (sc.nrange - 1) * sc.range_bin_m
    print(f"  gate: samples {sc.gate_start}..{sc.gate_start + sc.nrange - 1} of each PRI "
          f"({sc.r0:.0f}..{hi:.0f} m, {sc.range_bin_m:.2f} m/bin); {sc.ncpi} CPIs x "
          f"{sc.npulses} pulses = {sc.nsamples} samples "
          f"({sc.nsamples * sc.sample_bytes / 1e6:.1f} MB {sc.datatype}"
          + (f", full scale {sc.full_scale:g}" if sc.datatype != "cf32_le" else "") + ")")
    print(f"  noise power {sc.noise_power:g}" + (
        f", clutter {sc.clutter_cnr_db:g} dB CNR over {sc.clutter_start_m:g}.."
        f"{sc.clutter_stop_m:g} m" if sc.clutter_stop_m > sc.clutter_start_m else ""))
    for i, t in enumerate(sc.targets):
        print(f"  target {i}: {t.range_m:8.1f} m  {t.velocity_mps:+7.2f} m/s  "
              f"SNR {t.snr_db:+.1f} dB/sample")
    for w in sc.warnings():
        print(f"{PROG}: warning: {w}", file=sys.stderr)


def run_pulse_doppler(args):
    sc = build_scenario(args)
    modified = bool(args.target or args.no_targets or args.clutter or any(
        getattr(args, n) is not None for n in SCENARIO_FIELDS))
    print(f"{PROG}: pulse-Doppler scenario ({args.preset} preset"
          f"{', modified' if modified else ''})")
    describe(sc)
    if args.list:
        return 0

    def progress(tb, head, total):
        return app_util.run_with_progress(tb, lambda: head.nitems_written(0), total,
                                          "simulating", enabled=None if not args.quiet
                                          else False)

    output = app_util.output_prefix(args.output, "gpuradar_pd")
    if not args.allow_large_output:
        # The data, and the metadata: about 400 bytes of truth per target and CPI.
        app_util.check_free_space(output, sc.nsamples * sc.sample_bytes +
                                  400 * (len(sc.targets) + 1) * sc.ncpi + 65536)
    with app_util.StagedOutputs() as out:
        tmp_data = out.path(output + pd_sim.DATA_SUFFIX)
        out.path(output + pd_sim.META_SUFFIX)
        tmp_base = pd_sim.base_of(tmp_data)
        try:
            truth = pd_sim.simulate(sc, tmp_base, progress)
        except ValueError as e:  # the block's parameter checks name the parameter
            raise AppError(f"radar_scene_source: {e}") from None
        out.commit()
    args.output = output
    print(f"  wrote {args.output}{pd_sim.DATA_SUFFIX} and {args.output}{pd_sim.META_SUFFIX} "
          f"({len(truth)} truth annotations: {len(sc.targets)} targets x {sc.ncpi} CPIs)")
    clipped = sigmf_io.read_meta(args.output + pd_sim.META_SUFFIX)["global"].get(
        pd_sim.NS + "clipped_samples", 0)
    if clipped:
        print(f"{PROG}: warning: {clipped} of {sc.nsamples} samples clipped at full scale "
              f"{sc.full_scale:g} (--full-scale)", file=sys.stderr)
    print(f"  next: gpuradar-process --input {args.output}")
    return 0


def run_sar(args):
    args.output = app_util.output_prefix(args.output, "gpuradar_sar_ph")
    motion = motion_errors(args)
    history = app_util.sar_scenario(args, motion)
    if not args.allow_large_output:
        app_util.check_free_space(args.output, history.pulses.nbytes +
                                  2 * history.geometry.nbytes + 65536)
    with app_util.StagedOutputs() as out:
        tmp = out.path(args.output + sar_sim.DATA_SUFFIX)
        out.path(args.output + sar_sim.META_SUFFIX)
        out.path(args.output + sar_sim.GEOMETRY_SUFFIX)
        if motion is not None:
            out.path(args.output + sar_sim.TRUE_GEOMETRY_SUFFIX)
        try:
            sar_sim.write(sar_sim.base_of(tmp), history, datatype=args.datatype,
                          full_scale=args.full_scale)
        except ValueError as e:  # e.g. a non-finite value for the metadata
            raise AppError(f"SAR scenario: {e}") from None
        out.commit()
    print(f"{PROG}: SAR {args.scenario} phase history: {history.npulses} pulses x "
          f"{history.nbins} bins, f0 {args.f0 / 1e9:g} GHz, B {args.bandwidth / 1e6:g} MHz, "
          f"{len(history.targets)} point targets")
    print(f"  wrote {args.output}{sar_sim.DATA_SUFFIX}, {args.output}{sar_sim.META_SUFFIX} "
          f"and {args.output}{sar_sim.GEOMETRY_SUFFIX}")
    quantisation_summary(args.output, args.datatype)
    if motion is not None:
        e = history.geometry[:, :3] - history.true_geometry[:, :3]
        rms = " / ".join(f"{math.sqrt(float((e[:, i] ** 2).mean())):.4g}" for i in range(3))
        print(f"  navigation errors: measured - true track RMS {rms} m (x / y / z); the "
              f"true track in {args.output}{sar_sim.TRUE_GEOMETRY_SUFFIX}")
    print(f"  next: gpuradar-sar --input {args.output}")
    return 0


def main(argv=None):
    args = parse_args(argv)
    run = {"sar": run_sar, "stripmap": run_stripmap, "passive": run_passive}.get(
        args.command, run_pulse_doppler)
    return app_util.run_app(PROG, lambda: run(args), (pd_sim.RecordingError,))


if __name__ == "__main__":
    sys.exit(app_util.main_guard(main))
