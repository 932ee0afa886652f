"""Runs one checked argv of an agent in a Mininet node's network namespace, inside a private,
read-only mount namespace (Linux ``setns(2)``, ``unshare(2)``, ``mount(2)`` and
``mount_setattr(2)``, as ``nsenter --net`` plus ``unshare --mount`` would, without a shell).

In the child, before ``exec``: join the node's network namespace (``/proc/PID/ns/net``), make
a new mount namespace with private propagation, make every mount read-only
(``MOUNT_ATTR_RDONLY`` with ``AT_RECURSIVE``), then mount a private ``tmpfs`` on ``/tmp`` and
``/run`` (iptables' lock file) and bind ``/proc/sys/net`` writable again: that namespace's
own sysctls are all a tool can change. Name lookups are made deterministic and immediate:
private copies of ``/etc/nsswitch.conf`` (every database from ``files`` only: no DNS query
is sent, so nothing waits on the machine's resolver, which a node cannot reach, and a
failed lookup reads "Unknown host" as in the simulator), ``/etc/hosts`` (``localhost``
only), ``/etc/networks`` (Debian's three names) and ``/etc/resolv.conf`` (127.0.0.1, one
attempt, for a tool that queries DNS itself) are bound read-only over the host's, so ``arp``, ``route`` and ``traceroute`` print numbers
the way the simulator does, on every machine. Nothing from the agent is interpreted by a shell:
the argv is exec'd as is. Redirects are written by :func:`write_file` in the same sandbox,
opened with ``O_NOFOLLOW`` and without ``O_CREAT``.

Left out: a new PID namespace (the tools run are fixed programs, which read only what their
arguments name) and seccomp. Needs Linux 5.12+ (``mount_setattr``) and CAP_SYS_ADMIN.
"""
from __future__ import annotations

import ctypes
import errno
import os
import subprocess

__all__ = ["ETC_FILES", "SandboxError", "run_argv", "write_file"]

#: the files bound over the host's in the sandbox: name lookups fail at once, on any machine
ETC_FILES = {
    "/etc/resolv.conf": "nameserver 127.0.0.1\noptions timeout:1 attempts:1\n",
    "/etc/hosts": "127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n",
    "/etc/networks": "default\t\t0.0.0.0\nloopback\t127.0.0.0\nlink-local\t169.254.0.0\n",
    "/etc/nsswitch.conf": ("passwd:         files\ngroup:          files\n"
                           "shadow:         files\nhosts:          files\n"
                           "networks:       files\nprotocols:      files\n"
                           "services:       files\nethers:         files\n"
                           "rpc:            files\n"),
}
_ETC_DIR = "/run/netarena-etc"

_CLONE_NEWNS, _CLONE_NEWNET = 0x00020000, 0x40000000
_MS_RDONLY, _MS_NOSUID, _MS_NODEV, _MS_BIND, _MS_REC, _MS_PRIVATE = (
    1, 2, 4, 4096, 16384, 1 << 18)
_AT_FDCWD, _AT_RECURSIVE, _MOUNT_ATTR_RDONLY = -100, 0x8000, 1
_SYS_MOUNT_SETATTR = 442  # the same number on every architecture


class SandboxError(RuntimeError):
    """The sandbox could not be set up (a system problem, not the agent's input)."""


class _MountAttr(ctypes.Structure):
    _fields_ = [("attr_set", ctypes.c_uint64), ("attr_clr", ctypes.c_uint64),
                ("propagation", ctypes.c_uint64), ("userns_fd", ctypes.c_uint64)]


_libc = ctypes.CDLL(None, use_errno=True)


def _check(rc: int, what: str) -> None:
    if rc != 0:
        e = ctypes.get_errno()
        raise OSError(e, f"{what}: {os.strerror(e)}")


def _mount(src, target: str, fstype, flags: int, data) -> None:
    enc = (lambda v: v.encode() if isinstance(v, str) else v)
    _check(_libc.mount(enc(src), enc(target), enc(fstype), ctypes.c_ulong(flags), enc(data)),
           f"mount {target}")


def _setattr(path: str, set_: int, clear: int, flags: int) -> None:
    attr = _MountAttr(set_, clear, 0, 0)
    _check(_libc.syscall(_SYS_MOUNT_SETATTR, _AT_FDCWD, path.encode(), flags,
                         ctypes.byref(attr), ctypes.sizeof(attr)), f"mount_setattr {path}")


def _enter(netns_fd: int) -> None:
    """Runs in the forked child (single-threaded) before exec."""
    _check(_libc.setns(netns_fd, _CLONE_NEWNET), "setns net")
    _check(_libc.unshare(_CLONE_NEWNS), "unshare mount")
    _mount(None, "/", None, _MS_REC | _MS_PRIVATE, None)
    _setattr("/", _MOUNT_ATTR_RDONLY, 0, _AT_RECURSIVE)
    # where each file really is (resolv.conf may be a link into /run), before /run is hidden
    targets = {path: os.path.realpath(path) for path in ETC_FILES}
    for d in ("/tmp", "/run"):
        _mount("tmpfs", d, "tmpfs", _MS_NOSUID | _MS_NODEV, "size=4m,mode=1777")
    _bind_etc(targets)
    _mount("/proc/sys/net", "/proc/sys/net", None, _MS_BIND, None)  # copies "ro": clear it
    _setattr("/proc/sys/net", 0, _MOUNT_ATTR_RDONLY, 0)
    os.chdir("/")


def _bind_etc(targets: dict[str, str]) -> None:
    """Write :data:`ETC_FILES` into the private ``/run`` and bind each read-only over the
    host's file (a file the host lacks is left absent: glibc's defaults then apply)."""
    os.mkdir(_ETC_DIR, 0o755)
    for path, text in ETC_FILES.items():
        src = os.path.join(_ETC_DIR, os.path.basename(path))
        fd = os.open(src, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        os.write(fd, text.encode())
        os.close(fd)
        target = targets[path]
        if target.startswith(("/run/", "/tmp/")):  # now on our tmpfs: write it there
            os.makedirs(os.path.dirname(target), exist_ok=True)
            if target != src:
                os.link(src, target)
            continue
        if not os.path.isfile(target):
            continue
        _mount(src, target, None, _MS_BIND, None)
        _setattr(target, _MOUNT_ATTR_RDONLY, 0, 0)


def _preexec(pid: int):
    fd = os.open(f"/proc/{pid}/ns/net", os.O_RDONLY | os.O_CLOEXEC)
    return fd, (lambda: _enter(fd))


def run_argv(pid: int, argv: list[str], timeout: float, merge_stderr: bool = True,
             drop_stderr: bool = False) -> subprocess.CompletedProcess:
    """``argv`` in the sandbox of the node whose shell is ``pid``; stdout (and stderr)
    captured as text. Raises ``subprocess.TimeoutExpired`` past ``timeout``."""
    fd, pre = _preexec(pid)
    try:
        return subprocess.run(
            argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=(subprocess.DEVNULL if drop_stderr else
                    subprocess.STDOUT if merge_stderr else subprocess.PIPE),
            text=True, errors="replace", timeout=timeout, preexec_fn=pre,
            start_new_session=True, close_fds=True,
            env={"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "LC_ALL": "C"})
    except (subprocess.SubprocessError, ValueError) as e:  # ValueError: a NUL in argv
        if isinstance(e, subprocess.TimeoutExpired):
            raise
        raise SandboxError(f"cannot enter the node's sandbox: {e}") from e
    finally:
        os.close(fd)


_WRITER = r"""
import os, sys
path, append = sys.argv[1], sys.argv[2] == "1"
flags = os.O_WRONLY | os.O_NOFOLLOW | (os.O_APPEND if append else os.O_TRUNC)
try:
    fd = os.open(path, flags)
except OSError as e:
    sys.stdout.write("open %d" % e.errno); sys.exit(1)
data = sys.stdin.buffer.read()
try:
    if data:
        os.write(fd, data)
    os.close(fd)
except OSError as e:
    sys.stdout.write("write %d" % e.errno); sys.exit(1)
"""


def write_file(pid: int, path: str, data: str, append: bool,
               timeout: float = 10.0) -> tuple[str, int] | None:
    """Write ``data`` to ``path`` in the node's sandbox as ``>``/``>>`` would. None when it
    worked, else (``"open"`` | ``"write"``, errno)."""
    import sys
    fd, pre = _preexec(pid)
    try:
        p = subprocess.run([sys.executable, "-I", "-S", "-c", _WRITER, path,
                            "1" if append else "0"], input=data.encode(), capture_output=True,
                           timeout=timeout, preexec_fn=pre, start_new_session=True,
                           close_fds=True, env={})
    except (subprocess.SubprocessError, ValueError) as e:
        raise SandboxError(f"cannot enter the node's sandbox: {e}") from e
    finally:
        os.close(fd)
    if p.returncode == 0:
        return None
    what, _, num = p.stdout.decode(errors="replace").partition(" ")
    if not num.isdigit():
        raise SandboxError(f"redirect writer failed: {p.stderr.decode(errors='replace')}")
    return what, int(num)


def strerror(code: int) -> str:
    """The C library's message, as bash prints it."""
    return os.strerror(code) if code in errno.errorcode else f"errno {code}"
