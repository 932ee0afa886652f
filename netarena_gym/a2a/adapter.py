"""``--agent a2a``: evaluate an agent that speaks A2A (an AgentBeats "purple" agent).

Each step sends one user message whose single text part is the whole prompt (the task's
system prompt, then the current observation), as upstream's evaluator does, and reads the
reply from the last streamed event. Unlike upstream, every episode gets its own
``context_id`` (stateful agents can tell episodes apart; stateless ones ignore it) and the
message's metadata carries ``{"netarena": {"observation", "episode", "step", "keys"}}``.
The reply is parsed like an LLM's (bare JSON expected, other shapes tolerated); a timeout,
a connection error or an unparseable reply becomes an invalid action, never a crash.
"""
from __future__ import annotations

import asyncio
import time
import uuid
from typing import Any

import httpx
from a2a.client import ClientConfig, create_client
from a2a.helpers import new_text_part
from a2a.types import Message, Role, SendMessageRequest
from google.protobuf.struct_pb2 import Struct

from netarena_gym.a2a.common import LoopThread, event_text
from netarena_gym.agents.llm import action_format, reply_to_action
from netarena_gym.agents.prompts import system_prompt, user_turn


class A2AAgent:
    def __init__(self, env, url: str, *, timeout: float = 60.0, prompt: str = "zeroshot",
                 send_context: bool = True):
        base = env.unwrapped
        self.url = url.rstrip("/")
        self.keys, self.raw = action_format(env)
        self.system = system_prompt(getattr(base, "task", ""), self.keys, style=prompt,
                                    doc=type(base).__doc__, raw=self.raw)
        self.timeout = float(timeout)
        self.send_context = send_context
        self._loop: LoopThread | None = None
        self._client = None
        self._http = None
        self.reset()

    @classmethod
    def from_options(cls, env, opts: dict) -> "A2AAgent":
        if not opts.get("url"):
            raise ValueError("the a2a agent needs a URL (--a2a-url)")
        return cls(env, opts["url"], timeout=float(opts.get("timeout", 60.0)),
                   prompt=opts.get("prompt", "zeroshot"))

    def reset(self) -> None:
        self.context_id = str(uuid.uuid4())
        self.step = 0
        self.last_call: dict | None = None

    async def _ensure_client(self):
        if self._client is None:
            self._http = httpx.AsyncClient(timeout=self.timeout)
            self._client = await create_client(
                self.url, ClientConfig(streaming=True, httpx_client=self._http))
        return self._client

    async def _ask(self, text: str, observation: str) -> str:
        client = await self._ensure_client()
        meta = Struct()
        meta.update({"netarena": {"observation": observation, "episode": self.context_id,
                                  "step": self.step, "keys": list(self.keys)}})
        msg = Message(role=Role.ROLE_USER, parts=[new_text_part(text)],
                      message_id=str(uuid.uuid4()),
                      context_id=self.context_id if self.send_context else "", metadata=meta)
        last = None
        async for ev in client.send_message(SendMessageRequest(message=msg)):
            last = ev
        return event_text(last)

    def act(self, observation: Any, info: dict | None = None):
        obs = observation if isinstance(observation, str) else str(observation)
        text = self.system + "\n\n" + user_turn(obs, first=self.step == 0)
        if self._loop is None:
            self._loop = LoopThread()
        t0 = time.perf_counter()
        call: dict[str, Any] = {"error": None, "parsed": False, "parse": None}
        reply = ""
        try:
            reply = self._loop.run(asyncio.wait_for(self._ask(text, obs), self.timeout),
                                   timeout=self.timeout + 5)
        except Exception as e:  # timeouts, connection and protocol errors alike
            call["error"] = f"{type(e).__name__}: {e}"[:500]
        call["latency_s"] = time.perf_counter() - t0
        call["reply"] = reply[:8000]
        self.step += 1
        action = reply_to_action(reply, call["error"], self.keys, self.raw, call,
                                 source="A2A agent")
        self.last_call = call
        return action

    def close(self) -> None:
        if self._loop is None:
            return
        try:
            if self._client is not None:
                self._loop.run(self._client.close(), timeout=5)
            if self._http is not None:
                self._loop.run(self._http.aclose(), timeout=5)
        except Exception:
            pass
        self._loop.close()
        self._loop = None
        self._client = self._http = None
