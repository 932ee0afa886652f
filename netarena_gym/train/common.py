"""Pieces the training scripts share: config overrides from the command line, the model
argument (including the locally built tiny model), and evaluating an LLM as an agent."""
from __future__ import annotations

import csv
import json
import time
from pathlib import Path

from netarena_gym.agents import play_episode, summarize


def _value(v: str):
    try:
        return json.loads(v)
    except json.JSONDecodeError:
        return v


def parse_overrides(config: str | None = None, sets: list[str] | None = None,
                    max_steps: int | None = None) -> dict:
    """Trainer-config overrides: a JSON file, then ``KEY=VALUE`` items (values parsed as
    JSON when they can be), then ``max_steps``."""
    ov: dict = {}
    if config:
        ov.update(json.loads(Path(config).read_text()))
    for item in sets or []:
        k, sep, v = item.partition("=")
        if not sep or not k:
            raise ValueError(f"expected KEY=VALUE, got {item!r}")
        ov[k] = _value(v)
    if max_steps is not None:
        ov["max_steps"] = max_steps
    return ov


def resolve_model(name: str, out: str | Path, env_id: str):
    """``(model path or hub id, tokenizer)``; ``"tiny"`` builds the tiny local Qwen3
    (:mod:`netarena_gym.train.tiny`) under ``OUT/tiny-model``."""
    from transformers import AutoTokenizer
    if name == "tiny":
        from netarena_gym.train.tiny import build_tiny_model
        name = str(build_tiny_model(Path(out) / "tiny-model", [env_id]))
    tok = AutoTokenizer.from_pretrained(name, padding_side="left")
    if tok.pad_token is None:
        tok.pad_token = tok.eos_token
    return name, tok


def env_levels(env_id: str, spec: str = "all") -> list:
    """``"all"`` (the env's own levels), ``"none"`` or ``"1,2,3"``."""
    from netarena_gym.train.data import parse_level
    if spec == "none":
        return []
    if spec == "all":
        import gymnasium as gym
        env = gym.make(env_id, interface="text")
        try:
            return list(env.unwrapped.levels)
        finally:
            env.close()
    return [parse_level(x) for x in spec.split(",") if x.strip()]


def evaluate(env_id: str, agent, *, level, episodes: int, seed: int,
             interface: str = "discrete", env_kwargs: dict | None = None) -> dict:
    """The ``netarena-gym eval`` protocol: episode ``i`` uses seed ``seed + i``; returns
    ``agents.summary.summarize`` plus the run's identity (same keys as ``--format json``)
    and ``mean_cost`` (the mean :func:`episode_cost`).
    ``agent`` is an agent, or a callable that builds one from the env."""
    import gymnasium as gym
    env = gym.make(env_id, level=level, interface=interface, **(env_kwargs or {}))
    t0 = time.perf_counter()
    try:
        if not hasattr(agent, "act"):
            agent = agent(env)
        results = [play_episode(env, agent, seed=seed + i) for i in range(episodes)]
    finally:
        env.close()
    costs = [episode_cost(r) for r in results]
    return {"env": env_id, "level": level, "interface": interface, "seed": seed,
            **summarize(results), "mean_cost": sum(costs) / len(costs) if costs else 0.0,
            "wall_seconds": time.perf_counter() - t0}


def episode_cost(result) -> float:
    """An episode's cost: the sum over its steps of ``info["cost"]`` (the env reports it
    as ``newly_broken`` in the episode record's trajectory)."""
    traj = result.get("trajectory", ()) if isinstance(result, dict) else result.trajectory
    return float(sum(int(t.get("newly_broken") or 0) for t in traj))


def evaluate_chat_model(path: str, env_id: str, levels, *, episodes: int, seed: int = 0,
                        prompt: str = "zeroshot", history: int = 6, max_new_tokens: int = 256,
                        env_kwargs: dict | None = None) -> dict:
    """Per level, the evaluation of a model saved in ``path`` played by the JSON-reply
    agent of :mod:`netarena_gym.agents.llm` (the format of ``netarena-gym generate``'s
    demonstrations), with its local transformers backend."""
    from netarena_gym.agents.llm import LLMAgent
    opts = {"provider": "transformers", "model": str(path), "prompt": prompt,
            "history": history, "max_tokens": max_new_tokens}
    return {str(lvl): evaluate(env_id, lambda env: LLMAgent.from_options(env, opts),
                               level=lvl, episodes=episodes, seed=seed, interface="text",
                               env_kwargs=env_kwargs)
            for lvl in levels}


def evaluate_llm(model, tok, env_id: str, levels, *, episodes: int, seed: int = 0,
                 max_new_tokens: int = 256, env_kwargs: dict | None = None,
                 max_prompt_tokens: int | None = None) -> dict:
    """Per level, the ``netarena-gym eval`` summary of the model played by
    :class:`~netarena_gym.agents.hf.HFToolAgent` (episode ``i``: seed ``seed + i``)."""
    from netarena_gym.agents.hf import HFToolAgent
    out = {}
    for lvl in levels:
        agent = HFToolAgent(model, tok, env_id, max_new_tokens=max_new_tokens,
                            max_prompt_tokens=max_prompt_tokens)
        out[str(lvl)] = evaluate(env_id, agent, level=lvl, episodes=episodes, seed=seed,
                                 interface="text", env_kwargs=env_kwargs)
    return out


def evaluate_trained(trainer, tok, env_id: str, levels, *, lora: bool = False, **kw) -> dict:
    """:func:`evaluate_llm` on a trainer's model (LoRA adapters merged first)."""
    model = trainer.model.merge_and_unload() if lora else trainer.model
    model.eval()
    return evaluate_llm(model, tok, env_id, levels, **kw)


def report(summary: dict, out: str | Path) -> None:
    """Write ``OUT/summary.json`` and print it, with one line per evaluated level."""
    (Path(out) / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    print(json.dumps({k: v for k, v in summary.items() if k != "eval"}, indent=2))
    for level, s in summary.get("eval", {}).items():
        print(f"eval level {level}: correctness {s['correctness']:.3f}  "
              f"safety {s['safety']:.3f}  mean steps {s['mean_steps']:.2f}")


def write_csv(path: str | Path, rows: list[dict], fields) -> Path:
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(fields))
        w.writeheader()
        for r in rows:
            w.writerow({k: r.get(k, "") for k in fields})
    return Path(path)
