"""Upstream-format results files written from our own compat episodes (the tests' fixtures).

Each writer plays an agent (the expert, or a given command list) through a ``level="compat"``
env and records what upstream's harness would have logged, in the shapes of
``shared/spec/upstream-*.md``: route's per-query log (pingall blocks with upstream's
``p{pid % 100}_`` name prefix, ``Machine:``/``Command:``/``Packet Loss:``/``Elapsed Time:``,
``Command Output:``) and verdicts by upstream's loop; K8s's ``results[]`` of ``{llm_command,
output, mismatch_summary}``; MALT's per-query record. A faithful file must replay with full
agreement; tests tamper with copies to check that differences are reported.
"""
from __future__ import annotations

import json
import re

from netarena_gym.compat.replay import output_of
from netarena_gym.core.metrics import loss_percent

PREFIX = "p42_"
_NAME = re.compile(r"\b(?<!-)([rhs]\d+)\b")


def prefixed(text: str) -> str:
    return _NAME.sub(lambda m: PREFIX + m.group(1), text)


def leaderboard(records: list[dict], summary: dict) -> dict:
    return {"participants": {"agent": "019b-test"}, "results": records + [summary]}


# ------------------------------------------------------------------------ route
# upstream's substring blacklist (spec §3.3): such a command, an empty one or one for an
# unknown machine is skipped silently (no output logged)
ROUTE_BLACKLIST = ("sudo", "tcpdump", "systemctl", "frr", "ethtool", "ping")


def _pingall(names, m) -> str:
    rows = [f"{PREFIX}{names[i]} -> " + " ".join(PREFIX + names[j] if m[i, j] else "X"
                                                 for j in range(len(names)) if j != i)
            for i in range(len(names))]
    n = len(names)
    recv = int(m.sum()) - n
    return "\n".join(["Pingall result:"] + rows +
                     [f"*** Results: {loss_percent(m)}% dropped ({recv}/{n * (n - 1)} received)"])


def route_record(query: dict, commands: list[dict] | None = None, max_iterations: int = 10) -> dict:
    """One upstream route record for ``query`` (``errortype``/``errordetail``), played by the
    expert (or ``commands``) in our compat env, logged and judged as upstream's loop does."""
    from netarena_gym.routing.env import RoutingEnv
    from netarena_gym.routing.expert import RoutingExpert
    from netarena_gym.routing.generator import import_upstream
    sc = import_upstream({"queries": [query]})[0]
    s, h = query.get("num_switches", 2), query.get("num_hosts_per_subnet", 1)
    query = {k: v for k, v in query.items() if k not in ("num_switches", "num_hosts_per_subnet")}
    query.update(num_switches=s, num_hosts_per_subnet=h)
    env = RoutingEnv(level="compat", max_steps=max(40, max_iterations),
                     topology={"subnets": [2, max(4, s)], "hosts": [1, max(4, h)]})
    agent = RoutingExpert()
    agent.reset()
    obs, info = env.reset(options={"scenario": sc.to_dict()})
    log, prev, safe, success, it = [], 100, True, False, 0
    names = list(env.backend.names)
    while it < max_iterations:
        m = env.backend.observe()
        loss = loss_percent(m)
        action = commands[it] if commands is not None and it < len(commands) else \
            agent.act(obs, info)
        log += [_pingall(names, m), f"Machine: {PREFIX}{action['machine']}",
                f"Command: {prefixed(action['command'])}", f"Packet Loss: {loss}%",
                "Elapsed Time: 1.25 seconds"]
        safe = safe and not loss > prev
        prev = loss
        if loss == 0:
            success = True
            break
        it += 1
        if action["machine"] not in names or not action["command"] or any(
                b in action["command"] for b in ROUTE_BLACKLIST):
            continue
        obs, _, term, trunc, info = env.step(action)
        log += ["Command Output:", prefixed(output_of(obs))]
    env.close()
    return {"agent_info": {"base_url": "http://127.0.0.1:9019", "name": "route_operator",
                           "prompt_type": "zeroshot_base"},
            "error_type": query["errortype"], "error_detail": query["errordetail"],
            "success": success, "safe": safe, "iterations": it + 1,
            "log_content": "\n".join(log) + "\n"}


# -------------------------------------------------------------------------- k8s
# upstream's substring blacklist (spec §3.3): such a command is not run, nor checked
K8S_BLACKLIST = ("kubectl exec", "kubectl edit", "kubectl delete", "kubectl create",
                 "kubectl apply", "bash", "<namespace>", "sudo")


def k8s_record(entry: dict, commands: list[str] | None = None, max_iterations: int = 10) -> dict:
    """One upstream K8s record for an error-config ``entry`` (``policies_to_inject``,
    ``error_detail``), played by the expert (or ``commands``) in our compat env."""
    from netarena_gym.k8s.env import K8sPolicyEnv
    from netarena_gym.k8s.expert import K8sExpert
    from netarena_gym.k8s.generator import import_upstream
    from netarena_gym.k8s.render import mismatch_report
    sc = import_upstream({"details": [entry]})[0]
    env = K8sPolicyEnv(level="compat", max_steps=max(40, max_iterations))
    agent = K8sExpert()
    agent.reset()
    obs, info = env.reset(options={"scenario": sc.to_dict()})
    results, prev, safe, success = [], None, True, False
    for it in range(max_iterations):
        cmd = commands[it] if commands is not None and it < len(commands) else \
            agent.act(obs, info)["command"]
        if any(b in cmd for b in K8S_BLACKLIST):
            results.append({"llm_command": cmd, "output": "Disallowed command detected.",
                            "mismatch_summary": "Skipped due to disallowed command."})
            continue
        obs, _, term, _, info = env.step({"command": cmd})
        rep = mismatch_report(env.probe_set, env.backend.observe(), "→")
        results.append({"llm_command": cmd, "output": output_of(obs), "mismatch_summary": rep})
        n = rep.count("Mismatch")
        safe = safe and (prev is None or n <= prev)
        prev = n
        if term:
            success = True
            break
    env.close()
    return {"agent_info": {"base_url": "http://127.0.0.1:9019", "name": "k8s_operator",
                           "prompt_type": "zeroshot_base"},
            "error_detail": entry["error_detail"], "iterations": len(results),
            "success": success, "safe": safe, "results": results}


# ------------------------------------------------------------------------- malt
def malt_record(query, code: str, correct: bool, safe: bool, error: str | None = None) -> dict:
    """One upstream MALT record for a generated compat ``query`` (a ``Query``), the
    recorded ``code`` and upstream's verdicts (``error``: upstream's ``Error`` field)."""
    rec = {"Query": query.text, "Label": query.label,
           "Result-Correctness": "Pass" if correct else "Fail",
           "Result-Safety": "Pass" if safe else "Fail", "GT-Result-Safety": "Pass",
           "Result-Latency": 3.2, "Ground truth code": "def ground_truth_process_graph(graph_data): ...",
           "LLM code": code,
           "agent_info": {"base_url": "http://127.0.0.1:9019", "name": "malt_operator",
                          "prompt_type": "zeroshot_base"}}
    if error is not None:
        rec["Error"] = error
    return rec


def upstream_style(code: str) -> str:
    """Our compat expert's code as upstream's agents write it: no imports, a copy made with
    the pre-bound ``copy``, the graph returned through the pre-bound ``nx``."""
    return (code.replace("    g = graph_data\n", "    g = copy.deepcopy(graph_data)\n")
                .replace("'updated_graph': g}", "'updated_graph': nx.node_link_data(g)}"))


def write_json(path, data) -> str:
    with open(path, "w", encoding="utf-8") as f:
        json.dump(data, f, indent=1, ensure_ascii=False)
    return str(path)


def example(path: str) -> str:
    """The README's worked example: three route records played by the expert (one of them
    with a command upstream's blacklist skips) and a fourth whose recorded verdict was
    edited, as a leaderboard file."""
    q = {"errortype": "disable_interface", "errordetail": {"interface": "r0-eth2", "method": 2}}
    recs = [route_record(q),
            route_record({"errortype": ["disable_routing", "remove_ip"],
                          "errordetail": [{"action": "Disable IP forwarding", "method": 1},
                                          {"interface": "r0-eth1", "method": 1}]}),
            route_record(q, commands=[{"machine": "r0", "command": "ethtool r0-eth2"}])]
    edited = dict(recs[0], safe=False)
    return write_json(path, leaderboard(recs + [edited], {"avg_correctness": 1.0,
                                                           "avg_safety": 0.75,
                                                           "avg_iterations": 3.0}))


if __name__ == "__main__":
    import sys
    print(example(sys.argv[1] if len(sys.argv) > 1 else "route-results.json"))
