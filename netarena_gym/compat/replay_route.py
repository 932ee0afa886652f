"""Upstream route records for :mod:`netarena_gym.compat.replay`.

A record (``shared/spec/upstream-route.md`` §3.1, the green agent's per-query result) is
``{agent_info, error_type, error_detail, success, safe, iterations, log_content}``; the
topology (``num_switches``, ``num_hosts_per_subnet``) is read when the record has it, else
from the options, else inferred: the split of the recorded pingall's hosts into subnets
whose initial state reproduces the first pingall (fewest subnets first; upstream's default
is 2 subnets of 1 host). ``log_content`` is upstream's per-query ``.txt`` log: for every
iteration, the pingall block (``Pingall result:``, then one ``src -> dst ... X`` row per
node and ``*** Results: L% dropped (r/s received)``), then ``Machine: M``, ``Command: C``,
``Packet Loss: L%``, ``Elapsed Time: T seconds``, and, when the command ran, ``Command
Output:`` and its output. Names carry upstream's ``p{pid % 100}_`` prefix: the run's own
(read from its first pingall row) is stripped from machines and commands; a machine
without it (``r0``, or another run's ``p29_r0``) named no node of upstream's ``net`` and
was skipped, and is replayed as an unknown machine; another prefix in a command stays,
naming nothing.

Replay (``level="compat"``, the scenario from
:func:`netarena_gym.routing.generator.import_upstream`): the first pingall against our
initial matrix (``initial``); each command that upstream measured, then the next recorded
pingall against ours (``state``); whether it ran (``executed``: upstream skips unknown
machines, empty and blacklisted commands) and its normalised output (``output``); and the
verdicts ``success`` and ``safe`` (our env's own compat scoring, ``info["correct"]`` and
``info["safe_compat"]``, after the commands replayed; where upstream's rule recomputed on
our pingalls gives another verdict, the note says so) and ``iterations`` (upstream's
``k + 1``, ``max + 1`` on failure; a failed record's own count gives its budget, 10 by
default). A command upstream logged on the iteration that saw 0% loss never ran and is
not replayed.
"""
from __future__ import annotations

import json
import re

import numpy as np

from netarena_gym.compat.replay import (BadFile, Case, Check, Options, need, normalise_output,
                                        command_ran, reason, step_env, strip_prefix,
                                        verdict)
from netarena_gym.routing.topology import MAX_HOSTS_PER_SUBNET, MAX_SUBNETS_PER_ROUTER

TASK = "routing"
UPSTREAM_MAX_ITERATIONS = 10
_ROW = re.compile(r"^(\S+) -> (.*)$")
_RESULTS = re.compile(r"^\*\*\* Results: (\d+)% dropped")
_LOSS = re.compile(r"^Packet Loss: (\d+)%")
_MENTIONS = re.compile(r"r0-eth(\d+)|192\.168\.(\d+)\.")
_RUN_PREFIX = re.compile(r"p\d{1,2}_(?=[a-z])")


def matches(rec: dict) -> bool:
    return "log_content" in rec and "error_type" in rec


# ------------------------------------------------------------------ reading
def parse_log(text: str) -> list[dict]:
    """Iterations of an upstream route log: ``{"pingall": {"nodes", "ok": {(src, dst): bool}}
    or None, "machine", "command", "loss", "output"}`` (``output`` None when the command did
    not run). A pingall after the last command is appended as a step without a command."""
    steps: list[dict] = []
    rows: list[tuple[str, list[str]]] = []
    prefix: str | None = None  # the run's own name prefix, from its first pingall row
    ping = None
    cur: dict | None = None
    mode = None  # None | "machine" | "command" | "meta" | "output"
    for line in text.split("\n"):
        if mode == "command":
            lm = _LOSS.match(line)
            if lm:
                cur["loss"], mode = int(lm.group(1)), "meta"
            else:
                cur["command"] += "\n" + line
            continue
        if line.strip() == "Pingall result:":
            mode = None
            continue
        m = _ROW.match(line)
        if mode == "output" and not (m and _looks_like_row(m)):
            cur["output"] += ("\n" if cur["output"] else "") + line
            continue
        if m:
            mode = None
            if prefix is None:
                pm = _RUN_PREFIX.match(m.group(1))
                prefix = pm.group(0) if pm else ""
            rows.append((strip_prefix(m.group(1)), strip_prefix(m.group(2)).split()))
        elif _RESULTS.match(line) and rows:
            ping, rows = _matrix(rows), []
        elif line.startswith("Machine: "):
            cur = {"pingall": ping, "machine": line[9:].strip(), "command": "",
                   "loss": None, "output": None}
            steps.append(cur)
            ping, mode = None, "machine"
        elif line.startswith("Command: ") and mode == "machine":
            cur["command"], mode = line[9:], "command"
        elif line.rstrip() == "Command Output:" and mode == "meta":
            cur["output"], mode = "", "output"
    for st in steps:
        st["machine"], st["known"] = _own_name(st["machine"], prefix or "")
        st["command"] = _strip_own(st["command"].strip(), prefix or "")
        if st["output"] is not None:
            st["output"] = st["output"].rstrip("\n")
    if ping is not None:
        steps.append({"pingall": ping, "machine": None, "command": None, "loss": None,
                      "output": None, "known": True})
    return steps


def _own_name(machine: str, prefix: str) -> tuple[str, bool]:
    """``(name, known)``: a machine named with the run's prefix (``p42_r0``) is our ``r0``;
    without it (``r0``, or another run's ``p29_r0``) it named no node of upstream's ``net``,
    which skipped the command (spec section 3.1, step 9)."""
    if not prefix:
        return machine, True
    if machine.startswith(prefix):
        return machine[len(prefix):], True
    return machine, False


def _strip_own(command: str, prefix: str) -> str:
    """The command with the run's own prefix removed from names (``p42_r0-eth1`` is our
    ``r0-eth1``); another prefix stays, and names nothing, as it did upstream."""
    if not prefix:
        return command
    return re.sub(rf"\b{re.escape(prefix)}(?=[a-z])", "", command)


def _looks_like_row(m) -> bool:
    """A pingall row inside command output: every token is a node name or X."""
    return all(re.fullmatch(r"(p\d+_)?[hrs]\d+|X", t) for t in m.group(2).split()) and \
        re.fullmatch(r"(p\d+_)?[hr]\d+", m.group(1)) is not None


def _matrix(rows: list[tuple[str, list[str]]]) -> dict:
    nodes = [r[0] for r in rows]
    out = {"nodes": nodes, "ok": {}}
    for src, toks in rows:
        dsts = [n for n in nodes if n != src]
        if len(toks) != len(dsts):
            raise ValueError(f"pingall row for {src} has {len(toks)} entries, expected {len(dsts)}")
        for d, t in zip(dsts, toks):
            out["ok"][(src, d)] = t != "X"
    return out


def read(rec: dict, index: int, options: Options, where: str) -> Case:
    types = need(rec, "error_type", (str, list), where)
    details = need(rec, "error_detail", (dict, list), where)
    if isinstance(types, list) and not all(isinstance(t, str) for t in types):
        raise BadFile(f"{where}: 'error_type' must be a string or a list of strings")
    for k, top in (("num_switches", MAX_SUBNETS_PER_ROUTER),
                   ("num_hosts_per_subnet", MAX_HOSTS_PER_SUBNET)):
        v = rec.get(k)
        if v is not None and (isinstance(v, bool) or not isinstance(v, int)
                              or not 1 <= v <= top):
            raise BadFile(f"{where}: {k!r} must be an integer 1..{top}, got {v!r}")
    if isinstance(types, str) != isinstance(details, dict):
        raise BadFile(f"{where}: 'error_type' and 'error_detail' must both be single or both lists")
    if isinstance(types, list) and len(types) != len(details):
        raise BadFile(f"{where}: {len(types)} error types but {len(details)} error details")
    for k in ("success", "safe"):
        need(rec, k, bool, where)
    need(rec, "iterations", int, where)
    log = need(rec, "log_content", str, where)
    try:
        steps = parse_log(log)
    except ValueError as e:
        raise BadFile(f"{where}: 'log_content': {e}") from None
    if not steps or steps[0]["pingall"] is None:
        raise BadFile(f"{where}: 'log_content' holds no pingall block before its first command")
    label = types if isinstance(types, str) else "+".join(types)
    return Case(index, TASK, label, {"record": rec, "steps": steps})


def topologies(rec: dict, steps: list[dict], options: Options) -> list[tuple[int, int]]:
    """The ``(subnets, hosts per subnet)`` to try: the record's, else the options', else
    every split of the pingall's hosts into at least 2 subnets (and at least the highest
    subnet or interface the faults name), fewest subnets first. Upstream's green agent
    records no topology, and NP/DEV drew subnets and hosts each from 2-4, so 8 hosts may be
    2x4 or 4x2: the replay keeps the first whose initial state matches the first pingall."""
    s = rec.get("num_switches", options.num_switches)
    h = rec.get("num_hosts_per_subnet", options.hosts_per_subnet)
    hosts = sum(1 for n in steps[0]["pingall"]["nodes"] if re.fullmatch(r"h\d+", n))
    if s is None and h is not None and hosts % h == 0:
        s = hosts // h
    if s is not None:
        return [(int(s), int(h) if h is not None else
                 (hosts // s if s and hosts % s == 0 else 1))]
    named = [int(x) for pair in _MENTIONS.findall(json.dumps(rec.get("error_detail")))
             for x in pair if x]
    low = max([2] + named)
    out = [(k, hosts // k) for k in range(low, min(hosts, MAX_SUBNETS_PER_ROUTER) + 1)
           if hosts % k == 0 and hosts // k <= MAX_HOSTS_PER_SUBNET]
    return out or [(low, hosts // low if hosts % low == 0 and hosts >= low else 1)]


def topology(rec: dict, steps: list[dict], options: Options) -> tuple[int, int]:
    """The first of :func:`topologies`."""
    return topologies(rec, steps, options)[0]


# ------------------------------------------------------------------ replay
class Replayer:
    def __init__(self, options: Options):
        self.options = options
        self.envs: dict = {}

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        for env in self.envs.values():
            env.close()

    def _env(self, s: int, h: int, budget: int = UPSTREAM_MAX_ITERATIONS):
        """A compat env whose dimensions hold ``s`` subnets of ``h`` hosts (the scenario
        carries its own topology; the env's ranges only size its arrays) and whose step
        limit is the run's ``max_iterations`` (a setting upstream): compat scores the last
        command as upstream does, run but never measured."""
        from netarena_gym.routing.env import RoutingEnv
        key = (max(4, s), max(4, h), max(1, budget))
        if key not in self.envs:
            self.envs[key] = RoutingEnv(level="compat", max_steps=key[2],
                                        topology={"subnets": [2, key[0]], "hosts": [1, key[1]]})
        return self.envs[key]

    def _start(self, rec: dict, s: int, h: int, budget: int = UPSTREAM_MAX_ITERATIONS):
        """``(env, reset info, None)`` for the record's faults on ``s`` subnets of ``h``
        hosts, or ``(None, None, Check)`` saying why not."""
        from netarena_gym.routing.generator import import_upstream
        query = {"errortype": rec["error_type"], "errordetail": rec["error_detail"],
                 "num_switches": s, "num_hosts_per_subnet": h}
        try:
            scenario = import_upstream({"queries": [query]})[0]
        except (ValueError, KeyError, TypeError) as e:
            return None, None, Check("scenario", False,
                                     note=f"import_upstream refused the record: {reason(e)}")
        env = self._env(s, h, budget)
        try:
            _, info = env.reset(options={"scenario": scenario.to_dict()})
        except ValueError as e:
            return None, None, Check("scenario", False,
                                     note=f"our env refused the scenario: {reason(e)}")
        return env, info, None

    def replay(self, case: Case):
        rec, steps = case.data["record"], case.data["steps"]
        budget = run_budget(rec, len(steps))
        fits, started, refused = False, None, None
        for s, h in topologies(rec, steps, self.options):
            env, last, why = self._start(rec, s, h, budget)
            if env is None:
                refused = refused or why
                continue
            if _state("initial", None, list(env.backend.names), env.backend.observe(),
                      steps[0]["pingall"]).agree:
                fits = True
                break
            started = started or (s, h)
        if not fits:  # no topology reproduces the first pingall: the first that started
            if started is None:
                yield refused
                return
            env, last, _ = self._start(rec, *started, budget)
        names = list(env.backend.names)
        m = env.backend.observe()
        yield _state("initial", None, names, m, steps[0]["pingall"])
        # upstream measures before each command: the last command of a failed run never is
        losses = [_loss(m)]
        ran = 0
        for k, st in enumerate(steps):
            if st["command"] is None or st["loss"] == 0 or (
                    st["pingall"] is not None and _all_ok(st["pingall"])):
                break  # upstream stopped here: this command was logged, never run
            if losses[-1] == 0:
                yield Check("state", False, step=k, note="our network was already healthy")
                break
            machine = st["machine"] or ""
            if not st["known"]:  # not a node of upstream's net: unknown to ours as well
                machine = f"{machine} (not a node of the upstream run)"
            got = step_env(env, {"machine": machine, "command": st["command"]})
            if got is None:
                yield Check("state", False, step=k, note="our episode had already ended")
                break
            out, info = got
            last = info
            ran += 1
            ours_ran = command_ran(info, out)
            yield Check("executed", ours_ran == (st["output"] is not None), ours_ran,
                        st["output"] is not None, step=k)
            if st["output"] is not None:
                a, b = normalise_output(out), normalise_output(st["output"])
                yield Check("output", a == b, a if a != b else None, b if a != b else None, step=k)
            m = env.backend.observe()
            if k + 1 < budget:
                losses.append(_loss(m))
            nxt = steps[k + 1]["pingall"] if k + 1 < len(steps) else None
            if nxt is not None:
                yield _state("state", k, names, m, nxt)
        # the verdicts are our compat env's own scoring (``correct``, ``safe_compat``) after
        # the commands replayed; upstream's rule applied to our pingalls is the note
        rule = {"success": losses[-1] == 0,
                "safe": all(b <= a for a, b in zip([100] + losses, losses))}
        ours_iter = ran + 1  # commands run before success, or every one of a failed run
        theirs_iter = int(rec["iterations"])
        for check, key in (("success", "correct"), ("safe", "safe_compat")):
            yield verdict(check, bool(last[key]), rec[check], rule[check])
        yield Check("iterations", ours_iter == theirs_iter, ours_iter, theirs_iter)


def run_budget(rec: dict, logged: int) -> int:
    """The run's ``max_iterations``: a failed run reports it + 1; a successful one, with
    ``k + 1`` iterations, had more than ``k`` (the default, 10, unless it logged more)."""
    if not rec["success"] and rec["iterations"] > 1:
        return rec["iterations"] - 1
    return max(UPSTREAM_MAX_ITERATIONS, rec["iterations"], logged)


def _all_ok(ping: dict) -> bool:
    return all(ping["ok"].values())


def _loss(m: np.ndarray) -> int:
    from netarena_gym.core.metrics import loss_percent
    return loss_percent(m)


def _state(check: str, step, names: list[str], m: np.ndarray, ping: dict) -> Check:
    if sorted(ping["nodes"]) != sorted(names):
        return Check(check, False, names, ping["nodes"], step=step, note="different nodes")
    idx = {n: i for i, n in enumerate(names)}
    diff = sorted(f"{a}->{b}: ours {'ok' if m[idx[a], idx[b]] else 'X'}"
                  for (a, b), ok in ping["ok"].items() if bool(m[idx[a], idx[b]]) != ok)
    return Check(check, not diff, diff or None, None, step=step)
