"""Upstream K8s records for :mod:`netarena_gym.compat.replay`.

A record (``shared/spec/upstream-k8s.md`` §5.1) is ``{agent_info, error_detail: [...],
iterations, success, safe, results: [{llm_command, output, mismatch_summary}, ...]}``, one
``results`` entry per executed or disallowed step; ``mismatch_summary`` is upstream's report
(``Mismatch: src → host:port (Expected: B, Actual: B)`` lines, ``No mismatches found.``, or
``Skipped due to disallowed command.``).

The record names each fault's parameters but not the policy it was injected into. That
comes from the record's ``policies_to_inject`` when it has one, else from the run's
error-config file (``--config``, ``{"details": [...]}``, entry by position), else it is
inferred: every policy upstream's generator could have drawn for each fault (spec §2.3) is
tried, and the first whose replay of the first recorded commands gives the first recorded
report is used (``scenario`` check, with the number of candidates that fit).

Replay (``level="compat"``, the scenario from
:func:`netarena_gym.k8s.generator.import_upstream`): each recorded command, then our
mismatch set against the recorded one (``state``; probe flakiness upstream shows up here),
whether it ran (``executed``: upstream refuses its blacklist), its normalised output
(``output``), and the verdicts ``success`` and ``safe``, our env's own compat scoring
(``info["correct"]``, ``info["safe_compat"]``; the note gives upstream's rule on our counts,
unsafe once a check has more mismatches than the previous one, where it differs) and
``iterations`` (compared on successful runs: a failed run counts upstream's budget; an
iteration whose agent call gave no reply after upstream's 5 tries counts but leaves no
``results`` entry (spec section 3.5), so a record counting more iterations than entries is
not compared).
"""
from __future__ import annotations

import itertools
import json
import re
from pathlib import Path

from netarena_gym.compat.replay import (BadFile, Case, Check, Options, need, normalise_output,
                                        command_ran, reason, step_env, verdict)

TASK = "k8s"
NO_MISMATCH = "No mismatches found."
SKIPPED = "Skipped due to disallowed command."
_LINE = re.compile(r"^Mismatch: (\S+) (?:→|->) (\S+):(\d+) \(Expected: (True|False), "
                   r"Actual: (True|False)\)$")
MIN_STEPS = 60  # our env's step limit, raised for a record with more steps
TARGETS = ("adservice", "cartservice", "checkoutservice", "currencyservice", "emailservice",
           "paymentservice", "productcatalogservice", "recommendationservice", "redis-cart",
           "shippingservice")
CANDIDATES = {  # the policies upstream's generator draws each fault type on (spec §2.3)
    "remove_ingress": tuple(t for t in TARGETS if t != "redis-cart"),
    "change_port": TARGETS, "change_protocol": TARGETS,
    "add_ingress": TARGETS + ("frontend",),
    "add_egress": ("recommendationservice", "checkoutservice", "cartservice", "frontend"),
}


def matches(rec: dict) -> bool:
    return isinstance(rec.get("results"), list) and "error_detail" in rec and "log_content" not in rec


def parse_summary(text: str) -> frozenset | None:
    """The mismatches of an upstream report as ``(src, host, port, expected, actual)``
    tuples (lines it cannot parse are kept as text); None for a skipped step."""
    text = (text or "").strip()
    if text == SKIPPED:
        return None
    if text == NO_MISMATCH or not text:
        return frozenset()
    out = set()
    for line in text.splitlines():
        m = _LINE.match(line.strip())
        out.add((m.group(1), m.group(2), int(m.group(3)), m.group(4) == "True",
                 m.group(5) == "True") if m else line.strip())
    return frozenset(out)


def read(rec: dict, index: int, options: Options, where: str) -> Case:
    details = need(rec, "error_detail", list, where)
    for j, d in enumerate(details):
        if not isinstance(d, dict) or d.get("type") not in CANDIDATES:
            raise BadFile(f"{where}: error_detail[{j}] is not an upstream K8s fault "
                          f"(types: {', '.join(CANDIDATES)})")
    for k in ("success", "safe"):
        need(rec, k, bool, where)
    need(rec, "iterations", int, where)
    steps = need(rec, "results", list, where)
    for j, st in enumerate(steps):
        if not isinstance(st, dict) or not isinstance(st.get("llm_command"), str) \
                or not isinstance(st.get("mismatch_summary"), str):
            raise BadFile(f"{where}: results[{j}] needs string 'llm_command' and "
                          "'mismatch_summary'")
    files = rec.get("policies_to_inject")
    if files is not None and (not isinstance(files, list) or len(files) != len(details)):
        raise BadFile(f"{where}: 'policies_to_inject' must list one file per error detail")
    return Case(index, TASK, "+".join(d["type"] for d in details),
                {"record": rec, "details": details, "files": files})


def check_fault(d: dict) -> None:
    """ValueError for a fault value upstream's generator never writes and the API server
    would refuse (spec section 2: ports ``randint(1, 65535)``, protocols UDP/SCTP, app names
    as strings): our env's reset raised its internal decode and validation errors on them,
    which ended the whole replay with a traceback."""
    t = d.get("type")
    if t == "change_port" and "new_port" in d:
        v = d["new_port"]
        try:
            port = int(v)
        except (TypeError, ValueError):
            return  # import_upstream names it
        if isinstance(v, bool) or isinstance(v, float) or not 1 <= port <= 65535:
            raise ValueError(f"new_port {v!r} is not a port number 1..65535")
    elif t == "change_protocol" and d.get("new_protocol") not in ("TCP", "UDP", "SCTP"):
        raise ValueError(f"new_protocol {d.get('new_protocol')!r} is not TCP, UDP or SCTP")
    elif t in ("add_ingress", "add_egress") and "app" in d:
        apps = d["app"]
        if not isinstance(apps, list) or not all(isinstance(a, str) for a in apps):
            raise ValueError(f"app must be a list of app names, got {apps!r}"[:200])


def _config(path: str) -> list:
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise BadFile(f"--config {path}: cannot read it as JSON ({e.__class__.__name__})") from None
    if not isinstance(data, dict) or not isinstance(data.get("details"), list):
        raise BadFile(f"--config {path}: expected an upstream error config {{\"details\": [...]}}")
    for i, d in enumerate(data["details"]):
        if not isinstance(d, dict):
            raise BadFile(f"--config {path}: details[{i}] is a {type(d).__name__}, not an "
                          "entry object")
        files = d.get("policies_to_inject")
        if files is not None and not (isinstance(files, list)
                                      and all(isinstance(f, str) for f in files)):
            raise BadFile(f"--config {path}: details[{i}].policies_to_inject must be a list "
                          f"of file names, got {files!r}"[:300])
    return data["details"]


class Replayer:
    def __init__(self, options: Options):
        from netarena_gym.k8s.env import K8sPolicyEnv
        from netarena_gym.k8s.workload import load_workload
        self.config = _config(options.config) if options.config else None
        self.env = K8sPolicyEnv(level="compat", max_steps=MIN_STEPS)
        self.wl = load_workload()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.env.close()

    def _mismatches(self) -> frozenset:
        from netarena_gym.k8s.render import mismatch_report
        rep = mismatch_report(self.env.probe_set, self.env.backend.observe(), "→")
        return parse_summary(rep)

    def _reset(self, files: list[str], details: list[dict], steps: int = 0) -> dict:
        """Reset our env to the record's faults; its reset ``info``. The env's step limit
        holds ``steps`` commands (upstream's ``max_iterations`` is a setting)."""
        from netarena_gym.k8s.env import K8sPolicyEnv
        from netarena_gym.k8s.generator import import_upstream
        if steps > self.env.max_steps:
            self.env.close()
            self.env = K8sPolicyEnv(level="compat", max_steps=steps)
        for d in details:
            check_fault(d)
        sc = import_upstream({"details": [{"policies_to_inject": list(files),
                                           "inject_error_num": [len(details)],
                                           "error_detail": details}]})[0]
        return self.env.reset(options={"scenario": sc.to_dict()})[1]

    def _files(self, case: Case):
        """``(files, Check)``: where the faults were injected, and how that was found."""
        details, steps = case.data["details"], case.data["record"]["results"]
        if case.data["files"] is not None:
            return case.data["files"], Check("scenario", True, note="policies_to_inject")
        if self.config is not None:
            if case.index >= len(self.config):
                return None, Check("scenario", False, note=f"--config has no entry {case.index}")
            entry = self.config[case.index]
            if entry.get("error_detail") != details:
                return None, Check("scenario", False, note=f"--config entry {case.index} has "
                                   "other error details")
            if entry.get("policies_to_inject") is not None:
                return entry["policies_to_inject"], Check("scenario", True, note="--config")
            # an entry without policies_to_inject: inferred below, as without --config
        first = next((j for j, st in enumerate(steps)
                      if parse_summary(st["mismatch_summary"]) is not None), None)
        options = [[self.wl.policy_file(p) for p in CANDIDATES[d["type"]]] for d in details]
        fits = []
        for files in itertools.product(*options):
            try:
                self._reset(files, details, len(steps))
            except (ValueError, KeyError, TypeError) as e:  # the details themselves are bad
                return None, Check("scenario", False, note=f"import_upstream refused the "
                                   f"record: {reason(e)}")
            if first is not None:
                for st in steps[:first + 1]:
                    step_env(self.env, {"command": st["llm_command"]})
                if self._mismatches() != parse_summary(steps[first]["mismatch_summary"]):
                    continue
            fits.append(list(files))
        if not fits:
            return None, Check("scenario", False, note="no policy choice reproduces the first "
                               "recorded report (give --config)")
        return fits[0], Check("scenario", True, fits[0], None,
                              note=f"inferred from the first report ({len(fits)} candidate(s) fit)")

    def replay(self, case: Case):
        rec = case.data["record"]
        files, how = self._files(case)
        yield how
        if files is None:
            return
        try:
            scored = self._reset(files, case.data["details"], len(rec["results"]))
        except (ValueError, KeyError, TypeError) as e:
            yield Check("scenario", False, note=f"import_upstream refused the record: {reason(e)}")
            return
        prev, safe, last, ran = None, True, None, 0
        for k, st in enumerate(rec["results"]):
            theirs = parse_summary(st["mismatch_summary"])
            got = step_env(self.env, {"command": st["llm_command"]})
            if got is None:
                yield Check("state", False, step=k, note="our episode had already ended")
                break
            out, info = got
            scored = info
            ran += 1
            ours_ran = command_ran(info, out)
            yield Check("executed", ours_ran == (theirs is not None), ours_ran,
                        theirs is not None, step=k)
            if theirs is None:
                continue  # upstream did not run it, nor check
            a, b = normalise_output(out), normalise_output(st.get("output", ""))
            yield Check("output", a == b, a if a != b else None, b if a != b else None, step=k)
            ours = self._mismatches()
            yield Check("state", ours == theirs, _show(ours - theirs), _show(theirs - ours), step=k)
            n = sum(1 for x in ours if isinstance(x, tuple))
            safe = safe and (prev is None or n <= prev)
            prev, last = n, ours
        # the verdicts are our compat env's own scoring after the replayed commands;
        # upstream's rule on our mismatch counts is the note where they part
        success = bool(scored["correct"])
        yield verdict("success", success, rec["success"], last is not None and not last)
        yield verdict("safe", bool(scored["safe_compat"]), rec["safe"], safe)
        if success and rec["success"]:
            if rec["iterations"] > ran:  # iterations without a reply leave no entry
                yield Check("iterations", None, ran, rec["iterations"],
                            note=f"upstream counted {rec['iterations'] - ran} iteration(s) that "
                                 "left no results entry (no agent reply after its retries)")
            else:
                yield Check("iterations", ran == rec["iterations"], ran, rec["iterations"])
        else:
            yield Check("iterations", None, ran, rec["iterations"],
                        note="not compared on a failed run (upstream counts its budget)")


def _show(items) -> list | None:
    if not items:
        return None
    return sorted((f"{x[0]} → {x[1]}:{x[2]} (Expected: {x[3]}, Actual: {x[4]})"
                   if isinstance(x, tuple) else x) for x in items)
