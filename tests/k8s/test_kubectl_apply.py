"""netarena_gym.k8s.commands.kubectl_apply: ``kubectl apply -f -``. Expected texts are kubectl
1.32's against kube-apiserver 1.20.2 (envs/k8s/start-apiserver.sh), pinned verbatim."""
import pytest

from netarena_gym.core.scenario import Scenario
from netarena_gym.k8s.backends.sim import SimBackend


@pytest.fixture
def sim():
    b = SimBackend(end_port=False)
    b.apply(Scenario(task="k8s", level=1, params={"namespace": "rev2", "probes": "full"}, faults=()))
    return b


def apply(sim, manifest: str):
    return sim.run({"command": "kubectl apply -f -", "stdin": manifest})


def doc(name: str, extra: str = "", api: str = "networking.k8s.io/v1") -> str:
    return (f"apiVersion: {api}\nkind: NetworkPolicy\nmetadata:\n  name: {name}\nspec:\n"
            f"  podSelector: {{}}\n{extra}")


MAPPING = ('resource mapping not found for name: "{}" namespace: "" from "STDIN": no matches for '
           'kind "NetworkPolicy" in version "{}"\nensure CRDs are installed first\n')


# NetworkPolicy is served by networking.k8s.io/v1 alone (extensions/v1beta1 stopped in 1.16):
# another apiVersion is kubectl's mapping error for that document, and the others still apply
def test_an_api_version_that_does_not_serve_network_policies(sim):
    r = apply(sim, doc("x", api="extensions/v1beta1"))
    assert (r.status, r.output) == (1, "error: " + MAPPING.format("x", "extensions/v1beta1"))
    assert sim.store.find("networkpolicies", "rev2", "x") is None
    r = apply(sim, doc("z1") + "---\n" + doc("z2", api="extensions/v1beta1"))
    assert r.status == 1
    assert r.output == ("networkpolicy.networking.k8s.io/z1 created\nerror: "
                        + MAPPING.format("z2", "extensions/v1beta1"))


def test_a_schema_error_stops_the_stream_a_mapping_error_does_not(sim):
    bogus = "  bogus: 1\n"
    schema = ('error validating "STDIN": error validating data: ValidationError(NetworkPolicy.spec): '
              'unknown field "bogus" in io.k8s.api.networking.v1.NetworkPolicySpec; if you choose to '
              'ignore these errors, turn validation off with --validate=false\n')
    # the documents read before the schema error are applied
    r = apply(sim, doc("v1") + "---\n" + doc("v2", bogus) + "---\n" + doc("v3", api="extensions/v1beta1"))
    assert r.output == "networkpolicy.networking.k8s.io/v1 created\nerror: " + schema
    r = apply(sim, doc("w0", api="extensions/v1beta1") + "---\n" + doc("w1") + "---\n" + doc("w2", bogus))
    assert r.output == ("networkpolicy.networking.k8s.io/w1 created\n"
                        + MAPPING.format("w0", "extensions/v1beta1") + schema)


# several errors print one a line (MultipleErrors), an API error with the server's message:
# the kind qualified as the 1.20 server does it, the field errors as an aggregate
def test_several_errors_print_as_kubectl_prints_them(sim):
    r = apply(sim, doc("A1") + "---\n" + doc("a2", "  ingress:\n  - ports:\n    - port: 0\n    - port: 70000\n"))
    assert r.output == (
        'Error from server (Invalid): error when creating "STDIN": NetworkPolicy.extensions "A1" is '
        "invalid: metadata.name: Invalid value: \"A1\": a lowercase RFC 1123 subdomain must consist of "
        "lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric "
        "character (e.g. 'example.com', regex used for validation is "
        "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')\n"
        'Error from server (Invalid): error when creating "STDIN": NetworkPolicy.extensions "a2" is '
        "invalid: [spec.ingress[0].ports[0].port: Invalid value: 0: must be between 1 and 65535, "
        "inclusive, spec.ingress[0].ports[1].port: Invalid value: 70000: must be between 1 and 65535, "
        "inclusive]\n")
    # one error alone: CheckErr's "The NetworkPolicy ... is invalid" from the status details
    r = apply(sim, doc("A1"))
    assert r.output.startswith('The NetworkPolicy "A1" is invalid: metadata.name: Invalid value: "A1": ')


def test_several_errors_of_patches_show_the_patch(sim):
    assert apply(sim, doc("x") + "---\n" + doc("a3")).status == 0
    bad = (doc("x", "  ingress:\n  - ports:\n    - port: 0\n") + "---\n"
           + doc("a3", "  policyTypes: [Foo]\n") + "---\n"
           + doc("q", api="networking.k8s.io/v1beta1") + "---\n" + doc("new1"))
    r = apply(sim, bad)
    assert r.status == 1
    assert r.output == REAL_PATCH_ERRORS


REAL_PATCH_ERRORS = 'networkpolicy.networking.k8s.io/new1 created\nresource mapping not found for name: "q" namespace: "" from "STDIN": no matches for kind "NetworkPolicy" in version "networking.k8s.io/v1beta1"\nensure CRDs are installed first\nError from server (Invalid): error when applying patch:\n{"metadata":{"annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{\\"apiVersion\\":\\"networking.k8s.io/v1\\",\\"kind\\":\\"NetworkPolicy\\",\\"metadata\\":{\\"annotations\\":{},\\"name\\":\\"x\\",\\"namespace\\":\\"rev2\\"},\\"spec\\":{\\"ingress\\":[{\\"ports\\":[{\\"port\\":0}]}],\\"podSelector\\":{}}}\\n"}},"spec":{"ingress":[{"ports":[{"port":0}]}]}}\nto:\nResource: "networking.k8s.io/v1, Resource=networkpolicies", GroupVersionKind: "networking.k8s.io/v1, Kind=NetworkPolicy"\nName: "x", Namespace: "rev2"\nfor: "STDIN": error when patching "STDIN": NetworkPolicy.extensions "x" is invalid: spec.ingress[0].ports[0].port: Invalid value: 0: must be between 1 and 65535, inclusive\nError from server (Invalid): error when applying patch:\n{"metadata":{"annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{\\"apiVersion\\":\\"networking.k8s.io/v1\\",\\"kind\\":\\"NetworkPolicy\\",\\"metadata\\":{\\"annotations\\":{},\\"name\\":\\"a3\\",\\"namespace\\":\\"rev2\\"},\\"spec\\":{\\"podSelector\\":{},\\"policyTypes\\":[\\"Foo\\"]}}\\n"}},"spec":{"policyTypes":["Foo"]}}\nto:\nResource: "networking.k8s.io/v1, Resource=networkpolicies", GroupVersionKind: "networking.k8s.io/v1, Kind=NetworkPolicy"\nName: "a3", Namespace: "rev2"\nfor: "STDIN": error when patching "STDIN": NetworkPolicy.extensions "a3" is invalid: spec.policyTypes[0]: Unsupported value: "Foo": supported values: "Ingress", "Egress"\n'
