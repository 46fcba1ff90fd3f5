"""Which sizes runtime/cuda_graphs.py graphs, decided without a GPU (the captures themselves run in
test/gpu/test_cuda_graphs.py): a size above max_bytes waits for two normal calls' host times (the
first pays one-time costs), then is graphed only when the least of them pays for its copies, and
never above MAX_GRAPH_BYTES a size nor MAX_TOTAL_BYTES for all the sizes' graphs."""
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


def test_the_graphs_of_an_artifact_share_a_byte_budget(monkeypatch):
    """Graphs keep their input copies and output buffers between calls: a size is graphed only while
    all the artifact's graphs keep at most MAX_TOTAL_BYTES; a dropped graph gives its bytes back."""
    monkeypatch.setattr(cuda_graphs, "MAX_TOTAL_BYTES", 10 << 10)
    g = CudaGraphs(_Artifact(), max_bytes=1024)
    g.host_s[(32,)] = (1.0, 2)
    assert g._why_not_graphed((32,), 8 << 10, 0) is None
    g.kept[(16,)] = 4 << 10
    assert "keep" in g._why_not_graphed((32,), 8 << 10, 0)
    g._discard((16,))
    assert g._why_not_graphed((32,), 8 << 10, 0) is None


def test_handed_out_outputs_are_not_copies(monkeypatch):
    """Outputs handed out (not cloned) cost no copies at replay: a size whose host time would not pay
    for cloning its outputs is graphed."""
    monkeypatch.setattr(cuda_graphs, "PAYBACK", 4.0)
    g = CudaGraphs(_Artifact(), max_bytes=1024)
    assert g.hand_out  # torch has the storage use counts it needs
    g.host_s[(64,)] = (1e-7, 2)  # 0.1 us of host time: 4 times it pays for 16 bytes, not for 64 KiB
    assert g._why_not_graphed((64,), 16 + (64 << 10), 16) is None
    assert "host time" in g._why_not_graphed((64,), 16 + (64 << 10), 16 + (64 << 10))


class _FakeGraph:
    """A CUDA graph stand-in: capture records the kernels (closures over the buffers they were given),
    replay runs them, as a real graph replays with the addresses it captured."""

    capturing = None

    def __init__(self) -> None:
        self.kernels = []

    def replay(self) -> None:
        for k in self.kernels:
            k()


class _AddArtifact:
    """out = x * 2 + w, with `w` a parameter read in place."""

    name = "fake"
    device = "cpu"
    outputs = [_Out()]

    def _run(self, plan, args, out_buffers=None):
        x, w = args
        out = out_buffers[0] if out_buffers is not None else torch.empty(plan[2][0])

        def kernel():
            out.copy_(x * 2 + w)
        if _FakeGraph.capturing is not None:
            _FakeGraph.capturing.kernels.append(kernel)
        else:
            kernel()
        return [out]


def _fake_cuda_graphs(monkeypatch) -> None:
    import contextlib

    @contextlib.contextmanager
    def graph(g, pool=None):
        _FakeGraph.capturing = g
        try:
            yield
        finally:
            _FakeGraph.capturing = None

    monkeypatch.setattr(torch.cuda, "CUDAGraph", _FakeGraph)
    monkeypatch.setattr(torch.cuda, "graph", graph)
    monkeypatch.setattr(torch.cuda, "graph_pool_handle", lambda: object())


def test_a_spare_graph_reads_the_parameters_of_the_first(monkeypatch):
    """The size's second graph (captured while the first one's outputs are held) reads the same
    parameters in place as the first: a call with another tensor in a parameter's place runs normally
    and captures nothing (the spare once baked that tensor's address in, and a later call with the
    parameter replayed it: another call's results)."""
    _fake_cuda_graphs(monkeypatch)
    art = _AddArtifact()
    g = CudaGraphs(art, max_bytes=1 << 20)
    plan, key = (None, [], [(4,)]), (4,)

    def call(*args):
        r = g.call(key, plan, list(args))
        return r[0] if r is not None else art._run(plan, list(args))[0]

    w, other, x = torch.ones(4), torch.full((4,), 100.0), torch.zeros(4)
    call(x, w)
    held = call(x, w)  # captured (w in place), replayed, held
    torch.testing.assert_close(held, torch.ones(4))
    torch.testing.assert_close(call(x, other), torch.full((4,), 100.0))  # runs normally
    again = call(x, w)  # the first graph's outputs are held: the spare, reading w
    torch.testing.assert_close(again, torch.ones(4))
    torch.testing.assert_close(held, torch.ones(4))
    assert g.captures == 2 and not held._is_view()


def test_a_resized_output_drops_its_graph(monkeypatch):
    """A caller that resizes an output's storage (`resize_`) frees the buffer the graph writes: the
    size's graph is dropped and the call runs normally."""
    _fake_cuda_graphs(monkeypatch)
    art = _AddArtifact()
    g = CudaGraphs(art, max_bytes=1 << 20)
    plan, key = (None, [], [(4,)]), (4,)
    w, x = torch.ones(4), torch.zeros(4)
    g.call(key, plan, [x, w])
    out = g.call(key, plan, [x, w])[0]
    out.resize_(1 << 16)  # a new, larger storage for the graph's buffer
    del out
    assert g.call(key, plan, [x, w]) is None and g.graphs[key] is None


def test_a_convolution_makes_an_artifact_worth_a_graph():
    """A host program of one kernel and two library calls is below min_launches, unless a call is a
    convolution (PyTorch's cuDNN path costs the host 50-100 us, more than min_launches launches)."""
    from types import SimpleNamespace

    def artifact(source: str) -> SimpleNamespace:
        gpu = {"host_source": source, "launch_sites": 1, "library_calls": 2}
        variant = SimpleNamespace(compute=SimpleNamespace(runtime=SimpleNamespace(sync=False)), keepalive={"gpu": gpu})
        return SimpleNamespace(device="cuda", outputs=[_Out()], variants=[variant])

    matmuls = "rt.library_einsum(...)\nrt.launch(...)\nrt.library_einsum(...)\n"
    assert "fewer than 4" in CudaGraphs.eligible(artifact(matmuls), 4)
    convs = "rt.library_conv(...)\nrt.launch(...)\n_t = rt.library_conv(...)\n"
    assert CudaGraphs.eligible(artifact(convs), 4) is None


class _AddressArtifact(_AddArtifact):
    """out = x * 2 + w, its captured kernel reading x by address as a CUDA graph does (no reference
    to x's storage kept: a reference would make the producer's output look held)."""

    def _run(self, plan, args, out_buffers=None):
        import ctypes

        x, w = args
        out = out_buffers[0] if out_buffers is not None else torch.empty(plan[2][0])
        at, n = x.data_ptr(), x.numel()

        def kernel():
            xs = torch.frombuffer((ctypes.c_float * n).from_address(at), dtype=torch.float32)
            out.copy_(xs * 2 + w)
        del x
        if _FakeGraph.capturing is not None:
            _FakeGraph.capturing.kernels.append(kernel)
        else:
            kernel()
        return [out]


def test_graph_outputs_of_another_artifact_are_read_in_place(monkeypatch):
    """A training backward's saved activations are the forward graph's outputs: the backward's graph
    reads them where they are (no copy: 361 MB a step at length 256), follows the forward to its
    spare's buffers with a graph of their own (the forward replays its spare while the previous
    step's loss is held), and copies what is not another graph's output (its own output fed back;
    a view of the buffer with other strides runs normally)."""
    _fake_cuda_graphs(monkeypatch)
    fwd, bwd = _AddressArtifact(), _AddressArtifact()
    gf, gb = CudaGraphs(fwd, max_bytes=1 << 20), CudaGraphs(bwd, max_bytes=1 << 20)
    plan, key = (None, [], [(4,)]), (4,)

    def call(graphs, art, *args):
        r = graphs.call(key, plan, list(args))
        return r[0] if r is not None else art._run(plan, list(args))[0]

    w, x = torch.ones(4), torch.arange(4.0)
    for _ in range(2):  # steps 1 and 2: the forward's second call captures its graph (saved: its
        saved = call(gf, fwd, x, w)  # buffer), the backward's second call its own, reading it in place
        call(gb, bwd, saved, w)
    assert gf.captures == 1 and gb.captures == 1
    graph = gb.graphs[key]
    assert graph.static[0] is None and graph.follow == {0: (1,)}  # read in place, no reference kept
    for step in range(3):
        x.fill_(step)
        saved = None  # the backward freed what it saved
        saved = call(gf, fwd, x, w)  # a replay: a new tensor on the same buffer
        torch.testing.assert_close(call(gb, bwd, saved, w), (x * 2 + 1) * 2 + 1)
    assert gb.captures == 1 and gb.replays == 4  # the capturing call replays too
    held, first = saved, x.clone()
    x.fill_(7)
    saved = call(gf, fwd, x, w)  # `held` keeps the first buffer: the forward's spare
    assert saved.data_ptr() != held.data_ptr() and gf.captures == 2
    torch.testing.assert_close(call(gb, bwd, saved, w), (x * 2 + 1) * 2 + 1)
    assert gb.captures == 2 and len(graph.variants) == 1  # a graph for the spare's buffer
    torch.testing.assert_close(call(gb, bwd, held, w), (first * 2 + 1) * 2 + 1)  # the first graph again
    assert gb.captures == 2
    other = torch.full((4,), 100.0)  # a parameter moved as well: runs normally, and no graph is kept
    assert gb.call(key, plan, [saved.clone(), other]) is None and gb.captures == 2
    own = call(gb, bwd, saved, w)  # its own output fed back is not read in place: a graph copying it
    assert cuda_graphs._GRAPH_OUTPUTS[own.data_ptr()][1] == id(gb)
    torch.testing.assert_close(call(gb, bwd, own, w), own * 2 + 1)
    assert gb.captures == 3 and None in graph.variants and graph.variants[None].static[0] is not None
    for moved in (held.as_strided((4,), (0,)), held.clone()):  # the buffer with other strides; not a
        torch.testing.assert_close(call(gb, bwd, moved, w), moved * 2 + 1)  # graph output: copied
    assert gb.captures == 3 and len(graph.variants) == 2
    kept = call(gb, bwd, held, w)  # the first graph's outputs held: its spare, reading `held` in place
    torch.testing.assert_close(call(gb, bwd, held, w), (first * 2 + 1) * 2 + 1)
    assert graph.spare.static[0] is None and graph.spare.follow == {0: (1,)}
    del kept


def test_a_permuted_view_of_a_parameter_is_read_in_place(monkeypatch):
    """An artifact's view of a permuted input (Artifact.input_perms: a saved `weight.t()` taken as the
    weight) is a new tensor object at every call, over the same memory: the graph reads it in place,
    as it reads the parameter, instead of copying it at every replay."""
    _fake_cuda_graphs(monkeypatch)
    art = _AddArtifact()
    g = CudaGraphs(art, max_bytes=1 << 20)
    plan, key = (None, [], [(3, 4)]), (3, 4)
    weight = torch.arange(12.0).reshape(3, 4)  # the parameter; the call gets weight.t() permuted back

    def call(x):
        args = [x, weight.t().permute(1, 0)]  # contiguous, a new view each call
        r = g.call(key, plan, args)
        return r[0] if r is not None else art._run(plan, args)[0]

    x = torch.zeros(3, 4)
    call(x)
    torch.testing.assert_close(call(x), weight)  # captured and replayed
    assert g.graphs[key].in_place[1] == weight.data_ptr()  # the view read in place
    weight.add_(1)  # read where it is: the replay sees the parameter's new values
    torch.testing.assert_close(call(x), weight)
    # a view that is not contiguous: read in place when it is the very object of the first call (a
    # registered buffer's view), copied when it is another view of that memory
    buffer = torch.arange(24.0).reshape(3, 8).clone()
    strided = buffer[:, ::2]
    first = cuda_graphs._first(strided)
    assert cuda_graphs._same_tensor(strided, first)
    assert not cuda_graphs._same_tensor(buffer[:, ::2], first)
    # how a backward gets a saved `weight.t()`: a new tensor object at every step, no view of the
    # parameter (`_base` None), over its storage: read in place (it was copied at every replay)
    first = cuda_graphs._first(weight.detach().t().permute(1, 0))
    again = torch.empty(0).set_(weight.untyped_storage(), 0, (4, 3), (1, 4)).permute(1, 0)
    assert again._base is None or again._base is not weight
    assert cuda_graphs._same_tensor(again, first)
    # another storage at the same address (memory freed and reused by a new activation) is another
    # tensor: copied (two storages over one buffer stand for it)
    memory = bytearray(48)
    scratch = torch.frombuffer(memory, dtype=torch.float32)
    reused = torch.frombuffer(memory, dtype=torch.float32)
    assert reused.data_ptr() == scratch.data_ptr()
    assert cuda_graphs._same_tensor(scratch.view(3, 4), cuda_graphs._first(scratch))
    assert not cuda_graphs._same_tensor(reused, cuda_graphs._first(scratch))


def test_a_view_into_another_graphs_output_is_copied(monkeypatch):
    """A contiguous view into a graph's output buffer, not at its start (`saved[4:]`; views at the
    start are followed where they are), is copied: read in place by storage, the consumer's graph kept
    it, the producer's graph saw its buffer held ever after and wrote its outputs elsewhere, and the
    consumer stopped replaying after its first replay (a review found it)."""
    _fake_cuda_graphs(monkeypatch)
    fwd, bwd = _AddressArtifact(), _AddressArtifact()
    gf, gb = CudaGraphs(fwd, max_bytes=1 << 20), CudaGraphs(bwd, max_bytes=1 << 20)
    pf, kf = (None, [], [(8,)]), (8,)
    pb, kb = (None, [], [(4,)]), (4,)

    def call(graphs, art, plan, key, *args):
        r = graphs.call(key, plan, list(args))
        return r[0] if r is not None else art._run(plan, list(args))[0]

    w8, w4, x = torch.ones(8), torch.ones(4), torch.arange(8.0)
    for _ in range(3):  # the producer's size graphed before the consumer's first call
        call(gf, fwd, pf, kf, x, w8)
    for step in range(8):
        x.fill_(step)
        saved = call(gf, fwd, pf, kf, x, w8)
        got = call(gb, bwd, pb, kb, saved[4:], w4)
        torch.testing.assert_close(got, (x[4:] * 2 + 1) * 2 + 1)
        del saved, got
    assert gf.captures == 1 and gb.captures == 1
    assert gb.replays >= 6, gb.replays
    assert gb.graphs[kb].in_place[0] is None  # the view copied, the weight read in place



def test_an_artifact_whose_outputs_are_library_results_takes_a_pool_a_graph():
    """A host program that makes outputs of library results (`rt.adopt`, training attention's out
    and log-sum-exp) leaves them in the capture's pool: its graphs take a pool each, not the
    artifact's shared one (test/gpu/test_cuda_graphs.py runs such graphs); others share one. An
    artifact without GPU variants (or a stand-in without any) shares."""
    from types import SimpleNamespace

    def artifact(source: str) -> SimpleNamespace:
        gpu = {"host_source": source, "launch_sites": 4, "library_calls": 1}
        variant = SimpleNamespace(compute=None, keepalive={"gpu": gpu})
        return SimpleNamespace(name="fake", device="cuda", outputs=[_Out()], variants=[variant])

    assert CudaGraphs(artifact("v1, v2 = rt.library_sdpa(...)\nrt.adopt(v0, v1)\n")).own_pools
    assert not CudaGraphs(artifact("v1, v2 = rt.library_sdpa(...)\nv0.copy_(v1)\n")).own_pools
    assert not CudaGraphs(_Artifact()).own_pools


def test_sizes_past_the_first_eight_share_a_smaller_byte_budget(monkeypatch):
    """Small sizes (within max_bytes) are graphed freely up to FREE_SIZES; past them (decode steps:
    a size a step) while the artifact's graphs keep at most MAX_SMALL_TOTAL_BYTES, and never where
    each graph keeps a memory pool of its own (uncounted temporaries), up to max_graphs."""
    monkeypatch.setattr(cuda_graphs, "MAX_SMALL_TOTAL_BYTES", 10 << 10)
    g = CudaGraphs(_Artifact(), max_bytes=4096)
    for n in range(cuda_graphs.FREE_SIZES):
        g.graphs[(n,)] = object()  # graphed sizes
        g.kept[(n,)] = 1 << 10
    assert g._why_not_graphed((100,), 2048, 2048) is None  # 8 KiB kept + 2 KiB
    assert "keep" in g._why_not_graphed((100,), 4096, 4096)  # 8 + 4 KiB: over the budget
    g.graphs.pop((0,))
    g.kept.pop((0,))
    assert g._why_not_graphed((100,), 4096, 4096) is None  # 7 sizes: free again
    g.graphs[(0,)] = object()
    g.own_pools = True
    assert "pool" in g._why_not_graphed((100,), 16, 16)


def test_past_eight_sizes_spares_need_room_and_own_pools_stop_at_eight(monkeypatch):
    """A spare or variant graph of a size keeps about as many bytes as the size's first graph: past
    FREE_SIZES graphed sizes it is captured only within the byte budget. An artifact whose graphs
    each have a memory pool of their own graphs at most FREE_SIZES sizes, large ones included."""
    monkeypatch.setattr(cuda_graphs, "MAX_SMALL_TOTAL_BYTES", 10 << 10)
    g = CudaGraphs(_Artifact(), max_bytes=4096)
    for n in range(cuda_graphs.FREE_SIZES):
        g.graphs[(n,)] = object()
        g.kept[(n,)] = 1 << 10
    assert g._room_for_another((0,))  # 8 sizes: as before, always
    g.graphs[(8,)] = object()
    g.kept[(8,)] = 1 << 10
    assert g._room_for_another((8,))  # 9 + 1 KiB <= 10 KiB
    g.kept[(8,)] = 2 << 10
    assert not g._room_for_another((8,))  # 10 + 2 KiB > 10 KiB
    # own pools: the ninth size is refused at its second call, whatever its bytes
    g2 = CudaGraphs(_Artifact(), max_bytes=4096)
    g2.own_pools = True
    for n in range(cuda_graphs.FREE_SIZES):
        g2.graphs[(n,)] = object()
    plan = (None, [], [(64, 64), 7])  # 16 KiB out: above max_bytes
    _calls(g2, (99,), plan, [torch.zeros(4)], [1.0, 1.0, 1.0])
    assert g2.graphs[(99,)] is None and g2.captures == 0


def test_refused_sizes_are_forgotten_past_4096():
    g = CudaGraphs(_Artifact(), max_bytes=1 << 20)
    g.own_pools = True
    for n in range(cuda_graphs.FREE_SIZES):
        g.graphs[(n,)] = object()
    plan = (None, [], [(4,), 7])
    for n in range(100, 5000):
        _calls(g, (n,), plan, [torch.zeros(4)], [1.0, 1.0])
    assert len(g.graphs) <= 4096 + 1
    assert sum(v is not None for v in g.graphs.values()) == cuda_graphs.FREE_SIZES
