"""What the ``netarena-gym`` commands share: a parser whose ``--help`` shows every
option's default and an ``examples:`` epilog, and whose errors are one line.

Mirrors :mod:`argparse` (Python 3.11+); what it changes: ``error()`` prints one line
(``PROG: error: MESSAGE``) without the usage block, and exits with status 2 as argparse
does. Also the options every trainer shares: ``--report-to`` and ``--resume``
(:func:`add_tracking_args`, :func:`tracking`)."""
from __future__ import annotations

import argparse
import importlib.util
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from netarena_gym.errors import DependencyNotInstalled, InvalidConfig

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


#: where ``--report-to`` can send training metrics
REPORT_TO = ("none", "tensorboard", "wandb")
#: ``--report-to`` target -> (module it needs, what installs it)
_TRACKER = {"tensorboard": ("tensorboard", 'pip install "netarena-gym[train]"'),
            "wandb": ("wandb", "pip install wandb")}
_CHECKPOINT = re.compile(r"^checkpoint-(\d+)$")


def add_tracking_args(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Add ``--report-to {none,tensorboard,wandb}`` and ``--resume`` (the options every
    ``netarena-gym train`` command shares); :func:`tracking` turns them into settings."""
    parser.add_argument("--report-to", default="none", choices=REPORT_TO,
                        help="where training metrics go besides OUT's own files: TensorBoard "
                             "event files under OUT, or Weights & Biases")
    parser.add_argument("--resume", action="store_true",
                        help="resume from the last checkpoint in --out (OUT/checkpoint-N); "
                             "without one, start from scratch")
    return parser


def last_checkpoint(out: str | Path) -> Path | None:
    """The ``OUT/checkpoint-N`` folder with the largest ``N`` (the layout of transformers'
    ``Trainer``, which the PPO trainer follows too), or ``None``."""
    out = Path(out)
    if not out.is_dir():
        return None
    found = [(int(m.group(1)), p) for p in out.iterdir()
             if p.is_dir() and (m := _CHECKPOINT.match(p.name))]
    return max(found)[1] if found else None


@dataclass(frozen=True, kw_only=True)
class Tracking:
    """What ``--report-to`` and ``--resume`` ask of a trainer.

    ``report_to``: ``"none"``, ``"tensorboard"`` or ``"wandb"``; ``resume_from``: the
    checkpoint folder to resume from, or ``None`` to start from scratch."""
    report_to: str = "none"
    resume_from: Path | None = None

    def __post_init__(self):
        if self.report_to not in REPORT_TO:
            raise InvalidConfig(f"report_to={self.report_to!r}; valid: {', '.join(REPORT_TO)}")

    def trainer_overrides(self) -> dict:
        """transformers ``TrainingArguments`` fields (TRL's SFTConfig / GRPOConfig)."""
        return {"report_to": self.report_to}

    def train_kwargs(self) -> dict:
        """Keyword arguments for ``Trainer.train``."""
        return {"resume_from_checkpoint": str(self.resume_from)} if self.resume_from else {}


def tracking(args: argparse.Namespace, out: str | Path) -> Tracking:
    """The :class:`Tracking` of parsed ``--report-to``/``--resume``; raises
    :class:`~netarena_gym.errors.DependencyNotInstalled` when the tracker's package is
    missing, and notes on stderr a ``--resume`` that finds no checkpoint."""
    report_to = getattr(args, "report_to", "none")
    if report_to in _TRACKER:
        module, hint = _TRACKER[report_to]
        if importlib.util.find_spec(module) is None:
            raise DependencyNotInstalled(f"--report-to {report_to} needs {module}; run: {hint}")
    resume_from = last_checkpoint(out) if getattr(args, "resume", False) else None
    if getattr(args, "resume", False) and resume_from is None:
        print(f"--resume: no checkpoint-N in {out}; starting from scratch", file=sys.stderr)
    return Tracking(report_to=report_to, resume_from=resume_from)
