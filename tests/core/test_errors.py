"""The exceptions of :mod:`netarena_gym.errors`: one root, and every optional dependency
reported as ``DependencyNotInstalled`` with the extra that installs it.

A missing module is simulated the way Python itself honours: ``sys.modules[name] = None``
makes ``import name`` raise ``ImportError``."""
from __future__ import annotations

import sys

import gymnasium
import pytest

from netarena_gym.errors import (BackendUnavailable, DependencyNotInstalled, InvalidConfig,
                                 NetArenaError, ResetNeeded, ScenarioError, require)
from netarena_gym.eval.executors import run_ray
from netarena_gym.k8s.backends.kubernetes import KubernetesBackend
from netarena_gym.k8s.workload import yaml_module


def test_every_exception_has_the_one_root():
    for cls in (BackendUnavailable, DependencyNotInstalled, InvalidConfig, ResetNeeded,
                ScenarioError):
        assert issubclass(cls, NetArenaError)
    assert issubclass(DependencyNotInstalled, gymnasium.error.DependencyNotInstalled)


def test_require_imports_or_names_the_extra(monkeypatch):
    assert require("json", "x").dumps([1]) == "[1]"
    monkeypatch.setitem(sys.modules, "json", None)
    with pytest.raises(DependencyNotInstalled, match=r'pip install "netarena-gym\[x\]"'):
        require("json", "x")


def _blocked(monkeypatch, *mods):
    for m in mods:
        monkeypatch.setitem(sys.modules, m, None)


def test_missing_kubernetes_client(monkeypatch):
    _blocked(monkeypatch, "kubernetes", "kubernetes.client", "kubernetes.config")
    with pytest.raises(DependencyNotInstalled, match=r"netarena-gym\[k8s\]"):
        KubernetesBackend()


def test_missing_pyyaml(monkeypatch):
    _blocked(monkeypatch, "yaml")
    with pytest.raises(DependencyNotInstalled, match=r"netarena-gym\[k8s\]"):
        yaml_module()


def test_missing_ray(monkeypatch):
    _blocked(monkeypatch, "ray", "ray.util")
    with pytest.raises(DependencyNotInstalled, match=r"netarena-gym\[ray\]"):
        list(run_ray(None, []))
