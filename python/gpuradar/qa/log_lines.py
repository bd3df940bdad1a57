#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""Runs a piece of Python in a child process and returns the GNU Radio log lines it wrote
(the logger writes from C++, to stdout or stderr as its console sink is set up, out of
reach of an in-process capture): for tests of what a user reads in the log and how
often. The child reports its results with result(...)."""

import subprocess
import sys

MARK = "RESULT:"
#: Prepended to the child's code: result(*values) prints one result line.
PRELUDE = f"def result(*values):\n    print({MARK!r}, *values, flush=True)\n"


def run(code, timeout=120):
    """Runs `code` with this interpreter and environment; returns (the result lines, each
    split into words, the other lines of stdout and stderr). AssertionError when the
    child exits non-zero."""
    p = subprocess.run([sys.executable, "-c", PRELUDE + code], capture_output=True,
                       text=True, timeout=timeout)
    if p.returncode != 0:
        raise AssertionError(f"child exited with {p.returncode}:\n{p.stdout}{p.stderr}")
    lines = p.stdout.splitlines() + p.stderr.splitlines()
    results = [line.split()[1:] for line in lines if line.startswith(MARK)]
    return results, [line for line in lines if not line.startswith(MARK)]
