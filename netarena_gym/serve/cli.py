"""``netarena-gym serve --protocol openenv|mcp|a2a``: serve one env id to remote agents.

    netarena-gym serve --protocol openenv --env NetArena-Routing-v0 --level 1 --port 8000 \\
        --max-sessions 8
    netarena-gym serve --protocol mcp --env NetArena-K8sPolicy-v0 --transport stdio
    netarena-gym serve --protocol mcp --env NetArena-Routing-v0 --transport http --port 8001
    netarena-gym serve --protocol a2a --env NetArena-CapacityPlanning-v0 --port 8002
"""
from __future__ import annotations

import argparse
import sys

PROTOCOLS = ("openenv", "mcp", "a2a")


def add_arguments(p: argparse.ArgumentParser) -> None:
    import netarena_gym
    from netarena_gym.eval.spec import parse_level
    from netarena_gym.eval.validate import number
    from netarena_gym.serve.common import parse_option

    def option(text):
        try:
            return parse_option(text)
        except ValueError as e:
            raise argparse.ArgumentTypeError(str(e)) from None

    p.add_argument("--protocol", required=True, choices=PROTOCOLS)
    p.add_argument("--env", required=True, choices=sorted(netarena_gym.ENV_IDS))
    p.add_argument("--level", type=parse_level, default=1,
                   help="default level of new sessions: 1 2 3 compat (reset may change it)")
    p.add_argument("--env-option", action="append", type=option, default=[],
                   metavar="KEY=VALUE", help="extra gym.make keyword (VALUE read as JSON "
                   "when it parses), e.g. backend=mininet max_steps=20")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8000)
    p.add_argument("--max-sessions", type=number(int, at_least=1), default=8,
                   help="concurrent sessions (each its own env instance)")
    p.add_argument("--idle-timeout", type=number(float, at_least=0), default=900.0,
                   help="seconds after which an idle session is closed (0: never)")
    p.add_argument("--ray-address", default=None,
                   help="place each session's env on its own Ray actor of this cluster "
                        "(\"auto\", HOST:PORT or ray://HOST:10001; \"local\" starts one)")
    p.add_argument("--transport", default="stdio", choices=("stdio", "http"),
                   help="MCP only: stdio (desktop clients) or streamable HTTP on /mcp")
    p.add_argument("--card-url", default=None,
                   help="A2A only: the URL the agent card advertises (default: host:port)")


#: the flags of ``serve`` that stand for an env keyword (the rest go by --env-option)
SERVE_FLAGS = {"level": "--level"}


def check_arguments(a: argparse.Namespace) -> dict:
    """The env options of a serve command, checked before anything is started: the numbers,
    the level, and one env built with them (a bad value is one UsageError naming its flag,
    not a traceback at the first session)."""
    from netarena_gym.eval.validate import (
        UsageError, check_env_builds, check_env_options, check_levels)

    if not 0 <= a.port <= 65535:
        raise UsageError(f"argument --port: must be 0..65535, got {a.port}")
    (a.level,) = check_levels(a.env, (a.level,))
    if any(k == "render_mode" for k, _ in a.env_option):
        raise UsageError("argument --env-option: render_mode is the server's: sessions "
                         "render as text ('ansi')")
    options = check_env_options(a.env, a.env_option, own_flags=SERVE_FLAGS)
    check_env_builds(a.env, own_flags=SERVE_FLAGS, level=a.level, render_mode="ansi",
                     **options).close()
    return options


def main(a: argparse.Namespace) -> int:
    from netarena_gym.errors import DependencyNotInstalled, require

    try:
        options = check_arguments(a)
        if a.protocol in ("openenv", "a2a"):  # before any session or Ray cluster starts
            uvicorn = require("uvicorn", "serve" if a.protocol == "openenv" else "a2a")
        from netarena_gym.serve.sessions import SessionManager

        make = None
        if a.ray_address:
            from netarena_gym.serve.ray_pool import ray_env_factory

            make = ray_env_factory(None if a.ray_address == "local" else a.ray_address)
        manager = SessionManager(a.env, level=a.level, env_options=options,
                                 max_sessions=a.max_sessions,
                                 idle_timeout=a.idle_timeout or None, make=make)
        if a.protocol in ("openenv", "a2a"):
            if a.protocol == "openenv":
                from netarena_gym.serve.openenv import build_app

                app = build_app(manager)
            else:
                from netarena_gym.serve.a2a import build_a2a_app

                app = build_a2a_app(manager, a.card_url or f"http://{a.host}:{a.port}")
            manager.start_reaper()
            try:
                uvicorn.run(app, host=a.host, port=a.port, log_level="warning")
            finally:
                manager.close_all()
        else:
            from netarena_gym.serve.mcp import run

            run(manager, transport=a.transport, host=a.host, port=a.port)
    except DependencyNotInstalled as e:
        print(f"netarena-gym serve: {e}", file=sys.stderr)
        return 2
    return 0
