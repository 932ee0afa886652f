"""Shared pieces of the training tests: the optional-dependency guards, a tiny tool-calling
model built locally once per session, the trainer command modules, and scripted
completions that drive rollouts through the env's expert."""
from __future__ import annotations

import importlib.util
import json
import re

import pytest

ROUTING = "NetArena-Routing-v0"

NEED_LLM = ('needs torch, transformers, trl, datasets and peft: pip install torch==2.13.0 '
            '&& pip install -e ".[train]" (docs/training.md#install)')
NEED_SB3 = ('needs torch, stable-baselines3, sb3-contrib and matplotlib: pip install torch==2.13.0 '
            '&& pip install -e ".[train]" (docs/training.md#install)')


def have(*mods: str) -> bool:
    return all(importlib.util.find_spec(m) is not None for m in mods)


requires_llm = pytest.mark.skipif(not have("torch", "transformers", "trl", "datasets", "peft",
                                           "jmespath"), reason=NEED_LLM)
requires_transformers = pytest.mark.skipif(
    not have("transformers"),
    reason='tool schemas come from transformers.utils.get_json_schema: needs transformers: '
           'pip install -e ".[llm]" (docs/training.md#install)')
requires_sb3 = pytest.mark.skipif(not have("torch", "stable_baselines3", "sb3_contrib",
                                           "matplotlib"), reason=NEED_SB3)


def load_script(name: str):
    """The module behind ``netarena-gym train <name>`` (``main(argv)``, ``run(args)``)."""
    return importlib.import_module(f"netarena_gym.train.cli.{name}")


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory):
    if not have("torch", "transformers", "trl", "tokenizers"):
        pytest.skip(NEED_LLM)
    from netarena_gym.train.tiny import build_tiny_model
    return build_tiny_model(tmp_path_factory.mktemp("tiny") / "model", [ROUTING])


# --------------------------------------------------------------- scripted completions
_FIRST = re.compile(r"Current state:\n(.*?)<\|im_end\|>", re.S)
_TOOL = re.compile(r"<tool_response>\n(.*?)\n</tool_response>", re.S)


def observations_in(text: str) -> list[str]:
    """The env observations of a rendered conversation: the first one (in the user
    message) and every tool answer, in order."""
    m = _FIRST.search(text)
    if m is None:
        raise AssertionError("no first observation in the prompt")
    return [m.group(1)] + _TOOL.findall(text)


def expert_reply(text: str, expert_cls, tool_call) -> str:
    """What the expert would say next in this conversation: replay it over the
    observations (it is deterministic and observation-only) and render its last action
    as a Qwen3 tool call, or a closing message once the episode is over."""
    obs = observations_in(text)
    if "Episode over" in obs[-1]:
        return "Done.<|im_end|>"
    expert = expert_cls()
    action = None
    for o in obs:
        action = expert.act(o, {})
    name, args = tool_call(action)
    return ("<tool_call>\n" + json.dumps({"name": name, "arguments": args})
            + "\n</tool_call><|im_end|>")


def scripted_generate(tok, reply_for_row):
    """A ``model.generate`` replacement: decodes each prompt row, asks
    ``reply_for_row(i, text, first_call)`` for the reply text, returns prompt + reply ids
    (right-padded), as TRL's own tests patch generation."""
    import torch
    state = {"calls": 0}

    def fake_generate(input_ids, **kwargs):
        first = state["calls"] == 0 or all("<tool_response>" not in t for t in
                                           tok.batch_decode(input_ids))
        state["calls"] += 1
        texts = tok.batch_decode(input_ids)
        replies = [tok(reply_for_row(i, t, first), add_special_tokens=False)["input_ids"]
                   for i, t in enumerate(texts)]
        width = max(map(len, replies))
        pad = tok.pad_token_id
        rows = [r + [pad] * (width - len(r)) for r in replies]
        return torch.cat([input_ids, torch.tensor(rows, device=input_ids.device)], dim=1)

    fake_generate.state = state
    return fake_generate
