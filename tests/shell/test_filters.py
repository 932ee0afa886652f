"""Pipe filters (GNU grep 3.8 / coreutils 9.1 behaviour): output, messages, exit statuses;
file operands and output options refused."""
import shlex

import pytest

from netarena_gym.shell.parser import INVALID, OK, REFUSED
from netarena_gym.shell.filters import FILTERS, operand_refusal, run_filter

TEXT = "a(b\nfoo bar\nFoo\nfoobar\n  10 x\n2 y\n10 x\nb\nb\nB\n\tz\n9.5\n-3 neg\nfoo.bar\n"
USAGE = "Usage: grep [OPTION]... PATTERNS [FILE]...\nTry 'grep --help' for more information.\n"


def run(line, stdin=TEXT):
    argv = shlex.split(line)
    return FILTERS[argv[0]](argv, stdin)


def out(line, stdin=TEXT):
    res = run(line, stdin)
    assert res.kind == OK, res.output
    return res.output


@pytest.mark.parametrize("line, expected", [
    ("grep foo", "foo bar\nfoobar\nfoo.bar\n"),
    ("grep -i foo", "foo bar\nFoo\nfoobar\nfoo.bar\n"),
    ("grep -c foo", "3\n"),
    ("grep -vc foo", "11\n"),
    ("grep -n -i FOO", "2:foo bar\n3:Foo\n4:foobar\n14:foo.bar\n"),
    ("grep -w foo", "foo bar\nfoo.bar\n"),
    ("grep -x b", "b\nb\n"),
    ("grep -o 'o\\+'", "oo\noo\noo\noo\n"),
    ("grep -E 'bar$|^B'", "foo bar\nfoobar\nB\nfoo.bar\n"),
    ("grep 'foo\\|^b$'", "foo bar\nfoobar\nb\nb\nfoo.bar\n"),
    ("grep 'a(b'", "a(b\n"),
    ("grep -F 'o.b'", "foo.bar\n"),
    ("grep 'o.b'", "foo bar\nfoobar\nfoo.bar\n"),
    ("grep -e neg -e '^2'", "2 y\n-3 neg\n"),
    ("grep -E '^[[:digit:]]+ [a-z]$'", "2 y\n10 x\n"),
    ("grep '^[[:space:]]'", "  10 x\n\tz\n"),
    ("grep '\\<bar'", "foo bar\nfoo.bar\n"),
    ("grep -E 'o{2}b'", "foobar\n"),
    ("grep -m 1 -n b", "1:a(b\n"),
    ("grep -A1 Foo", "Foo\nfoobar\n"),
    ("grep -n -C1 '2 y'", "5-  10 x\n6:2 y\n7-10 x\n"),
    ("grep -B1 -x B", "b\nB\n"),
    ("grep -A1 '^b'", "b\nb\nB\n"),
    ("grep -x -e b -e 9.5 -A0", "b\nb\n--\n9.5\n"),
])
def test_grep_output(line, expected):
    res = run(line)
    assert (res.output, res.status) == (expected, 0)


def test_grep_exit_statuses():
    assert (run("grep nothing").output, run("grep nothing").status) == ("", 1)
    assert run("grep -c nothing").output == "0\n" and run("grep -c nothing").status == 1
    assert (run("grep -q foo").output, run("grep -q foo").status) == ("", 0)
    assert run("grep -q nothing").status == 1
    assert run("grep ''").output == TEXT
    assert run("grep x", stdin="").status == 1


@pytest.mark.parametrize("pattern, message", [
    ("'\\('", "Unmatched ( or \\("),
    ("-E '('", "Unmatched ( or \\("),
    ("'\\)'", "Unmatched ) or \\)"),
    ("'['", "Invalid regular expression"),
    ("'[a'", "Unmatched [, [^, [:, [., or [="),
    ("'a\\{1'", "Unmatched \\{"),
    ("'x\\'", "Trailing backslash"),
    ("'\\1'", "Invalid back reference"),
    ("'\\(o\\)\\1'", "back-reference \\1: not supported (patterns run on the linear-time RE2 engine)"),
    ("-E 'a{1001}'", "Regular expression too big"),
    ("'[z-a]'", "Invalid range end"),
    ("'[[:foo:]]'", "Invalid character class name"),
    ("'[:space:]'", "character class syntax is [[:space:]], not [:space:]"),
])
def test_grep_bad_regex(pattern, message):
    res = run(f"grep {pattern}")
    assert (res.output, res.status, res.kind) == (f"grep: {message}\n", 2, INVALID)


def test_grep_gnu_quirks():
    assert run("grep -E ')'").status == 1  # a lone ) is literal in ERE
    assert run("grep -E 'a{1'").status == 1  # so is a brace that opens no interval
    assert out("grep '*('", "a(b\nx*(y\n") == "x*(y\n"  # leading * is literal in BRE
    res = run("grep -E '*a'")
    assert res.output.startswith("grep: warning: * at start of expression\na(b\n")
    assert run("grep '\\d'").status == 1  # \d is a plain d for grep


def test_grep_usage():
    assert (run("grep").output, run("grep").status, run("grep").kind) == (USAGE, 2, INVALID)
    assert run("grep -Q x").output == "grep: invalid option -- 'Q'\n" + USAGE
    assert run("grep --foo x").output == "grep: unrecognized option '--foo'\n" + USAGE
    assert run("grep -A x foo").output == "grep: x: invalid context length argument\n"
    assert out("grep -H two -", "one\ntwo\n") == "(standard input):two\n"
    assert out("grep -c o - -", "one\ntwo\n") == "(standard input):2\n(standard input):0\n"


@pytest.mark.parametrize("line, why", [
    ("grep -h root /etc/shadow", "file operands are not allowed (/etc/shadow)"),
    ("grep root - /etc/shadow", "(/etc/shadow)"),
    ("grep -e root /etc/shadow", "(/etc/shadow)"),
    ("grep -f /etc/shadow", "grep -f reads patterns from a file"),
    ("grep --file=/etc/shadow", "grep -f reads patterns from a file"),
    ("grep -r root /etc", "grep -r/-R/-d/-D"),
    ("grep --recursive root", "grep -r/-R/-d/-D"),
    ("grep -d recurse x", "grep -r/-R/-d/-D"),
    ("egrep x /etc/shadow", "reads only the output piped into it"),
    ("head -n 2 /etc/shadow", "(/etc/shadow)"),
    ("head -- /etc/shadow", "(/etc/shadow)"),
    ("tail -1 /etc/shadow", "(/etc/shadow)"),
    ("tail +2 /etc/shadow", "(/etc/shadow)"),
    ("wc -l /etc/shadow", "(/etc/shadow)"),
    ("sort /etc/shadow", "(/etc/shadow)"),
    ("sort -o /tmp/x", "sort -o/-T write files"),
    ("sort -o/tmp/x", "sort -o/-T write files"),
    ("sort -ro /tmp/x", "sort -o/-T write files"),
    ("sort --output=/tmp/x", "sort -o/-T write files"),
    ("sort --out /tmp/x", "sort -o/-T write files"),
    ("sort -T /tmp", "sort -o/-T write files"),
    ("uniq - /tmp/x", "uniq writes its output operand"),
    ("uniq /etc/shadow", "(/etc/shadow)"),
])
def test_file_operands_and_output_options_refused(line, why):
    res = run_filter(shlex.split(line), "root:x\n")
    assert res.kind == REFUSED and res.status == 126 and why in res.output, res.output
    assert "root:x" not in res.output
    assert operand_refusal(shlex.split(line)) is not None


@pytest.mark.parametrize("line", ["grep root", "grep -e root -", "head -n 1 -", "tail +1",
                                  "sort -k2 -t :", "uniq -c -", "wc -l", "grep -- -x"])
def test_stdin_operands_allowed(line):
    assert operand_refusal(shlex.split(line)) is None
    assert run_filter(shlex.split(line), "root:x\n").kind != REFUSED


@pytest.mark.parametrize("line, expected", [
    ("head -n 2", "a(b\nfoo bar\n"),
    ("head -3", "a(b\nfoo bar\nFoo\n"),
    ("head -n -12", "a(b\nfoo bar\n"),
    ("head -c 5", "a(b\nf"),
    ("head -n 0", ""),
    ("tail -n 2", "-3 neg\nfoo.bar\n"),
    ("tail -1", "foo.bar\n"),
    ("tail -n +13", "-3 neg\nfoo.bar\n"),
    ("tail -c 4", "bar\n"),
    ("wc", "     14      19      67\n"),
    ("wc -l", "14\n"),
    ("wc -w", "19\n"),
    ("wc -c", "67\n"),
    ("wc -lw", "     14      19\n"),
    ("wc -L", "9\n"),
    ("sort -u", ("\tz\n  10 x\n-3 neg\n10 x\n2 y\n9.5\nB\nFoo\na(b\nb\nfoo bar\nfoo.bar\n"
                 "foobar\n")),
    ("uniq -c", ("      1 a(b\n      1 foo bar\n      1 Foo\n      1 foobar\n      1   10 x\n"
                 "      1 2 y\n      1 10 x\n      2 b\n      1 B\n      1 \tz\n      1 9.5\n"
                 "      1 -3 neg\n      1 foo.bar\n")),
    ("uniq -d", "b\n"),
    ("uniq -i -c -d", "      3 b\n"),
])
def test_head_tail_wc_sort_uniq(line, expected):
    assert out(line) == expected


def test_sort_modes():
    data = "10 b\n9 a\n100 c\n-1 d\n"
    assert out("sort -n", data) == "-1 d\n9 a\n10 b\n100 c\n"
    assert out("sort -rn", data) == "100 c\n10 b\n9 a\n-1 d\n"
    assert out("sort", data) == "-1 d\n10 b\n100 c\n9 a\n"
    assert out("sort -k2", data) == "9 a\n10 b\n100 c\n-1 d\n"
    assert out("sort -k 2,2 -r", data) == "-1 d\n100 c\n10 b\n9 a\n"
    assert out("sort -t : -k2n", "x:3\ny:1\nz:2\n") == "y:1\nz:2\nx:3\n"
    assert out("sort -f", "b\nA\na\nB\n") == "A\na\nB\nb\n"


def test_filter_errors():
    res = run("head -n x")
    assert (res.output, res.status, res.kind) == (
        "head: invalid number of lines: \u2018x\u2019\n", 1, INVALID)
    assert run("wc -Q").output == (
        "wc: invalid option -- 'Q'\nTry 'wc --help' for more information.\n")
    assert run("uniq -Q").status == 1
    assert out("head -n 1 - -") == "==> standard input <==\na(b\n\n==> standard input <==\n"
    assert out("wc -l - -", "1\n2\n") == "      2 -\n      0 -\n      2 total\n"
