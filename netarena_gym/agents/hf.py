"""Local ``transformers`` causal LMs as agents: one loader, one generation routine, two
ways to talk.

* :class:`HFToolAgent` speaks the same conversation as GRPO rollouts and SFT
  demonstrations (:mod:`netarena_gym.train`): system prompt, task + first observation as the
  user message, the env's next observation as the tool answer. Every tool call of a turn is
  played, in order, one per ``act()`` (one env step each, as TRL's tool loop runs them all
  in training), with one tool message per call, before the model generates again; each
  call becomes its env action through :func:`netarena_gym.train.tools.env_action`, the
  mapping GRPO's tool envs use, so a malformed call (unknown tool, wrong arguments) is the
  same invalid step in training and evaluation. A turn without a tool call goes to the env
  as it is (an invalid action, penalised like any unparseable text) and the env's answer
  comes back as a user message. With ``max_prompt_tokens`` the oldest exchanges are
  dropped when the conversation outgrows it. Sampling (temperature > 0) is seeded per step,
  ``episode_seed * 1000 + step``, as :class:`~netarena_gym.agents.llm.LLMAgent` does, so a
  seeded episode replays. The factory's ``hf`` agent (``--agent hf --model PATH``).
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
                 max_prompt_tokens: int | None = None, seed: int | None = None):
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
        self.seed = seed
        self._episode_seed: int | None = None
        self.turns = 0
        self.tool_calls = 0
        self.reset()

    @classmethod
    def from_options(cls, env, opts: dict, seed: int | None = None) -> "HFToolAgent":
        """The factory's ``hf`` agent: ``model`` (a path or hub id), ``max_tokens``,
        ``temperature``, ``max_prompt_tokens``, ``device``, ``dtype``; ``seed`` seeds
        sampling when no episode seed is set."""
        if not opts.get("model"):
            raise ValueError("--agent hf needs --model PATH")
        spec = getattr(env, "spec", None)
        if spec is None:
            raise ValueError("the hf agent needs an env made with gym.make (its id)")
        model, tok = load_model(str(opts["model"]), device=opts.get("device"),
                                dtype=opts.get("dtype"))
        return cls(model, tok, spec.id, max_new_tokens=int(opts.get("max_tokens", 256)),
                   temperature=float(opts.get("temperature", 0.0)),
                   max_prompt_tokens=opts.get("max_prompt_tokens"), seed=seed)

    def reset(self) -> None:
        self.messages: list[dict] | None = None
        self._called: str | None = None  # name of the tool the last action called
        self._pending: list[tuple[str, object]] = []  # the turn's calls not played yet
        self._step = 0

    def set_episode_seed(self, seed: int) -> None:
        """Seed this episode's sampling (the episode loop calls it before each episode)."""
        self._episode_seed = int(seed)

    def _sample_seed(self) -> int | None:
        base = self._episode_seed if self._episode_seed is not None else self.seed
        return None if base is None else (int(base) * 1000 + self._step) % (2 ** 31)

    def _prompt_ids(self) -> list[int]:
        """The rendered conversation; past ``max_prompt_tokens`` the oldest exchanges
        (an assistant turn and the answers to it) are dropped, the system prompt and the
        task with its first observation are kept."""
        while True:
            text = self.tokenizer.apply_chat_template(self.messages, tools=self.tools,
                                                      add_generation_prompt=True,
                                                      tokenize=False, **self.template_kwargs)
            ids = self.tokenizer(text, add_special_tokens=False)["input_ids"]
            nxt = next((i for i in range(3, len(self.messages))
                        if self.messages[i]["role"] == "assistant"), None)
            if not self.max_prompt_tokens or len(ids) <= self.max_prompt_tokens or nxt is None:
                return ids
            del self.messages[2:nxt]

    def _play(self, name: str, args):
        """The env action of one tool call (the mapping training uses)."""
        self._called = name
        self.tool_calls += 1
        return tools.env_action(self.cls, name, args)

    def act(self, observation: str, info: dict | None = None):
        from trl.chat_template_utils import parse_response
        seed = self._sample_seed()
        self._step += 1
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
        if self._pending:  # the rest of the last turn's calls, one per step
            return self._play(*self._pending.pop(0))
        prompt = self._prompt_ids()
        new = generate(self.model, self.tokenizer, prompt, max_new_tokens=self.max_new_tokens,
                       temperature=self.temperature, seed=seed)
        parsed = parse_response(self.tokenizer, new, prefix=prompt, tools=self.tools)
        self.turns += 1
        calls = [c for c in (parsed.get("tool_calls") or []) if c.get("type") == "function"]
        msg = {"role": "assistant", "content": parsed.get("content") or ""}
        if calls:
            played = []
            for c in calls:
                fn = c["function"]
                args = fn.get("arguments")
                args = {} if args is None else args
                if isinstance(args, str):
                    try:
                        args = json.loads(args)
                    except json.JSONDecodeError:
                        pass  # not an object: env_action makes it an invalid call
                played.append((str(fn.get("name", "")) or "tool", args))
            msg["tool_calls"] = [{"type": "function",
                                  "function": {"name": n,
                                               "arguments": a if isinstance(a, dict) else {}}}
                                 for n, a in played]
            self.messages.append(msg)
            self._pending = played[1:]
            return self._play(*played[0])
        self.messages.append(msg)
        self._called = None
        return msg["content"] or "(empty reply)"
