"""Operator commands of the routing simulator: one module per command family.

Each handler has the signature ``handler(ctx, argv, stdin) -> CommandResult`` where ``argv``
includes the program name, and is registered under its program name with :func:`register`.
Handlers print what the real tool prints (same layout, same error wording) and mutate the
node's state only through :class:`~netarena_gym.routing.state.Node` methods (or call
``node.touch()`` after a direct change), so that caches stay valid.

Outcome kinds (``CommandResult.kind``): ``OK``; ``ERROR`` when the tool ran and failed
(``RTNETLINK answers: File exists``); ``INVALID`` for usage or syntax errors (the agent typed
something the tool does not understand).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

from netarena_gym.shell.parser import CommandResult

if TYPE_CHECKING:
    from netarena_gym.routing.state import Network, Node

__all__ = ["CommandContext", "Handler", "REGISTRY", "register", "get_handler"]


@dataclass
class CommandContext:
    net: "Network"
    node: "Node"
    timeout_s: float = 10.0  # wall-clock budget of one command (ping counts against it)


Handler = Callable[[CommandContext, list[str], str], CommandResult]
REGISTRY: dict[str, Handler] = {}


def register(*names: str):
    def deco(fn: Handler) -> Handler:
        for n in names:
            REGISTRY[n] = fn
        return fn
    return deco


_LOADED = False


def get_handler(name: str) -> Handler | None:
    global _LOADED
    if not _LOADED:
        from netarena_gym.routing.commands import (  # noqa: F401  (registration side effects)
            ip, ifconfig, iptables, tc, sysctl, files, ping, legacy)
        _LOADED = True
    return REGISTRY.get(name)
