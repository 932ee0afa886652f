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


def _scripted(monkeypatch, tok, replies):
    """Replace generation with ``replies`` in order (the text the model would write);
    returns the list of prompts it was asked to continue."""
    import netarena_gym.agents.hf as hf
    prompts = []

    def fake(model, tokenizer, prompt_ids, **kw):
        prompts.append(tokenizer.decode(prompt_ids))
        return tok(replies[min(len(prompts) - 1, len(replies) - 1)],
                   add_special_tokens=False)["input_ids"]
    monkeypatch.setattr(hf, "generate", fake)
    return prompts


def _call(name, args):
    return "<tool_call>\n" + json.dumps({"name": name, "arguments": args}) + "\n</tool_call>"


def test_every_tool_call_of_a_turn_is_played_before_the_next_generation(tiny, monkeypatch):
    """TRL's tool loop runs every call of a turn; the eval agent plays them one per step,
    with one tool message each, and generates again only after the last."""
    from transformers import AutoTokenizer
    tok = AutoTokenizer.from_pretrained(tiny)
    two = (_call("run", {"machine": "r0", "command": "ip addr show"}) + "\n"
           + _call("run", {"machine": "r0", "command": "iptables -S"}) + "<|im_end|>")
    prompts = _scripted(monkeypatch, tok, [two, "Done.<|im_end|>"])
    env = gym.make(ROUTING, level=1, interface="text", max_steps=3)
    agent = HFToolAgent(None, tok, ROUTING)
    try:
        rec = play_episode(env, agent, seed=0, record=True, catch=False)
    finally:
        env.close()
    assert [t["action"] for t in rec.trajectory[:2]] == [
        {"machine": "r0", "command": "ip addr show"}, {"machine": "r0", "command": "iptables -S"}]
    assert rec.steps == 3 and len(prompts) == 2 and agent.turns == 2 and agent.tool_calls == 2
    assert prompts[1].count("<tool_response>") == 2  # both answers before generating again
    roles = [m["role"] for m in agent.messages]
    assert roles[2:5] == ["assistant", "tool", "tool"]
    assert len(agent.messages[2]["tool_calls"]) == 2


def test_a_malformed_call_is_the_training_envs_invalid_step(tiny, monkeypatch):
    """Wrong argument names and unknown tools reach the env as the invalid action GRPO's
    tool env plays for the same call (one mapping, train.tools.env_action)."""
    from transformers import AutoTokenizer
    from netarena_gym.train.tools import make_environment_factory, play_call
    tok = AutoTokenizer.from_pretrained(tiny)
    bad = [("run", {"host": "r0", "cmd": "ip addr show"}), ("shell", {"machine": "r0"})]
    _scripted(monkeypatch, tok, [_call(n, a) + "<|im_end|>" for n, a in bad])
    env = gym.make(ROUTING, level=1, interface="text", max_steps=2)
    try:
        rec = play_episode(env, HFToolAgent(None, tok, ROUTING), seed=1_000_000, record=True,
                           catch=False)
    finally:
        env.close()
    train = make_environment_factory(ROUTING)()
    train.reset(seed=1_000_000, level="1")
    for name, args in bad:
        play_call(train, name, args)
    train_reward = train._reward_so_far()  # the same two steps (eval's episode ends there)
    assert [t["kind"] for t in rec.trajectory] == ["invalid", "invalid"]
    assert rec.total_reward == pytest.approx(train_reward) and train_reward < 0


def test_sampling_is_seeded_per_episode(tiny):
    """At temperature 1 the same seed replays the same actions (fresh agents, as two
    ``netarena-gym eval --agent hf --seed S`` runs); another seed samples others."""
    env = gym.make(ROUTING, level=1, interface="text", max_steps=2)
    opts = {"model": tiny, "temperature": 1.0, "max_tokens": 12}
    try:
        runs = []
        for seed in (0, 0, 5):
            agent = make_agent("hf", env, seed=0, options=opts)
            rec = play_episode(env, agent, seed=seed, record=True, catch=False)
            runs.append([t["action"] for t in rec.trajectory])
    finally:
        env.close()
    assert runs[0] == runs[1]
    assert runs[0] != runs[2]
