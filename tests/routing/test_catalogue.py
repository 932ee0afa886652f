"""The routing catalogue's memo: two networks with the same routers and subnets but
different transit links get their own entries."""
from netarena_gym.core.actions import Catalogue
from netarena_gym.routing import catalogue
from netarena_gym.routing.catalogue import Dims, fill
from netarena_gym.routing.topology import TopologySpec, layout_of


def test_networks_that_differ_only_in_links_get_their_own_entries():
    hosts = ((1,),) * 4
    ring = TopologySpec(hosts=hosts, links=((0, 1), (1, 2), (2, 3), (0, 3)))
    star = TopologySpec(hosts=hosts, links=((0, 1), (0, 2), (0, 3), (1, 2)))
    dims = Dims(4, 1, 1, links=4)
    catalogue._CACHE.clear()
    for spec in (ring, star):
        memo, built = Catalogue(dims.size), Catalogue(dims.size)
        fill(memo, layout_of(spec), dims)
        catalogue._build(built, layout_of(spec), dims)
        assert memo.entries == built.entries and (memo.mask == built.mask).all()
