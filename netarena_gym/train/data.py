"""Datasets for training: seeded scenario rows, and expert demonstrations as chat JSONL.

**Scenario rows** (GRPO): one row per episode, ``{"env_id", "level", "seed", "prompt"}``;
the env regenerates the scenario from ``(level, seed)``, so a row is a few bytes and the
dataset is unlimited. Training seeds start at :data:`TRAIN_SEED_BASE` so they never
overlap the evaluation seeds (``netarena-gym eval --seed S`` uses ``S + i``, small S).

**Demonstrations** (SFT), one JSON object per line::

    {"env_id": "NetArena-Routing-v0", "level": 1, "seed": 1000000, "correct": true,
     "safe": true, "steps": 3,
     "tools": "[{...json schema of run...}]",
     "messages": [
        {"role": "system", "content": "You are a network operator..."},
        {"role": "user",
         "content": "Solve the task described below.\\n\\nCurrent state ...\\nPingall ..."},
        {"role": "assistant", "content": "", "tool_calls": [{"type": "function",
            "function": {"name": "run", "arguments": "{\\"machine\\": \\"r0\\", ...}"}}]},
        {"role": "tool", "name": "run", "content": "Pingall result: ..."},
        ...
        {"role": "assistant", "content": "Done."}]}

``messages`` + ``tools`` is what TRL's ``SFTTrainer`` takes (tool-call arguments are JSON
strings, as in the OpenAI format, so every row has the same Arrow schema), and it is
exactly the conversation GRPO rollouts and the evaluation agent produce: the first
observation is appended to the user message, each tool answer is the env's next
observation. :func:`to_prompt_completion` gives the prompt/completion split instead.

Any JSONL of episode records that carry a ``scenario`` and a ``trajectory`` of text
``action`` values (``netarena-gym eval --out``, ``agents.episode.EpisodeRecord.to_dict``)
converts to this format by replaying the scenario (:func:`episode_record_to_demo`).
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterable, Iterator

import numpy as np

from netarena_gym.agents.episode import play_episode
from netarena_gym.agents.experts import make_expert
from netarena_gym.train.tools import SOLVED, UNSOLVED, NetArenaToolEnv, initial_message, tool_class
from netarena_gym.train import tools

TRAIN_SEED_BASE = 1_000_000
TASK_PROMPT = "Solve the task described below."
#: the closing assistant turn of a demonstration, by outcome
CLOSING = {True: "Done.", False: "I could not solve it."}


def parse_level(v) -> int | str:
    v = str(v).strip()
    return v if v == "compat" else int(v)


def parse_level_mix(spec: str | dict | int | None) -> dict[int | str, float]:
    """``"1"``, ``"1,2,3"`` (uniform) or ``"1:0.5,2:0.3,3:0.2"`` -> normalised weights."""
    if spec is None:
        return {1: 1.0}
    bad = ValueError(f"bad level mix {spec!r}: use e.g. '1', '1,2,3' or '1:0.5,3:0.5'")
    try:
        if isinstance(spec, dict):
            mix = {parse_level(k): float(v) for k, v in spec.items()}
        else:
            mix = {}
            for part in str(spec).split(","):
                part = part.strip()
                if not part:
                    continue
                lvl, _, w = part.partition(":")
                mix[parse_level(lvl)] = float(w) if w else 1.0
    except ValueError:
        raise bad from None
    if not mix or any(w < 0 for w in mix.values()) or sum(mix.values()) <= 0:
        raise bad
    total = sum(mix.values())
    return {k: v / total for k, v in mix.items() if v > 0}


def level_plan(mix: dict, n: int, seed: int) -> list[int | str]:
    """Exactly proportional level assignment for ``n`` episodes (largest remainders),
    shuffled deterministically by ``seed``."""
    levels = list(mix)
    quotas = [mix[k] * n for k in levels]
    counts = [int(q) for q in quotas]
    for i in sorted(range(len(levels)), key=lambda i: counts[i] - quotas[i])[:n - sum(counts)]:
        counts[i] += 1
    plan = [lvl for lvl, c in zip(levels, counts) for _ in range(c)]
    order = np.random.default_rng(seed).permutation(len(plan))
    return [plan[int(i)] for i in order]


def per_env_levels(spec, n_envs: int, seed: int) -> list[int | str]:
    """One level per vectorised env in the proportions of the mix ``spec``
    (:func:`level_plan`); ValueError when ``n_envs`` leaves a level of the mix without an
    env, which would otherwise be neither trained nor evaluated."""
    mix = parse_level_mix(spec)
    plan = level_plan(mix, n_envs, seed)
    missing = [lvl for lvl in mix if lvl not in plan]
    if missing:
        raise ValueError(
            f"level mix {spec!r} over {n_envs} vectorised env(s) gives level(s) "
            f"{', '.join(map(str, missing))} no env (each env plays one level): they would "
            f"be neither trained nor evaluated; use --n-envs {_envs_for(mix)} or more, or "
            "drop them from the mix")
    return plan


def _envs_for(mix: dict) -> int:
    """The fewest envs that give every level of ``mix`` one."""
    n = len(mix)
    while any(lvl not in level_plan(mix, n, 0) for lvl in mix):
        n += 1
    return n


def system_prompt(env_id: str) -> str:
    return tools.system_prompt(tool_class(env_id))


def scenario_rows(env_id: str, *, n: int, level_mix="1", seed_base: int = TRAIN_SEED_BASE,
                  with_prompt: bool = True) -> list[dict[str, Any]]:
    """``n`` seeded episode rows. ``level`` is a string column (``"compat"`` is a level)."""
    mix = parse_level_mix(level_mix)
    rows = []
    for i, lvl in enumerate(level_plan(mix, n, seed_base)):
        row: dict[str, Any] = {"env_id": env_id, "level": str(lvl), "seed": seed_base + i}
        if with_prompt:
            row["prompt"] = [{"role": "system", "content": system_prompt(env_id)},
                             {"role": "user", "content": TASK_PROMPT}]
        rows.append(row)
    return rows


class _Recorder:
    """Wraps an agent and keeps the first observation it was shown."""

    def __init__(self, agent):
        self.agent = agent
        self.first = None

    def reset(self):
        self.first = None
        self.agent.reset()

    def act(self, obs, info):
        if self.first is None:
            self.first = obs
        return self.agent.act(obs, info)


def expert_episodes(env_id: str, *, level, seeds: Iterable[int], env_kwargs: dict | None = None,
                    only_correct: bool = True) -> Iterator[dict[str, Any]]:
    """Episodes of the task's registered expert on the text interface, as plain records:
    ``{"env_id", "level", "seed", "first_observation", "steps": [{"action",
    "observation"}], "correct", "safe"}``."""
    import gymnasium as gym
    env = gym.make(env_id, level=level, interface="text", **(env_kwargs or {}))
    rec = _Recorder(make_expert(env))
    try:
        for seed in seeds:
            res = play_episode(env, rec, seed=int(seed), record=True, catch=False,
                               max_obs_chars=None)
            if only_correct and not res.correct:
                continue
            yield {"env_id": env_id, "level": level, "seed": int(seed),
                   "first_observation": rec.first,
                   "steps": [{"action": t["action"], "observation": t["observation"]}
                             for t in res.trajectory],
                   "correct": res.correct, "safe": res.safe}
    finally:
        env.close()


def render_conversation(ep: dict[str, Any], env_id: str | None = None) -> list[dict]:
    """The chat (system, user + first observation, assistant tool calls, tool answers,
    closing assistant message) of one episode record from :func:`expert_episodes`."""
    cls: type[NetArenaToolEnv] = tool_class(env_id or ep["env_id"])
    msgs = [{"role": "system", "content": tools.system_prompt(cls)},
            {"role": "user", "content": TASK_PROMPT + initial_message(ep["first_observation"])}]
    for i, st in enumerate(ep["steps"]):
        name, args = tools.call_of_action(cls, st["action"])
        msgs.append({"role": "assistant", "content": "", "tool_calls": [{
            "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}]})
        obs = st["observation"]
        if i == len(ep["steps"]) - 1:
            obs = f"{obs}\n" + (SOLVED if ep["correct"] else UNSOLVED)
        msgs.append({"role": "tool", "name": name, "content": obs})
    msgs.append({"role": "assistant", "content": CLOSING[bool(ep["correct"])]})
    return msgs


def demo_record(ep: dict[str, Any]) -> dict[str, Any]:
    cls = tool_class(ep["env_id"])
    return {"env_id": ep["env_id"], "level": ep["level"], "seed": ep["seed"],
            "correct": ep["correct"], "safe": ep["safe"], "steps": len(ep["steps"]),
            "tools": json.dumps(cls._tool_schemas()),
            "messages": render_conversation(ep)}


def generate_demonstrations(env_id: str, *, n: int, level_mix="1",
                            seed_base: int = TRAIN_SEED_BASE,
                            env_kwargs: dict | None = None) -> list[dict[str, Any]]:
    """``n`` expert demonstrations (correct episodes only) with the given level mix."""
    rows = scenario_rows(env_id, n=n, level_mix=level_mix, seed_base=seed_base,
                         with_prompt=False)
    by_level: dict[Any, list[int]] = {}
    for r in rows:
        by_level.setdefault(parse_level(r["level"]), []).append(r["seed"])
    out = []
    for lvl, seeds in by_level.items():
        out.extend(demo_record(ep) for ep in expert_episodes(env_id, level=lvl, seeds=seeds,
                                                             env_kwargs=env_kwargs))
    out.sort(key=lambda d: d["seed"])
    return out


def episode_record_to_demo(rec: dict[str, Any], env_id: str, *,
                           env_kwargs: dict | None = None) -> dict[str, Any]:
    """Replay an episode record (``scenario`` + ``trajectory`` of text actions) and render
    it as a demonstration; the replayed outcome must match the record's."""
    import gymnasium as gym
    scen = rec["scenario"]
    level = scen["level"]
    env = gym.make(env_id, level=level, interface="text", **(env_kwargs or {}))
    try:
        obs, info = env.reset(options={"scenario": scen})
        first, steps = obs, []
        for t in rec["trajectory"]:
            action = t["action"]
            if not isinstance(action, (dict, str)):
                raise ValueError("the trajectory holds discrete actions; demonstrations need "
                                 "text actions")
            obs, _r, term, trunc, info = env.step(action)
            if isinstance(action, str):
                action = json.loads(action)
            steps.append({"action": action, "observation": obs})
            if term or trunc:
                break
        if "correct" in rec and bool(rec["correct"]) != bool(info["correct"]):
            raise ValueError(f"replaying seed {scen.get('seed')} did not reproduce the record")
        ep = {"env_id": env_id, "level": level, "seed": scen.get("seed"),
              "first_observation": first, "steps": steps,
              "correct": bool(info["correct"]), "safe": bool(info["safe"])}
    finally:
        env.close()
    return demo_record(ep)


def write_jsonl(path: str | Path, records: Iterable[dict]) -> int:
    n = 0
    with open(path, "w") as f:
        for r in records:
            f.write(json.dumps(r) + "\n")
            n += 1
    return n


def read_demonstrations(path: str | Path, env_id: str | None = None) -> list[dict[str, Any]]:
    """Demonstrations from JSONL: lines in this module's format are taken as they are;
    episode records (``scenario`` + ``trajectory``) are replayed and converted."""
    out = []
    with open(path) as f:
        for ln, line in enumerate(f, 1):
            line = line.strip()
            if not line:
                continue
            rec = json.loads(line)
            if "messages" in rec:
                out.append(rec)
            elif "scenario" in rec and "trajectory" in rec:
                eid = env_id or rec.get("env_id") or rec.get("env")
                if not eid:
                    raise ValueError(f"{path}:{ln}: episode record without env id; pass env_id")
                out.append(episode_record_to_demo(rec, eid))
            else:
                raise ValueError(f"{path}:{ln}: neither a demonstration (messages) nor an "
                                 "episode record (scenario + trajectory)")
    return out


def to_prompt_completion(demo: dict[str, Any]) -> dict[str, Any]:
    """Split a demonstration at the first assistant turn (TRL's prompt/completion form)."""
    msgs = demo["messages"]
    k = next(i for i, m in enumerate(msgs) if m["role"] == "assistant")
    return {"prompt": msgs[:k], "completion": msgs[k:], "tools": demo["tools"]}
