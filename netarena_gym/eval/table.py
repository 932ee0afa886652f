"""The text table ``netarena-gym eval`` prints: the run's header (env, levels, agent,
episodes per level and in total), the overall rates with Wilson 95% intervals, upstream's
figures, and one row per group of each level (:mod:`netarena_gym.eval.groups`, ``--by``).
"""
from __future__ import annotations


def _pct(x: float) -> str:
    return f"{100 * x:6.2f}%"


def episodes_text(s: dict) -> str:
    """``episodes=50 per level, 200 total`` (one level: ``episodes=50``)."""
    levels = s.get("levels") or [s.get("level")]
    total = s["episodes"]
    if len(levels) < 2:
        return f"episodes={total}"
    per = s.get("episodes_per_level")
    counts = {b["episodes"] for b in s.get("by_level", {}).values()}
    if per is None or counts != {per}:  # a resumed run may hold uneven levels
        per = "/".join(str(s["by_level"][k]["episodes"]) for k in s["by_level"])
    return f"episodes={per} per level, {total} total"


def format_table(s: dict, by: str = "category") -> str:
    """The summary as ``netarena-gym eval --format table`` prints it."""
    lines = []
    out = lines.append

    out(f"{s['env']}  level={s['level']}  backend={s['backend']}  agent={s['agent']}  "
        f"{episodes_text(s)}")
    for name, key in (("correctness", "correctness"), ("safety", "safety"),
                      ("safety_compat", "safety_compat")):
        lo, hi = s[f"{key}_ci95"]
        out(f"{name:13s} {_pct(s[key])}  [{_pct(lo)}, {_pct(hi)}]")
    out(f"mean steps    {s['mean_steps']:.2f}   mean agent s {s['mean_agent_seconds']:.5f}")
    up = s["upstream"]
    out(f"upstream      correctness {_pct(up['avg_correctness'])}  safety "
        f"{_pct(up['avg_safety'])}  iterations {up['avg_iterations']:.2f}  "
        f"score {up['score']:.2f}")
    if "llm" in s:
        m = s["llm"]
        out(f"llm           calls {m['calls']}  mean latency {m['mean_latency_s']:.3f}s  "
            f"tokens {m['prompt_tokens']}+{m['completion_tokens']}  "
            f"unparsed {m['unparsed_replies']}  failed {m['failed_calls']}")
    if s.get("episodes_with_errors"):
        out(f"episodes with errors: {s['episodes_with_errors']}")
    out("")
    rows = (s.get("tables") or {}).get(by)
    if rows is None:  # a summary written before the tables existed
        rows = {lv: {**b["by_category"], "(all)": b} for lv, b in s["by_level"].items()}
    w = max([8] + [len(k) for b in rows.values() for k in b])
    out(f"{'level':7s} {by:{w}s} {'n':>5s} {'correct':>8s} {'safe':>8s} {'steps':>6s}")
    for lv, b in rows.items():
        for k, c in b.items():
            out(f"{lv:7s} {k:{w}s} {c['episodes']:5d} {_pct(c['correctness'])} "
                f"{_pct(c['safety'])} {c['mean_steps']:6.2f}")
    return "\n".join(lines)


__all__ = ["episodes_text", "format_table"]
