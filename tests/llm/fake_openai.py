"""A real HTTP server on 127.0.0.1 speaking the OpenAI chat-completions API, whose replies
come from a script: a callable ``reply(request_json, call_index) -> Reply``.

A :class:`Reply` is text (with usage), an HTTP error status, a malformed body, or a stall
(the handler waits, answering nothing, until the test ends or ``stall_s`` passes)."""
from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class Reply:
    text: str | None = None
    status: int = 200
    raw: bytes | None = None
    stall_s: float = 0.0
    headers: dict | None = None


class FakeOpenAI:
    def __init__(self, script):
        self.script = script
        self.requests: list[dict] = []
        self.headers: list[dict] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a):
                pass

            def do_POST(self):
                n = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(n))
                with outer._lock:
                    idx = len(outer.requests)
                    outer.requests.append(body)
                    outer.headers.append(dict(self.headers))
                if self.path.rstrip("/") != "/v1/chat/completions":
                    return self._send(404, b'{"error": "not found"}')
                r = outer.script(body, idx)
                if r.stall_s:
                    outer._stop.wait(r.stall_s)
                    return self._send(200, b"{}")
                if r.raw is not None:
                    return self._send(r.status, r.raw, r.headers)
                if r.status != 200:
                    return self._send(r.status, json.dumps(
                        {"error": {"message": f"scripted {r.status}"}}).encode(), r.headers)
                prompt_tokens = sum(len(m["content"].split()) for m in body["messages"])
                payload = {"id": f"cmpl-{idx}", "object": "chat.completion",
                           "model": body.get("model"),
                           "choices": [{"index": 0, "finish_reason": "stop",
                                        "message": {"role": "assistant", "content": r.text}}],
                           "usage": {"prompt_tokens": prompt_tokens,
                                     "completion_tokens": len((r.text or "").split()),
                                     "total_tokens": 0}}
                self._send(200, json.dumps(payload).encode())

            def _send(self, status, data, headers=None):
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    for k, v in (headers or {}).items():
                        self.send_header(k, v)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self.server.shutdown()
        self.server.server_close()


class ExpertScript:
    """Replies what the env's expert would do, in rotating formats (bare JSON, a fenced
    JSON after some reasoning, labelled lines, a ``r0: cmd`` fence). The expert is reset
    whenever a conversation starts (the agent's first user turn of an episode)."""

    FORMATS = ("json", "fenced", "labels", "prefix")

    def __init__(self, expert_class, *, garbage_first: bool = False):
        self.expert_class = expert_class
        self.garbage_first = garbage_first
        self.expert = None
        self.turn = 0

    def __call__(self, body: dict, idx: int) -> Reply:
        msgs = body["messages"]
        if msgs[-1]["content"].startswith("Here is the current state."):
            self.expert = self.expert_class()
            self.turn = 0
            if self.garbage_first:
                self.turn += 1
                return Reply("I believe the problem is in the routing table, let me think.")
        obs = msgs[-1]["content"]
        act = self.expert.act(obs, {})
        fmt = self.FORMATS[self.turn % len(self.FORMATS)]
        self.turn += 1
        if fmt == "json":
            return Reply(json.dumps(act))
        if fmt == "fenced":
            return Reply("The matrix shows failures; I will act.\n```json\n" + json.dumps(act)
                         + "\n```")
        if fmt == "labels":
            return Reply(f"Machine: {act['machine']}\nCommand: {act['command']}")
        return Reply(f"```bash\n{act['machine']}: {act['command']}\n```")


class JsonExpertScript:
    """Replies the env's expert action after a line of prose: JSON in a fence for dict
    actions, a python fence for source code. Works for any env whose expert decides from
    the observation text alone."""

    def __init__(self, expert_class):
        self.expert_class = expert_class
        self.expert = None

    def __call__(self, body: dict, idx: int) -> Reply:
        obs = body["messages"][-1]["content"]
        if obs.startswith("Here is the current state.") or self.expert is None:
            self.expert = self.expert_class()
            self.expert.reset()
            obs = obs.split("\n\n", 1)[1]
        else:
            obs = obs.split("\n\n", 1)[1]
        act = self.expert.act(obs, {})
        if isinstance(act, str):
            fenced = act if "```" in act else f"```python\n{act}\n```"
            return Reply(f"Here is my submission.\n{fenced}")
        return Reply("Here is my next action.\n```json\n" + json.dumps(act) + "\n```")
