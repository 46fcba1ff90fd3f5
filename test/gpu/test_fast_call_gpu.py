"""The generated call (runtime/fast_call.py) of CUDA artifacts: a graph of few launches (no CUDA
graphs) is called through it, with results as eager's and CPU scalar inputs beside CUDA tensors; an
artifact with CUDA graphs keeps the general path. (A failed index check is a device-side assert on
the GPU, as in eager, which ends the CUDA context: the CPU tests check the generated call's errors.)

Skips (cleanly) without a CUDA device:  pytest -q test/gpu/test_fast_call_gpu.py
"""
from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device", allow_module_level=True)

import torch._dynamo  # noqa: E402

from direct_call_spy import count_general, spy_on_direct  # noqa: E402
from mlir_sym import backend  # noqa: E402

DEV = "cuda"


@pytest.fixture(autouse=True)
def fresh(monkeypatch):
    torch._dynamo.reset()
    backend.stats.reset()
    for name, value in (("direct_calls", True), ("fast_calls", True), ("cuda_graphs", True),
                        ("cuda_graph_min_launches", 4)):  # whatever the environment says
        monkeypatch.setattr(backend.config, name, value)
    yield
    torch._dynamo.reset()


@pytest.fixture
def returned(monkeypatch):
    """The callables the backend returns to Dynamo."""
    return spy_on_direct(monkeypatch)


def test_a_cuda_graph_of_one_launch_takes_the_generated_call(returned):
    def f(x, s):
        return (x * s + 1).relu(), x.sum(-1)

    cf = torch.compile(f, backend="mlir_sym", dynamic=True)
    s = torch.tensor(1.5)  # a CPU scalar beside CUDA tensors, as eager allows
    cf(torch.randn(4, 8, device=DEV), s)
    (fn,) = returned
    assert hasattr(fn, "source") and fn.artifact.graphs is None
    general = count_general(fn)
    for n in (4, 4, 33, 33, 4):
        x = torch.randn(n, 8, device=DEV)
        got, want = cf(x, s), f(x, s.to(DEV))
        torch.testing.assert_close(got, want)
        assert got[0].device.type == "cuda"
    assert len(general) == 1  # size 33's first call only
    assert backend.stats.compiles == 1


def test_cuda_graphs_keep_the_general_path(returned):
    """An artifact of many launches gets CUDA graphs (their own per-size logic): no generated call."""
    F = torch.nn.functional

    def f(x, w1, w2):
        h = F.layer_norm(x, (16,))
        return x + (F.gelu(h @ w1) @ w2).softmax(-1) * 0.5

    cf = torch.compile(f, backend="mlir_sym", dynamic=True)
    w1, w2 = torch.randn(16, 64, device=DEV), torch.randn(64, 16, device=DEV)
    for n in (3, 3, 3, 7):
        x = torch.randn(n, 16, device=DEV)
        torch.testing.assert_close(cf(x, w1, w2), f(x, w1, w2), rtol=1e-4, atol=1e-4)
    assert returned and all(c.artifact.graphs is not None and not hasattr(c, "source") for c in returned)
