"""Start and stop a real Kubernetes API server (etcd + kube-apiserver) on loopback.

For tests, the differential harness and users without a cluster. The kube-apiserver binary
is built from Debian's ``kubernetes`` source package by ``envs/k8s/build-apiserver.sh`` and
cached outside the repository (``~/.cache/netarena-gym/kubernetes/v1.20.2/bin``); etcd
comes from Debian's ``etcd-server``. Everything a server writes (etcd data, certificates,
token file, keys, logs, PIDs, the kubeconfig) lives in one state folder (mode 0700: the
admin credentials are the caller's alone; agents get ServiceAccount tokens, see
:mod:`netarena_gym.k8s.backends.kubernetes`); ``stop`` ends the
two processes it started, by PID, and nothing else.

    python -m netarena_gym.k8s.backends.apiserver start [--dir D] [--build]   # prints the kubeconfig
    python -m netarena_gym.k8s.backends.apiserver status [--dir D]
    python -m netarena_gym.k8s.backends.apiserver stop [--dir D]

``start`` prints ``export NETARENA_KUBECONFIG=<dir>/kubeconfig``: the variable the
Kubernetes tests and ``backend="kubernetes"`` read.
"""
from __future__ import annotations

import argparse
import json
import os
import secrets
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

VERSION = "v1.20.2"
REPO = Path(__file__).resolve().parents[2]
BUILD_SCRIPT = REPO / "envs" / "k8s" / "build-apiserver.sh"


def cache_dir() -> Path:
    base = os.environ.get("NETARENA_K8S_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"),
        "netarena-gym", "kubernetes")
    return Path(base)


MARKER = ".netarena-apiserver"  # names a folder that ``start`` made and may replace


def default_state_dir() -> Path:
    return cache_dir() / "apiserver"


def apiserver_binary(build: bool = False) -> Path:
    """The cached kube-apiserver; with ``build`` runs the build script when it is missing."""
    b = cache_dir() / VERSION / "bin" / "kube-apiserver"
    if b.is_file() and os.access(b, os.X_OK):
        return b
    if not build:
        raise FileNotFoundError(f"{b} not found: run {BUILD_SCRIPT} first (about 4 minutes)")
    subprocess.run(["bash", str(BUILD_SCRIPT)], check=True, stdout=subprocess.DEVNULL)
    return b


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _alive(pid: int, binary: str) -> bool:
    """True when ``pid`` is a running process of ``binary`` (guards against PID reuse)."""
    try:
        cmd = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0].decode()
    except (OSError, UnicodeDecodeError):
        return False
    stat = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[-1].split()
    return os.path.basename(cmd) == os.path.basename(binary) and stat[0] != "Z"


@dataclass
class Server:
    dir: Path

    @property
    def kubeconfig(self) -> Path:
        return self.dir / "kubeconfig"

    def _state(self) -> dict:
        try:
            return json.loads((self.dir / "state.json").read_text())
        except (OSError, ValueError):
            return {}

    def running(self) -> bool:
        st = self._state()
        return bool(st) and all(_alive(st[k], st[k + "_bin"]) for k in ("etcd", "apiserver"))

    def ready(self, timeout: float = 2.0) -> bool:
        st = self._state()
        if not st:
            return False
        return _get(f"https://127.0.0.1:{st['port']}/readyz", st["token"], timeout) == 200

    # ----------------------------------------------------------------------- start
    def start(self, *, build: bool = False, timeout: float = 90.0) -> Path:
        if self.running() and self.ready():
            return self.kubeconfig
        self.stop()
        api = apiserver_binary(build=build)
        etcd = shutil.which("etcd")
        if etcd is None:
            raise FileNotFoundError("etcd not found: apt-get install etcd-server")
        openssl = shutil.which("openssl")
        if openssl is None:
            raise FileNotFoundError("openssl not found: apt-get install openssl")
        d = self.dir
        if d.exists():
            ours = (d / MARKER).is_file() or (  # or made by a version before the marker
                (d / "tokens.csv").is_file() and (d / "certs").is_dir() and (d / "sa.key").is_file())
            if not ours and any(d.iterdir()):
                raise FileExistsError(
                    f"{d} is not empty and is not a state folder of this server (no {MARKER}): "
                    "give --dir an empty or new folder; nothing was changed")
            shutil.rmtree(d)  # our own state folder from an earlier start
        (d / "certs").mkdir(parents=True)
        os.chmod(d, 0o700)  # the admin token, keys and kubeconfig: the caller's alone
        (d / MARKER).write_text("state folder of netarena_gym.k8s.backends.apiserver; "
                                "replaced whole by its next start\n")
        token = secrets.token_hex(16)
        (d / "tokens.csv").write_text(f"{token},admin,admin,system:masters\n")
        subprocess.run([openssl, "genrsa", "-out", str(d / "sa.key"), "2048"], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        subprocess.run([openssl, "rsa", "-in", str(d / "sa.key"), "-pubout", "-out",
                        str(d / "sa.pub")], check=True, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
        eport, peer, port = _free_port(), _free_port(), _free_port()
        elog = open(d / "etcd.log", "w")
        ep = subprocess.Popen(
            [etcd, "--name", "netarena", "--data-dir", str(d / "etcd"),
             "--listen-client-urls", f"http://127.0.0.1:{eport}",
             "--advertise-client-urls", f"http://127.0.0.1:{eport}",
             "--listen-peer-urls", f"http://127.0.0.1:{peer}",
             "--initial-advertise-peer-urls", f"http://127.0.0.1:{peer}",
             "--initial-cluster", f"netarena=http://127.0.0.1:{peer}",
             "--log-level", "error"],
            stdout=elog, stderr=subprocess.STDOUT, start_new_session=True)
        state = {"etcd": ep.pid, "etcd_bin": etcd, "apiserver": -1, "apiserver_bin": str(api),
                 "port": port, "token": token, "etcd_port": eport}
        (d / "state.json").write_text(json.dumps(state))
        t_end = time.monotonic() + timeout
        while _get(f"http://127.0.0.1:{eport}/health", None, 1.0) != 200:
            if ep.poll() is not None or time.monotonic() > t_end:
                self.stop()
                raise RuntimeError(f"etcd did not start; see {d / 'etcd.log'}")
            time.sleep(0.1)
        alog = open(d / "apiserver.log", "w")
        ap = subprocess.Popen(
            [str(api), f"--etcd-servers=http://127.0.0.1:{eport}", "--bind-address=127.0.0.1",
             f"--secure-port={port}", "--insecure-port=0", f"--cert-dir={d / 'certs'}",
             f"--token-auth-file={d / 'tokens.csv'}", "--authorization-mode=RBAC",
             "--service-cluster-ip-range=10.96.0.0/16",
             "--service-account-issuer=https://kubernetes.default.svc",
             f"--service-account-key-file={d / 'sa.pub'}",
             f"--service-account-signing-key-file={d / 'sa.key'}",
             "--api-audiences=https://kubernetes.default.svc",
             "--enable-priority-and-fairness=false",
             # no controller-manager here creates the "default" ServiceAccount pods need
             "--disable-admission-plugins=ServiceAccount", "--v=0"],
            stdout=alog, stderr=subprocess.STDOUT, start_new_session=True)
        state["apiserver"] = ap.pid
        (d / "state.json").write_text(json.dumps(state))
        while not self.ready(1.0):
            if ap.poll() is not None or time.monotonic() > t_end:
                self.stop()
                raise RuntimeError(f"kube-apiserver did not become ready; see {d / 'apiserver.log'}")
            time.sleep(0.2)
        self.kubeconfig.write_text(_kubeconfig(port, token))
        return self.kubeconfig

    # ------------------------------------------------------------------------ stop
    def stop(self, timeout: float = 10.0) -> None:
        st = self._state()
        for key in ("apiserver", "etcd"):
            pid = st.get(key, -1)
            if pid > 0 and _alive(pid, st[key + "_bin"]):
                os.kill(pid, signal.SIGTERM)
                t_end = time.monotonic() + timeout
                while _alive(pid, st[key + "_bin"]) and time.monotonic() < t_end:
                    time.sleep(0.05)
                if _alive(pid, st[key + "_bin"]):
                    os.kill(pid, signal.SIGKILL)
        if st:
            (self.dir / "state.json").unlink(missing_ok=True)


def _get(url: str, token: str | None, timeout: float) -> int | None:
    req = urllib.request.Request(url)
    if token:
        req.add_header("Authorization", f"Bearer {token}")
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    try:
        with urllib.request.urlopen(req, timeout=timeout, context=ctx) as r:
            return r.status
    except urllib.error.HTTPError as e:
        return e.code
    except (OSError, ValueError):
        return None


def _kubeconfig(port: int, token: str) -> str:
    return f"""apiVersion: v1
kind: Config
clusters:
- name: netarena
  cluster:
    server: https://127.0.0.1:{port}
    insecure-skip-tls-verify: true
users:
- name: admin
  user:
    token: {token}
contexts:
- name: netarena
  context:
    cluster: netarena
    user: admin
    namespace: default
current-context: netarena
"""


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m netarena_gym.k8s.backends.apiserver",
                                description="etcd + kube-apiserver on loopback")
    p.add_argument("action", choices=("start", "stop", "status"))
    p.add_argument("--dir", default=str(default_state_dir()), help="state folder")
    p.add_argument("--build", action="store_true", help="build kube-apiserver if not cached")
    a = p.parse_args(argv)
    srv = Server(Path(a.dir))
    if a.action == "start":
        try:
            kc = srv.start(build=a.build)
        except (RuntimeError, FileNotFoundError, FileExistsError,
                subprocess.CalledProcessError) as e:
            print(f"apiserver: {e}", file=sys.stderr)
            return 1
        print(f"export NETARENA_KUBECONFIG={kc}")
        return 0
    if a.action == "stop":
        srv.stop()
        return 0
    ok = srv.running() and srv.ready()
    print(f"running: {srv.kubeconfig}" if ok else "not running")
    return 0 if ok else 3


if __name__ == "__main__":
    sys.exit(main())
