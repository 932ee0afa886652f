"""The exceptions netarena_gym raises, under one root class.

Agent mistakes never raise: they come back as observations (``CommandResult``). These are
for the caller of the env: a bad configuration, a missing optional dependency, a backend
that cannot start, a step without a live episode, a scenario that cannot be replayed.
``DependencyNotInstalled`` is also Gymnasium's, so ``except gymnasium.error.Error`` works.
"""
from __future__ import annotations

import importlib
from types import ModuleType

import gymnasium


class NetArenaError(Exception):
    """Root of every netarena_gym exception."""


class InvalidConfig(NetArenaError, ValueError):
    """An unknown configuration key or a bad value; the message lists the valid ones."""


class DependencyNotInstalled(NetArenaError, gymnasium.error.DependencyNotInstalled):
    """An optional dependency is missing; the message gives the pip command."""


class BackendUnavailable(NetArenaError, RuntimeError):
    """A backend cannot run here (missing tool, no privileges, server did not start)."""


class ResetNeeded(NetArenaError, RuntimeError):
    """``step()`` before ``reset()``, or after the episode ended (the same in every task)."""


class ScenarioError(NetArenaError, ValueError):
    """A scenario record that does not fit this env (another task, probe set, topology)."""


def require(module: str, extra: str) -> ModuleType:
    """Import ``module`` or raise :class:`DependencyNotInstalled` with the install hint."""
    try:
        return importlib.import_module(module)
    except ImportError as e:
        raise DependencyNotInstalled(
            f"{module} is not installed ({e}); run: pip install \"netarena-gym[{extra}]\""
        ) from None


__all__ = ["NetArenaError", "InvalidConfig", "DependencyNotInstalled", "BackendUnavailable",
           "ResetNeeded", "ScenarioError", "require"]
