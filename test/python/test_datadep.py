"""Data-dependent sizes that escape: compiled in phases (count, allocate, fill), no graph break.

Each pattern comes from real model code whose output size depends on the data: ragged-batch
unpadding (`hidden[attention_mask.bool()]`, Hugging Face's `_get_unpad_data`), index lists
(`nonzero`), class histograms (`unique`), per-token batch ids (`repeat_interleave`), trimming padding
to the longest sequence (`x[:, :lengths.max().item()]`), detection pre-filtering, run-length
encoding. Each is compiled once with `torch.compile(..., backend="mlir_sym", dynamic=True)` under
the Dynamo settings data-dependent code needs (`capture_dynamic_output_shape_ops`,
`capture_scalar_outputs`, README "Dynamo settings"), then run on several sizes with random,
all-true and all-false masks (empty outputs included) against eager: equal values and dtypes (exact
for integers), one mlir_sym compilation, no graph break, no recompile, no eager fallback. A
`torch._check` that fails raises a RuntimeError, as in eager. mlir_sym/datadep.py explains the phases.

    pytest -q test/python/test_datadep.py [-k name]
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import pytest
import torch
import torch._dynamo
import torch.nn.functional as F

from mask_inputs import DYNAMO_SETTINGS, KINDS, seeded
from mlir_sym import backend
from mlir_sym.runtime.artifact import CountFillArtifact, SymAssertionError


@dataclass
class Case:
    name: str
    fn: Callable
    inputs: Callable[[int, str], tuple]  # (size, kind) -> args
    sizes: tuple[int, ...] = (6, 11, 19)
    phases: int = 1  # count phases the artifact needs (chained data-dependent sizes need more)

    def __str__(self) -> str:
        return self.name


_g, _mask, _randn = seeded(101, 7)


def _lengths(b: int, n: int, kind: str) -> torch.Tensor:
    """Sequence lengths of a padded batch of width n: random in [0, n], all n, or all 0."""
    if kind == "all":
        return torch.full((b,), n)
    if kind == "none":
        return torch.zeros(b, dtype=torch.int64)
    return torch.randint(0, n + 1, (b,), generator=_g(n, kind, 5))


def _labels(n: int, kind: str) -> torch.Tensor:
    """Class labels: random in [0, 5), all distinct, or all equal."""
    if kind == "all":
        return torch.randperm(n, generator=_g(n, kind))
    if kind == "none":
        return torch.full((n,), 3)
    return torch.randint(0, 5, (n,), generator=_g(n, kind, 2))


# ---------------------------------------------------------------------------------------------
# The patterns.


def unpad_data(attention_mask):
    """Hugging Face `_get_unpad_data` (flash-attention varlen): token indices, cumulative lengths and
    the longest sequence (`.item()`, returned as an int)."""
    seqlens = attention_mask.sum(dim=-1, dtype=torch.int32)
    indices = torch.nonzero(attention_mask.flatten(), as_tuple=False).flatten()
    max_seqlen = seqlens.max().item()
    cu_seqlens = F.pad(torch.cumsum(seqlens, dim=0, dtype=torch.int32), (1, 0))
    return indices, cu_seqlens, max_seqlen


def heatmap_peaks(heatmap, threshold):
    """Keypoint / detection heads: coordinates of every cell above a threshold (2-D nonzero)."""
    return torch.nonzero(heatmap > threshold)


def ragged_pack(hidden, attention_mask):
    """Ragged batch packing: the real tokens of a padded batch, one row each (`unpad_input`)."""
    return hidden[attention_mask.bool()]


def masked_select_logits(logits, mask):
    """`masked_select` of the scores at observed positions (a flat vector)."""
    return torch.masked_select(logits, mask) * 2


def masked_select_broadcast(x, col_mask):
    """`masked_select` with a mask that broadcasts over the rows."""
    return x.masked_select(col_mask)


def class_histogram(labels):
    """`torch.unique(labels, sorted=True, return_counts=True)`: classes present and their counts."""
    return torch.unique(labels, sorted=True, return_counts=True)


def vocab_remap(ids):
    """Dedup token ids and remap them to a compact vocabulary (`return_inverse`)."""
    uniq, inverse = torch.unique(ids, return_inverse=True)
    return uniq, inverse


def run_length(x):
    """Run-length encoding: `unique_consecutive(return_counts=True)`."""
    return torch.unique_consecutive(x, return_counts=True)


def batch_vector(lengths):
    """Graph batching (PyG's `batch` vector): the graph id of every node, from per-graph sizes."""
    return torch.repeat_interleave(torch.arange(lengths.shape[0], device=lengths.device), lengths)


def ragged_unpack(x, repeats):
    """Expand per-sequence rows to per-token rows: `x.repeat_interleave(repeats, dim=0)`."""
    return x.repeat_interleave(repeats, dim=0) + 1


def trim_to_longest(x, lengths):
    """Trim a padded batch to its longest sequence: `x[:, :int(lengths.max().item())]`."""
    return x[:, : int(lengths.max().item())]


def positions_from_item(n):
    """`torch.arange(n.item())`: positions for a length computed on the device."""
    return torch.arange(n.item())


def zeros_from_item(x, lengths):
    """A buffer sized by a data-dependent total: `x.new_zeros(int(lengths.sum().item()), d)`."""
    return x.new_zeros(int(lengths.sum().item()), x.shape[1]) + 1


def score_filter(scores, boxes, threshold):
    """Detection pre-NMS filtering: the kept boxes, their scores and their indices."""
    keep = scores > threshold
    return boxes[keep], scores[keep], keep.nonzero().squeeze(1)


def checked_trim(x, lengths):
    """`torch._check_is_size` / `torch._check` narrow the size of `.item()` to the padded width."""
    n = lengths.max().item()
    torch._check_is_size(n)
    torch._check(n <= x.shape[1])
    return x[:, :n].sum(-1), n


def selected_cumsum(x, mask):
    """A scan over the selected entries (no where form: sym-mask-to-where leaves it, count/fill takes it)."""
    return x[mask].cumsum(0)


def selected_tokens_mlp(x, mask, w):
    """Token pruning / routing: only the selected tokens go through a layer, written back in place
    (`out[mask] = layer(x[mask])`: a matmul has no where form)."""
    out = x.clone()
    out[mask] = torch.relu(x[mask] @ w)
    return out


def nonzero_of_selection(x, mask):
    """Positions of the positive entries among the selected ones: a count over a data-dependent size
    (two count phases)."""
    return (x[mask] > 0).nonzero().squeeze(1)


CASES = [
    Case("unpad_data", unpad_data, lambda n, k: (_mask((3, n), n, k).to(torch.int64),)),
    Case("heatmap_peaks", heatmap_peaks,
         lambda n, k: (_randn(n, 4, n=n, kind=k), torch.tensor({"random": 0.5, "all": -1e9, "none": 1e9}[k]))),
    Case("ragged_pack", ragged_pack, lambda n, k: (_randn(2, n, 3, n=n, kind=k), _mask((2, n), n, k).to(torch.int64))),
    Case("masked_select_logits", masked_select_logits, lambda n, k: (_randn(n, 5, n=n, kind=k), _mask((n, 5), n, k))),
    Case("masked_select_broadcast", masked_select_broadcast,
         lambda n, k: (_randn(3, n, n=n, kind=k), _mask((n,), n, k))),
    Case("class_histogram", class_histogram, lambda n, k: (_labels(n, k),)),
    Case("vocab_remap", vocab_remap, lambda n, k: (_labels(2 * n, k).view(2, n),)),
    Case("run_length", run_length, lambda n, k: (torch.sort(_labels(n, k))[0],)),
    Case("batch_vector", batch_vector, lambda n, k: (_lengths(n, 4, k),)),
    Case("ragged_unpack", ragged_unpack, lambda n, k: (_randn(n, 3, n=n, kind=k), _lengths(n, 3, k))),
    Case("trim_to_longest", trim_to_longest, lambda n, k: (_randn(3, n, 2, n=n, kind=k), _lengths(3, n, k))),
    Case("positions_from_item", positions_from_item,
         lambda n, k: (torch.tensor({"random": n // 2, "all": n, "none": 0}[k]),)),
    Case("zeros_from_item", zeros_from_item, lambda n, k: (_randn(n, 3, n=n, kind=k), _lengths(4, n, k))),
    Case("score_filter", score_filter,
         lambda n, k: (torch.rand(n, generator=_g(n, k)), _randn(n, 4, n=n, kind=k),
                       torch.tensor({"random": 0.5, "all": -1.0, "none": 2.0}[k]))),
    Case("checked_trim", checked_trim, lambda n, k: (_randn(3, n, 2, n=n, kind=k), _lengths(3, n, k))),
    Case("selected_cumsum", selected_cumsum, lambda n, k: (_randn(n, n=n, kind=k), _mask((n,), n, k))),
    Case("selected_tokens_mlp", selected_tokens_mlp,
         lambda n, k: (_randn(2, n, 4, n=n, kind=k), _mask((2, n), n, k), _randn(4, 4, n=n, kind=k, salt=2))),
    Case("nonzero_of_selection", nonzero_of_selection,
         lambda n, k: (_randn(n, n=n, kind=k), _mask((n,), n, k)), phases=2),
]
BY_NAME = {c.name: c for c in CASES}


@pytest.fixture(autouse=True)
def dynamo_settings():
    with torch._dynamo.config.patch(**DYNAMO_SETTINGS):
        yield


def _call(fn, args):
    with torch.no_grad():
        return fn(*[a.clone() if isinstance(a, torch.Tensor) else a for a in args])


def run_case(c: Case, compiled) -> None:
    for n in c.sizes:
        for kind in KINDS:
            args = c.inputs(n, kind)
            expected = _call(c.fn, args)
            got = _call(compiled, args)
            where = f"{c.name}, size {n}, {kind}"
            torch.testing.assert_close(got, expected, msg=lambda m: f"{where}: {m}")  # exact for integers


def _artifact() -> CountFillArtifact:
    arts = list(backend._CACHE.values())
    assert len(arts) == 1
    return arts[0]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_data_dependent_pattern(case: Case, dynamo_graphs):
    compiled = torch.compile(case.fn, backend="mlir_sym", dynamic=True)
    run_case(case, compiled)
    assert not torch._dynamo.utils.counters["graph_break"], \
        f"graph breaks: {dict(torch._dynamo.utils.counters['graph_break'])}"
    assert dynamo_graphs() == 1, "Dynamo recompiled (or split the frame) for a size or a mask"
    assert backend.stats.compiles == 1, "mlir_sym compiled more than once"
    assert backend.stats.fallbacks == 0 and backend.stats.guard_misses == 0
    art = _artifact()
    assert isinstance(art, CountFillArtifact), "compiled without the count/fill phases"
    assert len(art.count_artifacts) == case.phases
    assert art.calls == len(case.sizes) * len(KINDS)


def test_unbacked_symbol_in_sym_dialect():
    """The fill graph's data-dependent size is a `sym.symbol` marked `unbacked`, without a hint, with the
    size-like range [0, oo); it is an input size of the guard function, and its range is an assert."""
    compiled = torch.compile(ragged_pack, backend="mlir_sym", dynamic=True)
    _call(compiled, BY_NAME["ragged_pack"].inputs(8, "random"))
    ir_text = _artifact().source_ir
    decl = next(line for line in ir_text.splitlines() if 'sym_name = "u0"' in line)
    assert "unbacked" in decl and "hint" not in decl and "lo = 0" in decl and "hi =" not in decl, decl
    assert 'sym.source = "datadep_u0"' in ir_text
    assert not any(kind == "guard" and "u0" in text for kind, text, _ in _artifact().checks)


def test_check_narrows_the_range():
    """torch._check(n <= 5) narrows u0 to [0, 5] in the sym dialect: an assert, not a guard."""

    def f(x, lengths):
        n = lengths.max().item()
        torch._check(n >= 0)
        torch._check(n <= 5)
        return x.new_ones(n, 2)

    compiled = torch.compile(f, backend="mlir_sym", dynamic=True)
    for k in (0, 3, 5):
        args = (torch.randn(4, 2), torch.tensor([k, 0]))
        torch.testing.assert_close(_call(compiled, args), _call(f, args))
    decl = next(line for line in _artifact().source_ir.splitlines() if 'sym_name = "u0"' in line)
    assert "lo = 0" in decl and "hi = 5" in decl, decl
    with pytest.raises(RuntimeError):
        f(torch.randn(4, 2), torch.tensor([6, 0]))
    with pytest.raises(SymAssertionError, match=r"u0 <= 5"):
        compiled(torch.randn(4, 2), torch.tensor([6, 0]))
    assert backend.stats.compiles == 1


@pytest.mark.parametrize("bad", [[3, 99, 1], [-4, -1, -2]], ids=["too_long", "negative"])
def test_check_failure_raises_like_eager(bad):
    """A failing torch._check on a data-dependent size raises a RuntimeError (eager's type), naming the
    condition and the user's line; the artifact keeps serving valid inputs."""
    compiled = torch.compile(checked_trim, backend="mlir_sym", dynamic=True)
    x = torch.randn(3, 8, 2)
    good = (x, torch.tensor([3, 5, 1]))
    torch.testing.assert_close(_call(compiled, good), _call(checked_trim, good))
    with pytest.raises(RuntimeError):
        checked_trim(x, torch.tensor(bad))
    with pytest.raises(SymAssertionError, match=r"u0 (<=|>=) .*test_datadep\.py") as e:
        compiled(x, torch.tensor(bad))
    assert isinstance(e.value, RuntimeError)
    full = (x, torch.tensor([8, 0, 2]))
    torch.testing.assert_close(_call(compiled, full), _call(checked_trim, full))
    assert backend.stats.compiles == 1 and backend.stats.fallbacks == 0


def test_unsupported_data_dependent_op_names_op_and_line():
    """An op whose data-dependent size has no count (unique over a dim) fails naming it and the line."""

    def rows(x):
        return torch.unique(x, dim=0)

    with pytest.raises(Exception, match=r"aten\.unique_dim\.default .*test_datadep\.py.* line \d+.*no count for"):
        torch.compile(rows, backend="mlir_sym", dynamic=True)(torch.randint(0, 2, (6, 2)))


def test_unsupported_op_falls_back_when_asked():
    def rows(x):
        return torch.unique(x, dim=0)

    backend.config.fallback_to_eager = True
    x = torch.randint(0, 2, (6, 2))
    torch.testing.assert_close(torch.compile(rows, backend="mlir_sym", dynamic=True)(x), rows(x))
    assert backend.stats.fallbacks == 1


def test_masked_reductions_keep_the_where_path():
    """What sym-mask-to-where handles (x[m].sum()) is compiled as before: one artifact, no count phase."""

    def f(x, m):
        return x[m].sum()

    compiled = torch.compile(f, backend="mlir_sym", dynamic=True)
    x = torch.randn(9)
    torch.testing.assert_close(compiled(x, x > 0), f(x, x > 0))
    assert not isinstance(_artifact(), CountFillArtifact)


def test_without_dynamo_settings_graph_breaks():
    """Under Dynamo's defaults a data-dependent size is a graph break before any backend sees it (the
    backend cannot turn the settings on: Dynamo reads them while tracing); the compiled pieces still
    match eager."""
    with torch._dynamo.config.patch(capture_dynamic_output_shape_ops=False, capture_scalar_outputs=False):
        compiled = torch.compile(ragged_pack, backend="mlir_sym", dynamic=True)
        args = BY_NAME["ragged_pack"].inputs(8, "random")
        torch.testing.assert_close(_call(compiled, args), _call(ragged_pack, args))
    assert torch._dynamo.utils.counters["graph_break"], "expected Dynamo to break the graph"


@pytest.mark.parametrize("reduce", [True, False], ids=["reduced", "returned"])
def test_training_through_selection(reduce):
    """Forward and backward through `x[mask]`: the forward saves data-dependent tensors for the backward
    (count/fill), the backward scatters the gradient back; each compiles once, gradients match eager."""

    def f(x, mask):
        y = x[mask] * 2
        return y.sum() if reduce else y

    compiled = torch.compile(f, backend="mlir_sym", dynamic=True)
    for n in (6, 11, 19):
        for kind in KINDS:
            x = _randn(n, 3, n=n, kind=kind)
            mask = _mask((n,), n, kind)
            a, b = x.clone().requires_grad_(), x.clone().requires_grad_()
            got, expected = compiled(a, mask), f(b, mask)
            torch.testing.assert_close(got, expected)
            got.sum().backward()
            expected.sum().backward()
            torch.testing.assert_close(a.grad, b.grad, msg=lambda m: f"size {n}, {kind}: {m}")
    assert backend.stats.compiles == 2  # forward + backward
    assert backend.stats.fallbacks == 0 and backend.stats.guard_misses == 0
    assert not torch._dynamo.utils.counters["graph_break"]


def test_write_of_wrong_row_count_raises():
    """`out[m1] = y[m2]` with fewer values than selected elements: eager raises a RuntimeError (shape
    mismatch), so does the compiled code (the gather's bounds check), never a read out of bounds."""

    def f(x, m1, m2, w):
        out = x.clone()
        out[m1] = x[m2] @ w
        return out

    compiled = torch.compile(f, backend="mlir_sym", dynamic=True)
    x, w = torch.randn(8, 3), torch.randn(3, 3)
    m = torch.rand(8) > 0.5
    torch.testing.assert_close(compiled(x, m, m.clone(), w), f(x, m, m.clone(), w))
    m1, m2 = torch.ones(8, dtype=torch.bool), torch.zeros(8, dtype=torch.bool)
    with pytest.raises(RuntimeError):
        f(x, m1, m2, w)
    with pytest.raises(RuntimeError, match="index must be"):
        compiled(x, m1, m2, w)
    assert backend.stats.compiles == 1


@pytest.mark.parametrize("descending", [False, True], ids=["ascending", "descending"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.int64])
def test_sort_matches_eager(descending, dtype):
    """torch.sort (and so unique) lowers to sym-sort-to-merge's merge sort: values and indices equal
    eager's stable sort, ties included, for sizes around powers of two."""

    def f(x):
        return torch.sort(x, descending=descending)

    compiled = torch.compile(f, backend="mlir_sym", dynamic=True)
    for n in (2, 3, 7, 8, 9, 64, 100, 1000):
        x = torch.randint(0, max(2, n // 3), (n,), generator=torch.Generator().manual_seed(n)).to(dtype)
        got = compiled(x)
        expected = torch.sort(x, descending=descending, stable=True)
        torch.testing.assert_close(got.values, expected.values, msg=lambda m: f"size {n}: {m}")
        torch.testing.assert_close(got.indices, expected.indices, msg=lambda m: f"size {n}: {m}")
    assert backend.stats.compiles == 1
