"""A small, strict POSIX-shell front end shared by every task.

Agents type shell command lines. We never hand them to a real shell: this module tokenises
them (quotes, escapes, ``;`` ``&&`` ``||`` ``|``, newlines, comments and output
redirects, as bash 5.2 reads them: a newline ends a command like ``;``, except on a blank
line or after ``|``, ``&&``, ``||``; backslash-newline joins lines), refuses what an
operator task has no business doing (command substitution, variables, background jobs,
subshells, input redirects), and runs the result through a task-supplied executor for each
simple command. Both backends (simulator and real system) use the same parse and the same
allow-list, so a command is refused or accepted identically on both.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

__all__ = [
    "ShellSyntaxError", "SimpleCommand", "Pipeline", "CommandLine", "CommandResult",
    "parse_command_line", "run_command_line", "OK", "ERROR", "INVALID", "REFUSED", "TIMEOUT",
]

# outcome kinds of one command (reward and info count them)
OK, ERROR, INVALID, REFUSED, TIMEOUT = "ok", "error", "invalid", "refused", "timeout"
_SEVERITY = {OK: 0, ERROR: 1, INVALID: 2, TIMEOUT: 3, REFUSED: 4}


class ShellSyntaxError(ValueError):
    """Bad syntax, or a shell feature that is refused. ``refused`` tells which."""

    def __init__(self, message: str, refused: bool = False):
        super().__init__(message)
        self.refused = refused


@dataclass(slots=True)
class CommandResult:
    output: str
    status: int = 0
    kind: str = OK

    @staticmethod
    def worst(a: str, b: str) -> str:
        return a if _SEVERITY[a] >= _SEVERITY[b] else b


def refused(message: str) -> CommandResult:
    """The observation of a refused command (exit status 126, kind ``refused``)."""
    return CommandResult(f"netarena: command refused: {message}\n", 126, REFUSED)


@dataclass(slots=True)
class SimpleCommand:
    argv: list[str]
    redirect: tuple[str, str] | None = None  # (">" | ">>", path)
    stderr: str | None = None  # None | "stdout" (2>&1) | "null" (2>/dev/null)


@dataclass(slots=True)
class Pipeline:
    commands: list[SimpleCommand] = field(default_factory=list)


@dataclass(slots=True)
class CommandLine:
    items: list[tuple[str, Pipeline]] = field(default_factory=list)  # (connector, pipeline)

    def simple_commands(self):
        for _, p in self.items:
            yield from p.commands


_OPS = ("&&", "||", ">>", "2>&1", ";", "|", ">", "<", "&", "(", ")")


def _tokenize(line: str) -> list[tuple[str, str]]:
    """Returns [(kind, text)] with kind 'w' (word) or 'op'."""
    toks: list[tuple[str, str]] = []
    buf: list[str] = []
    have_word = False
    i, n = 0, len(line)
    while i < n:
        c = line[i]
        if c == "'":
            j = line.find("'", i + 1)
            if j < 0:
                raise ShellSyntaxError("bash: unexpected EOF while looking for matching `''")
            buf.append(line[i + 1:j])
            have_word = True
            i = j + 1
            continue
        if c == '"':
            i += 1
            while True:
                if i >= n:
                    raise ShellSyntaxError('bash: unexpected EOF while looking for matching `"\'')
                c = line[i]
                if c == '"':
                    i += 1
                    break
                if c == "\\" and i + 1 < n and line[i + 1] in '"\\$`\n':
                    if line[i + 1] != "\n":  # backslash-newline: a line continuation
                        buf.append(line[i + 1])
                    i += 2
                    continue
                if c in "$`":
                    raise ShellSyntaxError(
                        "netarena: variables and command substitution are not allowed", True)
                buf.append(c)
                i += 1
            have_word = True
            continue
        if c == "\\":
            if i + 1 < n and line[i + 1] != "\n":  # backslash-newline joins the lines
                buf.append(line[i + 1])
                have_word = True
            i += 2
            continue
        if c in "$`":
            raise ShellSyntaxError(
                "netarena: variables and command substitution are not allowed", True)
        if c in " \t\n\r":
            if have_word:
                toks.append(("w", "".join(buf)))
                buf, have_word = [], False
            if c == "\n":  # ends a command, as ';' does (see parse_command_line)
                toks.append(("op", "\n"))
            i += 1
            continue
        if c == "2" and not have_word and line.startswith("2>", i):
            if have_word:
                toks.append(("w", "".join(buf)))
                buf, have_word = [], False
            if line.startswith("2>&1", i):
                toks.append(("op", "2>&1"))
                i += 4
            else:
                toks.append(("op", "2>"))
                i += 2
            continue
        op = None
        if c in ";&|><()":
            for o in _OPS:
                if line.startswith(o, i):
                    op = o
                    break
        if op is not None:
            if have_word:
                toks.append(("w", "".join(buf)))
                buf, have_word = [], False
            toks.append(("op", op))
            i += len(op)
            continue
        if c == "#" and not have_word:  # a comment, to the end of its line
            j = line.find("\n", i)
            if j < 0:
                break
            i = j
            continue
        buf.append(c)
        have_word = True
        i += 1
    if have_word:
        toks.append(("w", "".join(buf)))
    return toks


def parse_command_line(line: str) -> CommandLine:
    """Parse one command line. Raises :class:`ShellSyntaxError` with bash's wording for
    syntax errors, and ``refused=True`` for shell features we do not allow. A NUL byte is a
    syntax error: no argv of a real command can hold one (``execve`` ends a string there),
    so the simulator and the real system would read such a line differently."""
    if "\x00" in line:
        raise ShellSyntaxError("netarena: a command line cannot contain a NUL byte")
    toks = _tokenize(line)
    cl = CommandLine()
    if not toks:
        return cl
    connector = ""
    pipe = Pipeline()
    cur: SimpleCommand | None = None
    i = 0
    while i < len(toks):
        kind, text = toks[i]
        if kind == "w":
            if cur is None:
                cur = SimpleCommand(argv=[])
                pipe.commands.append(cur)
            cur.argv.append(text)
            i += 1
            continue
        if text in ("&", "(", ")", "<"):
            what = {"&": "background jobs", "(": "subshells", ")": "subshells",
                    "<": "input redirection"}[text]
            raise ShellSyntaxError(f"netarena: {what} are not allowed", True)
        if text in (">", ">>", "2>"):
            if cur is None or not cur.argv:
                raise ShellSyntaxError(f"bash: syntax error near unexpected token `{text}'")
            if i + 1 >= len(toks) or toks[i + 1][0] != "w":
                nxt = toks[i + 1][1] if i + 1 < len(toks) else "newline"
                nxt = "newline" if nxt == "\n" else nxt
                raise ShellSyntaxError(f"bash: syntax error near unexpected token `{nxt}'")
            target = toks[i + 1][1]
            if text == "2>":
                if target != "/dev/null":
                    raise ShellSyntaxError("netarena: writing files is not allowed", True)
                cur.stderr = "null"
            else:
                cur.redirect = (text, target)
            i += 2
            continue
        if text == "\n":
            # a newline ends a command like ';'; a blank line, or one after '|', '&&', '||'
            # or ';', continues the command line
            if cur is not None:
                cl.items.append((connector, pipe))
                connector, pipe, cur = ";", Pipeline(), None
            i += 1
            continue
        if text == "2>&1":
            if cur is None:
                raise ShellSyntaxError("bash: syntax error near unexpected token `2>&1'")
            cur.stderr = "stdout"
            i += 1
            continue
        # connectors and pipes
        if cur is None or not cur.argv:
            raise ShellSyntaxError(f"bash: syntax error near unexpected token `{text}'")
        if text == "|":
            cur = None
            i += 1
            continue
        cl.items.append((connector, pipe))
        connector, pipe, cur = text, Pipeline(), None
        i += 1
    if pipe.commands and cur is None:  # a pipe into nothing
        raise ShellSyntaxError("bash: syntax error: unexpected end of file")
    if pipe.commands:
        cl.items.append((connector, pipe))
    elif connector in ("&&", "||"):
        raise ShellSyntaxError("bash: syntax error: unexpected end of file")
    return cl


Executor = Callable[[SimpleCommand, str], CommandResult]


def run_command_line(cl: CommandLine, execute: Executor) -> CommandResult:
    """Run a parsed command line: ``execute(cmd, stdin)`` runs one simple command.
    Output of every pipeline is concatenated like a terminal shows it; the status is the
    last pipeline's; ``kind`` is the worst outcome seen."""
    out: list[str] = []
    status = 0
    worst = OK
    for connector, pipe in cl.items:
        if connector == "&&" and status != 0:
            continue
        if connector == "||" and status == 0:
            continue
        data = ""
        res = CommandResult("", 0)
        for k, cmd in enumerate(pipe.commands):
            res = execute(cmd, data)
            worst = CommandResult.worst(worst, res.kind)
            data = res.output
            if res.kind in (REFUSED, TIMEOUT):
                break
        out.append(data)
        status = res.status
        if worst in (REFUSED, TIMEOUT):
            break
    text = "".join(o if (not o or o.endswith("\n")) else o + "\n" for o in out)
    return CommandResult(text, status, worst)
