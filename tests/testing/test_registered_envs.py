"""Every registered env passes the shipped kit at every level and interface (simulators)."""
from __future__ import annotations

import pytest

import netarena_gym
from netarena_gym.testing import check_netarena_env

CONFIGS = (
    [("NetArena-Routing-v0", dict(level=lv, interface=i))
     for lv in (1, 2, 3, "compat") for i in ("text", "discrete")]
    + [("NetArena-K8sPolicy-v0", dict(level=lv, interface=i))
       for lv in (1, 2, 3, "compat") for i in ("text", "discrete")]
    + [("NetArena-CapacityPlanning-v0", dict(level=lv, interface=i))
       for lv in (1, 2, 3, 4) for i in ("code", "text", "discrete")]
    + [("NetArena-CapacityPlanning-v0", dict(level="compat", interface="code"))]
)


def test_every_registered_env_is_covered():
    assert {env_id for env_id, _ in CONFIGS} == set(netarena_gym.ENV_IDS)


@pytest.mark.parametrize("env_id,kwargs", CONFIGS,
                         ids=[f"{e.split('-')[1]}-{k['level']}-{k['interface']}" for e, k in CONFIGS])
def test_kit_passes(env_id, kwargs):
    check_netarena_env(env_id, **kwargs)
