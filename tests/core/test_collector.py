import gc
import threading

import pytest

from netarena_gym.core.collector import paused_gc


@pytest.fixture(autouse=True)
def collector_on():
    gc.enable()
    yield
    gc.enable()


def test_nested_pauses_restore_the_collector_at_the_outermost_exit_even_on_error():
    with pytest.raises(RuntimeError):
        with paused_gc():
            with paused_gc():
                assert not gc.isenabled()
            assert not gc.isenabled()  # only the outermost exit turns it back on
            raise RuntimeError
    assert gc.isenabled()


def test_a_collector_the_caller_turned_off_stays_off():
    gc.disable()
    with paused_gc():
        assert not gc.isenabled()
    assert not gc.isenabled()


def test_overlapping_pauses_in_threads_leave_the_collector_on_only_after_the_last():
    inside, release = threading.Event(), threading.Event()

    def other():
        with paused_gc():
            inside.set()
            release.wait(5)

    t = threading.Thread(target=other)
    t.start()
    inside.wait(5)
    with paused_gc():
        pass
    assert not gc.isenabled()  # the other thread's pause is still open
    release.set()
    t.join(5)
    assert gc.isenabled()
