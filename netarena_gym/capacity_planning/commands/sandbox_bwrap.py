"""The OS-level container of the code sandbox: the ``bwrap`` command line that starts the
worker (:mod:`sandbox_worker`) in its own namespaces.

Mirrors bubblewrap 0.8 (Debian package ``bubblewrap``, as used by Flatpak): ``--unshare-net``
(a network namespace holding only ``lo``), ``--unshare-pid/-ipc/-uts/-cgroup-try``, a new
mount namespace whose root is an empty tmpfs with, read-only, ``/usr`` (with the usual
``/lib``, ``/lib64``, ``/bin`` symlinks), the Python runtime of ``sys.base_prefix`` (its
interpreter, ``libpython`` and standard library), networkx alone (at ``/sandbox/site``), and the
worker file alone; a private ``/tmp`` tmpfs, a minimal ``/dev`` and a new ``/proc``.
``--new-session`` and ``--die-with-parent``; bwrap sets ``no_new_privs``. No ``/etc``, no
home, no project source. As root, bwrap keeps only CAP_SETUID/CAP_SETGID, so that each
submission's process can drop to the host's ``nobody``, and CAP_KILL, so that the worker can
kill a submission (now another uid) at its wall-clock limit; the submission loses all
three when it drops to ``nobody``, and sees only the sandbox's own PIDs. Otherwise bwrap
runs in a user namespace as uid/gid 65534. The seccomp filter is installed by the worker itself, in each
submission's process (see :func:`sandbox_worker.install_seccomp`), because the worker must
still be able to fork.

Left out: cgroups (limits are rlimits), Landlock, and a per-file view of ``/usr``.
"""
from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys

try:
    from netarena_gym.errors import DependencyNotInstalled
except ImportError:  # not on this branch yet
    from gymnasium.error import DependencyNotInstalled

PACKAGE = "bubblewrap"
SANDBOX_DIR = "/sandbox"
SCRATCH_IN_SANDBOX = "/sandbox/scratch"


def runtime_paths() -> list[str]:
    """The host paths of the Python runtime the worker needs (read-only in the sandbox)."""
    import networkx
    prefix = sys.base_prefix
    ver = f"python{sys.version_info.major}.{sys.version_info.minor}"
    paths = [os.path.realpath(sys.executable)]
    libdir = os.path.join(prefix, "lib")
    if os.path.isdir(libdir):
        paths += [os.path.join(libdir, f) for f in sorted(os.listdir(libdir))
                  if f.startswith("libpython")]
        paths.append(os.path.join(libdir, ver))
    paths.append(os.path.dirname(os.path.abspath(networkx.__file__)))
    return [p for p in dict.fromkeys(paths) if os.path.exists(p)]


def _site_packages_of(path: str) -> str | None:
    head, sep, _ = path.partition("-packages" + os.sep)
    return head + "-packages" if sep else None


def command(files: list[str]) -> list[str]:
    """The argv of bwrap around a program whose ``files`` (the worker and its modules) are
    bound, read-only and alone, into ``/sandbox``."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        raise DependencyNotInstalled(missing_message())
    argv = [bwrap, "--unshare-net", "--unshare-pid", "--unshare-ipc", "--unshare-uts",
            "--unshare-cgroup-try", "--die-with-parent", "--new-session",
            "--ro-bind", "/usr", "/usr"]
    for name in ("lib", "lib64", "bin"):
        if os.path.islink("/" + name):
            argv += ["--symlink", os.readlink("/" + name), "/" + name]
        elif os.path.isdir("/" + name):
            argv += ["--ro-bind", "/" + name, "/" + name]
    hidden = set()
    for p in runtime_paths():
        if os.path.basename(p) == "networkx":
            # at a fixed place the worker puts on its path: a venv's site-packages is not on
            # the bare interpreter's path, and the host's layout stays invisible to the code
            argv += ["--ro-bind", p, SANDBOX_DIR + "/site/networkx"]
            continue
        if p.startswith("/usr/"):
            continue
        site = _site_packages_of(p)
        if site and site not in hidden:  # an empty site-packages, then networkx alone
            hidden.add(site)
            argv += ["--tmpfs", site]
        argv += ["--ro-bind", p, p]
    for f in files:
        argv += ["--ro-bind", f, SANDBOX_DIR + "/" + os.path.basename(f)]
    argv += ["--dir", SCRATCH_IN_SANDBOX,
             "--tmpfs", "/tmp", "--dev", "/dev", "--proc", "/proc", "--chdir", "/"]
    if os.geteuid() == 0:
        argv += ["--cap-drop", "ALL", "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID",
                 "--cap-add", "CAP_KILL"]
    else:
        argv += ["--unshare-user", "--uid", "65534", "--gid", "65534"]
    return argv + ["--"]


def missing_message(detail: str = "") -> str:
    return ("code mode runs agent code under bubblewrap, which is not available"
            + (f" ({detail})" if detail else "") + f": install the Debian package '{PACKAGE}' "
            "(apt-get install bubblewrap), or pass unsafe_sandbox=True to run trusted code "
            "without OS-level isolation")


@functools.lru_cache(maxsize=1)
def probe() -> str | None:
    """None when bwrap can create its namespaces here, else why not."""
    if shutil.which("bwrap") is None:
        return "bwrap not found on PATH"
    try:
        p = subprocess.run(command([])[:-1] + ["--", "/usr/bin/true"],
                           capture_output=True, timeout=30, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"bwrap failed: {e}"
    if p.returncode != 0:
        return "bwrap cannot create namespaces: " + p.stderr.decode(errors="replace").strip()[:300]
    return None


def require() -> None:
    """Raise :class:`DependencyNotInstalled` unless bwrap works here."""
    why = probe()
    if why is not None:
        raise DependencyNotInstalled(missing_message(why))
