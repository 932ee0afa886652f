"""Checks of command-line values against what the env accepts, before any work starts.

Each failure is a :class:`UsageError` whose message is one line naming the option and the
valid values; the CLI prints it and exits with status 2 (argparse's convention). The valid
values come from the env class itself: its ``levels`` and its config dataclass
(``config_class``, see :mod:`netarena_gym.core.config`), so they never drift from the envs.
"""
from __future__ import annotations

import argparse
import importlib
import json
import math
import os
import types
import typing
from pathlib import Path
from typing import Any

import gymnasium as gym

import netarena_gym
from netarena_gym.eval.spec import RENAMED_ENV_OPTIONS, parse_level

#: options given with their own flags, not with --env-option
OWN_FLAGS = {"level": "--level", "interface": "--interface", "backend": "--backend",
             "max_steps": "--max-steps"}


class UsageError(ValueError):
    """A bad command-line value; the message names the option and the valid values."""


def number(kind: type = int, *, at_least: float | None = None, above: float | None = None,
           at_most: float | None = None):
    """An argparse ``type``: a finite ``kind`` (int or float) ``>= at_least`` or
    ``> above``, and ``<= at_most``; argparse turns a refusal into ``argument --x: must be
    ...``, exit 2."""
    def parse(text: str):
        try:
            v = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"invalid {kind.__name__} value: {text!r}") from None
        if not math.isfinite(v):
            raise argparse.ArgumentTypeError(f"must be a finite number, got {text}")
        if at_least is not None and v < at_least:
            raise argparse.ArgumentTypeError(f"must be >= {at_least}, got {text}")
        if above is not None and not v > above:
            raise argparse.ArgumentTypeError(f"must be > {above}, got {text}")
        if at_most is not None and v > at_most:
            raise argparse.ArgumentTypeError(f"must be <= {at_most}, got {text}")
        return v

    parse.__name__ = kind.__name__
    return parse


def env_class(env_id: str) -> type:
    if env_id not in netarena_gym.ENV_IDS:
        raise UsageError(f"argument --env: unknown env {env_id!r}; valid: "
                         f"{', '.join(sorted(netarena_gym.ENV_IDS))}")
    entry = gym.spec(env_id).entry_point
    if not isinstance(entry, str):
        return entry
    mod, _, name = entry.partition(":")
    return getattr(importlib.import_module(mod), name)


def check_levels(env_id: str, levels) -> tuple:
    """The levels as the env takes them (``"3"`` -> 3), each once in the order first given
    (``--level 1 1`` is level 1: a repeat would play and write every episode twice), or a
    UsageError naming the valid."""
    valid = tuple(env_class(env_id).levels)
    out = []
    for lv in levels:
        v = parse_level(lv)
        if v not in valid:
            raise UsageError(f"argument --level: invalid level {lv!r} for {env_id}; valid: "
                             f"{', '.join(map(str, valid))}")
        if v not in out:
            out.append(v)
    return tuple(out)


def _type_name(t) -> str:
    if t is type(None):
        return "null"
    return getattr(t, "__name__", None) or str(t).replace("typing.", "")


def _conform(value: Any, hint) -> tuple[bool, Any]:
    """``(ok, value)``: whether a JSON value fits a type hint (a list where a tuple is
    wanted, ints as floats where a float is)."""
    if hint in (Any, object):
        return True, value
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        for arg in typing.get_args(hint):
            ok, v = _conform(value, arg)
            if ok:
                return True, v
        return False, value
    if hint is type(None):
        return value is None, value
    if origin is tuple or hint is tuple:
        if not isinstance(value, (list, tuple)):
            return False, value
        args = typing.get_args(hint)
        inner = args[0] if args else Any
        vals = []
        for x in value:
            ok, v = _conform(x, inner)
            if not ok:
                return False, value
            vals.append(v)
        return True, vals  # a list: what the run's JSON records hold (resume compares)
    if origin is not None:
        hint = origin
    if hint is bool:
        return isinstance(value, bool), value
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool), value
    if hint is float:
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        return ok, float(value) if ok else value
    return isinstance(value, hint), value


def _hint_text(hint) -> str:
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        return " or ".join(_hint_text(a) for a in typing.get_args(hint))
    if origin is tuple:
        return "a JSON list"
    if origin is dict or hint is dict:
        return "a JSON object"
    return _type_name(hint)


def check_env_options(env_id: str, pairs, own_flags: dict[str, str] = OWN_FLAGS) -> dict:
    """``--env-option`` pairs as gym.make keywords, checked against the env's config
    dataclass: an unknown key lists the valid ones, a value of the wrong type names the
    option and the type it takes; ``own_flags`` maps the keys that have a flag of their
    own to that flag."""
    cfg = env_class(env_id).config_class
    hints = typing.get_type_hints(cfg)
    valid = [f for f in cfg.field_names() if f not in own_flags]
    out = {}
    for key, value in pairs:
        name = RENAMED_ENV_OPTIONS.get(key, key)
        if name not in hints:
            raise UsageError(f"argument --env-option: unknown key {key!r} for {env_id}; "
                             f"valid keys: {', '.join(valid)}")
        ok, v = _conform(value, hints[name])
        if not ok:
            raise UsageError(f"argument --env-option: {key}={json.dumps(value)}: {key} "
                             f"takes {_hint_text(hints[name])}")
        if name in own_flags:
            raise UsageError(f"argument --env-option: {key} has its own flag; use "
                             f"{own_flags[name]}")
        out[name] = v
    return out


def check_env_builds(env_id: str, own_flags: dict[str, str] = OWN_FLAGS, **kwargs) -> gym.Env:
    """``gym.make(env_id, **kwargs)``, with the env's refusal of a value turned into one
    UsageError naming the flag (``own_flags``) or ``--env-option``; the caller closes the
    env."""
    from netarena_gym.errors import InvalidConfig

    _check_kubeconfig(kwargs)
    try:
        return gym.make(env_id, **kwargs)
    except InvalidConfig as e:  # name the option: "backend must be one of ..."
        word = str(e).split(" ", 1)[0]
        flag = own_flags.get(word, "--env-option")
        raise UsageError(f"argument {flag}: {e}") from None
    except (TypeError, IndexError) as e:  # an option value of the wrong type or shape
        raise UsageError(f"argument --env-option: the env rejected an option value "
                         f"({type(e).__name__}: {e})") from None
    except gym.error.Error:
        raise  # Gymnasium's own (a missing dependency): the CLI prints them in one line
    except Exception as e:  # a real backend that cannot be set up: its files, its server
        backend = kwargs.get("backend") or "sim"
        flag = own_flags.get("backend", "--backend") if backend != "sim" else "--env-option"
        what = f"the {backend} backend could not be set up" if backend != "sim" else \
            "the env could not be built"
        raise UsageError(f"argument {flag}: {what} ({type(e).__name__}: "
                         f"{' '.join(str(e).split())})") from None


#: where the Kubernetes backend looks for a kubeconfig, before KUBECONFIG and ~/.kube
_KUBECONFIG_VARS = ("NETARENA_KUBECONFIG",)


def _check_kubeconfig(kwargs: dict) -> None:
    """A kubeconfig named (``--env-option kubeconfig=``, ``NETARENA_KUBECONFIG``) that is
    not a file is an error naming it: the backend would go on to the next place it looks
    (another cluster's ``~/.kube/config``), or say to set the variable that is set."""
    if kwargs.get("backend") != "kubernetes":
        return
    named = [("--env-option kubeconfig", kwargs.get("kubeconfig"))]
    named += [(var, os.environ.get(var)) for var in _KUBECONFIG_VARS]
    for name, path in named:
        if path:
            if not Path(path).is_file():
                raise UsageError(f"argument --backend: kubernetes needs a kubeconfig, and "
                                 f"{name} is {path}, which is not a file")
            return


def out_dir(path: str | Path, option: str = "--out", *, create: bool = True) -> Path:
    """Create the output directory ``path``. Missing parents are created only inside the
    working directory (``--out runs/expert`` makes ``runs/`` too); elsewhere the parent
    must exist, so that a mistyped absolute path fails instead of scattering directories.
    ``create=False`` only checks."""
    p = Path(path)
    if p.is_dir():
        return p
    if p.exists():
        raise UsageError(f"argument {option}: {p} exists and is not a directory")
    above = next((a for a in p.parents if a.exists()), None)  # what is there of the path
    if above is not None and not above.is_dir():
        raise UsageError(f"argument {option}: {above} is not a directory, so {p} cannot "
                         "be made")
    if not p.parent.is_dir() and not _inside(p, Path.cwd()):
        raise UsageError(f"argument {option}: the parent directory {p.parent} does not "
                         f"exist; create it first (outside the working directory only the "
                         f"last component is created)")
    if create:
        try:
            p.mkdir(parents=True, exist_ok=True)
        except OSError as e:  # no permission, a read-only file system, ...
            raise UsageError(f"argument {option}: cannot create {p}: "
                             f"{e.strerror or e}") from None
    return p


def _inside(p: Path, root: Path) -> bool:
    try:
        p.resolve().relative_to(root.resolve())
    except ValueError:
        return False
    return True


def human_size(n: float) -> str:
    """``1.2 MB``, ``340 kB`` (decimal units, as ``du --si``)."""
    for unit in ("B", "kB", "MB", "GB"):
        if abs(n) < 1000 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000
    return f"{n:.1f} GB"


__all__ = ["OWN_FLAGS", "UsageError", "check_env_options", "check_levels", "env_class",
           "human_size", "out_dir"]
