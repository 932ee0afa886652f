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


def test_real_system_tests_share_one_xdist_worker(pytester, monkeypatch):
    """Under ``-n 2 --dist loadgroup``, tests that drive Mininet, the API server or Ray (by
    marker, or by file for the local-Ray files) all run on one worker; the others are
    spread. The marker must be on the item before xdist's own collection hook reads it."""
    pytester.makeconftest(CONFTEST)
    record = """
import os, pytest
def log(kind):
    with open(os.environ["WORKER_LOG"], "a") as f:
        f.write(kind + " " + os.environ.get("PYTEST_XDIST_WORKER", "-") + "\\n")
"""
    pytester.makepyfile(test_group=record + """
@pytest.mark.parametrize("i", range(4))
@pytest.mark.mininet
def test_mininet(i): log("real")
@pytest.mark.parametrize("i", range(4))
@pytest.mark.kubernetes
def test_api_server(i): log("real")
@pytest.mark.ray_cluster
def test_ray(): log("real")
@pytest.mark.parametrize("i", range(12))
def test_plain(i): log("plain")
""", test_ray_pool=record + "def test_pool(): log('real')\n")
    log = pytester.path / "workers.log"
    monkeypatch.setenv("WORKER_LOG", str(log))
    result = pytester.runpytest_subprocess("-q", "-n", "2", "--dist", "loadgroup",
                                           "-p", "no:cacheprovider")
    result.assert_outcomes(passed=22)
    seen = [line.split() for line in log.read_text().splitlines()]
    real = {w for kind, w in seen if kind == "real"}
    assert len([1 for kind, _ in seen if kind == "real"]) == 10 and len(real) == 1, seen
