"""netarena_gym.k8s.state_validation: the API server's NetworkPolicy validation, its messages
as the server prints them (``pkg/apis/networking/validation`` and ``field.Error``)."""
import pytest

from netarena_gym.core.scenario import Scenario
from netarena_gym.k8s.backends.sim import SimBackend
from netarena_gym.k8s.state_validation import FieldError, go_quote, validate_spec


def sim(end_port: bool) -> SimBackend:
    b = SimBackend(end_port=end_port)
    b.apply(Scenario(task="k8s", level=1, params={"namespace": "exp", "probes": "full"}, faults=()))
    return b


def add_ports(b: SimBackend, ports: str):
    return b.run({"command": "kubectl patch networkpolicy frontend --type=json -p "
                             "'[{\"op\":\"add\",\"path\":\"/spec/ingress/0/ports\",\"value\":" + ports + "}]'",
                  "stdin": ""})


_BAD = 'The NetworkPolicy "frontend" is invalid: spec.ingress[0].ports[0].'


# ValidateNetworkPolicyPort of the servers that have endPort (1.21 on): every endPort error
# is "Invalid value" (none is "Required value"), "must be greater than or equal to `port`"
# shows the value of port, endPort's own range is checked, and on a named port the endPort
# error comes before the port name's
@pytest.mark.parametrize("ports, want", [
    ('[{"port":80,"endPort":70}]', "endPort: Invalid value: 80: must be greater than or equal to `port`\n"),
    ('[{"endPort":70}]', "endPort: Invalid value: 70: may not be specified when `port` is not specified\n"),
    ('[{"port":"http","endPort":70}]',
     "endPort: Invalid value: 70: may not be specified when `port` is non-numeric\n"),
    ('[{"port":80,"endPort":70000}]', "endPort: Invalid value: 70000: must be between 1 and 65535, inclusive\n"),
])
def test_end_port_errors_are_the_servers(ports, want):
    r = add_ports(sim(True), ports)
    assert r.status == 1 and r.output == _BAD + want


def test_end_port_error_order_on_a_bad_port_name():
    errs = validate_spec({"podSelector": {}, "ingress": [{"ports": [
        {"protocol": "TCP", "port": "a--", "endPort": 0}]}]}, end_port=True)
    assert [str(e) for e in errs] == [
        "spec.ingress[0].ports[0].endPort: Invalid value: 0: may not be specified when `port` is non-numeric",
        'spec.ingress[0].ports[0].port: Invalid value: "a--": must not contain consecutive hyphens',
        'spec.ingress[0].ports[0].port: Invalid value: "a--": must not begin or end with a hyphen']
    errs = validate_spec({"podSelector": {}, "ingress": [{"ports": [
        {"protocol": "TCP", "port": 0, "endPort": 0}]}]}, end_port=True)
    assert [str(e) for e in errs] == [
        "spec.ingress[0].ports[0].port: Invalid value: 0: must be between 1 and 65535, inclusive",
        "spec.ingress[0].ports[0].endPort: Invalid value: 0: must be between 1 and 65535, inclusive"]


def test_a_1_20_server_drops_end_port():
    b = sim(False)
    r = add_ports(b, '[{"port":80,"endPort":70}]')
    assert r.status == 0
    assert b.store.get("networkpolicies", "exp", "frontend")["spec"]["ingress"][0]["ports"] == [
        {"port": 80, "protocol": "TCP"}]


# net.ParseCIDR takes an address, "/" and decimal digits; Python's ip_network also takes a
# netmask, a host mask and an IPv6 zone
@pytest.mark.parametrize("cidr", ["10.0.0.0/255.0.0.0", "10.0.0.0/0.255.255.255", "fe80::1%eth0/64",
                                  "10.0.0.0/ 8", "10.0.0.0", "10.0.0.0/33"])
def test_a_cidr_go_refuses_is_not_valid(cidr):
    errs = validate_spec({"podSelector": {}, "ingress": [{"from": [{"ipBlock": {"cidr": cidr}}]}]})
    assert [str(e) for e in errs] == [
        f'spec.ingress[0].from[0].ipBlock.cidr: Invalid value: "{cidr}": not a valid CIDR']


@pytest.mark.parametrize("cidr", ["10.0.0.0/8", "10.1.2.3/08", "::/0", "::ffff:10.0.0.0/104"])
def test_a_cidr_go_takes_is_valid(cidr):
    assert validate_spec({"podSelector": {}, "ingress": [{"from": [{"ipBlock": {"cidr": cidr}}]}]}) == []


def test_bad_values_are_quoted_as_go_quotes_them():
    # field.Error prints a string value with %q (strconv.Quote)
    assert go_quote('a"b\\c') == r'"a\"b\\c"'
    assert go_quote("frontend\n\t\x01\x7f") == r'"frontend\n\t\x01\x7f"'
    assert go_quote("fröntend\u200b\U000e0001") == '"fröntend\\u200b\\U000e0001"'
    e = FieldError("spec.podSelector.matchLabels", "Invalid value", "frontend\n", "x")
    assert str(e) == r'spec.podSelector.matchLabels: Invalid value: "frontend\n": x'


def test_a_label_value_with_a_final_newline_is_refused():
    b = sim(False)
    r = b.run({"command": "kubectl patch networkpolicy frontend --type=json -p "
                          "'[{\"op\":\"add\",\"path\":\"/spec/ingress/0/from\",\"value\":"
                          "[{\"podSelector\":{\"matchLabels\":{\"app\":\"frontend\\n\"}}}]}]'", "stdin": ""})
    assert r.status == 1
    assert r.output.startswith('The NetworkPolicy "frontend" is invalid: spec.ingress[0].from[0].'
                               'podSelector.matchLabels: Invalid value: "frontend\\n": a valid label must')
