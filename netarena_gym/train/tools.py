"""The envs as tool-calling environments for TRL's ``GRPOTrainer(environment_factory=...)``.

TRL's contract: the class is built with no arguments; ``reset(**row)`` receives the
dataset row and returns the text appended to the prompt; every public method other than
``reset`` and ``get_reward`` is a tool (typed arguments, Google-style docstring); an
exception raised by a tool is fed back to the model as the tool's answer; ``get_reward()``
scores the finished rollout. One instance serves one rollout at a time and is reused.

Each task's class exposes that task's atomic commands (routing: ``run(machine,
command)``; Kubernetes: ``kubectl(command, stdin)``; capacity planning: ``get_node``,
``list_children``, ``add_node``, ``remove_node``, ``set_attr`` and ``answer``); each tool
call is exactly one ``env.step`` on the text interface, so the rollout is scored by the
env's own reward, correctness and safety.
Everything that is not a tool is underscore-prefixed on purpose.
"""
from __future__ import annotations

import json
from collections import defaultdict
from typing import Any, ClassVar

import gymnasium as gym

import netarena_gym

#: components of ``info["reward_components"]`` (see ``netarena_gym.core.reward``)
ALL_COMPONENTS = ("success", "safety", "step", "invalid", "refused", "timeout", "failed",
                  "progress")


SOLVED = "Episode over: solved. Stop calling tools."
UNSOLVED = "Episode over: not solved. Stop calling tools."


class EpisodeOver(RuntimeError):
    """Raised by a tool once the episode has ended (TRL shows the message to the model)."""


class NetArenaToolEnv:
    """Base class: one episode of a NetArena env driven through tool calls.

    Subclasses define the task's tools (each calls :meth:`_act` with the env's text
    action), ``_env_id``, ``_system_prompt``, and how a tool call maps to
    the env's text action (:meth:`_action_of_call`) and back (:meth:`_call_of_action`).
    Configuration is by class attributes, so :func:`make_environment_factory` can bind
    it into a no-argument subclass as TRL requires.
    """

    _env_id: ClassVar[str] = ""
    _system_prompt: ClassVar[str] = ""
    #: keyword arguments for ``gym.make`` (besides ``level``); e.g. ``{"reward": {...}}``
    _env_kwargs: ClassVar[dict] = {}
    #: which reward components :meth:`get_reward` adds up (None: all of them)
    _components: ClassVar[tuple[str, ...] | None] = None
    _default_level: ClassVar[int | str] = 1
    #: the trainer's tool-call limit per rollout: the env's ``max_steps`` is lowered to it
    #: (None: the env's own), so an episode ends the same way in training and evaluation
    _max_calls: ClassVar[int | None] = None

    def __init__(self):
        self._envs: dict[Any, gym.Env] = {}
        self._env: gym.Env | None = None
        self._clear()

    def _clear(self) -> None:
        self._done = False
        self._totals: dict[str, float] = defaultdict(float)
        self._correct = False
        self._safe = True
        self._steps = 0
        self._calls: list[dict[str, str]] = []  # the rollout's actions, in order
        self._info: dict = {}

    # ------------------------------------------------------------- TRL API
    def reset(self, seed: int | None = None, level: int | str | None = None,
              scenario: dict | str | None = None, **_row) -> str:
        """Start the episode of this dataset row; return its first observation."""
        level = self._default_level if level is None else _level(level)
        env = self._envs.get(level)
        if env is None:
            env = self._envs[level] = make_limited_env(self._env_id, level, self._env_kwargs,
                                                       self._max_calls)
        self._env = env
        self._clear()
        options = None
        if scenario:
            options = {"scenario": json.loads(scenario) if isinstance(scenario, str) else scenario}
        obs, info = env.reset(seed=None if seed is None else int(seed), options=options)
        self._info = info
        self._correct = bool(info.get("correct", False))
        return initial_message(obs)

    def get_reward(self) -> float:
        """The env's reward summed over the episode, restricted to the selected components."""
        keep = self._components if self._components is not None else tuple(self._totals)
        return float(sum(self._totals.get(k, 0.0) for k in keep))

    # ------------------------------------------------------------- helpers
    def _act(self, action: dict[str, str]) -> str:
        if self._env is None:
            raise EpisodeOver("no episode is running (reset was not called)")
        if self._done:
            raise EpisodeOver(self._outcome())
        obs, _reward, terminated, truncated, info = self._env.step(action)
        self._info = info
        self._steps += 1
        self._calls.append(dict(action))
        for k, v in info.get("reward_components", {}).items():
            self._totals[k] += float(v)
        self._correct = bool(info["correct"])
        self._safe = bool(info["safe"])
        if terminated or truncated:
            self._done = True
            return f"{obs}\n{self._outcome()}"
        return obs

    def _outcome(self) -> str:
        return SOLVED if self._correct else UNSOLVED

    def _metrics(self) -> dict[str, Any]:
        """What the rollout did (for logging): correct, safe, steps, invalid, refused."""
        return {"correct": float(self._correct), "safe": float(self._safe),
                "steps": float(self._steps),
                "invalid": float(self._info.get("invalid", 0)),
                "refused": float(self._info.get("refused", 0)),
                "reward": self.get_reward()}

    @classmethod
    def _action_of_call(cls, name: str, arguments: dict) -> dict[str, Any]:
        """The env's text action for a tool call (used by the evaluation agent)."""
        raise NotImplementedError

    @classmethod
    def _call_of_action(cls, action: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        """The tool call (name, arguments) that performs a text action (demonstrations)."""
        raise NotImplementedError

    @classmethod
    def _tool_schemas(cls) -> list[dict]:
        """The JSON schemas of this class's tools, as the chat template renders them."""
        from transformers.utils import get_json_schema
        return [get_json_schema(getattr(cls, n)) for n in tool_names(cls)]


def make_limited_env(env_id: str, level, env_kwargs: dict | None = None,
                     max_calls: int | None = None) -> gym.Env:
    """``gym.make`` on the text interface, with ``max_steps`` lowered to ``max_calls``
    when the env would allow more (an explicit ``max_steps`` in ``env_kwargs`` wins)."""
    kw = dict(env_kwargs or {})
    env = gym.make(env_id, level=level, interface="text", **kw)
    if max_calls and "max_steps" not in kw and env.unwrapped.max_steps > max_calls:
        env.close()
        env = gym.make(env_id, level=level, interface="text", max_steps=int(max_calls), **kw)
    return env


def initial_message(observation: str) -> str:
    return "\n\nCurrent state:\n" + observation


# The tool classes keep these three as ``_`` names because TRL exposes every public method
# of an environment class as a tool; other modules use these accessors.
def system_prompt(cls) -> str:
    """The system prompt of a tool class (or instance)."""
    return cls._system_prompt


def action_of_call(cls, name: str, arguments: dict) -> dict[str, Any]:
    """The env's text action for a tool call ``name(**arguments)``."""
    return cls._action_of_call(name, arguments)


def call_of_action(cls, action: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """The tool call ``(name, arguments)`` that gives the env's text action."""
    return cls._call_of_action(action)


def tool_names(cls) -> list[str]:
    """Public methods TRL will expose as tools (same rule as GRPOTrainer)."""
    import inspect
    return sorted(n for n, _ in inspect.getmembers(cls, predicate=inspect.isfunction)
                  if n not in ("reset", "get_reward") and not n.startswith("_"))


def _level(v):
    if isinstance(v, str) and v != "compat":
        return int(v)
    return v


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

    def run(self, machine: str, command: str) -> str:
        """Run one shell command on one machine of the network.

        Args:
            machine: The machine to run it on: a router such as "r0" or a host such as "h1".
            command: The shell command, for example "ip addr show" or "iptables -L -n".

        Returns:
            The pingall result after the command, the command's output and the steps left.
        """
        return self._act({"machine": machine, "command": command})

    @classmethod
    def _action_of_call(cls, name: str, arguments: dict) -> dict[str, Any]:
        _check_tool(cls, name)
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

    def kubectl(self, command: str, stdin: str = "") -> str:
        """Run one kubectl command against the cluster.

        Args:
            command: The full command line, for example "kubectl get networkpolicy -A".
            stdin: Text fed to the command's standard input: the manifest for
                "kubectl apply -f -" (leave empty otherwise).

        Returns:
            The connectivity check after the command, the command's output and the steps left.
        """
        action = {"command": command}
        if stdin:
            action["stdin"] = stdin
        return self._act(action)

    @classmethod
    def _action_of_call(cls, name: str, arguments: dict) -> dict[str, Any]:
        _check_tool(cls, name)
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

    def get_node(self, node: str, kind: str = "") -> str:
        """Show one node: attributes, total capacity, parents, counts of what is below it.

        Args:
            node: The node's name.
            kind: The node's kind (EK_...), only when the name is shared.

        Returns:
            The node's description and the steps left.
        """
        return self._act(_drop_empty({"tool": "get_node", "node": node, "kind": kind}))

    def list_children(self, node: str, kind: str = "") -> str:
        """List a node's out-edges with each child's kind, name, capacity and attributes.

        Args:
            node: The node's name.
            kind: The node's kind (EK_...), only when the name is shared.

        Returns:
            One line per child and the steps left.
        """
        return self._act(_drop_empty({"tool": "list_children", "node": node, "kind": kind}))

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
        a = _drop_empty({"tool": "add_node", "name": name, "kind": kind, "parent": parent,
                         "parent_kind": parent_kind})
        if attrs:
            a["attrs"] = _json_or_text(attrs)
        return self._act(a)

    def remove_node(self, node: str, kind: str = "") -> str:
        """Remove exactly one node and its edges.

        Args:
            node: The node's name.
            kind: The node's kind (EK_...), only when the name is shared.

        Returns:
            What was removed and the steps left.
        """
        return self._act(_drop_empty({"tool": "remove_node", "node": node, "kind": kind}))

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
        return self._act(_drop_empty({"tool": "set_attr", "node": node, "key": key,
                                      "value": _json_or_text(value), "kind": kind}))

    def answer(self, answer: str) -> str:
        """Submit the final answer; this ends the episode.

        Args:
            answer: The answer: a number, a switch name, or a JSON list (of names, or of
                [name, capacity] pairs); anything for questions that return the graph.

        Returns:
            The verdict.
        """
        return self._act({"tool": "answer", "answer": _json_or_text(answer)})

    @classmethod
    def _action_of_call(cls, name: str, arguments: dict) -> dict[str, Any]:
        _check_tool(cls, name)
        a = {"tool": name}
        for k, v in arguments.items():
            if v in ("", None):
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


class CatalogueTools(NetArenaToolEnv):
    """Any env with a discrete catalogue (routing, K8s), driven by one tool, ``act(action)``,
    whose argument is a catalogue label (``"r0: flush filters"``, ``"frontend: inspect"``).

    The label is rendered to the episode's text action by the env's own catalogue
    (``env.unwrapped.catalogue``), so the step, its reward, correctness and safety are the
    text interface's. A label this episode lacks (masked) reaches the env as an empty text
    action, which the env answers as an invalid action, with its penalty. Bind the env id
    with :func:`make_catalogue_factory`; the labels a model may choose from come from
    :func:`catalogue_labels`."""

    def act(self, action: str) -> str:
        """Run one action of the task's catalogue.

        Args:
            action: The action's label, for example "r0: flush filters".

        Returns:
            The env's answer: the connectivity check, the command's output and the steps left.
        """
        if self._env is None:
            raise EpisodeOver("no episode is running (reset was not called)")
        cat = self._env.unwrapped.catalogue
        for i, e in enumerate(cat.entries):
            if e is not None and cat.mask[i] and e.label == action:
                return self._act(dict(e.action))
        return self._act({})


def catalogue_labels(env_id: str, *, level=1, seeds=range(1_000_000, 1_000_020)) -> list[str]:
    """The catalogue labels the episodes of ``seeds`` offer, in catalogue (slot) order."""
    env = gym.make(env_id, level=level, interface="text")
    slots: dict[int, str] = {}
    try:
        for s in seeds:
            env.reset(seed=int(s))
            cat = env.unwrapped.catalogue
            for i, e in enumerate(cat.entries):
                if e is not None and cat.mask[i]:
                    slots.setdefault(i, e.label)
    finally:
        env.close()
    return [slots[i] for i in sorted(slots)]


def catalogue_prompt(task_prompt: str) -> str:
    """A task's system prompt with its tool sentences replaced by the ``act`` tool's."""
    head = task_prompt.split(" Use the `", 1)[0]
    return (head + " Use the `act` tool to run one action of the task's catalogue, named by "
            "its label; its answer is the new connectivity check and the action's output.")


def make_catalogue_factory(env_id: str, *, components=None, env_kwargs: dict | None = None,
                           default_level: int | str = 1,
                           max_calls: int | None = None) -> type[CatalogueTools]:
    """A no-argument :class:`CatalogueTools` subclass for ``environment_factory`` (the
    arguments as in :func:`make_environment_factory`)."""
    task = tool_class(env_id)
    base = make_environment_factory(env_id, components=components, env_kwargs=env_kwargs,
                                    default_level=default_level, max_calls=max_calls)
    return type(f"{task.__name__.removesuffix('Tools')}CatalogueTools", (CatalogueTools,),
                {k: getattr(base, k) for k in ("_components", "_env_kwargs", "_default_level",
                                                "_max_calls")}
                | {"_env_id": env_id, "_system_prompt": catalogue_prompt(task._system_prompt),
                   "__module__": CatalogueTools.__module__, "__doc__": CatalogueTools.__doc__})


def _drop_empty(d: dict) -> dict:
    return {k: v for k, v in d.items() if v not in ("", None)}


def _check_tool(cls, name: str) -> None:
    if name not in tool_names(cls):
        raise ValueError(f"unknown tool {name!r}; tools: {', '.join(tool_names(cls))}")


#: env id -> tool class (a class is usable once its env id is registered)
TOOL_CLASSES: dict[str, type[NetArenaToolEnv]] = {
    RoutingTools._env_id: RoutingTools,
    K8sPolicyTools._env_id: K8sPolicyTools,
    CapacityPlanningTools._env_id: CapacityPlanningTools,
}


def tool_class(env_id: str) -> type[NetArenaToolEnv]:
    if env_id not in TOOL_CLASSES:
        raise ValueError(f"no tool environment for {env_id!r}; known: {sorted(TOOL_CLASSES)}")
    if env_id not in netarena_gym.ENV_IDS:
        raise ValueError(f"{env_id!r} is not registered in this netarena_gym "
                         f"(registered: {sorted(netarena_gym.ENV_IDS)})")
    return TOOL_CLASSES[env_id]


def make_environment_factory(env_id: str, *, components: tuple[str, ...] | list[str] | None = None,
                             env_kwargs: dict | None = None,
                             default_level: int | str = 1,
                             max_calls: int | None = None) -> type[NetArenaToolEnv]:
    """A no-argument class for ``environment_factory`` with the configuration bound in.

    ``components`` selects which reward components ``get_reward`` adds up (None: all);
    ``env_kwargs`` go to ``gym.make`` (``reward=`` weights, ``max_steps``, ``history``...);
    ``max_calls`` (the trainer's ``max_tool_calling_iterations``) lowers the env's
    ``max_steps`` to it where the env allows more.
    """
    base = tool_class(env_id)
    if components is not None:
        bad = sorted(set(components) - set(ALL_COMPONENTS))
        if bad:
            raise ValueError(f"unknown reward components {bad}; known: {list(ALL_COMPONENTS)}")
        components = tuple(components)
    kwargs = dict(env_kwargs or {})
    for k in ("level", "interface"):
        if k in kwargs:
            raise ValueError(f"{k!r} is set per dataset row / fixed to text, not in env_kwargs")
    return type(base.__name__, (base,), {"_components": components, "_env_kwargs": kwargs,
                                         "_default_level": default_level,
                                         "_max_calls": max_calls,
                                         "__module__": base.__module__,
                                         "__doc__": base.__doc__})
