"""CUDA graphs per input-size tuple (runtime/cuda_graphs.py, `config.cuda_graphs`) on the GPU: the
same results as eager at every size, a graph captured at a size's second call and replayed after,
outputs that later calls do not overwrite, in-place changes of inputs and parameters seen, and
artifacts of few launches left alone.

Skips (cleanly) without a CUDA device:  pytest -q test/gpu/test_cuda_graphs.py
"""
from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device", allow_module_level=True)

import torch.nn as nn  # noqa: E402

from mlir_sym import backend  # noqa: E402
from mlir_sym.runtime.cuda_graphs import CudaGraphs  # noqa: E402

DEV = "cuda"


class Block(nn.Module):
    """A pre-norm MLP block: layer norm, linear, GELU, linear, residual (several launches a call)."""

    def __init__(self, d: int = 64) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(d)
        self.up = nn.Linear(d, 4 * d)
        self.down = nn.Linear(4 * d, d)

    def forward(self, x):
        return x + self.down(torch.nn.functional.gelu(self.up(self.norm(x)))) * 0.5


def _graphs() -> CudaGraphs:
    (art,) = [a for a in backend._CACHE.values() if getattr(a, "graphs", None) is not None]
    return art.graphs


def test_graphs_replay_with_eager_results_at_every_size():
    backend.config.cuda_graphs = True
    m = Block().to(DEV).eval()
    f = torch.compile(m, backend="mlir_sym", dynamic=True)
    sizes = [5, 9, 5, 9, 5, 17, 9, 17, 17]
    with torch.no_grad():
        for n in sizes:
            x = torch.randn(n, 64, device=DEV)
            torch.testing.assert_close(f(x), m(x), rtol=1e-4, atol=1e-4)
    g = _graphs()
    assert g.captures == 3  # one per size, at its second call
    assert g.replays >= 4  # calls after a size's capture (Dynamo's first call may come another way)
    assert backend.stats.compiles == 1


@pytest.mark.parametrize("max_sizes", [256, 10, 4])
def test_every_size_seen_again_gets_a_graph_up_to_max_sizes(monkeypatch, max_sizes):
    """Decode steps: each size is new within a generate and comes again at the next one. Every size
    called a second time is captured (up to `cuda_graph_max_sizes`, default 256; it was 8, and 7 of 8
    decode steps of a repeated generate ran their launches one by one); sizes past the limit run
    normally, with eager's results."""
    backend.config.cuda_graphs = True
    monkeypatch.setattr(backend.config, "cuda_graph_max_sizes", max_sizes)
    m = Block().to(DEV).eval()
    f = torch.compile(m, backend="mlir_sym", dynamic=True)
    sizes = list(range(3, 15))  # 12 sizes
    replays = []
    with torch.no_grad():
        for _ in range(3):  # three "generates" over the same sizes
            for n in sizes:
                x = torch.randn(n, 64, device=DEV)
                torch.testing.assert_close(f(x), m(x), rtol=1e-4, atol=1e-4)
            replays.append(_graphs().replays)
    g = _graphs()
    graphed = min(max_sizes, len(sizes))
    assert g.captures == graphed
    assert sum(1 for v in g.graphs.values() if v is not None) == graphed
    assert replays[2] - replays[1] == graphed  # the third round replays every graphed size, once
    assert backend.stats.compiles == 1


def test_outputs_survive_later_calls_and_inputs_are_read_at_each_call():
    backend.config.cuda_graphs = True
    m = Block().to(DEV).eval()
    f = torch.compile(m, backend="mlir_sym", dynamic=True)
    with torch.no_grad():
        f(torch.randn(3, 64, device=DEV))  # another size first: the dynamic graph serves both
        x = torch.randn(6, 64, device=DEV)
        outs = [f(x) for _ in range(3)]  # normal, capture, replay
        y = torch.randn(6, 64, device=DEV)
        out_y = f(y)
        for o in outs:  # the replays that followed did not overwrite what earlier calls returned
            torch.testing.assert_close(o, m(x), rtol=1e-4, atol=1e-4)
        torch.testing.assert_close(out_y, m(y), rtol=1e-4, atol=1e-4)
        x.mul_(3)  # the caller's tensor changed in place: copied in again
        torch.testing.assert_close(f(x), m(x), rtol=1e-4, atol=1e-4)
        m.up.weight.mul_(0.5)  # a parameter changed in place: read in place by the graph
        torch.testing.assert_close(f(x), m(x), rtol=1e-4, atol=1e-4)
    g = _graphs()
    assert g.replays >= (2 if g.hand_out else 3)
    if g.hand_out:  # outputs handed out: a second graph replayed while the first one's were held, then
        assert g.captures == 2 and g.busy_calls >= 1  # calls ran normally while both were held


def test_a_loop_keeping_its_last_outputs_alternates_two_graphs():
    """`out = f(x)` in a loop holds the previous call's outputs during the next call: the size's two
    graphs take turns, nothing is copied out and no call runs normally."""
    backend.config.cuda_graphs = True
    m = Block().to(DEV).eval()
    f = torch.compile(m, backend="mlir_sym", dynamic=True)
    with torch.no_grad():
        f(torch.randn(3, 64, device=DEV))
        x = torch.randn(7, 64, device=DEV)
        out = None
        for k in range(10):
            x.add_(1.0)
            out = f(x)
            torch.testing.assert_close(out, m(x), rtol=1e-4, atol=1e-4)
    g = _graphs()
    if not g.hand_out:
        pytest.skip("this torch has no storage use counts: outputs are copied out")
    assert g.captures == 2 and g.busy_calls == 0 and g.replays >= 8
    (first,) = [v for k, v in g.graphs.items() if v is not None]
    assert first.spare is not None and first.replays >= 4 and first.spare.replays >= 4


def test_a_held_view_of_an_output_is_not_overwritten():
    """A caller holding only a view of an output (a slice) keeps its values while later calls of the
    size replay."""
    backend.config.cuda_graphs = True
    m = Block().to(DEV).eval()
    f = torch.compile(m, backend="mlir_sym", dynamic=True)
    with torch.no_grad():
        f(torch.randn(3, 64, device=DEV))
        x = torch.randn(6, 64, device=DEV)
        for _ in range(3):
            f(x)  # graphs captured, outputs dropped
        head = f(x)[:2]  # a view: the output's storage stays referenced
        expect = m(x)[:2].clone()
        for _ in range(4):
            y = torch.randn(6, 64, device=DEV)
            torch.testing.assert_close(f(y), m(y), rtol=1e-4, atol=1e-4)
        torch.testing.assert_close(head, expect, rtol=1e-4, atol=1e-4)


def test_few_launches_are_not_graphed():
    backend.config.cuda_graphs = True
    f = torch.compile(lambda x: (x * 2 + 1).relu(), backend="mlir_sym", dynamic=True)
    for n in (5, 8, 8, 8):
        x = torch.randn(n, device=DEV)
        torch.testing.assert_close(f(x), (x * 2 + 1).relu())
    arts = list(backend._CACHE.values())
    assert arts and all(getattr(a, "graphs", None) is None for a in arts)
    assert "fewer than" in CudaGraphs.eligible(arts[0], backend.config.cuda_graph_min_launches)


@pytest.mark.parametrize("payback, graphed", [(4.0, True), (1e12, False)])
def test_large_sizes_are_graphed_when_their_host_time_pays_for_the_copies(monkeypatch, payback, graphed):
    """Copies and clones above cuda_graph_max_bytes (outputs known from the plan's shapes): the size
    is captured only when its normal call's host time is at least PAYBACK times the copies' device
    time (a Block's host program: tens of us against ns of copies), never above MAX_GRAPH_BYTES;
    else it runs normally and is never captured."""
    from mlir_sym.runtime import cuda_graphs

    monkeypatch.setattr(cuda_graphs, "PAYBACK", payback)
    backend.config.cuda_graphs = True
    backend.config.cuda_graph_max_bytes = 64 * 16 * 4  # [16, 64] float32 in and out fit, [17, 64] does not
    try:
        m = Block().to(DEV).eval()
        f = torch.compile(m, backend="mlir_sym", dynamic=True)
        with torch.no_grad():
            for n in (3, 17, 17, 17, 3, 3, 3, 3):
                x = torch.randn(n, 64, device=DEV)
                torch.testing.assert_close(f(x), m(x), rtol=1e-4, atol=1e-4)
        g = _graphs()
        large = [v for k, v in g.graphs.items() if 17 in k]
        assert len(large) == 1 and (large[0] is not None) == graphed
        assert g.captures == 1 + graphed and g.replays >= 2
        monkeypatch.setattr(cuda_graphs, "MAX_GRAPH_BYTES", 64 * 16 * 4 * 2)
        with torch.no_grad():
            for n in (40, 40, 40):  # host time pays, but 2 x [40, 64] float32 is above the cap
                f(torch.randn(n, 64, device=DEV))
        assert [v for k, v in g.graphs.items() if 40 in k] == [None]
    finally:
        backend.config.cuda_graph_max_bytes = 16 << 20


def test_a_capture_after_every_graph_was_dropped_takes_a_fresh_pool():
    """Dropping an artifact's only graph (a failed or discarded capture) and capturing another size:
    PyTorch's allocator asserted (`use_count > 0`) when that capture joined the dead graphs' pool."""
    backend.config.cuda_graphs = True
    m = Block().to(DEV).eval()
    f = torch.compile(m, backend="mlir_sym", dynamic=True)
    with torch.no_grad():
        for n in (5, 5, 5):
            f(torch.randn(n, 64, device=DEV))
        g = _graphs()
        assert g.captures == 1
        (key,) = [k for k, v in g.graphs.items() if v is not None]
        g._discard(key)
        assert g.pool is None
        for n in (9, 9, 9):
            x = torch.randn(n, 64, device=DEV)
            torch.testing.assert_close(f(x), m(x), rtol=1e-4, atol=1e-4)
    assert g.captures == 2 and g.replays >= 1


class Scaled(Block):
    """A float attribute in tensor arithmetic: Dynamo passes it as a CPU scalar tensor input."""

    def __init__(self) -> None:
        super().__init__()
        self.scale = 0.5

    def forward(self, x):
        return super().forward(x) * self.scale


@pytest.mark.parametrize("graphs", [False, True])
def test_cpu_scalar_inputs_follow_their_value(graphs):
    """A CPU scalar input is on the device once per value (Runtime.device_scalar) and, in a graph,
    copied in only when it changed: a new value is still seen at every call."""
    backend.config.cuda_graphs = graphs
    m = Scaled().to(DEV).eval()
    f = torch.compile(m, backend="mlir_sym", dynamic=True)
    x = torch.randn(6, 64, device=DEV)
    with torch.no_grad():
        f(torch.randn(3, 64, device=DEV))
        for scale in (0.5, 0.5, 0.5, 2.0, 2.0, -0.0, 0.5):
            m.scale = scale
            torch.testing.assert_close(f(x), m(x), rtol=1e-4, atol=1e-4)
    assert backend.stats.compiles == 1
    if graphs:
        assert _graphs().replays >= 3


def test_data_dependent_fill_is_graphed_and_follows_the_mask():
    """A data-dependent graph's fill artifact (and count phases of enough launches) get CUDA graphs
    per size; the counts are read between them, so a new mask of the same input size gives a new
    output size and the right values."""
    backend.config.cuda_graphs = True

    def f(x):
        return x[x > 0.5] * 2 + 1

    with torch._dynamo.config.patch(capture_dynamic_output_shape_ops=True):
        g = torch.compile(f, backend="mlir_sym", dynamic=True)
        x = torch.randn(300, device=DEV)
        for _ in range(4):
            torch.testing.assert_close(g(x), f(x))
        y = torch.randn(300, device=DEV)  # same size, another mask and count
        torch.testing.assert_close(g(y), f(y))
        x.neg_()  # in place: copied in again at the next replay
        torch.testing.assert_close(g(x), f(x))
    (art,) = backend._CACHE.values()
    assert art.fill.graphs is not None and art.fill.graphs.replays >= 2


def test_a_training_forward_that_returns_its_inputs_is_graphed():
    """A training forward returns the inputs it saves for the backward (outputs that alias inputs):
    it is graphed all the same, those outputs made from the caller's tensors at each call, not
    from the graph's copies (it was never graphed: its host program of launches ran at every step)."""
    torch.manual_seed(0)
    m = Block().to(DEV)
    ref = Block().to(DEV)
    ref.load_state_dict(m.state_dict())
    step = torch.compile(m, backend="mlir_sym", dynamic=True)
    for n in (8, 8, 8, 8, 24, 24, 24):
        x = torch.randn(n, 64, device=DEV, requires_grad=True)
        x2 = x.detach().clone().requires_grad_(True)
        step(x).square().sum().backward()
        ref(x2).square().sum().backward()
        torch.testing.assert_close(x.grad, x2.grad, atol=1e-4, rtol=1e-4)
        for p, q in zip(m.parameters(), ref.parameters()):
            torch.testing.assert_close(p.grad, q.grad, atol=1e-4, rtol=1e-4)
            p.grad = q.grad = None
    forward = [a for a in backend._CACHE.values() if any(o.kind == "alias" for o in a.outputs)]
    assert forward and all(a.graphs is not None and a.graphs.replays >= 3 for a in forward)


def test_a_training_backward_reads_its_saved_weight_transposes_in_place():
    """A linear layer's backward takes the saved `weight.t()` (a permuted view of the parameter,
    `Artifact.input_perms`): its graphs read the parameter where it is, with no copy at each replay
    (they copied every layer's weight at every step), and see the optimizer's updates."""
    torch.manual_seed(0)
    m = Block().to(DEV)
    ref = Block().to(DEV)
    ref.load_state_dict(m.state_dict())
    step = torch.compile(m, backend="mlir_sym", dynamic=True)
    for n in (8, 8, 8, 8, 8):
        x = torch.randn(n, 64, device=DEV)
        step(x).square().mean().backward()
        ref(x).square().mean().backward()
        for p, q in zip(m.parameters(), ref.parameters()):
            torch.testing.assert_close(p.grad, q.grad, atol=1e-5, rtol=1e-3)
            with torch.no_grad():  # an optimizer step: in place, seen by the next replay
                p.sub_(0.5 * p.grad)
                q.sub_(0.5 * q.grad)
            p.grad = q.grad = None
    (bwd,) = [a for a in backend._CACHE.values() if a.input_perms]
    assert bwd.graphs is not None and bwd.graphs.replays >= 2
    (g,) = bwd.graphs.graphs.values()
    weights = {m.up.weight.data_ptr(), m.down.weight.data_ptr()}
    assert weights <= {p for p in g.in_place if p is not None}


def test_attention_outputs_of_one_size_survive_another_sizes_replay():
    """A training forward's attention out and log-sum-exp are outputs on the kernel's own memory
    (Runtime.adopt): that artifact captures each graph into a pool of its own. Two lengths' forwards
    replayed in either order before one backward of both give eager's gradients; with one pool
    shared, a graph captured later could hold its outputs on blocks the other graph's replay writes
    as temporaries."""
    from training import TinyLM, twins  # test/python (conftest.py puts it on the path)

    backend.config.cuda_graphs = True
    ref, m = twins(lambda: TinyLM(vocab=64, d=64, heads=4, layers=1).to(DEV))
    step = torch.compile(m, backend="mlir_sym", dynamic=True)
    g = torch.Generator().manual_seed(1)
    data = {t: (torch.randint(0, 64, (2, t), generator=g).to(DEV), torch.randint(0, 64, (2, t), generator=g).to(DEV))
            for t in (16, 40)}

    def both(run, model, order):
        sum(run(*data[t]) for t in order).backward()
        grads = [p.grad.clone() for p in model.parameters()]
        model.zero_grad(set_to_none=True)
        return grads

    for order in ((16, 40), (16, 40), (16, 40), (40, 16), (40, 16), (16, 40)):
        for a, b in zip(both(step, m, order), both(ref, ref, order)):
            torch.testing.assert_close(a, b, atol=2e-4, rtol=2e-3)
    from mlir_sym.runtime.cuda_graphs import _host_source

    info = [(a.name, a.graphs is not None and a.graphs.own_pools, [("rt.adopt(" in _host_source(v),
             "library_sdpa" in _host_source(v)) for v in a.variants]) for a in backend._CACHE.values()]
    fwd = [a for a in backend._CACHE.values() if any("rt.adopt(" in _host_source(v) for v in a.variants)]
    assert len(fwd) == 1, info
    (fwd,) = fwd
    assert fwd.graphs is not None and fwd.graphs.own_pools, info
    graphs = [v for v in fwd.graphs.graphs.values() if v is not None]
    assert len(graphs) == 2 and graphs[0].pool != graphs[1].pool and fwd.graphs.replays >= 4
