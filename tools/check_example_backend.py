#!/usr/bin/python3
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""Checks that the shipped examples obey their parameters, as a user running the
generated Python sees them:

  tools/check_example_backend.py --out DIR --recordings DIR [--grc-dir examples/]
                                 [--blocks grc/]

1. Every example-level `parameter` block is used by some block of its flowgraph, and every
   block with a `backend` argument takes the flowgraph's `backend` parameter (a literal
   `auto` there made `--backend cuda` run on the CPU without a word), but the blocks of
   CPU_BY_DESIGN.
2. The generated flowgraphs (grcc, once for all examples) built with backend='cpu' have
   every backend-bearing block on the CPU; with backend='cuda' on a machine without a
   usable GPU the construction fails with the documented RuntimeError (on a machine with
   one, every block is on CUDA); an unknown backend fails with a ValueError listing the
   allowed values.
3. Every block YAML with a backend refuses another value in GRC (its assert, as the
   block's make() does) and takes each allowed one.
4. One generated example run as a user runs it, `<example>.py --backend cuda` (without a
   GPU) and `--backend bogus`, exits non-zero with those messages on stderr.

Hardware examples (UHD, Soapy) are checked statically only: building them needs a radio.
An example with a `recording` parameter opens the file of the --recordings directory named
as its default (the recordings `gpuradar-sim --preset examples` writes).
"""

import argparse
import glob
import importlib.util
import inspect
import os
import re
import subprocess
import sys

import yaml

#: examples that need a radio to be constructed
HARDWARE = {"pulse_doppler_soapy", "pulse_doppler_soapy_txrx", "pulse_doppler_uhd",
            "pulse_doppler_usrp_txrx", "passive_soapy_live"}
#: example -> blocks (name prefix) that run on the CPU whatever the backend: the array
#: examples' per-channel framers feed streams_to_vector, a host block, so CUDA framers
#: would only copy every pulse back to the host
CPU_BY_DESIGN = {"array_beamforming": "framer_", "zmq_array_rx": "framer_"}
#: the example run as a subprocess (no GUI, quick to start)
RUN_EXAMPLE = "pulse_doppler_chain"
#: what the blocks say (lib/backend.cc): the allowed values, and a CUDA request on a
#: machine without a usable device
ALLOWED_MESSAGE = "backend must be one of auto, cuda, cpu (got 'bogus')"
NO_GPU_MESSAGE = "backend 'cuda' requested but no usable CUDA device"


def static_errors(path):
    """Parameters of the example at path that no block uses, and blocks whose backend is
    not the example's backend parameter."""
    with open(path) as f:
        fg = yaml.safe_load(f)
    blocks = fg.get("blocks", [])
    params = [b["name"] for b in blocks if b["id"] == "parameter"]
    values = "\n".join(str(v) for b in blocks if b["id"] != "parameter"
                       for k, v in b.get("parameters", {}).items() if k != "comment")
    name = os.path.basename(path)
    by_design = CPU_BY_DESIGN.get(os.path.splitext(name)[0])
    errors = [f"{name}: parameter {p!r} is used by no block" for p in params
              if not re.search(rf"\b{re.escape(p)}\b", values)]
    with_backend = [b for b in blocks if "backend" in b.get("parameters", {})
                    and b["id"] != "parameter"]
    if with_backend and "backend" not in params:
        errors.append(f"{name}: has blocks with a backend but no backend parameter")
    errors += [f"{name}: block {b['name']} has backend {b['parameters']['backend']!r}, "
               "not the flowgraph's parameter 'backend'"
               for b in with_backend if "backend" in params
               and str(b["parameters"]["backend"]) != "backend"
               and not (by_design and b["name"].startswith(by_design)
                        and b["parameters"]["backend"] == "cpu")]
    return errors


def fixed_backends(path):
    """Names of the blocks of the example at path whose backend is fixed by design."""
    with open(path) as f:
        fg = yaml.safe_load(f)
    return {b["name"] for b in fg.get("blocks", []) if b["id"] != "parameter"
            and str(b.get("parameters", {}).get("backend", "backend")) != "backend"}


def load(path):
    spec = importlib.util.spec_from_file_location(
        "example_" + os.path.splitext(os.path.basename(path))[0], path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def backends(tb):
    """{attribute name: backend()} of the blocks of top block tb that have a backend."""
    out = {}
    for name, value in vars(tb).items():
        get = getattr(value, "backend", None)
        if callable(get) and name != "backend":
            out[name] = get()
    return out


def build_errors(path, cuda_usable, recordings, fixed):
    """Builds the generated flowgraph at path with each backend and checks the blocks
    (but those in fixed)."""
    module = load(path)
    top_block_cls = module.main.__defaults__[0]
    defaults = inspect.signature(top_block_cls).parameters
    kwargs = {}
    if "recording" in defaults:
        kwargs["recording"] = os.path.join(
            recordings, os.path.basename(defaults["recording"].default))

    def cls(**kw):
        return top_block_cls(**kwargs, **kw)

    name = os.path.basename(path)
    errors = []
    tb = cls(backend="cpu")
    got = backends(tb)
    if not got:
        errors.append(f"{name}: no block reports a backend")
    errors += [f"{name} --backend cpu: block {b} runs on {v!r}"
               for b, v in sorted(got.items()) if v != "cpu" and b not in fixed]
    del tb
    try:
        tb = cls(backend="cuda")
        if cuda_usable:
            errors += [f"{name} --backend cuda: block {b} runs on {v!r}"
                       for b, v in sorted(backends(tb).items())
                       if v != "cuda" and b not in fixed]
        else:
            errors.append(f"{name} --backend cuda built without a GPU "
                          f"(blocks on {sorted(set(backends(tb).values()))})")
        del tb
    except RuntimeError as e:
        if cuda_usable or NO_GPU_MESSAGE not in str(e):
            errors.append(f"{name} --backend cuda: unexpected RuntimeError: {e}")
    try:
        cls(backend="bogus")
        errors.append(f"{name} --backend bogus was accepted")
    except ValueError as e:
        if ALLOWED_MESSAGE not in str(e):
            errors.append(f"{name} --backend bogus: ValueError without the allowed values: {e}")
    return errors


def yaml_errors(blocks_dir):
    """The backend assert of every block YAML in blocks_dir with a backend argument."""
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    sys.path.insert(0, os.path.join(here, "python", "gpuradar", "qa"))
    import grc_asserts
    errors = []
    for path in sorted(glob.glob(os.path.join(blocks_dir, "*.block.yml"))):
        with open(path) as f:
            block = yaml.safe_load(f)
        if not any(p["id"] == "backend" for p in block.get("parameters", [])):
            continue
        if not grc_asserts.failed_asserts(block["id"], backend="gpu"):
            errors.append(f"{block['id']}: GRC accepts backend 'gpu'")
        # (other asserts may not evaluate on a block's defaults, which name variables)
        errors += [f"{block['id']}: GRC refuses backend {ok!r}: {e}" for ok in
                   ("auto", "cuda", "cpu") for e in grc_asserts.failed_asserts(block["id"],
                                                                             backend=ok)
                   if "backend" in e]
    return errors


def run_errors(path, cuda_usable):
    """The generated script run as a user runs it, with a bad and (without a GPU) an
    unavailable backend: non-zero exit, the block's message on stderr."""
    cases = [("bogus", "ValueError", ALLOWED_MESSAGE)]
    if not cuda_usable:
        cases.append(("cuda", "RuntimeError", NO_GPU_MESSAGE))
    errors = []
    for backend, kind, message in cases:
        p = subprocess.run([sys.executable, path, "--backend", backend],
                           capture_output=True, text=True, timeout=60)
        if p.returncode == 0 or kind not in p.stderr or message not in p.stderr:
            errors.append(f"{os.path.basename(path)} --backend {backend}: exit "
                          f"{p.returncode}, expected {kind} '{message}'; stderr: "
                          f"{p.stderr[-600:]}")
    return errors


def main(argv=None):
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", required=True, help="directory for the generated flowgraphs")
    p.add_argument("--recordings", required=True,
                   help="directory of the recordings of gpuradar-sim --preset examples")
    p.add_argument("--grc-dir", default=os.path.join(here, "examples"))
    p.add_argument("--blocks", default=os.path.join(here, "grc"))
    a = p.parse_args(argv)
    examples = sorted(glob.glob(os.path.join(a.grc_dir, "*.grc")))
    errors = [e for path in examples for e in static_errors(path)]
    os.makedirs(a.out, exist_ok=True)
    env = dict(os.environ, GRC_BLOCKS_PATH=a.blocks)
    subprocess.run(["grcc", "-o", a.out] + examples, env=env, check=True,
                   stdout=subprocess.DEVNULL)
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")  # QT examples build a window
    from PyQt5 import QtWidgets
    app = QtWidgets.QApplication.instance() or QtWidgets.QApplication([])  # noqa: F841
    from gnuradio import gpuradar
    cuda_usable = bool(gpuradar.cuda_available())
    checked = 0
    for path in examples:
        name = os.path.splitext(os.path.basename(path))[0]
        with open(path) as f:
            has_backend = re.search(r"^- name: backend\n  id: parameter$", f.read(), re.M)
        if name in HARDWARE or not has_backend:
            continue
        errors += build_errors(os.path.join(a.out, name + ".py"), cuda_usable,
                               a.recordings, fixed_backends(path))
        checked += 1
    errors += yaml_errors(a.blocks)
    errors += run_errors(os.path.join(a.out, RUN_EXAMPLE + ".py"), cuda_usable)
    for e in errors:
        print(f"check_example_backend: {e}", file=sys.stderr)
    if not errors:
        print(f"check_example_backend: {len(examples)} examples use their parameters; "
              f"{checked} built on each backend as asked (CUDA usable: {cuda_usable})")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
