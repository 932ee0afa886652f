"""``netarena-gym report``: compare runs side by side.

Writes into the output directory:

* ``categories.png``: correctness and safety per group of each level, one bar per run,
  Wilson 95% intervals as error bars; the groups are those of ``eval``'s table
  (``--by category|type|level``, :mod:`netarena_gym.eval.groups`: the set of fault types
  or the query template, the same naming in every task, small groups folded into
  ``other (n<5)``);
* ``spider_level_<L>.png``: radar charts per level (axes: the level's groups, or the
  metrics when a level has fewer than three);
* ``scatter.png``: correctness against safety per run (and per level), with error bars;
* ``overlap.png``: the share of run pairs whose 95% intervals overlap, against the number of
  episodes subsampled (N = 50 ... all), for correctness and safety;
* ``report.html``: one self-contained page (tables and the figures embedded as base64);
* ``report.json``: the numbers behind all of it.

matplotlib is needed for the figures only (``pip install "netarena-gym[report]"``);
``--no-figures`` writes the tables without it.
"""
from __future__ import annotations

import base64
import html
import json
import math
from pathlib import Path

from netarena_gym.errors import DependencyNotInstalled, require
from netarena_gym.eval.groups import ALL, other_label, table
from netarena_gym.eval.overlap import overlap_curve
from netarena_gym.eval.validate import out_dir
from netarena_gym.eval.store import load_run
from netarena_gym.agents.summary import dedupe, summarize

MAX_CATEGORIES = 25
MAX_SPIDER_AXES = 12


def _import_pyplot():
    try:
        matplotlib = require("matplotlib", "report")
    except DependencyNotInstalled as e:
        raise DependencyNotInstalled(f"the report's figures need matplotlib: {e}; "
                                     "or pass --no-figures for the tables alone") from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


# -------------------------------------------------------------------- data
def _label(summary: dict, path: Path) -> str:
    agent = summary.get("agent") or "?"
    model = summary.get("model")
    name = f"{agent}:{model}" if model else agent
    if summary.get("prompt") and agent == "llm":
        name += f"/{summary['prompt']}"
    return f"{name} ({path.name})"


def load_runs(paths, labels=None, by: str = "category") -> list[dict]:
    """The runs to compare; ``labels`` name the first runs in order (the rest keep their
    default names); more labels than runs is a ValueError."""
    paths = list(paths)
    if labels and len(labels) > len(paths):
        raise ValueError(f"argument --label: {len(labels)} labels for {len(paths)} "
                         f"run{'s' if len(paths) != 1 else ''}; give at most one per run")
    runs = []
    for i, p in enumerate(paths):
        path = Path(p)
        if not path.exists():
            raise ValueError(f"no such run: {path}")
        summary, records = load_run(path)
        if not records:
            raise ValueError(f"{path} holds no episode records")
        recs = dedupe(records)
        meta = {k: summary.get(k) for k in ("env", "level", "levels", "backend", "interface",
                                             "agent", "seed", "model", "prompt")}
        if meta["env"] is None:
            meta["env"] = recs[0]["env"]
            meta["agent"] = recs[0].get("agent")
        s = summarize(recs, meta=meta)
        label = labels[i] if labels and i < len(labels) else _label(s, path)
        runs.append({"label": label, "path": str(path), "summary": s, "records": recs,
                     "tables": table(recs, by), "by": by})
    seen: dict[str, int] = {}
    for r in runs:  # unique labels
        n = seen.get(r["label"], 0)
        seen[r["label"]] = n + 1
        if n:
            r["label"] = f"{r['label']} #{n + 1}"
    return runs


def overlap_analysis(runs: list[dict], subsamples: int = 200) -> dict:
    """Per env (only runs on the same env are compared) and metric."""
    out = {}
    envs = sorted({r["summary"]["env"] for r in runs})
    for env in envs:
        group = [r for r in runs if r["summary"]["env"] == env]
        if len(group) < 2:
            continue
        out[env] = {}
        for metric in ("correct", "safe"):
            data = {r["label"]: {rec["key"]: bool(rec[metric]) for rec in r["records"]}
                    for r in group}
            out[env][metric] = overlap_curve(data, subsamples=subsamples)
    return out


# ----------------------------------------------------------------- figures
def _save(plt, fig, path: Path, dpi: int = 110) -> Path:
    fig.tight_layout()
    fig.savefig(path, dpi=dpi)
    plt.close(fig)
    return path


def _axes(ax, title: str, xlabel: str, ylabel: str, legend_size: int = 8) -> None:
    ax.set_title(title)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.legend(fontsize=legend_size)


def _err(b: dict, key: str) -> tuple[float, float]:
    lo, hi = b[f"{key}_ci95"]
    v = b[key]
    return max(0.0, v - lo), max(0.0, hi - v)


def _lvname(lv: str) -> str:
    return f"L{lv}" if lv.lstrip("-").isdigit() else lv


def groups(run: dict) -> dict[str, dict]:
    """The run's table rows as ``{"L1 remove_ip": block}`` in level order (``--by
    level``: one row per level; otherwise the levels' ``(all)`` rows are left out)."""
    out = {}
    for lv, rows in run["tables"].items():
        for g, b in rows.items():
            if run["by"] == "level":
                out[_lvname(lv)] = b
            elif g != ALL:
                out[f"{_lvname(lv)} {g}"] = b
    return out


def _categories(runs) -> list[str]:
    order: dict[str, int] = {}
    for r in runs:
        for k in groups(r):
            order.setdefault(k, len(order))
    return sorted(order, key=order.get)[:MAX_CATEGORIES]


def fig_categories(plt, runs, path: Path) -> Path:
    cats = _categories(runs)
    n = len(runs)
    h = max(3.0, 0.28 * len(cats) * max(1, n) + 1.5)
    fig, axes = plt.subplots(1, 2, figsize=(13, h), sharey=True)
    width = 0.8 / n
    for ax, key, title in ((axes[0], "correctness", "Correctness"),
                           (axes[1], "safety", "Safety (per pair)")):
        for i, r in enumerate(runs):
            ys, vals, lo, hi = [], [], [], []
            rows = groups(r)
            for j, c in enumerate(cats):
                b = rows.get(c)
                if not b:
                    continue
                e = _err(b, key)
                ys.append(j + (i - (n - 1) / 2) * width)
                vals.append(100 * b[key])
                lo.append(100 * e[0])
                hi.append(100 * e[1])
            ax.barh(ys, vals, height=width, xerr=[lo, hi], capsize=2, label=r["label"])
        ax.set_yticks(range(len(cats)))
        ax.set_yticklabels([c if len(c) <= 48 else c[:45] + "..." for c in cats], fontsize=7)
        ax.set_xlim(0, 105)
        ax.set_xlabel("% of episodes (95% Wilson interval)")
        ax.set_title(title)
        ax.grid(axis="x", alpha=0.3)
    axes[0].invert_yaxis()  # once: the axes share y, a second flip would undo it
    axes[1].legend(fontsize=8, loc="lower right")
    return _save(plt, fig, path)


def _levels(runs) -> list[str]:
    levels: list[str] = []
    for r in runs:
        levels.extend(lv for lv in r["summary"]["by_level"] if lv not in levels)
    return levels


def fig_spiders(plt, runs, out: Path) -> list[Path]:
    paths = []
    for lv in _levels(runs):
        cats: dict[str, int] = {}
        for r in runs:
            for k, b in r["tables"].get(lv, {}).items():
                if k not in (ALL, other_label()):
                    cats[k] = cats.get(k, 0) + b["episodes"]
        axes_names = sorted(cats, key=lambda k: (-cats[k], k))[:MAX_SPIDER_AXES]
        by_metric = len(axes_names) < 3
        if by_metric:
            axes_names = ["correctness", "safety", "safety_compat", "speed"]
        fig, axs = plt.subplots(1, 2, figsize=(12, 5.5), subplot_kw={"projection": "polar"})
        angles = [2 * math.pi * i / len(axes_names) for i in range(len(axes_names))]
        for ax, key, title in ((axs[0], "correctness", "Correctness"),
                               (axs[1], "safety", "Safety")):
            for r in runs:
                blk = r["summary"]["by_level"].get(lv)
                if not blk:
                    continue
                if by_metric:
                    speed = 1.0 - blk["mean_steps"] / max(1.0, _max_steps(r, lv))
                    vals = [blk["correctness"], blk["safety"], blk["safety_compat"], speed]
                else:
                    rows = r["tables"].get(lv, {})
                    vals = [rows.get(c, {}).get(key, 0.0) for c in axes_names]
                ax.plot(angles + angles[:1], [100 * v for v in vals + vals[:1]],
                        label=r["label"])
                ax.fill(angles + angles[:1], [100 * v for v in vals + vals[:1]], alpha=0.1)
            ax.set_xticks(angles)
            ax.set_xticklabels([a if len(a) <= 22 else a[:20] + ".." for a in axes_names],
                               fontsize=7)
            ax.set_ylim(0, 100)
            ax.set_title(f"level {lv}: {title if not by_metric else 'metrics'}", fontsize=10)
        axs[1].legend(fontsize=7, loc="lower left", bbox_to_anchor=(0.8, -0.15))
        paths.append(_save(plt, fig, out / f"spider_level_{lv}.png", dpi=100))
    return paths


def _max_steps(run, lv) -> float:
    ms = [rec.get("max_steps") or 0 for rec in run["records"] if str(rec.get("level")) == lv]
    return float(max(ms)) if ms else 1.0


def fig_scatter(plt, runs, path: Path) -> Path:
    fig, ax = plt.subplots(figsize=(7, 6))
    markers = "osD^v<>ph*"
    for i, r in enumerate(runs):
        s = r["summary"]
        ex, ey = _err(s, "correctness"), _err(s, "safety")
        line = ax.errorbar([100 * s["correctness"]], [100 * s["safety"]],
                           xerr=[[100 * ex[0]], [100 * ex[1]]],
                           yerr=[[100 * ey[0]], [100 * ey[1]]], fmt=markers[i % len(markers)],
                           capsize=4, markersize=9, label=r["label"])
        color = line[0].get_color()
        if len(s["by_level"]) > 1:
            for lv, b in s["by_level"].items():
                ax.scatter([100 * b["correctness"]], [100 * b["safety"]], color=color,
                           s=18, alpha=0.6)
                ax.annotate(f"L{lv}", (100 * b["correctness"], 100 * b["safety"]),
                            fontsize=7, color=color, xytext=(3, 3), textcoords="offset points")
    ax.set_xlim(-3, 103)
    ax.set_ylim(-3, 103)
    ax.grid(alpha=0.3)
    _axes(ax, "Correctness vs safety (small dots: per level)",
          "correctness % (95% Wilson interval)", "safety % (95% Wilson interval)")
    return _save(plt, fig, path)


def fig_overlap(plt, analysis: dict, path: Path) -> Path | None:
    if not analysis:
        return None
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for env, by_metric in analysis.items():
        for metric, cur in by_metric.items():
            if cur["n"]:
                ax.plot(cur["n"], [100 * v for v in cur["share"]], marker="o",
                        label=f"{env} {metric} ({cur['pairs']} pairs)")
    ax.set_xscale("log")
    ax.set_ylim(-3, 103)
    ax.grid(alpha=0.3, which="both")
    _axes(ax, "Interval overlap vs sample size", "episodes per run (subsampled)",
          "% of run pairs whose 95% intervals overlap")
    return _save(plt, fig, path)


# -------------------------------------------------------------------- HTML
def _ci(b: dict, key: str) -> str:
    lo, hi = b[f"{key}_ci95"]
    return f"{100 * b[key]:.1f}% <small>[{100 * lo:.1f}, {100 * hi:.1f}]</small>"


def _mean_ci(ci) -> str:
    """A mean's interval, or nothing where there is none (a single episode)."""
    lo, hi = ci
    return "" if lo is None or hi is None else f" <small>[{lo:.2f}, {hi:.2f}]</small>"


def _table(head: list[str], rows: list[list[str]]) -> str:
    h = "".join(f"<th>{html.escape(x)}</th>" for x in head)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table><thead><tr>{h}</tr></thead><tbody>{body}</tbody></table>"


def _overview(runs) -> str:
    rows = []
    metrics = [
        ("episodes", lambda s: str(s["episodes"])),
        ("correctness", lambda s: _ci(s, "correctness")),
        ("safety (per pair)", lambda s: _ci(s, "safety")),
        ("safety (upstream rule)", lambda s: _ci(s, "safety_compat")),
        ("mean steps", lambda s: f"{s['mean_steps']:.2f}" + _mean_ci(s["steps_ci95"])),
        ("mean agent seconds / episode", lambda s: f"{s['mean_agent_seconds']:.4f}"),
        ("mean reward", lambda s: f"{s['mean_reward']:.3f}"),
        ("upstream avg_iterations", lambda s: f"{s['upstream']['avg_iterations']:.2f}"),
        ("upstream score (0.5 C + 0.5 S)", lambda s: f"{s['upstream']['score']:.1f}"),
        ("invalid actions", lambda s: str(s["invalid_actions"])),
        ("episodes with errors", lambda s: str(s["episodes_with_errors"])),
        ("LLM calls / mean latency", lambda s: (f"{s['llm']['calls']} / {s['llm']['mean_latency_s']:.3f}s"
                                                if "llm" in s else "-")),
        ("LLM tokens (prompt + completion)", lambda s: (f"{s['llm']['prompt_tokens']} + "
                                                        f"{s['llm']['completion_tokens']}"
                                                        if "llm" in s else "-")),
        ("unparsed replies", lambda s: str(s["llm"]["unparsed_replies"]) if "llm" in s else "-"),
    ]
    for name, f in metrics:
        rows.append([html.escape(name)] + [f(r["summary"]) for r in runs])
    return _table(["metric"] + [r["label"] for r in runs], rows)


def _runs_table(runs) -> str:
    rows = []
    for r in runs:
        s = r["summary"]
        rows.append([html.escape(r["label"]), html.escape(str(s.get("env"))),
                     html.escape(str(s.get("agent"))), html.escape(str(s.get("model") or "")),
                     html.escape(str(s.get("prompt") or "")),
                     html.escape(str(s.get("levels") or s.get("level"))),
                     html.escape(str(s.get("backend"))), html.escape(r["path"])])
    return _table(["run", "env", "agent", "model", "prompt", "levels", "backend", "path"], rows)


def _levels_table(runs) -> str:
    rows = []
    for lv in _levels(runs):
        row = [html.escape(str(lv))]
        for r in runs:
            b = r["summary"]["by_level"].get(lv)
            row.append(f"{_ci(b, 'correctness')}<br>{_ci(b, 'safety')}<br>"
                       f"<small>n={b['episodes']}, steps {b['mean_steps']:.2f}</small>"
                       if b else "-")
        rows.append(row)
    return _table(["level (correctness / safety)"] + [r["label"] for r in runs], rows)


def _category_table(runs) -> str:
    rows = []
    by = runs[0]["by"] if runs else "category"
    for c in _categories(runs):
        row = [html.escape(c)]
        for r in runs:
            b = groups(r).get(c)
            row.append(f"{_ci(b, 'correctness')}<br>{_ci(b, 'safety')}<br>"
                       f"<small>n={b['episodes']}</small>" if b else "-")
        rows.append(row)
    return _table([f"level and {by} (correctness / safety)"] + [r["label"] for r in runs],
                  rows)


def _overlap_table(analysis) -> str:
    if not analysis:
        return "<p>Overlap analysis needs two runs or more on the same env.</p>"
    parts = []
    for env, by_metric in analysis.items():
        for metric, cur in by_metric.items():
            rows = [[str(n), f"{100 * s:.1f}%"] for n, s in zip(cur["n"], cur["share"], strict=True)]
            parts.append(f"<h4>{html.escape(env)}: {metric} ({cur['pairs']} pairs, "
                         f"{'same episodes' if cur['paired'] else 'independent episodes'})</h4>"
                         + _table(["N episodes", "pairs overlapping"], rows))
    return "".join(parts)


_CSS = """body{font-family:system-ui,sans-serif;margin:24px;color:#222}
table{border-collapse:collapse;margin:8px 0 20px}td,th{border:1px solid #ccc;padding:4px 8px;
font-size:13px;vertical-align:top}th{background:#f3f3f3}small{color:#666}
img{max-width:100%;border:1px solid #eee;margin:8px 0}"""


def write_html(runs, analysis, figures: list[Path], path: Path) -> Path:
    imgs = []
    for f in figures:
        data = base64.b64encode(f.read_bytes()).decode()
        imgs.append(f'<h3>{html.escape(f.stem)}</h3><img alt="{html.escape(f.stem)}" '
                    f'src="data:image/png;base64,{data}">')
    doc = f"""<!doctype html><html><head><meta charset="utf-8">
<title>netarena-gym report</title><style>{_CSS}</style></head><body>
<h1>netarena-gym report</h1>
<p>Intervals are Wilson 95% score intervals (steps: normal approximation). Safety per pair:
no step broke a pair that worked before it; the upstream rule: the aggregate loss never rose.</p>
<h2>Runs</h2>{_runs_table(runs)}
<h2>Overview</h2>{_overview(runs)}
<h2>By level</h2>{_levels_table(runs)}
<h2>By {html.escape(runs[0]["by"] if runs else "category")}</h2>{_category_table(runs)}
<h2>Interval overlap vs sample size</h2>{_overlap_table(analysis)}
<h2>Figures</h2>{''.join(imgs) if imgs else '<p>(no figures)</p>'}
</body></html>"""
    path.write_text(doc, encoding="utf-8")
    return path


def build_report(paths, out, *, labels=None, figures: bool = True,
                 subsamples: int = 200, by: str = "category") -> dict:
    plt = _import_pyplot() if figures else None  # fail before any work when missing
    runs = load_runs(paths, labels, by=by)
    out = out_dir(out)
    analysis = overlap_analysis(runs, subsamples=subsamples)
    figs: list[Path] = []
    if plt is not None:
        figs.append(fig_categories(plt, runs, out / "categories.png"))
        figs.extend(fig_spiders(plt, runs, out))
        figs.append(fig_scatter(plt, runs, out / "scatter.png"))
        f = fig_overlap(plt, analysis, out / "overlap.png")
        if f:
            figs.append(f)
    page = write_html(runs, analysis, figs, out / "report.html")
    data = {"by": by, "runs": [{"label": r["label"], "path": r["path"], "summary": r["summary"],
                                "tables": r["tables"]} for r in runs], "overlap": analysis}
    (out / "report.json").write_text(json.dumps(data, indent=1))
    return {"html": str(page), "figures": [str(f) for f in figs], "json": str(out / "report.json")}
