from pathlib import Path

import pytest

import netarena_gym  # noqa: F401 - registers the envs, with the package's vector entry point
from netarena_gym.capacity_planning.data import example_path

ENV_ID = "NetArena-CapacityPlanning-v0"

#: Google's example ships as package data; the checkout's ../shared copy is the fallback
SHARED = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "malt" / "malt-example-final.textproto"
GOOGLE = example_path() if example_path().exists() else SHARED


@pytest.fixture(scope="session")
def google_text() -> str:
    if not GOOGLE.exists():
        pytest.skip(f"Google's MALT example is neither in the package ({example_path()}) "
                    f"nor at {SHARED.resolve()}")
    return GOOGLE.read_text(encoding="utf-8")


@pytest.fixture(scope="session")
def google(google_text):
    from netarena_gym.capacity_planning.topology import Topology
    return Topology.from_textproto(google_text)


@pytest.fixture
def sandbox_limits():
    from netarena_gym.capacity_planning.commands.sandbox import Limits
    return Limits(cpu_seconds=1.0, wall_seconds=2.0, memory_mb=512)
