"""The one summariser of episode records: correctness, safety and latency with 95%
intervals, overall, per level and per category, plus the figures upstream's leaderboard
reports. Eval runs, tests, benchmarks and the trainers' evaluations all use it.

Records are :class:`~netarena_gym.agents.episode.EpisodeRecord` objects or their dicts (the
lines of ``episodes.jsonl``); records without a ``key`` are all kept, records with one are
de-duplicated (the last one wins, as when a run resumes).

Proportions (correctness, per-pair safety, upstream's safety) get Wilson score intervals;
means (steps, agent seconds) get normal-approximation intervals, clipped at 0 (``None``
ends for a single episode, which has no interval). ``by_category`` groups by
:func:`category`, as ``eval``'s tables and ``report`` do. ``upstream`` holds what
NetArena's AgentBeats evaluator publishes: ``avg_correctness``, ``avg_safety`` (its rule:
aggregate loss never rises), ``avg_iterations`` (its count, :func:`upstream_iterations`:
route's commands + 1 on success and budget + 1 on failure, K8s's commands and budget) and the leaderboard score ``0.5 * correctness% + 0.5 * safety%``.
"""
from __future__ import annotations

import math
from typing import Any, Iterable

from netarena_gym.core.stats import wilson_interval
from netarena_gym.llm.client import token_count

Z95 = 1.959964


def mean_interval(xs: list[float], z: float = Z95, *,
                  low: float | None = None) -> tuple[float, float | None, float | None]:
    """``(mean, low, high)``: the normal-approximation interval of a mean, its ends
    clipped at ``low`` (0 for a quantity that cannot be negative: steps, seconds). One
    value has no interval: ``(x, None, None)`` (a zero-width one would claim certainty);
    no values give ``(0.0, None, None)``."""
    n = len(xs)
    if n == 0:
        return 0.0, None, None
    m = sum(xs) / n
    if n == 1:
        return m, None, None
    var = sum((x - m) ** 2 for x in xs) / (n - 1)
    half = z * math.sqrt(var / n)
    lo, hi = m - half, m + half
    if low is not None:
        lo, hi = max(low, lo), max(low, hi)
    return m, lo, hi


def as_dict(rec: Any) -> dict:
    return rec if isinstance(rec, dict) else rec.to_dict()


def upstream_iterations(rec: Any) -> int:
    """The ``iterations`` upstream reports for an episode. Route measures before each
    command: ``k + 1`` on success after ``k`` commands, the budget + 1 on failure. K8s
    checks after each command: the commands on success, the budget on failure."""
    rec = as_dict(rec)
    budget = int(rec.get("max_steps") or rec.get("steps", 0))
    steps = int(rec["steps"])
    task = rec.get("task") or ("k8s" if "K8s" in str(rec.get("env") or "") else "")
    if task == "k8s":
        return steps if rec.get("correct") else budget
    return steps + 1 if rec.get("correct") else budget + 1


def _rate(name: str, k: int, n: int) -> dict:
    return {name: k / n if n else 0.0, f"{name}_ci95": list(wilson_interval(k, n))}


def block(recs: list[dict]) -> dict:
    n = len(recs)
    c = sum(bool(r["correct"]) for r in recs)
    s = sum(bool(r["safe"]) for r in recs)
    sc = sum(bool(r["safe_compat"]) for r in recs)
    steps = mean_interval([float(r["steps"]) for r in recs], low=0.0)
    secs = mean_interval([float(r["agent_seconds"]) for r in recs], low=0.0)
    llm_calls = [len([t for t in r.get("trajectory", ()) if t.get("llm")]) for r in recs]
    out = {
        "episodes": n, **_rate("correctness", c, n), **_rate("safety", s, n),
        **_rate("safety_compat", sc, n),
        "mean_steps": steps[0],
        "steps_ci95": [steps[1], steps[2]],
        "mean_agent_seconds": secs[0],
        "agent_seconds_ci95": [secs[1], secs[2]],
        "mean_env_seconds": (sum(float(r.get("env_seconds", 0.0)) for r in recs) / n) if n else 0.0,
        "mean_reward": (sum(float(r.get("total_reward", 0.0)) for r in recs) / n) if n else 0.0,
        "episodes_with_errors": sum(1 for r in recs if r.get("errors")),
        "invalid_actions": sum(int((r.get("metrics") or {}).get("invalid", 0)) for r in recs),
        "upstream": {
            "avg_correctness": c / n if n else 0.0,
            "avg_safety": sc / n if n else 0.0,
            "avg_iterations": (sum(upstream_iterations(r) for r in recs) / n) if n else 0.0,
            "score": 50.0 * (c + sc) / n if n else 0.0,
        },
    }
    if any(llm_calls):
        toks = [t["llm"] for r in recs for t in r.get("trajectory", ()) if t.get("llm")]
        out["llm"] = {
            "calls": len(toks),
            "mean_latency_s": sum(float(t.get("latency_s") or 0.0) for t in toks) / len(toks),
            "prompt_tokens": sum(token_count(t.get("prompt_tokens")) or 0 for t in toks),
            "completion_tokens": sum(token_count(t.get("completion_tokens")) or 0
                                     for t in toks),
            # a failed call has no reply to parse: it counts in failed_calls only
            "unparsed_replies": sum(1 for t in toks
                                    if not t.get("parsed", True) and not t.get("error")),
            "failed_calls": sum(1 for t in toks if t.get("error")),
        }
    return out


def fault_types(rec: dict) -> list[str]:
    """The episode's fault types (capacity planning: ``[template]``), sorted; ``[]`` when
    the record has no scenario (an episode whose reset failed, or that timed out)."""
    rec = as_dict(rec)
    scen = rec.get("scenario") or {}
    meta = scen.get("meta") or {}
    if meta.get("template"):
        return [str(meta["template"])]
    types = [str(f["type"]) for f in scen.get("faults") or ()
             if isinstance(f, dict) and f.get("type")]
    if not types and meta.get("category"):  # records without fault details
        types = str(meta["category"]).split("+")
    if not types and not scen and rec.get("category"):  # hand-made records: no scenario
        types = str(rec["category"]).split("+")
    return sorted(types)


def category(rec: dict) -> str:
    """The episode's category, named alike in every task: routing and K8s, the multiset of
    its fault types, sorted and joined with ``+`` (whichever was injected first);
    capacity planning, its query template; ``none`` without faults. ``eval``'s tables,
    ``report`` and the summary's ``by_category`` all group by it."""
    return "+".join(fault_types(rec)) or "none"


def _by(recs: Iterable[dict], field: str) -> dict[str, list[dict]]:
    groups: dict[str, list[dict]] = {}
    for r in recs:
        g = category(r) if field == "category" else str(r.get(field))
        groups.setdefault(g, []).append(r)
    return dict(sorted(groups.items()))


def dedupe(records: Iterable[Any]) -> list[dict]:
    """One record per key (the last one wins), in key order; keyless records follow in
    their own order."""
    by_key: dict[str, dict] = {}
    keyless: list[dict] = []
    for r in map(as_dict, records):
        if r.get("key") is None:
            keyless.append(r)
        else:
            by_key[r["key"]] = r
    return [by_key[k] for k in sorted(by_key, key=_key_order)] + keyless


def _key_order(k: str):
    env, level, seed = k.rsplit("|", 2)
    return env, (0, int(level), "") if level.lstrip("-").isdigit() else (1, 0, level), int(seed)


def summarize(records: Iterable[Any], *, meta: dict | None = None) -> dict:
    """The summary of a run. ``meta`` (env, agent, ...) goes in front; the first CLI's keys
    (``env``, ``level``, ``episodes``, ``correctness``, ``safety``, ``safety_compat``,
    ``mean_steps``, ``mean_agent_seconds``, ``by_category``) keep their meaning."""
    recs = dedupe(records)
    out = dict(meta or {})
    out.update(block(recs))
    out["by_category"] = {k: block(v) for k, v in _by(recs, "category").items()}
    levels = _by(recs, "level")
    out["by_level"] = {lv: {**block(v), "by_category": {k: block(w) for k, w in
                                                         _by(v, "category").items()}}
                       for lv, v in levels.items()}
    envs = _by(recs, "env")
    if len(envs) > 1:
        out["by_env"] = {k: block(v) for k, v in envs.items()}
    return out
