#!/usr/bin/python3
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""Pictures of the examples for the docs, made under a virtual X server.

  tools/screenshot_examples.py [--out docs/images] [--build build] [--layout-only]
                               [example.grc ...]

For each example (default: examples/*.grc):
  * grc_<example>.png: the flowgraph as GNU Radio Companion draws it (GRC's own canvas
    code and its File > Screen Capture routine, with this module's block YAML), after
    checking that no two blocks (or a block and a comment) overlap; an overlap is an
    error naming both blocks;
  * run_<example>.png (offline QT GUI examples, not with --layout-only): the running
    flowgraph's window, grabbed by tools/check_grc_display.py after it has checked the
    targets' pixels on the recordings of the examples' ctest runs (fixture
    grc_recordings, run first when missing).

Without $DISPLAY it re-runs itself under xvfb-run. Needs the build tree (--build) for
the Python module and the recordings.
"""

import argparse
import glob
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
#: examples run for a window screenshot, with the arguments their ctest run uses
RUN_ARGS = {
    "pulse_doppler_offline": ["--recording", "{rec}/pulse_doppler.sigmf-data",
                              "--playback-rate", "2e6", "--exit-when-done", "1",
                              "--backend", "cpu"],
    "sar_offline": ["--recording", "{rec}/sar", "--exit-when-done", "1", "--backend", "cpu"],
}
#: screenshots wider than this are scaled down (kept small in the repository)
MAX_WIDTH = 1400


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("examples", nargs="*", help="default: examples/*.grc")
    p.add_argument("--out", default=os.path.join(ROOT, "docs", "images"))
    p.add_argument("--build", default=os.path.join(ROOT, "build"))
    p.add_argument("--layout-only", action="store_true",
                   help="only check the layout and draw the canvas; run nothing")
    p.add_argument("--no-png", action="store_true", help="check the layout, write nothing")
    return p.parse_args(argv)


def under_x(argv):
    """Re-executes under xvfb-run when there is no X display."""
    if os.environ.get("DISPLAY"):
        return None
    cmd = ["xvfb-run", "-a", "-s", "-screen 0 1600x1200x24", sys.executable,
           os.path.abspath(__file__)] + argv
    return subprocess.call(cmd)


def grc_platform():
    from gnuradio import gr
    from gnuradio.grc.gui.Platform import Platform
    os.environ["GRC_BLOCKS_PATH"] = os.path.join(ROOT, "grc")
    platform = Platform(version=gr.version(),
                        version_parts=(gr.major_version(), gr.api_version(),
                                       gr.minor_version()),
                        prefs=gr.prefs(), install_prefix=gr.prefix())
    platform.build_library()
    return platform


def boxes(flow_graph):
    """(name, (x0, y0, x1, y1)) of every block and of every block comment drawn."""
    out = []
    for block in flow_graph.blocks:
        out.append((block.name, block.get_extents()))
        if block.comment:
            out.append((block.name + " (comment)", block.get_extents_comment()))
    return out


def overlaps(named_boxes):
    """Pairs of names whose boxes intersect (a block and its own comment excepted)."""
    found = []
    for i, (a, (ax0, ay0, ax1, ay1)) in enumerate(named_boxes):
        for b, (bx0, by0, bx1, by1) in named_boxes[i + 1:]:
            if a.split(" ")[0] == b.split(" ")[0]:
                continue
            if ax0 < bx1 and bx0 < ax1 and ay0 < by1 and by0 < ay1:
                found.append((a, b))
    return found


def draw_canvas(platform, grc, png):
    """Loads grc as GRC does, checks the layout, writes the canvas PNG (or None)."""
    import cairo
    from gnuradio.grc.gui import Utils
    fg = platform.make_flow_graph(grc)
    fg.rewrite()
    fg.validate()
    surface = cairo.ImageSurface(cairo.FORMAT_ARGB32, 16, 16)
    cr = cairo.Context(surface)
    fg.update_elements_to_draw()
    fg.create_labels(cr)
    fg.create_shapes()
    bad = overlaps(boxes(fg))
    errors = [] if fg.is_valid() else ["GRC reports errors: " + "; ".join(
        str(e) for e in fg.get_error_messages())]
    errors += [f"{a} overlaps {b}" for a, b in bad]
    if png and not errors:
        Utils.make_screenshot(fg, png)
        shrink(png)
    return errors


def shrink(png):
    """Scales a PNG down to MAX_WIDTH (Qt, already loaded by the display checks)."""
    from PyQt5 import QtCore, QtGui
    image = QtGui.QImage(png)
    if image.width() > MAX_WIDTH:
        image = image.scaledToWidth(MAX_WIDTH, QtCore.Qt.SmoothTransformation)
        image.save(png, "PNG")


def run_example(grc, out_png, build):
    """Compiles and runs grc with tools/check_grc_display.py; returns its exit code."""
    name = os.path.splitext(os.path.basename(grc))[0]
    rec = os.path.join(build, "examples", "recordings")
    if not os.path.exists(os.path.join(rec, "pulse_doppler.sigmf-meta")):
        # the recordings of the examples' own ctest runs (test fixture grc_recordings)
        subprocess.check_call(["ctest", "--test-dir", build, "-R", "^grc_recordings$",
                               "--output-on-failure"])
    with tempfile.TemporaryDirectory() as tmp:
        args = [a.format(rec=rec) for a in RUN_ARGS[name]]
        return subprocess.call([os.path.join(ROOT, "tools", "run_grc_example.sh"), grc, tmp,
                                os.path.join(build, "test_modules"), "--check-display",
                                rec, "--screenshot", out_png, "--"] + args)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    rc = under_x(argv)
    if rc is not None:
        return rc
    args = parse_args(argv)
    sys.path.insert(0, os.path.join(args.build, "test_modules"))
    os.environ["PYTHONPATH"] = os.path.join(args.build, "test_modules")
    examples = args.examples or sorted(glob.glob(os.path.join(ROOT, "examples", "*.grc")))
    os.makedirs(args.out, exist_ok=True)
    platform = grc_platform()
    failed = 0
    for grc in examples:
        name = os.path.splitext(os.path.basename(grc))[0]
        png = None if args.no_png else os.path.join(args.out, f"grc_{name}.png")
        errors = draw_canvas(platform, grc, png)
        for e in errors:
            print(f"{name}: {e}", file=sys.stderr)
        failed += bool(errors)
        if not errors and png:
            print(f"{name}: {png}")
        if name in RUN_ARGS and not (args.layout_only or args.no_png):
            shot = os.path.join(args.out, f"run_{name}.png")
            if run_example(grc, shot, args.build) != 0:
                print(f"{name}: the running flowgraph failed its display check",
                      file=sys.stderr)
                failed += 1
            else:
                shrink(shot)
                print(f"{name}: {shot}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
