"""One session pool for every server (OpenEnv, MCP, A2A).

:class:`SessionPool` is the one place that hands out session ids (``secrets.token_urlsafe``:
nothing about the env, the level or the scenario is in them), binds a client's own key (an
MCP transport session, an A2A ``context_id``) to a session, enforces ``max_sessions``,
closes sessions idle for longer than ``idle_timeout`` and closes every session it opened on
:meth:`SessionPool.close_all`. It is thread-safe (one lock; session work runs outside it,
so a slow real backend never blocks other sessions). What a session holds is the pool's
``factory``'s business: :class:`SessionManager` is the pool of env sessions (one
:class:`Session`, one env instance: real backends therefore get their own Mininet names and
their own K8s namespace per session, exactly as two in-process envs would); the A2A agent
server pools agent instances in the same class.

What a client sees of an episode is filtered here, once for every server: the observation
text, the reward and its components, correctness and safety, and the episode record (the
agent's own actions, rewards and outcome). The env's ``info["scenario"]`` (the faults with
their parameters), the task's ``info["extra"]`` (ground truth such as the MALT verdict
details) and the expert are never passed on.
"""
from __future__ import annotations

import secrets
import threading
import time
from typing import Any, Callable

import gymnasium as gym

from netarena_gym.agents.episode import jsonable
from netarena_gym.errors import InvalidConfig

#: the ``info`` fields a client may see (everything else stays on the server)
PUBLIC_INFO = ("correct", "safe", "safe_compat", "steps", "violations", "loss_pct",
               "broken_pairs", "newly_broken", "command_kind", "command_status", "invalid",
               "refused", "timeouts", "reward_components")
OVER = "netarena: the episode is over; call reset to start a new one"
NO_EPISODE = "netarena: no episode is running; call reset first"
EXPIRED = ("netarena: this session expired (closed, or idle for longer than the server's "
           "idle timeout); open a new session")


class SessionLimit(RuntimeError):
    """The server already holds ``max_sessions`` sessions."""


class UnknownSession(KeyError):
    """No live session has this id (never opened, closed, or reaped for idleness)."""

    def __str__(self) -> str:  # KeyError would quote the id; say what happened instead
        return "unknown or expired session"


class SessionExpired(UnknownSession):
    """A request reached a session that was closed (reaped for idleness, or closed by the
    server): it stays closed, so nothing is built or run in it again."""

    def __str__(self) -> str:
        return EXPIRED


def empty_record(env_id: str, level: Any) -> dict:
    """The episode record of a session in which no step was played."""
    return {"env": env_id, "level": jsonable(level), "seed": None, "steps": [], "n_steps": 0,
            "total_reward": 0.0, "done": True, "correct": False, "safe": True,
            "safe_compat": True}


def public_info(info: dict) -> dict:
    return {k: jsonable(info[k]) for k in PUBLIC_INFO if k in info}


class PooledSession:
    """What :class:`SessionPool` needs of a session: its id, the client key bound to it, a
    lock held while a request runs in it, when it was last used; ``start`` and ``close``."""

    def __init__(self, sid: str):
        self.id = sid
        self.key: str | None = None  # the client's key bound to it (SessionPool.for_key)
        self.lock = threading.RLock()  # one request at a time per session
        self.last_used = time.monotonic()

    def start(self) -> None:
        """The slow part of opening (make the env or the agent), outside the pool's lock."""

    def close(self) -> None:
        """Release what the session holds."""


class Session(PooledSession):
    """One client's env and its current episode, as the servers present it."""

    def __init__(self, sid: str, env_id: str, level: Any, env_options: dict,
                 make: Callable[..., gym.Env] | None = None):
        super().__init__(sid)
        self.env_id = env_id
        self.level = level
        self.env_options = dict(env_options)
        self._make = make or gym.make
        self.env: gym.Env | None = None
        self.done = True
        self.seed: int | None = None
        self.seed_set = False  # a reset happened (an episode ran or runs)
        self.steps: list[dict] = []
        self.last_observation = ""
        self.last_info: dict = {}
        self.total_reward = 0.0
        self.closed = False  # once closed (by the client, the server or the reaper), for good

    # ----------------------------------------------------------------- env
    def _ensure_env(self, level: Any) -> gym.Env:
        if self.closed:  # a reaped session must not build an env that nothing would close
            raise SessionExpired(self.id)
        if self.env is not None and level == self.level:
            return self.env
        new = self._make(self.env_id, level=level, render_mode="ansi", **self.env_options)
        if self.env is not None:  # replaced only once the new one exists (bad level: kept)
            self.env.close()
            self.seed_set, self.done = False, True
        self.env, self.level = new, level
        return self.env

    @property
    def interface(self) -> str:
        env = self._ensure_env(self.level)
        return env.unwrapped.interface

    def reset(self, seed: int | None = None, level: Any = None) -> tuple[str, dict]:
        """A new episode; a seed that is not an integer >= 0 is :class:`InvalidConfig`
        (what every protocol turns into its own invalid-argument answer); a closed session
        raises :class:`SessionExpired` (its message says so)."""
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)
                                 or seed < 0):
            raise InvalidConfig(f"seed must be an integer >= 0 or null, got {seed!r}")
        with self.lock:
            self.last_used = time.monotonic()
            env = self._ensure_env(self.level if level is None else level)
            obs, info = env.reset(seed=None if seed is None else int(seed))
            self.seed, self.seed_set = seed, True
            self.done = False
            self.steps = []
            self.total_reward = 0.0
            self.last_observation = str(obs)
            self.last_info = public_info(info)
            return self.last_observation, self.last_info

    def step(self, action: Any, convert: Callable[[Any, str], Any] | None = None
             ) -> tuple[str, float, bool, dict]:
        """``(observation, reward, done, public_info)``; stepping with no live episode or in
        a closed session answers an error text (the episode stays over), never raises.
        ``convert(action, interface)``, when given, turns a protocol's action into the
        env's (it needs the live env's interface, so it runs only when there is one)."""
        with self.lock:
            self.last_used = time.monotonic()
            if self.closed or self.env is None or self.done:
                text = EXPIRED if self.closed else OVER if self.seed_set else NO_EPISODE
                return text, 0.0, True, dict(self.last_info, error=text)
            if convert is not None:
                action = convert(action, self.env.unwrapped.interface)
            obs, reward, terminated, truncated, info = self.env.step(action)
            self.done = bool(terminated or truncated)
            self.last_observation = str(obs)
            self.last_info = public_info(info)
            self.total_reward += float(reward)
            self.steps.append({"action": jsonable(action), "reward": float(reward),
                               "reward_components": self.last_info.get("reward_components", {}),
                               "command_kind": info.get("command_kind"),
                               "correct": bool(info.get("correct")),
                               "safe": bool(info.get("safe")),
                               "terminated": bool(terminated), "truncated": bool(truncated)})
            return self.last_observation, float(reward), self.done, self.last_info

    def status(self) -> str:
        """The grader-visible state as the agent may see it: the pingall matrix or the
        connectivity mismatches (the env's ANSI render), or the last observation."""
        with self.lock:
            self.last_used = time.monotonic()
            if self.closed:
                return EXPIRED
            if self.env is None or not self.seed_set:
                return NO_EPISODE
            return str(self.env.render() or self.last_observation)

    def record(self) -> dict:
        """The episode so far: the agent's actions, rewards and outcome (no scenario)."""
        with self.lock:
            info = self.last_info
            return {**empty_record(self.env_id, self.level), "seed": self.seed,
                    "steps": list(self.steps), "n_steps": len(self.steps),
                    "total_reward": self.total_reward, "done": self.done,
                    "correct": bool(info.get("correct", False)),
                    "safe": bool(info.get("safe", True)),
                    "safe_compat": bool(info.get("safe_compat", True))}

    def start(self) -> None:
        """Called by the pool once the session holds its slot: a bad option fails here,
        not at the first reset."""
        with self.lock:
            self._ensure_env(self.level)

    def close(self) -> None:
        with self.lock:
            self.closed = True
            if self.env is not None:
                env, self.env = self.env, None
                env.close()
            self.done = True


class SessionPool:
    """Sessions of one server: ids, client keys, a limit, an idle timeout, clean close.

    ``factory(sid)`` builds a :class:`PooledSession` cheaply (under the pool's lock); its
    ``start()`` runs outside the lock, and a failure there frees the slot."""

    def __init__(self, factory: Callable[[str], PooledSession], *, max_sessions: int = 8,
                 idle_timeout: float | None = 900.0):
        if max_sessions < 1:
            raise ValueError("max_sessions must be >= 1")
        self._factory = factory
        self.max_sessions = int(max_sessions)
        self.idle_timeout = None if idle_timeout is None else float(idle_timeout)
        self._sessions: dict[str, Any] = {}
        self._by_key: dict[str, str] = {}
        self._lock = threading.Lock()
        self._key_lock = threading.Lock()  # one open per key at a time
        self._reaper: threading.Thread | None = None
        self._stop = threading.Event()

    def __len__(self) -> int:
        with self._lock:
            return len(self._sessions)

    def ids(self) -> list[str]:
        """The live session ids (for audits and admin views)."""
        with self._lock:
            return list(self._sessions)

    def open(self, key: str | None = None):
        self.reap()
        with self._lock:
            if len(self._sessions) >= self.max_sessions:
                raise SessionLimit(f"the server holds its limit of {self.max_sessions} "
                                   "sessions; close one or try later")
            sid = secrets.token_urlsafe(16)
            s = self._factory(sid)
            s.key = key
            self._sessions[sid] = s
            if key is not None:
                self._by_key[key] = sid
        try:
            s.start()
        except BaseException:
            self.close(sid)
            raise
        return s

    def get(self, sid: str):
        with self._lock:
            s = self._sessions.get(sid)
        if s is None:
            raise UnknownSession(sid)
        s.last_used = time.monotonic()
        return s

    def for_key(self, key: str):
        """The live session bound to the client's ``key``, opened on first use (and
        again after it was reaped or closed). Raises :class:`SessionLimit` when full.
        Requests of open sessions never wait for another key's (slow) open."""
        found = self._bound(key)
        if found is not None:
            return found
        with self._key_lock:  # two first requests of one key open one session
            return self._bound(key) or self.open(key)

    def _bound(self, key: str):
        with self._lock:
            sid = self._by_key.get(key)
        if sid is None:
            return None
        try:
            return self.get(sid)
        except UnknownSession:  # closed since
            return None

    def _pop(self, sid: str):
        """Remove ``sid`` and its key binding (caller holds ``_lock``)."""
        s = self._sessions.pop(sid, None)
        if s is not None and s.key is not None and self._by_key.get(s.key) == sid:
            del self._by_key[s.key]
        return s

    def close(self, sid: str) -> None:
        with self._lock:
            s = self._pop(sid)
        if s is not None:
            s.close()

    def close_key(self, key: str) -> None:
        """Close the session bound to the client's ``key`` (its transport session ended);
        nothing when none is."""
        with self._lock:
            sid = self._by_key.get(key)
        if sid is not None:
            self.close(sid)

    def close_all(self) -> None:
        self._stop.set()
        with self._lock:
            sessions = list(self._sessions.values())
            self._sessions, self._by_key = {}, {}
        for s in sessions:
            s.close()

    def reap(self) -> list[str]:
        """Close sessions idle for longer than ``idle_timeout``; returns their ids."""
        if self.idle_timeout is None:
            return []
        now = time.monotonic()
        with self._lock:
            stale = [(sid, s) for sid, s in self._sessions.items()
                     if now - s.last_used > self.idle_timeout]
        reaped = []
        for sid, s in stale:
            if not s.lock.acquire(blocking=False):
                continue  # a request is running in it: not idle
            try:
                with self._lock:
                    self._pop(sid)
                s.close()
                reaped.append(sid)
            finally:
                s.lock.release()
        return reaped

    def start_reaper(self, interval: float | None = None) -> None:
        """Reap in a daemon thread every ``interval`` seconds (default: timeout / 4)."""
        if self.idle_timeout is None or self._reaper is not None:
            return
        every = interval or max(1.0, self.idle_timeout / 4)

        def loop():
            while not self._stop.wait(every):
                self.reap()

        self._reaper = threading.Thread(target=loop, daemon=True, name="netarena-reaper")
        self._reaper.start()


class SessionManager(SessionPool):
    """The pool of env sessions of one server (one :class:`Session` per client)."""

    def __init__(self, env_id: str, *, level: Any = 1, env_options: dict | None = None,
                 max_sessions: int = 8, idle_timeout: float | None = 900.0,
                 make: Callable[..., gym.Env] | None = None):
        if env_id not in gym.registry:
            import netarena_gym  # noqa: F401  (registers the ids)
        gym.spec(env_id)  # unknown id: gymnasium's NameNotFound, at startup
        self.env_id = env_id
        self.level = level
        self.env_options = dict(env_options or {})
        self._make = make
        super().__init__(self._new_session, max_sessions=max_sessions,
                         idle_timeout=idle_timeout)

    def _new_session(self, sid: str) -> Session:
        return Session(sid, self.env_id, self.level, self.env_options, self._make)
