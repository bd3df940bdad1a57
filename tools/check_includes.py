#!/usr/bin/env python3
"""The include graph's rules (docs/DESIGN.md, Layers: which file may include which).

Reads every #include line of the C/C++/CUDA files under kernels/, lib/, apps/ and
include/ and fails, one line per offending include, when:

  neutral-to-backend   a backend-neutral file (kernels/src/<domain>/*) includes a cpu/ or
                       cuda/ file: the neutral layer is what both backends build on;
  cpu-cuda             a cpu/ file includes a cuda/ file, or a cuda/ file a cpu/ file;
  sideways-domain      a backend file includes another domain's backend file (only its
                       own domain's and common/'s of the same backend);
  sideways-stage       a file includes another stage's <stage>_backends.h (the factories
                       between one stage's front and its backends; a stage that composes
                       another goes through the public API or a neutral header);
  gnuradio-in-kernels  a kernels/ file includes GNU Radio (gnuradio/, pmt/);
  private-from-public  a public header (kernels/include/, include/) includes a private
                       one (a quoted path, or kernels/src/);
  private-from-lib     lib/, apps/ or python/ code includes a kernels/src/ header;
  cycle                the includes between the project's own files form a cycle.

  tools/check_includes.py [ROOT]      check the tree (ctest: include_graph_check)
  tools/check_includes.py --self-test plant each kind of back-arrow in the real tree's
                                      include lines (in memory) and fail unless each is
                                      reported under its rule (ctest:
                                      include_graph_check_selftest)
"""
import os
import re
import sys

SOURCE_SUFFIXES = (".h", ".hh", ".hpp", ".cc", ".cpp", ".cu", ".cuh")
SCANNED = ("kernels", "lib", "apps", "include", "python/gpuradar/bindings", "fuzz")
INCLUDE_RE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]', re.M)
BACKENDS = ("cpu", "cuda")


def load_tree(root):
    """{relative path: text} of the scanned source files."""
    files = {}
    for top in SCANNED:
        base = os.path.join(root, top)
        for dirpath, dirnames, filenames in os.walk(base):
            dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
            for name in sorted(filenames):
                if name.endswith(SOURCE_SUFFIXES):
                    path = os.path.join(dirpath, name)
                    with open(path, encoding="utf-8", errors="replace") as f:
                        files[os.path.relpath(path, root)] = f.read()
    return files


def includes(text):
    """(line number, '<' or '"', path) of each #include."""
    out = []
    for m in INCLUDE_RE.finditer(text):
        out.append((text.count("\n", 0, m.start()) + 1, m.group(1), m.group(2)))
    return out


def kernels_place(path):
    """kernels/src/<domain>/[cpu/|cuda/]<file>: (domain, backend or None); else None."""
    parts = path.split("/")
    if len(parts) < 4 or parts[:2] != ["kernels", "src"]:
        return None
    if len(parts) == 4:
        return parts[2], None
    if len(parts) == 5 and parts[3] in BACKENDS:
        return parts[2], parts[3]
    return parts[2], "other"


def stem(path):
    name = os.path.basename(path)
    return name.split(".", 1)[0]


def stage_names(files):
    """Stage names: the backend-neutral .cc files and the <stage>_backends.h headers."""
    names = set()
    for path in files:
        place = kernels_place(path)
        if place and place[1] is None:
            s = stem(path)
            names.add(s[: -len("_backends")] if s.endswith("_backends") else s)
    return names


def stage_of(path, stages):
    """The longest stage name the file's name is, or starts with followed by '_'."""
    s = stem(path)
    best = None
    for name in stages:
        if s != name and not s.startswith(name + "_"):
            continue
        if best is None or len(name) > len(best):
            best = name
    return best


def resolve(includer, bracket, target, files):
    """The project file an include names, or None (system and external headers)."""
    candidates = []
    if bracket == '"':
        here = os.path.dirname(includer)
        candidates.append(os.path.normpath(os.path.join(here, target)))
        if includer.startswith("kernels/"):
            candidates.append("kernels/src/" + target)
    candidates += ["kernels/include/" + target, "include/" + target]
    if includer.startswith("apps/"):
        candidates.append("apps/" + target)
    for c in candidates:
        if c in files:
            return c
    return None


def check(files):
    """Sorted list of 'path:line: rule: message'."""
    stages = stage_names(files)
    errors = []
    graph = {}
    for path in sorted(files):
        edges = graph.setdefault(path, [])
        place = kernels_place(path)
        for line, bracket, target in includes(files[path]):
            where = "%s:%d: " % (path, line)
            resolved = resolve(path, bracket, target, files)
            if resolved:
                edges.append((resolved, line))
            if path.startswith("kernels/") and re.match(r"(gnuradio|pmt)/", target):
                errors.append(where + "gnuradio-in-kernels: includes <%s>" % target)
            if path.startswith(("kernels/include/", "include/")) and (
                bracket == '"' or (resolved or "").startswith("kernels/src/")
            ):
                errors.append(where + "private-from-public: includes \"%s\"" % target)
            if path.startswith(("lib/", "apps/", "python/", "fuzz/")) and (
                resolved or ""
            ).startswith("kernels/src/"):
                errors.append(where + "private-from-lib: includes %s" % resolved)
            tplace = kernels_place(resolved) if resolved else None
            if not (place and tplace):
                continue
            (domain, backend), (tdomain, tbackend) = place, tplace
            if backend is None and tbackend in BACKENDS:
                errors.append(
                    where + "neutral-to-backend: the neutral layer includes %s" % resolved
                )
            if backend in BACKENDS and tbackend in BACKENDS and backend != tbackend:
                errors.append(
                    where + "cpu-cuda: a %s file includes %s" % (backend, resolved)
                )
            if (
                backend in BACKENDS
                and tbackend == backend
                and tdomain not in (domain, "common")
            ):
                errors.append(
                    where
                    + "sideways-domain: %s's %s code includes %s"
                    % (domain, backend, resolved)
                )
            if stem(resolved).endswith("_backends") and tbackend is None:
                owner = stem(resolved)[: -len("_backends")]
                mine = stage_of(path, stages)
                if tdomain != domain or mine != owner:
                    errors.append(
                        where
                        + "sideways-stage: %s (stage %s) includes %s, stage %s's backend "
                        "factories" % (path, mine or "none", resolved, owner)
                    )
    errors += find_cycles(graph)
    return sorted(errors)


def find_cycles(graph):
    """One 'cycle' error per strongly connected set of files that include each other."""
    index, low, on_stack, stack, out = {}, {}, set(), [], []
    counter = [0]

    def visit(v):
        # Iterative Tarjan: include chains can be longer than Python's recursion limit.
        work = [(v, iter(graph.get(v, [])))]
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        while work:
            node, it = work[-1]
            advanced = False
            for w, _ in it:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(graph.get(w, []))))
                    advanced = True
                    break
                if w in on_stack:
                    low[node] = min(low[node], index[w])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                members = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    members.append(w)
                    if w == node:
                        break
                self_loop = any(t == node for t, _ in graph.get(node, []))
                if len(members) > 1 or self_loop:
                    ring = " <-> ".join(sorted(members))
                    out.append("%s: cycle: %s" % (min(members), ring))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def plant(files, path, line):
    """A copy of files with `line` added after path's first #include."""
    if path not in files:
        raise SystemExit("self-test: %s is not in the tree (update the plants)" % path)
    text = files[path]
    m = INCLUDE_RE.search(text)
    at = text.index("\n", m.start()) + 1 if m else 0
    planted = dict(files)
    planted[path] = text[:at] + line + "\n" + text[at:]
    return planted


# (rule expected, file planted in, include line planted): one per kind of back-arrow,
# each into a file that exists in the tree.
PLANTS = [
    (
        "neutral-to-backend",
        "kernels/src/pulse_doppler/pulse_compression.cc",
        '#include "common/cpu/fftw_plan.h"',
    ),
    (
        "neutral-to-backend",
        "kernels/src/sar/csa.cc",
        '#include "common/cuda/cuda_check.h"',
    ),
    ("cpu-cuda", "kernels/src/sar/cpu/csa_cpu.cc", '#include "common/cuda/launch.h"'),
    (
        "cpu-cuda",
        "kernels/src/sar/cuda/csa_cuda.cu",
        '#include "common/cpu/row_pool.h"',
    ),
    (
        "sideways-domain",
        "kernels/src/sar/cuda/csa_cuda.cu",
        '#include "detection/cuda/cfar_cuda_kernels.cuh"',
    ),
    (
        "sideways-stage",
        "kernels/src/pulse_doppler/cuda/pulse_doppler_processor_cuda.cu",
        '#include "pulse_doppler/pulse_compression_backends.h"',
    ),
    (
        "sideways-stage",
        "kernels/src/sar/backprojection.cc",
        '#include "sar/csa_backends.h"',
    ),
    (
        "gnuradio-in-kernels",
        "kernels/src/tracking/tracker.cc",
        "#include <gnuradio/block.h>",
    ),
    ("gnuradio-in-kernels", "kernels/src/scene/radar_scene.cc", "#include <pmt/pmt.h>"),
    (
        "private-from-public",
        "kernels/include/gpuradar/kernels/common/window.h",
        '#include "common/param_check.h"',
    ),
    (
        "private-from-lib",
        "lib/cfar_1d_impl.cc",
        '#include "../kernels/src/common/param_check.h"',
    ),
]


def self_test(root):
    files = load_tree(root)
    baseline = set(check(files))
    failures = 0
    for rule, path, line in PLANTS:
        new = set(check(plant(files, path, line))) - baseline
        hit = [e for e in new if e.startswith(path + ":") and (": %s: " % rule) in e]
        status = "ok  " if hit else "FAIL"
        failures += not hit
        print("%s %-20s %s <- %s" % (status, rule, path, line))
        for e in sorted(new):
            print("       reported: " + e)
    # A cycle: two headers that include each other.
    a, b = "kernels/src/common/param_check.h", "kernels/src/common/factories.h"
    cyc = plant(files, a, '#include "common/factories.h"')
    cyc = plant(cyc, b, '#include "common/param_check.h"')
    new = set(check(cyc)) - baseline
    hit = [e for e in new if ": cycle: " in e and a in e and b in e]
    failures += not hit
    print("%s %-20s %s <-> %s" % ("ok  " if hit else "FAIL", "cycle", a, b))
    # The tree as it is, and an include the rules allow, add nothing.
    allowed = plant(
        files, "kernels/src/sar/cuda/csa_cuda.cu", '#include "common/cuda/launch.h"'
    )
    extra = set(check(allowed)) - baseline
    failures += bool(extra)
    status = "FAIL" if extra else "ok  "
    print("%s %-20s a cuda file includes common/cuda/launch.h" % (status, "allowed"))
    for e in sorted(extra):
        print("       reported: " + e)
    print("self-test: %s" % ("FAILED (%d)" % failures if failures else "passed"))
    return 1 if failures else 0


def main(argv):
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(here)
    args = argv[1:]
    if args and args[0] == "--self-test":
        return self_test(args[1] if len(args) > 1 else root)
    if args and args[0].startswith("-"):
        print(__doc__)
        return 0 if args[0] in ("-h", "--help") else 2
    root = args[0] if args else root
    files = load_tree(root)
    errors = check(files)
    for e in errors:
        print(e)
    print(
        "include_graph_check: %d files, %d rule violations (docs/DESIGN.md, Layers)"
        % (len(files), len(errors))
    )
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
