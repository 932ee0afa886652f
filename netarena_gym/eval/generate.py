"""``netarena-gym generate``: fixed query sets and expert demonstrations, for SFT and for
evaluating others on exactly the same episodes.

Writes into ``out``:

* ``queries.jsonl``: one line per episode: ``env``, ``level``, ``seed``, ``key``, ``category``,
  the ``scenario`` record (replayable with ``env.reset(options={"scenario": ...})``), the first
  observation and the first prompt (``messages``) an LLM agent would get;
* ``demos.jsonl``: one line per expert step: the chat ``messages`` the LLM agent would send at
  that step (system prompt, history window, observation) and the expert's reply as the
  assistant turn; plus ``prompt`` (the observation), ``command`` (the action as JSON),
  ``output`` (the observation after the step), ``reward`` and whether the episode ended;
* ``hf/``: the same as a Hugging Face ``DatasetDict`` with splits ``queries`` and ``demos``
  (``datasets.load_from_disk``); scenarios are stored as JSON strings there, since their
  shape differs between tasks.
"""
from __future__ import annotations

import json
from pathlib import Path

import gymnasium as gym

from netarena_gym.eval.spec import job_key, parse_level
from netarena_gym.agents.episode import jsonable
from netarena_gym.agents.experts import expert_class, registered_tasks
from netarena_gym.agents.llm import action_format
from netarena_gym.agents.prompts import Conversation, system_prompt


def generate(env_id: str, *, levels=(1,), episodes: int = 100, seed: int = 0, out: str,
             backend: str = "sim", interface: str = "text", max_steps: int | None = None,
             env_options: dict | None = None,
             demos: bool = True, prompt: str = "zeroshot", history: int = 6,
             hf: bool = True) -> dict:
    if episodes < 1:
        raise ValueError("episodes must be >= 1")
    datasets = None
    if hf:
        try:
            import datasets
        except ImportError:
            raise ImportError("the Hugging Face copy needs datasets: pip install datasets "
                              "(or pass --no-hf for JSONL only)") from None
    outdir = Path(out)
    outdir.mkdir(parents=True, exist_ok=True)
    queries, steps = [], []
    for lv in (parse_level(x) for x in levels):
        env = gym.make(env_id, level=lv, backend=backend, interface=interface,
                       max_steps=max_steps, **(env_options or {}))
        base = env.unwrapped
        keys, raw = action_format(env)
        system = system_prompt(base.task, keys, style=prompt, doc=type(base).__doc__, raw=raw)
        expert_cls = (expert_class(base.task) if base.task in registered_tasks() else None)
        if demos and expert_cls is None:
            raise ValueError(f"{env_id} has no expert to demonstrate with (use --no-demos)")
        try:
            for i in range(episodes):
                s = seed + i
                obs, info = env.reset(seed=s)
                scen = info.get("scenario") or {}
                key = job_key(env_id, lv, s)
                conv = Conversation(system, history)
                queries.append({"key": key, "env": env_id, "level": lv, "seed": s,
                                "task": base.task,
                                "category": str((scen.get("meta") or {}).get("category", "all")),
                                "scenario": scen, "observation": obs,
                                "messages": conv.messages(obs)})
                if not demos:
                    continue
                expert = expert_cls()
                expert.reset()
                t = 0
                while True:
                    action = expert.act(obs, info)
                    reply = action if isinstance(action, str) else json.dumps(jsonable(action))
                    msgs = conv.messages(obs) + [{"role": "assistant", "content": reply}]
                    nobs, reward, term, trunc, info = env.step(action)
                    steps.append({"key": key, "env": env_id, "level": lv, "seed": s, "step": t,
                                  "task": base.task, "messages": msgs, "prompt": obs,
                                  "command": reply, "output": nobs, "reward": float(reward),
                                  "done": bool(term or trunc), "solved": bool(info["correct"])})
                    conv.add(obs, reply)
                    obs = nobs
                    t += 1
                    if term or trunc:
                        break
        finally:
            env.close()
    res = {"queries": str(outdir / "queries.jsonl"), "query_count": len(queries)}
    _write_jsonl(outdir / "queries.jsonl", queries)
    if demos:
        _write_jsonl(outdir / "demos.jsonl", steps)
        res["demos"] = str(outdir / "demos.jsonl")
        res["demo_steps"] = len(steps)
    if datasets is not None:
        datasets.disable_progress_bars()
        splits = {"queries": datasets.Dataset.from_list([_flat(q) for q in queries])}
        if demos and steps:
            splits["demos"] = datasets.Dataset.from_list([{**st, "level": str(st["level"])}
                                                          for st in steps])
        datasets.DatasetDict(splits).save_to_disk(str(outdir / "hf"))
        res["hf"] = str(outdir / "hf")
    return res


def _flat(q: dict) -> dict:
    d = dict(q)
    d["scenario"] = json.dumps(q["scenario"], sort_keys=True)
    d["level"] = str(q["level"])
    return d


def _write_jsonl(path: Path, rows: list[dict]) -> None:
    with open(path, "w", encoding="utf-8") as f:
        for r in rows:
            f.write(json.dumps(r) + "\n")
