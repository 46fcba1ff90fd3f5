"""On the GPU: input mutations written by the compiled code (mutations.py; test/python/test_mutations.py
runs the same functions on the CPU and the emulated mapping): a cache written at positions in place,
with CUDA graphs that write the caller's cache (read in place) or their own copy of it (copied back
after each replay), an elementwise update copied in; against eager at every call.

Skips (cleanly) without a CUDA device:  pytest -q test/gpu/test_gpu_mutations.py
"""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device", allow_module_level=True)

from mlir_sym import backend  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))
from test_mutations import cache_args, cache_update, counter_update, index_put_update  # noqa: E402

DEV = "cuda"


def _on(args):
    return [a.to(DEV) for a in args]


@pytest.mark.parametrize("graphs", [False, True], ids=["no-graphs", "graphs"])
@pytest.mark.parametrize("fn", [cache_update, index_put_update])
def test_a_cache_is_written_in_place(fn, graphs, monkeypatch):
    """Calls at sizes 5, 9, 5, 5, 5 on one cache per size (a static cache: the same tensor each call,
    read in place by the size's graph, which writes it)."""
    monkeypatch.setattr(backend.config, "cuda_graphs", graphs)
    monkeypatch.setattr(backend.config, "cuda_graph_min_launches", 1)
    nargs = 4 if fn is cache_update else 3
    compiled = torch.compile(fn, backend="mlir_sym", dynamic=True)
    caches = {}
    for step, n in enumerate([5, 9, 5, 5, 5, 9, 9]):
        args = _on(cache_args(n, seed=n + 100 * step)[:nargs])
        args[0] = caches.setdefault(n, (args[0], args[0].clone()))  # (eager's, ours)
        want_cache, mine_cache = args[0]
        want = fn(want_cache, *args[1:])
        with torch.no_grad():
            got = compiled(mine_cache, *args[1:])
        torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-4)
        torch.testing.assert_close(mine_cache, want_cache)
    assert backend.stats.compiles == 1 and backend.stats.fallbacks == 0
    assert backend.stats.mutations_in_place == 7 and backend.stats.mutations_copied == 0
    if graphs:
        (art,) = [a for a in backend._CACHE.values() if getattr(a, "graphs", None) is not None]
        assert art.graphs.replays >= 3


def test_a_graph_writes_its_copy_of_a_new_cache_and_it_is_copied_back(monkeypatch):
    """A new cache tensor at every call (not read in place): the graph writes its own copy, which is
    copied into the caller's cache after the replay."""
    monkeypatch.setattr(backend.config, "cuda_graphs", True)
    monkeypatch.setattr(backend.config, "cuda_graph_min_launches", 1)
    compiled = torch.compile(cache_update, backend="mlir_sym", dynamic=True)
    for step in range(5):
        args = _on(cache_args(7))
        args[2] = args[2] + step
        mine = [a.clone() for a in args]
        want = cache_update(*args)
        with torch.no_grad():
            got = compiled(*mine)
        torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-4)
        torch.testing.assert_close(mine[0], args[0])
    (art,) = [a for a in backend._CACHE.values() if getattr(a, "graphs", None) is not None]
    assert art.graphs.replays >= 2
    assert backend.stats.mutations_copied >= 2  # the replays' (their own copy, then the caller's)


def test_an_elementwise_update_is_copied_in():
    compiled = torch.compile(counter_update, backend="mlir_sym", dynamic=True)
    for n in (3, 6):
        count, x = torch.tensor([1.5], device=DEV), torch.randn(n, device=DEV)
        mine = count.clone()
        want = counter_update(count, x)
        with torch.no_grad():
            torch.testing.assert_close(compiled(mine, x), want)
        torch.testing.assert_close(mine, count)
    assert backend.stats.mutations_copied == 2


@pytest.mark.parametrize("pattern", ["generates", "moving-every-2", "alternating"])
def test_a_new_cache_each_generate_gets_its_graph_captured_again(monkeypatch, pattern):
    """HF's `generate` makes a new static cache each time: the size's graph, which read the first
    cache in place, is captured again for the new one (at the second call in a row that brings it),
    and replays write it. Before, every later call ran normally. A cache that moves every two calls
    (a graph that never paid) drops the size's graph instead, and two caches used in turns run
    normally (no recapture every third call): the calls run normally, with eager's results."""
    monkeypatch.setattr(backend.config, "cuda_graphs", True)
    monkeypatch.setattr(backend.config, "cuda_graph_min_launches", 1)
    compiled = torch.compile(cache_update, backend="mlir_sym", dynamic=True)
    n = 11
    caches = []
    for gen in range(4):
        want_cache = _on(cache_args(n, seed=gen))[0]
        caches.append((want_cache, want_cache.clone()))
    # the first cache: captured and replayed; then per pattern
    order = [0] * 6 + {"generates": [1] * 6 + [2] * 6 + [3] * 6, "moving-every-2": [1, 1, 2, 2, 3, 3],
                       "alternating": [1, 0, 1, 0, 1, 0, 1, 0]}[pattern]
    for step, c in enumerate(order):
        want_cache, mine_cache = caches[c]
        _, pos, k, q = _on(cache_args(n, seed=1000 + step))
        want = cache_update(want_cache, pos, k, q)
        with torch.no_grad():
            got = compiled(mine_cache, pos, k, q)
        torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-4)
        torch.testing.assert_close(mine_cache, want_cache)
    (art,) = [a for a in backend._CACHE.values() if getattr(a, "graphs", None) is not None]
    g = art.graphs
    if pattern == "generates":
        # each later cache: its first call runs normally, its second captures, then 4 replays
        assert g.recaptures == 3 and g.replays >= 4 + 3 * 5
    elif pattern == "moving-every-2":
        # the second cache: captured at its second call (the first graph had replayed), replayed
        # once; the third cache finds a graph that replayed once: dropped, nothing captured after
        assert g.recaptures == 1 and all(v is None for v in g.graphs.values())
    else:  # cache 1 is never seen twice in a row: cache 0's graph replays between
        assert g.recaptures == 0 and g.replays >= 4 + 4
