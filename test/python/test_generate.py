"""Autoregressive decoding with a KV cache: HuggingFace `generate` (greedy) of causal LMs from configs,
`model.forward` compiled with dynamic=True. Every decode step has a new past length; one graph serves
all of them. The tokens are eager's, and there are no more graphs than Dynamo makes for
`aot_eager` (prefill and decode, and again at batch 1: Dynamo specializes sizes 0 and 1)."""
from __future__ import annotations

import copy
import os

import pytest
import torch

transformers = pytest.importorskip("transformers")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from mlir_sym import backend  # noqa: E402

# (batch, prompt length): a new batch and new lengths at each generate; batch 1 last
ROUNDS = [(2, 7), (3, 11), (1, 4)]
VOCAB = 500


def causal_lm(name: str):
    torch.manual_seed(0)
    if name == "gpt2":
        cfg = transformers.GPT2Config(n_layer=2, n_embd=64, n_head=4, vocab_size=VOCAB, n_positions=128)
        model = transformers.GPT2LMHeadModel(cfg)
    else:
        cfg = transformers.LlamaConfig(num_hidden_layers=2, hidden_size=64, intermediate_size=128,
                                       num_attention_heads=4, num_key_value_heads=2, vocab_size=VOCAB,
                                       max_position_embeddings=128)
        model = transformers.LlamaForCausalLM(cfg)
    model.generation_config.eos_token_id = None  # exactly the tokens asked for
    model.generation_config.pad_token_id = 0
    return model.eval()


def generate_rounds(model, be: str | None, device: str = "cpu", new: int = 8, ctx=None, cache: str = "dynamic"):
    """The tokens of each round's generate, and the graphs Dynamo made (`be` None: eager). `cache`
    "static": HF's static cache (preallocated at the generate's largest length, written in place
    with `index_copy_`, its counter made on the CPU and moved to the device)."""
    # disable_compile: on CUDA with a static cache, HF compiles `__call__` itself (inductor) unless told
    # not to, and that compile, tracing into ours, would serve the decode steps (and the eager baseline)
    kw = {"cache_implementation": "static", "disable_compile": True} if cache == "static" else {}
    m = copy.deepcopy(model)
    if be is not None:
        torch._dynamo.reset()
        torch._dynamo.utils.counters.clear()
        m.forward = torch.compile(m.forward, backend=be, dynamic=True)
    g = torch.Generator().manual_seed(1)
    out = []
    for b, n in ROUNDS:
        ids = torch.randint(0, VOCAB, (b, n), generator=g).to(device)
        with torch.no_grad(), (ctx() if ctx else torch.autocast(device, enabled=False)):
            out.append(m.generate(ids, max_new_tokens=new, min_new_tokens=new, do_sample=False, **kw).cpu())
    return out, torch._dynamo.utils.counters["stats"]["unique_graphs"]


@pytest.mark.parametrize("name", ["gpt2", "llama"])
def test_generate_with_a_kv_cache_gives_eager_tokens_without_extra_graphs(name):
    model = causal_lm(name)
    want, _ = generate_rounds(model, None)
    got, graphs = generate_rounds(model, "mlir_sym")
    for g, w in zip(got, want):
        assert torch.equal(g, w)
    assert backend.stats.fallbacks == 0 and backend.stats.direct_graphs == backend.stats.compiles
    _, floor = generate_rounds(model, "aot_eager")
    assert graphs == floor, f"{graphs} graphs, aot_eager {floor}"


@pytest.mark.parametrize("name", ["gpt2", "llama"])
def test_generate_with_a_static_cache_gives_eager_tokens(name):
    """HF's static cache (what HF recommends for torch.compile): the cache is an input the graph
    mutates (index_copy_), its length is the generate's (dynamic across generates)."""
    model = causal_lm(name)
    want, _ = generate_rounds(model, None, cache="static")
    got, graphs = generate_rounds(model, "mlir_sym", cache="static")
    for g, w in zip(got, want):
        assert torch.equal(g, w)
    assert backend.stats.fallbacks == 0
    # each decode step writes both layers' keys and values into the cache (mutations.py)
    assert backend.stats.mutations_in_place == len(ROUNDS) * 7 * 2 * 2
    _, floor = generate_rounds(model, "aot_eager", cache="static")
    assert graphs == floor, f"{graphs} graphs, aot_eager {floor}"
