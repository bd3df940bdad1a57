#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""ZMQ ipc:// endpoints in a directory only the current user can enter.

On one host the live path (a ZMQ sink in one process, zmq_source in another) talks over
an ipc:// socket file. Whoever binds that file first becomes the data source, so the file
must sit in a directory that no other user can create files in or reach:
$XDG_RUNTIME_DIR/gpuradar (per-user by systemd) or, without XDG_RUNTIME_DIR,
<temp dir>/gpuradar-<uid> (the temp directory is shared, hence the checks on a directory
that already exists: someone else may have made it first).
"""

import os
import re
import stat
import tempfile

#: sockaddr_un.sun_path holds 108 bytes with the terminating NUL
MAX_SOCKET_PATH = 107
_NAME = re.compile(r"[A-Za-z0-9._-]+")


def private_ipc_dir():
    """The user's private socket directory, created with mode 0700 when missing.

    Raises ValueError naming the directory when it exists but is not a directory (a
    symbolic link included), belongs to another user, or is open to group or others.
    """
    runtime = os.environ.get("XDG_RUNTIME_DIR", "")
    if runtime:
        path = os.path.join(runtime, "gpuradar")
    else:
        path = os.path.join(tempfile.gettempdir(), f"gpuradar-{os.getuid()}")
    try:
        os.mkdir(path, 0o700)
    except FileExistsError:
        pass
    except OSError as e:
        raise ValueError(f"ZMQ socket directory {path}: cannot create it ({e.strerror})")
    _check_private(path)
    return path


def _check_private(path):
    st = os.lstat(path)
    if not stat.S_ISDIR(st.st_mode):
        raise ValueError(f"ZMQ socket directory {path} is not a directory (a link or "
                         "file is in its place); remove it or set XDG_RUNTIME_DIR")
    if st.st_uid != os.getuid():
        raise ValueError(f"ZMQ socket directory {path} belongs to uid {st.st_uid}, not "
                         f"to this user (uid {os.getuid()}); another user could feed "
                         "the stream: remove it or set XDG_RUNTIME_DIR")
    if st.st_mode & 0o077:
        raise ValueError(f"ZMQ socket directory {path} has mode "
                         f"{stat.S_IMODE(st.st_mode):04o}; it must be 0700 (no group or "
                         f"other access): chmod 700 {path}")


def ipc_endpoint(name):
    """"ipc://<private dir>/<name>": the address both ends of a same-host ZMQ link use.

    name: the socket file's name (letters, digits, '.', '_', '-').
    """
    if not isinstance(name, str) or not _NAME.fullmatch(name) or name in (".", ".."):
        raise ValueError(f"name must be a file name of letters, digits, '.', '_' and '-' "
                         f"(not '.' or '..'), got {name!r}")
    path = os.path.join(private_ipc_dir(), name)
    if len(os.fsencode(path)) > MAX_SOCKET_PATH:
        raise ValueError(f"ZMQ socket path {path} is {len(os.fsencode(path))} bytes; "
                         f"ipc:// allows at most {MAX_SOCKET_PATH}: shorten name or "
                         "XDG_RUNTIME_DIR")
    return "ipc://" + path
