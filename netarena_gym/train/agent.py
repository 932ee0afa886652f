"""A minimal local transformers agent for the text interface, speaking the same
conversation as GRPO rollouts and SFT demonstrations: system prompt, task + first
observation as the user message, one tool call per turn, the env's next observation as
the tool answer. It plugs into ``core.runner.run_episode`` like any agent.

A turn without a tool call is passed to the env as it is (an invalid action, penalised
like any unparseable text) and the env's answer comes back as a user message. With
``max_prompt_tokens`` the oldest exchanges are dropped when the conversation outgrows it
(long level-3 episodes).
"""
from __future__ import annotations

import json

from netarena_gym.train.data import TASK_PROMPT
from netarena_gym.train.tools import initial_message, tool_class


class HFToolAgent:
    """``reset()`` / ``act(observation, info)`` over a local causal LM with tool calling."""

    def __init__(self, model, tokenizer, env_id: str, *, max_new_tokens: int = 256,
                 temperature: float = 0.0, chat_template_kwargs: dict | None = None,
                 max_prompt_tokens: int | None = None):
        from trl.chat_template_utils import add_response_schema
        self.model = model
        self.tokenizer = tokenizer
        if (getattr(tokenizer, "response_template", None) is None
                and getattr(tokenizer, "response_schema", None) is None):
            add_response_schema(tokenizer)
        self.cls = tool_class(env_id)
        self.tools = self.cls._tool_schemas()
        self.max_new_tokens = max_new_tokens
        self.temperature = temperature
        self.template_kwargs = {"enable_thinking": False, **(chat_template_kwargs or {})}
        self.max_prompt_tokens = max_prompt_tokens
        self.turns = 0
        self.tool_calls = 0
        self.reset()

    def reset(self) -> None:
        self.messages: list[dict] | None = None
        self._called: str | None = None  # name of the tool the last turn called

    def _prompt_ids(self) -> list[int]:
        """The rendered conversation; past ``max_prompt_tokens`` the oldest exchanges
        (an assistant turn and the answer to it) are dropped, the system prompt and the
        task with its first observation are kept."""
        while True:
            text = self.tokenizer.apply_chat_template(self.messages, tools=self.tools,
                                                      add_generation_prompt=True,
                                                      tokenize=False, **self.template_kwargs)
            ids = self.tokenizer(text, add_special_tokens=False)["input_ids"]
            if (not self.max_prompt_tokens or len(ids) <= self.max_prompt_tokens
                    or len(self.messages) <= 4):
                return ids
            del self.messages[2:4]

    def _generate(self, prompt_ids: list[int]) -> list[int]:
        import torch
        inp = torch.tensor([prompt_ids], device=self.model.device)
        kw = dict(max_new_tokens=self.max_new_tokens, pad_token_id=self.tokenizer.pad_token_id,
                  eos_token_id=self.tokenizer.eos_token_id)
        if self.temperature > 0:
            kw.update(do_sample=True, temperature=self.temperature)
        else:
            kw.update(do_sample=False)
        with torch.no_grad():
            out = self.model.generate(inp, attention_mask=torch.ones_like(inp), **kw)
        return out[0, len(prompt_ids):].tolist()

    def act(self, observation: str, info: dict | None = None):
        from trl.chat_template_utils import parse_response
        if self.messages is None:
            first = TASK_PROMPT + initial_message(observation)
            self.messages = [{"role": "system", "content": self.cls._system_prompt},
                             {"role": "user", "content": first}]
        elif self._called:
            self.messages.append({"role": "tool", "name": self._called, "content": observation})
        else:
            self.messages.append({"role": "user", "content": observation})
        prompt = self._prompt_ids()
        new = self._generate(prompt)
        parsed = parse_response(self.tokenizer, new, prefix=prompt, tools=self.tools)
        self.turns += 1
        calls = [c for c in (parsed.get("tool_calls") or []) if c.get("type") == "function"]
        msg = {"role": "assistant", "content": parsed.get("content") or ""}
        if calls:
            fn = calls[0]["function"]
            args = fn.get("arguments") or {}
            if isinstance(args, str):
                try:
                    args = json.loads(args)
                except json.JSONDecodeError:
                    args = {}
            msg["tool_calls"] = [{"type": "function",
                                  "function": {"name": fn.get("name", ""), "arguments": args}}]
            self.messages.append(msg)
            self._called = str(fn.get("name", "")) or "tool"
            self.tool_calls += 1
            try:
                if not isinstance(args, dict):
                    raise ValueError("tool arguments must be a JSON object")
                return self.cls._action_of_call(self._called, args)
            except ValueError as e:  # the env reports it as an invalid action
                return f"invalid tool call: {e}"
        self.messages.append(msg)
        self._called = None
        return msg["content"] or "(empty reply)"


def load_model(path: str, *, device: str | None = None, dtype: str | None = None):
    """Model and tokenizer from a local directory or a hub id (a LoRA adapter directory
    is merged onto its base model)."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from pathlib import Path
    p = Path(path)
    torch_dtype = getattr(torch, dtype) if dtype else None
    if (p / "adapter_config.json").exists():
        from peft import AutoPeftModelForCausalLM
        model = AutoPeftModelForCausalLM.from_pretrained(path, dtype=torch_dtype).merge_and_unload()
    else:
        model = AutoModelForCausalLM.from_pretrained(path, dtype=torch_dtype)
    tok = AutoTokenizer.from_pretrained(path)
    if device:
        model.to(device)
    model.eval()
    return model, tok
