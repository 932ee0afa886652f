"""Local transformers models: the factory's ``hf`` agent and the chat backend share one
loader and one generation routine (a tiny Qwen3 built locally, no download)."""
from __future__ import annotations

import json

import gymnasium as gym
import pytest

pytest.importorskip("torch", reason="needs torch: pip install torch==2.13.0 (the CPU wheel)")
pytest.importorskip("transformers", reason='needs transformers: pip install -e ".[llm]"')
pytest.importorskip("trl", reason='needs trl: pip install -e ".[train]"')

import netarena_gym  # noqa: E402,F401  (registers the envs)
from netarena_gym.agents.episode import play_episode  # noqa: E402
from netarena_gym.agents.factory import make_agent  # noqa: E402
from netarena_gym.agents.hf import HFToolAgent, TransformersChat  # noqa: E402
from netarena_gym.eval import EvalSpec, evaluate  # noqa: E402

ROUTING = "NetArena-Routing-v0"


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    from netarena_gym.train.tiny import build_tiny_model
    return str(build_tiny_model(tmp_path_factory.mktemp("tiny"), [ROUTING]))


def test_the_hf_agent_plays_episodes_deterministically(tiny):
    env = gym.make(ROUTING, level=1, max_steps=2)
    try:
        agent = make_agent("hf", env, options={"model": tiny, "max_tokens": 8})
        assert isinstance(agent, HFToolAgent)
        r1 = play_episode(env, agent, seed=4, record=True, catch=False)
        r2 = play_episode(env, agent, seed=4, record=True, catch=False)
    finally:
        env.close()
    assert r1.steps == 2 and not r1.errors and agent.turns == 4
    assert [t["action"] for t in r1.trajectory] == [t["action"] for t in r2.trajectory]


def test_the_chat_backend_reports_tokens_and_is_greedy_at_temperature_0(tiny):
    chat = TransformersChat(tiny)
    msgs = [{"role": "system", "content": "s"}, {"role": "user", "content": "ip addr show"}]
    a = chat.chat(msgs, max_tokens=5)
    b = chat.chat(msgs, max_tokens=5)
    assert a.error is None and a.text == b.text
    assert a.prompt_tokens > 0 and 0 < a.completion_tokens <= 5
    bad = chat.chat(msgs, max_tokens="many")  # a failed generation is a result, not a raise
    assert bad.text is None and bad.error.startswith("ValueError")


def test_tiny_local_model_plays_episodes_and_records_its_calls(tiny, tmp_path):
    spec = EvalSpec("NetArena-Routing-v0", levels=(1,), episodes=2, agent="llm", max_steps=2,
                    agent_options={"provider": "transformers", "model": tiny,
                                   "max_tokens": 6, "history": 1})
    s = evaluate(spec, out=str(tmp_path / "tiny"))
    assert s["episodes"] == 2 and s["episodes_with_errors"] == 0
    assert s["llm"]["calls"] == 4 and s["llm"]["failed_calls"] == 0
    with open(tmp_path / "tiny" / "episodes.jsonl") as f:
        rec = json.loads(f.readline())
    call = rec["trajectory"][0]["llm"]
    assert call["prompt_tokens"] > 100 and 1 <= call["completion_tokens"] <= 6
    assert call["latency_s"] > 0 and isinstance(call["reply"], str)
    assert rec["steps"] == 2
    # a random model's babble does not parse: an invalid action, penalised by the env
    for t in rec["trajectory"]:
        if not t["llm"]["parsed"]:
            assert t["kind"] == "invalid" and t["components"]["invalid"] < 0
