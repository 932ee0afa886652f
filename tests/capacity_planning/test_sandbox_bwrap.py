"""The bwrap command line: networkx sits at a fixed place inside the sandbox, so the worker
finds it from any install (a venv's site-packages is not on the bare interpreter's path)."""
import os
import shutil

import networkx
import pytest

from netarena_gym.capacity_planning.commands import sandbox_bwrap

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None,
                                reason="needs bubblewrap: apt-get install bubblewrap")


def binds(argv):
    return [(argv[i + 1], argv[i + 2]) for i, a in enumerate(argv) if a == "--ro-bind"]


def test_networkx_is_bound_alone_under_sandbox_site():
    host = os.path.dirname(os.path.abspath(networkx.__file__))
    pairs = binds(sandbox_bwrap.command([]))
    assert (host, sandbox_bwrap.SANDBOX_DIR + "/site/networkx") in pairs
    assert all(dest != host for _, dest in pairs)        # the host's layout stays invisible
