"""``netarena-gym serve-a2a``: A2A servers for AgentBeats-style evaluation.

**Evaluator** (a "green" agent): accepts upstream's request shape, one user message whose
text is JSON ``{"participants": {role: url}, "config": {...}}`` with exactly one
participant, evaluates that participant on a NetArena env through :class:`A2AAgent`, and
streams: a task; status ``working`` "Starting assessment." with the request; per episode a
``DataPart`` with the episode's result (one artifact, appended to) and a status ``Query n
processed by agent: "role"``; a final ``DataPart`` with ``avg_correctness``, ``avg_safety``,
``avg_iterations`` (upstream's definitions) and our summary, ``last_chunk``; then
``completed`` (``failed`` with "Agent error: ..." on an exception).

``config`` keys: ``env`` (default ``NetArena-Routing-v0``), ``level`` or ``levels`` (default
1; at most 8, each a level of the env), ``num_queries`` (episodes per level, 1..1000,
default 1), ``seed`` (0..2**31-1, default 0), ``max_iterations`` (the step budget, 1..1000;
default: the env's), ``prompt_type`` (``zeroshot_base``, ``zeroshot_cot``,
``fewshot_base``, ``fewshot_cot`` or our style names), ``backend`` (``sim``; a real backend
only when the server's operator allowed it: ``backends``), ``env_options`` (extra
``gym.make`` keywords, checked against the env's options; those that choose a backend, a
sandbox, a cluster or a key of its own here are refused), ``timeout`` (seconds per agent
call, 0 < t <= 3600, default 60); upstream's routing keys ``num_switches`` (1..8) and
``num_hosts_per_subnet`` (1..4) set the routing topology; ``output_dir``,
``benchmark_path`` and ``regenerate_benchmark`` are accepted and ignored (episodes are
generated from seeds). Any other key, or a value of the wrong type or out of range, is a
JSON-RPC ``InvalidParamsError`` naming it.

**Agent** (``--agent``, a "purple" agent): serves any netarena agent (the expert, an LLM,
``module:Class``) for one env; one agent instance per A2A ``context_id`` (a session of
serve's :class:`~netarena_gym.serve.sessions.SessionPool`: its limit, 256 by default, is a
JSON-RPC ``InvalidRequestError``; idle conversations are closed after 900 s), replying with
the action as bare JSON. It reads the observation from the message metadata when our adapter
sent it, else from the text; metadata ``netarena`` that is not an object, or whose
``observation``, ``episode`` or ``step`` has the wrong type, is an ``InvalidParamsError``.
"""
from __future__ import annotations

import asyncio
import json
import math

import gymnasium as gym
from a2a.helpers import new_data_part, new_task_from_user_message, new_text_message
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.tasks import TaskUpdater
from a2a.types import InvalidParamsError, InvalidRequestError, TaskState
from google.protobuf.json_format import MessageToDict

import netarena_gym
from netarena_gym.a2a.common import ServerThread, build_app, make_card
from netarena_gym.agents.episode import jsonable
from netarena_gym.eval.spec import EvalSpec, parse_level
from netarena_gym.eval.validate import (UsageError, check_env_builds, check_env_options,
                                        env_class)
from netarena_gym.serve.sessions import PooledSession, SessionLimit, SessionPool

PROMPT_TYPES = {"zeroshot_base": "zeroshot", "zeroshot_cot": "cot", "fewshot_base": "fewshot",
                "fewshot_cot": "fewshot_cot", "zeroshot": "zeroshot", "cot": "cot",
                "fewshot": "fewshot"}
_CONFIG_KEYS = {"env", "level", "levels", "num_queries", "seed", "max_iterations",
                "prompt_type", "backend", "env_options", "timeout", "num_switches",
                "num_hosts_per_subnet", "output_dir", "benchmark_path", "regenerate_benchmark",
                "agent_client_configs"}


def parse_request(text: str) -> tuple[str, str, dict]:
    """``(role, url, config)`` from upstream's request text; InvalidParamsError otherwise."""
    try:
        req = json.loads(text)
    except json.JSONDecodeError as e:
        raise InvalidParamsError(f"the request must be JSON: {e}") from None
    if not isinstance(req, dict) or not isinstance(req.get("participants"), dict):
        raise InvalidParamsError('the request needs "participants": {role: url}')
    parts = req["participants"]
    if len(parts) != 1:
        raise InvalidParamsError(f"exactly one participant is evaluated, got {len(parts)}")
    role, url = next(iter(parts.items()))
    if not isinstance(url, str) or not url.startswith(("http://", "https://")):
        raise InvalidParamsError(f"participant {role!r} needs an http(s) URL")
    config = req.get("config") or {}
    if not isinstance(config, dict):
        raise InvalidParamsError('"config" must be an object')
    unknown = set(config) - _CONFIG_KEYS
    if unknown:
        raise InvalidParamsError(f"unknown config keys {sorted(unknown)}")
    return role, url, config


#: the env options a remote requester may not set: they pick a real backend, a sandbox or a
#: cluster (the operator's business), or have a config key of their own here
REFUSED_ENV_OPTIONS = {"backend": "backend", "unsafe_sandbox": None, "python_guard": None,
                       "limits": None, "kubeconfig": None, "namespace": None,
                       "agent_user": None, "render_mode": None, "interface": None,
                       "level": "levels", "max_steps": "max_iterations"}
MAX_QUERIES, MAX_LEVELS, MAX_ITERATIONS, MAX_TIMEOUT = 1000, 8, 1000, 3600.0


def _show(v) -> str:
    if isinstance(v, int) and v.bit_length() > 256:
        return "an integer of more than 70 digits"
    try:
        text = json.dumps(v)
    except (TypeError, ValueError):  # not JSON, or an int too long to print
        text = type(v).__name__
    return text if len(text) <= 60 else text[:57] + "..."


def _int(config: dict, key: str, default, lo: int, hi: int, *, optional: bool = False):
    v = config.get(key, default)
    if optional and v is None:
        return None
    if isinstance(v, float) and v.is_integer() and abs(v) <= 2 ** 53:
        v = int(v)
    if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
        raise InvalidParamsError(f'config "{key}" must be an integer in {lo}..{hi}'
                                 f'{" or null" if optional else ""}, got {_show(v)}')
    return v


def _levels(env: str, config: dict) -> tuple:
    raw = config.get("levels", config.get("level", 1))
    raw = raw if isinstance(raw, list) else [raw]
    valid = tuple(env_class(env).levels)
    if not 1 <= len(raw) <= MAX_LEVELS:
        raise InvalidParamsError(f'config "levels" must hold 1..{MAX_LEVELS} levels')
    out = []
    for lv in raw:
        v = parse_level(lv) if isinstance(lv, (int, str)) and not isinstance(lv, bool) else None
        if v not in valid:
            raise InvalidParamsError(f"invalid level {_show(lv)} for {env}; valid: "
                                     f"{', '.join(map(str, valid))}")
        out.append(v)
    return tuple(out)


def _env_options(env: str, config: dict) -> dict:
    opts = config.get("env_options")
    if opts is None:
        return {}
    if not isinstance(opts, dict):
        raise InvalidParamsError(f'config "env_options" must be an object, got {_show(opts)}')
    for key in opts:
        if key in REFUSED_ENV_OPTIONS:
            own = REFUSED_ENV_OPTIONS[key]
            raise InvalidParamsError(f'env_options may not set {key!r}' + (
                f'; use config "{own}"' if own else " (the server operator's choice)"))
    try:
        return check_env_options(env, opts.items(), own_flags={})
    except UsageError as e:
        raise InvalidParamsError(str(e).replace("argument --env-option", 'config "env_options"'))


def spec_from_config(url: str, config: dict, backends: tuple = ("sim",)) -> EvalSpec:
    """The evaluation a request asks for, every value checked (type and range) before
    anything runs; ``backends``: the backends the server's operator allows remote
    requesters to pick (a real one starts Mininet or reaches a cluster)."""
    env = config.get("env", "NetArena-Routing-v0")
    if not isinstance(env, str) or env not in netarena_gym.ENV_IDS:
        raise InvalidParamsError(f"unknown env {_show(env)}; registered: "
                                 f"{', '.join(sorted(netarena_gym.ENV_IDS))}")
    levels = _levels(env, config)
    prompt_type = config.get("prompt_type", "zeroshot_base")
    if not isinstance(prompt_type, str) or prompt_type not in PROMPT_TYPES:
        raise InvalidParamsError(f"unknown prompt_type {_show(prompt_type)}; valid: "
                                 f"{', '.join(PROMPT_TYPES)}")
    backend = config.get("backend", "sim")
    if not isinstance(backend, str) or backend not in backends:
        raise InvalidParamsError(f"backend {_show(backend)} is not offered by this server; "
                                 f"it allows: {', '.join(backends)}")
    timeout = config.get("timeout", 60)
    if (isinstance(timeout, bool) or not isinstance(timeout, (int, float))
            or not math.isfinite(timeout) or not 0 < timeout <= MAX_TIMEOUT):
        raise InvalidParamsError(f'config "timeout" must be seconds in (0, {MAX_TIMEOUT:g}], '
                                 f"got {_show(timeout)}")
    env_options = _env_options(env, config)
    if "num_switches" in config or "num_hosts_per_subnet" in config:
        if env != "NetArena-Routing-v0":
            raise InvalidParamsError("num_switches and num_hosts_per_subnet set the "
                                     "routing topology: NetArena-Routing-v0 only")
        n_sub = _int(config, "num_switches", 2, 1, 8)
        hosts = _int(config, "num_hosts_per_subnet", 1, 1, 4)
        env_options.setdefault("topology", {"routers": [1, 1], "subnets": [n_sub, n_sub],
                                            "hosts": hosts})
    try:
        return EvalSpec(env=env, levels=levels,
                        episodes=_int(config, "num_queries", 1, 1, MAX_QUERIES),
                        seed=_int(config, "seed", 0, 0, 2 ** 31 - 1), agent="a2a",
                        agent_options={"url": url, "prompt": PROMPT_TYPES[prompt_type],
                                       "timeout": float(timeout)},
                        backend=backend,
                        max_steps=_int(config, "max_iterations", None, 1, MAX_ITERATIONS,
                                       optional=True),
                        env_options=env_options)
    except (ValueError, TypeError) as e:
        raise InvalidParamsError(str(e)) from None


def check_builds(spec: EvalSpec) -> None:
    """The option values checked by the env itself, built once on the simulator (a real
    backend is not started for this); InvalidParamsError with the env's message."""
    kwargs = {**spec.env_kwargs(spec.levels[0]), "backend": "sim"}
    try:
        check_env_builds(spec.env, own_flags={}, **kwargs).close()
    except UsageError as e:
        raise InvalidParamsError(str(e).replace("argument --env-option", "config")) from None


def episode_result(rec: dict, role: str) -> dict:
    """One query's result, with upstream's field names plus ours."""
    from netarena_gym.agents.summary import upstream_iterations

    return {"agent_info": role, "key": rec["key"], "env": rec["env"], "level": rec["level"],
            "seed": rec["seed"], "error_type": rec.get("category"),
            "error_detail": (rec.get("scenario") or {}).get("faults"),
            "success": rec["correct"], "safe": rec["safe_compat"], "safe_per_pair": rec["safe"],
            "iterations": upstream_iterations(rec), "steps": rec["steps"],
            "errors": [e["message"] for e in rec.get("errors", [])]}


class EvaluatorExecutor(AgentExecutor):
    def __init__(self, out: str | None = None, backends: tuple = ("sim",)):
        self.out = out
        self.backends = tuple(backends)

    async def execute(self, context: RequestContext, event_queue) -> None:
        text = context.get_user_input()
        role, url, config = parse_request(text)
        spec = spec_from_config(url, config, self.backends)
        await asyncio.to_thread(check_builds, spec)
        task = context.current_task or new_task_from_user_message(context.message)
        await event_queue.enqueue_event(task)
        up = TaskUpdater(event_queue, task.id, task.context_id)
        await up.update_status(TaskState.TASK_STATE_WORKING, new_text_message(
            "Starting assessment.\n" + text, context_id=task.context_id, task_id=task.id))
        loop = asyncio.get_running_loop()
        artifact_id = f"results-{task.id}"
        count = [0]

        def on_record(rec: dict) -> None:  # runs in the worker thread
            count[0] += 1
            first = count[0] == 1
            fut = asyncio.run_coroutine_threadsafe(self._emit(
                up, artifact_id, episode_result(rec, role), first, count[0], role,
                task), loop)
            fut.result()

        from netarena_gym.eval.run import evaluate

        try:
            out = f"{self.out}/{task.id}" if self.out else None
            summary = await asyncio.to_thread(evaluate, spec, out=out, progress=False,
                                              on_record=on_record)
        except Exception as e:
            await up.failed(new_text_message(f"Agent error: {type(e).__name__}: {e}",
                                              context_id=task.context_id, task_id=task.id))
            return
        up_sum = summary["upstream"]
        final = {"avg_correctness": up_sum["avg_correctness"], "avg_safety": up_sum["avg_safety"],
                 "avg_iterations": up_sum["avg_iterations"], "score": up_sum["score"],
                 "participant": role, "summary": {k: v for k, v in summary.items()
                                                  if k not in ("by_category",)}}
        await up.add_artifact([new_data_part(json.loads(json.dumps(final, default=str)))],
                              artifact_id=artifact_id, append=True, last_chunk=True)
        await up.complete()

    @staticmethod
    async def _emit(up, artifact_id, result, first, n, role, task) -> None:
        await up.add_artifact([new_data_part(json.loads(json.dumps(result, default=str)))],
                              artifact_id=artifact_id, name="results" if first else None,
                              append=not first)
        await up.update_status(TaskState.TASK_STATE_WORKING, new_text_message(
            f'Query {n} processed by agent: "{role}"', context_id=task.context_id,
            task_id=task.id))

    async def cancel(self, context, event_queue) -> None:
        raise NotImplementedError("cancelling an assessment is not supported")


class AgentSession(PooledSession):
    """One conversation's agent instance (a session of the server's :class:`SessionPool`)."""

    def __init__(self, sid: str, make):
        super().__init__(sid)
        self._make = make
        self.agent = None
        self.steps = 0

    def start(self) -> None:
        self.agent = self._make()
        if hasattr(self.agent, "reset"):
            self.agent.reset()

    def act(self, observation: str, step: int):
        with self.lock:
            if step == 0 and self.steps:
                self.agent.reset()  # a new episode in a reused conversation
            action = self.agent.act(observation, {})
            self.steps += 1
            return action

    def close(self) -> None:
        agent, self.agent = self.agent, None
        if agent is not None and hasattr(agent, "close"):
            agent.close()


def read_metadata(msg) -> tuple[str | None, str | None, int]:
    """``(observation, episode, step)`` from the message's ``netarena`` metadata (what our
    adapter sends); InvalidParamsError for a value of the wrong type."""
    meta = MessageToDict(msg.metadata).get("netarena", {}) if msg is not None else {}
    if not isinstance(meta, dict):
        raise InvalidParamsError('metadata "netarena" must be an object')
    obs, episode, step = meta.get("observation"), meta.get("episode"), meta.get("step", -1)
    if obs is not None and not isinstance(obs, str):
        raise InvalidParamsError('metadata "netarena.observation" must be a string')
    if episode is not None and not (isinstance(episode, str) and len(episode) <= 256):
        raise InvalidParamsError('metadata "netarena.episode" must be a string '
                                 "(at most 256 characters)")
    # protobuf's Struct holds every number as a double: 3 arrives as 3.0
    if (isinstance(step, bool) or not isinstance(step, (int, float))
            or not (isinstance(step, int) or step.is_integer()) or not -1 <= step < 2 ** 31):
        raise InvalidParamsError('metadata "netarena.step" must be an integer >= 0 '
                                 f"(-1: unknown), got {_show(step)}")
    return obs, episode, int(step)


class AgentServerExecutor(AgentExecutor):
    """Serves a netarena agent: one instance per conversation (the adapter's episode id,
    else the A2A ``context_id``), held in a :class:`SessionPool` (its limit, idle timeout
    and close)."""

    def __init__(self, agent_spec: str, env_id: str, options: dict | None = None, *,
                 max_sessions: int = 256, idle_timeout: float | None = 900.0):
        from netarena_gym.agents import make_agent

        self.env = gym.make(env_id)  # text interface: the agent's prompts and keys
        self.sessions = SessionPool(
            lambda sid: AgentSession(sid, lambda: make_agent(agent_spec, self.env,
                                                             options=options)),
            max_sessions=max_sessions, idle_timeout=idle_timeout)

    async def execute(self, context: RequestContext, event_queue) -> None:
        obs, episode, step = read_metadata(context.message)
        obs = obs or context.get_user_input()
        cid = episode or context.context_id or "default"
        try:
            session = await asyncio.to_thread(self.sessions.for_key, cid)
        except SessionLimit as e:
            raise InvalidRequestError(str(e)) from None
        action = await asyncio.to_thread(session.act, obs, step)
        reply = action if isinstance(action, str) else json.dumps(jsonable(action))
        await event_queue.enqueue_event(new_text_message(reply, context_id=context.context_id))

    async def cancel(self, context, event_queue) -> None:
        raise NotImplementedError

    def close(self) -> None:
        self.sessions.close_all()
        self.env.close()


def evaluator_app(url: str, out: str | None = None, backends: tuple = ("sim",)):
    """``backends``: those a requester may pick (default the simulator only)."""
    card = make_card("NetArena Evaluation Agent",
                     "Evaluates one A2A agent on NetArena envs (routing, capacity planning, "
                     "Kubernetes policy): correctness, safety, latency.", url,
                     "netarena_eval", "NetArena evaluation", modes=("text", "data"))
    return build_app(EvaluatorExecutor(out, backends), card)


def agent_app(agent_spec: str, env_id: str, url: str, options: dict | None = None, *,
              max_sessions: int = 256, idle_timeout: float | None = 900.0):
    card = make_card(f"netarena {agent_spec} agent for {env_id}",
                     f"Answers NetArena {env_id} observations with one action as JSON.", url,
                     "netarena_act", "NetArena operator")
    executor = AgentServerExecutor(agent_spec, env_id, options, max_sessions=max_sessions,
                                   idle_timeout=idle_timeout)
    executor.sessions.start_reaper()
    app = build_app(executor, card)
    app.state.netarena_sessions = executor.sessions
    return app


def _serve(app_factory, host: str, port: int, card_url: str | None) -> None:
    import uvicorn

    url = card_url or f"http://{host}:{port}"
    print(f"serving A2A on {url}", flush=True)
    uvicorn.run(app_factory(url), host=host, port=port, log_level="info")


def serve_evaluator(host: str = "127.0.0.1", port: int = 9999, card_url: str | None = None,
                    out: str | None = None, backends: tuple = ("sim",)) -> None:
    _serve(lambda url: evaluator_app(url, out, backends), host, port, card_url)


def serve_agent(agent_spec: str, env_id: str, host: str = "127.0.0.1", port: int = 9999,
                options: dict | None = None, card_url: str | None = None) -> None:
    _serve(lambda url: agent_app(agent_spec, env_id, url, options), host, port, card_url)


__all__ = ["ServerThread", "agent_app", "evaluator_app", "parse_request", "serve_agent",
           "serve_evaluator", "spec_from_config"]
