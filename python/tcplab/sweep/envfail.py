"""Failures of the environment a campaign runs in, told apart from failures of runs.

A full disk, a read-only or unwritable campaign directory, a file name too
long, a file where a directory belongs, an unreachable Dask scheduler: none
of these is a property of a run, so none is ever stored as a failed run
(those are rerun only with ``--retry-failed``). They stop the sweep with a
:class:`StorageError`: one line naming the cause and what to do. What was
stored before stays stored; segments written but not indexed are adopted
when the campaign is next opened.

Only the standard library is imported here.
"""

from __future__ import annotations

import errno
import re
import sqlite3

from .index import CampaignError

__all__ = ["StorageError", "ENVIRONMENT_ERRNOS", "environment_errno", "storage_error", "dask_unreachable"]

_FULL = "free space on that filesystem (or raise the limit), then run the sweep again: what is stored is kept"
_NOT_WRITABLE = ("make the campaign directory writable, or give another with -o (a campaign whose runs are all "
                 "stored can still be read: results, tcplab report)")

#: errno -> (cause, what to do)
ENVIRONMENT_ERRNOS = {
    errno.ENOSPC: ("no space left on the device", _FULL),
    errno.EDQUOT: ("disk quota exceeded", _FULL),
    errno.EFBIG: ("a file would exceed the file-size limit (ulimit -f)", _FULL),
    errno.EROFS: ("read-only file system", _NOT_WRITABLE),
    errno.EACCES: ("permission denied", _NOT_WRITABLE),
    errno.EPERM: ("operation not permitted", _NOT_WRITABLE),
    errno.ENAMETOOLONG: ("file name too long", "give a campaign directory with a shorter name (-o)"),
    errno.ENOTDIR: ("a file is where a directory belongs",
                    "move that file out of the campaign directory (it is not part of a campaign), then run again"),
    errno.EEXIST: ("a file is where a directory belongs",
                   "move that file out of the campaign directory (it is not part of a campaign), then run again"),
    errno.EISDIR: ("a directory is where a file belongs",
                   "move that directory out of the campaign directory (it is not part of a campaign), then run again"),
    errno.EIO: ("input/output error", "check the disk (dmesg), then run the sweep again: what is stored is kept"),
}

_OS_ERROR_TEXT = re.compile(r"\(os error (\d+)\)")


class StorageError(CampaignError):
    """The campaign directory cannot be read or written as a sweep needs (disk full, read-only, name too
    long, a file in a directory's place) or the Dask scheduler cannot be reached. ``errno``: the OS error
    number when there is one. Never a property of a run: nothing is recorded as a failed run."""

    def __init__(self, msg: str, errno_: int | None = None) -> None:
        super().__init__(msg)
        self.errno = errno_


def environment_errno(e: BaseException) -> int | None:
    """The OS error number of an environment failure (an OSError, or the core's text of one, which ends
    in ``(os error N)``), or None when ``e`` is not one."""
    n = getattr(e, "errno", None) if isinstance(e, OSError) else None
    if n is None:
        m = _OS_ERROR_TEXT.search(str(e))
        n = int(m.group(1)) if m else None
    return n if n in ENVIRONMENT_ERRNOS else None


def _sqlite_cause(e: sqlite3.Error) -> tuple[str, str] | None:
    code = getattr(e, "sqlite_errorcode", None)
    name = getattr(e, "sqlite_errorname", "") or ""
    text = str(e)
    if code is not None:
        code &= 0xFF  # the primary result code of an extended one
    if code == 13 or "disk is full" in text:  # SQLITE_FULL
        return ENVIRONMENT_ERRNOS[errno.ENOSPC]
    if code == 8 or "readonly" in text:  # SQLITE_READONLY
        return ENVIRONMENT_ERRNOS[errno.EROFS]
    if code in (3, 14) or "unable to open" in text:  # SQLITE_PERM, SQLITE_CANTOPEN
        return ("cannot open the index", _NOT_WRITABLE)
    if code == 10 or name.startswith("SQLITE_IOERR") or "disk I/O error" in text:  # SQLITE_IOERR
        # (a full disk or a file-size limit shows as an I/O error when SQLite grows its log)
        return ("input/output error writing the index (a full disk or a file-size limit?)", _FULL)
    return None


def is_environment_sqlite_error(e: BaseException) -> bool:
    """Whether a SQLite error comes from the environment (full, read-only, I/O), not a damaged index."""
    return isinstance(e, sqlite3.Error) and _sqlite_cause(e) is not None


def storage_error(e: BaseException, where: str) -> StorageError | None:
    """The one-line :class:`StorageError` for an environment failure ``e`` met while working on the campaign
    at ``where``, or None when ``e`` is something else (a bug: let it be seen)."""
    if isinstance(e, StorageError):
        return e
    if isinstance(e, sqlite3.Error):
        cause = _sqlite_cause(e)
        if cause is None:
            return None
        return StorageError(f"{where}: cannot write the campaign's index: {cause[0]} ({e}); {cause[1]}")
    n = environment_errno(e)
    if n is None:
        return None
    what, todo = ENVIRONMENT_ERRNOS[n]
    name = getattr(e, "filename", None) if isinstance(e, OSError) else None
    return StorageError(f"{name or where}: {what}; {todo}", n)


def dask_unreachable(address: str | None, e: BaseException) -> StorageError:
    first = str(e).splitlines()[0] if str(e) else type(e).__name__
    return StorageError(f"cannot reach the Dask scheduler at {address} ({first}); check the address and that the "
                        f"scheduler is running, or leave out --scheduler to run on this machine's cores")
