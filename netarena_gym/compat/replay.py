"""``netarena-gym compat-replay FILE``: replay upstream NetArena's recorded runs through our
``level="compat"`` envs and report, check by check, where they agree.

The input is an upstream results file, in the shapes the behavioural specs describe
(``shared/spec/upstream-*.md``; no upstream code is used):

* the AgentBeats leaderboard JSON ``{"participants": ..., "results": [records..., summary]}``
  (the trailing summary ``{avg_correctness, ...}`` is skipped), a bare JSON list of records,
  or JSONL with one record per line (upstream MALT's ``eval_results.jsonl``);
* route records carry ``error_type``, ``error_detail``, ``success``, ``safe``,
  ``iterations`` and ``log_content`` (:mod:`replay_route`); K8s records ``error_detail``,
  ``iterations``, ``success``, ``safe`` and ``results[]`` of ``{llm_command, output,
  mismatch_summary}`` (:mod:`replay_k8s`); MALT records ``Query``, ``Label``, ``LLM code``,
  ``Result-Correctness`` and ``Result-Safety`` (:mod:`replay_malt`).

The task is recognised from the records' keys. Every case is replayed from its recorded
scenario; each task's reader yields :class:`Check` rows (initial state, the state after each
step, normalised outputs, whether a command ran, final verdicts), and this module runs the
loop, writes ``differences.jsonl`` (one line per case: its checks that disagree) and
``summary.json`` under ``--out``, and prints the agreement table. Exit status 0 when it ran
(differences or not), 2 for a file it cannot read, with a one-line message naming what is
wrong (never a traceback).
"""
from __future__ import annotations

import argparse
import importlib
import json
import re
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable

from netarena_gym.errors import DependencyNotInstalled
from netarena_gym.eval.progress import Progress
from netarena_gym.eval.validate import UsageError, number, out_dir
from netarena_gym.routing.topology import MAX_HOSTS_PER_SUBNET, MAX_SUBNETS_PER_ROUTER

HELP = "replay an upstream NetArena results file through compat mode and report agreement"
READERS = ("netarena_gym.compat.replay_route", "netarena_gym.compat.replay_k8s",
           "netarena_gym.compat.replay_malt")
SUMMARY_KEYS = frozenset({"avg_correctness", "avg_safety", "avg_iterations", "avg_latency_s"})


class BadFile(ValueError):
    """The file (or one record) is not an upstream results file: a one-line reason."""


@dataclass
class Check:
    """One comparison: ``agree`` is None when it could not be made (``note`` says why)."""
    check: str
    agree: bool | None
    ours: Any = None
    theirs: Any = None
    step: int | None = None
    note: str = ""

    def to_json(self) -> dict:
        d = asdict(self)
        return {k: v for k, v in d.items() if v is not None and v != ""}


@dataclass
class Case:
    """One upstream record, validated by its task's reader."""
    index: int
    task: str
    label: str
    data: dict = field(default_factory=dict)


@dataclass
class Options:
    config: str | None = None          # K8s: the upstream error-config file of the run
    num_switches: int | None = None    # route: topology when the record lacks it
    hosts_per_subnet: int | None = None


# ------------------------------------------------------------------ helpers
_PREFIX = re.compile(r"\bp\d{1,2}_(?=[a-z])")


def strip_prefix(text: str) -> str:
    """Upstream route names carry ``p{pid % 100}_`` (``p42_r0-eth1``); ours do not."""
    return _PREFIX.sub("", text)


def normalise_output(text: Any) -> str:
    """Output as compared: name prefixes gone, trailing spaces and blank lines dropped,
    runs of spaces collapsed (column alignment differs with name lengths)."""
    if not isinstance(text, str):
        return ""
    lines = [re.sub(r"[ \t]+", " ", strip_prefix(line)).strip() for line in text.splitlines()]
    return "\n".join(line for line in lines if line)


def output_of(observation: str) -> str:
    """The last command's output in one of our text observations (see ``core.env``)."""
    i = observation.rfind("\nOutput:\n")
    if i < 0:
        return ""
    body = observation[i + len("\nOutput:\n"):]
    j = body.rfind("\n\nSteps left:")
    body = body[:j] if j >= 0 else body
    return "" if body.strip() == "(no output)" else body


def reason(e: BaseException) -> str:
    """A data error as one line (a KeyError names the missing field)."""
    if isinstance(e, KeyError):
        return f"missing field {e}"
    return str(e).splitlines()[0] if str(e) else type(e).__name__


def step_env(env, action: dict) -> tuple[str, dict] | None:
    """One recorded command through one of our envs: ``(output, info)``, or None when our
    episode had already ended (it reached the goal, or its step limit, earlier)."""
    from netarena_gym.errors import ResetNeeded
    try:
        obs, _, _, _, info = env.step(action)
    except ResetNeeded:
        return None
    return output_of(obs), info


def command_ran(info: dict, output: str) -> bool:
    """Whether our env ran a replayed command in upstream's sense: upstream skips only a
    blacklisted command, an unknown machine or an empty command, and runs everything else,
    logging the program's output even when the program refuses it (a usage error, a bad
    prefix, an invalid patch). Ours: kind ``refused``, or an ``invalid`` action answered by
    the env itself (``netarena: unknown machine``, an empty command), did not run; an
    ``invalid`` kind with the program's own complaint did."""
    kind = info.get("command_kind")
    if kind == "refused":
        return False
    return not (kind == "invalid" and output.lstrip().startswith("netarena:"))


def verdict(check: str, ours: bool, theirs: bool, rule: bool) -> Check:
    """A final verdict: ``ours`` is our compat env's own scoring (``info["correct"]``,
    ``info["safe_compat"]``), which is what compat mode reports and must reproduce;
    ``rule`` is upstream's rule recomputed by the replay on our states, named in the note
    where the env's scoring departs from it."""
    note = "" if rule == ours else f"upstream's rule on our states gives {rule}"
    return Check(check, ours == theirs, ours, theirs, note=note)


def need(rec: dict, key: str, types, where: str):
    """``rec[key]``, checked to be of ``types`` (BadFile naming the record and key)."""
    if key not in rec:
        raise BadFile(f"{where}: missing {key!r}")
    v = rec[key]
    if not isinstance(v, types) or (isinstance(v, bool) and bool not in _tuple(types)):
        names = "/".join(t.__name__ for t in _tuple(types))
        raise BadFile(f"{where}: {key!r} must be {names}, got {type(v).__name__}")
    return v


def _tuple(t) -> tuple:
    return t if isinstance(t, tuple) else (t,)


# ------------------------------------------------------------------ reading
def load_records(path: str | Path) -> list[dict]:
    """The records of an upstream results file (see module doc), summaries left out."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise BadFile(f"{p}: no such file") from None
    except (OSError, UnicodeDecodeError) as e:
        raise BadFile(f"{p}: cannot read it ({e.__class__.__name__})") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        data = _jsonl(text, p, e)
    if isinstance(data, dict) and "results" not in data and _is_record(data):
        data = [data]  # one record: a one-query JSONL file, or a record saved alone
    if isinstance(data, dict):
        if "results" not in data:
            raise BadFile(f"{p}: a JSON object without 'results' (expected the leaderboard "
                          "shape {\"participants\": ..., \"results\": [...]})")
        data = data["results"]
    if not isinstance(data, list):
        raise BadFile(f"{p}: 'results' must be a list of records")
    records = []
    for i, r in enumerate(data):
        if not isinstance(r, dict):
            raise BadFile(f"{p}: results[{i}] is a {type(r).__name__}, not a record object")
        if set(r) <= SUMMARY_KEYS | {"agent_info"}:
            continue  # the run's summary
        records.append(r)
    if not records:
        raise BadFile(f"{p}: no records in it")
    return records


def _is_record(r: dict) -> bool:
    """Whether ``r`` is a record of some task reader."""
    return any(importlib.import_module(m).matches(r) for m in READERS)


def _jsonl(text: str, p: Path, first_error: json.JSONDecodeError) -> list:
    lines = [ln for ln in text.splitlines() if ln.strip()]
    if len(lines) < 2:
        raise BadFile(f"{p}: not JSON ({first_error.msg} at line {first_error.lineno} "
                      f"column {first_error.colno})")
    out = []
    for n, line in enumerate(lines, 1):
        try:
            out.append(json.loads(line))
        except json.JSONDecodeError as e:
            raise BadFile(f"{p}: neither JSON nor JSONL (line {n}: {e.msg})") from None
    return out


def reader_for(records: list[dict], path) -> Any:
    """The task reader module whose ``matches`` accepts every record."""
    mods = [importlib.import_module(m) for m in READERS]
    tasks = set()
    for i, r in enumerate(records):
        hit = [m for m in mods if m.matches(r)]
        if not hit:
            raise BadFile(f"{path}: results[{i}] is not an upstream route, K8s or MALT record "
                          f"(keys: {', '.join(sorted(r)[:8])})")
        tasks.add(hit[0].TASK)
    if len(tasks) > 1:
        raise BadFile(f"{path}: records of several tasks ({', '.join(sorted(tasks))}) in one file")
    return next(m for m in mods if m.TASK in tasks)


# ------------------------------------------------------------------ the loop
@dataclass
class Report:
    task: str
    cases: list[dict]

    def table(self) -> list[dict]:
        rows: dict[str, dict] = {}
        for c in self.cases:
            for ch in c["checks"]:
                r = rows.setdefault(ch["check"], {"check": ch["check"], "compared": 0,
                                                  "agree": 0, "differ": 0, "skipped": 0})
                if ch.get("agree") is None:
                    r["skipped"] += 1
                else:
                    r["compared"] += 1
                    r["agree" if ch["agree"] else "differ"] += 1
        return list(rows.values())

    def agreeing_cases(self) -> int:
        return sum(1 for c in self.cases if not c["differences"])

    def render(self) -> str:
        head = f"{'check':<12} {'compared':>8} {'agree':>7} {'differ':>7} {'skipped':>7} {'agreement':>9}"
        lines = [head]
        for r in self.table():
            pct = f"{100.0 * r['agree'] / r['compared']:.1f}%" if r["compared"] else "-"
            lines.append(f"{r['check']:<12} {r['compared']:>8} {r['agree']:>7} {r['differ']:>7} "
                         f"{r['skipped']:>7} {pct:>9}")
        lines.append(f"cases agreeing on every check: {self.agreeing_cases()}/{len(self.cases)}")
        return "\n".join(lines)


def replay_records(records: list[dict], reader, options: Options, path="FILE",
                   progress: Callable[[int, int], None] | None = None) -> Report:
    cases = [reader.read(r, i, options, f"{path}: results[{i}]") for i, r in enumerate(records)]
    out = []
    with reader.Replayer(options) as rp:
        for n, case in enumerate(cases):
            checks = list(rp.replay(case))
            rows = [c.to_json() for c in checks]
            out.append({"case": case.index, "task": case.task, "label": case.label,
                        "checks": rows,
                        "differences": [r for r in rows if r.get("agree") is False]})
            if progress is not None:
                progress(n + 1, len(cases))
    return Report(reader.TASK, out)


def write(report: Report, out: str | Path) -> Path:
    """``differences.jsonl`` and ``summary.json`` in ``out``, created as eval's ``--out``
    is (missing parents only inside the working directory)."""
    d = out_dir(out)
    with open(d / "differences.jsonl", "w", encoding="utf-8") as f:
        for c in report.cases:
            line = {k: c[k] for k in ("case", "task", "label", "differences")}
            line["agree"] = not c["differences"]
            f.write(json.dumps(line, sort_keys=True, default=repr) + "\n")
    summary = {"task": report.task, "cases": len(report.cases),
               "cases_agreeing": report.agreeing_cases(), "checks": report.table()}
    (d / "summary.json").write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    return d / "differences.jsonl"


# --------------------------------------------------------------------- CLI
def add_arguments(p: argparse.ArgumentParser) -> argparse.ArgumentParser:
    p.description = ("Replay an upstream NetArena results file (route, K8s or MALT) through "
                     "the compat envs, and report agreement on the initial state, the state "
                     "after each step, the outputs and the final verdicts.")
    p.epilog = ("examples:\n"
                "  netarena-gym compat-replay results.json\n"
                "  netarena-gym compat-replay results.json --out replay/\n"
                "  netarena-gym compat-replay k8s-results.json --config error_config.json\n\n"
                "exit status: 0 when it ran (with or without differences), 2 for a file it "
                "cannot read")
    p.formatter_class = argparse.RawDescriptionHelpFormatter
    p.add_argument("file", metavar="FILE", help="upstream results file: leaderboard JSON "
                   "({\"results\": [...]}), a JSON list of records, or JSONL")
    p.add_argument("--out", default=None, metavar="DIR",
                   help="write DIR/differences.jsonl (one line per case) and DIR/summary.json")
    p.add_argument("--config", default=None, metavar="FILE",
                   help="K8s: the run's upstream error-config ({\"details\": [...]}), which names "
                        "the policy each fault was injected into (otherwise it is inferred "
                        "from the first recorded mismatch report)")
    p.add_argument("--num-switches", default=None,
                   type=number(int, at_least=1, at_most=MAX_SUBNETS_PER_ROUTER),
                   help="route: subnets when the record does not say (default: inferred: "
                        "the split of the recorded pingall's hosts whose initial state "
                        "reproduces it, fewest subnets first)")
    p.add_argument("--hosts-per-subnet", default=None,
                   type=number(int, at_least=1, at_most=MAX_HOSTS_PER_SUBNET),
                   help="route: hosts per subnet when the record does not say (default 1)")
    p.add_argument("--quiet", action="store_true", help="no progress bar on stderr")
    p.add_argument("--progress", action="store_true",
                   help="the progress bar even when stderr is not a terminal")
    return p


def run(a: argparse.Namespace) -> int:
    opts = Options(config=a.config, num_switches=a.num_switches,
                   hosts_per_subnet=a.hosts_per_subnet)
    try:
        if a.out:
            out_dir(a.out, create=False)  # before the replay: a file, a missing parent
        records = load_records(a.file)
        reader = reader_for(records, a.file)
        bar: list[Progress] = []

        def prog(done: int, total: int) -> None:
            if not bar:
                bar.append(Progress(total, label="compat-replay", unit="case", stats=False,
                                    enabled=True if a.progress else None))
            bar[0].update()
        try:
            report = replay_records(records, reader, opts, a.file, None if a.quiet else prog)
        finally:
            for b in bar:
                b.close()
    except (BadFile, UsageError) as e:
        print(f"compat-replay: {e}", file=sys.stderr)
        return 2
    except DependencyNotInstalled as e:  # e.g. bubblewrap for MALT's sandbox
        print(f"compat-replay: {e}", file=sys.stderr)
        return 1
    print(f"compat-replay: {report.task}, {len(report.cases)} case(s) from {a.file}")
    print(report.render())
    if a.out:
        try:
            print(f"differences: {write(report, a.out)}")
        except (UsageError, OSError) as e:
            print(f"compat-replay: {e}", file=sys.stderr)
            return 2
    return 0


def main(argv: Iterable[str] | None = None) -> int:
    p = add_arguments(argparse.ArgumentParser(prog="netarena-gym compat-replay"))
    return run(p.parse_args(None if argv is None else list(argv)))


if __name__ == "__main__":
    sys.exit(main())
