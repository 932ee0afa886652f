"""``netarena-gym serve --protocol openenv``: the envs as OpenEnv servers (openenv-core 0.3).

Built with openenv-core's ``create_app``: ``POST /reset``, ``POST /step``, ``GET /state``,
``GET /schema``, ``GET /health`` and the WebSocket ``/ws`` with one env per session
(openenv-core's ``ConcurrencyConfig``: ``max_concurrent_envs`` = ``--max-sessions``,
``session_timeout`` = ``--idle-timeout``, so a session reaped for idleness frees its slot
in openenv-core as well as in the manager). Each WebSocket session opens one
:class:`~netarena_gym.serve.sessions.Session` of the server's
:class:`~netarena_gym.serve.sessions.SessionManager` at its first reset (its own env
instance, so its own Mininet names or K8s namespace on a real backend); a session once
reaped or closed stays closed: its step and status answer that it expired and its reset
is an error saying so. The stateless HTTP ``/reset`` and ``/step`` are openenv-core's: a
``/reset`` opens a session and closes it after the request, so multi-step episodes need
the WebSocket (openenv-core's ``EnvClient`` uses it); ``/step``, ``/state`` and
``/metadata`` answer without building an env or taking a slot. A refused reset argument
(level, seed, scenario) is HTTP 422 and a full server 503, each with the message.

Typed actions per task: routing ``machine`` + ``command``; K8s ``command`` + ``stdin``;
capacity planning ``tool`` + ``arguments`` (the text interface's graph operations and
``answer``) or ``code`` (the code interface). Observations carry the text, the reward, the
reward components, correctness and safety and the episode record. openenv-core's
``serialize_observation`` drops ``metadata`` on the wire, so these travel as typed fields
and :class:`NetArenaClient` puts them back into ``metadata`` on the client side.
Left out: openenv-core's MCP-over-OpenEnv actions (use ``--protocol mcp``) and its Gradio UI.
"""
from __future__ import annotations

import functools
import secrets
from typing import Any, Optional

from netarena_gym.errors import require

require("openenv.core", "serve")

from openenv.core.client_types import StepResult  # noqa: E402
from openenv.core.env_client import EnvClient  # noqa: E402
from fastapi import Request  # noqa: E402
from fastapi.responses import JSONResponse  # noqa: E402
from openenv.core.env_server import (  # noqa: E402
    Action, ConcurrencyConfig, Environment, Observation, State, create_app)
from openenv.core.env_server.types import EnvironmentMetadata  # noqa: E402
from pydantic import Field  # noqa: E402

from netarena_gym.errors import InvalidConfig, ScenarioError  # noqa: E402
from netarena_gym.eval.spec import parse_level  # noqa: E402
from netarena_gym.serve.sessions import (  # noqa: E402
    NO_EPISODE, Session, SessionLimit, SessionManager, UnknownSession, empty_record)

MAX_FIELD = 65536


# ------------------------------------------------------------------ models
class RoutingAction(Action):
    """One shell command on one machine (``ip``, ``iptables``, ``tc``, ``ping``...)."""

    machine: str = Field(..., max_length=64, description='a router "r0" or a host "h1"')
    command: str = Field(..., max_length=4096, description='e.g. "ip addr show"')


class K8sPolicyAction(Action):
    """One kubectl command line; ``stdin`` feeds ``kubectl apply -f -``."""

    command: str = Field(..., max_length=4096, description='e.g. "kubectl get netpol -A"')
    stdin: str = Field("", max_length=MAX_FIELD, description="manifest for apply -f -")


class CapacityPlanningAction(Action):
    """A graph operation (``tool`` + ``arguments``: get_node, list_children, add_node,
    remove_node, set_attr, answer) on the text interface, or ``code`` (a Python
    ``process_graph(graph)``) on the code interface."""

    tool: str = Field("", max_length=64)
    arguments: dict[str, Any] = Field(default_factory=dict)
    code: str = Field("", max_length=MAX_FIELD)


class NetArenaObservation(Observation):
    """The env's text observation with the step's accounting (all visible to the agent)."""

    text: str = Field("", description="the observation text")
    reward_components: dict[str, float] = Field(default_factory=dict)
    correct: bool = False
    safe: bool = True
    safe_compat: bool = True
    info: dict[str, Any] = Field(default_factory=dict, description="public step info")
    episode: dict[str, Any] = Field(default_factory=dict, description="the episode record")


class RoutingObservation(NetArenaObservation):
    """Routing: the pingall matrix, the command's output, the steps left."""


class K8sPolicyObservation(NetArenaObservation):
    """K8s: the connectivity check (mismatches), the command's output, the steps left."""


class CapacityPlanningObservation(NetArenaObservation):
    """MALT: the question, the tool's answer or the code's result, the steps left."""


class NetArenaState(State):
    env: str = ""
    level: Any = None
    done: bool = True


def _routing(a: RoutingAction, interface: str) -> dict:
    return {"machine": a.machine, "command": a.command}


def _k8s(a: K8sPolicyAction, interface: str) -> dict:
    return {"command": a.command, **({"stdin": a.stdin} if a.stdin else {})}


def _malt(a: CapacityPlanningAction, interface: str) -> dict:
    if interface == "code":
        return {"code": a.code}
    return {**a.arguments, "tool": a.tool}  # the tool field wins over an argument "tool"


#: env id -> (action model, observation model, action -> env action)
MODELS = {
    "NetArena-Routing-v0": (RoutingAction, RoutingObservation, _routing),
    "NetArena-K8sPolicy-v0": (K8sPolicyAction, K8sPolicyObservation, _k8s),
    "NetArena-CapacityPlanning-v0": (CapacityPlanningAction, CapacityPlanningObservation, _malt),
}


def models(env_id: str):
    if env_id not in MODELS:
        raise ValueError(f"no OpenEnv models for {env_id!r}; known: {sorted(MODELS)}")
    return MODELS[env_id]


# ------------------------------------------------------------- environment
class NetArenaOpenEnv(Environment):
    """One OpenEnv session = one :class:`Session` of the server's manager, opened by the
    first reset (openenv-core builds one of these per stateless HTTP request as well, on
    its event loop: construction takes no slot and builds nothing)."""

    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self, manager: SessionManager):
        super().__init__()
        self.manager = manager
        self.action_cls, self.obs_cls, self.to_env = models(manager.env_id)
        self.session: Session | None = None
        self.episode_id: str | None = None

    def _record(self) -> dict:
        if self.session is None:
            return empty_record(self.manager.env_id, self.manager.level)
        return self.session.record()

    def _obs(self, text: str, reward: float | None, done: bool, info: dict):
        rec = self._record()
        comps = dict(info.get("reward_components", {}))
        flags = {"correct": bool(info.get("correct", False)), "safe": bool(info.get("safe", True)),
                 "safe_compat": bool(info.get("safe_compat", True))}
        return self.obs_cls(text=text, reward=reward, done=done, reward_components=comps,
                            info=info, episode=rec, **flags,
                            metadata={"reward_components": comps, **flags, "episode": rec})

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              level: Any = None) -> NetArenaObservation:
        lvl = None if level is None else parse_level(str(level))
        if self.session is None:  # SessionLimit when the pool is full
            self.session = self.manager.open()
        text, info = self.session.reset(seed=seed, level=lvl)  # SessionExpired once closed
        self.episode_id = secrets.token_urlsafe(12)
        return self._obs(text, None, False, info)

    def step(self, action: Action, timeout_s: Optional[float] = None,
             **kwargs: Any) -> NetArenaObservation:
        if not isinstance(action, self.action_cls):
            action = self.action_cls.model_validate(action)
        if self.session is None:  # no reset yet: nothing to open or build for this answer
            return self._obs(NO_EPISODE, 0.0, True, {"error": NO_EPISODE})
        text, reward, done, info = self.session.step(action, convert=self.to_env)
        return self._obs(text, reward, done, info)

    @property
    def state(self) -> NetArenaState:
        s = self.session
        if s is None:
            return NetArenaState(episode_id=None, step_count=0, env=self.manager.env_id,
                                 level=self.manager.level, done=True)
        return NetArenaState(episode_id=self.episode_id, step_count=len(s.steps),
                             env=s.env_id, level=s.level, done=s.done)

    def get_metadata(self) -> EnvironmentMetadata:
        import gymnasium as gym

        entry = gym.spec(self.manager.env_id).entry_point
        doc = ""
        if isinstance(entry, str):
            import importlib

            mod, _, name = entry.partition(":")
            doc = (getattr(importlib.import_module(mod), name).__doc__ or "").strip()
        import netarena_gym

        return EnvironmentMetadata(name=self.manager.env_id, description=doc.split("\n")[0],
                                   version=netarena_gym.__version__)

    def close(self) -> None:
        if self.session is not None:
            self.manager.close(self.session.id)


def _client_error(status: int):
    async def handler(request: Request, exc: Exception) -> JSONResponse:
        return JSONResponse(status_code=status, content={"detail": f"netarena: {exc}"})

    return handler


def build_app(manager: SessionManager):
    """The FastAPI app for ``manager``'s env (openenv-core's ``create_app``). A refused
    argument (:class:`InvalidConfig`, :class:`ScenarioError`) is HTTP 422, a full server
    (:class:`SessionLimit`) 503 and an expired session 410, each with the message."""
    action_cls, obs_cls, _ = models(manager.env_id)
    config = ConcurrencyConfig(max_concurrent_envs=manager.max_sessions,
                               session_timeout=manager.idle_timeout or None)
    app = create_app(functools.partial(NetArenaOpenEnv, manager), action_cls, obs_cls,
                     env_name=manager.env_id, concurrency_config=config)
    for exc, status in ((InvalidConfig, 422), (ScenarioError, 422), (SessionLimit, 503),
                        (UnknownSession, 410)):
        app.add_exception_handler(exc, _client_error(status))
    return app


# ------------------------------------------------------------------- client
class NetArenaClient(EnvClient):
    """openenv-core ``EnvClient`` for one env id (``NetArenaClient.for_env(id)(url)``)."""

    env_id = ""

    @classmethod
    def for_env(cls, env_id: str) -> type["NetArenaClient"]:
        models(env_id)
        return type(f"{env_id.split('-')[1]}Client", (cls,), {"env_id": env_id})

    def _step_payload(self, action) -> dict:
        if isinstance(action, dict):
            return action
        return action.model_dump(exclude={"metadata"})

    def _parse_result(self, payload: dict) -> StepResult:
        _, obs_cls, _ = models(self.env_id)
        data = dict(payload.get("observation", {}))
        data["metadata"] = {"reward_components": data.get("reward_components", {}),
                            "correct": data.get("correct"), "safe": data.get("safe"),
                            "safe_compat": data.get("safe_compat"),
                            "episode": data.get("episode", {})}
        obs = obs_cls(**data, reward=payload.get("reward"), done=payload.get("done", False))
        return StepResult(observation=obs, reward=payload.get("reward"),
                          done=bool(payload.get("done", False)))

    def _parse_state(self, payload: dict) -> NetArenaState:
        return NetArenaState(**payload)
