#!/usr/bin/env python3
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""gpuradar.ipc_endpoint: the private directory of same-host ZMQ sockets is created with
mode 0700, and one that another user owns, that group or others can enter, or that is a
link, is refused with a ValueError naming it."""

import os
import shutil
import stat
import tempfile
import unittest
from unittest import mock

from gnuradio import gr_unittest
from gnuradio import gpuradar


class qa_ipc_paths(gr_unittest.TestCase):
    def setUp(self):
        self.scratch = tempfile.mkdtemp(prefix="gpuradar-ipc-qa-")
        self.env = mock.patch.dict(os.environ, {"XDG_RUNTIME_DIR": self.scratch})
        self.env.start()
        self.dir = os.path.join(self.scratch, "gpuradar")
        self.old_umask = os.umask(0)  # the helper must not rely on a strict umask

    def tearDown(self):
        os.umask(self.old_umask)
        self.env.stop()
        shutil.rmtree(self.scratch)

    def mode(self, path):
        return stat.S_IMODE(os.lstat(path).st_mode)

    def assertRefused(self, fragment):
        with self.assertRaises(ValueError) as cm:
            gpuradar.ipc_endpoint("scene")
        self.assertIn(self.dir, str(cm.exception))
        self.assertIn(fragment, str(cm.exception))

    def test_001_creates_private_dir_under_xdg_runtime_dir(self):
        self.assertEqual(gpuradar.ipc_endpoint("scene"), f"ipc://{self.dir}/scene")
        self.assertEqual(self.mode(self.dir), 0o700)
        self.assertEqual(os.lstat(self.dir).st_uid, os.getuid())
        # Reused as it is the second time, for the other end of the link.
        self.assertEqual(gpuradar.ipc_endpoint("scene"), f"ipc://{self.dir}/scene")
        self.assertEqual(gpuradar.private_ipc_dir(), self.dir)

    def test_002_temp_dir_without_xdg_runtime_dir(self):
        del os.environ["XDG_RUNTIME_DIR"]
        with mock.patch.object(tempfile, "tempdir", self.scratch):
            expected = os.path.join(self.scratch, f"gpuradar-{os.getuid()}")
            self.assertEqual(gpuradar.ipc_endpoint("rx.sock"), f"ipc://{expected}/rx.sock")
        self.assertEqual(self.mode(expected), 0o700)

    def test_003_group_or_other_access_refused(self):
        for mode in (0o750, 0o705, 0o710, 0o701, 0o777):
            with self.subTest(mode=oct(mode)):
                os.makedirs(self.dir, exist_ok=True)
                os.chmod(self.dir, mode)
                self.assertRefused(f"{mode:04o}")
                self.assertEqual(self.mode(self.dir), mode)  # left as it was

    def test_004_other_owner_refused(self):
        os.mkdir(self.dir, 0o700)
        if os.getuid() == 0:
            os.chown(self.dir, 65534, -1)
            self.assertRefused("uid 65534")
        else:  # cannot give it away: pretend to be someone else
            other = os.getuid() + 1
            with mock.patch("os.getuid", return_value=other):
                self.assertRefused(f"uid {other}")

    def test_005_link_or_file_refused(self):
        target = os.path.join(self.scratch, "elsewhere")
        os.mkdir(target, 0o700)
        os.symlink(target, self.dir)
        self.assertRefused("not a directory")
        os.unlink(self.dir)
        open(self.dir, "w").close()
        self.assertRefused("not a directory")

    def test_006_missing_parent_refused(self):
        os.environ["XDG_RUNTIME_DIR"] = os.path.join(self.scratch, "absent")
        self.dir = os.path.join(self.scratch, "absent", "gpuradar")
        self.assertRefused("cannot create")

    def test_007_bad_names_refused(self):
        for name in ("", ".", "..", "a/b", "../scene", "sp ace", None, 5):
            with self.subTest(name=name):
                with self.assertRaisesRegex(ValueError, "^name must be"):
                    gpuradar.ipc_endpoint(name)
        self.assertFalse(os.path.exists(self.dir))  # checked before anything is made

    def test_008_socket_path_length_limit(self):
        room = gpuradar.ipc_paths.MAX_SOCKET_PATH - len(self.dir) - 1
        self.assertEqual(gpuradar.ipc_endpoint("x" * room), f"ipc://{self.dir}/{'x' * room}")
        with self.assertRaisesRegex(ValueError, "at most 107"):
            gpuradar.ipc_endpoint("x" * (room + 1))


if __name__ == "__main__":
    gr_unittest.run(qa_ipc_paths)
