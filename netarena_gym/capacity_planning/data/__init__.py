"""Package data of CapacityPlanning: Google's example MALT model.

``malt-example-final.textproto`` is the unmodified file of google/malt-example-models
(Apache-2.0; its LICENSE and a NOTICE ship beside it). The envs never read it
(``topology.generate(TopologySpec())`` reproduces it entity for entity); :func:`example_path`
gives its location in the installed package, for tests and for users who want the original.
"""
from __future__ import annotations

from pathlib import Path

EXAMPLE_NAME = "malt-example-final.textproto"


def example_path() -> Path:
    """The path of Google's example model inside the installed package."""
    return Path(__file__).resolve().parent / EXAMPLE_NAME
