"""Boolean masks in model code: compiled without graph breaks, one compilation for every size.

Each pattern comes from real model code (attention padding, loss masking, label smoothing, logit
filtering, ragged batches, multimodal embedding merge, ...). It is compiled once with
`torch.compile(..., backend="mlir_sym", dynamic=True)` under the Dynamo settings masked code needs
(`capture_dynamic_output_shape_ops` for x[mask], `capture_scalar_outputs` for .item()), then run on
several sizes with random, all-true and all-false masks against eager: same values (NaN where eager
gives NaN) or the same exception type where eager raises (an empty amax). No graph break, no
recompile, no second compilation, no eager fallback. sym-mask-to-where turns the data-dependent
sizes into `where`s (see passes/mask_to_where.py); what it cannot express fails with an error naming
the op and the line. A mask of the wrong shape or dtype raises what eager raises.

    pytest -q test/python/test_masks.py [-k name]
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


@dataclass
class MaskCase:
    name: str
    fn: Callable
    inputs: Callable[[int, str], tuple]  # (size, mask kind) -> args
    sizes: tuple[int, ...] = (6, 11, 19)  # none equal to an inner dim (2..5): no duck-sizing guard
    atol: float | None = None
    rtol: float | None = None

    def __str__(self) -> str:
        return self.name


_g, _mask, _randn = seeded(97, 13)


# ---------------------------------------------------------------------------------------------
# The patterns.


def attention_padding_mask(scores, key_valid):
    """Encoder self-attention: padded keys get -inf before the softmax (BERT, T5 key padding)."""
    return scores.masked_fill(~key_valid[:, None, None, :], float("-inf")).softmax(-1)


def loss_pad_zero(pred, target, pad):
    """Per-token loss, padding zeroed in place, mean over real tokens (seq2seq losses)."""
    loss = F.mse_loss(pred, target, reduction="none")
    loss[pad] = 0
    return loss.sum() / (~pad).sum()


def masked_mean_loss(loss, mask):
    """`(loss * m).sum() / m.sum()` with a float mask (MLM / CTC losses)."""
    m = mask.float()
    return (loss * m).sum() / m.sum().clamp(min=1.0)


def label_smoothing_ignore_index(logits, target):
    """Cross entropy with label smoothing; ignore_index marks padding targets."""
    return F.cross_entropy(logits, target, ignore_index=-100, label_smoothing=0.1)


def clamp_by_mask(x):
    """`x[x > 5] = 5`: clip through a data-dependent mask."""
    x = x.clone()
    x[x > 5] = 5
    return x


def threshold_filter(logits, thresh):
    """`logits[logits < thresh] = -inf` (sampling: drop tokens below a threshold)."""
    logits = logits.clone()
    logits[logits < thresh] = float("-inf")
    return logits


def top_k_filter(logits):
    """Hugging Face top-k warper: everything below the k-th largest logit becomes -inf."""
    logits = logits.clone()
    indices_to_remove = logits < torch.topk(logits, 2)[0][..., -1, None]
    logits[indices_to_remove] = float("-inf")
    return logits


def masked_sum(x, mask):
    """`x[mask].sum()`: rows selected by a mask, all summed (auxiliary losses over selected items)."""
    return x[mask].sum()


def masked_mean(x, mask):
    """`x[mask].mean()` with an elementwise mask of x's shape."""
    return x[mask].mean()


def masked_amax(x, mask):
    """`x[mask].amax()`: eager raises on an empty selection, so must the compiled code."""
    return x[mask].amax()


def mask_count(mask):
    """`mask.sum()` and `count_nonzero`: number of real tokens."""
    return mask.sum(), torch.count_nonzero(mask)


def ragged_pack_zero(x, lengths):
    """Ragged batch padded to T: zero the positions past each length (packing / masking RNN output)."""
    valid = torch.arange(x.shape[1], device=x.device)[None, :] < lengths[:, None]
    x = x.clone()
    x[~valid] = 0
    return x


def masked_mse(pred, target, mask):
    """`F.mse_loss(pred[mask], target[mask])`: regression loss on observed entries only."""
    return F.mse_loss(pred[mask], target[mask])


def masked_scale_inplace(x, mask):
    """`x[mask] *= 0.5` (scale selected rows in place; index_put of a same-mask selection)."""
    x = x.clone()
    x[mask] *= 0.5
    return x


def masked_row_sum(x, mask):
    """`x[mask].sum(0)`: sum of the selected rows (pooling selected tokens' embeddings)."""
    return x[mask].sum(0)


def masked_sum_over_numel(x, mask):
    """`x[mask].sum() / x[mask].numel()`: a hand-written masked mean."""
    return x[mask].sum() / x[mask].numel()


def image_token_merge(embeds, is_image, feats):
    """LLaVA-style: image features replace the image-token embeddings (masked_scatter)."""
    return embeds.masked_scatter(is_image[..., None].expand_as(embeds), feats)


def masked_token_accuracy(logits, target, mask):
    """Token accuracy over non-padding positions: `(pred[mask] == target[mask]).float().mean()`."""
    pred = logits.argmax(-1)
    return (pred[mask] == target[mask]).float().mean()


def masked_max_pool(x, mask):
    """Max-pool the selected tokens: `x[mask].amax(0)` (eager raises IndexError when none is selected)."""
    return x[mask].amax(0)


def drop_features(x, keep):
    """`x[:, ~keep] = 0`: zero feature columns (the mask indexes dim 1)."""
    x = x.clone()
    x[:, ~keep] = 0
    return x


def state_update(h, h_new, active):
    """Ragged RNN / decoding step: `h[active] = h_new[active]` (only active sequences advance)."""
    h = h.clone()
    h[active] = h_new[active]
    return h


def masked_select_mean(x, mask):
    """`x.masked_select(mask).mean()`."""
    return x.masked_select(mask).mean()


CASES = [
    MaskCase("attention_padding_mask", attention_padding_mask,
             lambda n, k: (_randn(2, 2, n, n, n=n, kind=k), _mask((2, n), n, k))),
    MaskCase("loss_pad_zero", loss_pad_zero,
             lambda n, k: (_randn(n, 4, n=n, kind=k), _randn(n, 4, n=n, kind=k, salt=1), _mask((n, 4), n, k))),
    MaskCase("masked_mean_loss", masked_mean_loss, lambda n, k: (_randn(2, n, n=n, kind=k).abs(), _mask((2, n), n, k))),
    MaskCase("label_smoothing_ignore_index", label_smoothing_ignore_index,
             lambda n, k: (_randn(n, 5, n=n, kind=k),
                           torch.where(_mask((n,), n, k), -100, torch.randint(0, 5, (n,), generator=_g(n, k, 2))))),
    MaskCase("clamp_by_mask", clamp_by_mask,
             lambda n, k: ({"random": _randn(n, 3, n=n, kind=k) * 4 + 4, "all": 6 + torch.rand(n, 3),
                            "none": torch.rand(n, 3)}[k],)),
    MaskCase("threshold_filter", threshold_filter,
             lambda n, k: (_randn(2, n, n=n, kind=k), torch.tensor({"random": 0.0, "all": 1e9, "none": -1e9}[k]))),
    MaskCase("top_k_filter", top_k_filter,  # all-false: equal logits; never all-true (top 2 stay)
             lambda n, k: (_randn(2, n, n=n, kind=k) if k == "random" else torch.ones(2, n),)),
    MaskCase("masked_sum", masked_sum, lambda n, k: (_randn(n, 4, n=n, kind=k), _mask((n,), n, k))),
    MaskCase("masked_mean", masked_mean, lambda n, k: (_randn(n, 3, n=n, kind=k), _mask((n, 3), n, k))),
    MaskCase("masked_amax", masked_amax, lambda n, k: (_randn(n, n=n, kind=k), _mask((n,), n, k))),
    MaskCase("mask_count", mask_count, lambda n, k: (_mask((2, n), n, k),)),
    MaskCase("ragged_pack_zero", ragged_pack_zero,
             lambda n, k: (_randn(3, n, 4, n=n, kind=k),
                           {"random": torch.randint(0, n + 1, (3,), generator=_g(n, k)), "all": torch.full((3,), n),
                            "none": torch.zeros(3, dtype=torch.int64)}[k])),
    MaskCase("masked_mse", masked_mse,
             lambda n, k: (_randn(n, 2, n=n, kind=k), _randn(n, 2, n=n, kind=k, salt=1), _mask((n, 2), n, k))),
    MaskCase("masked_scale_inplace", masked_scale_inplace, lambda n, k: (_randn(n, 4, n=n, kind=k), _mask((n,), n, k))),
    MaskCase("masked_row_sum", masked_row_sum, lambda n, k: (_randn(n, 4, n=n, kind=k), _mask((n,), n, k))),
    MaskCase("masked_sum_over_numel", masked_sum_over_numel, lambda n, k: (_randn(n, n=n, kind=k), _mask((n,), n, k))),
    MaskCase("image_token_merge", image_token_merge,
             lambda n, k: (_randn(2, n, 4, n=n, kind=k), _mask((2, n), n, k), _randn(2 * n, 4, n=n, kind=k, salt=3))),
    MaskCase("masked_token_accuracy", masked_token_accuracy,
             lambda n, k: (_randn(2, n, 5, n=n, kind=k), torch.randint(0, 5, (2, n), generator=_g(n, k, 4)),
                           _mask((2, n), n, k))),
    MaskCase("masked_max_pool", masked_max_pool, lambda n, k: (_randn(n, 4, n=n, kind=k), _mask((n,), n, k))),
    MaskCase("drop_features", drop_features, lambda n, k: (_randn(3, n, n=n, kind=k), _mask((n,), n, k))),
    MaskCase("state_update", state_update,
             lambda n, k: (_randn(n, 4, n=n, kind=k), _randn(n, 4, n=n, kind=k, salt=1), _mask((n,), n, k))),
    MaskCase("masked_select_mean", masked_select_mean, lambda n, k: (_randn(2, n, n=n, kind=k), _mask((2, n), n, k))),
]
BY_NAME = {c.name: c for c in CASES}


@pytest.fixture(autouse=True)
def dynamo_settings():
    with torch._dynamo.config.patch(**DYNAMO_SETTINGS):
        yield


def _call(fn, args):
    try:
        with torch.no_grad():
            return fn(*[a.clone() if isinstance(a, torch.Tensor) else a for a in args]), None
    except Exception as e:  # noqa: BLE001 - compared with eager's
        return None, e


def run_case(c: MaskCase, compiled) -> None:
    for n in c.sizes:
        for kind in KINDS:
            args = c.inputs(n, kind)
            expected, eager_err = _call(c.fn, args)
            got, err = _call(compiled, args)
            where = f"{c.name}, size {n}, {kind} mask"
            if eager_err is not None:
                assert err is not None, f"{where}: eager raised {eager_err!r}, compiled did not"
                assert isinstance(err, type(eager_err)), f"{where}: eager raised {eager_err!r}, compiled {err!r}"
                continue
            assert err is None, f"{where}: compiled raised {err!r}"
            torch.testing.assert_close(got, expected, atol=c.atol, rtol=c.rtol, equal_nan=True,
                                       msg=lambda m: f"{where}: {m}")


@pytest.mark.parametrize("case", CASES, ids=str)
def test_mask_pattern(case: MaskCase, dynamo_graphs):
    compiled = torch.compile(case.fn, backend="mlir_sym", dynamic=True)
    run_case(case, compiled)
    assert not torch._dynamo.utils.counters["graph_break"], \
        f"graph breaks: {dict(torch._dynamo.utils.counters['graph_break'])}"
    assert dynamo_graphs() == 1, "Dynamo recompiled (or split the frame) for a size or a mask"
    assert backend.stats.compiles == 1, "mlir_sym compiled more than once"
    assert backend.stats.fallbacks == 0 and backend.stats.guard_misses == 0
    assert not any(type(a).__name__ == "CountFillArtifact" for a in backend._CACHE.values()), \
        "took the count/fill path: sym-mask-to-where should have removed the data-dependent size"


def test_rewrite_leaves_no_data_dependent_size():
    """The imported module of x[mask].sum() has u0 in neither its symbols nor its guards, and the
    lowered compute has no index op left."""
    compiled = torch.compile(masked_sum, backend="mlir_sym", dynamic=True)
    compiled(*BY_NAME["masked_sum"].inputs(8, "random"))
    art = next(iter(backend._CACHE.values()))
    assert 'sym_name = "u' not in art.source_ir, "an unbacked symbol was declared"
    assert 'symbol = "u' not in art.source_ir, "an unbacked symbol is used by the guards or the compute"


# ---------------------------------------------------------------------------------------------
# Wrong masks raise what eager raises.


def _exc(fn, args):
    try:
        fn(*args)
    except Exception as e:  # noqa: BLE001
        return e
    return None


@pytest.mark.parametrize("pattern", ["loss_pad_zero_1d", "masked_sum"])
@pytest.mark.parametrize("bad", ["longer", "size_one", "float"])
def test_wrong_mask_raises_like_eager(pattern, bad):
    def put(x, m):
        x = x.clone()
        x[m] = 0
        return x

    fn = {"loss_pad_zero_1d": put, "masked_sum": masked_sum}[pattern]
    x = torch.randn(6, 2)
    compiled = torch.compile(fn, backend="mlir_sym", dynamic=True)
    compiled(x, x[:, 0] > 0)  # compiled for good masks first
    mask = {"longer": torch.ones(7, dtype=torch.bool), "size_one": torch.ones(1, dtype=torch.bool),
            "float": torch.ones(6)}[bad]
    eager_err, err = _exc(fn, (x, mask)), _exc(compiled, (x, mask))
    assert eager_err is not None and err is not None, (eager_err, err)
    if isinstance(err, torch._dynamo.exc.TorchRuntimeError):
        # Raised while Dynamo traces x[float mask] (the meta kernel raises RuntimeError, Dynamo wraps
        # it), before any backend sees a graph: the same for every backend.
        assert _exc(torch.compile(fn, backend="eager", dynamic=True), (x, mask)).__class__ is type(err)
        return
    assert isinstance(err, type(eager_err)), f"eager raised {eager_err!r}, compiled {err!r}"


# ---------------------------------------------------------------------------------------------
# What the pass leaves alone is compiled in count/fill phases (mlir_sym/datadep.py, test_datadep.py);
# sym-mask-to-where's strict error names the op and the line when that is not possible either.


@pytest.mark.parametrize("pattern", ["escapes", "scan"])
def test_left_alone_compiles_with_count_fill(pattern):
    def escapes(x, m):
        return x[m] * 2

    def scan(x, m):
        return x[m].cumsum(0).sum()

    fn = {"escapes": escapes, "scan": scan}[pattern]
    compiled = torch.compile(fn, backend="mlir_sym", dynamic=True)
    for n in (8, 13):
        x = torch.randn(n)
        for m in (x > 0, x > 1e9, x < 1e9):
            torch.testing.assert_close(compiled(x, m), fn(x, m))
    assert backend.stats.compiles == 1 and backend.stats.fallbacks == 0
    assert type(next(iter(backend._CACHE.values()))).__name__ == "CountFillArtifact"


def test_strict_mode_names_op_and_line():
    """Without the count/fill path (the pipeline alone), a selection the pass leaves is an error at its
    location."""
    from mlir_sym.capture import compile_graph

    captured = []

    def grab(gm, example_inputs):
        captured.append(gm)
        return gm

    from torch._dynamo.backends.common import aot_autograd

    def scan(x, m):
        return x[m].cumsum(0).sum()

    x = torch.randn(8)
    torch.compile(scan, backend=aot_autograd(fw_compiler=grab, decompositions=backend._decompositions()),
                  dynamic=True)(x, x > 0)
    with pytest.raises(Exception, match=r"'torch\.aten\.index\.Tensor' has a result of data-dependent size .*cumsum.*test_masks\.py:\d+"):
        compile_graph(captured[0])
