"""Pieces both servers use: parsing ``--env-option``, a uvicorn server in a thread (tests,
benchmarks, notebooks) and a free loopback port."""
from __future__ import annotations

import json
import socket
import threading
import time


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def parse_option(text: str) -> tuple[str, object]:
    """``KEY=VALUE`` with VALUE read as JSON when it parses (``max_steps=5``)."""
    k, sep, v = text.partition("=")
    if not sep or not k:
        raise ValueError(f"expected KEY=VALUE, got {text!r}")
    try:
        return k, json.loads(v)
    except json.JSONDecodeError:
        return k, v


class UvicornThread:
    """Serve an ASGI app with uvicorn in a daemon thread; ``stop()`` shuts it down. Shared
    by every server of the package (OpenEnv, MCP over HTTP, A2A); ``options`` go to
    ``uvicorn.Config``."""

    label = "server"

    def __init__(self, app, host: str = "127.0.0.1", port: int | None = None, **options):
        import uvicorn

        self.host, self.port = host, port or free_port(host)
        self.server = uvicorn.Server(uvicorn.Config(app, host=self.host, port=self.port,
                                                    **{"log_level": "warning", **options}))
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    @classmethod
    def serving(cls, app_factory, host: str = "127.0.0.1", port: int | None = None):
        """``app_factory(url) -> app``, for apps that must know their own URL."""
        port = port or free_port(host)
        return cls(app_factory(f"http://{host}:{port}"), host, port)

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def start(self, timeout: float = 30.0) -> "UvicornThread":
        self.thread.start()
        deadline = time.monotonic() + timeout
        while not self.server.started:
            if not self.thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError(f"{self.label} on {self.url} did not start")
            time.sleep(0.01)
        return self

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()
