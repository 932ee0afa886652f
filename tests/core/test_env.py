import signal
import threading
import time

import gymnasium as gym
import numpy as np
import pytest

import netarena_gym  # noqa: F401
from netarena_gym.core.env import StepDeadline, StepTimeout, decode_index, sanitize
from netarena_gym.core.actions import ActionError
from netarena_gym.errors import InvalidConfig


def test_deadline_interrupts_pure_python_in_main_thread():
    t0 = time.perf_counter()
    with pytest.raises(StepTimeout):
        with StepDeadline(0.05):
            while True:
                pass
    assert time.perf_counter() - t0 < 1.0


def test_deadline_is_cooperative_in_other_threads():
    seen = {}

    def work():
        with StepDeadline(0.01) as d:
            time.sleep(0.05)
        seen["expired"] = d.expired()
    t = threading.Thread(target=work)
    t.start()
    t.join()
    assert seen["expired"] is True


@pytest.mark.parametrize("env_id", ["NetArena-Routing-v0", "NetArena-K8sPolicy-v0"])
def test_step_past_budget_is_a_timeout_with_penalty(env_id):
    env = gym.make(env_id, step_timeout=1e-6).unwrapped
    env.reset(seed=0)
    cmd = ({"machine": "r0", "command": "ip addr show"} if "Routing" in env_id
           else {"command": "kubectl get pods"})
    obs, reward, *_, info = env.step(cmd)
    assert info["command_kind"] == "timeout" and "step timed out" in obs
    assert info["reward_components"]["timeout"] < 0 and info["timeouts"] == 1


@pytest.mark.parametrize("bad", [float("inf"), -0.5, 10**400, "1", np.array([1, 2]), object(),
                                 True, np.True_, np.array(True), np.timedelta64(1)])
def test_decode_index_rejects_cleanly(bad):
    with pytest.raises(ActionError):
        decode_index(bad)


def test_decode_index_accepts_integers():
    assert decode_index(np.int64(7)) == 7 and decode_index(3.0) == 3 and decode_index(np.array(5)) == 5


@pytest.mark.parametrize("before", [signal.SIG_DFL, signal.SIG_IGN])
def test_deadline_restores_the_alarm_disposition_and_disarms(before):
    old = signal.signal(signal.SIGALRM, before)
    try:
        with StepDeadline(5.0) as d:
            assert d._armed and signal.getitimer(signal.ITIMER_REAL)[0] > 0
            assert signal.getsignal(signal.SIGALRM) not in (signal.SIG_DFL, signal.SIG_IGN)
        assert signal.getsignal(signal.SIGALRM) is before
        assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
    finally:
        signal.signal(signal.SIGALRM, old)


def test_deadline_leaves_another_alarm_handler_alone():
    def theirs(signum, frame):
        pass
    old = signal.signal(signal.SIGALRM, theirs)
    try:
        with StepDeadline(5.0) as d:
            assert not d._armed and signal.getsignal(signal.SIGALRM) is theirs
        assert signal.getsignal(signal.SIGALRM) is theirs
        assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
    finally:
        signal.signal(signal.SIGALRM, old)


def _sanitize_by_definition(text: str, limit: int) -> str:
    """sanitize() as its docstring defines it: every character outside printable ASCII,
    newline and tab becomes "?", then the head and tail of an over-long text are kept."""
    text = "".join(c if c in "\n\t" or " " <= c <= "~" else "?" for c in text)
    if len(text) > limit:
        cut = "\n[... output truncated ...]\n"
        keep = (limit - len(cut)) // 2
        text = text[:keep] + cut + text[len(text) - (limit - len(cut) - keep):]
    return text


@pytest.mark.parametrize("text", [
    "", "plain text\n\twith tabs ~", "".join(map(chr, range(128))), "caf\u00e9 \u2028 \x7f",
    "bell\x07", "\r\n", "\x00", "emoji \U0001f600 end", "x" * 5000 + "\x1b[31m" + "y" * 5000])
def test_sanitize_keeps_printable_ascii_and_replaces_the_rest(text):
    assert sanitize(text, 2000) == _sanitize_by_definition(text, 2000)


def test_sanitize_matches_its_definition_on_random_text():
    rng = np.random.default_rng(7)
    alphabet = [chr(c) for c in range(0, 0x82)] + ["\u00e9", "\u2028", "\U0001f600"]
    for _ in range(300):
        n = int(rng.integers(0, 120))
        picks = rng.integers(0, len(alphabet), n)
        # mostly printable, as real output is, with a few others mixed in
        text = "".join(alphabet[i] if rng.random() < 0.1 else chr(0x20 + i % 95) for i in picks)
        limit = int(rng.integers(40, 200))
        assert sanitize(text, limit) == _sanitize_by_definition(text, limit)


@pytest.mark.parametrize("bad", [0, -1, float("nan"), 10**400, "5"])
def test_step_timeout_must_be_positive_and_leaves_no_alarm_handler(bad):
    from netarena_gym.errors import InvalidConfig
    before = signal.getsignal(signal.SIGALRM)
    with pytest.raises(InvalidConfig, match="step_timeout must be a finite number of seconds"):
        gym.make("NetArena-Routing-v0", step_timeout=bad)
    assert signal.getsignal(signal.SIGALRM) is before
    env = gym.make("NetArena-K8sPolicy-v0").unwrapped  # later envs keep real deadlines
    env.reset(seed=0)
    _, _, _, _, info = env.step({"command": "kubectl get pods"})
    assert info["command_status"] != "timeout" and info["reward_components"]["timeout"] == 0.0


def test_max_steps_zero_is_rejected_not_the_default():
    from netarena_gym.errors import InvalidConfig
    with pytest.raises(InvalidConfig, match="max_steps must be an integer >= 1"):
        gym.make("NetArena-Routing-v0", max_steps=0)
    assert gym.make("NetArena-Routing-v0", max_steps=None).unwrapped.max_steps >= 1


@pytest.mark.parametrize("env_id", sorted(netarena_gym.ENV_IDS))
def test_scenario_replays_only_on_its_kind_of_level(env_id):
    """A level-1 record on a compat env played by upstream's rules and the expert failed
    it; compat and levels 1-3 records now replay only on their own kind of env."""
    from netarena_gym.errors import ScenarioError

    one, compat, two = (gym.make(env_id, level=lv) for lv in (1, "compat", 2))
    rec1 = one.reset(seed=0)[1]["scenario"]
    recc = compat.reset(seed=0)[1]["scenario"]
    with pytest.raises(ScenarioError, match="does not replay"):
        compat.reset(options={"scenario": rec1})
    with pytest.raises(ScenarioError, match="does not replay"):
        one.reset(options={"scenario": recc})
    with pytest.raises(ScenarioError, match="is for task"):
        one.reset(options={"scenario": {**rec1, "task": "other"}})
    assert two.reset(options={"scenario": rec1})[1]["scenario"]["faults"] == rec1["faults"]
    assert compat.reset(options={"scenario": recc})[1]["scenario"] == recc


def test_render_before_reset_and_step_after_close_need_a_reset():
    from netarena_gym.errors import ResetNeeded

    env = gym.make("NetArena-Routing-v0", render_mode="ansi").unwrapped
    with pytest.raises(ResetNeeded, match="before render"):
        env.render()
    env.reset(seed=0)
    assert "Steps left" in env.render()
    env.close()
    with pytest.raises(ResetNeeded, match="closed"):
        env.step({"machine": "r0", "command": "ip route"})
    env.reset(seed=0)
    assert env.step({"machine": "r0", "command": "ip route"})[4]["steps"] == 1


@pytest.mark.parametrize("env_id", sorted(netarena_gym.ENV_IDS))
def test_reset_options_that_are_not_a_dict_or_unknown(env_id):
    from netarena_gym.errors import InvalidConfig

    env = gym.make(env_id).unwrapped
    for bad in ("category", ["category"], 5):
        with pytest.raises(InvalidConfig, match="reset options must be a dict"):
            env.reset(seed=0, options=bad)
    with pytest.warns(UserWarning, match=r"reset ignores unknown options \['categroy'\]"):
        env.reset(seed=0, options={"categroy": "x"})


@pytest.mark.parametrize("env_id", sorted(netarena_gym.ENV_IDS))
def test_a_malformed_scenario_record_is_a_scenario_error(env_id):
    """TypeError, KeyError or JSONDecodeError before, depending on what was wrong."""
    from netarena_gym.errors import ScenarioError

    env = gym.make(env_id).unwrapped
    rec = env.reset(seed=0)[1]["scenario"]
    for bad in ("x", None, [1], {**rec, "version": "x"}, {**rec, "faults": None},
                {**rec, "meta": []}, {**rec, "level": 9}, {**rec, "params": []},
                {**rec, "faults": [{"type": "nope"}]}):
        with pytest.raises(ScenarioError):
            env.reset(options={"scenario": bad})
    assert env.reset(options={"scenario": rec})[1]["scenario"] == rec


@pytest.mark.parametrize("env_id", sorted(netarena_gym.ENV_IDS))
def test_a_reset_that_raises_leaves_no_episode_to_step(env_id):
    """The last episode stayed steppable (as its step 2) while ``env.scenario`` held the
    record the failed reset refused."""
    from netarena_gym.errors import ResetNeeded, ScenarioError

    env = gym.make(env_id).unwrapped
    rec = env.reset(seed=0)[1]["scenario"]
    played = env.scenario
    with pytest.raises(ScenarioError):
        env.reset(options={"scenario": {**rec, "faults": [{"type": "nope"}]}})
    assert env.scenario is played  # not the refused record
    with pytest.raises(ResetNeeded, match="the last reset raised"):
        env.step(0)
    assert env.reset(options={"scenario": rec})[1]["scenario"] == rec


@pytest.mark.parametrize("env_id", sorted(netarena_gym.ENV_IDS))
def test_an_unknown_option_is_invalid_config_listing_the_valid_ones(env_id):
    with pytest.raises(InvalidConfig, match=r"unknown option\(s\) \['levle'\]; valid options: .*"
                                            r"interface, .*level"):
        gym.make(env_id, levle=2)
