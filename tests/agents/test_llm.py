"""The LLM agent against a real HTTP server on 127.0.0.1 speaking the OpenAI chat API."""
from __future__ import annotations

import json
import time

import gymnasium as gym
import pytest

import netarena_gym
from netarena_gym.cli import main
from netarena_gym.eval import EvalSpec, evaluate
from netarena_gym.agents.experts import expert_class
from netarena_gym.agents.llm import LLMAgent
from netarena_gym.llm import OpenAIChatClient
from netarena_gym.routing.expert import RoutingExpert
from tests.llm.fake_openai import ExpertScript, FakeOpenAI, JsonExpertScript, Reply

ENV = "NetArena-Routing-v0"


def read_jsonl(path):
    with open(path) as f:
        return [json.loads(line) for line in f]


def test_scripted_model_solves_episodes_through_the_cli(tmp_path, capsys, monkeypatch):
    script = ExpertScript(RoutingExpert, garbage_first=True)
    with FakeOpenAI(script) as srv:
        monkeypatch.setenv("OPENAI_BASE_URL", srv.base_url)
        monkeypatch.delenv("OPENAI_API_KEY", raising=False)
        monkeypatch.setenv("NETARENA_MODEL", "scripted-expert")
        rc = main(["eval", "--env", ENV, "--agent", "llm", "--level", "1", "2", "--episodes",
                   "3", "--prompt", "cot", "--history", "3", "--out", str(tmp_path / "llm"),
                   "--api-key", "sk-test",
                   "--format", "json", "--quiet"])
        stdout = capsys.readouterr().out
    assert rc == 0
    s = json.loads(stdout)
    assert s["correctness"] == 1.0 and s["model"] == "scripted-expert" and s["prompt"] == "cot"
    m = s["llm"]
    assert m["unparsed_replies"] == 6 and m["failed_calls"] == 0  # one garbage reply per episode
    assert m["calls"] == len(srv.requests) and m["prompt_tokens"] > 0 and m["completion_tokens"] > 0
    assert s["invalid_actions"] == 6
    recs = read_jsonl(tmp_path / "llm" / "episodes.jsonl")
    for rec in recs:
        first = rec["trajectory"][0]
        assert first["kind"] == "invalid" and first["llm"]["parsed"] is False
        assert "parse_error" in first["llm"] and first["llm"]["reply"].startswith("I believe")
        hows = {t["llm"]["parse"] for t in rec["trajectory"][1:]}
        assert hows <= {"json", "labels", "fence"} and len(hows) >= 2
        for t in rec["trajectory"]:
            assert t["llm"]["latency_s"] > 0 and t["llm"]["attempts"] == 1
            assert t["llm"]["prompt_tokens"] > 0
    body = srv.requests[0]
    assert body["model"] == "scripted-expert" and body["temperature"] == 0.0
    assert body["messages"][0]["role"] == "system" and "step by step" in body["messages"][0]["content"]
    assert isinstance(body["seed"], int)
    assert srv.headers[0]["Authorization"] == "Bearer sk-test"
    assert "sk-test" not in (tmp_path / "llm" / "run.json").read_text()
    assert max(len(b["messages"]) for b in srv.requests) <= 1 + 2 * 3 + 1


def test_a_server_that_stalls_past_the_timeout_costs_bounded_time(tmp_path):
    with FakeOpenAI(lambda body, i: Reply(stall_s=30)) as srv:
        spec = EvalSpec(ENV, levels=(1,), episodes=2, agent="llm", max_steps=2,
                        agent_options={"base_url": srv.base_url, "model": "slow",
                                       "timeout": 0.3, "max_retries": 1, "backoff": 0.01})
        t0 = time.monotonic()
        s = evaluate(spec, out=str(tmp_path / "stall"))
        elapsed = time.monotonic() - t0
        n_requests = len(srv.requests)
    assert elapsed < 8
    assert n_requests == 2 * 2 * 2  # episodes x steps x (1 try + 1 retry)
    assert s["correctness"] == 0.0 and s["invalid_actions"] == 4
    assert s["llm"]["failed_calls"] == 4 and s["episodes_with_errors"] == 0
    step = read_jsonl(tmp_path / "stall" / "episodes.jsonl")[0]["trajectory"][0]
    assert "timeout" in step["llm"]["error"] and step["llm"]["attempts"] == 2
    assert step["kind"] == "invalid" and "no reply from the model" in step["action"]


def test_a_dead_server_is_a_failed_call_not_a_crash():
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    env = gym.make(ENV)
    obs, info = env.reset(seed=1)
    agent = LLMAgent(env, OpenAIChatClient(f"http://127.0.0.1:{port}/v1", "m", max_retries=1,
                                           backoff=0.01, timeout=1))
    agent.reset()
    action = agent.act(obs, info)
    assert agent.last_call["error"].startswith("connection error")
    _, _, _, _, info = env.step(action)
    assert info["command_kind"] == "invalid"


def test_missing_model_or_server_fails_before_any_episode(capsys, monkeypatch):
    for var in ("OPENAI_BASE_URL", "NETARENA_MODEL"):
        monkeypatch.delenv(var, raising=False)
    rc = main(["eval", "--env", ENV, "--agent", "llm", "--base-url", "http://127.0.0.1:9/v1"])
    assert rc == 2 and "needs a model" in capsys.readouterr().err
    rc = main(["eval", "--env", ENV, "--agent", "llm", "--model", "m"])
    assert rc == 2 and "OPENAI_BASE_URL" in capsys.readouterr().err
    rc = main(["eval", "--env", ENV, "--agent", "llm", "--model", "m", "--base-url",
               "http://127.0.0.1:9/v1", "--interface", "discrete", "--episodes", "1"])
    assert rc == 2 and "--interface text" in capsys.readouterr().err


def test_llm_agent_resets_its_conversation_between_episodes():
    script = ExpertScript(RoutingExpert)
    with FakeOpenAI(script) as srv:
        env = gym.make(ENV)
        agent = LLMAgent(env, OpenAIChatClient(srv.base_url, "m"), history=4)
        for seed in (1, 2):
            obs, info = env.reset(seed=seed)
            agent.reset()
            agent.act(obs, info)
        first_turns = [b for b in srv.requests if len(b["messages"]) == 2]
    assert len(first_turns) == 2  # the second episode starts with a fresh window


@pytest.mark.parametrize("env_id", sorted(netarena_gym.ENV_IDS))
def test_llm_agent_works_on_every_env(env_id, tmp_path):
    probe = gym.make(env_id)
    expert, level = expert_class(probe.unwrapped.task), probe.unwrapped.levels[0]
    probe.close()
    with FakeOpenAI(JsonExpertScript(expert)) as srv:
        spec = EvalSpec(env_id, levels=(level,), episodes=3, agent="llm",
                        agent_options={"base_url": srv.base_url, "model": "m", "history": 2})
        s = evaluate(spec, out=str(tmp_path / "e"))
    assert s["llm"]["unparsed_replies"] == 0 and s["llm"]["failed_calls"] == 0
    assert s["correctness"] >= 2 / 3  # what the env's expert reaches, through the model API


@pytest.mark.parametrize("url", ["notaurl", "127.0.0.1:8000/v1", "ftp://host/v1", "http://",
                                 "http://h:port/v1"])
def test_a_base_url_that_is_no_http_url_fails_before_any_episode(capsys, url):
    """'notaurl' made every episode an agent ValueError (exit 0); a scheme-less URL was
    retried with backoff on every call."""
    rc = main(["eval", "--env", ENV, "--agent", "llm", "--model", "m", "--base-url", url,
               "--episodes", "1", "--quiet"])
    err = capsys.readouterr().err
    assert rc == 2 and "is not an http(s) URL" in err and len(err.strip().splitlines()) == 1
