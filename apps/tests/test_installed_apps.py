#!/usr/bin/python3
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""The apps as a user meets them after `cmake --install` (class Installed) and after
installing the Debian package that `cpack -G DEB` makes (class Package).

Installed: installed into a scratch prefix, run by their installed names with a PATH whose
first `python3` (and `python`) is a stub that exits 1, PYTHONPATH naming the installed
site-packages only and no LD_LIBRARY_PATH. Each app answers --version (the CMake project
version) and --help, and one small real run goes sim (tiny preset) -> process -> and sim
sar -> sar on the CPU. Without PYTHONPATH an app names the exact directory to add and
gpuradar-env; `eval "$(gpuradar-env)"` then makes the apps, Python and GRC find it.

Package: the .deb built from the build tree, unpacked with `dpkg -x` into a scratch root:
its control fields and layout (everything under /usr, Python in Debian's dist-packages,
GRC blocks where gnuradio-companion looks), the apps by name with that root's PATH,
PYTHONPATH, LD_LIBRARY_PATH and GRC_BLOCKS_PATH (gpuradar-sim --preset examples ->
gpuradar-process), and grcc on a packaged example with only that root's blocks.

  test_installed_apps.py BUILD_DIR SCRATCH_DIR PYTHON_DIR PYTHON VERSION [unittest args]

PYTHON_DIR: GR_PYTHON_DIR (site-packages relative to the prefix); PYTHON: GNU Radio's
interpreter the installed apps must name on their first line.
"""

import glob
import json
import os
import shlex
import shutil
import subprocess
import sys
import unittest

import numpy as np

APPS = ("gpuradar-sim", "gpuradar-process", "gpuradar-sar", "gpuradar-demo",
        "gpuradar-passive")
#: Installed beside the apps: what a prefix needs (eval "$(gpuradar-env)").
ENV_SCRIPT = "gpuradar-env"
BUILD, SCRATCH, PYTHON_DIR, PYTHON, VERSION = (sys.argv[1:6] if len(sys.argv) >= 6
                                                else (None,) * 5)
PREFIX = os.path.join(SCRATCH or "", "prefix")
WORK = os.path.join(SCRATCH or "", "work")
STUBS = os.path.join(SCRATCH or "", "stubs")


def make_stubs():
    os.makedirs(WORK)
    os.makedirs(STUBS)
    for name in ("python3", "python"):
        stub = os.path.join(STUBS, name)
        with open(stub, "w") as f:
            f.write("#!/bin/sh\necho \"stub $0: not GNU Radio's Python\" >&2\nexit 1\n")
        os.chmod(stub, 0o755)


def install():
    shutil.rmtree(SCRATCH, ignore_errors=True)
    make_stubs()
    subprocess.run(["cmake", "--install", BUILD, "--prefix", PREFIX], check=True,
                   stdout=subprocess.DEVNULL)


def user_env(pythonpath=True, **extra):
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "LD_LIBRARY_PATH", "PYTHONHOME", "GRC_BLOCKS_PATH")}
    env["PATH"] = os.pathsep.join([STUBS, os.path.join(PREFIX, "bin"), "/usr/bin", "/bin"])
    if pythonpath:
        env["PYTHONPATH"] = os.path.join(PREFIX, PYTHON_DIR)
    env["MPLBACKEND"] = "Agg"
    env.update(extra)
    return env


def run(*cmd, env=None):
    p = subprocess.run(cmd, cwd=WORK, env=env or user_env(), capture_output=True, text=True,
                       timeout=120)
    return p.returncode, p.stdout, p.stderr


def gnuradio_log_lines(text, word):
    return [line for line in text.splitlines() if word in line]


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
        for app in APPS + (ENV_SCRIPT,):
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
        rc, out, err = run(ENV_SCRIPT, "--help")
        self.assertEqual(rc, 0, err)
        self.assertIn(f"usage: {ENV_SCRIPT}", out)

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
        # The CPU was asked for: not a word about CUDA, a driver or a GPU.
        for word in ("CUDA", "cuda", "NVIDIA", "GPU"):
            self.assertEqual(gnuradio_log_lines(out + err, word), [], word)
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

    def test_006b_sar_autofocus_by_installed_name(self):
        # A recording whose measured track is 12 mm off the true one, refocused.
        rc, out, err = run("gpuradar-sim", "sar", "--preset", "tiny", "-o", "af", "-q",
                           "--prf", "50", "--cross-track-sine", "0.012,1.5s,0.3")
        self.assertEqual(rc, 0, out + err)
        images = {}
        for name, extra in (("plain", []), ("pga", ["--autofocus", "pga"])):
            rc, out, err = run("gpuradar-sar", "-i", "af", "--backend", "cpu", "-o",
                               "af-" + name, "--no-png", "-q", *extra)
            self.assertEqual(rc, 0, out + err)
            images[name] = np.load(os.path.join(WORK, f"af-{name}.npy"))
        self.assertRegex(out, r"autofocus pga: \d+ target\(s\), converged after \d+ "
                              r"iteration\(s\)")
        self.assertTrue(os.path.isfile(os.path.join(WORK, "af-pga.phase_error.npy")))
        # focus improves: the brightest pixel gains, the entropy falls
        peak = {k: float(np.abs(v).max()) for k, v in images.items()}
        self.assertGreater(peak["pga"], 1.5 * peak["plain"])

        def entropy(image):
            q = np.abs(image.astype(np.complex128)) ** 2
            p = q[q > 0] / q.sum()
            return float(-(p * np.log(p)).sum())
        self.assertLess(entropy(images["pga"]), entropy(images["plain"]) - 0.5)

    def test_006c_sim_passive_to_gpuradar_passive_on_the_cpu(self):
        rc, out, err = run("gpuradar-sim", "passive", "-o", "prec", "--nsamples", "49152")
        self.assertEqual(rc, 0, out + err)
        rc, out, err = run("gpuradar-passive", "-i", "prec", "--backend", "cpu", "-o",
                           "pdet", "--check", "-q")
        self.assertEqual(rc, 0, out + err)
        with open(os.path.join(WORK, "pdet.json")) as f:
            report = json.load(f)
        self.assertEqual(report["backend"]["cross_ambiguity"], "cpu")
        self.assertEqual(report["cpis"], 3)
        self.assertEqual((report["truth"]["detected"], report["truth"]["missed"],
                          report["truth"]["false_detections"]), (3, 0, 0))
        for f in ("pdet.csv", "pdet.tracks.csv", "pdet.png"):
            self.assertTrue(os.path.isfile(os.path.join(WORK, f)), f)
        # Four surveillance channels, targets from 20 deg: a beam there finds them all;
        # one at -9.1 deg puts them in the 4-element array's first null (check fails).
        targets = [a for t in ("5400,183,-20,20", "11100,-274,-18,20", "15600,427,-16,20")
                   for a in ("--target", t)]
        rc, out, err = run("gpuradar-sim", "passive", "-o", "parr", "--nsurv", "4",
                           "--nsamples", "49152", "-q", *targets)
        self.assertEqual(rc, 0, out + err)
        for beam, want in (("20", 0), ("-9.1", 1)):
            rc, out, err = run("gpuradar-passive", "-i", "parr", "--beam", beam, "--backend",
                               "cpu", "-o", "pbeam", "--check", "-q", "--no-png")
            self.assertEqual(rc, want, out + err)

    def test_007_backend_auto_says_why_once(self):
        rc, out, err = run(PYTHON, "-c", "from gnuradio import gpuradar; "
                           "print(gpuradar.cuda_available())")
        self.assertEqual(rc, 0, err)
        if out.strip() == "True":
            self.skipTest("a GPU is present: auto picks it")
        rc, out, err = run("gpuradar-demo", "--npulses", "16", "--nrange", "512",
                           "--delay", "100")
        self.assertEqual(rc, 0, out + err)
        said = gnuradio_log_lines(out + err, "NVIDIA")
        self.assertEqual(len(said), 1, out + err)
        self.assertIn("backend auto: running on the CPU, ", said[0])
        self.assertTrue("no NVIDIA driver found" in said[0] or "no NVIDIA GPU" in said[0]
                        or "the NVIDIA driver" in said[0], said[0])
        self.assertNotIn("cudaGetDeviceCount", out + err)

    def test_008_without_pythonpath_the_app_says_what_to_set(self):
        rc, _, _ = run(PYTHON, "-c", "from gnuradio import gpuradar",
                       env=user_env(pythonpath=False))
        if rc == 0:
            self.skipTest("another gr-gpuradar is importable without PYTHONPATH "
                          "(installed into /usr/local or /usr?)")
        pydir = os.path.join(PREFIX, PYTHON_DIR)
        for app in APPS:
            with self.subTest(app=app):
                rc, out, err = run(app, "--help", env=user_env(pythonpath=False))
                self.assertEqual(rc, 1, out + err)
                self.assertNotIn("Traceback", err)
                self.assertIn(f"{app}: Python does not find gr-gpuradar's package", err)
                self.assertIn(f"It is installed in {pydir};", err)
                self.assertIn(f"export PYTHONPATH={shlex.quote(pydir)}", err)
                gpuradar_env = os.path.join(PREFIX, "bin", ENV_SCRIPT)
                self.assertIn(f'eval "$({shlex.quote(gpuradar_env)})"', err)

    def test_009_eval_gpuradar_env(self):
        # A shell with none of the prefix's paths: after eval the apps run by name, Python
        # imports the installed module and GRC_BLOCKS_PATH names its blocks; a second
        # gpuradar-env has nothing left to set.
        env = user_env(pythonpath=False, PATH=os.pathsep.join([STUBS, "/usr/bin", "/bin"]))
        script = (f'eval "$({shlex.quote(os.path.join(PREFIX, "bin", ENV_SCRIPT))})" && '
                  'gpuradar-sim --version && '
                  f'{PYTHON} -c "from gnuradio import gpuradar; print(gpuradar.__file__)" && '
                  'echo "GRC=$GRC_BLOCKS_PATH" && gpuradar-env')
        rc, out, err = run("/bin/sh", "-c", script, env=env)
        self.assertEqual(rc, 0, out + err)
        lines = out.splitlines()
        self.assertEqual(lines[0], f"gpuradar-sim (gr-gpuradar) {VERSION}")
        self.assertTrue(lines[1].startswith(os.path.join(PREFIX, PYTHON_DIR) + os.sep),
                        lines[1])
        self.assertEqual(lines[2],
                         "GRC=" + os.path.join(PREFIX, "share", "gnuradio", "grc", "blocks"))
        self.assertEqual(lines[3:], [f"# gr-gpuradar in {PREFIX}: nothing to set"])


DEB_ROOT = os.path.join(SCRATCH or "", "root")


def deb_env():
    """The unpacked package's paths in place of /usr's: what dpkg -i would give."""
    usr = os.path.join(DEB_ROOT, "usr")
    env = user_env(pythonpath=False)
    env.update(PATH=os.pathsep.join([STUBS, os.path.join(usr, "bin"), "/usr/bin", "/bin"]),
               PYTHONPATH=os.path.join(usr, "lib", "python3", "dist-packages"),
               LD_LIBRARY_PATH=os.path.join(usr, "lib"),
               GRC_BLOCKS_PATH=os.path.join(usr, "share", "gnuradio", "grc", "blocks"),
               # GRC's own blocks only (GNU Radio reads GR_CONF_<section>_<key>): not
               # a copy of ours that `cmake --install` may have left in /usr/local.
               GR_CONF_GRC_GLOBAL_BLOCKS_PATH="/usr/share/gnuradio/grc/blocks",
               GR_CONF_GRC_LOCAL_BLOCKS_PATH="")
    return env


class Package(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        shutil.rmtree(SCRATCH, ignore_errors=True)
        make_stubs()
        out = os.path.join(SCRATCH, "cpack")
        subprocess.run(["cpack", "-G", "DEB", "-B", out], cwd=BUILD, check=True,
                       stdout=subprocess.DEVNULL)
        debs = glob.glob(os.path.join(out, "*.deb"))
        assert len(debs) == 1, debs
        cls.deb = debs[0]
        subprocess.run(["dpkg-deb", "-x", cls.deb, DEB_ROOT], check=True)

    def field(self, name):
        return subprocess.run(["dpkg-deb", "-f", self.deb, name], check=True,
                              capture_output=True, text=True).stdout.strip()

    def test_001_control_fields(self):
        self.assertEqual(self.field("Package"), "gr-gpuradar")
        self.assertEqual(self.field("Version"), VERSION)
        self.assertRegex(self.field("Maintainer"), r"^[^<>]+ <[^<>@]+@[^<>]+>$")
        depends = [d.strip().split()[0] for d in self.field("Depends").split(",")]
        for package in ("gnuradio", "python3", "python3-numpy", "python3-matplotlib",
                        "libfftw3-single3", "libzmq5"):
            self.assertIn(package, depends)
        # The libraries' own dependencies, from dpkg-shlibdeps.
        self.assertTrue(any(d.startswith("libgnuradio-runtime") for d in depends), depends)
        self.assertEqual(os.path.basename(self.deb),
                         f"gr-gpuradar_{VERSION}_{self.field('Architecture')}.deb")

    def test_002_layout_under_usr(self):
        self.assertEqual(sorted(os.listdir(DEB_ROOT)), ["usr"])
        usr = os.path.join(DEB_ROOT, "usr")
        for path in ["bin/" + app for app in APPS + (ENV_SCRIPT,)] + [
                "lib/python3/dist-packages/gnuradio/gpuradar/__init__.py",
                "share/gnuradio/grc/blocks/gpuradar_envelope.block.yml",
                "lib/cmake/gnuradio-gpuradar/gnuradio-gpuradarConfig.cmake",
                "include/gnuradio/gpuradar/device_buffer.h"]:
            self.assertTrue(os.path.isfile(os.path.join(usr, path)), path)
        self.assertTrue(glob.glob(os.path.join(
            usr, "lib/python3/dist-packages/gnuradio/gpuradar/gpuradar_python*.so")))
        # One copy of the Python package, in Debian's path (none left in python3.X).
        self.assertEqual(len(glob.glob(os.path.join(usr, "lib", "python3*", "*-packages",
                                                    "gnuradio", "gpuradar"))), 1)
        with open(os.path.join(usr, "bin", "gpuradar-sim")) as f:
            self.assertEqual(f.readline().rstrip("\n"), "#!" + PYTHON)

    def test_003_usr_paths_need_no_variable(self):
        # Installed for real, the package's directories are the ones Debian's Python and
        # GRC search by default: nothing for a user to set.
        env = {k: v for k, v in os.environ.items() if not k.startswith("GR_CONF_")
               and k not in ("PYTHONPATH", "GRC_BLOCKS_PATH")}
        p = subprocess.run([PYTHON, "-c", "import sys; from gnuradio import gr; "
                            "print(sys.path); "
                            "print(gr.prefs().get_string('grc', 'global_blocks_path', ''))"],
                           env=env, capture_output=True, text=True, check=True)
        path, grc = p.stdout.splitlines()
        self.assertIn("'/usr/lib/python3/dist-packages'", path)
        self.assertIn("/usr/share/gnuradio/grc/blocks", grc.split(":"))

    def test_004_apps_by_name(self):
        for app in APPS:
            with self.subTest(app=app):
                rc, out, err = run(app, "--help", env=deb_env())
                self.assertEqual(rc, 0, out + err)
                self.assertIn(f"usage: {app}", out)
        rc, out, err = run("gpuradar-sim", "--preset", "examples", "-o", "pulse_doppler",
                           "-q", env=deb_env())
        self.assertEqual(rc, 0, out + err)
        rc, out, err = run("gpuradar-process", "-i", "pulse_doppler", "--backend", "cpu",
                           "-o", "det", "--png-size", "320x240", "--check", "-q",
                           env=deb_env())
        self.assertEqual(rc, 0, out + err)
        with open(os.path.join(WORK, "det.json")) as f:
            report = json.load(f)
        self.assertGreater(report["truth"]["detected"], 0)
        self.assertEqual(report["truth"]["missed"], 0)
        rc, out, err = run(PYTHON, "-c",
                           "from gnuradio import gpuradar; print(gpuradar.__file__)",
                           env=deb_env())
        self.assertEqual(rc, 0, err)
        self.assertTrue(out.startswith(DEB_ROOT + os.sep), out)
        # gpuradar-env finds the package where the .deb put it (moved from python3.X).
        env = deb_env()
        del env["PYTHONPATH"]
        rc, out, err = run("gpuradar-env", env=env)
        self.assertEqual(rc, 0, err)
        pydir = os.path.join(DEB_ROOT, "usr", "lib", "python3", "dist-packages")
        self.assertIn(f"export PYTHONPATH={shlex.quote(pydir)}", out.splitlines()[1])
        self.assertEqual(len(out.splitlines()), 2, out)  # PATH and GRC are set already

    def test_005_grcc_with_the_packaged_blocks(self):
        # Only the package's blocks: GNU Radio's own GRC directory must hold none of ours.
        if glob.glob("/usr/share/gnuradio/grc/blocks/gpuradar_*"):
            self.skipTest("gr-gpuradar's blocks are installed in /usr/share/gnuradio/grc/"
                          "blocks: grcc would not show which copy it used")
        example = os.path.join(DEB_ROOT, "usr", "share", "gr-gpuradar", "examples",
                               "pulse_doppler_offline.grc")
        out = os.path.join(WORK, "grcc")
        rc, stdout, err = run("grcc", example, "-o", out, env=deb_env())
        self.assertEqual(rc, 0, stdout + err)
        with open(os.path.join(out, "pulse_doppler_offline.py")) as f:
            self.assertIn("gpuradar.pulse_doppler_processor(", f.read())


if __name__ == "__main__":
    if None in (BUILD, SCRATCH, PYTHON_DIR, PYTHON, VERSION):
        sys.exit(__doc__)
    unittest.main(argv=sys.argv[:1] + sys.argv[6:])
