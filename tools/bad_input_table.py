#!/usr/bin/python3
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""Runs every bad input the test suite tries, and more, and writes the table of them
with their outcomes to docs/bad-inputs.md.

  tools/bad_input_table.py [--build build] [--out docs/bad-inputs.md]   # regenerate
  tools/bad_input_table.py --check [--build build]                      # ctest
  tools/bad_input_table.py --self-test                                  # ctest

The cases are not restated here; they are collected by running the suites' own code:
  * block parameters, live setters and other calls: the QA tests (python/gpuradar/qa,
    the display blocks' apart: they need an X server) that expect an exception, run with
    unittest's assertRaises/assertRaisesRegex recorded: each exception they expect is a
    row (the call, and the exception's type and first line);
  * apps: apps/tests/test_hardening.py's failing runs (its Hardening.fails), each a row
    (the command or metadata edit, the exit status and the one error line);
  * messages into the blocks' ports (waveform) and malformed gr-zeromq messages into
    zmq_source (built with qa_zmq_source's wire helper), and bad arguments of the C++
    programs (gpuradar_soak, gpuradar_bench): listed below.
A case passes when its outcome is of the right class: a clean error (ValueError naming a
parameter of the call, or an app / program exiting non-zero with one error line and no
traceback), or a bad message dropped and counted while the block keeps running. It fails
when it crashes, hangs, succeeds, or raises anything else; --check also fails when the
committed page's rows (input and outcome class, not the message texts, which other work
may reword) differ from a fresh run's (regenerate with the first command).
Each collector runs in its own process, so that a crash is a row, not the end.
"""

import argparse
import difflib
import inspect
import json
import linecache
import os
import re
import subprocess
import sys
import tempfile
import time
import traceback

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
QA_DIR = os.path.join(ROOT, "python", "gpuradar", "qa")
APP_TESTS = os.path.join(ROOT, "apps", "tests")
PAGE = os.path.join(ROOT, "docs", "bad-inputs.md")
#: Errors known not to name the parameter the caller gave, (factory, parameter): why.
#: Listed in the page as known defects (they pass); remove an entry once its message
#: names the parameter (the generator says when one no longer occurs).
KNOWN_UNNAMED = {}
#: a collector taking longer than this counts as hung
COLLECTOR_TIMEOUT_S = 900

CLEAN, CRASH, HANG, NO_ERROR, OTHER, UNNAMED, KNOWN = (
    "clean error", "crash", "hang", "no error", "other exception",
    "error not naming the parameter", "known defect")


# --------------------------------------------------------------------------- helpers

def first_line(text):
    lines = [line.strip() for line in str(text).strip().splitlines() if line.strip()]
    return lines[0] if lines else ""


def normalise(text):
    """Makes a row independent of the run: temporary paths and addresses."""
    text = re.sub(r"/tmp/[^\s'\"/:]+", "<tmp>", text)
    text = re.sub(r"0x[0-9a-fA-F]{6,}", "0x…", text)
    return text.replace(ROOT + os.sep, "")


def clip(text, n=160):
    text = " ".join(str(text).split())
    return text if len(text) <= n else text[:n - 1] + "…"


def row(source, case, outcome, klass, ok):
    return {"source": source, "input": normalise(clip(case)),
            "outcome": normalise(clip(outcome)), "class": klass, "ok": ok}


# ------------------------------------------------------- QA: recorded assertRaises

class call_log:
    """Wraps the gpuradar block factories: remembers the last call of each and the last
    one that succeeded, so that a failing call is shown by what differs from a good one."""

    def __init__(self, module):
        self.last = None
        self.good = {}
        for name in dir(module):
            obj = getattr(module, name)
            if name.startswith("_") or not callable(obj) or inspect.ismodule(obj):
                continue
            setattr(module, name, self.wrap(name, obj))

    def wrap(self, name, factory):
        def call(*args, **kwargs):
            self.last = (name, args, kwargs, factory)
            result = factory(*args, **kwargs)
            self.good[name] = (args, kwargs)
            self.last = None
            return result
        call.__wrapped__ = factory
        return call

    def changed(self):
        """(factory, the keyword parameters that differ from its last good call)."""
        name, _, kwargs, _ = self.last
        good_kwargs = self.good.get(name, ((), {}))[1]
        return name, tuple(k for k, v in kwargs.items() if good_kwargs.get(k, object()) != v)

    def describe(self):
        name, args, kwargs, _ = self.last
        good_args, good_kwargs = self.good.get(name, ((), {}))
        shown = [repr(a) for a in args] if args != good_args else (["…"] if args else [])
        changed = {k: v for k, v in kwargs.items() if good_kwargs.get(k, object()) != v}
        if kwargs and len(changed) < len(kwargs):
            shown.append("…")
        shown += [f"{k}={v!r}" for k, v in changed.items()]
        return f"{name}({', '.join(shown)})"

    def parameters(self):
        """The failing factory's parameter names (pybind11 signatures in the docs of a
        function, or of a block class's constructor)."""
        name, _, kwargs, factory = self.last
        # A setter function may name what it sets (set_cpu_threads: cpu_threads).
        names = set(kwargs) | ({name[len("set_"):]} if name.startswith("set_") else set())
        docs = [getattr(factory, "__doc__", None),
                getattr(getattr(factory, "__init__", None), "__doc__", None)]
        for doc in filter(None, docs):
            names.update(re.findall(r"(\w+): ", doc))
        names.discard("self")
        # A message parser (waveform_from_message) names the field of the message dict
        # that is wrong ('up'): the dict's keys are its parameters too.
        import pmt
        for value in list(self.last[1]) + list(kwargs.values()):
            if isinstance(value, pmt.pmt_base) and pmt.is_dict(value):
                keys = pmt.dict_keys(value)
                while pmt.is_pair(keys):
                    if pmt.is_symbol(pmt.car(keys)):
                        names.add(pmt.symbol_to_string(pmt.car(keys)))
                    keys = pmt.cdr(keys)
        # Bindings without argument names (arg0, ...) leave nothing to look for.
        return {n for n in names if not re.fullmatch(r"arg\d+", n)}


def source_case(tb, test_file):
    """The test's line that raised, with the values of the simple names in it."""
    frames = [f for f in traceback.walk_tb(tb) if f[0].f_code.co_filename == test_file]
    if not frames:
        return "?"
    frame, lineno = frames[-1]
    text = linecache.getline(test_file, lineno).strip() or "?"
    if "lambda" in text:  # a call in a table of cases: the lambda's body
        text = lambda_body(text)
    values = []
    for name in dict.fromkeys(re.findall(r"\b[a-z_]\w*\b", text)):
        value = frame.f_locals.get(name)
        if isinstance(value, (int, float, str, bytes, bool)) and not isinstance(value, type):
            values.append(f"{name}={value!r}")
    return text + (f"  [{', '.join(values)}]" if values else "")


def classify_exception(exc, names, expected=(ValueError,)):
    """CLEAN for a ValueError (TypeError: pybind11's wrong argument types) that names one
    of `names` (any text when names is empty), or an exception of a class the test
    expected for a failure that is not bad input (RuntimeError or a subclass: backend
    cuda without a device, a missing optional package); else OTHER."""
    # a RuntimeError (or a subclass the test names, e.g. a missing optional package)
    if isinstance(exc, RuntimeError) and any(
            isinstance(e, type) and issubclass(e, RuntimeError) for e in expected):
        return CLEAN if first_line(exc) else OTHER
    if not isinstance(exc, (ValueError, TypeError)):
        return OTHER
    text = str(exc)
    # A parameter may be named without its unit (pri for pri_samples) or with it
    # (bandwidth_hz for bandwidth), as the kernel below the block calls it.
    unit = r"_(samples|s|hz|m|db|ms|rad|deg)"
    stems = set(names) | {re.sub(unit + "$", "", n) for n in names}
    return CLEAN if not names or any(re.search(rf"\b{re.escape(n)}({unit})?\b", text)
                                     for n in stems) else UNNAMED


def collect_qa(path):
    """Rows of one QA file's bad-input tests (run in this process)."""
    import unittest
    from gnuradio import gpuradar
    sys.path.insert(0, QA_DIR)
    log = call_log(gpuradar)
    rows = []
    test_file = os.path.abspath(path)
    source = os.path.relpath(path, ROOT)

    class recorder:
        def __init__(self, inner, expected):
            self.inner = inner
            self.expected = expected if isinstance(expected, tuple) else (expected,)

        def __enter__(self):
            log.last = None
            return self.inner.__enter__()

        def __exit__(self, kind, exc, tb):
            if exc is None:
                rows.append(row(source, "?", "returned without an error", NO_ERROR, False))
            elif log.last is not None:
                klass = classify_exception(exc, log.parameters(), self.expected)
                factory, changed = log.changed()
                known = [KNOWN_UNNAMED[factory, k] for k in changed
                         if (factory, k) in KNOWN_UNNAMED]
                outcome = f"{type(exc).__name__}: {first_line(exc)}"
                if klass == UNNAMED and len(known) == 1:
                    klass, outcome = KNOWN, f"{outcome} (known defect: {known[0]})"
                rows.append(row(source, log.describe(), outcome, klass,
                                klass in (CLEAN, KNOWN)))
            else:
                klass = classify_exception(exc, (), self.expected)
                rows.append(row(source, source_case(tb, test_file),
                                f"{type(exc).__name__}: {first_line(exc)}", klass,
                                klass == CLEAN))
            return self.inner.__exit__(kind, exc, tb)

    real_raises, real_regex = unittest.TestCase.assertRaises, unittest.TestCase.assertRaisesRegex

    def assert_raises(self, *args, **kwargs):
        cm = real_raises(self, *args, **kwargs)
        return recorder(cm, args[0]) if len(args) == 1 else cm

    def assert_raises_regex(self, *args, **kwargs):
        cm = real_regex(self, *args, **kwargs)
        return recorder(cm, args[0]) if len(args) == 2 else cm

    unittest.TestCase.assertRaises = assert_raises
    unittest.TestCase.assertRaisesRegex = assert_raises_regex
    name = os.path.splitext(os.path.basename(path))[0]
    module = __import__(name)
    suite = unittest.TestSuite()
    for case in vars(module).values():
        if isinstance(case, type) and issubclass(case, unittest.TestCase):
            for method in sorted(unittest.defaultTestLoader.getTestCaseNames(case)):
                if "assertRaises" in inspect.getsource(getattr(case, method)):
                    suite.addTest(case(method))
    result = unittest.TextTestRunner(stream=open(os.devnull, "w")).run(suite)
    for test, err in result.failures + result.errors:
        rows.append(row(source, test.id(), first_line(err.splitlines()[-1]), OTHER, False))
    return rows


# -------------------------------------------------- apps: recorded Hardening.fails

def collect_hardening(group):
    """Rows of the failing app runs of one test_hardening.py group."""
    import unittest
    sys.path.insert(0, APP_TESTS)
    import test_hardening as th
    rows = []
    current = {"edit": None}
    real_fails, real_each = th.Hardening.fails, th.Hardening.each_edit_fails
    real_run = th.subprocess.run

    def each_edit_fails(self, base, cases, fails):
        def edits():  # notes which metadata edit the next fails() call runs
            for edit, needles in cases:
                current["edit"] = lambda_text(edit)
                yield edit, needles
            current["edit"] = None
        return real_each(self, base, edits(), fails)

    def fails(self, cmd, status, *needles, **kwargs):
        seen = {}

        def run(*args, **kw):
            seen["p"] = real_run(*args, **kw)
            return seen["p"]
        th.subprocess.run = run
        try:
            return real_fails(self, cmd, status, *needles, **kwargs)
        finally:
            th.subprocess.run = real_run
            rows.append(app_row(self, cmd, current["edit"], seen.get("p")))

    th.Hardening.fails = fails
    th.Hardening.each_edit_fails = each_edit_fails
    case = getattr(th, group)
    suite = unittest.TestSuite()
    for method in sorted(unittest.defaultTestLoader.getTestCaseNames(case)):
        if "fails(" in inspect.getsource(getattr(case, method)):
            suite.addTest(case(method))
    unittest.TextTestRunner(stream=open(os.devnull, "w")).run(suite)
    return rows


def lambda_text(fn):
    """The source of a one-line lambda (the metadata edit of a case)."""
    try:
        return lambda_body(inspect.getsource(fn), keep_head=True)
    except (OSError, TypeError):
        return "?"


def lambda_body(text, keep_head=False):
    """The first lambda in a line of source, up to where its expression ends; without
    keep_head only the expression after `lambda ...:`."""
    start = text.find("lambda")
    if start < 0:
        return clip(text)
    depth, out = 0, []
    for ch in text[start:]:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            if depth == 0:
                break
            depth -= 1
        elif ch == "," and depth == 0:
            break
        out.append(ch)
    body = " ".join("".join(out).split())
    return body if keep_head else body.split(":", 1)[-1].strip()


def app_row(test, cmd, edit, p):
    app = os.path.basename(cmd[0]).replace("_", "-").replace(".py", "")
    args = " ".join(os.path.relpath(a, test.dir) if a.startswith(test.dir) else a
                    for a in map(str, cmd[1:]))
    case = f"{app} {args}" + (f"  [metadata: {edit}]" if edit else "")
    source = "apps/tests/test_hardening.py " + test.id().split(".", 1)[-1]
    if p is None:
        return row(source, case, "did not run", OTHER, False)
    return program_row(source, case, p.returncode, p.stderr,
                       lambda line: "error" in line)


def program_row(source, case, status, stderr, is_error_line):
    """A program's bad-input run: non-zero (not a signal), no traceback, one error line."""
    errors = [line for line in stderr.splitlines() if is_error_line(line)]
    if status < 0:
        klass = CRASH
    elif status == 0:
        klass = NO_ERROR
    elif "Traceback" in stderr or len(errors) != 1:
        klass = OTHER
    else:
        klass = CLEAN
    shown = errors[0] if errors else first_line(stderr)
    return row(source, case, f"exit {status}: {shown}", klass, klass == CLEAN)


# ------------------------------------------------------------ messages into ports

def waveform_messages():
    """Malformed `waveform` messages (pulse_compression, pulse_doppler_processor)."""
    import pmt

    def d(**kv):
        out = pmt.make_dict()
        for k, v in kv.items():
            out = pmt.dict_add(out, pmt.intern(k), v)
        return out
    return [
        ("symbol 'lfm'", pmt.intern("lfm")),
        ("empty dict", pmt.make_dict()),
        ("dict without bandwidth", d(pulse_width=pmt.from_double(1e-5))),
        ("bandwidth as a string", d(bandwidth=pmt.intern("1e6"),
                                    pulse_width=pmt.from_double(1e-5))),
        ("negative pulse_width", d(bandwidth=pmt.from_double(1e6),
                                   pulse_width=pmt.from_double(-1e-5))),
        ("NaN bandwidth", d(bandwidth=pmt.from_double(float("nan")),
                            pulse_width=pmt.from_double(1e-5))),
        ("infinite pulse_width", d(bandwidth=pmt.from_double(1e6),
                                   pulse_width=pmt.from_double(float("inf")))),
        ("pulse_width of 1 hour", d(bandwidth=pmt.from_double(1e6),
                                    pulse_width=pmt.from_double(3600.0))),
        ("unknown code 'chirp'", d(waveform=pmt.intern("chirp"),
                                   pulse_width=pmt.from_double(1e-5))),
        ("code 'barker:6'", d(waveform=pmt.intern("barker:6"),
                              pulse_width=pmt.from_double(1e-5))),
        ("code as a number", d(waveform=pmt.from_long(13),
                               pulse_width=pmt.from_double(1e-5))),
        ("up as the symbol 'no'", d(bandwidth=pmt.from_double(1e5),
                                    pulse_width=pmt.from_double(1e-5),
                                    up=pmt.intern("no"))),
        ("up as the integer 2", d(bandwidth=pmt.from_double(1e5),
                                  pulse_width=pmt.from_double(1e-5), up=pmt.from_long(2))),
        ("empty c32 vector", pmt.init_c32vector(0, [])),
        ("f32 vector", pmt.init_f32vector(3, [1.0, 2.0, 3.0])),
        ("pair (cons)", pmt.cons(pmt.intern("lfm"), pmt.from_double(1e6))),
        ("PMT nil", pmt.PMT_NIL),
    ]


def run_with_waveform_message(msg, fs=1e6, nrange=64, npulses=8, ncpi=4):
    """pulse_compression (CPU) with `msg` queued on its waveform port, over ncpi CPIs of
    noise: (waveform before, waveform after, whether every pulse came out)."""
    import numpy as np
    import pmt
    from gnuradio import blocks, gr
    from gnuradio import gpuradar
    tb = gr.top_block()
    pc = gpuradar.pulse_compression(nrange, npulses, 1, "lfm", [], 2e5, 1e-5, fs,
                                    backend="cpu")
    before = list(pc.waveform())
    x = (np.random.default_rng(1).standard_normal(2 * nrange * npulses * ncpi)
         .astype(np.float32).view(np.complex64))
    sink = blocks.vector_sink_c(nrange)
    tb.connect(blocks.vector_source_c(x.tolist(), False, nrange), pc, sink)
    # Queued before start: the block handles it before its first work call.
    pc.to_basic_block()._post(pmt.intern("waveform"), msg)
    tb.run()
    return before, list(pc.waveform()), len(sink.data()) == x.size


def collect_waveform_messages():
    """Each malformed waveform message into a running pulse_compression: its error is the
    handler's (waveform_from_message); the block keeps its waveform and runs on. A good
    message first shows that a queued message is handled at all."""
    import pmt
    from gnuradio import gpuradar
    source = "waveform message port (pulse_compression)"
    good = pmt.dict_add(pmt.dict_add(pmt.make_dict(), pmt.intern("bandwidth"),
                                     pmt.from_double(2e5)),
                        pmt.intern("pulse_width"), pmt.from_double(2e-5))
    before, after, _ = run_with_waveform_message(good)
    if len(after) == len(before):
        return [row(source, "(a good waveform message)", "not applied: the harness "
                    "cannot tell kept from ignored", OTHER, False)]
    rows = []
    for name, msg in waveform_messages():
        try:
            gpuradar.waveform_from_message(msg, 1e6)
            parsed = None
        except Exception as e:  # noqa: BLE001 (the class is what is recorded)
            parsed = e
        before, after, complete = run_with_waveform_message(msg)
        kept = after == before and complete
        if parsed is None:  # well formed as a message: the block must refuse it
            klass = CLEAN if kept else NO_ERROR
            said = "parsed, refused by the block (logged)"
        else:
            klass = classify_exception(parsed, ()) if kept else OTHER
            said = f"{type(parsed).__name__}: {first_line(parsed)}"
        rows.append(row(source, name, said + ("; waveform kept, every pulse out" if kept
                                              else "; WAVEFORM CHANGED or pulses lost"),
                        klass, klass == CLEAN))
    return rows


def zmq_messages():
    """Malformed gr-zeromq messages, built with qa_zmq_source's wire helper, and the drop
    reason each is meant to hit (shown only: the count is what is checked). Oversized
    messages are not here: libzmq refuses them by closing the connection (C++ tests)."""
    import struct
    from qa_zmq_source import tagged_message
    good = tagged_message(0, [], [1 + 1j] * 4)
    return [
        ("empty message", b"", "empty"),
        ("3 bytes (shorter than the tag header)", good[:3], "truncated_header"),
        ("bad magic 0x1234", struct.pack("<H", 0x1234) + good[2:], "bad_magic"),
        ("bad version 9", good[:2] + b"\x09" + good[3:], "bad_version"),
        ("tag count 2^40", good[:11] + struct.pack("<Q", 1 << 40) + good[19:],
         "too_many_tags"),
        ("tag count 1, no tag bytes", good[:11] + struct.pack("<Q", 1) + good[19:],
         "bad_tag"),
        ("4 samples and 3 stray bytes", good + b"abc", "partial_item"),
        ("two-part message", [good, good], "bad_framing"),
    ]


def collect_zmq_messages():
    """Each malformed message pushed into a running zmq_source (PULL, binds): it must be
    dropped and counted, and a good message after it must still come out."""
    import zmq
    from gnuradio import blocks, gr
    from gnuradio import gpuradar
    sys.path.insert(0, QA_DIR)
    from qa_zmq_source import tagged_message
    rows = []
    source = "zmq_source (gr-zeromq wire format, pass_tags)"
    with tempfile.TemporaryDirectory(prefix="gpuradar-bad-inputs-") as d:
        os.chmod(d, 0o700)
        address = f"ipc://{d}/zmq"
        tb = gr.top_block()
        src = gpuradar.zmq_source(8, 1, address, "pull", True, True, 100, 4096)
        sink = blocks.vector_sink_c()
        tb.connect(src, sink)
        tb.start()
        ctx = zmq.Context()
        push = ctx.socket(zmq.PUSH)
        push.setsockopt(zmq.LINGER, 0)
        push.connect(address)
        try:
            for name, message, reason in zmq_messages():
                before = dict(src.drop_counts())
                items = len(sink.data())
                push.send_multipart(message if isinstance(message, list) else [message])
                push.send(tagged_message(0, [], [2 + 2j] * 4))
                deadline = time.monotonic() + 10
                while len(sink.data()) < items + 4 and time.monotonic() < deadline:
                    time.sleep(0.01)
                after = dict(src.drop_counts())
                counted = {k: after[k] - before.get(k, 0) for k in after
                           if after[k] != before.get(k, 0)}
                alive = len(sink.data()) >= items + 4
                # Dropped whole and counted once, under whichever reason the parser
                # gives (the reasons are the block's to refine).
                ok = sum(counted.values()) == 1 and alive
                outcome = (f"dropped, counted as {', '.join(sorted(counted)) or 'nothing'}"
                           + ("; the next good message came out" if alive
                              else "; STALLED"))
                rows.append(row(source, f"{name} (aimed at {reason})", outcome,
                                CLEAN if ok else (HANG if not alive else OTHER), ok))
        finally:
            push.close()
            ctx.term()
            tb.stop()
            tb.wait()
    return rows


# ------------------------------------------------------------------ C++ programs

def program_cases():
    return [
        ("gpuradar_soak", ["--cpis", "-5"]),
        ("gpuradar_soak", ["--cpis", "1e9x"]),
        ("gpuradar_soak", ["--apertures"]),
        ("gpuradar_soak", ["--backend", "gpu"]),
        ("gpuradar_soak", ["--workload", "PD-A"]),
        ("gpuradar_soak", ["--warmup-fraction", "1.5"]),
        ("gpuradar_soak", ["--rss-bound-mib", "nan"]),
        ("gpuradar_soak", ["--cycle-cpis", "0"]),
        ("gpuradar_soak", ["--samples", "1"]),
        ("gpuradar_soak", ["--frobnicate", "1"]),
        ("gpuradar_bench", ["--repeats", "0"]),
        ("gpuradar_bench", ["--repeats", "-3"]),
        ("gpuradar_bench", ["--copy-threads", "x"]),
        ("gpuradar_bench", ["--frobnicate"]),
        ("gpuradar_bench", ["--cpu-threads", "0"]),
        ("gpuradar_bench", ["--cpu-threads", "300"]),
    ]


def collect_programs(build):
    rows = []
    for program, args in program_cases():
        exe = os.path.join(build, "apps", program)
        case = " ".join([program, *args])
        if not os.path.exists(exe):
            rows.append(row("C++ programs", case, f"{exe} not built", OTHER, False))
            continue
        try:
            p = subprocess.run([exe, *args], capture_output=True, text=True, timeout=60)
        except subprocess.TimeoutExpired:
            rows.append(row("C++ programs", case, "no exit within 60 s", HANG, False))
            continue
        rows.append(program_row("C++ programs", case, p.returncode, p.stderr,
                                lambda line, prog=program: line.startswith(prog + ":")))
    return rows


# ------------------------------------------------------------------------ driver

def collectors(build):
    """(name, argv for a child process) of every collector, in table order."""
    me = [sys.executable, os.path.abspath(__file__), "--build", build, "--collect"]
    qa = sorted(f for f in os.listdir(QA_DIR)
                if f.startswith("qa_") and f.endswith(".py") and "display" not in f)
    out = [(f, me + ["qa", os.path.join(QA_DIR, f)]) for f in qa]
    for group in ("ProcessMetadata", "ProcessFiles", "ProcessOverrides", "Sim",
                  "SarRecording", "Versions"):
        out.append((f"test_hardening {group}", me + ["hardening", group]))
    out += [("waveform messages", me + ["waveform", "-"]),
            ("zmq messages", me + ["zmq", "-"]),
            ("programs", me + ["programs", "-"])]
    return out


def run_collector(name, argv, env, timeout=COLLECTOR_TIMEOUT_S):
    with tempfile.NamedTemporaryFile("r", suffix=".json") as out:
        try:
            p = subprocess.run(argv + ["--rows", out.name], capture_output=True, text=True,
                               timeout=timeout, env=env)
        except subprocess.TimeoutExpired:
            return [row(name, "(all of its cases)", f"no result in {timeout} s", HANG,
                        False)]
        text = out.read()
    if p.returncode != 0 or not text:
        klass = CRASH if p.returncode < 0 else OTHER
        return [row(name, "(the collector)", f"exit {p.returncode}: "
                    + first_line(p.stderr[-2000:]), klass, False)]
    return json.loads(text)


def markdown(rows):
    counts = {}
    for r in rows:
        counts[r["class"]] = counts.get(r["class"], 0) + 1
    out = ["# Bad inputs and what they do", "",
           "Generated by `tools/bad_input_table.py` (do not edit; regenerate with "
           "`/usr/bin/python3 tools/bad_input_table.py` after building). Every row is a "
           "bad input that the test suite tries, run again by the generator: block "
           "parameters and other calls from the QA tests, the apps' failing runs from "
           "`apps/tests/test_hardening.py`, malformed messages into the blocks' ports and "
           "into `zmq_source`, and bad arguments of the C++ programs. ctest "
           "`bad_input_table` re-runs them and fails when one crashes, hangs, succeeds "
           "or raises something else, or when this page's inputs or classes are stale. Paths under /tmp are "
           "shown as `<tmp>`. How the module treats bad input: "
           "[RELIABILITY.md](RELIABILITY.md).", "",
           f"{len(rows)} bad inputs: " + ", ".join(f"{n} {k}" for k, n in
                                                  sorted(counts.items())) + ".", "",
           "| # | where | input | class | outcome |", "|---|---|---|---|---|"]
    for i, r in enumerate(rows, 1):
        cells = [str(i), r["source"], f"`{r['input'].replace('`', chr(39))}`",
                 r["class"] if r["ok"] else f"**{r['class'].upper()}**", r["outcome"]]
        out.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return "\n".join(out) + "\n"


def table_keys(page):
    """(number, where, input, class) of every row of a page: what --check compares. The
    outcome texts are not compared: messages may be reworded without the page going
    stale (regenerate to show the new wording). Numbers in the inputs are masked: some
    cases derive them from the clock or the free disk space."""
    keys = []
    for line in page.splitlines():
        if re.match(r"\| \d+ \|", line):
            cells = [c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]]
            cells[2] = re.sub(r"\d+(\.\d*)?([eE][-+]?\d+)?", "#", cells[2])
            keys.append(tuple(cells[:4]))
    return keys


def collect_child(kind, arg, build, rows_path):
    rows = {"qa": lambda: collect_qa(arg),
            "hardening": lambda: collect_hardening(arg),
            "waveform": collect_waveform_messages,
            "zmq": collect_zmq_messages,
            "programs": lambda: collect_programs(build)}[kind]()
    with open(rows_path, "w") as f:
        json.dump(rows, f)


def self_test():
    """The classification can fail: each outcome class from a made-up case."""
    def is_error(line):
        return "error" in line
    checks = [
        (program_row("t", "c", 0, "", is_error)["class"], NO_ERROR),
        (program_row("t", "c", -11, "", is_error)["class"], CRASH),
        (program_row("t", "c", 1, "Traceback\nx: error: y", is_error)["class"], OTHER),
        (program_row("t", "c", 2, "x: error: y\nx: error: z", is_error)["class"], OTHER),
        (program_row("t", "c", 2, "usage\nx: error: y", is_error)["class"], CLEAN),
        (classify_exception(ValueError("a: nrange must be >= 1"), {"nrange"}), CLEAN),
        (classify_exception(ValueError("a: bandwidth_hz must be > 0"), {"bandwidth"}),
         CLEAN),
        (classify_exception(ValueError("a: pri must be > 0"), {"pri_samples"}), CLEAN),
        (classify_exception(ValueError("a: squint_rad must be small"), {"squint"}), CLEAN),
        (classify_exception(ValueError("a: mode must be one of"), {"envelope_mode"}),
         UNNAMED),
        (classify_exception(KeyError("nrange"), {"nrange"}), OTHER),
        (classify_exception(RuntimeError("no CUDA device"), ()), OTHER),
        (classify_exception(RuntimeError("no CUDA device"), (), (RuntimeError,)), CLEAN),
    ]
    env = dict(os.environ)
    crash = [sys.executable, "-c", "import os; os.abort()"]
    hang = [sys.executable, "-c", "import time; time.sleep(60)"]
    checks += [(run_collector("c", crash, env)[0]["class"], CRASH),
               (run_collector("h", hang, env, timeout=1)[0]["class"], HANG)]
    rows = [row("s", "in", "out", CLEAN, True), row("s", "in2", "out", CLEAN, True)]
    reworded = [dict(rows[0], outcome="reworded"), rows[1]]
    reclassed = [rows[0], dict(rows[1], ok=False, **{"class": OTHER})]
    keys = table_keys(markdown(rows))
    renumbered = [dict(rows[0], input="in 3.5e+09"), dict(rows[1], input="in2")]
    checks += [(table_keys(markdown(renumbered)) == table_keys(markdown(
                    [dict(rows[0], input="in 17"), rows[1]])), True)]
    checks += [(len(keys), 2),
               (table_keys(markdown(reworded)) == keys, True),   # texts are not compared
               (table_keys(markdown(reclassed)) == keys, False)]  # classes are
    bad = [(i, got, want) for i, (got, want) in enumerate(checks) if got != want]
    for i, got, want in bad:
        print(f"self-test case {i}: got {got!r}, expected {want!r}", file=sys.stderr)
    print(f"self-test: {len(checks) - len(bad)} of {len(checks)} cases right",
          file=sys.stderr)
    return 1 if bad else 0


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--build", default=os.path.join(ROOT, "build"))
    p.add_argument("--out", default=PAGE)
    p.add_argument("--check", action="store_true",
                   help="write nothing; fail when a case fails, or when the page's rows "
                        "(input and outcome class; not the messages) differ")
    p.add_argument("--self-test", action="store_true",
                   help="check the outcome classification on made-up cases")
    p.add_argument("--collect", nargs=2, help=argparse.SUPPRESS)
    p.add_argument("--rows", help=argparse.SUPPRESS)
    a = p.parse_args(argv)
    build = os.path.abspath(a.build)
    if a.self_test:
        return self_test()
    if a.collect:
        collect_child(*a.collect, build, a.rows)
        return 0
    env = dict(os.environ, PYTHONPATH=os.path.join(build, "test_modules"),
               GPURADAR_PYTHON_TESTS="1")
    rows = []
    for name, child in collectors(build):
        got = run_collector(name, child, env)
        print(f"{name}: {len(got)} cases, {sum(not r['ok'] for r in got)} failed",
              file=sys.stderr)
        rows += got
    page = markdown(rows)
    if sum(r["class"] == KNOWN for r in rows) < len(KNOWN_UNNAMED):
        print("a KNOWN_UNNAMED entry no longer occurs (its message was fixed?): remove it "
              "from tools/bad_input_table.py", file=sys.stderr)
    failed = [r for r in rows if not r["ok"]]
    for r in failed:
        print(f"FAILED ({r['class']}): {r['source']}: {r['input']} -> {r['outcome']}",
              file=sys.stderr)
    status = 1 if failed or len(rows) < 100 else 0
    if len(rows) < 100:
        print(f"only {len(rows)} bad inputs (at least 100 expected)", file=sys.stderr)
    if a.check:
        with open(a.out) as f:
            committed = f.read()
        old_keys, new_keys = table_keys(committed), table_keys(page)
        if old_keys != new_keys:
            sys.stderr.writelines(difflib.unified_diff(
                [" | ".join(k) + "\n" for k in old_keys],
                [" | ".join(k) + "\n" for k in new_keys], a.out, "fresh run", n=0))
            print(f"{os.path.relpath(a.out, ROOT)} is stale: regenerate it with "
                  "/usr/bin/python3 tools/bad_input_table.py", file=sys.stderr)
            status = 1
    else:
        with open(a.out, "w") as f:
            f.write(page)
        print(f"{len(rows)} bad inputs -> {a.out}", file=sys.stderr)
    return status


if __name__ == "__main__":
    sys.exit(main())
