"""Local ``transformers`` causal LMs as agents: one loader, one generation routine, two
ways to talk.

* :class:`HFToolAgent` speaks the same conversation as GRPO rollouts and SFT
  demonstrations (:mod:`netarena_gym.train`): system prompt, task + first observation as the
  user message, one tool call per turn, the env's next observation as the tool answer. A turn
  without a tool call goes to the env as it is (an invalid action, penalised like any
  unparseable text) and the env's answer comes back as a user message. With
  ``max_prompt_tokens`` the oldest exchanges are dropped when the conversation outgrows it.
  The factory's ``hf`` agent (``--agent hf --model PATH``).
* :class:`TransformersChat` is a chat backend for :class:`~netarena_gym.agents.llm.LLMAgent`
  (JSON replies, the format of ``netarena-gym generate``'s demonstrations):
  ``--agent llm --provider transformers --model PATH``.

Models load from a local directory (a LoRA adapter directory is merged onto its base) or,
with ``local_files_only=False``, a hub id. Generation is greedy at temperature 0, sampled
otherwise (seeded per call when a seed is given). torch, transformers (and trl for
:class:`HFToolAgent`, peft for adapters) are imported when used: a missing one raises
``DependencyNotInstalled``.
"""
from __future__ import annotations

import json
import time
from pathlib import Path

from gymnasium.error import DependencyNotInstalled

from netarena_gym.llm.client import ChatResult
from netarena_gym.train import tools


def _require(*names: str):
    import importlib
    try:
        return [importlib.import_module(n) for n in names]
    except ImportError as e:
        raise DependencyNotInstalled(
            f"local models need {', '.join(names)} (pip install 'netarena-gym[train]'): "
            f"{e}") from e


def load_model(path: str, *, device: str | None = None, dtype: str | None = None,
               local_files_only: bool = False):
    """``(model, tokenizer)`` from a local directory or a hub id (a LoRA adapter directory
    is merged onto its base model), in eval mode."""
    torch, transformers = _require("torch", "transformers")
    torch_dtype = getattr(torch, dtype) if dtype else None
    kw = {"local_files_only": local_files_only}
    if torch_dtype is not None:
        kw["dtype"] = torch_dtype
    if (Path(path) / "adapter_config.json").exists():
        (peft,) = _require("peft")
        model = peft.AutoPeftModelForCausalLM.from_pretrained(path, **kw).merge_and_unload()
    else:
        model = transformers.AutoModelForCausalLM.from_pretrained(path, **kw)
    tok = transformers.AutoTokenizer.from_pretrained(path, local_files_only=local_files_only)
    if device:
        model.to(device)
    model.eval()
    return model, tok


def generate(model, tokenizer, prompt_ids: list[int], *, max_new_tokens: int,
             temperature: float = 0.0, seed: int | None = None) -> list[int]:
    """The new token ids after ``prompt_ids`` (greedy at temperature 0)."""
    (torch,) = _require("torch")
    inp = torch.tensor([prompt_ids], device=model.device)
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
    kw = dict(max_new_tokens=int(max_new_tokens), pad_token_id=pad,
              eos_token_id=tokenizer.eos_token_id, do_sample=temperature > 0)
    if temperature > 0:
        kw["temperature"] = float(temperature)
        if seed is not None:
            torch.manual_seed(int(seed))
    with torch.no_grad():
        out = model.generate(inp, attention_mask=torch.ones_like(inp), **kw)
    return out[0, len(prompt_ids):].tolist()


class TransformersChat:
    """A chat backend (``chat(messages, ...) -> ChatResult``) over a local model directory,
    loaded with ``local_files_only=True``: nothing is fetched from a hub at run time."""

    def __init__(self, path: str, *, device: str = "cpu", dtype: str | None = None):
        self.model, self.tokenizer = load_model(path, device=device, dtype=dtype,
                                                local_files_only=True)
        if self.tokenizer.chat_template is None:
            raise ValueError(f"the tokenizer in {path} has no chat template")

    def chat(self, messages: list[dict], *, temperature: float = 0.0, max_tokens: int = 512,
             seed: int | None = None) -> ChatResult:
        t0 = time.perf_counter()
        try:
            ids = self.tokenizer.apply_chat_template(messages, add_generation_prompt=True,
                                                     tokenize=True, return_dict=True)["input_ids"]
            new = generate(self.model, self.tokenizer, list(ids), max_new_tokens=max_tokens,
                           temperature=temperature, seed=seed)
            text = self.tokenizer.decode(new, skip_special_tokens=True)
            return ChatResult(text=text, latency_s=time.perf_counter() - t0,
                              prompt_tokens=len(ids), completion_tokens=len(new))
        except Exception as e:  # a generation failure is a failed call, not a crash
            return ChatResult(text=None, latency_s=time.perf_counter() - t0,
                              error=f"{type(e).__name__}: {e}")


class HFToolAgent:
    """``reset()`` / ``act(observation, info)`` over a local causal LM with tool calling."""

    def __init__(self, model, tokenizer, env_id: str, *, max_new_tokens: int = 256,
                 temperature: float = 0.0, chat_template_kwargs: dict | None = None,
                 max_prompt_tokens: int | None = None):
        _require("trl")
        from trl.chat_template_utils import add_response_schema
        from netarena_gym.train.tools import tool_class
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

    @classmethod
    def from_options(cls, env, opts: dict) -> "HFToolAgent":
        """The factory's ``hf`` agent: ``model`` (a path or hub id), ``max_tokens``,
        ``temperature``, ``max_prompt_tokens``, ``device``, ``dtype``."""
        if not opts.get("model"):
            raise ValueError("--agent hf needs --model PATH")
        spec = getattr(env, "spec", None)
        if spec is None:
            raise ValueError("the hf agent needs an env made with gym.make (its id)")
        model, tok = load_model(str(opts["model"]), device=opts.get("device"),
                                dtype=opts.get("dtype"))
        return cls(model, tok, spec.id, max_new_tokens=int(opts.get("max_tokens", 256)),
                   temperature=float(opts.get("temperature", 0.0)),
                   max_prompt_tokens=opts.get("max_prompt_tokens"))

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

    def act(self, observation: str, info: dict | None = None):
        from trl.chat_template_utils import parse_response
        if self.messages is None:
            from netarena_gym.train.data import TASK_PROMPT
            from netarena_gym.train.tools import initial_message
            first = TASK_PROMPT + initial_message(observation)
            self.messages = [{"role": "system", "content": tools.system_prompt(self.cls)},
                             {"role": "user", "content": first}]
        elif self._called:
            self.messages.append({"role": "tool", "name": self._called, "content": observation})
        else:
            self.messages.append({"role": "user", "content": observation})
        prompt = self._prompt_ids()
        new = generate(self.model, self.tokenizer, prompt, max_new_tokens=self.max_new_tokens,
                       temperature=self.temperature)
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
                return tools.action_of_call(self.cls, self._called, args)
            except ValueError as e:  # the env reports it as an invalid action
                return f"invalid tool call: {e}"
        self.messages.append(msg)
        self._called = None
        return msg["content"] or "(empty reply)"
