"""Writing files so that a failure leaves nothing behind.

``write_bytes_atomically`` (and ``write_text_atomically``) writes a whole file
or nothing: the data go to a temporary file beside the target, which is
renamed over the target only when complete (a reader sees the old file or the
whole new one; with ``fsync`` the new one survives a power loss). Whatever goes
wrong (the target is a directory, the disk is full, the directory is read-only,
Ctrl-C) the temporary file is removed, and an ``OSError`` names the target the
caller asked for, never the temporary name.
"""

from __future__ import annotations

import os


def write_text_atomically(path: str | os.PathLike, text: str, fsync: bool = False) -> None:
    """Write ``text`` (UTF-8) to ``path`` in one step; see the module doc."""
    write_bytes_atomically(path, text.encode("utf-8"), fsync)


def write_bytes_atomically(path: str | os.PathLike, data: bytes, fsync: bool = False) -> None:
    """Write ``data`` to ``path`` in one step; see the module doc."""
    path = os.fspath(path)
    if os.path.isdir(path):
        raise IsADirectoryError(21, "is a directory; give a file name", path)
    tmp = f"{path}.tmp{os.getpid()}"
    try:
        with open(tmp, "wb") as fh:
            fh.write(data)
            if fsync:
                fh.flush()
                os.fsync(fh.fileno())
        os.replace(tmp, path)
    except OSError as e:
        _remove_quietly(tmp)
        # (name what the user asked for: the temporary file no longer exists)
        raise type(e)(e.errno, e.strerror or str(e), path) from None
    except BaseException:
        _remove_quietly(tmp)
        raise


def _remove_quietly(path: str) -> None:
    try:
        os.remove(path)
    except OSError:
        pass
