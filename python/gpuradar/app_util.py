#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""Small helpers shared by the command-line apps (gpuradar-sim, gpuradar-process).

- ``AppError``: an error the app reports as one line and exits with a status != 0;
- ``Progress``: a text progress bar on stderr (only when stderr is a terminal, or forced);
- ``run_with_progress``: runs a top block, updating a Progress from a counter;
- ``StagedOutputs``: files written under temporary names in the destination directory
  and renamed into place only when everything succeeded (nothing half-written is left);
- ``run_app``: an app's main() body with its errors turned into one line and a status;
- ``add_sar_scenario_args`` / ``sar_scenario``: the SAR simulation options of
  gpuradar-sim sar and gpuradar-sar, and the scenario they describe.
"""

import os
import shutil
import sys
import tempfile
import time


class AppError(Exception):
    """A user-facing error: the message names the file and the field or parameter."""


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
    Returns the wall time (s) from start to the end of wait()."""
    bar = Progress(total, label, enabled)
    t0 = time.perf_counter()
    tb.start()
    try:
        _wait(tb, bar, counter, poll_s)
    except BaseException:  # e.g. KeyboardInterrupt: stop the flowgraph's threads first
        tb.stop()
        tb.wait()
        raise
    elapsed = time.perf_counter() - t0
    bar.close()
    return elapsed


def _wait(tb, bar, counter, poll_s):
    if bar.enabled:
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
    else:
        tb.wait()


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
        for tmp, final in self._staged:
            os.replace(tmp, final)
            self.committed.append(final)
        self._staged = []

    def cleanup(self):
        for d in self._dirs.values():
            shutil.rmtree(d, ignore_errors=True)
        self._dirs = {}

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.cleanup()
        return False


def png_size(path):
    """(width, height) of a PNG from its IHDR chunk; raises ValueError if not a PNG."""
    with open(path, "rb") as f:
        head = f.read(24)
    if len(head) < 24 or head[:8] != b"\x89PNG\r\n\x1a\n" or head[12:16] != b"IHDR":
        raise ValueError(f"{path}: not a PNG file")
    return int.from_bytes(head[16:20], "big"), int.from_bytes(head[20:24], "big")


def run_app(prog, body, errors=()):
    """Returns body()'s exit status; AppError, `errors` and OSError print one line
    ``<prog>: error: ...`` and give 2, Ctrl-C gives 130."""
    try:
        return body()
    except (AppError,) + tuple(errors) as e:
        print(f"{prog}: error: {e}", file=sys.stderr)
        return 2
    except OSError as e:
        print(f"{prog}: error: {e.filename or ''}: {e.strerror}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"{prog}: interrupted: nothing written", file=sys.stderr)
        return 130


def add_sar_scenario_args(group, seed=False):
    """The options of gnuradio.gpuradar.sar_sim.scenario (--seed only when `seed`)."""
    group.add_argument("--scenario", default="spotlight",
                       choices=["spotlight", "stripmap", "circular"])
    group.add_argument("--npulses", type=int, default=512)
    group.add_argument("--nbins", type=int, default=1024)
    group.add_argument("--f0", type=float, default=10e9, help="centre frequency (Hz)")
    group.add_argument("--bandwidth", type=float, default=300e6, help="bandwidth (Hz)")
    group.add_argument("--standoff", type=float, default=2000.0,
                       help="ground distance of the path from the scene (m)")
    group.add_argument("--altitude", type=float, default=500.0, help="(m)")
    group.add_argument("--image-size", type=float, default=40.0, help="scene width (m)")
    group.add_argument("--noise", type=float, default=0.01,
                       help="noise std. dev. per component and sample (target amplitude 1)")
    if seed:
        group.add_argument("--seed", type=int, default=1)


def sar_scenario(args):
    """sar_sim.scenario() of the options add_sar_scenario_args added."""
    from . import sar_sim
    return sar_sim.scenario(args.scenario, npulses=args.npulses, nbins=args.nbins,
                            f0=args.f0, bandwidth=args.bandwidth, standoff=args.standoff,
                            altitude=args.altitude, image_size=args.image_size,
                            noise_sigma=args.noise, seed=getattr(args, "seed", 1))
