"""GNU grep BRE/ERE on RE2: translation, grep's errors, and linear time on patterns that
make a backtracking engine hang."""
import time

import pytest

from netarena_gym.shell.filters import run_filter
from netarena_gym.shell.regex import RegexError, compile_grep, matches, translate_regex


def test_translate_regex():
    assert translate_regex("a\\(b\\)*c", False) == ("a(b)*c", 1, "")
    assert translate_regex("(a|b)+c?", True)[0] == "(a|b)+c?"
    assert translate_regex("a+?(", False)[0] == "a\\+\\?\\("
    assert translate_regex("a**", True)[0] == "(?:a*)*"
    assert translate_regex("\\<x\\>", False)[0] == "\\bx\\b"
    with pytest.raises(RegexError):
        translate_regex("a\\{3,1\\}", False)
    with pytest.raises(RegexError, match="back-reference"):
        translate_regex("\\(a\\)\\1", False)


def test_leftmost_longest_and_word_matches():
    rx, _ = compile_grep(["a|ab"], "E", False, False, False)
    assert list(matches(rx, "xab")) == ["ab"]  # POSIX, as grep -o prints
    rx, _ = compile_grep(["foo"], "G", True, True, False)
    assert list(matches(rx, "foo Foo xfoo foo_ foo")) == ["foo", "Foo", "foo"]


def cpu(fn):
    t = time.process_time()
    res = fn()
    return res, time.process_time() - t


@pytest.mark.parametrize("argv, text", [
    (["grep", "-E", "(a+)+b"], "a" * 24),
    (["grep", "-E", "(a+)+b"], "a" * 100_000),
    (["grep", "\\(a*\\)*b"], "a" * 100_000),
    (["grep", "-E", "(.+)+Z"], "1: lo: <LOOPBACK,UP,LOWER_UP> mtu 65536 qdisc noqueue " * 400),
    (["grep", "-E", "(a|aa)+$"], "a" * 50_000 + "b"),
    (["grep", "-E", "(x+x+)+y"], "x" * 50_000),
    (["grep", "-P", "(a+)+b"], "a" * 100_000),
    (["grep", "-Eo", "(a|a?)+"], "a" * 20_000),
    (["grep", "-wE", "(a+)+"], "a" * 100_000 + "b"),
])
def test_pathological_patterns_run_in_linear_time(argv, text):
    res, spent = cpu(lambda: run_filter(argv, text + "\n"))
    assert spent < 0.5, f"{argv} took {spent:.2f} s of CPU"
    assert res.status in (0, 1)


def test_what_re2_cannot_express_is_an_error_not_a_hang():
    res, spent = cpu(lambda: run_filter(["grep", "-E", "(a*)*\\1b"], "a" * 30 + "\n"))
    assert (res.status, res.kind) == (2, "invalid") and spent < 0.5
    assert res.output.startswith("grep: back-reference \\1")
    res = run_filter(["grep", "-P", "a(?=b)"], "ab\n")
    assert res.status == 2 and res.output.startswith("grep: unsupported Perl pattern")
