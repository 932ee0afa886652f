"""netarena_gym.k8s.commands.labelsel: ``-l`` as kube-apiserver 1.20 parses and matches it.
It was parsed leniently: a selector the server refuses listed objects (or nothing) where the
server answers 400, and two requirements on one key kept the last. Expected texts are
kubectl 1.32's against the bundled kube-apiserver 1.20.2, verbatim."""
import pytest

from netarena_gym.core.scenario import Scenario
from netarena_gym.k8s.backends.sim import SimBackend
from netarena_gym.k8s.commands.labelsel import (
    SelectorError, label_selector_matches, parse_label_selector)


@pytest.fixture(scope="module")
def sim():
    b = SimBackend(end_port=False)
    b.apply(Scenario(task="k8s", level=1, params={"namespace": "exp", "probes": "full"}, faults=()))
    return b


@pytest.mark.parametrize("args, status, want", [
    ("get pods -l 'app=frontend,' -o name", 1,
     'Error from server (BadRequest): Unable to find "/v1, Resource=pods" that match label selector "app=frontend,", field selector "": found \'\', expected: identifier after \',\'\n'),
    ("get pods -l 'app in (a,b' -o name", 1,
     'Error from server (BadRequest): Unable to find "/v1, Resource=pods" that match label selector "app in (a,b", field selector "": unable to parse requirement: found \'\', expected: \',\' or \')\'\n'),
    ("get pods -l 'bad key=x' -o name", 1,
     'Error from server (BadRequest): Unable to find "/v1, Resource=pods" that match label selector "bad key=x", field selector "": unable to parse requirement: found \'key\', expected: \'=\', \'!=\', \'==\', \'in\', notin\'\n'),
    ("get pods -l '=x' -o name", 1,
     'Error from server (BadRequest): Unable to find "/v1, Resource=pods" that match label selector "=x", field selector "": found \'=\', expected: !, identifier, or \'end of string\'\n'),
    ("get pods -l 'app=a=b' -o name", 1,
     'Error from server (BadRequest): Unable to find "/v1, Resource=pods" that match label selector "app=a=b", field selector "": found \'=\', expected: \',\' or \'end of string\'\n'),
    ("get pods -l 'app=bad value' -o name", 1,
     'Error from server (BadRequest): Unable to find "/v1, Resource=pods" that match label selector "app=bad value", field selector "": found \'value\', expected: \',\' or \'end of string\'\n'),
    ("get pods -l 'Bad Key' -o name", 1,
     'Error from server (BadRequest): Unable to find "/v1, Resource=pods" that match label selector "Bad Key", field selector "": unable to parse requirement: found \'Key\', expected: \'=\', \'!=\', \'==\', \'in\', notin\'\n'),
    ("get pods -l '-bad=x' -o name", 1,
     'Error from server (BadRequest): Unable to find "/v1, Resource=pods" that match label selector "-bad=x", field selector "": unable to parse requirement: invalid label key "-bad": name part must consist of alphanumeric characters, \'-\', \'_\' or \'.\', and must start and end with an alphanumeric character (e.g. \'MyName\',  or \'my.name\',  or \'123-abc\', regex used for validation is \'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]\')\n'),
    ("get pods -l 'app=-x' -o name", 1,
     'Error from server (BadRequest): Unable to find "/v1, Resource=pods" that match label selector "app=-x", field selector "": unable to parse requirement: invalid label value: "-x": at key: "app": a valid label must be an empty string or consist of alphanumeric characters, \'-\', \'_\' or \'.\', and must start and end with an alphanumeric character (e.g. \'MyValue\',  or \'my_value\',  or \'12345\', regex used for validation is \'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?\')\n'),
    ("get pods -l 'app>x' -o name", 1,
     'Error from server (BadRequest): Unable to find "/v1, Resource=pods" that match label selector "app>x", field selector "": unable to parse requirement: for \'Gt\', \'Lt\' operators, the value must be an integer\n'),
    ("get pods -l 'app in a' -o name", 1,
     'Error from server (BadRequest): Unable to find "/v1, Resource=pods" that match label selector "app in a", field selector "": unable to parse requirement: found \'a\' expected: \'(\'\n'),
    ("get pods -l 'app =! x' -o name", 1,
     'Error from server (BadRequest): Unable to find "/v1, Resource=pods" that match label selector "app =! x", field selector "": unable to parse requirement: found \'!\', expected: identifier\n'),
    ("get pods -l 'app=frontend,app=adservice' -o name", 0,
     ''),
    ("get pods -l 'app in (frontend,adservice),app!=adservice' -o name", 0,
     'pod/frontend\n'),
    ("delete netpol -l 'app in (a,b'", 1,
     'Error from server (BadRequest): Unable to find "networking.k8s.io/v1, Resource=networkpolicies" that match label selector "app in (a,b", field selector "": unable to parse requirement: found \'\', expected: \',\' or \')\'\n'),
])
def test_label_selectors_as_the_server_reads_them(sim, args, status, want):
    r = sim.run({"command": "kubectl " + args, "stdin": ""})
    assert (r.status, r.output) == (status, want)


def test_matching():
    labels = {"app": "a", "n": "5"}
    for text, want in (("app", True), ("!app", False), ("app in (a,b)", True), ("app notin (a)", False),
                       ("tier!=x", True), ("app=a,app=b", False), ("n>4", True), ("n<5", False),
                       ("app>1", False), ("app=", False), ("tier=", False)):
        assert label_selector_matches(parse_label_selector(text), labels) is want, text
    with pytest.raises(SelectorError, match="exactly one value|must be an integer"):
        parse_label_selector("n>x")
