"""Upstream MALT records for :mod:`netarena_gym.compat.replay`.

A record (``shared/spec/upstream-malt.md`` §4.4, one line of ``eval_results.jsonl`` or one
leaderboard result) holds ``Query``, ``Label``, ``LLM code`` (the code upstream extracted
from the reply), ``Result-Correctness`` and ``Result-Safety`` (``"Pass"``/``"Fail"``), and,
on failure, ``Error`` (a traceback when the code raised).

Replay: the question becomes a ``level="compat"`` scenario
(:func:`netarena_gym.capacity_planning.generator.import_upstream`, ground truth recomputed
on upstream's graph), and the recorded code runs through our sandbox in upstream's namespace
and our compat grader (one submission, as upstream). Checks: ``executed`` (the code ran and
returned a result, against a record whose ``Error`` is not a traceback), ``correct`` and
``safe`` (our ``safe_compat``) against the recorded verdicts.
"""
from __future__ import annotations

from netarena_gym.compat.replay import BadFile, Case, Check, Options, need

TASK = "capacity_planning"
VERDICTS = ("Pass", "Fail")


def matches(rec: dict) -> bool:
    return "Query" in rec and ("LLM code" in rec or "Result-Correctness" in rec)


def read(rec: dict, index: int, options: Options, where: str) -> Case:
    need(rec, "Query", str, where)
    code = rec.get("LLM code", "")
    if not isinstance(code, str):
        raise BadFile(f"{where}: 'LLM code' must be a string, got {type(code).__name__}")
    for k in ("Result-Correctness", "Result-Safety"):
        if need(rec, k, str, where) not in VERDICTS:
            raise BadFile(f"{where}: {k!r} must be 'Pass' or 'Fail', got {rec[k]!r}")
    label = rec.get("Label") if isinstance(rec.get("Label"), str) else ""
    return Case(index, TASK, label, {"record": rec, "code": code})


class Replayer:
    def __init__(self, options: Options):
        from netarena_gym.capacity_planning.env import CapacityPlanningEnv
        self.env = CapacityPlanningEnv(level="compat")

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.env.close()

    def replay(self, case: Case):
        from netarena_gym.capacity_planning.generator import import_upstream
        rec = case.data["record"]
        try:
            scenario = import_upstream(rec["Query"])
        except ValueError as e:
            yield Check("scenario", False, note=str(e))
            return
        self.env.reset(options={"scenario": scenario.to_dict()})
        obs, _, _, _, info = self.env.step(case.data["code"])
        v = info["extra"]["verdict"]
        error = rec.get("Error")
        theirs_ran = not (isinstance(error, str) and "Traceback" in error)
        ours_ran = info.get("command_kind") == "ok"
        yield Check("executed", ours_ran == theirs_ran, ours_ran, theirs_ran,
                    note="" if ours_ran else _last_line(obs))
        for check, ours, key in (("correct", bool(info["correct"]), "Result-Correctness"),
                                 ("safe", bool(v["safe_compat"]), "Result-Safety")):
            theirs = rec[key] == "Pass"
            yield Check(check, ours == theirs, ours, theirs,
                        note=v["compat_message"] if check == "safe" and not ours else "")


def _last_line(observation) -> str:
    """The error line of a failed submission's output (its exception, no path)."""
    text = observation if isinstance(observation, str) else ""
    lines = [ln for ln in text.split("\nOutput:\n")[-1].splitlines() if ln.strip()]
    lines = [ln for ln in lines if not ln.startswith("Attempts left")]
    return lines[-1][:300] if lines else ""
