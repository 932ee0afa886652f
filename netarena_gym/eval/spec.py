"""What an evaluation run is: an env, levels, an agent and seeds, as plain data.

A run is a list of jobs, one per episode, keyed by ``(env, level, seed)``: episode ``i`` of
a level uses seed ``seed + i``. The key is what makes a run resumable and what makes its
results independent of how many workers (processes, Ray actors) played it."""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any

import netarena_gym


def parse_level(v: Any) -> int | str:
    """``"3"`` -> 3; ``"compat"`` and other names stay strings."""
    if isinstance(v, int):
        return v
    s = str(v).strip()
    return int(s) if s.lstrip("-").isdigit() else s


#: env kwargs renamed since v1 (K8s ``probes=``/``probe=``), translated for recorded specs
RENAMED_ENV_OPTIONS = {"probes": "probe_set", "probe": "probe_mode"}


@dataclass(frozen=True)
class Job:
    env: str
    level: int | str
    seed: int

    @property
    def key(self) -> str:
        return job_key(self.env, self.level, self.seed)


def job_key(env: str, level: Any, seed: int) -> str:
    return f"{env}|{level}|{int(seed)}"


@dataclass(frozen=True)
class EvalSpec:
    """Everything a worker needs to rebuild the env and the agent (JSON-serialisable, so it
    crosses process and Ray boundaries unchanged)."""
    env: str
    levels: tuple = (1,)
    episodes: int = 100
    seed: int = 0
    agent: str = "expert"
    agent_options: dict = field(default_factory=dict)
    backend: str = "sim"
    interface: str = "text"
    max_steps: int | None = None
    env_options: dict = field(default_factory=dict)

    def __post_init__(self):
        if self.env not in netarena_gym.ENV_IDS:
            raise ValueError(f"unknown env {self.env!r}; registered: {sorted(netarena_gym.ENV_IDS)}")
        if self.episodes < 1:
            raise ValueError("episodes must be >= 1")
        # each level once: a repeated one would play (and write) every episode twice
        object.__setattr__(self, "levels",
                           tuple(dict.fromkeys(parse_level(v) for v in self.levels)))

    def jobs(self) -> list[Job]:
        return [Job(self.env, lv, self.seed + i) for lv in self.levels
                for i in range(self.episodes)]

    def env_kwargs(self, level) -> dict:
        kw = {"level": level, "backend": self.backend, "interface": self.interface,
              "max_steps": self.max_steps}
        kw.update(self.env_options)
        for old, new in RENAMED_ENV_OPTIONS.items():  # recorded specs keep the old names
            if old in kw:
                kw.setdefault(new, kw.pop(old))
        return kw

    def to_dict(self) -> dict:
        d = asdict(self)
        d["levels"] = list(self.levels)
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "EvalSpec":
        d = dict(d)
        d["levels"] = tuple(d.get("levels", (1,)))
        return cls(**d)

    def identity(self) -> dict:
        """The fields that must match for records to be comparable (resume checks this):
        everything but the episode count and the levels, which a resumed run may extend."""
        d = self.to_dict()
        d.pop("episodes")
        d.pop("levels")
        opts = {k: v for k, v in d["agent_options"].items() if k not in _VOLATILE_OPTIONS}
        d["agent_options"] = _as_json(opts)
        env_opts = dict(d["env_options"])
        for old, new in RENAMED_ENV_OPTIONS.items():  # a recorded run's old names
            if old in env_opts:
                env_opts.setdefault(new, env_opts.pop(old))
        d["env_options"] = _as_json(env_opts)  # as run.json holds them: tuples are lists
        return d


def _as_json(d: dict) -> dict:
    """``d`` as it reads back from JSON (tuples become lists, keys strings)."""
    return json.loads(json.dumps(d, sort_keys=True, default=str))


# agent options that may change between an interrupted run and its resumption
_VOLATILE_OPTIONS = {"api_key", "timeout", "max_retries", "backoff"}
