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


SUBST = "variables and command substitution"
FDS = "file descriptors other than 1 and 2"


@pytest.mark.parametrize("line,msg", [
    ("echo $(id)", SUBST), ("echo `id`", SUBST), ("echo $HOME", SUBST), ('echo "$x"', SUBST),
    ("sleep 1 &", "background jobs"), ("(ip a)", "subshells"),
    ("cat < /etc/passwd", "input redirection"),
    ("say a E 3>/dev/null", FDS), ("say a E 12>/dev/null", FDS), ("say a E 2>&3", FDS),
    ("say a E >&-", "closing file descriptors"),
    ("say a E > /proc/sys/x 2>&1 > /proc/sys/y", "two different files"),
    ("> /proc/sys/x", "a redirection needs a command"),
    ("say a E &>> /tmp/x 2> /tmp/y", "writing files is not allowed"),
])
def test_refused_shell_features_name_what_is_refused(line, msg):
    with pytest.raises(ShellSyntaxError) as e:
        parse_command_line(line)
    assert e.value.refused and msg in str(e.value)


@pytest.mark.parametrize("line,msg", [
    ("ip a ;; ip r", "syntax error near unexpected token `;'"),
    ("| grep x", "syntax error near unexpected token `|'"),
    ("echo 'open", "unexpected EOF"),
    ("ip a &&", "unexpected end of file"),
    ("say a E >>&2", "syntax error near unexpected token `&'"),  # bash 5.2's words
    ("say a E &>", "syntax error near unexpected token `newline'"),
    ("say a E >&", "syntax error near unexpected token `newline'"),
    ("say a E > >&2", "syntax error near unexpected token `>&'"),
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



# ------------------------------------------------------------------- stdout and stderr
def _tool(cmd, stdin):
    """``say OUT ERR``: prints OUT on stdout, then ERR on stderr, then OUT again; ``up``
    upper-cases its stdin; ``bad``: a failure whose text is all stderr."""
    if cmd.argv[0] == "up":
        return CommandResult(stdin.upper(), 0, OK)
    if cmd.argv[0] == "bad":
        return CommandResult.stderr("bad: no such thing\n", 2, ERROR)
    out, err = cmd.argv[1], cmd.argv[2]
    return CommandResult.joined([(out + "\n", False), (err + "\n", True), (out + "\n", False)])


def run(line, write=None):
    written = []

    def writer(cmd, text):
        if text is None:  # bash opens the target before the command runs
            if cmd.redirect[1] == "/nofile":
                return CommandResult.stderr("bash: /nofile: No such file or directory\n")
            return CommandResult("")
        written.append((cmd.redirect, text))
        if cmd.redirect[1] == "/full":
            return CommandResult.stderr(f"bash: {cmd.argv[0]}: write error: No space left on device\n")
        return CommandResult("")
    r = run_command_line(parse_command_line(line), _tool, write or writer)
    return r.output, r.status, written


def test_results_mark_what_went_to_stderr():
    r = _tool(parse_command_line("say a E").items[0][1].commands[0], "")
    assert r.output == "a\nE\na\n" and r.err == ((2, 4),)
    assert r.split() == ("a\na\n", "E\n")
    assert CommandResult("x\n").split() == ("x\n", "")
    assert CommandResult.by_line("ok 1\nping: oops\nok 2\n", 0, OK,
                                 lambda ln: ln.startswith("ping:")).split() == ("ok 1\nok 2\n", "ping: oops\n")
    assert CommandResult("x\n", 1, ERROR).as_stderr().split() == ("", "x\n")


def test_the_terminal_shows_both_streams_in_the_order_written():
    assert run("say a E")[0] == "a\nE\na\n"


def test_2_to_dev_null_drops_stderr_only():
    assert run("say a E 2>/dev/null")[0] == "a\na\n"
    assert run("say a E 2>>/dev/null")[0] == "a\na\n"
    assert run("bad 2>/dev/null") == ("", 2, [])  # the status stays the program's


def test_a_pipe_carries_stdout_and_stderr_reaches_the_terminal_first():
    assert run("say a E | up")[0] == "E\nA\nA\n"
    assert run("bad | up")[0] == "bad: no such thing\n"
    assert run("say a E 2>&1 | up")[0] == "A\nE\nA\n"
    assert run("say a E 2>/dev/null | up")[0] == "A\nA\n"


def test_a_file_redirect_takes_stdout_and_2_to_1_follows_its_place_in_the_line():
    out, status, written = run("say a E > /proc/sys/x")
    assert out == "E\n" and written == [((">", "/proc/sys/x"), "a\na\n")]
    out, _, written = run("say a E 1>> /proc/sys/x")
    assert out == "E\n" and written == [((">>", "/proc/sys/x"), "a\na\n")]
    out, _, written = run("say a E > /proc/sys/x 2>&1")  # both into the file
    assert out == "" and written[0][1] == "a\nE\na\n"
    out, _, written = run("say a E 2>&1 > /proc/sys/x | up")  # stderr where stdout was: the pipe
    assert out == "E\n" and written[0][1] == "a\na\n"
    out, _, written = run("say a E 2>&1 > /proc/sys/x")
    assert out == "E\n"


def test_a_redirect_writes_even_when_the_program_fails_and_its_failure_sets_the_status():
    out, status, written = run("bad > /proc/sys/x")
    assert (out, status, written) == ("bad: no such thing\n", 2, [((">", "/proc/sys/x"), "")])
    out, status, _ = run("say a E > /full")
    assert (out, status) == ("E\nbash: say: write error: No space left on device\n", 1)


def test_a_target_that_cannot_be_opened_means_the_command_does_not_run():
    ran = []

    def ex(cmd, stdin):
        ran.append(cmd.argv[0])
        return _tool(cmd, stdin)
    r = run_command_line(parse_command_line("say a E > /nofile; say b F 2>/dev/null"), ex,
                         lambda cmd, text: CommandResult.stderr("bash: /nofile: No such file or "
                                                                "directory\n") if text is None
                         else CommandResult(""))
    assert r.output == "bash: /nofile: No such file or directory\nb\nb\n" and ran == ["say"]
    assert run("say a E > /nofile && say b F") == ("bash: /nofile: No such file or directory\n", 1, [])


def test_1_and_2_redirect_only_at_the_start_of_a_word():
    cmd = parse_command_line("echo x1>/dev/null").items[0][1].commands[0]
    assert cmd.argv == ["echo", "x1"] and cmd.redirect == (">", "/dev/null")
    cmd = parse_command_line("echo 1 1>/dev/null").items[0][1].commands[0]
    assert cmd.argv == ["echo", "1"] and cmd.redirect == (">", "/dev/null")
    cmd = parse_command_line("ip a | grep x").items[0][1].commands
    assert cmd[0].piped and not cmd[1].piped


def test_without_a_writer_only_dev_null_is_a_target():
    from netarena_gym.errors import NetArenaError
    assert run_command_line(parse_command_line("say a E > /dev/null"), _tool).output == "E\n"
    with pytest.raises(NetArenaError):
        run_command_line(parse_command_line("say a E > /proc/sys/x"), _tool)


# bash 5.2 on the project's machine gave each expectation below (say a E: a, E, a)
def test_stdout_to_stderr_reaches_the_terminal_past_the_pipe():
    assert run("say a E >&2")[0] == "a\nE\na\n"
    assert run("say a E 1>&2 | up")[0] == "a\nE\na\n"  # the pipe carries nothing
    assert run("say a E >& 2 | up")[0] == "a\nE\na\n"
    assert run("say a E >&2 2>/dev/null")[0] == "a\na\n"  # fd 1 took the terminal first
    assert run("say a E 2>/dev/null >&2")[0] == ""  # fd 1 follows fd 2 into /dev/null
    assert run("say a E 2>&1 >&2 | up")[0] == "A\nE\nA\n"  # both into the pipe
    assert run("say a E >&1 2>&2 | up")[0] == "E\nA\nA\n"  # copies of themselves


def test_both_streams_into_one_file():
    for line in ("say a E &> /proc/sys/x", "say a E >& /proc/sys/x", "say a E &>/proc/sys/x"):
        out, _, written = run(line)
        assert out == "" and written == [((">", "/proc/sys/x"), "a\nE\na\n")], line
    out, _, written = run("say a E &>> /proc/sys/x")
    assert out == "" and written == [((">>", "/proc/sys/x"), "a\nE\na\n")]
    assert run("bad &>/dev/null || say x y")[0] == "x\ny\nx\n"


def test_redirections_may_come_before_the_command():
    cmd = parse_command_line("2>/dev/null > /proc/sys/x say a E").items[0][1].commands[0]
    assert cmd.argv == ["say", "a", "E"] and cmd.redirect == (">", "/proc/sys/x")
    assert cmd.stderr == "null"
    assert run("2>/dev/null say a E")[0] == "a\na\n"


def test_an_ambiguous_redirect_fails_that_command_only():
    out, status, _ = run("say a E 2>&x; say b F")
    assert out == "bash: x: ambiguous redirect\nb\nF\nb\n" and status == 0
    assert run("say a E 1>&1x")[:2] == ("bash: 1x: ambiguous redirect\n", 1)


def test_a_dev_null_file_on_fd_2_left_behind_by_fd_1_drops_stderr():
    out, _, written = run("say a E > /dev/null 2>&1 > /proc/sys/x")
    assert out == "" and written == [((">", "/proc/sys/x"), "a\na\n")]


def test_only_ascii_digits_name_a_file_descriptor():
    # str.isdigit() holds for "²" and "٣", which int() rejects or reads as 3; bash reads
    # them as words (a crash through env.step before)
    cmd = parse_command_line("say ²>/dev/null").items[0][1].commands[0]
    assert cmd.argv == ["say", "²"] and cmd.redirect == (">", "/dev/null")
    cmd = parse_command_line("say ٣>/dev/null").items[0][1].commands[0]
    assert cmd.argv == ["say", "٣"] and cmd.redirect == (">", "/dev/null")
    cmd = parse_command_line("say a E >&²").items[0][1].commands[0]
    assert cmd.redirect == (">", "²") and cmd.stderr == "stdout"  # >&name is &>name


def test_every_file_fd_1_is_given_is_opened_in_order_before_the_command_runs():
    # bash 5.2: `echo hi > a > b` empties a and writes b; `> a >&2` empties a and prints
    # on stderr; a target that cannot be opened stops the opens and the command
    opened = []

    def writer(cmd, text):
        if text is None:
            opened.append(cmd.redirect)
            if cmd.redirect[1] == "/nofile":
                return CommandResult.stderr("bash: /nofile: No such file or directory\n")
        return CommandResult("")
    cmd = parse_command_line("say a E > /proc/a >> /proc/b").items[0][1].commands[0]
    assert cmd.opens == ((">", "/proc/a"), (">>", "/proc/b")) and cmd.redirect == (">>", "/proc/b")
    assert cmd.targets() == {"/proc/a", "/proc/b"}
    assert run("say a E > /proc/a > /proc/b", writer)[0] == "E\n"
    assert opened == [(">", "/proc/a"), (">", "/proc/b")]
    opened.clear()
    assert run("say a E > /proc/a >&2", writer)[0] == "a\nE\na\n"
    assert opened == [(">", "/proc/a")]
    opened.clear()
    out, status, _ = run("say a E > /nofile > /proc/b || say b F", writer)
    assert (out, status) == ("bash: /nofile: No such file or directory\nb\nF\nb\n", 0)
    assert opened == [(">", "/nofile")]  # /proc/b is not opened, say a E does not run
    opened.clear()
    assert run("say a E > /proc/b > /nofile", writer)[:2] == (
        "bash: /nofile: No such file or directory\n", 1)
    assert opened == [(">", "/proc/b"), (">", "/nofile")]
    assert parse_command_line("say 2>/dev/null >&2").items[0][1].commands[0].opens == ()
