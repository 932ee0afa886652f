"""The credential files of the real Kubernetes backend (:mod:`.kubernetes`): finding the
caller's kubeconfig, the grader's copy of it (pinned to the env's namespace), the agent's
token-only kubeconfig, and the unprivileged user the agent's ``kubectl`` runs as.

The agent's kubeconfig is written into a folder only the grader can write, as a new file
(``O_EXCL``), never through a symbolic link (``O_NOFOLLOW``), handed to the agent user by
descriptor (``fchown``), then renamed into place: nothing the agent can do in its own HOME
redirects the grader's write.
"""
from __future__ import annotations

import base64
import json
import os
import pwd
import shutil
from pathlib import Path

from netarena_gym.k8s.rbac import AGENT_NAME
from netarena_gym.k8s.workload import yaml_module


def find_kubeconfig(path: str | None = None) -> str:
    """The kubeconfig to use: ``path``, else ``NETARENA_KUBECONFIG``, else ``KUBECONFIG``
    (a list of files as kubectl takes it: the first that exists), else
    ``~/.kube/config``. The first of these that is set decides: one that names no file is
    an error naming it (falling through to ``~/.kube/config`` could reach another
    cluster)."""
    for cand, where in ((path, "kubeconfig="), (os.environ.get("NETARENA_KUBECONFIG"),
                                                 "NETARENA_KUBECONFIG"),
                        (os.environ.get("KUBECONFIG"), "KUBECONFIG")):
        if not cand:
            continue
        files = cand.split(os.pathsep) if where == "KUBECONFIG" else [cand]
        found = next((f for f in files if f and Path(f).is_file()), None)
        if found is None:
            raise FileNotFoundError(f"no kubeconfig: {where} names {cand!r}, which is no file")
        return found
    default = os.path.expanduser("~/.kube/config")
    if Path(default).is_file():
        return default
    raise FileNotFoundError("no kubeconfig: pass kubeconfig=, or set NETARENA_KUBECONFIG "
                            "(envs/k8s/start-apiserver.sh starts a local API server)")


def write_grader_kubeconfig(source: str, namespace: str, folder: str) -> str:
    """A copy of the caller's kubeconfig in ``folder`` (mode 0600) whose current context
    works in ``namespace``; returns its path."""
    yaml = yaml_module()
    cfg = yaml.safe_load(Path(source).read_text())
    cur = cfg.get("current-context")
    for ctx in cfg.get("contexts") or ():
        if ctx.get("name") == cur:
            ctx.setdefault("context", {})["namespace"] = namespace
    path = os.path.join(folder, "kubeconfig")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "w") as f:
        yaml.safe_dump(cfg, f)
    return path


def write_agent_kubeconfig(path: str, conf, token: str, namespace: str,
                           uid: int | None, gid: int | None) -> None:
    """The agent's kubeconfig at ``path``: the API server of ``conf`` (the client's
    configuration), the bearer ``token`` and nothing else, owned by ``uid``/``gid`` when
    given (mode 0600)."""
    cluster = {"server": conf.host}
    if conf.verify_ssl and conf.ssl_ca_cert:
        cluster["certificate-authority-data"] = base64.b64encode(
            Path(conf.ssl_ca_cert).read_bytes()).decode()
    else:
        cluster["insecure-skip-tls-verify"] = True
    cfg = {"apiVersion": "v1", "kind": "Config", "preferences": {},
           "clusters": [{"name": "netarena", "cluster": cluster}],
           "users": [{"name": AGENT_NAME, "user": {"token": token}}],
           "contexts": [{"name": "netarena", "context": {
               "cluster": "netarena", "user": AGENT_NAME, "namespace": namespace}}],
           "current-context": "netarena"}
    tmp = path + ".tmp"
    try:
        os.unlink(tmp)
    except FileNotFoundError:
        pass
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "w") as f:
        if uid is not None:
            os.fchown(f.fileno(), uid, gid)
        json.dump(cfg, f)
    os.replace(tmp, path)


def agent_ids(user) -> tuple[int | None, int | None]:
    """(uid, gid) the agent's kubectl runs as: ``user`` (a name or uid) when we are root,
    else None (the caller's own uid; no privilege to drop)."""
    if user is None or os.geteuid() != 0:
        return None, None
    try:
        pw = pwd.getpwnam(user) if isinstance(user, str) else pwd.getpwuid(int(user))
    except KeyError:
        raise ValueError(f"agent_user {user!r} is not a user on this machine") from None
    if pw.pw_uid == 0:
        raise ValueError("agent_user must not be root")
    return pw.pw_uid, pw.pw_gid


def remove_folders(*paths: str) -> None:
    for path in paths:
        shutil.rmtree(path, ignore_errors=True)
