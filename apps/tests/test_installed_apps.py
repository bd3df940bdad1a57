#!/usr/bin/python3
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""The apps as a user meets them after `cmake --install`: installed into a scratch
prefix, run by their installed names with a PATH whose first `python3` (and `python`) is
a stub that exits 1, PYTHONPATH naming the installed site-packages only and no
LD_LIBRARY_PATH. Each app answers --version (the CMake project version) and --help, and
one small real run goes sim (tiny preset) -> process -> and sim sar -> sar on the CPU.

  test_installed_apps.py BUILD_DIR SCRATCH_DIR PYTHON_DIR PYTHON VERSION

PYTHON_DIR: GR_PYTHON_DIR (site-packages relative to the prefix); PYTHON: GNU Radio's
interpreter the installed apps must name on their first line.
"""

import json
import os
import shutil
import subprocess
import sys
import unittest

APPS = ("gpuradar-sim", "gpuradar-process", "gpuradar-sar", "gpuradar-demo")
BUILD, SCRATCH, PYTHON_DIR, PYTHON, VERSION = (sys.argv[1:6] if len(sys.argv) >= 6
                                                else (None,) * 5)
PREFIX = os.path.join(SCRATCH or "", "prefix")
WORK = os.path.join(SCRATCH or "", "work")
STUBS = os.path.join(SCRATCH or "", "stubs")


def install():
    shutil.rmtree(SCRATCH, ignore_errors=True)
    os.makedirs(WORK)
    os.makedirs(STUBS)
    subprocess.run(["cmake", "--install", BUILD, "--prefix", PREFIX], check=True,
                   stdout=subprocess.DEVNULL)
    for name in ("python3", "python"):
        stub = os.path.join(STUBS, name)
        with open(stub, "w") as f:
            f.write("#!/bin/sh\necho \"stub $0: not GNU Radio's Python\" >&2\nexit 1\n")
        os.chmod(stub, 0o755)


def user_env():
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "LD_LIBRARY_PATH", "PYTHONHOME")}
    env["PATH"] = os.pathsep.join([STUBS, os.path.join(PREFIX, "bin"), "/usr/bin", "/bin"])
    env["PYTHONPATH"] = os.path.join(PREFIX, PYTHON_DIR)
    env["MPLBACKEND"] = "Agg"
    return env


def run(*cmd):
    p = subprocess.run(cmd, cwd=WORK, env=user_env(), capture_output=True, text=True,
                       timeout=120)
    return p.returncode, p.stdout, p.stderr


class Installed(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        install()

    def test_001_stub_python_first_on_path(self):
        # The premise: the python3 a user's PATH finds first is not GNU Radio's.
        self.assertEqual(shutil.which("python3", path=user_env()["PATH"]),
                         os.path.join(STUBS, "python3"))
        rc, _, _ = run("python3", "-c", "pass")
        self.assertEqual(rc, 1)

    def test_002_first_line_is_gnuradios_interpreter(self):
        for app in APPS:
            path = os.path.join(PREFIX, "bin", app)
            with self.subTest(app=app):
                self.assertTrue(os.access(path, os.X_OK), path)
                with open(path) as f:
                    self.assertEqual(f.readline().rstrip("\n"), "#!" + PYTHON)

    def test_003_version_and_help(self):
        for app in APPS:
            with self.subTest(app=app):
                rc, out, err = run(app, "--version")
                self.assertEqual((rc, out.strip()), (0, f"{app} (gr-gpuradar) {VERSION}"),
                                 err)
                rc, out, err = run(app, "--help")
                self.assertEqual(rc, 0, err)
                self.assertIn(f"usage: {app}", out)

    def test_004_the_installed_package_is_imported(self):
        rc, out, err = run(PYTHON, "-c", "from gnuradio import gpuradar; "
                           "print(gpuradar.__file__); print(gpuradar.__version__)")
        self.assertEqual(rc, 0, err)
        path, version = out.split()
        self.assertTrue(path.startswith(PREFIX + os.sep), path)
        self.assertEqual(version, VERSION)

    def test_005_libraries_resolve_without_ld_library_path(self):
        libs = []
        for root, _, files in os.walk(PREFIX):
            libs += [os.path.join(root, f) for f in files
                     if f.endswith(".so") or ".so." in f
                     or f in ("gpuradar_bench", "gpuradar_soak")]
        self.assertTrue(any("gpuradar_python" in f for f in libs), libs)
        self.assertTrue(any("libgnuradio-gpuradar" in f for f in libs), libs)
        for lib in libs:
            with self.subTest(lib=lib):
                p = subprocess.run(["ldd", lib], env=user_env(), capture_output=True,
                                   text=True)
                self.assertEqual(p.returncode, 0, p.stderr)
                self.assertNotIn("not found", p.stdout)
                for line in p.stdout.splitlines():
                    if "gpuradar" in line.split("=>")[0]:
                        self.assertIn(PREFIX, line)  # ours, not another install's

    def test_006_sim_process_sar_on_the_cpu(self):
        rc, out, err = run("gpuradar-sim", "--preset", "tiny", "-o", "rec", "-q")
        self.assertEqual(rc, 0, out + err)
        rc, out, err = run("gpuradar-process", "-i", "rec", "--backend", "cpu", "-o", "det",
                           "--png-size", "320x240", "--check", "-q")
        self.assertEqual(rc, 0, out + err)
        with open(os.path.join(WORK, "det.json")) as f:
            report = json.load(f)
        self.assertEqual(report["backend"]["pulse_doppler_processor"], "cpu")
        self.assertEqual((report["truth"]["detected"], report["truth"]["missed"]), (2, 0))
        self.assertTrue(os.path.isfile(os.path.join(WORK, "det.png")))
        rc, out, err = run("gpuradar-sim", "sar", "--preset", "tiny", "-o", "ph")
        self.assertEqual(rc, 0, out + err)
        rc, out, err = run("gpuradar-sar", "-i", "ph", "--backend", "cpu", "-o", "img",
                           "--check", "-q")
        self.assertEqual(rc, 0, out + err)
        for f in ("img.npy", "img.png"):
            self.assertTrue(os.path.isfile(os.path.join(WORK, f)), f)
        rc, out, err = run("gpuradar-demo", "--backend", "cpu", "--npulses", "16",
                           "--nrange", "512", "--delay", "100")
        self.assertEqual(rc, 0, out + err)
        self.assertIn("FOUND", out)


if __name__ == "__main__":
    if None in (BUILD, SCRATCH, PYTHON_DIR, PYTHON, VERSION):
        sys.exit(__doc__)
    unittest.main(argv=sys.argv[:1] + sys.argv[6:])
