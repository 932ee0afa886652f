"""System prompts (dispatched to each task's ``prompts.py``) and the conversation window."""
from __future__ import annotations

import json

import pytest

from netarena_gym.agents.prompts import STYLES, Conversation, system_prompt, task_prompts


def test_prompt_styles():
    keys = ("machine", "command")
    p = {s: system_prompt("routing", keys, style=s) for s in STYLES}
    assert len(set(p.values())) == 4
    for s in STYLES:
        assert '{"machine": "<router or host>", "command": "<one shell command>"}' in p[s]
    assert "step by step" in p["cot"] and "step by step" in p["fewshot_cot"]
    assert "Examples" in p["fewshot"] and "Examples" in p["fewshot_cot"]
    assert "step by step" not in p["fewshot"] and "Examples" not in p["cot"]
    with pytest.raises(ValueError):
        system_prompt("routing", keys, style="nope")


def test_unknown_tasks_get_a_generic_prompt_from_their_keys_and_docs():
    p = system_prompt("brand_new_task", ("device", "command"), doc="Fix the widgets.")
    assert "Fix the widgets." in p
    assert json.dumps({"device": "<device>", "command": "<command>"}) in p
    assert '"command"' in system_prompt("capacity_planning", ("code",)) or \
        '"code"' in system_prompt("capacity_planning", ("code",))


def test_conversation_window():
    c = Conversation("SYS", history=2)
    assert [m["role"] for m in c.messages("o0")] == ["system", "user"]
    assert c.messages("o0")[1]["content"].startswith("Here is the current state.")
    for i in range(5):
        c.add(f"o{i}", f"a{i}")
    msgs = c.messages("o5")
    assert [m["content"] for m in msgs if m["role"] == "assistant"] == ["a3", "a4"]
    assert len(msgs) == 1 + 2 * 2 + 1
    assert msgs[-1]["content"].endswith("o5") and "Begin" not in msgs[1]["content"]
    c0 = Conversation("SYS", history=0)
    c0.add("o0", "a0")
    assert len(c0.messages("o1")) == 2


def test_fewshot_examples_are_commands_the_routing_env_accepts():
    import gymnasium as gym

    from netarena_gym.routing.prompts import SHOTS

    env = gym.make("NetArena-Routing-v0", level=1)
    for _, action in SHOTS:
        env.reset(seed=3)
        _, _, _, _, info = env.step(dict(action))
        assert info["command_kind"] in ("ok", "error"), action  # well-formed, allowed


@pytest.mark.parametrize("task", ["routing", "k8s", "capacity_planning", "malt", "kubernetes"])
def test_each_task_folder_holds_its_own_briefing(task):
    mod = task_prompts(task)
    folder = {"malt": "capacity_planning", "kubernetes": "k8s"}.get(task, task)
    assert mod.__name__ == f"netarena_gym.{folder}.prompts"
    assert system_prompt(task, ("command",)).startswith(mod.SYSTEM)


def test_tasks_without_a_prompts_module_get_none():
    assert task_prompts("brand_new_task") is None and task_prompts("../etc") is None
    assert task_prompts("core") is None  # a package without a prompts module
