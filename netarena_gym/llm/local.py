"""A local ``transformers`` causal LM as a chat backend (imported only when used).

``TransformersChat(path)`` loads a model directory (weights, tokenizer with a chat template)
with ``local_files_only=True``: nothing is fetched from a hub at run time. Generation is
greedy at temperature 0, sampled otherwise (seeded per call when a seed is given).
"""
from __future__ import annotations

import time

from netarena_gym.llm.client import ChatResult


class TransformersChat:
    def __init__(self, path: str, *, device: str = "cpu", dtype: str | None = None):
        try:
            import torch
            from transformers import AutoModelForCausalLM, AutoTokenizer
        except ImportError as e:
            raise ImportError("--provider transformers needs torch and transformers: "
                              "pip install torch transformers") from e
        self.torch = torch
        self.tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True)
        kw = {"local_files_only": True}
        if dtype:
            kw["dtype"] = getattr(torch, dtype)
        self.model = AutoModelForCausalLM.from_pretrained(path, **kw).to(device)
        self.model.eval()
        self.device = device
        if self.tokenizer.chat_template is None:
            raise ValueError(f"the tokenizer in {path} has no chat template")

    def chat(self, messages: list[dict], *, temperature: float = 0.0, max_tokens: int = 512,
             seed: int | None = None) -> ChatResult:
        t0 = time.perf_counter()
        try:
            enc = self.tokenizer.apply_chat_template(messages, add_generation_prompt=True,
                                                     return_tensors="pt", return_dict=True)
            ids = enc["input_ids"].to(self.device)
            mask = enc.get("attention_mask")
            kw = {"max_new_tokens": int(max_tokens), "do_sample": temperature > 0,
                  "pad_token_id": self.tokenizer.pad_token_id or self.tokenizer.eos_token_id}
            if mask is not None:
                kw["attention_mask"] = mask.to(self.device)
            if temperature > 0:
                kw["temperature"] = float(temperature)
                if seed is not None:
                    self.torch.manual_seed(int(seed))
            with self.torch.no_grad():
                out = self.model.generate(ids, **kw)
            new = out[0, ids.shape[1]:]
            text = self.tokenizer.decode(new, skip_special_tokens=True)
            return ChatResult(text=text, latency_s=time.perf_counter() - t0,
                              prompt_tokens=int(ids.shape[1]), completion_tokens=int(new.shape[0]))
        except Exception as e:  # a generation failure is a failed call, not a crash
            return ChatResult(text=None, latency_s=time.perf_counter() - t0,
                              error=f"{type(e).__name__}: {e}")
