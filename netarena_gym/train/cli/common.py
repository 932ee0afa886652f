"""What the ``netarena-gym train`` commands share: a parser whose ``--help`` shows every
option's default."""
from __future__ import annotations

import argparse


class HelpFormatter(argparse.ArgumentDefaultsHelpFormatter,
                    argparse.RawDescriptionHelpFormatter):
    """``--help`` keeps the description's layout and shows the options' defaults."""


class TrainParser(argparse.ArgumentParser):
    """An options without a help text still gets one: its default (argparse's
    ``ArgumentDefaultsHelpFormatter`` skips options without help)."""

    def add_argument(self, *args, **kwargs):
        if args and str(args[0]).startswith("-") and not kwargs.get("help"):
            kwargs["help"] = "(default: %(default)s)"
        return super().add_argument(*args, **kwargs)
