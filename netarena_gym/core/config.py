"""One configuration shape for every env: a frozen, keyword-only dataclass.

:class:`EnvConfig` holds the fields every env shares, in the order every env's
``__init__`` takes them; each task adds its own in ``<task>/config.py``.
``info`` is ``"full"`` (default) or ``"lean"``: what ``info`` carries on the steps
inside an episode (see :mod:`netarena_gym.core.info`).
:meth:`EnvConfig.from_kwargs` rejects unknown keys with :class:`InvalidConfig` listing the
valid ones (a plain ``__init__`` would raise a bare ``TypeError``).
"""
from __future__ import annotations

import inspect
import math
from dataclasses import asdict, dataclass, fields
from numbers import Integral
from typing import Any, ClassVar

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

    #: fields that hold a list of names (fault types, templates): a bare string is refused,
    #: as ``tuple("remove_ip")`` would split it into letters
    name_lists: ClassVar[tuple[str, ...]] = ()
    #: fields that are True or False (``"false"`` is truthy: a switch takes no strings)
    flags: ClassVar[tuple[str, ...]] = ()
    #: fields that are True, False or None (None: the level's default)
    optional_flags: ClassVar[tuple[str, ...]] = ()
    #: fields that are a number of seconds > 0
    seconds: ClassVar[tuple[str, ...]] = ("command_timeout",)

    def __post_init__(self):
        if isinstance(self.level, bool) or not isinstance(self.level, (Integral, str)):
            raise InvalidConfig(f"level must be an int or a level name such as 'compat', "
                                f"got {self.level!r}")
        if self.max_steps is not None:
            check_count("max_steps", self.max_steps, at_least=1)
        check_count("history", self.history, at_least=0)
        for name in self.seconds:
            check_seconds(name, getattr(self, name))
        for name in self.flags:
            check_flag(name, getattr(self, name))
        for name in self.optional_flags:
            if getattr(self, name) is not None:
                check_flag(name, getattr(self, name), optional=True)
        for name in self.name_lists:
            value = getattr(self, name)
            if value is None:
                continue
            if isinstance(value, str):
                raise InvalidConfig(f"{name} is a list of names: write {name}=({value!r},), "
                                    f"not the string {value!r}")
            try:
                ok = all(isinstance(v, str) for v in value)
            except TypeError:
                ok = False
            if not ok:
                raise InvalidConfig(f"{name} must be a list of names or None, got {value!r}")

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


_OPTIONS: dict[type, frozenset | None] = {}


def check_options(cls: type, kwargs: dict) -> None:
    """Refuse keyword arguments ``cls.__init__`` does not take with :class:`InvalidConfig`
    listing the ones it does (``gym.make(..., levle=2)`` was a bare ``TypeError``)."""
    names = _OPTIONS.get(cls, ())
    if names == ():
        params = inspect.signature(cls.__init__).parameters.values()
        names = _OPTIONS[cls] = (None if any(p.kind is p.VAR_KEYWORD for p in params) else
                                 frozenset(p.name for p in params if p.name != "self"))
    unknown = sorted(set(kwargs) - names) if names is not None else ()
    if unknown:
        raise InvalidConfig(f"{cls.__name__}: unknown option(s) {unknown}; valid options: "
                            f"{', '.join(sorted(names))}")


def check_count(name: str, value, *, at_least: int = 0) -> None:
    """``value`` is an int (not a bool) ``>= at_least``; InvalidConfig naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, Integral) or value < at_least:
        raise InvalidConfig(f"{name} must be an integer >= {at_least}, got {value!r}")


#: the longest budget in seconds an option may give one command (a day)
MAX_SECONDS = 86_400


def check_seconds(name: str, value) -> None:
    """``value`` is a number of seconds in ``(0, MAX_SECONDS]`` (not a bool, not a string)."""
    if (isinstance(value, bool) or not isinstance(value, (Integral, float))
            or (isinstance(value, float) and not math.isfinite(value))
            or not 0 < value <= MAX_SECONDS):
        raise InvalidConfig(f"{name} must be a finite number of seconds > 0 (at most "
                            f"{MAX_SECONDS}), got {value!r}")


def check_flag(name: str, value, *, optional: bool = False) -> None:
    if not isinstance(value, bool):
        raise InvalidConfig(f"{name} must be True{', False or None' if optional else ' or False'}"
                            f", got {value!r}")


__all__ = ["EnvConfig", "check_count", "check_flag", "check_seconds"]
