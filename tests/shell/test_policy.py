"""The shared allow-list mechanics: refusal results, parse cache, per-task policies, and the
pipeline runner that keeps filters in-process."""
import pytest

from netarena_gym.shell.parser import INVALID, OK, REFUSED, CommandResult, parse_command_line
from netarena_gym.shell.policy import (
    ParseCache, check_command_line, filter_position_refusal, parse, refused, run_pipeline)


def test_refused_and_parse():
    assert refused("no") == CommandResult("netarena: command refused: no\n", 126, REFUSED)
    assert parse("a | b")[1] is None
    assert parse("a &")[1].kind == REFUSED
    assert parse("a |")[1].kind == INVALID and parse("")[1].output == "netarena: empty command\n"


def test_check_command_line_asks_the_policy_for_every_simple_command():
    seen = []

    def policy(cmd, pos):
        seen.append((cmd.argv[0], pos))
        return "no c" if cmd.argv[0] == "c" else None
    assert check_command_line(parse_command_line("a | b; c"), policy) == "no c"
    assert seen == [("a", 0), ("b", 1), ("c", 0)]


def test_filters_only_after_a_pipe_and_without_files():
    cl = parse_command_line("grep x | grep x /etc/shadow | grep y")
    cmds = list(cl.simple_commands())
    assert "through a pipe" in filter_position_refusal(cmds[0], 0, "kubectl")
    assert "/etc/shadow" in filter_position_refusal(cmds[1], 1, "kubectl")
    assert filter_position_refusal(cmds[2], 2, "kubectl") is None


def test_run_pipeline_runs_filters_in_process():
    calls = []

    def execute(cmd, data):
        calls.append(cmd.argv)
        return CommandResult("a\nb\nab\n")
    res = run_pipeline(parse_command_line("show | grep -c a"), execute)
    assert (res.output, res.kind, calls) == ("2\n", OK, [["show"]])


def test_parse_cache_is_bounded_and_memoises():
    calls = []
    cache = ParseCache(lambda s: calls.append(s) or s.upper(), size=2)
    assert [cache("a"), cache("a"), cache("b"), cache("c"), cache("a")] == list("AABCA")
    assert calls == ["a", "b", "c", "a"]


def test_line_budget_gives_each_command_what_is_left_and_then_nothing(monkeypatch):
    import time as time_mod

    from netarena_gym.shell.parser import TIMEOUT
    from netarena_gym.shell.policy import LineBudget
    now = [100.0]
    monkeypatch.setattr(time_mod, "monotonic", lambda: now[0])
    b = LineBudget(5.0, 3.0)
    assert b.limit() == 3.0 and b.spent("ping") is None  # its own timeout is less
    now[0] += 3.5
    assert b.limit() == 1.5
    cut = b.timed_out(b.limit(), "64 bytes\n")
    assert cut.kind == TIMEOUT and cut.status == 124
    assert cut.output == ("64 bytes\nnetarena: command timed out after 1.5 s: the command "
                          "line's budget of 5 s (step_timeout) is spent (killed)\n")
    assert "after 3 s (killed)" in b.timed_out(3.0).output
    now[0] += 1.5
    spent = b.spent("ping")
    assert spent.kind == TIMEOUT and "ping not run" in spent.output


@pytest.mark.parametrize("given, command_timeout, want", [
    (None, 2.0, 5.0), (None, 30.0, 30.0), (1.5, 30.0, 1.5)])
def test_line_budget_seconds(given, command_timeout, want):
    from netarena_gym.shell.policy import line_budget_seconds
    assert line_budget_seconds(given, command_timeout) == want


@pytest.mark.parametrize("bad", [0, -1, float("inf"), float("nan"), True, "5"])
def test_line_budget_seconds_refuses(bad):
    from netarena_gym.shell.policy import line_budget_seconds
    with pytest.raises(ValueError, match="step_timeout must be seconds > 0"):
        line_budget_seconds(bad, 10.0)
