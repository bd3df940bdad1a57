#!/usr/bin/python3
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""Pictures of the examples for the docs, made under a virtual X server.

  tools/screenshot_examples.py [--out docs/images] [--build build] [--layout-only]
                               [--no-png] [--relayout] [--backend auto|cuda|cpu]
                               [example.grc ...]

For each example (default: examples/*.grc):
  * grc_<example>.png: the flowgraph as GNU Radio Companion draws it (GRC's own canvas
    code and its File > Screen Capture routine, with this module's block YAML), after
    checking that no two blocks (or a block and a comment) overlap; an overlap is an
    error naming both blocks;
  * run_<example>.png (offline QT GUI examples, not with --layout-only): the running
    flowgraph's window, grabbed by tools/check_grc_display.py after it has checked the
    targets' pixels against the recordings of the examples' ctest runs (fixture
    grc_recordings, run first when missing) or the example's own scene (loopback,
    tracking, array_beamforming),
    with its blocks on --backend (default auto: CUDA where a GPU is usable).

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
#: examples run for a window screenshot, with the arguments their ctest run uses (the
#: backend is --backend's)
RUN_ARGS = {
    "pulse_doppler_offline": ["--recording", "{rec}/gpuradar_pd.sigmf-data",
                              "--playback-rate", "2e6", "--exit-when-done", "1"],
    "sar_offline": ["--recording", "{rec}/gpuradar_sar_ph", "--exit-when-done", "1"],
    "pulse_doppler_loopback": ["--ncpi", "8", "--playback-rate", "1e9", "--exit-when-done",
                               "1"],
    "pulse_doppler_tracking": ["--ncpi", "8", "--playback-rate", "1e9", "--exit-when-done",
                               "1"],
    "array_beamforming": ["--exit-when-done", "1"],
}
#: the values every example's backend parameter accepts (the blocks' own check)
BACKENDS = ("auto", "cuda", "cpu")
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
    p.add_argument("--relayout", action="store_true",
                   help="lay the examples out again (settings on top, then the signal "
                        "flow left to right), save them and stop (run again to check "
                        "and draw them)")
    p.add_argument("--backend", default="auto", choices=BACKENDS,
                   help="backend of the examples run for a window screenshot "
                        "(default: %(default)s)")
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


def draw_canvas(flow_graph, png):
    """Checks the layout of a flowgraph open in GRC, writes its canvas PNG (no PNG when
    png is None or the layout is bad); returns the errors."""
    import cairo
    from gnuradio.grc.gui import Utils
    surface = cairo.ImageSurface(cairo.FORMAT_ARGB32, 16, 16)
    cr = cairo.Context(surface)
    flow_graph.update_elements_to_draw()
    flow_graph.create_labels(cr)
    flow_graph.create_shapes()
    errors = [f"{b.name}: " + "; ".join(" ".join(str(m).split()) for m in b.get_error_messages())
              for b in flow_graph.blocks if not b.is_valid()]
    errors += [f"{a} overlaps {b}" for a, b in overlaps(boxes(flow_graph))]
    if png and not errors:
        Utils.make_screenshot(flow_graph, png)
        shrink(png)
    return errors


#: canvas width the layout fills before starting a new row, gaps between blocks (px)
LAYOUT_WIDTH, GAP_X, GAP_Y, GRID = 1500, 48, 40, 8
#: blocks that are not part of the signal flow: laid out in the top rows
SETTINGS_BLOCKS = ("options", "parameter", "variable", "snippet", "import")


def block_box(block):
    """(x0, y0, x1, y1) of a block with its comment."""
    x0, y0, x1, y1 = block.get_extents()
    if block.comment:
        cx0, cy0, cx1, cy1 = block.get_extents_comment()
        x0, y0, x1, y1 = min(x0, cx0), min(y0, cy0), max(x1, cx1), max(y1, cy1)
    return x0, y0, x1, y1


def signal_chains(flow_graph, blocks):
    """The blocks as chains that follow the data (depth first from the sources, a new
    chain where a branch starts), message-only blocks (displays) as the last chain."""
    feeds = {b: [] for b in blocks}
    fed = set()
    for c in flow_graph.connections:
        src, snk = c.source_block, c.sink_block
        if (c.source_port.domain != "message" and src in feeds and snk in feeds
                and snk not in feeds[src]):
            feeds[src].append(snk)
            fed.add(snk)
    streaming = [b for b in blocks if any(p.domain != "message" and not p.hidden
                                          for p in b.sources + b.sinks)]
    chains, seen = [], set()
    for start in [b for b in streaming if b not in fed] + streaming:
        chain, b = [], start
        while b is not None and b not in seen:
            seen.add(b)
            chain.append(b)
            b = next((n for n in feeds[b] if n not in seen), None)
        if chain:
            chains.append(chain)
    rest = [b for b in blocks if b not in seen]
    return chains + ([rest] if rest else [])


def pack(blocks, y, boxes):
    """Places blocks left to right from (GRID, y), wrapping at LAYOUT_WIDTH; returns the
    y below the last row."""
    x, row_bottom = GRID, y
    for b in blocks:
        x0, y0, x1, y1 = boxes[b]
        bx, by = b.coordinate
        w, h = x1 - x0, y1 - y0
        if x > GRID and x + w > LAYOUT_WIDTH:
            x, y = GRID, row_bottom + GAP_Y
        # keep the block's offset inside its own box (ports stick out to the left)
        b.coordinate = (int(x + bx - x0) // GRID * GRID + GRID,
                        int(y + by - y0) // GRID * GRID + GRID)
        x += w + GAP_X
        row_bottom = max(row_bottom, y + h + GRID)
    return row_bottom + GAP_Y


def relayout(flow_graph):
    """Settings blocks in rows at the top, below them each chain of signal blocks left
    to right in data-flow order, sized by GRC's own drawing (nothing overlaps)."""
    import cairo
    cr = cairo.Context(cairo.ImageSurface(cairo.FORMAT_ARGB32, 16, 16))
    flow_graph.update_elements_to_draw()
    flow_graph.create_labels(cr)
    flow_graph.create_shapes()
    blocks = list(flow_graph.blocks)
    boxes = {b: block_box(b) for b in blocks}
    settings = [b for b in blocks if b.key in SETTINGS_BLOCKS]
    settings.sort(key=lambda b: SETTINGS_BLOCKS.index(b.key))
    y = pack(settings, GRID, boxes) + GAP_Y
    for chain in signal_chains(flow_graph, [b for b in blocks if b not in settings]):
        y = pack(chain, y, boxes)
    flow_graph.create_shapes()


def open_in_grc(platform, grcs, pngs, relayout_first=False):
    """Opens the examples in GNU Radio Companion (its Application and main window), and
    once they are loaded (re-laid out and saved with relayout_first) checks and draws
    each; returns {example: errors}."""
    from gi.repository import GLib
    from gnuradio.grc.gui.Application import Application
    app = Application(grcs, platform)
    result = {}

    def capture():
        notebook = app.main_window.notebook
        for page in notebook.get_children():
            name = os.path.splitext(os.path.basename(page.file_path))[0]
            if relayout_first:  # saved; the pictures come from a fresh load
                relayout(page.flow_graph)
                platform.save_flow_graph(page.file_path, page.flow_graph)
                result[name] = []
                continue
            result[name] = draw_canvas(page.flow_graph, pngs.get(name))
        app.quit()
        return False

    GLib.timeout_add(1500, capture)
    app.run([])
    return result


def shrink(png, palette=True):
    """Keeps a PNG small for the repository: at most MAX_WIDTH wide and, with palette
    (flowgraph drawings: few flat colours), 256 colours. Display screenshots keep their
    colours: a palette would band the colour scale."""
    from PyQt5 import QtCore, QtGui
    image = QtGui.QImage(png)
    if image.width() > MAX_WIDTH:
        image = image.scaledToWidth(MAX_WIDTH, QtCore.Qt.SmoothTransformation)
    if palette:
        image = image.convertToFormat(QtGui.QImage.Format_Indexed8,
                                      QtCore.Qt.ThresholdDither | QtCore.Qt.AvoidDither)
    image.save(png, "PNG")


def run_example(grc, out_png, build, backend):
    """Compiles and runs grc with tools/check_grc_display.py, its blocks on backend;
    returns its exit code."""
    name = os.path.splitext(os.path.basename(grc))[0]
    rec = os.path.join(build, "examples", "recordings")
    if not os.path.exists(os.path.join(rec, "gpuradar_pd.sigmf-meta")):
        # the recordings of the examples' own ctest runs (test fixture grc_recordings)
        subprocess.check_call(["ctest", "--test-dir", build, "-R", "^grc_recordings$",
                               "--output-on-failure"])
    with tempfile.TemporaryDirectory() as tmp:
        args = [a.format(rec=rec) for a in RUN_ARGS[name]] + ["--backend", backend]
        return subprocess.call([os.path.join(ROOT, "tools", "run_grc_example.sh"), grc, tmp,
                                os.path.join(build, "test_modules"), "--check-display",
                                rec, "--screenshot", out_png, "--"] + args)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    rc = under_x(argv)
    if rc is not None:
        return rc
    args = parse_args(argv)
    args.build = os.path.abspath(args.build)  # the examples run in a scratch directory
    sys.path.insert(0, os.path.join(args.build, "test_modules"))
    os.environ["PYTHONPATH"] = os.path.join(args.build, "test_modules")
    examples = args.examples or sorted(glob.glob(os.path.join(ROOT, "examples", "*.grc")))
    os.makedirs(args.out, exist_ok=True)
    names = [os.path.splitext(os.path.basename(g))[0] for g in examples]
    pngs = {} if args.no_png else {n: os.path.join(args.out, f"grc_{n}.png") for n in names}
    layout = open_in_grc(grc_platform(), [os.path.abspath(g) for g in examples], pngs,
                         args.relayout)
    if args.relayout:
        return 0
    failed = 0
    for grc, name in zip(examples, names):
        errors = layout.get(name, ["not opened by GRC"])
        for e in errors:
            print(f"{name}: {e}", file=sys.stderr)
        failed += bool(errors)
        if not errors and name in pngs:
            print(f"{name}: {pngs[name]}")
        if name in RUN_ARGS and not (args.layout_only or args.no_png):
            shot = os.path.join(args.out, f"run_{name}.png")
            if run_example(grc, shot, args.build, args.backend) != 0:
                print(f"{name}: the running flowgraph failed its display check",
                      file=sys.stderr)
                failed += 1
            else:
                shrink(shot, palette=False)
                print(f"{name}: {shot}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
