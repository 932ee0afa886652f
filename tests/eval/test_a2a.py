"""A2A: the evaluator server and the agent adapter talking to each other over loopback."""
from __future__ import annotations

import asyncio
import json
import time
import uuid

import pytest

pytest.importorskip("a2a", reason="A2A needs a2a-sdk: pip install -e \".[a2a]\"")
pytest.importorskip("uvicorn", reason="A2A servers need uvicorn: pip install -e \".[a2a]\"")

import httpx  # noqa: E402  (a dependency of a2a-sdk)
from a2a.client import ClientConfig, create_client  # noqa: E402
from a2a.helpers import new_text_part  # noqa: E402
from a2a.types import Message, Role, SendMessageRequest, TaskState  # noqa: E402
from google.protobuf.json_format import MessageToDict  # noqa: E402

from netarena_gym.a2a.common import ServerThread, event_text  # noqa: E402
from netarena_gym.a2a.server import agent_app, evaluator_app  # noqa: E402
from tests.eval.conftest import read_jsonl, run_cli  # noqa: E402

ENV = "NetArena-Routing-v0"


@pytest.fixture(scope="module")
def purple():
    """The routing expert served as an A2A agent."""
    with ServerThread.serving(lambda url: agent_app("expert", ENV, url)) as srv:
        yield srv


@pytest.fixture(scope="module")
def green():
    with ServerThread.serving(evaluator_app) as srv:
        yield srv


def send(url: str, text: str) -> list:
    async def go():
        async with httpx.AsyncClient(timeout=60) as h:
            client = await create_client(url, ClientConfig(streaming=True, httpx_client=h))
            msg = Message(role=Role.ROLE_USER, parts=[new_text_part(text)],
                          message_id=str(uuid.uuid4()))
            return [ev async for ev in client.send_message(SendMessageRequest(message=msg))]
    return asyncio.run(go())


def test_eval_an_a2a_agent_with_the_adapter(purple, tmp_path, capsys):
    rc, stdout, _ = run_cli(capsys, "eval", "--env", ENV, "--agent", "a2a", "--a2a-url",
                            purple.url, "--level", "1", "2", "--episodes", 3,
                            "--out", tmp_path / "a2a", "--format", "json", "--quiet")
    assert rc == 0
    s = json.loads(stdout)
    assert s["correctness"] == 1.0 and s["safety"] == 1.0 and s["invalid_actions"] == 0
    rec = read_jsonl(tmp_path / "a2a" / "episodes.jsonl")[0]
    call = rec["trajectory"][0]["llm"]
    assert call["parsed"] and call["parse"] == "json" and call["latency_s"] > 0
    assert json.loads(call["reply"]) == rec["trajectory"][0]["action"]


def test_the_evaluator_streams_upstreams_event_shape(green, purple):
    req = {"participants": {"route_operator": purple.url},
           "config": {"num_queries": 3, "level": 1, "prompt_type": "zeroshot_cot", "seed": 4,
                      "max_iterations": 12, "num_switches": 3, "num_hosts_per_subnet": 2,
                      "output_dir": "ignored"}}
    events = send(green.url, json.dumps(req))
    kinds = [ev.WhichOneof("payload") for ev in events]
    assert kinds[0] == "task"
    first_status = events[1].status_update.status
    assert first_status.state == TaskState.TASK_STATE_WORKING
    assert event_text(events[1]).startswith("Starting assessment.\n{")
    arts = [ev.artifact_update for ev in events if ev.WhichOneof("payload") == "artifact_update"]
    assert len(arts) == 4
    assert not arts[0].append and all(a.append for a in arts[1:])
    assert len({a.artifact.artifact_id for a in arts}) == 1
    results = [MessageToDict(a.artifact.parts[0].data) for a in arts]
    for r in results[:3]:
        assert r["success"] is True and r["safe"] is True and r["agent_info"] == "route_operator"
        assert r["iterations"] == r["steps"] + 1 and r["error_type"]
    final = results[3]
    assert arts[3].last_chunk
    assert final["avg_correctness"] == 1.0 and final["avg_safety"] == 1.0
    assert final["avg_iterations"] == pytest.approx(sum(r["iterations"] for r in results[:3]) / 3)
    assert final["summary"]["max_steps"] == 12 and final["summary"]["prompt"] == "cot"
    texts = [event_text(ev) for ev in events if ev.WhichOneof("payload") == "status_update"]
    assert 'Query 3 processed by agent: "route_operator"' in texts
    assert events[-1].status_update.status.state == TaskState.TASK_STATE_COMPLETED


@pytest.mark.parametrize("bad", [
    "not json",
    json.dumps({"participants": {"a": "http://127.0.0.1:1", "b": "http://127.0.0.1:2"}}),
    json.dumps({"participants": {"a": "http://127.0.0.1:1"}, "config": {"bogus": 1}}),
])
def test_the_evaluator_rejects_invalid_requests(green, bad):
    with pytest.raises(Exception) as ei:  # upstream: InvalidParamsError, a JSON-RPC error
        send(green.url, bad)
    assert type(ei.value).__name__ == "InvalidParamsError"
    assert any(w in str(ei.value) for w in ("JSON", "participant", "config"))


def test_an_unreachable_a2a_agent_gives_invalid_actions_not_a_crash(tmp_path, capsys):
    from netarena_gym.a2a.common import free_port

    url = f"http://127.0.0.1:{free_port()}"
    rc, stdout, _ = run_cli(capsys, "eval", "--env", ENV, "--agent", "a2a", "--a2a-url", url,
                            "--episodes", 1, "--max-steps", 2, "--timeout", 2,
                            "--out", tmp_path / "dead", "--format", "json", "--quiet")
    assert rc == 0
    s = json.loads(stdout)
    assert s["correctness"] == 0.0 and s["invalid_actions"] == 2
    rec = read_jsonl(tmp_path / "dead" / "episodes.jsonl")[0]
    assert all(t["llm"]["error"] for t in rec["trajectory"])


def test_the_agent_server_keeps_conversations_in_the_session_pool():
    """One agent per conversation in serve's SessionPool: its limit is a JSON-RPC error,
    idle conversations are reaped, and a reaped conversation starts a fresh agent."""
    app_box = []

    def factory(url):
        app_box.append(agent_app("expert", ENV, url, max_sessions=1, idle_timeout=1.0))
        return app_box[0]

    with ServerThread.serving(factory) as srv:
        pool = app_box[0].state.netarena_sessions

        def ask(cid):
            async def go():
                async with httpx.AsyncClient(timeout=60) as h:
                    client = await create_client(srv.url, ClientConfig(streaming=True,
                                                                       httpx_client=h))
                    msg = Message(role=Role.ROLE_USER, parts=[new_text_part("Pingall: ok")],
                                  message_id=str(uuid.uuid4()), context_id=cid)
                    return [ev async for ev in client.send_message(SendMessageRequest(message=msg))]
            return event_text(asyncio.run(go())[-1])

        assert ask("conv-1") and len(pool) == 1
        first = pool.ids()[0]
        assert "conv-1" not in first
        with pytest.raises(Exception) as ei:
            ask("conv-2")
        assert type(ei.value).__name__ == "InvalidRequestError"
        assert "limit of 1 sessions" in str(ei.value)
        time.sleep(1.3)
        pool.reap()  # or the server's reaper thread did already
        assert len(pool) == 0
        assert ask("conv-2") and pool.ids() != [first]
