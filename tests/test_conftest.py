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
