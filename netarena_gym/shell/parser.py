"""A small, strict POSIX-shell front end shared by every task.

Agents type shell command lines. We never hand them to a real shell: this module tokenises
them (quotes, escapes, ``;`` ``&&`` ``||`` ``|``, newlines, comments and output
redirects (``>``, ``>>``, ``1>``, ``2>/dev/null``, ``2>&1``, ``>&2``, ``&>``, ``&>>``,
``>& FILE``, read left to right, before or after the command's words; every file fd 1 is
given is opened in order before the command runs, ``> a > b`` both), as bash 5.2 reads
them: a newline ends a command like ``;``, except on a blank line or after ``|``, ``&&``,
``||``; backslash-newline joins lines), refuses what an operator task has no business doing
(command substitution, variables, background jobs, subshells, input redirects, file
descriptors other than 1 and 2, closing one, stdout and stderr into two different files),
and runs the result through a task-supplied executor for each simple command. Both
backends (simulator and real system) use the same parse and the same allow-list, so a
command is refused or accepted identically on both.

Standard output and standard error go where bash sends them. A program's result
(:class:`CommandResult`) marks the parts of its text it wrote to stderr
(:attr:`CommandResult.err`); :func:`run_command_line` then sends stdout down the pipe (or
into the ``>`` file, through the executor's writer) and stderr to the terminal, drops it
for ``2>/dev/null`` and merges it for ``2>&1`` (before a ``>``: into the pipe; after: into
the file); ``>&2`` sends stdout where stderr goes (the terminal, past the pipe). A result
that marks nothing is all stdout. The terminal shows, in order, each piped command's
stderr as it ran, then the last command's output.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Callable

__all__ = [
    "ShellSyntaxError", "SimpleCommand", "Pipeline", "CommandLine", "CommandResult",
    "parse_command_line", "run_command_line", "OK", "ERROR", "INVALID", "REFUSED", "TIMEOUT",
    "Writer", "null_writer", "streams",
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
    """What one program (or a whole command line) printed, its exit status and outcome kind.

    ``output`` is the text in the order the terminal shows it; ``err`` the ``(start, end)``
    spans of it the program wrote to stderr (empty: all of it is stdout)."""
    output: str
    status: int = 0
    kind: str = OK
    err: tuple[tuple[int, int], ...] = ()

    @staticmethod
    def worst(a: str, b: str) -> str:
        return a if _SEVERITY[a] >= _SEVERITY[b] else b

    @classmethod
    def stderr(cls, text: str, status: int = 1, kind: str = ERROR) -> "CommandResult":
        """A result whose whole text went to stderr."""
        return cls(text, status, kind, ((0, len(text)),) if text else ())

    @classmethod
    def joined(cls, parts, status: int = 0, kind: str = OK) -> "CommandResult":
        """A result from ``(text, to_stderr)`` parts in the order they were written."""
        out, err, at = [], [], 0
        for text, to_err in parts:
            if not text:
                continue
            if to_err:
                if err and err[-1][1] == at:
                    err[-1] = (err[-1][0], at + len(text))
                else:
                    err.append((at, at + len(text)))
            out.append(text)
            at += len(text)
        return cls("".join(out), status, kind, tuple(err))

    @classmethod
    def by_line(cls, text: str, status: int, kind: str, on_stderr) -> "CommandResult":
        """A result whose lines ``on_stderr(line)`` picks went to stderr, the rest to stdout."""
        return cls.joined(((ln, on_stderr(ln)) for ln in text.splitlines(keepends=True)),
                          status, kind)

    def as_stderr(self) -> "CommandResult":
        """This result with all of its text on stderr."""
        return CommandResult.stderr(self.output, self.status, self.kind)

    def split(self) -> tuple[str, str]:
        """``(stdout, stderr)``: the text of each stream."""
        if not self.err:
            return self.output, ""
        text, out, err, at = self.output, [], [], 0
        for a, b in self.err:
            out.append(text[at:a])
            err.append(text[a:b])
            at = b
        out.append(text[at:])
        return "".join(out), "".join(err)


def refused(message: str) -> CommandResult:
    """The observation of a refused command (exit status 126, kind ``refused``)."""
    return CommandResult(f"netarena: command refused: {message}\n", 126, REFUSED)


@dataclass(slots=True)
class SimpleCommand:
    argv: list[str]
    redirect: tuple[str, str] | None = None  # (">" | ">>", path): where stdout goes
    # where stderr goes: None (the terminal), "null" (2>/dev/null), "stdout" (2>&1, with
    # stdout: into the pipe, or after a ">" into its file), "channel" (2>&1 before a ">":
    # into the pipe, or the terminal, where stdout went before it was redirected)
    stderr: str | None = None
    piped: bool = False  # its stdout feeds the next command of the pipeline
    # where stdout goes when not its channel or a file: "terminal" (``>&2`` while stderr
    # is on the terminal, past the pipe)
    stdout: str | None = None
    # bash's message for a redirection that fails before the command runs (``2>&x``:
    # ambiguous redirect); the command is not run, its status is 1
    redirect_error: str | None = None
    # every file fd 1 is opened on, in order, before the command runs: bash opens each
    # (``>`` truncates), ``> a > b`` both and ``> a >&2`` a, and does not run the command
    # when one cannot be opened; ``redirect`` is the last one, unless fd 1 moved on
    opens: tuple[tuple[str, str], ...] = ()

    def targets(self) -> set[str]:
        """The path of every file this command opens or writes (allow-lists check each)."""
        paths = {path for _, path in self.opens}
        if self.redirect is not None:
            paths.add(self.redirect[1])
        return paths


@dataclass(slots=True)
class Pipeline:
    commands: list[SimpleCommand] = field(default_factory=list)


@dataclass(slots=True)
class CommandLine:
    items: list[tuple[str, Pipeline]] = field(default_factory=list)  # (connector, pipeline)

    def simple_commands(self):
        for _, p in self.items:
            yield from p.commands


_OPS = ("&&", "||", ";", "|", "<", "&", "(", ")")
_DIGITS = "0123456789"  # bash reads only these as a file descriptor (not "²" or "٣")


def _redirect_token(line: str, i: int, fd, start: int) -> tuple[tuple[str, tuple], int] | None:
    """The output redirection operator at ``line[i]`` (``>``, ``>>``, ``>&``, after the fd
    ``fd``: None when no number was written, "&" for ``&>``/``&>>``): ``(("r", (fd, mode,
    raw)), end)``, ``raw`` its text from ``start``; None if there is none."""
    if not line.startswith(">", i):
        return None
    if line.startswith(">>", i):
        mode, j = ">>", i + 2
        if line.startswith("&", j):
            raise ShellSyntaxError("bash: syntax error near unexpected token `&'")
    elif line.startswith(">&", i) and fd != "&":
        mode, j = ">&", i + 2
    else:
        mode, j = ">", i + 1
    return ("r", (fd, mode, line[start:j])), j


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
        if c in _DIGITS and not have_word:  # N> N>> N>&: a redirection of fd N
            j = i
            while j < n and line[j] in _DIGITS:
                j += 1
            tok = _redirect_token(line, j, int(line[i:j]), i)
            if tok is not None:
                toks.append(tok[0])
                i = tok[1]
                continue
        if c in ">&":
            tok = (_redirect_token(line, i, None, i) if c == ">" else
                   _redirect_token(line, i + 1, "&", i) if line.startswith("&>", i) else None)
            if tok is not None:
                if have_word:
                    toks.append(("w", "".join(buf)))
                    buf, have_word = [], False
                toks.append(tok[0])
                i = tok[1]
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
    fds: list = []  # where fd 1 and fd 2 of ``cur`` go so far (see :func:`_redirect`)
    i = 0
    while i < len(toks):
        kind, text = toks[i]
        if kind != "op":  # a word or a redirection: part of the current simple command
            if cur is None:
                cur = SimpleCommand(argv=[])
                pipe.commands.append(cur)
                fds = ["chan", "term"]
            if kind == "w":
                cur.argv.append(text)
                i += 1
                continue
            if i + 1 >= len(toks) or toks[i + 1][0] != "w":
                nxt = toks[i + 1] if i + 1 < len(toks) else ("op", "\n")
                nxt = nxt[1][2] if nxt[0] == "r" else "newline" if nxt[1] == "\n" else nxt[1]
                raise ShellSyntaxError(f"bash: syntax error near unexpected token `{nxt}'")
            _redirect(cur, fds, text, toks[i + 1][1])
            i += 2
            continue
        if text in ("&", "(", ")", "<"):
            what = {"&": "background jobs", "(": "subshells", ")": "subshells",
                    "<": "input redirection"}[text]
            raise ShellSyntaxError(f"netarena: {what} are not allowed", True)
        if cur is not None:
            _settle(cur, fds)
        if text == "\n":
            # a newline ends a command like ';'; a blank line, or one after '|', '&&', '||'
            # or ';', continues the command line
            if cur is not None:
                cl.items.append((connector, pipe))
                connector, pipe, cur = ";", Pipeline(), None
            i += 1
            continue
        # connectors and pipes
        if cur is None:
            raise ShellSyntaxError(f"bash: syntax error near unexpected token `{text}'")
        if text == "|":
            cur.piped = True
            cur = None
            i += 1
            continue
        cl.items.append((connector, pipe))
        connector, pipe, cur = text, Pipeline(), None
        i += 1
    if pipe.commands and cur is None:  # a pipe into nothing
        raise ShellSyntaxError("bash: syntax error: unexpected end of file")
    if cur is not None:
        _settle(cur, fds)
    if pipe.commands:
        cl.items.append((connector, pipe))
    elif connector in ("&&", "||"):
        raise ShellSyntaxError("bash: syntax error: unexpected end of file")
    return cl


_FDS_REFUSED = "file descriptors other than 1 and 2 are not allowed"


def _redirect(cmd: SimpleCommand, fds: list, op: tuple, word: str) -> None:
    """Apply one redirection ``op`` (``(fd, mode, raw)`` of :func:`_redirect_token`) to
    ``word`` to ``fds``, where fd 1 and fd 2 go so far, as bash does from left to right:
    "chan" (the command's stdout channel: the pipe, or the terminal), "term" (the
    terminal), "null" (``/dev/null`` on fd 2) or ``(mode, path)`` (a file)."""
    fd, mode, _raw = op
    if mode == ">&":
        if word.isascii() and word.isdigit():  # N>&M: fd N becomes a copy of fd M
            src, to = (1 if fd is None else fd), int(word)
            if src not in (1, 2) or to not in (1, 2):
                raise ShellSyntaxError(f"netarena: {_FDS_REFUSED}", True)
            fds[src - 1] = fds[to - 1]
            return
        if word == "-":
            raise ShellSyntaxError("netarena: closing file descriptors is not allowed", True)
        if fd is not None:  # 2>&name: bash names the word and does not run the command
            cmd.redirect_error = f"bash: {word}: ambiguous redirect\n"
            return
        fd, mode = "&", ">"  # >&name is &>name
    if fd == "&":  # &>name, &>>name: both into the file
        fds[0] = fds[1] = (mode, word)
        cmd.opens += ((mode, word),)
    elif fd is None or fd == 1:
        fds[0] = (mode, word)
        cmd.opens += ((mode, word),)
    elif fd == 2:
        if word != "/dev/null":
            raise ShellSyntaxError("netarena: writing files is not allowed", True)
        fds[1] = "null"
    else:
        raise ShellSyntaxError(f"netarena: {_FDS_REFUSED}", True)


def _settle(cmd: SimpleCommand, fds: list) -> None:
    """Set ``cmd``'s ``redirect``, ``stdout`` and ``stderr`` from where its redirections
    left fd 1 and fd 2 (:func:`_redirect`). A command must have a name."""
    if not cmd.argv:
        raise ShellSyntaxError("netarena: a redirection needs a command", True)
    one, two = fds
    if isinstance(two, tuple) and two != one:  # a file fd 1 left (> a 2>&1 > b)
        if two[1] != "/dev/null":
            raise ShellSyntaxError("netarena: stdout and stderr into two different files "
                                   "are not allowed", True)
        two = "null"
    if one == "term":  # >&2 with stderr on the terminal
        cmd.stdout = "terminal"
    elif one == "null":  # 2>/dev/null >&2
        cmd.redirect = (">", "/dev/null")
    elif one != "chan":
        cmd.redirect = one
    cmd.stderr = (None if two == "term" else "null" if two == "null" else
                  "stdout" if two == one or one == "chan" else "channel")


Executor = Callable[[SimpleCommand, str], CommandResult]
# writer(cmd, text): put ``text`` where ``cmd.redirect`` names, as bash's ``>``/``>>`` do;
# its result's stdout part stays on the command's stdout (``/dev/stdout``), the rest
# (bash's error message, ``/dev/stderr``) goes to the terminal. ``text=None``: only open
# the target, before the command runs (bash's open: a failure means it does not run)
Writer = Callable[[SimpleCommand, str | None], CommandResult]


def null_writer(cmd: SimpleCommand, text: str | None) -> CommandResult:
    """The writer of a task whose allow-list lets only ``/dev/null`` be a target."""
    if cmd.redirect[1] != "/dev/null":
        from netarena_gym.errors import NetArenaError
        raise NetArenaError(f"no writer for {cmd.redirect[1]!r}: the allow-list should refuse it")
    return CommandResult("")


def streams(cmd: SimpleCommand, res: CommandResult,
            write: Writer) -> tuple[str, str, CommandResult | None]:
    """Where ``res`` goes after ``cmd``'s redirections: ``(text on its stdout channel, text
    for the terminal, the writer's result or None)``. The stdout channel is the pipe, or
    the terminal for the last command of a pipeline."""
    err = cmd.stderr
    if cmd.stdout == "terminal":  # >&2: stdout goes where stderr goes, the terminal
        return "", (res.split()[0] if err == "null" else res.output), None
    if not res.err or err in ("stdout", "channel") and cmd.redirect is None:
        out, errtext = res.output, ""  # one stream (2>&1, or nothing on stderr)
    else:
        out, errtext = res.split()
    if err == "null":
        errtext = ""
    if cmd.redirect is None:
        if err is None and not cmd.piped:  # both on the terminal, in the order written
            return res.output, "", None
        return out, errtext, None
    wrote = write(cmd, res.output if err == "stdout" else out)
    channel, message = wrote.split()
    if err == "channel":
        channel += errtext
    elif err is None:
        message = errtext + message
    return channel, message, wrote


def _open(cmd: SimpleCommand, write: Writer) -> CommandResult | None:
    """bash's opens of ``cmd``'s files before it runs, in order: the failed open's result
    (the command then does not run), or None."""
    for target in cmd.opens or ((cmd.redirect,) if cmd.redirect is not None else ()):
        opened = write(cmd if target == cmd.redirect else replace(cmd, redirect=target), None)
        if opened.status != 0:
            return opened
    return None


def run_command_line(cl: CommandLine, execute: Executor,
                     write: Writer = null_writer) -> CommandResult:
    """Run a parsed command line: ``execute(cmd, stdin)`` runs one simple command,
    ``write`` puts a ``>`` redirect's text in its file (see :data:`Writer`). Standard
    output and error go as the module docstring says; the status is the last pipeline's
    (a failed redirect: 1; a target that cannot be opened: the command is not run, as in
    bash); ``kind`` is the worst outcome seen. Refusals and timeouts
    (ours, not the program's) are shown whatever the redirections, and stop the line."""
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
        for cmd in pipe.commands:
            if cmd.redirect_error is not None:  # bash does not run the command
                res, data = CommandResult.stderr(cmd.redirect_error, 1, ERROR), ""
                out.append(res.output)
                worst = CommandResult.worst(worst, res.kind)
                continue
            opened = _open(cmd, write)
            if opened is not None:  # bash could not open a target: no command runs
                out.append(opened.output)
                worst = CommandResult.worst(worst, opened.kind)
                res, data = opened, ""
                continue
            res = execute(cmd, data)
            worst = CommandResult.worst(worst, res.kind)
            if res.kind in (REFUSED, TIMEOUT):
                data = res.output
                break
            data, shown, wrote = streams(cmd, res, write)
            if shown:
                out.append(shown)
            if wrote is not None and wrote.status != 0:
                res = CommandResult(res.output, wrote.status,
                                    CommandResult.worst(res.kind, wrote.kind))
                worst = CommandResult.worst(worst, wrote.kind)
        out.append(data)
        status = res.status
        if worst in (REFUSED, TIMEOUT):
            break
    text = "".join(o if (not o or o.endswith("\n")) else o + "\n" for o in out)
    return CommandResult(text, status, worst)
