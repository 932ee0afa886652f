"""A minimal client for the OpenAI chat-completions API, on the standard library only.

Works with any server that speaks ``POST {base_url}/chat/completions`` (OpenAI, vLLM,
llama.cpp's server, Ollama, LM Studio, TGI, LiteLLM, ...). Settings come from arguments, else
``OPENAI_BASE_URL``, ``OPENAI_API_KEY`` and ``NETARENA_MODEL``.

Every call is bounded: a socket timeout per call, at most ``max_retries`` retries of
transient failures (timeouts, connection errors, 408/409/429/5xx) with exponential backoff
and jitter (``Retry-After`` honoured up to the cap), and no retry of other client errors.
A call that still fails returns a :class:`ChatResult` with ``error`` set; it never raises.
"""
from __future__ import annotations

import json
import os
import random
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import asdict, dataclass, field

RETRY_STATUS = {408, 409, 425, 429, 500, 502, 503, 504}


@dataclass
class ChatResult:
    text: str | None
    latency_s: float
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    attempts: int = 1
    error: str | None = None
    finish_reason: str | None = None
    attempt_errors: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return asdict(self)


def resolve_settings(opts: dict) -> dict:
    """Fill ``base_url``, ``api_key`` and ``model`` from the environment; raise when the
    model or the URL is missing (fail before any episode starts)."""
    opts.setdefault("base_url", os.environ.get("OPENAI_BASE_URL") or "")
    opts.setdefault("model", os.environ.get("NETARENA_MODEL") or "")
    if not opts["model"]:
        raise ValueError("the LLM agent needs a model: --model NAME or NETARENA_MODEL")
    if not opts["base_url"]:
        raise ValueError("the LLM agent needs a server: --base-url URL or OPENAI_BASE_URL "
                         "(e.g. http://127.0.0.1:8000/v1, https://api.openai.com/v1)")
    check_base_url(opts["base_url"])
    return opts


def check_base_url(url: str) -> str:
    """``url`` if it is an http(s) URL with a host; else a ValueError saying so (a
    scheme-less ``127.0.0.1:8000/v1`` would fail every call, after retries)."""
    try:
        parts = urllib.parse.urlsplit(str(url))
        ok = parts.scheme in ("http", "https") and bool(parts.hostname)
        parts.port  # noqa: B018  (raises ValueError on a bad port)
    except ValueError:
        ok = False
    if not ok:
        raise ValueError(f"--base-url / OPENAI_BASE_URL: {url!r} is not an http(s) URL with "
                         "a host (e.g. http://127.0.0.1:8000/v1, https://api.openai.com/v1)")
    return url


class OpenAIChatClient:
    def __init__(self, base_url: str | None = None, model: str | None = None,
                 api_key: str | None = None, *, timeout: float = 60.0, max_retries: int = 3,
                 backoff: float = 1.0, max_backoff: float = 20.0,
                 extra_body: dict | None = None, seed: int | None = None):
        opts = resolve_settings({k: v for k, v in (("base_url", base_url), ("model", model))
                                 if v})
        self.base_url = opts["base_url"].rstrip("/")
        self.model = opts["model"]
        self.api_key = api_key if api_key is not None else os.environ.get("OPENAI_API_KEY", "")
        self.timeout = float(timeout)
        self.max_retries = max(0, int(max_retries))
        self.backoff, self.max_backoff = float(backoff), float(max_backoff)
        self.extra_body = dict(extra_body or {})
        self._rng = random.Random(seed)

    @property
    def url(self) -> str:
        return self.base_url + "/chat/completions"

    def chat(self, messages: list[dict], *, temperature: float = 0.0, max_tokens: int = 512,
             seed: int | None = None) -> ChatResult:
        body = {"model": self.model, "messages": messages, "temperature": temperature,
                "max_tokens": max_tokens, **self.extra_body}
        if seed is not None:
            body["seed"] = int(seed)
        data = json.dumps(body).encode()
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        errors: list[str] = []
        t0 = time.perf_counter()
        for attempt in range(1, self.max_retries + 2):
            retry_after = None
            try:
                req = urllib.request.Request(self.url, data=data, headers=headers, method="POST")
                with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                    payload = json.loads(resp.read().decode("utf-8", "replace"))
                return self._result(payload, t0, attempt, errors)
            except urllib.error.HTTPError as e:
                detail = _read_error(e)
                errors.append(f"HTTP {e.code}: {detail}")
                if e.code not in RETRY_STATUS:
                    break
                retry_after = _retry_after(e)
            except TimeoutError:
                errors.append(f"timeout after {self.timeout:g}s")
            except (urllib.error.URLError, ConnectionError, OSError) as e:
                errors.append(f"connection error: {getattr(e, 'reason', e)}")
            except (json.JSONDecodeError, UnicodeDecodeError) as e:
                errors.append(f"malformed response: {e}")
            except _BadResponse as e:
                errors.append(f"malformed response: {e}")
            except ValueError as e:  # a request urllib cannot make: retrying cannot help
                errors.append(f"invalid request: {e}")
                break
            if attempt <= self.max_retries:
                time.sleep(self._delay(attempt, retry_after))
        return ChatResult(text=None, latency_s=time.perf_counter() - t0, attempts=len(errors),
                          error=errors[-1] if errors else "failed", attempt_errors=errors)

    def _delay(self, attempt: int, retry_after: float | None) -> float:
        d = min(self.max_backoff, self.backoff * 2 ** (attempt - 1))
        d *= 0.5 + self._rng.random() / 2
        if retry_after is not None:
            d = max(d, min(self.max_backoff, retry_after))
        return d

    def _result(self, payload, t0: float, attempt: int, errors: list[str]) -> ChatResult:
        try:
            choice = payload["choices"][0]
            msg = choice.get("message") or {}
            text = msg.get("content")
            if text is None and isinstance(choice.get("text"), str):
                text = choice["text"]
            if isinstance(text, list):  # content parts
                text = "".join(p.get("text", "") for p in text if isinstance(p, dict))
        except (KeyError, IndexError, TypeError, AttributeError) as e:
            raise _BadResponse(f"no choices[0].message ({type(e).__name__})") from None
        usage = payload.get("usage")
        usage = usage if isinstance(usage, dict) else {}
        return ChatResult(text=text if isinstance(text, str) else None,
                          latency_s=time.perf_counter() - t0,
                          prompt_tokens=token_count(usage.get("prompt_tokens")),
                          completion_tokens=token_count(usage.get("completion_tokens")),
                          attempts=attempt, finish_reason=choice.get("finish_reason"),
                          attempt_errors=errors)


class _BadResponse(ValueError):
    pass


def token_count(v) -> int | None:
    """A server's token count if it is a count (an int >= 0), else None: a server's odd
    ``usage`` must not reach the run's records, whose summary adds them up."""
    return v if isinstance(v, int) and not isinstance(v, bool) and v >= 0 else None


def _read_error(e: urllib.error.HTTPError) -> str:
    try:
        return e.read(2000).decode("utf-8", "replace").strip() or e.reason
    except Exception:
        return str(e.reason)


def _retry_after(e: urllib.error.HTTPError) -> float | None:
    v = e.headers.get("Retry-After") if e.headers else None
    try:
        return float(v) if v is not None else None
    except ValueError:
        return None
