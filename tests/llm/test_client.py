"""The OpenAI-compatible chat client against a real HTTP server on 127.0.0.1: bounded
retries with backoff, no retry of client errors, malformed bodies as failures."""
from __future__ import annotations

from netarena_gym.llm import OpenAIChatClient
from tests.llm.fake_openai import FakeOpenAI, Reply


def test_transient_errors_are_retried_with_backoff_and_bounded():
    plan = [Reply(status=503), Reply(status=429, headers={"Retry-After": "0"}),
            Reply('{"machine": "r0", "command": "ip a"}')]
    with FakeOpenAI(lambda body, i: plan[i] if i < len(plan) else Reply("x")) as srv:
        c = OpenAIChatClient(srv.base_url, "m", "", backoff=0.01, max_retries=3)
        res = c.chat([{"role": "user", "content": "hi"}])
    assert res.error is None and res.attempts == 3 and res.text.startswith("{")
    assert res.attempt_errors[0].startswith("HTTP 503") and res.attempt_errors[1].startswith("HTTP 429")


def test_client_errors_are_not_retried_and_malformed_bodies_are_failures():
    with FakeOpenAI(lambda body, i: Reply(status=400)) as srv:
        res = OpenAIChatClient(srv.base_url, "m", backoff=0.01, max_retries=3).chat([])
    assert res.text is None and res.attempts == 1 and "HTTP 400" in res.error
    assert len(srv.requests) == 1
    with FakeOpenAI(lambda body, i: Reply(raw=b'{"choices": []}')) as srv:
        res = OpenAIChatClient(srv.base_url, "m", backoff=0.01, max_retries=2).chat([])
    assert res.text is None and "malformed" in res.error and len(srv.requests) == 3
    with FakeOpenAI(lambda body, i: Reply(raw=b"<html>not json")) as srv:
        res = OpenAIChatClient(srv.base_url, "m", backoff=0.01, max_retries=0).chat([])
    assert "malformed" in res.error


def test_usage_that_is_not_a_count_is_dropped_not_summed():
    """A server's ``"prompt_tokens": "x"`` reached the records and crashed every later
    summary of the run (``int("x")``)."""
    from netarena_gym.agents.summary import summarize

    body = (b'{"choices": [{"message": {"content": "hi"}}], '
            b'"usage": {"prompt_tokens": "x", "completion_tokens": -3}}')
    with FakeOpenAI(lambda body_, i: Reply(raw=body)) as srv:
        res = OpenAIChatClient(srv.base_url, "m", backoff=0.01, max_retries=0).chat([])
    assert res.text == "hi" and res.prompt_tokens is None and res.completion_tokens is None
    rec = {"key": "e|1|0", "env": "e", "correct": True, "safe": True, "safe_compat": True,
           "steps": 1, "agent_seconds": 0.1, "trajectory": [
               {"llm": {"prompt_tokens": "x", "completion_tokens": 7, "latency_s": 0.1}}]}
    llm = summarize([rec])["llm"]
    assert llm["prompt_tokens"] == 0 and llm["completion_tokens"] == 7


def test_base_urls_must_be_http_urls_with_a_host():
    import pytest

    from netarena_gym.llm.client import check_base_url, resolve_settings

    for good in ("http://127.0.0.1:8000/v1", "https://api.openai.com/v1", "HTTP://h"):
        assert check_base_url(good) == good
    for bad in ("notaurl", "127.0.0.1:8000/v1", "localhost:8000", "ftp://h/v1", "http://",
                "http://h:99999999/v1"):
        with pytest.raises(ValueError, match="is not an http\\(s\\) URL"):
            resolve_settings({"base_url": bad, "model": "m"})
        with pytest.raises(ValueError, match="is not an http\\(s\\) URL"):
            OpenAIChatClient(bad, "m")


def test_a_request_urllib_cannot_make_fails_at_once_without_retries():
    c = OpenAIChatClient("http://127.0.0.1:9/v1", "m", backoff=5.0, max_retries=3)
    c.base_url = "notaurl"  # past the check: the call must not raise nor back off
    res = c.chat([{"role": "user", "content": "hi"}])
    assert res.text is None and res.attempts == 1 and "invalid request" in res.error
    assert res.latency_s < 1.0
