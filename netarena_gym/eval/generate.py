"""``netarena-gym generate``: fixed query sets and expert demonstrations, for SFT and for
evaluating others on exactly the same episodes.

Writes into ``out``:

* ``queries.jsonl``: one line per episode: ``env``, ``level``, ``seed``, ``key``, ``category``,
  the ``scenario`` record (replayable with ``env.reset(options={"scenario": ...})``), the first
  observation and the first prompt (``messages``) an LLM agent would get;
* ``demos.jsonl``, in one of two formats (``demo_format``, the CLI's ``--format``):

  - ``"sft"``: one line per solved episode, the tool-calling conversation that
    ``netarena-gym train sft`` trains on (:func:`netarena_gym.train.data.demo_record`:
    ``messages`` with the system prompt, the task and first observation, one assistant
    tool call and one tool answer per step, a closing message; ``tools``, the tool
    schemas; ``env_id``, ``level``, ``seed``, ``correct``, ``safe``, ``steps``); each step
    appears once. Episodes the expert does not solve are left out (they are in
    ``queries.jsonl``). Needs a text interface whose actions are JSON objects;
  - ``"chat"`` (default): one line per expert step: the chat ``messages`` the JSON-reply LLM
    agent would send at that step (system prompt, history window, observation) and the
    expert's reply as the assistant turn; plus ``prompt`` (the observation), ``command``
    (the action as JSON), ``output`` (the observation after the step), ``reward`` and
    whether the episode ended. A row repeats its history window, so rows overlap;
* ``hf/``: the same as a Hugging Face ``DatasetDict`` with splits ``queries`` and ``demos``
  (``datasets.load_from_disk``); scenarios are stored as JSON strings there, since their
  shape differs between tasks.

Before writing, the first ``sample`` episodes of every level are played and their size
extrapolated to the whole set (the Hugging Face copy counted as much again); ``confirm``
sees that estimate and may refuse (the CLI asks for ``--yes`` above 100 MB). The sampled
episodes are part of the output, not played twice. Lines are streamed to disk.
"""
from __future__ import annotations

import json
import tempfile
from contextlib import ExitStack
from pathlib import Path
from typing import Callable


from netarena_gym.agents.episode import jsonable
from netarena_gym.agents.experts import expert_class, registered_tasks
from netarena_gym.agents.llm import action_format
from netarena_gym.agents.prompts import Conversation, system_prompt
from netarena_gym.errors import DependencyNotInstalled, require
from netarena_gym.eval.groups import category
from netarena_gym.eval.progress import Progress
from netarena_gym.eval.spec import job_key, parse_level
from netarena_gym.eval.validate import check_env_builds, out_dir

SAMPLE = 2
#: the formats of ``demos.jsonl``
DEMO_FORMATS = ("chat", "sft")


class GenerateRefused(ValueError):
    """``confirm`` declined the estimated output size."""


class _Level:
    """One level's env, prompt and expert; :meth:`play` yields one episode's lines."""

    def __init__(self, env_id, lv, *, backend, interface, max_steps, env_options, demos,
                 prompt, history, demo_format="chat"):
        self.env_id, self.level, self.demos, self.history = env_id, lv, demos, history
        self.demo_format = demo_format
        # a bad option or a backend that cannot be set up: one UsageError naming it
        self.env = check_env_builds(env_id, level=lv, backend=backend, interface=interface,
                                    max_steps=max_steps, **(env_options or {}))
        base = self.env.unwrapped
        self.task = base.task
        keys, raw = action_format(self.env)
        self.system = system_prompt(base.task, keys, style=prompt, doc=type(base).__doc__,
                                    raw=raw)
        self.expert_cls = expert_class(base.task) if base.task in registered_tasks() else None
        if demos and self.expert_cls is None:
            self.env.close()
            raise ValueError(f"{env_id} has no expert to demonstrate with (use --no-demos)")
        if demos and demo_format == "sft" and raw:
            self.env.close()
            raise ValueError(f"--format sft needs a text interface with JSON actions; "
                             f"{interface!r} takes raw text (use --format chat)")

    def play(self, s: int) -> tuple[dict, list[dict]]:
        env, lv = self.env, self.level
        obs, info = env.reset(seed=s)
        scen = info.get("scenario") or {}
        key = job_key(self.env_id, lv, s)
        conv = Conversation(self.system, self.history)
        query = {"key": key, "env": self.env_id, "level": lv, "seed": s, "task": self.task,
                 "category": category({"scenario": scen}), "scenario": scen,
                 "observation": obs, "messages": conv.messages(obs)}
        steps: list[dict] = []
        if not self.demos:
            return query, steps
        expert = self.expert_cls()
        expert.reset()
        t = 0
        episode = {"env_id": self.env_id, "level": lv, "seed": s, "first_observation": obs,
                   "steps": []}
        while True:
            action = expert.act(obs, info)
            reply = action if isinstance(action, str) else json.dumps(jsonable(action))
            msgs = conv.messages(obs) + [{"role": "assistant", "content": reply}]
            nobs, reward, term, trunc, info = env.step(action)
            steps.append({"key": key, "env": self.env_id, "level": lv, "seed": s, "step": t,
                          "task": self.task, "messages": msgs, "prompt": obs,
                          "command": reply, "output": nobs, "reward": float(reward),
                          "done": bool(term or trunc), "solved": bool(info["correct"])})
            conv.add(obs, reply)
            if self.demo_format == "sft":
                episode["steps"].append({"action": json.loads(reply), "observation": nobs})
            obs = nobs
            t += 1
            if term or trunc:
                if self.demo_format == "sft":
                    steps = self.conversation(episode, info)
                return query, steps

    def conversation(self, episode: dict, info: dict) -> list[dict]:
        """The episode as one tool-calling demonstration (none if unsolved)."""
        from netarena_gym.train.data import demo_record
        if not info["correct"]:
            return []
        return [demo_record({**episode, "correct": True, "safe": bool(info["safe"])})]

    def close(self) -> None:
        self.env.close()


def _lines(rows: list[dict]) -> list[str]:
    return [json.dumps(r) + "\n" for r in rows]


def generate(env_id: str, *, levels=(1,), episodes: int = 100, seed: int = 0, out: str,
             backend: str = "sim", interface: str = "text", max_steps: int | None = None,
             env_options: dict | None = None,
             demos: bool = True, prompt: str = "zeroshot", history: int = 6,
             demo_format: str = "chat", hf: bool = True, sample: int = SAMPLE,
             confirm: Callable[[int], bool] | None = None,
             progress: bool | None = None) -> dict:
    if episodes < 1:
        raise ValueError("episodes must be >= 1")
    if demo_format not in DEMO_FORMATS:
        raise ValueError(f"demo_format must be one of {DEMO_FORMATS}, got {demo_format!r}")
    if demos and demo_format == "sft":
        require("transformers", "llm")  # the tool schemas (transformers' get_json_schema)
    datasets = None
    if hf:
        try:
            datasets = require("datasets", "report")
        except DependencyNotInstalled as e:
            raise DependencyNotInstalled(f"the Hugging Face copy needs datasets: {e}; or "
                                         "pass --no-hf for JSONL only") from None
    lvs = list(dict.fromkeys(parse_level(x) for x in levels))  # each level once
    out_dir(out, create=False)  # fail before any episode is played
    stale = [p for p, written in ((Path(out) / "demos.jsonl", demos),
                                  (Path(out) / "hf", datasets is not None))
             if not written and p.exists()]
    if stale:  # they would sit beside this run's queries as if they were its own
        raise ValueError(f"{', '.join(map(str, stale))} from an earlier run would stay beside "
                         "this run's queries, which it does not write; remove it or use "
                         "another --out")
    made: dict = {}
    try:
        for lv in lvs:
            made[lv] = _Level(env_id, lv, backend=backend, interface=interface,
                              max_steps=max_steps, env_options=env_options, demos=demos,
                              prompt=prompt, history=history, demo_format=demo_format)
        k = max(1, min(sample, episodes))
        sampled = {lv: [made[lv].play(seed + i) for i in range(k)] for lv in lvs}
        estimate = 0.0
        for lv, eps in sampled.items():
            size = sum(len(line.encode()) for q, st in eps for line in _lines([q] + st))
            estimate += size / len(eps) * episodes
        estimate = int(estimate * (2 if datasets is not None else 1))
        if confirm is not None and not confirm(estimate):
            raise GenerateRefused(f"estimated output {estimate / 1e6:.0f} MB")
        outdir = out_dir(out)
        qpath, dpath = outdir / "queries.jsonl", outdir / "demos.jsonl"
        n_queries = n_steps = 0
        bar = Progress(episodes * len(lvs), stats=False, label=f"generate {env_id} ",
                       enabled=progress)
        with ExitStack() as stack:
            stack.enter_context(bar)
            fq = stack.enter_context(open(qpath, "w", encoding="utf-8"))
            fd = stack.enter_context(open(dpath, "w", encoding="utf-8")) if demos else None
            for lv in lvs:
                for i in range(episodes):
                    q, st = sampled[lv][i] if i < k else made[lv].play(seed + i)
                    fq.writelines(_lines([q]))
                    if fd is not None:
                        fd.writelines(_lines(st))
                    n_queries += 1
                    n_steps += len(st)
                    bar.update()
    finally:
        for m in made.values():
            m.close()
    res = {"queries": str(qpath), "query_count": n_queries, "estimated_bytes": estimate}
    if demos:
        res["demos"] = str(dpath)
        res["demo_format"] = demo_format
        res["demo_conversations" if demo_format == "sft" else "demo_steps"] = n_steps
    if datasets is not None:
        res["hf"] = _write_hf(datasets, outdir, qpath, dpath if demos and n_steps else None)
    written = [qpath] + ([dpath] if demos else [])
    if datasets is not None:
        written += [f for f in (outdir / "hf").rglob("*") if f.is_file()]
    res["bytes"] = sum(f.stat().st_size for f in written)  # this run's files only
    return res


def _read(path: Path, flat: Callable[[dict], dict]):
    with open(path, encoding="utf-8") as f:
        for line in f:
            yield flat(json.loads(line))


def _write_hf(datasets, outdir: Path, qpath: Path, dpath: Path | None) -> str:
    datasets.disable_progress_bars()
    with tempfile.TemporaryDirectory(prefix="netarena-hf-") as cache:
        splits = {"queries": datasets.Dataset.from_generator(
            _read, gen_kwargs={"path": qpath, "flat": _flat}, cache_dir=cache)}
        if dpath is not None:
            splits["demos"] = datasets.Dataset.from_generator(
                _read, gen_kwargs={"path": dpath, "flat": _flat_step}, cache_dir=cache)
        datasets.DatasetDict(splits).save_to_disk(str(outdir / "hf"))
    return str(outdir / "hf")


def _flat(q: dict) -> dict:
    d = dict(q)
    d["scenario"] = json.dumps(q["scenario"], sort_keys=True)
    d["level"] = str(q["level"])
    return d


def _flat_step(st: dict) -> dict:
    return {**st, "level": str(st["level"])}
