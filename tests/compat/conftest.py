import pytest

from tests.compat import upstream_records as ur


@pytest.fixture(scope="session")
def route_faithful():
    """Two upstream-format route records played by the expert (single and paired faults)."""
    return [ur.route_record({"errortype": "disable_interface",
                             "errordetail": {"interface": "r0-eth2", "method": 2}}),
            ur.route_record({"errortype": ["disable_routing", "remove_ip"],
                             "errordetail": [{"action": "Disable IP forwarding", "method": 1},
                                             {"interface": "r0-eth1", "method": 1}]})]
