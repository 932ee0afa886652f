"""System prompts per task and style (``zeroshot``, ``fewshot``, ``cot``, ``fewshot_cot``).

Written for netarena_gym (the operator allow-list, the observation format, the JSON action).
A task this module does not know gets a generic prompt built from the env's ``text_keys``
and its class docstring, so new envs work without an entry here.
"""
from __future__ import annotations

import json

STYLES = ("zeroshot", "fewshot", "cot", "fewshot_cot")

_ROUTING = """\
You are the on-call network operator for a small network of Linux routers (r0, r1, ...), \
switches (s1, s2, ...) and hosts (h1, h2, ...). Some faults were injected on the routers, so \
some nodes cannot reach others. Your job: restore full reachability, so that every node \
pings every other node.

Each turn you see the pingall matrix ("X" marks a pair that fails), the last command you ran \
with its output, and how many steps are left. You run exactly one command per turn, on one \
router or host. Useful tools: ip (addr, link, route, rule, neigh), ifconfig, route -n, \
arp -n, sysctl, iptables / iptables-save, tc qdisc, cat of /proc/sys/net files, ping -c1, \
traceroute; you may chain with ;, && and pipes into grep/head/tail. Shells, sudo, reboot, \
rm, kill, ip netns and commands on switches are refused and penalised.

Rules: inspect before you change anything; never take away connectivity that works now \
(a step that breaks a working pair is unsafe); finish in as few steps as you can. Router \
interfaces carry an alias such as "LAN s3 192.168.3.1/24" or "TRANSIT r1 172.16.0.1/30" \
that tells their intended role and address.

Answer with one JSON object and nothing else: {"machine": "<router or host>", "command": \
"<one shell command>"}"""

_CAPACITY = """\
You are a datacenter capacity planner working on a MALT topology graph (a directed \
networkx graph of entities such as chassis, switches, ports, aggregation blocks and \
superblocks, with containment relations). Each episode asks one question: look something \
up, count or aggregate capacity, or change the topology safely. Answer it by acting \
through the env's action format below; keep the graph consistent (do not break \
containment, keep names unique, copy before you modify)."""

_K8S = """\
You are the network engineer of a Kubernetes cluster running a microservice application. \
Some NetworkPolicies were changed, so some services can no longer talk to each other, or \
can talk when they must not. Each turn you see the connectivity mismatches and the output \
of your last command. Run one kubectl command per turn to inspect or repair the policies: \
prefer `kubectl patch networkpolicy ... --type=json` so you change only what is wrong, do \
not edit, delete, create or apply whole objects, do not exec into pods, and never break a \
connection that works as intended."""

_GENERIC = """\
You operate a network system through text commands. Each turn you see the current state \
and the output of your last action. Diagnose first, never break what works, and solve the \
task in as few steps as you can."""

_TASKS = {"routing": _ROUTING, "capacity_planning": _CAPACITY, "malt": _CAPACITY,
          "k8s": _K8S, "k8s_policy": _K8S, "kubernetes": _K8S}

_COT = ("Before answering, think step by step inside <think>...</think>: what the matrix "
        "shows, what you have learned so far, which single command helps most now. Then give "
        "the answer in the required format after the </think> tag.")

# Few-shot examples for routing: (situation, answer) pairs in this env's own vocabulary.
_ROUTING_SHOTS = [
    ("The matrix shows h3 and h4 (subnet s2) reach nobody and nobody reaches them; nothing "
     "has been inspected yet.",
     {"machine": "r0", "command": "ip -br addr show; ip route show"}),
    ("The output showed r0-eth2 with state DOWN and the alias \"LAN s2 192.168.2.1/24\".",
     {"machine": "r0", "command": "ip link set r0-eth2 up"}),
    ("Hosts in different subnets cannot reach each other but each reaches its gateway; "
     "sysctl printed net.ipv4.ip_forward = 0.",
     {"machine": "r0", "command": "sysctl -w net.ipv4.ip_forward=1"}),
    ("iptables -S on r0 printed \"-A FORWARD -s 192.168.1.0/24 -j DROP\".",
     {"machine": "r0", "command": "iptables -D FORWARD -s 192.168.1.0/24 -j DROP"}),
    ("r0-eth1 has no IPv4 address; its alias is \"LAN s1 192.168.1.1/24\".",
     {"machine": "r0", "command": "ip addr add 192.168.1.1/24 dev r0-eth1"}),
]


def action_format(keys) -> str:
    example = {k: f"<{k}>" for k in keys}
    return ("Answer with one JSON object and nothing else: " + json.dumps(example))


def system_prompt(task: str, keys, *, style: str = "zeroshot", doc: str | None = None,
                  raw: bool = False) -> str:
    """``keys``: the env's JSON action keys (none: the observation says what to send);
    ``raw``: the reply itself is the action (e.g. Python source)."""
    if style not in STYLES:
        raise ValueError(f"prompt style must be one of {STYLES}, got {style!r}")
    base = _TASKS.get(task)
    parts = []
    if base is None or task not in ("routing",) or raw or tuple(keys) != ("machine", "command"):
        parts.append(base or _GENERIC)
        if base is None and doc:
            parts.append("About this task:\n" + doc.strip())
        parts.append(action_format(keys) if keys and not raw else
                     "Answer exactly in the format the observation asks for, and nothing else.")
    else:
        parts.append(base)
    if style in ("fewshot", "fewshot_cot"):
        shots = _ROUTING_SHOTS if task == "routing" else []
        if shots:
            parts.append("Examples of good single steps:")
            for situation, answer in shots:
                parts.append(f"Situation: {situation}\nAnswer: {json.dumps(answer)}")
    if style in ("cot", "fewshot_cot"):
        parts.append(_COT)
    return "\n\n".join(parts)


def user_turn(observation: str, *, first: bool) -> str:
    head = "Here is the current state. Begin." if first else "Result of your command:"
    return f"{head}\n\n{observation.rstrip()}"


class Conversation:
    """The message window an LLM agent sends: the system prompt, the last ``history`` turns
    (observation and reply) and the current observation. Shared by the agent and by the
    demonstrations of ``generate``, so SFT data matches what the agent sees at inference."""

    def __init__(self, system: str, history: int = 6):
        self.system, self.history = system, max(0, int(history))
        self.turns: list[tuple[str, str]] = []

    def reset(self) -> None:
        self.turns = []

    def add(self, observation: str, reply: str) -> None:
        self.turns.append((observation, reply))

    def messages(self, observation: str) -> list[dict]:
        msgs = [{"role": "system", "content": self.system}]
        kept = self.turns[-self.history:] if self.history else []
        for i, (obs, reply) in enumerate(kept):
            first = i == 0 and len(kept) == len(self.turns)
            msgs.append({"role": "user", "content": user_turn(obs, first=first)})
            msgs.append({"role": "assistant", "content": reply})
        msgs.append({"role": "user", "content": user_turn(observation, first=not self.turns)})
        return msgs
