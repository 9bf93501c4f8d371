"""The host's part of the kernel side of ``tcplab validate``: what this machine
can run (:func:`check_environment`), the commands it runs, the network
namespaces of the kernel path (named ``tcplab-<pid>-...``: found, killed and
deleted, also those of a run that died) and the child processes' start-up and
teardown. :mod:`tcplab.validate.kernel` builds the path from these.
"""

from __future__ import annotations

import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

__all__ = [
    "PREFIX",
    "KernelRunError",
    "check_environment",
    "clean_stale_namespaces",
    "our_namespaces",
]

PREFIX = "tcplab-"


class KernelRunError(RuntimeError):
    """The kernel run or the path could not be set up or did not produce data."""


def _run(args: Sequence[str], *, check: bool = True, timeout: float = 30.0) -> subprocess.CompletedProcess:
    p = subprocess.run(list(args), capture_output=True, text=True, timeout=timeout)
    if check and p.returncode != 0:
        raise KernelRunError(f"{' '.join(args)}: exit {p.returncode}: {p.stderr.strip() or p.stdout.strip()}")
    return p


def _child_env() -> dict[str, str]:
    """The environment of child processes: this interpreter's tcplab importable."""
    env = dict(os.environ)
    pkg_root = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = pkg_root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


def check_environment(algorithm: str | None = None) -> str | None:
    """None when this machine can run the kernel path; otherwise one line
    naming what is missing (root, ``ip netns``, /dev/net/tun, TCP_CONGESTION)."""
    if sys.platform != "linux":
        return f"the kernel path needs Linux (this is {sys.platform})"
    if os.geteuid() != 0:
        return "the kernel path needs root (network namespaces and TUN devices); run as root"
    if shutil.which("ip") is None:
        return "the kernel path needs the `ip` command (iproute2), which is not on PATH"
    name = f"{PREFIX}{os.getpid()}-check-{secrets.token_hex(2)}"
    p = subprocess.run(["ip", "netns", "add", name], capture_output=True, text=True)
    if p.returncode != 0:
        return f"cannot create a network namespace (ip netns add): {p.stderr.strip()}"
    try:
        # Entering it is a second requirement: `ip netns exec` remounts / as a slave and
        # /sys, which fails where / is no mount point (a chroot, some containers).
        p = subprocess.run(["ip", "netns", "exec", name, "true"], capture_output=True, text=True)
    finally:
        subprocess.run(["ip", "netns", "del", name], capture_output=True)
    if p.returncode != 0:
        return f"cannot run a command in a network namespace (ip netns exec): {p.stderr.strip()}"
    try:
        import fcntl
        import struct

        fd = os.open("/dev/net/tun", os.O_RDWR)
        try:
            # TUNSETIFF with IFF_TUN | IFF_NO_PI, include/uapi/linux/if_tun.h; not persistent,
            # so the device goes when fd closes.
            fcntl.ioctl(fd, 0x400454CA, struct.pack("16sH22x", b"tlcheck%d", 0x1001))
        finally:
            os.close(fd)
    except OSError as e:
        return f"cannot create a TUN device (/dev/net/tun): {e}"
    for algo in ["reno"] + ([algorithm] if algorithm else []):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, algo.encode())
        except OSError as e:
            avail = Path("/proc/sys/net/ipv4/tcp_available_congestion_control").read_text().strip()
            return f"TCP_CONGESTION={algo} refused ({e}); available: {avail}"
        finally:
            s.close()
    try:
        from tcplab import _core
    except ImportError as e:
        return f"the compiled core tcplab._core is not importable ({e}); run scripts/setup.sh"
    if not hasattr(_core, "netem_run"):
        return "tcplab._core has no netem_run: the compiled core is older than this source; rebuild it"
    return None


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def our_namespaces() -> list[str]:
    """Network namespaces named with this module's prefix (any process's)."""
    p = _run(["ip", "netns", "list"], check=False)
    return [ln.split()[0] for ln in p.stdout.splitlines() if ln.startswith(PREFIX)]


def _delete_namespace(ns: str) -> None:
    """Kills whatever still runs in network namespace ``ns`` and deletes it."""
    for pid in _run(["ip", "netns", "pids", ns], check=False).stdout.split():
        try:
            os.kill(int(pid), signal.SIGKILL)
        except ProcessLookupError:
            pass
    _run(["ip", "netns", "del", ns], check=False)


def clean_stale_namespaces() -> list[str]:
    """Deletes namespaces of our prefix whose creating process is gone (and
    kills what still runs in them); returns their names."""
    removed = []
    for ns in our_namespaces():
        m = re.match(rf"{re.escape(PREFIX)}(\d+)-", ns)
        if m and _pid_alive(int(m.group(1))):
            continue
        _delete_namespace(ns)
        removed.append(ns)
    return removed


def _stop(p: subprocess.Popen, grace: float = 5.0) -> None:
    """Ends one child we started: wait, then SIGTERM, then SIGKILL."""
    if p.poll() is not None:
        return
    try:
        p.wait(timeout=grace)
        return
    except subprocess.TimeoutExpired:
        pass
    p.terminate()
    try:
        p.wait(timeout=2.0)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()


def _wait_file(path: Path, proc: subprocess.Popen, what: str, timeout: float = 20.0) -> None:
    end = time.monotonic() + timeout
    while not path.exists():
        if proc.poll() is not None:
            err = proc.stderr.read() if proc.stderr else ""
            raise KernelRunError(f"{what} exited ({proc.returncode}) before it was ready: {err.strip()}")
        if time.monotonic() > end:
            raise KernelRunError(f"{what} not ready after {timeout} s")
        time.sleep(0.01)
