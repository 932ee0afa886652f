"""One configuration shape for every env: a frozen, keyword-only dataclass.

:class:`EnvConfig` holds the fields every env shares, in the order every env's
``__init__`` takes them; each task adds its own in ``<task>/config.py``.
``info`` is ``"full"`` (default) or ``"lean"``: what ``info`` carries on the steps
inside an episode (see :mod:`netarena_gym.core.info`).
:meth:`EnvConfig.from_kwargs` rejects unknown keys with :class:`InvalidConfig` listing the
valid ones (a plain ``__init__`` would raise a bare ``TypeError``).
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Any

from netarena_gym.errors import InvalidConfig


@dataclass(frozen=True, kw_only=True)
class EnvConfig:
    level: int | str = 1
    interface: str = "text"
    backend: str = "sim"
    max_steps: int | None = None
    reward: Any = None
    observability: str = "partial"
    history: int = 0
    render_mode: str | None = None
    command_timeout: float = 10.0
    step_timeout: float | None = None
    info: str = "full"

    @classmethod
    def field_names(cls) -> tuple[str, ...]:
        return tuple(f.name for f in fields(cls))

    @classmethod
    def from_kwargs(cls, **kw) -> "EnvConfig":
        valid = cls.field_names()
        unknown = sorted(set(kw) - set(valid))
        if unknown:
            raise InvalidConfig(f"{cls.__name__}: unknown option(s) {unknown}; valid options: "
                                f"{', '.join(valid)}")
        return cls(**kw)

    def to_kwargs(self) -> dict:
        """The env's keyword arguments (shallow: nested objects are passed as they are)."""
        return {f.name: getattr(self, f.name) for f in fields(self)}

    def to_dict(self) -> dict:
        return asdict(self)


__all__ = ["EnvConfig"]
