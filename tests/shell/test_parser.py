import pytest

from netarena_gym.shell.parser import (
    ERROR, INVALID, OK, REFUSED, CommandResult, ShellSyntaxError, parse_command_line,
    run_command_line)


def argvs(line):
    return [[c.argv for c in p.commands] for _, p in parse_command_line(line).items]


def test_quotes_escapes_and_operators():
    assert argvs("ip addr show") == [[["ip", "addr", "show"]]]
    assert argvs("echo 'a; b' \"c|d\" e\\ f") == [[["echo", "a; b", "c|d", "e f"]]]
    assert argvs("ip a; ip r && ip ru || true") == [[["ip", "a"]], [["ip", "r"]], [["ip", "ru"]], [["true"]]]
    assert argvs("ip a | grep inet | head -n 2") == [[["ip", "a"], ["grep", "inet"], ["head", "-n", "2"]]]
    cl = parse_command_line("ip link set r0-eth1 alias \"LAN s1 192.168.1.1/24\"")
    assert cl.items[0][1].commands[0].argv[-1] == "LAN s1 192.168.1.1/24"


def test_redirects():
    cmd = parse_command_line("echo 1 > /proc/sys/net/ipv4/ip_forward").items[0][1].commands[0]
    assert cmd.argv == ["echo", "1"] and cmd.redirect == (">", "/proc/sys/net/ipv4/ip_forward")
    cmd = parse_command_line("ping -c1 10.0.0.1 2>&1").items[0][1].commands[0]
    assert cmd.stderr == "stdout"
    with pytest.raises(ShellSyntaxError) as e:
        parse_command_line("ls 2> /tmp/x")
    assert e.value.refused


@pytest.mark.parametrize("line", ["echo $(id)", "echo `id`", "echo $HOME", "sleep 1 &",
                                  "(ip a)", "cat < /etc/passwd", 'echo "$x"'])
def test_refused_shell_features(line):
    with pytest.raises(ShellSyntaxError) as e:
        parse_command_line(line)
    assert e.value.refused


@pytest.mark.parametrize("line,msg", [
    ("ip a ;; ip r", "syntax error near unexpected token `;'"),
    ("| grep x", "syntax error near unexpected token `|'"),
    ("echo 'open", "unexpected EOF"),
    ("ip a &&", "unexpected end of file"),
])
def test_syntax_errors_use_bash_wording(line, msg):
    with pytest.raises(ShellSyntaxError) as e:
        parse_command_line(line)
    assert msg in str(e.value) and not e.value.refused


def test_run_command_line_connectors_and_pipes():
    calls = []

    def ex(cmd, stdin):
        calls.append((cmd.argv[0], stdin))
        if cmd.argv[0] == "fail":
            return CommandResult("boom\n", 2, ERROR)
        if cmd.argv[0] == "up":
            return CommandResult(stdin.upper(), 0, OK)
        return CommandResult(" ".join(cmd.argv[1:]) + "\n", 0, OK)

    r = run_command_line(parse_command_line("fail && echo no || echo yes"), ex)
    assert r.output == "boom\nyes\n" and r.status == 0 and r.kind == ERROR
    r = run_command_line(parse_command_line("echo hi | up"), ex)
    assert r.output == "HI\n"
    assert ("up", "hi\n") in calls


def test_refusal_stops_the_rest():
    def ex(cmd, stdin):
        if cmd.argv[0] == "bad":
            return CommandResult("no\n", 126, REFUSED)
        return CommandResult("ran\n", 0, OK)
    r = run_command_line(parse_command_line("bad; echo x"), ex)
    assert r.kind == REFUSED and "ran" not in r.output
    assert CommandResult.worst(OK, INVALID) == INVALID


def test_a_nul_byte_is_a_syntax_error_on_every_backend():
    """No real argv can hold a NUL (execve ends the string there): the line is refused as
    invalid before any backend sees it, instead of raising out of ``subprocess``."""
    from netarena_gym.shell.policy import parse
    for line in ("ip link show r0\x00-eth0", "echo a > /tmp/x\x00y", "\x00"):
        with pytest.raises(ShellSyntaxError, match="NUL byte") as e:
            parse_command_line(line)
        assert not e.value.refused
        cl, res = parse(line)
        assert cl is None and res.kind == INVALID and "NUL byte" in res.output


def items(line: str):
    return [(c, [x.argv for x in p.commands]) for c, p in parse_command_line(line).items]


def test_a_newline_ends_a_command_as_bash_reads_it():
    # bash 5.2: a newline separates commands like ';'; after '|', '&&', '||' and on a blank
    # line it continues; a comment ends at its line; backslash-newline joins the lines
    assert items("ip a\nip r") == [("", [["ip", "a"]]), (";", [["ip", "r"]])]
    assert items("\n\nip a # look\nip r # and fix\n") == [("", [["ip", "a"]]), (";", [["ip", "r"]])]
    assert items("ip a |\n grep x") == [("", [["ip", "a"], ["grep", "x"]])]
    assert items("ip a &&\n\n ip r") == [("", [["ip", "a"]]), ("&&", [["ip", "r"]])]
    assert items("ip a;\nip r") == [("", [["ip", "a"]]), (";", [["ip", "r"]])]
    assert items("ip a \\\n show") == [("", [["ip", "a", "show"]])]
    assert items('echo "a\\\nb"') == [("", [["echo", "ab"]])]


@pytest.mark.parametrize("line, msg", [
    ("ip a\n|grep x", "bash: syntax error near unexpected token `|'"),
    ("ip a;\n;", "bash: syntax error near unexpected token `;'"),
    ("ip a >\n", "bash: syntax error near unexpected token `newline'"),
    ("ip a |\n", "bash: syntax error: unexpected end of file"),
    ("ip a &&\n", "bash: syntax error: unexpected end of file"),
])
def test_newline_syntax_errors_use_bash_wording(line, msg):
    with pytest.raises(ShellSyntaxError, match=msg.replace("|", "\\|")):
        parse_command_line(line)

