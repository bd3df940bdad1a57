#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""One value per default: every block parameter's default agrees in all its copies.

A block's make() arguments are written in up to three places: the C++ public header
(include/gnuradio/gpuradar/<block>.h, `static sptr make(... x = default)`), the Python
binding (python/gpuradar/bindings/<block>_python.cc, `py::arg("x") = default`) and the
GRC block (grc/gpuradar_<block>.block.yml: the parameter's `default`, reaching make()
through templates.make). Python-only blocks (the display sinks) have their defaults in
the class's __init__ instead of a header and a binding.

For every block this checks that
  - the binding names the header's make() arguments in the same order, with the same
    defaults (an argument without a default in one has none in the other);
  - what GRC passes to make() for an untouched block (its defaults put through
    templates.make, so a derived argument such as beamformer's beam list counts too)
    equals the header's (or __init__'s) default, for every argument that has one.

A deliberate GRC convenience, a GRC default that differs on purpose, is allowed only
with a comment on that parameter's `default:` line in the YAML saying why:
    default: '10e9'  # grc-default: <why GRC starts from another value>
A marker without a reason, or on a default that no longer differs, is an error.

Defaults written as `<struct>{}.<field>` (a parameter struct in the same header) are
read from the struct's field initialiser, which is their one source.

Exit status 0 when all agree; 1 with one line per difference. --self-test plants a
mismatch in each copy of a scratch tree and checks that each is caught.
"""

import argparse
import ast
import glob
import math
import os
import re
import shutil
import sys
import tempfile

import yaml

MARKER = "grc-default:"


class Unparsed(Exception):
    """A default expression the checker cannot turn into a value (reported, never skipped)."""


# --------------------------------------------------------------------------- C++ side

def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", " ", text)


def split_top(text, sep=","):
    """Split at `sep` outside brackets and string literals."""
    parts, depth, cur, quote = [], 0, [], None
    i = 0
    while i < len(text):
        c = text[i]
        if quote:
            cur.append(c)
            if c == "\\" and i + 1 < len(text):
                cur.append(text[i + 1])
                i += 1
            elif c == quote:
                quote = None
        elif c in "\"'":
            quote = c
            cur.append(c)
        elif text.startswith("<<", i):
            # A shift ('std::size_t(64) << 20'), not two template brackets.
            cur.append(text[i:i + 2])
            i += 1
        elif c in "([{<":
            depth += 1
            cur.append(c)
        elif c in ")]}>":
            depth -= 1
            cur.append(c)
        elif c == sep and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(c)
        i += 1
    if "".join(cur).strip():
        parts.append("".join(cur))
    return [p.strip() for p in parts]


def matching_paren(text, start):
    """Index of the bracket closing the one at text[start]."""
    pairs = {"(": ")", "{": "}", "[": "]"}
    opener, closer = text[start], pairs[text[start]]
    depth, quote = 0, None
    for i in range(start, len(text)):
        c = text[i]
        if quote:
            if c == quote and text[i - 1] != "\\":
                quote = None
        elif c == '"':
            quote = c
        elif c == opener:
            depth += 1
        elif c == closer:
            depth -= 1
            if depth == 0:
                return i
    raise Unparsed("unbalanced brackets")


def struct_fields(text):
    """{struct name: {field: default expression}} for every struct in a header."""
    out = {}
    for m in re.finditer(r"\bstruct\s+(\w+)\s*\{", text):
        body = text[m.end() - 1:matching_paren(text, m.end() - 1) + 1][1:-1]
        fields = {}
        for stmt in split_top(body, ";"):
            fm = re.match(r"^(?:[\w:<>,\s&*]+?)\s+(\w+)\s*=\s*(.+)$", stmt.strip(), re.S)
            if fm:
                fields[fm.group(1)] = fm.group(2).strip()
            else:
                fm = re.match(r"^(?:[\w:<>,\s&*]+?)\s+(\w+)\s*(\{.*\})$", stmt.strip(), re.S)
                if fm:
                    fields[fm.group(1)] = fm.group(2).strip()
                elif re.match(r"^std::(?:vector<.*>|string)\s+\w+$", stmt.strip(), re.S):
                    # A class member without an initialiser starts empty.
                    fields[stmt.split()[-1]] = "{}"
        out[m.group(1)] = fields
    return out


def cpp_value(expr, structs):
    """The Python value of a C++ default expression."""
    e = " ".join(expr.split())
    # A struct's field: `params{}.x` in a header, `defaults.x` (a default-made struct)
    # in a binding; the field's initialiser in the header's struct is the value.
    sm = re.match(r"^(?:[\w:]*::)?([A-Za-z_]\w*)\s*(?:\{\}|\(\))?\s*\.\s*([A-Za-z_]\w*)$", e)
    if sm:
        name, field = sm.groups()
        owners = [f for f in structs.values() if field in f]
        if len(owners) != 1:
            raise Unparsed("%r: %d structs of the header have a field %s"
                           % (expr, len(owners), field))
        return cpp_value(owners[0][field], structs)
    if e in ("{}", "py::none()", "gr::block_sptr()", "nullptr"):
        return [] if e == "{}" else None
    vm = re.match(r"^std::vector<[^>]*>\s*(\(\)|\{(.*)\})$", e)
    if vm:
        inner = vm.group(2)
        return [cpp_value(x, structs) for x in split_top(inner)] if inner else []
    if re.match(r'^"(?:[^"\\]|\\.)*"$', e):
        return ast.literal_eval(e)
    if e in ("true", "false"):
        return e == "true"
    py = re.sub(r"\bstd::(?:size_t|u?int(?:8|16|32|64)_t)\b", "", e)
    py = re.sub(r"(?<=[0-9.])[fFuUlL]+\b", "", py)
    try:
        return eval(compile(py, "<default>", "eval", dont_inherit=True), {"__builtins__": {}})
    except Exception:
        raise Unparsed("cannot evaluate C++ default %r" % expr)


def header_make(path):
    """[(name, default expression or None)] of the flat make() in a public header, and
    the header's structs; None when the header declares no block make()."""
    text = strip_comments(open(path).read())
    best = None
    for m in re.finditer(r"\bstatic\s+sptr\s+make\s*\(", text):
        start = m.end() - 1
        args = split_top(text[start + 1:matching_paren(text, start)])
        if best is None or len(args) > len(best):
            best = args
    if best is None:
        return None, {}
    out = []
    for a in best:
        if "=" in a:
            decl, default = a.split("=", 1)
            default = default.strip()
        else:
            decl, default = a, None
        name = re.findall(r"(\w+)\s*$", decl.strip())[0]
        out.append((name, default))
    return out, struct_fields(text)


def binding_make(path):
    """[(name, default expression or None)] of the py::init(&X::make) arguments."""
    text = strip_comments(open(path).read())
    m = re.search(r"\.def\(\s*py::init\(", text)
    if not m:
        return None
    end = matching_paren(text, m.start() + len(".def"))
    out = []
    for a in split_top(text[m.start() + len(".def") + 1:end])[1:]:
        am = re.match(r'^py::arg\("(\w+)"\)\s*(?:=\s*(.+))?$', " ".join(a.split()))
        if not am:
            raise Unparsed("%s: cannot read the argument %r" % (path, a))
        out.append((am.group(1), am.group(2)))
    return out


# --------------------------------------------------------------------------- Python blocks

def python_init(root, block):
    """[(name, value or None)] of a Python block class's __init__, or None if none."""
    for path in sorted(glob.glob(os.path.join(root, "python/gpuradar/*.py"))):
        tree = ast.parse(open(path).read())
        for node in tree.body:
            if isinstance(node, ast.ClassDef) and node.name == block:
                for f in node.body:
                    if isinstance(f, ast.FunctionDef) and f.name == "__init__":
                        args = f.args.args[1:]
                        defaults = [None] * (len(args) - len(f.args.defaults)) + [
                            ast.literal_eval(d) for d in f.args.defaults]
                        return [(a.arg, ("value", d) if d is not None else None)
                                for a, d in zip(args, defaults)]
    return None


# --------------------------------------------------------------------------- GRC side

def grc_defaults(path):
    """The block's parameters {id: (dtype, default string, marker reason or None)},
    its templates.make, and any marker lines naming no parameter."""
    text = open(path).read()
    d = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    params = {}
    for p in d.get("parameters", []):
        params[p["id"]] = [p.get("dtype", "raw"), str(p.get("default", "")), None]
    # The marker is a YAML comment, invisible to the parser: find it on the raw lines.
    current = None
    for line in text.splitlines():
        im = re.match(r"^\s*-\s+id:\s*(\w+)", line)
        if im:
            current = im.group(1)
        if MARKER in line:
            if not re.match(r"^\s*default:", line) or current not in params:
                raise Unparsed("%s: a '%s' comment belongs on a parameter's default: line "
                               "(found %r)" % (path, MARKER, line.strip()))
            params[current][2] = line.split(MARKER, 1)[1].strip()
    templates = d.get("templates", {})
    # A block that is also a GRC variable (sigmf_cpi_source) is made by its var_make.
    return params, templates.get("make") or templates.get("var_make", "")


def grc_value(dtype, default, namespace):
    """What a GRC parameter evaluates to in the generated Python."""
    if dtype in ("string", "file_open", "file_save", "_multiline"):
        return default
    if dtype == "enum":
        try:
            return eval(default, {"__builtins__": {}}, {})
        except Exception:
            return default
    return eval(default, {"__builtins__": {"list": list, "float": float, "int": int,
                                          "complex": complex, "len": len}}, namespace)


def grc_make_args(path, block):
    """[(expression kind, text)] per make() argument of templates.make: ('param', id),
    ('string', id) for "${id}", ('expr', python) for ${ ... }, or ('other', text)."""
    params, make = grc_defaults(path)
    m = re.search(r"gpuradar\.%s\(" % re.escape(block), make)
    if not m:
        return params, None
    start = m.end() - 1
    args = []
    for a in split_top(make[start + 1:matching_paren(make, start)]):
        if re.match(r"^\$\{\s*(\w+)\s*\}$", a):
            args.append(("param", re.match(r"^\$\{\s*(\w+)\s*\}$", a).group(1)))
        elif re.match(r'^"\$\{\s*(\w+)\s*\}"$', a):
            args.append(("string", re.match(r'^"\$\{\s*(\w+)\s*\}"$', a).group(1)))
        elif re.match(r"^\$\{(.*)\}$", a, re.S) and not re.match(r"^\$\{\s*\w+\.\w+\s*\}$", a):
            args.append(("expr", re.match(r"^\$\{(.*)\}$", a, re.S).group(1).strip()))
        else:
            args.append(("other", a))
    return params, args


# --------------------------------------------------------------------------- comparison

def same(a, b):
    if isinstance(a, (list, tuple)) or isinstance(b, (list, tuple)):
        if not isinstance(a, (list, tuple)) or not isinstance(b, (list, tuple)):
            return False
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, str) or isinstance(b, str):
        return a == b
    if a is None or b is None:
        return a is b
    if isinstance(a, bool) != isinstance(b, bool):
        return False
    return math.isclose(complex(a).real, complex(b).real, rel_tol=1e-12, abs_tol=0.0) and \
        math.isclose(complex(a).imag, complex(b).imag, rel_tol=1e-12, abs_tol=0.0)


def check(root):
    """(problems, allowed, compared): problems and allowed are lists of lines."""
    problems, allowed, compared = [], [], 0
    for ypath in sorted(glob.glob(os.path.join(root, "grc/gpuradar_*.block.yml"))):
        block = re.match(r"gpuradar_(\w+)\.block\.yml", os.path.basename(ypath)).group(1)
        try:
            params, gargs = grc_make_args(ypath, block)
        except Unparsed as e:
            problems.append(str(e))
            continue
        hpath = os.path.join(root, "include/gnuradio/gpuradar/%s.h" % block)
        bpath = os.path.join(root, "python/gpuradar/bindings/%s_python.cc" % block)
        structs = {}
        if os.path.exists(hpath):
            ref, structs = header_make(hpath)
            where = "header"
        else:
            ref, where = python_init(root, block), "__init__"
        if gargs is None and ref is None:
            continue  # a GRC wrapper of a GNU Radio block (sar_geometry_source)
        if ref is None:
            problems.append("%s: GRC makes gpuradar.%s but no header make() or Python "
                            "__init__ was found" % (block, block))
            continue

        def value_of(item):
            if item is None:
                return None
            if isinstance(item, tuple):
                return item[1]
            return cpp_value(item, structs)

        try:
            refv = [(n, (value_of(d),) if d is not None else None) for n, d in ref]
        except Unparsed as e:
            problems.append("%s (%s): %s" % (block, where, e))
            continue

        if where == "header":
            bind = binding_make(bpath) if os.path.exists(bpath) else None
            if bind is None:
                problems.append("%s: no py::init(&%s::make) binding in %s" % (block, block, bpath))
            else:
                if [n for n, _ in bind] != [n for n, _ in ref]:
                    problems.append("%s: binding arguments %s differ from the header's %s"
                                    % (block, [n for n, _ in bind], [n for n, _ in ref]))
                for (n, hd), (bn, bd) in zip(refv, bind):
                    if n != bn:
                        continue
                    compared += 1
                    try:
                        bv = (cpp_value(bd, structs),) if bd is not None else None
                    except Unparsed as e:
                        problems.append("%s.%s (binding): %s" % (block, n, e))
                        continue
                    if (hd is None) != (bv is None):
                        problems.append("%s.%s: the header %s, the binding %s" % (
                            block, n,
                            "has no default" if hd is None else "defaults to %r" % (hd[0],),
                            "has none" if bv is None else "defaults to %r" % (bv[0],)))
                    elif hd is not None and not same(hd[0], bv[0]):
                        problems.append("%s.%s: header default %r, binding default %r"
                                        % (block, n, hd[0], bv[0]))

        if gargs is None:
            problems.append("%s: templates.make does not call gpuradar.%s(...)" % (block, block))
            continue
        if len(gargs) != len(ref):
            problems.append("%s: templates.make passes %d arguments, the %s make() takes %d"
                            % (block, len(gargs), where, len(ref)))
            continue
        namespace = {}
        for pid, (dtype, default, _) in params.items():
            try:
                namespace[pid] = grc_value(dtype, default, {})
            except Exception:
                pass  # refers to a flowgraph variable; only a problem where it is compared
        used_markers = set()
        for (kind, text), (n, hd) in zip(gargs, refv):
            if kind in ("param", "string"):
                pid = text
                if pid not in params:
                    problems.append("%s: templates.make names ${%s}, not a parameter"
                                    % (block, pid))
                    continue
                dtype, default, reason = params[pid]
                if pid != n:
                    problems.append("%s: GRC parameter %s is passed as make()'s %s (one name "
                                    "per parameter)" % (block, pid, n))
                if hd is None:
                    continue
                try:
                    gv = default if kind == "string" else grc_value(dtype, default, {})
                except Exception:
                    gv = "<%s: not a value of its own>" % default
            elif kind == "expr":
                pid, reason = n, params.get(n, [None, None, None])[2]
                if hd is None:
                    continue
                try:
                    gv = grc_value("raw", text, namespace)
                except Exception as e:
                    problems.append("%s.%s: cannot evaluate GRC's %r (%s)" % (block, n, text, e))
                    continue
            else:
                continue
            compared += 1
            differs = not same(gv, hd[0])
            if reason is not None:
                used_markers.add(pid)
                if not reason:
                    problems.append("%s.%s: the '%s' marker gives no reason" % (block, pid, MARKER))
                elif not differs:
                    problems.append("%s.%s: marked '%s' but GRC's default %r equals the %s's; "
                                    "remove the marker" % (block, pid, MARKER, gv, where))
                else:
                    allowed.append("%s.%s: GRC %r, %s %r (%s)" % (block, pid, gv, where,
                                                                   hd[0], reason))
            elif differs:
                problems.append("%s.%s: GRC default %r, %s default %r" % (block, pid, gv, where,
                                                                          hd[0]))
        for pid, (_, _, reason) in params.items():
            if reason is not None and pid not in used_markers:
                problems.append("%s.%s: a '%s' marker on a parameter with no default in make() "
                                "to differ from" % (block, pid, MARKER))
    return problems, allowed, compared


# --------------------------------------------------------------------------- self-test

def scratch_copy(root):
    """A temporary tree holding only what check() reads."""
    tmp = tempfile.mkdtemp(prefix="check_defaults_")
    for sub in ("grc", "include/gnuradio/gpuradar", "python/gpuradar/bindings"):
        shutil.copytree(os.path.join(root, sub), os.path.join(tmp, sub))
    for path in glob.glob(os.path.join(root, "python/gpuradar/*.py")):
        shutil.copy(path, os.path.join(tmp, "python/gpuradar"))
    return tmp


def self_test(root):
    """Copy the sources to a scratch tree, plant one change at a time, expect it caught."""
    base, _, _ = check(root)
    if base:
        print("self-test: the tree itself has differences; fix them first:")
        print("\n".join("  " + p for p in base))
        return 1

    def plant(rel, old, new, expect, count=1):
        tmp = scratch_copy(root)
        try:
            path = os.path.join(tmp, rel)
            text = open(path).read()
            if text.count(old) < 1:
                return "%s: planted text %r not found" % (rel, old)
            open(path, "w").write(text.replace(old, new, count))
            problems, _, _ = check(tmp)
            if not any(expect in p for p in problems):
                return "%s: %r -> %r not caught (problems: %s)" % (rel, old, new, problems)
            return None
        finally:
            shutil.rmtree(tmp)

    cases = [
        # One copy changes: each of the three is caught.
        ("grc/gpuradar_pulse_framer.block.yml",
         "-   id: device\n    label: CUDA device\n    dtype: int\n    default: '0'",
         "-   id: device\n    label: CUDA device\n    dtype: int\n    default: '1'",
         "pulse_framer.device: GRC default 1"),
        ("python/gpuradar/bindings/cfar_1d_python.cc", 'py::arg("backend") = "auto"',
         'py::arg("backend") = "cpu"', "cfar_1d.backend: header default 'auto', binding"),
        ("include/gnuradio/gpuradar/envelope.h", 'const std::string& backend = "auto"',
         'const std::string& backend = "cpu"', "envelope.backend: header default 'cpu'"),
        # A default dropped from one side, an argument renamed in the binding.
        ("python/gpuradar/bindings/cfar_2d_python.cc", 'py::arg("device") = 0',
         'py::arg("device")', "cfar_2d.device: the header defaults to 0, the binding has none"),
        ("python/gpuradar/bindings/corner_turn_python.cc", 'py::arg("channels")',
         'py::arg("nchannels")', "corner_turn: binding arguments"),
        # A parameter struct's initialiser, the source of its block's make() defaults.
        ("include/gnuradio/gpuradar/pulse_doppler_processor.h", "double bandwidth = 5e6;",
         "double bandwidth = 7e6;",
         "pulse_doppler_processor.bandwidth: GRC default 5000000.0, header default 7000000.0"),
        # A Python block's __init__ against its YAML.
        ("python/gpuradar/display_tracks.py", "trail_length=20", "trail_length=21",
         "track_sink.trail_length: GRC default 20, __init__ default 21"),
        # Markers: without a reason, or on a default that agrees.
        ("grc/gpuradar_corner_turn.block.yml", "default: auto",
         "default: auto  # %s" % MARKER, "marker gives no reason"),
        ("grc/gpuradar_corner_turn.block.yml", "default: auto",
         "default: auto  # %s planted" % MARKER, "remove the marker"),
    ]
    failures = [f for f in (plant(*c) for c in cases) if f]
    # And a marker with a reason on a real difference is accepted, reported as allowed.
    tmp = scratch_copy(root)
    try:
        path = os.path.join(tmp, "grc/gpuradar_corner_turn.block.yml")
        text = open(path).read()
        open(path, "w").write(text.replace("default: auto",
                                           "default: cpu  # %s planted reason" % MARKER, 1))
        problems, allowed, _ = check(tmp)
        if problems or not any("planted reason" in a for a in allowed):
            failures.append("a marked difference with a reason: problems %s, allowed %s"
                            % (problems, allowed))
    finally:
        shutil.rmtree(tmp)
    for f in failures:
        print("self-test FAILED: " + f)
    print("self-test: %d planted changes, %d caught" % (len(cases) + 1,
                                                         len(cases) + 1 - len(failures)))
    return 1 if failures else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("root", nargs="?", default=os.path.join(os.path.dirname(
        os.path.abspath(__file__)), os.pardir), help="repository root")
    ap.add_argument("--self-test", action="store_true",
                    help="plant mismatches in a scratch copy and check each is caught")
    ap.add_argument("-v", "--verbose", action="store_true", help="list the allowed differences")
    a = ap.parse_args()
    root = os.path.abspath(a.root)
    if a.self_test:
        return self_test(root)
    problems, allowed, compared = check(root)
    if a.verbose:
        for x in allowed:
            print("allowed: " + x)
    for p in problems:
        print("DIFFERS: " + p)
    print("%d defaults compared, %d differ, %d differ on purpose (marked)"
          % (compared, len(problems), len(allowed)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
