"""The artifact cache (artifact_cache.py): a graph compiled before, in this process or another, is
loaded from the disk with its guards, without AOTAutograd, import or lowering; the key ignores the
first call's sizes but not dtypes; guards the compile added are checked and reinstalled."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest
import sympy
import torch
import torch.nn.functional as F

from mlir_sym import artifact_cache, backend


def softmax_plus_len(x, y):
    return torch.softmax(x * 2 + y, dim=-1).sum(0) + x.shape[0]


def first_split(x):
    return torch.split(x, 3, 0)[0] + 1  # the compile adds guards on x.shape[0] (Ne(s - 6, 1), ...)


def run_fresh(f, sizes, dtype=torch.float32, cols=6):
    """Compile `f` as a new Dynamo frame would (caches reset) and check it against eager at `sizes`."""
    torch._dynamo.reset()
    backend._CACHE.clear()
    cf = torch.compile(f, backend="mlir_sym", dynamic=True)
    for n in sizes:
        args = [torch.randn(n, cols, dtype=dtype) for _ in range(f.__code__.co_argcount)]
        torch.testing.assert_close(cf(*args), f(*args))


def test_a_second_compile_loads_the_artifact_for_every_size(dynamo_graphs):
    run_fresh(softmax_plus_len, [5, 9])
    assert backend.stats.artifact_cache_stores == 1 and backend.stats.compiles == 1
    backend.stats.reset()
    run_fresh(softmax_plus_len, [17, 2, 40, 3])  # the first call's size differs from the storing one
    assert backend.stats.artifact_cache_hits == 1
    assert backend.stats.compiles == 0 and backend.stats.artifact_cache_stores == 0
    assert dynamo_graphs() == 2  # one per fresh frame: no recompile over the sizes


def test_the_dtype_is_part_of_the_key():
    run_fresh(softmax_plus_len, [5])
    backend.stats.reset()
    run_fresh(softmax_plus_len, [5], dtype=torch.float64)
    assert backend.stats.artifact_cache_hits == 0 and backend.stats.compiles == 1
    assert len(list(artifact_cache.cache_dir().glob("*.json"))) == 2


def test_the_pipelines_are_part_of_the_key(monkeypatch):
    """MLIR_SYM_GPU_MAP_OPTIONS (read at import) changes the GPU pipeline's text: an artifact compiled
    under other mapping options is not loaded (benchmarks compare settings on one disk cache)."""
    from mlir_sym import pipelines

    run_fresh(softmax_plus_len, [5])
    backend.stats.reset()
    gpu = pipelines.PIPELINES["sym-lower-to-nvvm"]
    monkeypatch.setitem(pipelines.PIPELINES, "sym-lower-to-nvvm",
                        gpu.replace(" sym-gpu-map-parallel,", " sym-gpu-map-parallel{row-registers=0},"))
    run_fresh(softmax_plus_len, [5])
    assert backend.stats.artifact_cache_hits == 0 and backend.stats.compiles == 1
    assert len(list(artifact_cache.cache_dir().glob("*.json"))) == 2


def test_the_emulated_gpu_mapping_is_part_of_the_key(monkeypatch):
    """MLIR_SYM_EMULATE_GPU=1 lowers CPU artifacts through the GPU mapping: an artifact compiled
    without it is not loaded with it (the emulated run would test the plain CPU lowering)."""
    run_fresh(softmax_plus_len, [5])
    backend.stats.reset()
    monkeypatch.setenv("MLIR_SYM_EMULATE_GPU", "1")
    run_fresh(softmax_plus_len, [5])
    assert backend.stats.artifact_cache_hits == 0 and backend.stats.compiles == 1
    assert len(list(artifact_cache.cache_dir().glob("*.json"))) == 2


def test_the_emulated_gpu_mapping_is_part_of_the_in_process_key(monkeypatch):
    """The same for the in-process cache of compiled graphs (backend.graph_key)."""
    monkeypatch.setenv("MLIR_SYM_ARTIFACT_CACHE", "0")
    x = torch.randn(4, 6)
    torch.compile(softmax_plus_len, backend="mlir_sym", dynamic=True)(x, x)
    monkeypatch.setenv("MLIR_SYM_EMULATE_GPU", "1")
    torch._dynamo.reset()
    torch.compile(softmax_plus_len, backend="mlir_sym", dynamic=True)(x, x)
    assert backend.stats.compiles == 2 and backend.stats.cache_hits == 0


def test_added_guards_are_stored_checked_and_reinstalled():
    run_fresh(first_split, [8])
    (entry,) = [json.loads(p.read_text()) for p in artifact_cache.cache_dir().glob("*.json")]
    assert entry["guards"], "split's compile adds guards on the size"
    backend.stats.reset()
    run_fresh(first_split, [9])  # the same three chunks, and the stored guards hold for 9: a hit
    assert backend.stats.artifact_cache_hits == 1 and backend.stats.compiles == 0
    backend.stats.reset()
    run_fresh(first_split, [7])  # 7 - 6 == 1 breaks a stored guard: a miss, compiled afresh
    assert backend.stats.artifact_cache_hits == 0 and backend.stats.compiles == 1


def test_a_dynamo_restart_is_replayed_without_tracing_again():
    """AOTAutograd makes Dynamo retrace a graph whose float input cannot be a tensor (clamp's bound);
    the cache remembers it, so a fresh compile restarts at once and loads the retraced graph."""

    def clamp(x, lo):
        return x.clamp(min=lo) * 2

    def run(n):
        torch._dynamo.reset()
        backend._CACHE.clear()
        cf = torch.compile(clamp, backend="mlir_sym", dynamic=True)
        x = torch.randn(n, 4)
        torch.testing.assert_close(cf(x, 0.25), clamp(x, 0.25))

    run(5)
    assert backend.stats.compiles == 1 and backend.stats.artifact_cache_stores == 1
    entries = [json.loads(p.read_text()) for p in artifact_cache.cache_dir().glob("*.json")]
    assert sorted("restart" in e for e in entries) == [False, True]
    backend.stats.reset()
    run(8)
    assert backend.stats.artifact_cache_restarts == 1 and backend.stats.artifact_cache_hits == 1
    assert backend.stats.compiles == 0


def test_install_guards_checks_each_guard_against_the_hints():
    from torch._dynamo.source import ConstantSource
    from torch.fx.experimental.symbolic_shapes import DimDynamic, ShapeEnv

    se = ShapeEnv()
    s = se.create_symbol(8, ConstantSource("n"), dynamic_dim=DimDynamic.DYNAMIC)
    before = len(se.guards)
    assert artifact_cache.install_guards([sympy.srepr(sympy.Gt(s, 3))], se)
    assert len(se.guards) == before + 1
    assert not artifact_cache.install_guards([sympy.srepr(sympy.Eq(s, 3))], se)
    assert not artifact_cache.install_guards(["NoSuchFunction(1)"], se)
    other = sympy.Symbol("zz9", integer=True, positive=True)  # not a symbol of this ShapeEnv
    assert not artifact_cache.install_guards([sympy.srepr(sympy.Gt(other, 5))], se)
    assert len(se.guards) == before + 1


def test_a_corrupt_entry_is_a_miss():
    run_fresh(softmax_plus_len, [5])
    for p in artifact_cache.cache_dir().glob("*.json"):
        p.write_text("{not json")
    backend.stats.reset()
    run_fresh(softmax_plus_len, [6])
    assert backend.stats.artifact_cache_hits == 0 and backend.stats.compiles == 1


def test_parameters_are_inputs_so_a_hit_computes_with_the_new_weights():
    def run(m, n):
        torch._dynamo.reset()
        cm = torch.compile(m, backend="mlir_sym", dynamic=True)
        x = torch.randn(n, 6)
        with torch.no_grad():
            torch.testing.assert_close(cm(x), m(x))

    run(torch.nn.Linear(6, 3), 5)  # Dynamo lifts the weights to graph inputs: the graph holds no values
    assert backend.stats.artifact_cache_stores == 1
    backend.stats.reset()
    run(torch.nn.Linear(6, 3), 7)  # other weights, same program
    assert backend.stats.artifact_cache_hits == 1 and backend.stats.compiles == 0


def test_graphs_holding_values_are_not_cacheable():
    m = torch.nn.Linear(2, 2)
    gm = torch.fx.symbolic_trace(m)
    assert "parameters" in artifact_cache.why_not_cacheable(gm, object())
    assert artifact_cache.why_not_cacheable(gm, None) == "no ShapeEnv"
    g = torch.fx.Graph()
    x = g.placeholder("x")
    g.output(g.call_function(torch.add, (x, g.get_attr("c"))))
    holder = torch.nn.Module()
    holder.register_buffer("c", torch.ones(2))
    assert "buffers" in artifact_cache.why_not_cacheable(torch.fx.GraphModule(holder, g), object())


def test_switched_off_by_environment(monkeypatch):
    monkeypatch.setenv("MLIR_SYM_ARTIFACT_CACHE", "0")
    run_fresh(softmax_plus_len, [5])
    run_fresh(softmax_plus_len, [5])
    assert backend.stats.compiles == 2 and backend.stats.artifact_cache_stores == 0
    assert not artifact_cache.cache_dir().exists()


SCRIPT = textwrap.dedent("""
    import json, sys, torch
    from mlir_sym import backend
    aot_calls = []
    real_aot = backend.aot_autograd
    backend.aot_autograd = lambda *a, **k: (aot_calls.append(1), real_aot(*a, **k))[1]
    def f(x, y):
        return torch.softmax(x * 2 + y, dim=-1).sum(0) + x.shape[0]
    cf = torch.compile(f, backend="mlir_sym", dynamic=True)
    for n in json.loads(sys.argv[1]):
        x, y = torch.randn(n, 7), torch.randn(n, 7)
        torch.testing.assert_close(cf(x, y), f(x, y))
    s = backend.stats
    print(json.dumps({"compiles": s.compiles, "hits": s.artifact_cache_hits, "stores": s.artifact_cache_stores,
                      "aot": len(aot_calls), "graphs": torch._dynamo.utils.counters["stats"]["unique_graphs"]}))
""")


def test_a_second_process_skips_aot_autograd_and_compiling(tmp_path):
    env = dict(os.environ, MLIR_SYM_CACHE_DIR=str(tmp_path))
    env.pop("MLIR_SYM_ARTIFACT_CACHE", None)

    def run(sizes):
        out = subprocess.run([sys.executable, "-c", SCRIPT, json.dumps(sizes)], env=env, capture_output=True,
                             text=True, timeout=600)
        assert out.returncode == 0, out.stderr[-3000:]
        return json.loads(out.stdout.strip().splitlines()[-1])

    assert run([5, 9, 17]) == {"compiles": 1, "hits": 0, "stores": 1, "aot": 1, "graphs": 1}
    assert run([33, 4, 12, 2]) == {"compiles": 0, "hits": 1, "stores": 0, "aot": 0, "graphs": 1}


def _select_here(x, i):
    return x.index_select(0, i) * 2


def _select_there(x, i):
    return x.index_select(0, i) * 2


def test_the_source_lines_are_part_of_the_key():
    """The same graph at other lines of the user's code is another entry: its compiled checks name
    the lines (a hit named the lines of the process that stored it)."""
    x = torch.randn(5, 4)
    ok, bad = torch.tensor([0, 4]), torch.tensor([0, 9])
    for f in (_select_here, _select_there):
        torch._dynamo.reset()
        backend._CACHE.clear()
        backend.stats.reset()
        cf = torch.compile(f, backend="mlir_sym", dynamic=True)
        torch.testing.assert_close(cf(x, ok), f(x, ok))
        assert backend.stats.compiles == 1 and backend.stats.artifact_cache_hits == 0, f.__name__
        with pytest.raises(IndexError, match=f"test_artifact_cache.py:{f.__code__.co_firstlineno + 1}"):
            cf(x, bad)


def _gelu_product(x, w):
    return F.gelu(x @ w), torch.ones(w.shape[1]) * x.shape[0]


def test_autocast_and_the_default_dtype_are_part_of_the_key():
    """A graph compiled without autocast was loaded for a call under it (Dynamo's graph is the same;
    the casts come in with AOTAutograd's trace): the result was float32, computed in float32,
    where eager's is bf16. The default dtype (a factory call without one) likewise."""
    x, w = torch.randn(5, 16), torch.randn(16, 8)

    def run(ctx=None, dtype=None):
        torch._dynamo.reset()
        backend._CACHE.clear()
        cf = torch.compile(_gelu_product, backend="mlir_sym", dynamic=True)
        old = torch.get_default_dtype()
        if dtype is not None:
            torch.set_default_dtype(dtype)
        try:
            if ctx is None:
                got, want = cf(x, w), _gelu_product(x, w)
            else:
                with ctx:
                    got, want = cf(x, w), _gelu_product(x, w)
        finally:
            torch.set_default_dtype(old)
        assert [g.dtype for g in got] == [v.dtype for v in want]
        torch.testing.assert_close(got, want)
        return tuple(g.dtype for g in got)

    f32, bf16, f16, f64 = torch.float32, torch.bfloat16, torch.float16, torch.float64
    assert run() == (f32, f32)
    assert run(torch.autocast("cpu", dtype=torch.bfloat16)) == (bf16, f32)
    assert run(torch.autocast("cpu", dtype=torch.float16)) == (f16, f32)
    assert run(dtype=torch.float64) == (f32, f64)
    assert backend.stats.artifact_cache_hits == 0 and backend.stats.artifact_cache_stores == 4
    run(torch.autocast("cpu", dtype=torch.bfloat16))  # the same state again: a hit
    assert backend.stats.artifact_cache_hits == 1


def _autocast_inside(x, w):
    with torch.autocast("cpu"):  # no dtype: the global one, torch.set_autocast_dtype's
        return x @ w


def test_the_autocast_dtype_is_part_of_the_key_when_autocast_is_off():
    """Autocast entered inside the function without a dtype takes the global autocast dtype when
    AOTAutograd traces it; Dynamo's graph is the same for every dtype (found by a review: a bf16
    artifact served a float16 call)."""
    x, w = torch.randn(5, 16), torch.randn(16, 8)
    old = torch.get_autocast_dtype("cpu")
    seen = []
    try:
        for dt in (torch.bfloat16, torch.float16, torch.bfloat16):
            torch._dynamo.reset()
            backend._CACHE.clear()
            torch.set_autocast_dtype("cpu", dt)
            got, want = torch.compile(_autocast_inside, backend="mlir_sym", dynamic=True)(x, w), _autocast_inside(x, w)
            assert got.dtype == want.dtype == dt
            torch.testing.assert_close(got, want)
            seen.append((backend.stats.artifact_cache_stores, backend.stats.artifact_cache_hits))
    finally:
        torch.set_autocast_dtype("cpu", old)
    assert seen == [(1, 0), (2, 0), (2, 1)]
