"""Float inputs Dynamo passes as symbols (float_inputs.py): the backend specializes exactly the floats
AOTAutograd's tensorify pass would specialize (the floats it tensorifies, here SCALE and math.pi, stay
inputs), in Dynamo's graph under guards (no restart: `float_inputs="graph"`, the default) or by asking
for Dynamo's restart before AOTAutograd traces (`"restart"`)."""
from __future__ import annotations

import math

import pytest
import torch
import torch.nn as nn
from torch._dynamo.symbolic_convert import TensorifyState

from mlir_sym import backend
from mlir_sym.backend import mlir_sym_backend

@pytest.fixture(autouse=True)
def no_artifact_cache(monkeypatch):
    """Each compile traces (a graph loaded from the disk replays its restart instead)."""
    monkeypatch.setenv("MLIR_SYM_ARTIFACT_CACHE", "0")


SCALE = 2.0  # a module-level float used in tensor arithmetic: the pass tensorifies it


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.emb = nn.Embedding(50, 16)  # norm_type: a float symbol the aten graph never reads
        self.ln = nn.LayerNorm(16)  # eps: made a constant while Dynamo traces
        self.cfg = {"dropout": 0.25}  # a config float only tested against None

    def forward(self, ids):
        h = self.ln(self.emb(ids))
        if self.cfg["dropout"] is not None:
            h = h * SCALE + math.pi
        return h.sum(-1)


def _compile(record: list):
    def be(gm, example_inputs, **kw):
        record.append(set(TensorifyState.force_specializations))
        return mlir_sym_backend(gm, example_inputs, **kw)

    return torch.compile(Net().eval(), backend=be, dynamic=True)


def _specialized_at_each_trace(mode: str) -> list:
    """TensorifyState's specialized floats when each Dynamo trace reaches the backend, and after."""
    backend.config.float_inputs = mode
    backend.stats.reset()
    torch._dynamo.reset()
    torch.manual_seed(0)
    record: list = []
    cm = _compile(record)
    with torch.no_grad():
        cm(torch.randint(0, 50, (2, 7)))
    return record + [set(TensorifyState.force_specializations)]


def test_early_specialization_is_what_the_tensorify_pass_would_do():
    with_pass = _specialized_at_each_trace("off")
    early = _specialized_at_each_trace("restart")
    assert len(with_pass) == 3 and len(early) == 3  # one restart either way
    assert early[1] == with_pass[1] and early[1], (early, with_pass)
    assert backend.stats.early_restarts == 1
    in_graph = _specialized_at_each_trace("graph")
    assert len(in_graph) == 2 and in_graph[0] == set()  # one trace, no restart
    assert in_graph[1] == with_pass[1], (in_graph, with_pass)
    assert backend.stats.early_restarts == 0 and backend.stats.floats_in_graph == len(with_pass[1])


@pytest.mark.parametrize("mode", ["graph", "restart", "off"])
def test_one_compile_serves_every_length_and_results_match(mode):
    backend.config.float_inputs = mode
    record: list = []
    model = Net().eval()
    cm = torch.compile(model, backend=lambda gm, ex, **kw: (record.append(1), mlir_sym_backend(gm, ex, **kw))[1],
                       dynamic=True)
    with torch.no_grad():
        for n in (11, 5, 2, 9):
            ids = torch.randint(0, 50, (3, n))
            torch.testing.assert_close(cm(ids), model(ids))
    assert backend.stats.early_restarts == int(mode == "restart")
    assert backend.stats.compiles == 1, torch._dynamo.utils.counters["recompiles"]
    # restart: the first attempt (restarted before or after AOTAutograd traced) and the compiled graph
    assert len(record) == (1 if mode == "graph" else 2)


E = 2.0  # a module float that reaches a tensor op only inside an expression (as GPT-2's math.pi)


def test_a_float_specialized_in_the_graph_is_guarded(monkeypatch):
    """A float specialized in the graph is a constant there: Dynamo must guard its value (our
    guard_scalar), so a new value recompiles instead of reusing the old constant."""
    global E
    from mlir_sym import float_inputs

    # torch 2.11's rule: the pass would specialize E, so the backend does it in the graph
    monkeypatch.setattr(float_inputs, "_derived_floats_tensorify", lambda: False)
    monkeypatch.setattr(backend.config, "float_inputs", "graph")

    def f(x):
        return x * math.sqrt(2.0 / E) + x * SCALE

    torch._dynamo.reset()
    cf = torch.compile(f, backend="mlir_sym", dynamic=True)
    x = torch.randn(5, 3)
    try:
        torch.testing.assert_close(cf(x), f(x))
        assert backend.stats.floats_in_graph == 1 and backend.stats.compiles == 1
        E = 8.0
        torch.testing.assert_close(cf(x), f(x))  # without the guard: the old constant, 2x too large
        assert backend.stats.compiles == 2
    finally:
        E = 2.0


@pytest.mark.parametrize("max_norm", [None, 1.0])
def test_embedding_norm_type_is_ignored_only_without_max_norm(max_norm):
    import torch.fx as fx

    from mlir_sym.float_inputs import _ignored_use

    g = fx.Graph()
    ids, w, p = g.placeholder("ids"), g.placeholder("w"), g.placeholder("p")
    item = g.call_method("item", (p,))
    emb = g.call_function(torch.nn.functional.embedding, (ids, w, None, max_norm, item, False, False))
    emb.meta["example_value"] = torch.empty(2, 3)
    assert _ignored_use(emb, item) == (max_norm is None)


def test_older_tensorify_counts_only_floats_a_tensor_op_takes_itself(monkeypatch):
    """torch 2.11's pass specializes a float that reaches tensor ops only inside an expression
    (`x * sqrt(2 / math.e)`, as GPT-2's gelu does with math.pi); torch 2.13's tensorifies it."""
    from mlir_sym import float_inputs
    from mlir_sym.artifact_cache import shape_env_of

    version = tuple(int(v) for v in torch.__version__.split(".")[:2])
    if version >= (2, 13) or version <= (2, 11):  # this machine's torch, the H100's
        assert float_inputs._derived_floats_tensorify() is (version >= (2, 13))
    seen = []

    def be(gm, example_inputs, **kw):
        seen.append((gm, shape_env_of(gm, example_inputs)))
        return gm.forward

    def f(x):
        return x * math.sqrt(2.0 / math.e) + x * SCALE

    torch.compile(f, backend=be, dynamic=True)(torch.randn(4, 3))
    gm, shape_env = seen[0]
    item_of = {n.args[0].name: str(n.meta["example_value"]) for n in gm.graph.nodes
               if n.op == "call_method" and n.target == "item"}
    e_sym = next(v for k, v in item_of.items() if "math_e" in k.lower())
    scale_sym = next(v for k, v in item_of.items() if "scale" in k.lower())
    predicted = {}
    for newer in (True, False):
        monkeypatch.setattr(float_inputs, "_derived_floats_tensorify", lambda newer=newer: newer)
        predicted[newer] = set(float_inputs.predict_specializations(gm, shape_env))
    assert e_sym in predicted[False] and e_sym not in predicted[True]
    assert scale_sym not in predicted[False] and scale_sym not in predicted[True]


def test_floats_read_inside_subgraphs_are_left_to_the_pass(monkeypatch):
    """A float first read inside a checkpointed body lives in a subgraph, which AOTAutograd inlines and
    the pass tensorifies: no prediction is made for graphs with subgraphs."""
    import torch.utils.checkpoint as ckpt

    class M(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.alpha = 0.5

        def forward(self, x):
            return ckpt.checkpoint(lambda y: y * self.alpha, x, use_reentrant=False)

    m = M()
    cm = torch.compile(m, backend="mlir_sym", dynamic=True)
    with torch.no_grad():
        x = torch.randn(4, 3)
        torch.testing.assert_close(cm(x), m(x))
    assert backend.stats.early_restarts == 0 and backend.stats.floats_in_graph == 0


def test_no_prediction_when_tensorify_is_off(monkeypatch):
    """`TENSORIFY_PYTHON_SCALARS=0`: the pass does not run, nothing is specialized or restarted."""
    from mlir_sym import float_inputs
    from mlir_sym.artifact_cache import shape_env_of

    seen = []

    def be(gm, example_inputs, **kw):
        seen.append((gm, shape_env_of(gm, example_inputs)))
        return gm.forward

    torch.compile(Net().eval(), backend=be, dynamic=True)(torch.randint(0, 50, (2, 7)))
    gm, shape_env = seen[0]
    assert float_inputs.predict_specializations(gm, shape_env)  # norm_type and eps at least
    enabled = getattr(torch._dynamo.utils, "_is_tensorify_enabled", None)  # read once per process (cached)
    if enabled is None:
        pytest.skip("this torch has no TENSORIFY_PYTHON_SCALARS switch")
    monkeypatch.setenv("TENSORIFY_PYTHON_SCALARS", "0")
    enabled.cache_clear()
    try:
        assert float_inputs.predict_specializations(gm, shape_env) == []
    finally:
        monkeypatch.delenv("TENSORIFY_PYTHON_SCALARS")
        enabled.cache_clear()
