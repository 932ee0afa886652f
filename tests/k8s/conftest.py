import os

import pytest

import netarena_gym  # noqa: F401 - registers the envs, with the package's vector entry point

ENV_ID = "NetArena-K8sPolicy-v0"


@pytest.fixture
def sim():
    """A simulated cluster with Online Boutique in namespace ``exp`` and no fault."""
    from netarena_gym.core.scenario import Scenario
    from netarena_gym.k8s.backends.sim import SimBackend
    b = SimBackend(end_port=False)
    b.apply(Scenario(task="k8s", level=1, params={"namespace": "exp", "probes": "full"}, faults=()))
    return b


def _reachable(path: str) -> str | None:
    """None when the API server answers, else why not."""
    try:
        from kubernetes import client, config
    except ImportError:
        return "the kubernetes Python client is not installed (pip install '.[k8s]')"
    try:
        api = config.new_client_from_config(config_file=path)
        import urllib3
        urllib3.disable_warnings(urllib3.exceptions.InsecureRequestWarning)
        client.VersionApi(api).get_code(_request_timeout=3)
        api.close()
    except Exception as e:  # noqa: BLE001
        return f"API server of {path} not reachable: {type(e).__name__}"
    return None


@pytest.fixture(scope="session")
def kubeconfig():
    path = os.environ.get("NETARENA_KUBECONFIG")
    if not path or not os.path.isfile(path):
        pytest.skip("no Kubernetes API server: set NETARENA_KUBECONFIG (envs/k8s/start-apiserver.sh "
                    "starts one on loopback)")
    why = _reachable(path)
    if why:
        pytest.skip(why)
    return path
