"""What a remote A2A requester sends is checked before anything runs: the evaluator's
config (types, ranges, levels of the env, env options it may set, the backends the
operator allows), the agent server's ``netarena`` metadata, and a missing ``a2a`` extra is
netarena_gym's DependencyNotInstalled. A bad value is a JSON-RPC InvalidParamsError naming
it (it was an InternalError, or a silently accepted value)."""
from __future__ import annotations

import asyncio
import importlib
import json
import sys
import uuid

import pytest

pytest.importorskip("a2a")
pytest.importorskip("uvicorn")

import httpx  # noqa: E402
from a2a.client import ClientConfig, create_client  # noqa: E402
from a2a.helpers import new_text_part  # noqa: E402
from a2a.types import InvalidParamsError, Message, Role, SendMessageRequest  # noqa: E402
from google.protobuf.struct_pb2 import Struct  # noqa: E402

from netarena_gym.a2a.common import ServerThread  # noqa: E402
from netarena_gym.a2a.server import agent_app, evaluator_app, spec_from_config  # noqa: E402
from netarena_gym.errors import DependencyNotInstalled  # noqa: E402

URL = "http://127.0.0.1:1"


@pytest.mark.parametrize("config,words", [
    ({"env_options": [1, 2]}, '"env_options" must be an object'),
    ({"env_options": {"backend": "mininet"}}, "may not set 'backend'"),
    ({"env_options": {"unsafe_sandbox": True}}, "may not set 'unsafe_sandbox'"),
    ({"env_options": {"history": "x"}}, "history takes int"),
    ({"env_options": {"nope": 1}}, "unknown key 'nope'"),
    ({"levels": None}, "invalid level null"),
    ({"levels": {"a": 1}}, "invalid level"),
    ({"levels": [1, 9]}, "invalid level 9"),
    ({"levels": list(range(1, 10))}, "1..8 levels"),
    ({"num_queries": 10 ** 9}, '"num_queries" must be an integer in 1..1000'),
    ({"num_queries": True}, '"num_queries" must be an integer'),
    ({"max_iterations": "lots"}, '"max_iterations" must be an integer in 1..1000 or null'),
    ({"max_iterations": -1}, '"max_iterations" must be an integer'),
    ({"timeout": "nan"}, '"timeout" must be seconds'),
    ({"timeout": float("nan")}, '"timeout" must be seconds'),
    ({"timeout": 0}, '"timeout" must be seconds'),
    ({"seed": 10 ** 5000}, '"seed" must be an integer in 0..'),
    ({"seed": -1}, '"seed" must be an integer'),
    ({"backend": "mininet"}, 'backend "mininet" is not offered'),
    ({"backend": ["sim"]}, "is not offered"),
    ({"prompt_type": ["x"]}, "unknown prompt_type"),
    ({"env": 5}, "unknown env 5"),
    ({"num_switches": 99}, '"num_switches" must be an integer in 1..8'),
    ({"num_hosts_per_subnet": "2"}, '"num_hosts_per_subnet" must be an integer'),
    ({"env": "NetArena-K8sPolicy-v0", "num_switches": 2}, "NetArena-Routing-v0 only"),
])
def test_a_bad_config_value_is_invalid_params_naming_it(config, words):
    with pytest.raises(InvalidParamsError) as ei:
        spec_from_config(URL, config)
    assert words in str(ei.value)


def test_good_configs_still_make_their_spec():
    spec = spec_from_config(URL, {"levels": [1, "compat"], "num_queries": 2, "seed": 3,
                                  "max_iterations": 12, "timeout": 5, "num_switches": 3,
                                  "num_hosts_per_subnet": 2, "prompt_type": "fewshot_cot",
                                  "env_options": {"history": 2}})
    assert spec.levels == (1, "compat") and spec.episodes == 2 and spec.max_steps == 12
    assert spec.env_options["topology"]["subnets"] == [3, 3] and spec.backend == "sim"
    assert spec.agent_options["timeout"] == 5.0 and spec.agent_options["prompt"] == "fewshot_cot"
    # a real backend only where the server's operator allows it
    assert spec_from_config(URL, {"backend": "mininet"}, ("sim", "mininet")).backend == "mininet"


def send(url: str, text: str, meta: dict | None = None):
    async def go():
        async with httpx.AsyncClient(timeout=60) as h:
            client = await create_client(url, ClientConfig(streaming=True, httpx_client=h))
            md = Struct()
            if meta is not None:
                md.update(meta)
            msg = Message(role=Role.ROLE_USER, parts=[new_text_part(text)],
                          message_id=str(uuid.uuid4()), metadata=md)
            try:
                return [ev async for ev in client.send_message(SendMessageRequest(message=msg))]
            finally:
                await client.close()
    return asyncio.run(asyncio.wait_for(go(), 120))


def test_the_evaluator_answers_invalid_params_over_json_rpc():
    with ServerThread.serving(evaluator_app) as srv:
        for config, words in (({"env_options": [1, 2]}, "must be an object"),
                              ({"env_options": {"history": -5}}, "history must be"),
                              ({"backend": "mininet"}, "not offered")):
            with pytest.raises(Exception) as ei:
                send(srv.url, json.dumps({"participants": {"p": URL}, "config": config}))
            assert type(ei.value).__name__ == "InvalidParamsError" and words in str(ei.value)


@pytest.mark.parametrize("meta,words", [
    ({"netarena": "oops"}, '"netarena" must be an object'),
    ({"netarena": {"observation": "x", "step": "abc"}}, '"netarena.step" must be an integer'),
    ({"netarena": {"observation": "x", "step": 1.5}}, '"netarena.step" must be an integer'),
    ({"netarena": {"observation": "x", "step": True}}, '"netarena.step" must be an integer'),
    ({"netarena": {"observation": 5, "step": 0}}, '"netarena.observation" must be a string'),
    ({"netarena": {"observation": "x", "episode": [1]}}, '"netarena.episode" must be a string'),
])
def test_the_agent_server_refuses_bad_metadata(meta, words):
    with ServerThread.serving(lambda url: agent_app("expert", "NetArena-Routing-v0", url)) as srv:
        with pytest.raises(Exception) as ei:
            send(srv.url, "hi", meta)
        assert type(ei.value).__name__ == "InvalidParamsError" and words in str(ei.value)
        # and our adapter's metadata still works (numbers arrive as doubles)
        events = send(srv.url, "hi", {"netarena": {"observation": "Pingall result:",
                                                   "episode": "e1", "step": 0}})
        assert events[-1].WhichOneof("payload") == "message"


def test_a_missing_a2a_extra_is_dependency_not_installed(monkeypatch):
    monkeypatch.setitem(sys.modules, "a2a.helpers", None)  # what an absent package gives
    monkeypatch.delitem(sys.modules, "netarena_gym.a2a.common")
    with pytest.raises(DependencyNotInstalled, match=r"netarena-gym\[a2a\]"):
        importlib.import_module("netarena_gym.a2a.common")


def test_serve_a2a_allow_backend_reaches_the_evaluator(monkeypatch):
    """``serve-a2a`` had no way to offer a real backend: the evaluator always got sim."""
    import netarena_gym.a2a.server as server
    from netarena_gym.cli import main
    got = []
    monkeypatch.setattr(server, "serve_evaluator", lambda **kw: got.append(kw["backends"]))
    assert main(["serve-a2a", "--port", "0"]) == 0
    assert main(["serve-a2a", "--port", "0", "--allow-backend", "sim", "--allow-backend",
                 "mininet", "--allow-backend", "sim"]) == 0
    assert got == [("sim",), ("sim", "mininet")]
    assert main(["serve-a2a", "--agent", "expert", "--env", "NetArena-Routing-v0",
                 "--allow-backend", "mininet"]) == 2
    assert main(["serve-a2a", "--allow-backend", "docker"]) == 2
