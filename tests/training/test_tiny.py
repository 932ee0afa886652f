"""netarena_gym.train.tiny: the catalogue model writes a call as a real Qwen3 does (the
``<tool_call>`` control tokens as ids around one body token), so TRL's response parser
finds it on every transformers version, and constrained generation writes only such calls."""
import pytest

from netarena_gym.train import tools

from .conftest import requires_llm

pytestmark = requires_llm

LABELS = ["r0: flush filters", "r0: inspect"]


@pytest.fixture(scope="module")
def model_and_tok(tmp_path_factory):
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from netarena_gym.train.tiny import build_catalogue_model
    env_cls = tools.make_catalogue_factory(tools.RoutingTools._env_id)
    path = build_catalogue_model(tmp_path_factory.mktemp("cat") / "model", env_cls, LABELS,
                                 corpus_seeds=range(1_000_000, 1_000_005), hidden_size=16,
                                 vocab_size=400)
    tok = AutoTokenizer.from_pretrained(str(path), padding_side="left")
    return env_cls, AutoModelForCausalLM.from_pretrained(str(path)), tok


def _prompt_ids(tok, env_cls):
    from netarena_gym.train.tiny import catalogue_rows, prompt_text
    text = prompt_text(tok, env_cls(), catalogue_rows(env_cls, 1, seed_base=1_000_000)[0])
    return tok(text, add_special_tokens=False)["input_ids"]


def test_a_catalogue_call_is_three_tokens_that_trl_parses(model_and_tok):
    from trl.chat_template_utils import add_response_schema, parse_response
    from netarena_gym.train.tiny import catalogue_call_ids, tool_call_text
    env_cls, _, tok = model_and_tok
    ids = catalogue_call_ids(tok, LABELS[0])
    assert len(ids) == 3 and tok.decode(ids) == tool_call_text("act", {"action": LABELS[0]})
    parsed = parse_response(add_response_schema(tok), ids, prefix=_prompt_ids(tok, env_cls))
    assert parsed["tool_calls"][0]["function"] == {"name": "act",
                                                  "arguments": {"action": LABELS[0]}}
    with pytest.raises(KeyError):
        catalogue_call_ids(tok, "r9: not in this catalogue")


def test_constrained_generation_writes_only_catalogue_calls(model_and_tok):
    import torch
    from netarena_gym.train.tiny import catalogue_call_ids, constrain_to_catalogue
    env_cls, model, tok = model_and_tok
    constrain_to_catalogue(model, tok, LABELS)
    prompt = torch.tensor([_prompt_ids(tok, env_cls)] * 8)
    torch.manual_seed(0)
    out = model.generate(input_ids=prompt, attention_mask=torch.ones_like(prompt),
                         do_sample=True, max_new_tokens=5, pad_token_id=tok.pad_token_id)
    calls = {tuple(catalogue_call_ids(tok, x)) for x in LABELS}
    for row in out[:, prompt.shape[1]:].tolist():
        assert tuple(row[:3]) in calls and row[3] == tok.eos_token_id
