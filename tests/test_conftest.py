"""The suite's skip summary: one line per reason, with its count, without ``-rs``."""
from pathlib import Path

pytest_plugins = ["pytester"]

CONFTEST = Path(__file__).with_name("conftest.py").read_text(encoding="utf-8")


def test_skips_are_summarised_by_reason(pytester):
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_x='''
import pytest
@pytest.mark.skipif(True, reason='needs torch: pip install torch==2.13.0')
def test_a(): pass
@pytest.mark.skipif(True, reason='needs torch: pip install torch==2.13.0')
def test_b(): pass
def test_c(): pytest.skip('needs root')
def test_d(): pass
''')
    result = pytester.runpytest("-q")
    result.assert_outcomes(passed=1, skipped=3)
    result.stdout.fnmatch_lines(["*3 skipped, by reason*",
                                 "   2 x needs torch: pip install torch==2.13.0",
                                 "   1 x needs root"])


def test_no_section_without_skips(pytester):
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_y="def test_ok(): pass")
    result = pytester.runpytest("-q")
    result.assert_outcomes(passed=1)
    assert "by reason" not in result.stdout.str()


def test_real_system_tests_share_one_xdist_group(pytester):
    """Tests that drive Mininet, the API server or Ray get the one ``xdist_group`` (so
    ``--dist loadgroup`` runs them on one worker); the rest get none."""
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_group='''
import pytest

def group(request):
    m = request.node.get_closest_marker("xdist_group")
    return m.args[0] if m else None

@pytest.mark.mininet
def test_mininet(request): assert group(request) == "real-systems"
@pytest.mark.kubernetes
def test_api_server(request): assert group(request) == "real-systems"
@pytest.mark.ray_cluster
def test_ray(request): assert group(request) == "real-systems"
def test_plain(request): assert group(request) is None
''')
    pytester.makepyfile(test_ray_pool="def test_pool(request):\n"
                        "    assert request.node.get_closest_marker('xdist_group').args == "
                        "('real-systems',)\n")
    result = pytester.runpytest("-q", "-p", "no:xdist")
    result.assert_outcomes(passed=5)
