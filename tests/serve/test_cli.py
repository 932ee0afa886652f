"""``netarena-gym serve`` as a process: the OpenEnv server answers openenv-core's client
with the configured env options, and the missing-extra error names the install hint."""
from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time

import httpx
import pytest

from netarena_gym.errors import DependencyNotInstalled, require
from netarena_gym.serve.common import free_port

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@contextlib.contextmanager
def server_process(*args: str, ready: str):
    """``netarena-gym serve ARGS`` on a free port; yields its URL once GET ``ready``
    answers 200, and terminates it afterwards."""
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "netarena_gym.cli", "serve", *args, "--port", str(port)],
        cwd=ROOT, env={**os.environ, "PYTHONPATH": ROOT},
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                if httpx.get(url + ready, timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert proc.poll() is None, proc.stderr.read().decode()[-2000:]
            assert time.monotonic() < deadline, "server did not start"
            time.sleep(0.3)
        yield url
    finally:
        proc.terminate()
        proc.wait(30)
        proc.stderr.close()


def test_openenv_server_process():
    pytest.importorskip("openenv.core")
    from netarena_gym.serve.openenv import NetArenaClient, RoutingAction

    with server_process("--protocol", "openenv", "--env", "NetArena-Routing-v0", "--level",
                        "2", "--max-sessions", "2", "--env-option", "max_steps=4",
                        ready="/health") as url:
        with NetArenaClient.for_env("NetArena-Routing-v0")(url).sync() as c:
            r = c.reset(seed=4)
            assert "Steps left: 4" in r.observation.text
            r = c.step(RoutingAction(machine="r0", command="ip route"))
            assert "Steps left: 3" in r.observation.text
            assert c.state().level == 2


def test_missing_extra_names_the_serve_hint():
    with pytest.raises(DependencyNotInstalled, match=r"netarena-gym\[serve\]"):
        require("no_such_module_for_serve", "serve")


def test_a2a_server_process():
    pytest.importorskip("a2a")
    from tests.serve.test_a2a import A2AEnvClient

    with server_process("--protocol", "a2a", "--env", "NetArena-K8sPolicy-v0",
                        "--env-option", "max_steps=3",
                        ready="/.well-known/agent-card.json") as url:
        card = httpx.get(url + "/.well-known/agent-card.json", timeout=10).json()
        assert card["supportedInterfaces"][0]["url"] == url
        c = A2AEnvClient(url)
        try:
            assert "Steps left: 3" in c.send({"reset": {"seed": 2}})["observation"]
        finally:
            c.close()


@pytest.mark.parametrize("args, says", [
    (["--max-sessions", "0"], "argument --max-sessions: must be >= 1"),
    (["--idle-timeout", "-1"], "argument --idle-timeout: must be >= 0"),
    (["--port", "70000"], "argument --port: must be 0..65535"),
    (["--level", "9"], "argument --level: invalid level 9"),
    (["--env-option", "bogus=1"], "argument --env-option: unknown key 'bogus'"),
    (["--env-option", "level=2"], "level has its own flag; use --level"),
    (["--env-option", "render_mode=human"], "render_mode is the server's"),
    (["--env-option", "max_steps=0"], "argument --env-option: max_steps must be an integer >= 1"),
    (["--env-option", "interface=bogus"], "argument --env-option: interface must be one of"),
])
def test_bad_arguments_are_one_usage_line_before_anything_starts(args, says, capsys):
    """Checked at start-up (an env is built once with them), not at the first session."""
    from netarena_gym.cli import main

    assert main(["serve", "--protocol", "mcp", "--env", "NetArena-Routing-v0", *args]) == 2
    err = capsys.readouterr().err
    assert says in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_http_protocol_without_uvicorn_names_the_extra(monkeypatch, capsys):
    from netarena_gym.cli import main

    monkeypatch.setitem(sys.modules, "uvicorn", None)  # import uvicorn raises ImportError
    assert main(["serve", "--protocol", "a2a", "--env", "NetArena-Routing-v0"]) == 2
    err = capsys.readouterr().err
    assert 'pip install "netarena-gym[a2a]"' in err and "Traceback" not in err
