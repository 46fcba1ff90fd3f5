"""Which sizes runtime/cuda_graphs.py graphs, decided without a GPU (the captures themselves run in
test/gpu/test_cuda_graphs.py): a size above max_bytes waits for two normal calls' host times (the
first pays one-time costs), then is graphed only when the least of them pays for its copies, and
never above MAX_GRAPH_BYTES."""
from __future__ import annotations

from dataclasses import dataclass

import pytest
import torch

from mlir_sym.runtime import cuda_graphs
from mlir_sym.runtime.cuda_graphs import CudaGraphs


@dataclass
class _Out:
    kind: str = "tensor"
    dtype: torch.dtype = torch.float32


class _Artifact:
    name = "fake"
    device = "cpu"
    outputs = [_Out(), _Out("sym")]


def _calls(graphs: CudaGraphs, key: tuple, plan: tuple, args: list, host_s: list[float]) -> None:
    """Calls of one size as artifact.py makes them: ask for a graph, else run (timed) normally."""
    for t in host_s:
        assert graphs.call(key, plan, args) is None
        if key not in graphs.graphs:
            graphs.ran(key, t)


@pytest.mark.parametrize("payback, host_s, expect", [
    (1e12, [1.0, 1.0, 1.0], "no graph"),      # the host time never pays
    (4.0, [1e-9, 1e-9, 1e-9], "no graph"),     # 1 ns of host time against microseconds of copies
])
def test_large_sizes_wait_for_two_host_times(monkeypatch, payback, host_s, expect):
    monkeypatch.setattr(cuda_graphs, "PAYBACK", payback)
    g = CudaGraphs(_Artifact(), max_bytes=1024, hand_out=False)  # outputs cloned: their bytes are copies
    plan = (None, [], [(64, 64), 7])  # a 16 KiB float32 output: above max_bytes
    key = (64,)
    _calls(g, key, plan, [torch.zeros(4)], host_s[:2])
    assert key not in g.graphs and g.host_s[key][1] == 2  # the second call waited: still undecided
    _calls(g, key, plan, [torch.zeros(4)], host_s[2:])
    assert g.graphs[key] is None and g.captures == 0


def test_the_cap_and_the_output_bytes(monkeypatch):
    monkeypatch.setattr(cuda_graphs, "MAX_GRAPH_BYTES", 8 << 10)
    g = CudaGraphs(_Artifact(), max_bytes=1024)
    plan = (None, [], [(64, 64), 7])
    assert g._output_bytes(plan) == 64 * 64 * 4  # the sym output has no bytes
    assert "above" in g._why_not_graphed((64,), g._output_bytes(plan), 0)  # memory, even when not copied
    g.host_s[(32,)] = (1.0, 1)
    assert g._why_not_graphed((32,), 4096, 4096) == cuda_graphs._PENDING
    assert g._why_not_graphed((32,), 1000, 1000) is None  # within max_bytes: graphed without host times


def test_handed_out_outputs_are_not_copies(monkeypatch):
    """Outputs handed out (not cloned) cost no copies at replay: a size whose host time would not pay
    for cloning its outputs is graphed."""
    monkeypatch.setattr(cuda_graphs, "PAYBACK", 4.0)
    g = CudaGraphs(_Artifact(), max_bytes=1024)
    assert g.hand_out  # torch has the storage use counts it needs
    g.host_s[(64,)] = (1e-7, 2)  # 0.1 us of host time: 4 times it pays for 16 bytes, not for 64 KiB
    assert g._why_not_graphed((64,), 16 + (64 << 10), 16) is None
    assert "host time" in g._why_not_graphed((64,), 16 + (64 << 10), 16 + (64 << 10))
