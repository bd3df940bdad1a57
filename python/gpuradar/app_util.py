#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""Small helpers shared by the command-line apps (gpuradar-sim, gpuradar-process,
gpuradar-sar).

- ``AppError``: an error the app reports as one line and exits with a status != 0;
- ``ArgumentParser``: argparse with ``--version`` and one-line errors (status 2);
  ``number``: an argparse type taking engineering notation (``10M``, gnuradio.eng_arg)
  and checking the value is finite and in range;
- ``Progress``: a text progress bar on stderr (only when stderr is a terminal, or forced);
- ``run_with_progress``: runs a top block, updating a Progress from a counter;
- ``StagedOutputs``: files written under temporary names in the destination directory
  and renamed into place only when everything succeeded (nothing half-written is left);
- ``run_app``: an app's main() body with its errors turned into one line and a status;
- ``add_sar_scenario_args`` / ``sar_scenario``: the SAR simulation options of
  gpuradar-sim sar and gpuradar-sar, and the scenario they describe.
"""

import argparse
import math
import os
import shutil
import signal
import sys
import tempfile
import time

from gnuradio import eng_arg

from ._version import __version__

#: Exit status of bad input (argparse's own), of Ctrl-C and of SIGTERM (128 + signal).
EXIT_BAD_INPUT = 2
EXIT_INTERRUPTED = 128 + signal.SIGINT
EXIT_TERMINATED = 128 + signal.SIGTERM


class AppError(Exception):
    """A user-facing error: the message names the file and the field or parameter."""


class Terminated(BaseException):
    """SIGTERM, raised in the main thread so that staged outputs are removed on the way
    out (a BaseException like KeyboardInterrupt: no `except Exception` swallows it)."""


class ArgumentParser(argparse.ArgumentParser):
    """argparse with ``--version`` (gpuradar.__version__) and errors as one line
    ``<prog>: error: <message> (see --help)`` with status 2."""

    def __init__(self, *args, version=True, **kwargs):
        super().__init__(*args, **kwargs)
        if version:
            self.add_argument("--version", action="version",
                              version=f"%(prog)s (gr-gpuradar) {__version__}")

    def error(self, message):
        self.exit(EXIT_BAD_INPUT, f"{self.prog}: error: {message} (see --help)\n")


def number(kind=float, above=None, minimum=None, maximum=None):
    """An argparse type: a finite number in engineering notation (``10M``, ``2.5k``,
    ``1e-6``; gnuradio.eng_arg.eng_float), for kind=int a whole one (also ``0x10``, as
    eng_arg.intx), with optional bounds: ``--fs 0`` is an error naming the range."""
    bounds = ", ".join(t for t in (
        f"> {above:g}" if above is not None else "",
        f">= {minimum:g}" if minimum is not None else "",
        f"<= {maximum:g}" if maximum is not None else "") if t)

    def parse(text):
        v = _parse_number(text, kind)
        if (above is not None and not v > above) or (minimum is not None and v < minimum) \
                or (maximum is not None and v > maximum):
            raise argparse.ArgumentTypeError(f"must be {bounds} (got {text!r})")
        return v

    parse.__name__ = "integer" if kind is int else "number"
    return parse


def _parse_number(text, kind):
    what = "a whole number" if kind is int else "a number"
    if kind is int:
        try:
            return eng_arg.intx(text)
        except (argparse.ArgumentTypeError, ValueError, TypeError):
            pass
    try:  # plain numbers first: eng_float reads "nan" as "na" nano
        v = float(text)
    except ValueError:
        v = None
    try:
        v = eng_arg.eng_float(text) if v is None else v
    except (argparse.ArgumentTypeError, ValueError, TypeError, IndexError):
        raise argparse.ArgumentTypeError(
            f"expected {what}, engineering notation allowed, e.g. 10M (got {text!r})") \
            from None
    if not math.isfinite(v):
        raise argparse.ArgumentTypeError(f"must be a finite number (got {text!r})")
    if kind is int:
        if v != math.floor(v):
            raise argparse.ArgumentTypeError(f"expected {what} (got {text!r})")
        return int(v)
    return v


def add_recording_args(parser, name, simulated, outputs):
    """--input, --output and --backend, as every app that reads a recording takes them:
    `simulated` says what runs without --input, `outputs` the files <output> names."""
    parser.add_argument("--input", "-i", metavar="RECORDING",
                        help="recording (<base>, <base>.sigmf-meta or .sigmf-data); "
                             f"default: {simulated}")
    parser.add_argument("--output", "-o", default=name,
                        help=f"output prefix: {outputs}; a directory: <dir>/{name} "
                             "(default: %(default)s)")
    parser.add_argument("--backend", default="auto", choices=["auto", "cuda", "cpu"])


def output_prefix(text, default_name, option="--output"):
    """The output prefix an --output value names: a directory (an existing one, or a
    value ending in '/') means <directory>/<default_name>."""
    if not text:
        raise AppError(f"{option}: empty (give a file prefix, e.g. {default_name})")
    if text.endswith(("/", os.sep)) or os.path.isdir(text):
        return os.path.join(text, default_name)
    # The outputs are text + a suffix beside it: a device, FIFO or socket as the prefix
    # (-o /dev/full) would put them into /dev; a file as the folder cannot hold them.
    if os.path.exists(text) and not os.path.isfile(text):
        raise AppError(f"{option}: {text} is a device, FIFO or socket, not a directory or "
                       f"a file prefix (e.g. results/{default_name})")
    folder = os.path.dirname(os.path.abspath(text))
    while not os.path.exists(folder) and os.path.dirname(folder) != folder:
        folder = os.path.dirname(folder)  # the nearest part of the path that exists
    if not os.path.isdir(folder):
        raise AppError(f"{option}: {folder} is not a directory")
    return text


def check_free_space(prefix, nbytes, option="--allow-large-output"):
    """Refuses to start writing nbytes next to prefix when the file system has less free
    (the override `option` skips the check)."""
    directory = os.path.dirname(os.path.abspath(prefix))
    if not os.path.isdir(directory):
        raise AppError(f"{directory}: output directory does not exist")
    try:
        free = shutil.disk_usage(directory).free
    except OSError as e:
        raise AppError(f"{directory}: cannot check the free space ({e.strerror})") from None
    if nbytes > free:
        raise AppError(f"{directory}: the outputs need {nbytes / 1e6:.1f} MB, only "
                       f"{free / 1e6:.1f} MB free (fewer CPIs, or {option} to try anyway)")


class Progress:
    """``[#####.....]  42%  label`` on stderr, redrawn at most every `interval` s."""

    WIDTH = 30  #: characters of the bar

    def __init__(self, total, label="", enabled=None, stream=None, interval=0.1):
        self.total = max(1, int(total))
        self.label = label
        self.stream = stream or sys.stderr
        self.enabled = (self.stream.isatty() if enabled is None else bool(enabled))
        self.interval = interval
        self._last = 0.0
        self._shown = False

    def update(self, done, force=False):
        if not self.enabled:
            return
        now = time.monotonic()
        if not force and now - self._last < self.interval:
            return
        self._last = now
        frac = min(1.0, max(0.0, done / self.total))
        n = int(round(frac * self.WIDTH))
        self.stream.write(f"\r[{'#' * n}{'.' * (self.WIDTH - n)}] {100 * frac:5.1f}%  "
                          f"{self.label}")
        self.stream.flush()
        self._shown = True

    def close(self):
        if self.enabled and self._shown:
            self.update(self.total, force=True)
            self.stream.write("\n")
            self.stream.flush()


def run_with_progress(tb, counter, total, label, enabled=None, poll_s=0.05):
    """tb.start(); poll counter() (items done, of total) until tb.wait() returns.
    Returns the wall time (s) from start to the end of wait(). The main thread waits in
    Python (tb.wait() runs in a helper thread), so Ctrl-C and SIGTERM stop the flowgraph
    at once instead of when it ends."""
    bar = Progress(total, label, enabled)
    t0 = time.perf_counter()
    try:
        # start() inside: a Ctrl-C that lands as start() returns must stop the threads
        # too. Left running, they wait for the GIL that the top block's destructor holds
        # while it joins them (a hang), or outlive the interpreter (a crash).
        tb.start()
        _wait(tb, bar, counter, poll_s)
    except BaseException:  # e.g. KeyboardInterrupt: stop the flowgraph's threads first
        _stop_and_wait(tb)
        raise
    elapsed = time.perf_counter() - t0
    bar.close()
    return elapsed


def _stop_and_wait(tb):
    """tb.stop() and tb.wait(), carried through to the end by a second Ctrl-C or SIGTERM
    (the first one is already on its way out)."""
    while True:
        try:
            tb.stop()
            tb.wait()
            return
        except (KeyboardInterrupt, Terminated):
            continue


def _wait(tb, bar, counter, poll_s):
    import threading
    finished = threading.Event()

    def waiter():
        tb.wait()
        finished.set()

    th = threading.Thread(target=waiter, daemon=True)
    th.start()
    while not finished.wait(poll_s):
        bar.update(counter())
    th.join()


class StagedOutputs:
    """Collects output files under temporary names, then moves them into place at once.

    with StagedOutputs() as out:
        tmp = out.path("/dest/result.json")   # write to tmp (same directory as the target)
        ...
        out.commit()                          # renames every tmp to its final name
    Leaving the block without commit() (an exception) removes the temporaries: nothing
    half-written is left under a final name. A file's temporary name keeps the final
    base name (in a hidden temporary directory beside it), so files that refer to each
    other by name stay consistent.
    """

    def __init__(self):
        self._staged = []   # (tmp path, final path)
        self._dirs = {}     # destination directory -> temporary directory
        self.committed = []

    def path(self, final):
        final = os.path.abspath(final)
        dest = os.path.dirname(final)
        if not os.path.isdir(dest):
            raise AppError(f"{dest}: output directory does not exist")
        if os.path.isdir(final):
            raise AppError(f"{final}: is a directory (the output would replace it)")
        if dest not in self._dirs:
            try:
                self._dirs[dest] = tempfile.mkdtemp(prefix=".gpuradar-tmp-", dir=dest)
            except OSError as e:
                raise AppError(f"{dest}: cannot write there ({e.strerror})") from None
        tmp = os.path.join(self._dirs[dest], os.path.basename(final))
        self._staged.append((tmp, final))
        return tmp

    def commit(self):
        for tmp, final in self._staged:
            if not os.path.exists(tmp):
                raise AppError(f"{final}: not written")
        # Ctrl-C or SIGTERM between two renames would leave a partial set: held off
        # until every file is in place.
        held = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
        try:
            for tmp, final in self._staged:
                try:
                    os.replace(tmp, final)
                except OSError as e:
                    raise AppError(f"{final}: cannot write ({e.strerror})") from None
                self.committed.append(final)
            self._staged = []
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, held)

    def cleanup(self):
        for d in self._dirs.values():
            shutil.rmtree(d, ignore_errors=True)
        self._dirs = {}

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        self.cleanup()
        if isinstance(exc, OSError) and not isinstance(exc, FileNotFoundError):
            # A write failed (disk full, file too large): name the output, not its
            # temporary.
            finals = dict(self._staged)
            if exc.filename in finals:
                raise AppError(f"{finals[exc.filename]}: cannot write "
                               f"({exc.strerror or exc})") from None
        return False


def png_size(path):
    """(width, height) of a PNG from its IHDR chunk; raises ValueError if not a PNG."""
    with open(path, "rb") as f:
        head = f.read(24)
    if len(head) < 24 or head[:8] != b"\x89PNG\r\n\x1a\n" or head[12:16] != b"IHDR":
        raise ValueError(f"{path}: not a PNG file")
    return int.from_bytes(head[16:20], "big"), int.from_bytes(head[20:24], "big")


def _raise_terminated(signum, frame):
    raise Terminated()


def run_app(prog, body, errors=()):
    """Returns body()'s exit status. AppError, `errors` (the recording readers'
    RecordingError), OSError and MemoryError print one line ``<prog>: error: ...`` and
    give 2; Ctrl-C gives 130 and SIGTERM 143, after the staged outputs were removed (the
    `with StagedOutputs()` blocks unwind)."""
    previous = signal.signal(signal.SIGTERM, _raise_terminated)
    try:
        return body()
    except (AppError,) + tuple(errors) as e:
        print(f"{prog}: error: {e}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except OSError as e:
        where = f"{e.filename}: " if e.filename else ""
        print(f"{prog}: error: {where}{e.strerror or e}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except MemoryError:
        print(f"{prog}: error: out of memory (smaller sizes?)", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        print(f"{prog}: interrupted: unfinished outputs removed", file=sys.stderr)
        return EXIT_INTERRUPTED
    except Terminated:
        print(f"{prog}: terminated: unfinished outputs removed", file=sys.stderr)
        return EXIT_TERMINATED
    finally:
        signal.signal(signal.SIGTERM, previous)


def main_guard(main):
    """sys.exit(main_guard(main)) in an app: Ctrl-C before run_app is reached (while
    parsing, importing) still exits 130 without a traceback."""
    try:
        return main()
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED


def add_sar_scenario_args(group, seed=False):
    """The options of gnuradio.gpuradar.sar_sim.scenario (--seed only when `seed`).
    Sizes left out (None) come from --preset (sar_sim.PRESETS); every value is checked
    by argparse (finite, in range)."""
    group.add_argument("--preset", default="default", choices=sorted(_sar_presets()),
                       help="embedded scenario sizes and noise (examples: the one "
                            "examples/sar_offline.grc reads; tiny: for tests)")
    group.add_argument("--scenario", default="spotlight",
                       choices=["spotlight", "stripmap", "circular"])
    group.add_argument("--npulses", type=number(int, minimum=2, maximum=1 << 20),
                       help="pulses (default: the preset's)")
    group.add_argument("--nbins", type=number(int, minimum=2, maximum=1 << 20),
                       help="range bins per pulse (default: the preset's)")
    group.add_argument("--f0", type=number(above=0), default=10e9,
                       help="centre frequency (Hz; default: 10G)")
    group.add_argument("--bandwidth", type=number(above=0), default=300e6,
                       help="bandwidth (Hz; default: 300M)")
    group.add_argument("--standoff", type=number(above=0), default=2000.0,
                       help="ground distance of the path from the scene (m; default: 2k)")
    group.add_argument("--altitude", type=number(minimum=0), default=500.0,
                       help="(m; default: %(default)s)")
    group.add_argument("--image-size", type=number(above=0),
                       help="scene width (m; default: the preset's)")
    group.add_argument("--noise", type=number(minimum=0),
                       help="noise std. dev. per component and sample, target amplitude 1 "
                            "(default: the preset's)")
    if seed:
        group.add_argument("--seed", type=number(int, minimum=0, maximum=2**63 - 1),
                           default=1)


def _sar_presets():
    from . import sar_sim
    return sar_sim.PRESETS


#: Largest SAR simulation (samples) and image (pixels) the apps build in memory.
MAX_SAR_SAMPLES = 1 << 27
MAX_SAR_PIXELS = 1 << 24


def sar_scenario(args, motion=None):
    """sar_sim.scenario() of the options add_sar_scenario_args added (sizes checked
    before anything is allocated), with navigation errors `motion` (sar_sim.MotionErrors)
    when given."""
    from . import sar_sim
    p = dict(sar_sim.PRESETS[args.preset])
    for name in ("npulses", "nbins", "image_size", "noise"):
        if getattr(args, name) is not None:
            p[name] = getattr(args, name)
    if p["npulses"] * p["nbins"] > MAX_SAR_SAMPLES:
        raise AppError(f"--npulses x --nbins: {p['npulses']} x {p['nbins']} samples, more "
                       f"than the {MAX_SAR_SAMPLES} simulated here")
    pixel = sar_sim.SPEED_OF_LIGHT / (2 * args.bandwidth) / 3
    side = p["image_size"] / pixel
    if side * side > MAX_SAR_PIXELS:
        raise AppError(f"--image-size: {p['image_size']:g} m at {pixel:.3g} m pixels (a "
                       f"third of c / (2 --bandwidth)) is {side:.3g} x {side:.3g} pixels, "
                       f"more than {MAX_SAR_PIXELS}")
    try:
        return sar_sim.scenario(args.scenario, npulses=p["npulses"], nbins=p["nbins"],
                                f0=args.f0, bandwidth=args.bandwidth,
                                standoff=args.standoff, altitude=args.altitude,
                                image_size=p["image_size"], noise_sigma=p["noise"],
                                seed=getattr(args, "seed", 1), motion=motion)
    except ValueError as e:
        raise AppError(f"SAR scenario: {e}") from None
