"""The real backend's credential files (``k8s/backends/kubernetes_credentials.py``); what
they hold and who may read them is tested against the API server in test_kubernetes.py."""
import os

import pytest

from netarena_gym.k8s.backends.kubernetes_credentials import find_kubeconfig


@pytest.fixture
def home(tmp_path, monkeypatch):
    for var in ("NETARENA_KUBECONFIG", "KUBECONFIG"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / ".kube").mkdir()
    default = tmp_path / ".kube" / "config"
    default.write_text("apiVersion: v1\n")
    return tmp_path


def test_the_first_source_set_decides(home, monkeypatch):
    mine = home / "mine"
    mine.write_text("apiVersion: v1\n")
    assert find_kubeconfig() == str(home / ".kube" / "config")
    monkeypatch.setenv("KUBECONFIG", f"{home}/absent{os.pathsep}{mine}")
    assert find_kubeconfig() == str(mine)  # kubectl's list: the first file that exists
    monkeypatch.setenv("NETARENA_KUBECONFIG", str(mine))
    assert find_kubeconfig() == str(mine)
    assert find_kubeconfig(str(home / ".kube" / "config")) == str(home / ".kube" / "config")


@pytest.mark.parametrize("var", ["NETARENA_KUBECONFIG", "KUBECONFIG", None])
def test_a_source_that_names_no_file_is_an_error_not_the_default(home, monkeypatch, var):
    """It fell through to ~/.kube/config, which may be another cluster's, and the message
    said to set NETARENA_KUBECONFIG when it was set."""
    missing = str(home / "typo")
    if var:
        monkeypatch.setenv(var, missing)
    with pytest.raises(FileNotFoundError, match=f"{var or 'kubeconfig='} names '{missing}'"):
        find_kubeconfig(None if var else missing)
