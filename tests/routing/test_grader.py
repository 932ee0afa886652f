"""The packet engine's detail mode (:func:`~netarena_gym.routing.grader.walk` and
:func:`~netarena_gym.routing.grader.echo`): ICMP errors are walked back to the sender as
Linux sends them; the probe matrix's walks (``detail=False``) do not."""
from netarena_gym.core.ipv4 import ip_to_int
from netarena_gym.routing.backends.sim import SimState
from netarena_gym.routing.faults import Fault
from netarena_gym.routing.grader import echo, probe, walk

from .conftest import scenario

THREE = {"hosts": [[1, 1, 1]], "parents": []}
H2 = ip_to_int("192.168.2.100")


def net_of(*faults):
    st = SimState.build(scenario(list(faults), THREE))
    return st.net


def test_echo_sends_the_ttl():
    net = net_of()
    o = echo(net, net.nodes["h1"], H2, ttl=1)
    assert (o.ok, o.error, o.reporter) == (False, "Time to live exceeded", ip_to_int("192.168.1.1"))
    assert echo(net, net.nodes["h1"], H2, ttl=2).ok


def test_an_error_that_cannot_come_back_is_a_timeout():
    dt1 = Fault("drop_traffic_to_from_subnet", 1, "r0", {"subnet": "192.168.1.0/24"})
    net = net_of(dt1)
    t = walk(net, net.nodes["h1"], H2, ttl=1)
    assert (t.ok, t.error, t.reporter) == (False, "timeout", None)
    t = walk(net, net.nodes["h1"], H2, ttl=1, detail=False)  # the matrix: no walk back
    assert (t.ok, t.error) == (False, "Time to live exceeded")


def test_a_prohibit_rule_blocks_the_routers_errors_too():
    net = net_of(Fault("disable_routing", 3, "r0", {}))
    t = walk(net, net.nodes["h1"], H2)
    assert (t.error, t.reporter) == ("timeout", None)
    assert probe(net, net.nodes["h1"], H2, 1.0) == (False, ip_to_int("192.168.1.100"))


def test_an_error_comes_back_from_its_own_source_address():
    net = net_of()
    r0 = net.nodes["r0"]
    t = walk(net, net.nodes["h1"], H2, ttl=1, record=True)
    assert t.reporter == ip_to_int("192.168.1.1") and t.at[0] is r0
