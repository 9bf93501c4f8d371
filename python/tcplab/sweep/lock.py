"""One sweep at a time per campaign: an advisory lock on ``CAMPAIGN/lock``.

Two sweeps into one campaign would each compute every run the other has not
stored yet (both plan against the same index), so :meth:`Campaign.run`
holds an exclusive ``flock`` on the campaign's lock file while it plans,
runs and indexes. The kernel releases it when the process ends, however it
ends (Ctrl-C, SIGKILL, a crash), so a lock is never left stale. The holder
writes its pid, host and start time into the file so that a second sweep
can say who holds it; a second sweep refuses at once with that message
(:class:`CampaignBusy`), or, when asked (``wait=True``, ``tcplab sweep
--wait``), waits for the first to finish and then runs only what is left.

Opening a campaign (``Campaign(dir)``) also takes the lock, briefly and
without waiting, to adopt segments that are on disk but not indexed (a sweep
killed between storing and indexing): while a sweep runs, its own segments
are in that state for a moment, and only the sweep may index them.

``flock`` locks work on local filesystems and on NFS (Linux emulates them
with byte-range locks there). Where the lock file cannot be created (a
read-only campaign directory), the sweep goes on without the lock: nothing
can be stored there anyway, and reading needs no lock.
"""

from __future__ import annotations

import errno
import fcntl
import os
import socket
import time

#: The lock file, in the campaign directory.
LOCK_FILE = "lock"
#: While the lock file names no holder (a campaign being opened holds it for a moment, or a sweep has
#: just taken it and not written its name yet), wait this long between two tries.
_POLL_S = 0.05


class CampaignBusy(Exception):
    """Another process is running a sweep into this campaign."""


def _open(root: str) -> int | None:
    """The lock file's descriptor (created if absent); None where it cannot be created (read-only)."""
    try:
        return os.open(os.path.join(root, LOCK_FILE), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    except OSError as e:
        if e.errno in (errno.EACCES, errno.EROFS, errno.EPERM):
            return None
        raise


def _try(fd: int) -> bool:
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except BlockingIOError:
        return False


def _holder(fd: int) -> str:
    """What the holder wrote: ``pid N on HOST since TIME``, or "" (none written yet)."""
    try:
        return os.pread(fd, 512, 0).decode("utf-8", "replace").strip()
    except OSError:
        return ""


class CampaignLock:
    """The sweep lock of the campaign at ``root``: :meth:`acquire`, :meth:`release` (re-entrant)."""

    def __init__(self, root: str) -> None:
        self.root = root
        self.fd: int | None = None
        self.depth = 0

    def acquire(self, wait: bool = False) -> None:
        """Take the lock; held elsewhere: raise :class:`CampaignBusy` naming the holder, or with ``wait``
        wait until it is free."""
        if self.depth:
            self.depth += 1
            return
        fd = _open(self.root)
        if fd is None:
            return  # (read-only: see the module notes)
        try:
            self._take(fd, wait)
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"pid {os.getpid()} on {socket.gethostname()} since "
                          f"{time.strftime('%Y-%m-%d %H:%M:%S')}\n".encode(), 0)
        except BaseException:
            os.close(fd)
            raise
        self.fd, self.depth = fd, 1

    def _take(self, fd: int, wait: bool) -> None:
        announced = False
        while not _try(fd):
            holder = _holder(fd)
            if holder and not wait:
                raise CampaignBusy(f"{self.root}: another sweep is running into this campaign ({holder}); "
                                   "wait for it to finish, or pass --wait (Campaign.run(wait_for_lock=True)) to "
                                   "wait and then run what it leaves")
            if holder and not announced:
                import sys

                print(f"{self.root}: waiting for the sweep running into it ({holder})", file=sys.stderr)
                announced = True
            if holder:  # a sweep: wait for it to end (Ctrl-C still stops the wait)
                fcntl.flock(fd, fcntl.LOCK_EX)
                return
            time.sleep(_POLL_S)  # (no holder named yet: a campaign being opened, or a sweep starting)

    def release(self) -> None:
        if not self.depth:
            return
        self.depth -= 1
        if self.depth or self.fd is None:
            return
        fd, self.fd = self.fd, None
        try:
            os.ftruncate(fd, 0)  # (names no holder once free)
        except OSError:
            pass
        _unlock_and_close(fd)


def _unlock_and_close(fd: int) -> None:
    # Unlocked explicitly, not just closed: forked pool workers share the open file (and so the lock) until
    # they exit; unlocking through any descriptor frees it for all of them.
    try:
        fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def try_briefly(root: str) -> int | None:
    """The lock taken without waiting, for a moment (see :func:`release_brief`): its descriptor, or None
    when a sweep holds it. A campaign whose lock file cannot be created counts as free (-1)."""
    fd = _open(root)
    if fd is None:
        return -1
    if _try(fd):
        return fd
    os.close(fd)
    return None


def release_brief(fd: int) -> None:
    if fd >= 0:
        _unlock_and_close(fd)
