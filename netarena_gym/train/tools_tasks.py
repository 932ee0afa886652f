"""Each task's atomic commands as the tools of a TRL 1.16 ``environment_factory`` class.

Routing: ``run(machine, command)``; Kubernetes: ``kubectl(command, stdin)``; capacity
planning: ``get_node``, ``list_children``, ``add_node``, ``remove_node``, ``set_attr`` and
``answer``. Each tool call is one text action of the env (:meth:`_action_of_call` maps a call
to it, :meth:`_call_of_action` back, for demonstrations), and its answer is the env's
observation. The tool methods are declared with
:func:`~netarena_gym.train.tools_env.tool`: their signatures and docstrings are the schemas
the model reads, and every call, whatever its arguments, goes through
:meth:`_action_of_call` (the mapping evaluation uses), so the methods have no body. Everything that is not a tool is underscore-prefixed on purpose.

Left out: one tool per command family for routing and K8s (a call carries one shell or
kubectl line, as the text interface does); typed JSON arguments: the capacity-planning tools
take strings, and JSON in ``attrs``, ``value`` and ``answer`` is decoded here.
"""
from __future__ import annotations

import json
from typing import Any

from netarena_gym.train.tools_env import NetArenaToolEnv, check_tool, tool

__all__ = ["CapacityPlanningTools", "K8sPolicyTools", "RoutingTools"]

class RoutingTools(NetArenaToolEnv):
    """``NetArena-Routing-v0``: run operator commands on routers and hosts."""

    _env_id = "NetArena-Routing-v0"
    _system_prompt = (
        "You are a network operator. Linux routers (r0, r1, ...) connect subnets of hosts "
        "(h1, h2, ...). Faults were injected on the routers. Repair them so that every node "
        "can ping every other node, without breaking anything that works. Use the `run` "
        "tool to execute one shell command (ip, ifconfig, route, sysctl, iptables, tc, "
        "ping, traceroute, ...) on one machine; its answer is the new pingall result and the "
        "command's output. Interface labels (ip link show) give each port's intended role "
        "and address. Stop calling tools once every pair can ping.")

    @tool
    def run(self, machine: str, command: str) -> str:
        """Run one shell command on one machine of the network.

        Args:
            machine: The machine to run it on: a router such as "r0" or a host such as "h1".
            command: The shell command, for example "ip addr show" or "iptables -L -n".

        Returns:
            The pingall result after the command, the command's output and the steps left.
        """

    @classmethod
    def _action_of_call(cls, name: str, arguments: dict) -> dict[str, Any]:
        check_tool(cls, name)
        return {"machine": str(arguments.get("machine", "")),
                "command": str(arguments.get("command", ""))}

    @classmethod
    def _call_of_action(cls, action: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        return "run", {"machine": action["machine"], "command": action["command"]}


class K8sPolicyTools(NetArenaToolEnv):
    """``NetArena-K8sPolicy-v0``: repair NetworkPolicies with kubectl."""

    _env_id = "NetArena-K8sPolicy-v0"
    _system_prompt = (
        "You are a Kubernetes operator. NetworkPolicies of a microservice application were "
        "broken. Repair them so that exactly the intended service-to-service connections "
        "work, without breaking any that work. Use the `kubectl` tool to run one kubectl "
        "command; its answer is the connectivity check and the command's output. Stop "
        "calling tools once the connectivity matches the intent.")

    @tool
    def kubectl(self, command: str, stdin: str = "") -> str:
        """Run one kubectl command against the cluster.

        Args:
            command: The full command line, for example "kubectl get networkpolicy -A".
            stdin: Text fed to the command's standard input: the manifest for
                "kubectl apply -f -" (leave empty otherwise).

        Returns:
            The connectivity check after the command, the command's output and the steps left.
        """

    @classmethod
    def _action_of_call(cls, name: str, arguments: dict) -> dict[str, Any]:
        check_tool(cls, name)
        action = {"command": str(arguments.get("command", ""))}
        if arguments.get("stdin"):
            action["stdin"] = str(arguments["stdin"])
        return action

    @classmethod
    def _call_of_action(cls, action: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        args = {"command": action["command"]}
        if action.get("stdin"):
            args["stdin"] = action["stdin"]
        return "kubectl", args


def _json_or_text(v: str):
    """A tool argument typed as a string that may hold JSON (a list, a number)."""
    if not isinstance(v, str):
        return v
    try:
        return json.loads(v)
    except json.JSONDecodeError:
        return v


class CapacityPlanningTools(NetArenaToolEnv):
    """``NetArena-CapacityPlanning-v0`` (``interface="text"``): graph operations on a
    MALT topology and the final answer, one tool each (see ``netarena_gym.capacity_planning.commands.tools``)."""

    _env_id = "NetArena-CapacityPlanning-v0"
    _system_prompt = (
        "You are a datacenter capacity planner. The question below is about a MALT "
        "topology graph (nodes of kinds EK_SPINE_BLOCK, EK_AGG_BLOCK, EK_PACKET_SWITCH, "
        "EK_PORT, ...; RK_CONTAINS and RK_CONTROLS edges). Explore and change the graph "
        "with the tools, then call `answer` once with the result; a change must leave a "
        "valid graph. `kind` is needed only when a name is shared.")

    @tool
    def get_node(self, node: str, kind: str = "") -> str:
        """Show one node: attributes, total capacity, parents, counts of what is below it.

        Args:
            node: The node's name.
            kind: The node's kind (EK_...), only when the name is shared.

        Returns:
            The node's description and the steps left.
        """

    @tool
    def list_children(self, node: str, kind: str = "") -> str:
        """List a node's out-edges with each child's kind, name, capacity and attributes.

        Args:
            node: The node's name.
            kind: The node's kind (EK_...), only when the name is shared.

        Returns:
            One line per child and the steps left.
        """

    @tool
    def add_node(self, name: str, kind: str, parent: str, parent_kind: str = "",
                 attrs: str = "") -> str:
        """Add a node under a parent (an RK_CONTAINS edge from the parent).

        Args:
            name: The new node's name.
            kind: The new node's kind (EK_...).
            parent: The parent's name.
            parent_kind: The parent's kind, only when its name is shared.
            attrs: The new node's attributes as a JSON object, e.g. {"physical_capacity_bps": 1000}.

        Returns:
            What was added and the steps left.
        """

    @tool
    def remove_node(self, node: str, kind: str = "") -> str:
        """Remove exactly one node and its edges.

        Args:
            node: The node's name.
            kind: The node's kind (EK_...), only when the name is shared.

        Returns:
            What was removed and the steps left.
        """

    @tool
    def set_attr(self, node: str, key: str, value: str, kind: str = "") -> str:
        """Set one attribute of a node.

        Args:
            node: The node's name.
            key: The attribute's name, e.g. "physical_capacity_bps".
            value: The value (JSON: a number, a string, a list).
            kind: The node's kind (EK_...), only when the name is shared.

        Returns:
            The change and the steps left.
        """

    @tool
    def answer(self, answer: str) -> str:
        """Submit the final answer; this ends the episode.

        Args:
            answer: The answer: a number, a switch name, or a JSON list (of names, or of
                [name, capacity] pairs); anything for questions that return the graph.

        Returns:
            The verdict.
        """

    @classmethod
    def _action_of_call(cls, name: str, arguments: dict) -> dict[str, Any]:
        check_tool(cls, name)
        a = {"tool": name}
        for k, v in arguments.items():
            if k == "tool" or v in ("", None):
                continue
            a[k] = _json_or_text(v) if k in ("answer", "value", "attrs") else v
        return a

    @classmethod
    def _call_of_action(cls, action: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        args = {}
        for k, v in action.items():
            if k == "tool" or v is None:
                continue
            args[k] = v if isinstance(v, str) else json.dumps(v)
        return action["tool"], args

