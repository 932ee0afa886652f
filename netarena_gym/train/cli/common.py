"""What the ``netarena-gym`` commands share: a parser whose ``--help`` shows every
option's default and an ``examples:`` epilog, and whose errors are one line.

Mirrors :mod:`argparse` (Python 3.11+); what it changes: ``error()`` prints one line
(``PROG: error: MESSAGE``) without the usage block, and exits with status 2 as argparse
does."""
from __future__ import annotations

import argparse
import re
import sys

_ROLE = re.compile(r":[a-z]+:`~?(?:[\w.]+\.)?([\w]+)`")


def plain(text: str) -> str:
    """Docstring text without reStructuredText markup (roles, double backquotes, ``::``)."""
    text = _ROLE.sub(r"\1", text)
    text = text.replace("``", "")
    return re.sub(r"::\s*$", ":", text, flags=re.M)


def examples(doc: str | None) -> str:
    """An ``examples:`` epilog from the ``netarena-gym ...`` command lines of a docstring's
    indented (code) blocks; continuation lines ending in a backslash are joined."""
    lines, cur = [], ""
    for raw in (doc or "").splitlines():
        s = raw.strip()
        if cur:
            cur += " " + s.rstrip("\\").strip()
            if not s.endswith("\\"):
                lines.append(cur)
                cur = ""
        elif raw.startswith("    ") and s.startswith("netarena-gym "):
            if s.endswith("\\"):
                cur = s.rstrip("\\").strip()
            else:
                lines.append(s)
    if cur:
        lines.append(cur)
    return ("examples:\n" + "\n".join(f"  {x}" for x in lines)) if lines else ""


class HelpFormatter(argparse.ArgumentDefaultsHelpFormatter,
                    argparse.RawDescriptionHelpFormatter):
    """``--help`` keeps the description's and the epilog's layout and shows the defaults."""


class TrainParser(argparse.ArgumentParser):
    """An option without a help text still gets one: its default (argparse's
    ``ArgumentDefaultsHelpFormatter`` skips options without help). Errors are one line."""

    def add_argument(self, *args, **kwargs):
        if (args and str(args[0]).startswith("-") and not kwargs.get("help")
                and kwargs.get("action") not in ("version", "help")):
            kwargs["help"] = "(default: %(default)s)"
        return super().add_argument(*args, **kwargs)

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


CliParser = TrainParser


def fail(prog: str, message: str) -> int:
    """Print ``PROG: error: MESSAGE`` (one line) to stderr; returns the exit status 2."""
    print(f"{prog}: error: {' '.join(str(message).split())}", file=sys.stderr)
    return 2
