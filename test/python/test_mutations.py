"""Input mutations of inference graphs (mutations.py): the compiled code writes a mutated input's new
value, in place where it overwrites part of the input (a static KV cache's `index_copy_`, a slice
assignment), else copied in after the call; each against eager (outputs and the mutated inputs), at
several sizes with one compilation, on the CPU path and the GPU mapping emulated on the CPU.

    pytest -q test/python/test_mutations.py
"""
from __future__ import annotations

import pytest
import torch

from mlir_sym import backend


@pytest.fixture(params=["cpu", "gpu-emulated"])
def path(request, monkeypatch):
    if request.param == "gpu-emulated":
        monkeypatch.setenv("MLIR_SYM_EMULATE_GPU", "1")
    return request.param


def cache_update(cache, pos, k, q):
    """A static cache's step: write k at positions pos, attend over the cache."""
    cache.index_copy_(1, pos, k)
    return (q @ cache.transpose(1, 2)).softmax(-1) @ cache


def slice_update(buf, x):
    buf[:, 1:3] = x * 2
    return buf.sum(1)


def counter_update(count, x):
    count.add_(x.shape[0])  # elementwise: recomputed from the written input it would add twice
    return x * count


def read_then_overwrite(cache, pos, k):
    before = cache.sum()  # the old value, read besides the overwrite
    cache.index_copy_(1, pos, k)
    return cache.sum() - before


def cache_args(n: int, t: int = 3, seed: int | None = None):
    """A cache of length n, t positions in it, t new rows and a query."""
    torch.manual_seed(n if seed is None else seed)
    cache = torch.randn(2, n, 8)
    pos = torch.randperm(n)[:t].sort().values
    return [cache, pos, torch.randn(2, t, 8), torch.randn(2, 1, 8)]


def _check(fn, make, sizes, in_place: int, copied: int):
    """Each size's outputs and mutated inputs against eager's; one compilation; the mutations counted
    as written in place / copied over all calls."""
    compiled = torch.compile(fn, backend="mlir_sym", dynamic=True)
    for n in sizes:
        args = make(n)
        mine = [a.clone() for a in args]
        want = fn(*args)
        with torch.no_grad():
            got = compiled(*mine)
        torch.testing.assert_close(got, want)
        for a, m in zip(args, mine):
            torch.testing.assert_close(m, a)  # the inputs mutated as eager mutates them
    assert backend.stats.compiles == 1 and backend.stats.fallbacks == 0
    assert (backend.stats.mutations_in_place, backend.stats.mutations_copied) == (in_place, copied)


def test_a_cache_written_at_positions_is_written_in_place(path):
    _check(cache_update, cache_args, (5, 9, 16), in_place=3, copied=0)


def test_a_slice_assignment_is_written_in_place(path):
    """`buf[:, 1:3] = v` is functionalized as slices of `buf` feeding `aten.copy` and two nested
    slice_scatters, one of them of the whole of `buf`: made plain, a slice_scatter of `buf`."""
    _check(slice_update, lambda n: [torch.randn(n, 4), torch.randn(n, 2)], (3, 7), in_place=2, copied=0)


def index_put_update(cache, pos, k):
    cache[:, pos] = k  # index_put_, as HF's static cache does where index_copy_ is missing
    return cache.mean(1)


def test_an_index_assignment_is_written_in_place(path):
    _check(index_put_update, lambda n: cache_args(n)[:3], (5, 9), in_place=2, copied=0)


def test_an_elementwise_update_is_copied_in(path):
    _check(counter_update, lambda n: [torch.tensor([1.5]), torch.randn(n)], (3, 6), in_place=0, copied=2)


def test_an_input_read_besides_its_overwrite_is_copied_in(path):
    _check(read_then_overwrite, lambda n: cache_args(n)[:3], (5, 9), in_place=0, copied=2)


def test_a_mutated_input_not_contiguous_is_copied_in():
    """The cache is a transposed view: the compute reads a contiguous copy and writes a fresh buffer,
    copied into the view."""
    def make(n):
        cache, pos, k, q = cache_args(n)
        return [cache.transpose(0, 1).contiguous().transpose(0, 1), pos, k, q]

    _check(cache_update, make, (5, 9), in_place=0, copied=2)


def test_without_inplace_mutations_aotautograd_copies(monkeypatch):
    """MLIR_SYM_INPLACE_MUTATIONS=0: AOTAutograd's wrapper copies the new value in, as before."""
    monkeypatch.setattr(backend.config, "inplace_mutations", False)
    _check(cache_update, cache_args, (5, 9), in_place=0, copied=0)


def test_split_takes_the_copies_out():
    """The aten graph's `copy_(input, value)` nodes become trailing outputs, in place where the value
    overwrites the input and nothing else reads it."""
    from torch._dynamo.backends.common import aot_autograd
    from torch._functorch.aot_autograd import make_boxed_func

    from mlir_sym import mutations
    from mlir_sym.backend import _decompositions

    seen, examples = [], []

    def compiler(gm, example_inputs):
        examples.append(example_inputs)
        seen.append(mutations.split(gm))
        assert not any(n.target is torch.ops.aten.copy_.default for n in gm.graph.nodes)

        def run(args):
            outs = gm(*args)
            return mutations.with_mutations(lambda a: list(outs), seen[-1])(args)

        return make_boxed_func(lambda *a: run(list(a)))

    def both(cache, pos, k, q, count):
        count.add_(1)
        return cache_update(cache, pos, k, q)

    torch._dynamo.reset()
    be = aot_autograd(fw_compiler=compiler, inference_compiler=compiler, decompositions=_decompositions(),
                      keep_inference_input_mutations=True)
    args = cache_args(6) + [torch.zeros(1)]
    mine = [a.clone() for a in args]
    with torch.no_grad():
        torch.testing.assert_close(torch.compile(both, backend=be, dynamic=True)(*mine), both(*args))
    torch.testing.assert_close(mine[0], args[0])
    torch.testing.assert_close(mine[4], args[4])
    (muts,) = seen
    (cache,) = [m for m in muts if m.in_place]  # the cache; the counter's add is copied
    assert [m.in_place for m in muts].count(False) == 1
    assert tuple(examples[0][cache.input].shape) == (2, 6, 8)


def test_batch_norm_running_stats_in_training_mode(path):
    """A BatchNorm in training mode under no_grad updates its running stats and batch count (buffers
    AOTAutograd lifts to inputs): computed by the graph, copied in (elementwise updates)."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.BatchNorm2d(4), torch.nn.ReLU()).train()
    mine = torch.nn.Sequential(*[m for m in __import__("copy").deepcopy(model)])
    compiled = torch.compile(mine, backend="mlir_sym", dynamic=True)
    with torch.no_grad():
        for n in (5, 9, 7):
            x = torch.randn(2, 3, n, n)
            torch.testing.assert_close(compiled(x), model(x))
            for name in ("running_mean", "running_var", "num_batches_tracked"):
                torch.testing.assert_close(getattr(mine[1], name), getattr(model[1], name), msg=name)
    assert backend.stats.compiles == 1 and backend.stats.fallbacks == 0
    assert backend.stats.mutations_copied == 9 and backend.stats.mutations_in_place == 0


def test_batch_norm_in_a_training_step(path):
    """Training with grad: AOTAutograd keeps the running stats' updates (inputs without grad) in the
    forward graph too, which the forward compiler takes out as for inference (its import failed on
    `aten.copy_` before); the loss, the gradients and the running stats as eager's."""
    import copy

    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.BatchNorm2d(4), torch.nn.ReLU()).train()
    mine = copy.deepcopy(model)
    compiled = torch.compile(mine, backend="mlir_sym", dynamic=True)
    for n in (5, 9):
        x = torch.randn(2, 3, n, n)
        want, got = model(x).sum(), compiled(x).sum()
        want.backward()
        got.backward()
        torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-4)
        torch.testing.assert_close(mine[0].weight.grad, model[0].weight.grad, rtol=1e-4, atol=1e-4)
        for name in ("running_mean", "running_var", "num_batches_tracked"):
            torch.testing.assert_close(getattr(mine[1], name), getattr(model[1], name), msg=name)
    assert backend.stats.fallbacks == 0 and backend.stats.mutations_copied == 6


# A review's findings: each failed before its fix (a value aliased to an input, the artifact's
# `into` shared with a graph that does not mutate, a permuted input, inputs aliased at a later call)


def save_then_overwrite(prev, cur, pos, k):
    prev.copy_(cur)  # prev's new value is cur's old one: a copy of its own, not cur
    cur.index_copy_(0, pos, k)


def save_then_overwrite_cur_first(cur, prev, pos, k):
    save_then_overwrite(prev, cur, pos, k)


def ema_step(cur, prev, x):
    delta = cur - prev
    prev.copy_(cur)
    cur.mul_(0.9).add_(x)
    return delta


@pytest.mark.parametrize("fn, make", [
    (save_then_overwrite, lambda n: [torch.zeros(n, 3), torch.randn(n, 3), torch.tensor([0, 2]), torch.randn(2, 3)]),
    (save_then_overwrite_cur_first, lambda n: [torch.randn(n, 3), torch.zeros(n, 3), torch.tensor([0, 2]), torch.randn(2, 3)]),
    (ema_step, lambda n: [torch.randn(n), torch.randn(n), torch.randn(n)]),
], ids=["prev-first", "cur-first", "ema"])
def test_an_input_saved_into_another_before_its_update(fn, make, path):
    _check(fn, make, (5, 7), in_place=0, copied=4)


def test_a_returned_copy_of_an_input_is_not_the_input():
    def returned_copy(x, count):
        y = torch.empty_like(x)
        y.copy_(x)
        count.add_(1)
        return y

    compiled = torch.compile(returned_copy, backend="mlir_sym", dynamic=True)
    x = torch.randn(5, 3)
    with torch.no_grad():
        y = compiled(x, torch.zeros(1))
    want = x.clone()
    x.zero_()  # the caller changes its input afterwards: the copy keeps the values
    torch.testing.assert_close(y, want)


def test_a_graph_without_the_mutation_does_not_write_its_input():
    """`pure`'s aten graph is `mut`'s once its mutation is taken out; its artifact must not share
    `mut`'s writes into the input."""
    def mut(c, idx, k):
        c.index_copy_(0, idx, k)
        return c.sum(0)

    def pure(c, idx, k):
        y = c.index_copy(0, idx, k)
        return y.sum(0), y

    cm = torch.compile(mut, backend="mlir_sym", dynamic=True)
    cp = torch.compile(pure, backend="mlir_sym", dynamic=True)
    for n in (5, 7):
        c, idx, k = torch.randn(n, 3), torch.tensor([0, 2]), torch.randn(2, 3)
        with torch.no_grad():
            cm(c.clone(), idx, k)
            mine = c.clone()
            cp(mine, idx, k)
        torch.testing.assert_close(mine, c)


def test_a_mutated_input_read_permuted_is_copied_in(path):
    """A transposed square matrix: the importer reads it as the contiguous tensor it views, whose
    layout is not the output's."""
    def make(n):
        torch.manual_seed(n)
        return [torch.randn(n, n).t(), torch.randn(n, 2)]

    _check(slice_update, make, (5, 7), in_place=0, copied=2)


def test_inputs_aliased_at_a_later_call_are_copied_in(path):
    """Traced with separate tensors, called with `r` a view of the mutated `c` (no recompile): the
    compute reads r after the write would land, so that call gets a fresh buffer and the copy."""
    def f(c, r, idx, k):
        s = r * 2
        c.index_copy_(0, idx, k)
        return s + c.sum()

    compiled = torch.compile(f, backend="mlir_sym", dynamic=True)
    for n, alias in [(5, False), (6, False), (7, True)]:
        torch.manual_seed(n)
        c = torch.randn(n, 3)
        r = c[:2] if alias else torch.randn(2, 3)
        idx, k = torch.tensor([0, 1]), torch.randn(2, 3)
        mine = c.clone()
        mine_r = mine[:2] if alias else r.clone()
        want = f(c, r, idx, k)
        with torch.no_grad():
            got = compiled(mine, mine_r, idx, k)
        torch.testing.assert_close(got, want)
        torch.testing.assert_close(mine, c)
    assert (backend.stats.mutations_in_place, backend.stats.mutations_copied) == (2, 1)
