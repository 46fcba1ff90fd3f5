"""`F.scaled_dot_product_attention` as one node through AOTAutograd, expanded by us after it.

Traced as it is, attention costs a fifth of capture: on CUDA PyTorch's fused kernels (flash,
memory-efficient, cuDNN) are opaque to torch-mlir, so the backend traced the math form
(`_scaled_dot_product_attention_math`: matmuls that decompose into expands, views and bmms, masks,
safe softmax), and on the CPU `_scaled_dot_product_flash_attention_for_cpu`'s Python decomposition,
each op through functionalization, fake tensors and symbolic shapes, twice per model layer.

Instead:
  `rewrite_sdpa_calls` (on Dynamo's graph, before AOTAutograd) replaces each call whose form we expand
      exactly by the custom op `mlir_sym::attention`, which AOTAutograd traces as one node (its fake
      kernel only makes the output). Its eager kernel is PyTorch's own SDPA, so the graph still runs
      where it is not compiled (eager fallback, the artifact's guard-miss path).
  `expand_attention` (on the aten graph, in the importer, before torch-mlir) writes each such node as
      the core ops of the math form, computing their fake values directly (no tracing):
          scores = bmm(collapse(q * scale), collapse(k)^T)      [B*H, L, S]
          scores = view(scores, [B, H, L, S]) (+ float mask | masked_fill(~bool mask | ~causal, -inf))
          p      = softmax(scores, -1)   (rows that are all -inf give 0, as PyTorch's safe softmax)
          out    = view(bmm(collapse(p), collapse(v)), [B, H, L, Ev])
      Dynamic views become exact collapse/expand shapes later (fx_rewrites.views_to_collapse_split);
      the bmms are library calls on the GPU, the mask and softmax one fused kernel.
  On the GPU (`expand_attention(graph, keep_fused=True)`) a node our fused kernel serves stays one
      node: torch-mlir imports it as `torch.operator "torch.mlir_sym.attention"`, `sym-torch-attention`
      makes it a `tm_tensor.attention` carrying is_causal and the scale, and `sym-gpu-attention` writes
      that as one launch (flash-attention's online softmax: no scores buffer, no library calls).
      It serves float32 / bfloat16 / float16 with static head dims up to 128 and a mask that is None,
      causal, or a bool / same-dtype tensor whose dims are 1 or the scores' own (`fused_kernel_why_not`).

Rewritten: q, k, v of one floating-point dtype (float16/bfloat16: products of the half tensors with
float32 results, scale, mask and softmax in float32, the probabilities rounded to the half type for the
second product, as PyTorch's fused kernels do, the output rounded once), of one rank >= 3 with the same
(symbolic) batch dims, no dropout, no grouped-query
broadcast, at most one of attn_mask / is_causal, scale None or a number, and nothing requiring grad.
A call where something requires grad (training) becomes PyTorch's math form before AOTAutograd
(`math_form_for_grad`), whose ops it differentiates. Any other call keeps PyTorch's own tracing.
"""
from __future__ import annotations

import logging
import math
import operator
import os
from typing import Any

import torch
import torch.fx as fx

from mlir_sym.fx_rewrites import Emitter

log = logging.getLogger("mlir_sym.compile")

_LIB = "mlir_sym"


def _layout(rank: int) -> tuple[int, ...]:
    """The output's memory order: what PyTorch's fused kernels (flash for the CPU, flash and
    memory-efficient on CUDA) return for [B, H, L, E]: a [B, L, H, E] buffer, so that user code doing
    `o.transpose(1, 2).view(B, L, H * E)` traces as it runs eagerly; other ranks are contiguous."""
    return (0, 2, 1, 3) if rank == 4 else tuple(range(rank))


@torch.library.custom_op(f"{_LIB}::attention", mutates_args=())
def attention(query: torch.Tensor, key: torch.Tensor, value: torch.Tensor, attn_mask: torch.Tensor | None,
              is_causal: bool, scale: float | None) -> torch.Tensor:
    """Eager: PyTorch's scaled_dot_product_attention (no dropout), in the layout of `_layout`."""
    out = torch.nn.functional.scaled_dot_product_attention(query, key, value, attn_mask=attn_mask, dropout_p=0.0,
                                                           is_causal=is_causal, scale=scale)
    want = torch.empty_permuted(out.shape, _layout(out.dim()), dtype=out.dtype, device=out.device)
    if out.stride() == want.stride():
        return out
    return want.copy_(out)


@attention.register_fake
def _attention_fake(query, key, value, attn_mask, is_causal, scale):
    shape = (*query.shape[:-1], value.shape[-1])
    return torch.empty_permuted(shape, _layout(len(shape)), dtype=query.dtype, device=query.device)


# Training: attention as two ops in PyTorch's fused kernels' layout (q, k, v, out and their grads
# [B, L, H, E]), so that the forward saves the log-sum-exp of each score row instead of the
# probabilities and the backward recomputes them (`library_for_grad`). On the GPU they are calls of
# PyTorch's memory-efficient kernels (runtime/cuda.py `library_attention_forward` / `_backward`); on
# the CPU the importer writes them as math (`expand_attention_training`).
@torch.library.custom_op(f"{_LIB}::attention_forward", mutates_args=())
def attention_forward(query: torch.Tensor, key: torch.Tensor, value: torch.Tensor, is_causal: bool,
                      scale: float) -> tuple[torch.Tensor, torch.Tensor]:
    """(out [B, L, H, Ev], lse [B, H, L] float32): attention of q, k, v [B, L|S, H, E] (causal from the
    top left, as is_causal), and the log-sum-exp of each row of scaled scores."""
    if query.is_cuda:
        return eager_attention_forward(query, key, value, is_causal, scale)
    out, lse = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu(
        query.transpose(1, 2), key.transpose(1, 2), value.transpose(1, 2), 0.0, is_causal, scale=scale)
    return out.transpose(1, 2).contiguous(), lse.float().contiguous()


@attention_forward.register_fake
def _attention_forward_fake(query, key, value, is_causal, scale):
    b, length, heads, _ = query.shape
    out = query.new_empty((b, length, heads, value.shape[-1]))
    return out, query.new_empty((b, heads, length), dtype=torch.float32)


@torch.library.custom_op(f"{_LIB}::attention_backward", mutates_args=())
def attention_backward(grad_out: torch.Tensor, query: torch.Tensor, key: torch.Tensor, value: torch.Tensor,
                       out: torch.Tensor, lse: torch.Tensor, is_causal: bool,
                       scale: float) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(dq, dk, dv) of attention_forward's out, from its saved out and lse; all [B, L|S, H, E]."""
    if query.is_cuda:
        return tuple(t.contiguous() for t in eager_attention_backward(grad_out, query, key, value, out, lse,
                                                                       is_causal, scale))
    t = [x.transpose(1, 2) for x in (grad_out, query, key, value, out)]
    lse = lse.double() if query.dtype == torch.float64 else lse  # the CPU kernel's accumulation type
    grads = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu_backward(
        *t, lse, 0.0, is_causal, scale=scale)
    return tuple(g.transpose(1, 2).contiguous() for g in grads)


@attention_backward.register_fake
def _attention_backward_fake(grad_out, query, key, value, out, lse, is_causal, scale):
    return query.new_empty(query.shape), key.new_empty(key.shape), value.new_empty(value.shape)


@torch.library.custom_op(f"{_LIB}::attention_backward_packed", mutates_args=())
def attention_backward_packed(grad_out: torch.Tensor, query: torch.Tensor, key: torch.Tensor, value: torch.Tensor,
                              out: torch.Tensor, lse: torch.Tensor, is_causal: bool, scale: float) -> torch.Tensor:
    """cat([dq, dk, dv] flattened to [B, L, H * E], -1) of attention_backward, q, k, v of one shape:
    the gradient of the projection q, k and v were split from (`packed_qkv_grads`), which PyTorch's
    memory-efficient kernel writes as it is (its shared storage of dq, dk, dv)."""
    if query.is_cuda:
        (dqkv,) = eager_attention_backward(grad_out, query, key, value, out, lse, is_causal, scale, packed=True)
        return dqkv.contiguous()
    grads = attention_backward(grad_out, query, key, value, out, lse, is_causal, scale)
    return torch.cat([g.flatten(2) for g in grads], -1)


@attention_backward_packed.register_fake
def _attention_backward_packed_fake(grad_out, query, key, value, out, lse, is_causal, scale):
    b, length, heads, e = query.shape
    return query.new_empty((b, length, 3 * heads * e))


def heads_of(qkv: torch.Tensor, heads: int) -> tuple[torch.Tensor, ...]:
    """q, k, v [B, L, H, E]: views of a projection [B, L, 3 * H * E] (q its first third, k, v)."""
    b, length, n = qkv.shape
    return qkv.view(b, length, 3, heads, n // (3 * heads)).unbind(2)


@torch.library.custom_op(f"{_LIB}::attention_forward_packed", mutates_args=())
def attention_forward_packed(qkv: torch.Tensor, heads: int, is_causal: bool,
                             scale: float) -> tuple[torch.Tensor, torch.Tensor]:
    """attention_forward of the heads of one projection (`heads_of`): the forward saves the
    projection for the backward, which takes q, k and v as views of it, instead of three copies."""
    q, k, v = heads_of(qkv, heads)
    return attention_forward(q, k, v, is_causal, scale)


@attention_forward_packed.register_fake
def _attention_forward_packed_fake(qkv, heads, is_causal, scale):
    b, length, n = qkv.shape
    return (qkv.new_empty((b, length, heads, n // (3 * heads))),
            qkv.new_empty((b, heads, length), dtype=torch.float32))


def _attention_forward_packed_setup(ctx, inputs, output) -> None:
    qkv, heads, is_causal, scale = inputs
    out, lse = output
    ctx.save_for_backward(qkv, out, lse)
    ctx.heads, ctx.is_causal, ctx.scale = heads, is_causal, scale
    ctx.mark_non_differentiable(lse)


def _attention_forward_packed_grad(ctx, grad_out, _grad_lse):
    qkv, out, lse = ctx.saved_tensors
    q, k, v = heads_of(qkv, ctx.heads)
    return attention_backward_packed(grad_out, q, k, v, out, lse, ctx.is_causal, ctx.scale), None, None, None


attention_forward_packed.register_autograd(_attention_forward_packed_grad, setup_context=_attention_forward_packed_setup)


def _attention_forward_setup(ctx, inputs, output) -> None:
    query, key, value, is_causal, scale = inputs
    out, lse = output
    ctx.save_for_backward(query, key, value, out, lse)
    ctx.is_causal, ctx.scale = is_causal, scale
    ctx.mark_non_differentiable(lse)


def _attention_forward_grad(ctx, grad_out, _grad_lse):
    query, key, value, out, lse = ctx.saved_tensors
    dq, dk, dv = attention_backward(grad_out, query, key, value, out, lse, ctx.is_causal, ctx.scale)
    return dq, dk, dv, None, None


attention_forward.register_autograd(_attention_forward_grad, setup_context=_attention_forward_setup)


def _efficient_operands(*ts: torch.Tensor) -> list[torch.Tensor]:
    """PyTorch's memory-efficient kernels read rows whose last dim is contiguous, and allocate grads
    with their operands' strides (an expanded operand's would overlap)."""
    return [t if t.stride(-1) == 1 and not any(st == 0 and n > 1 for st, n in zip(t.stride(), t.shape))
            else t.contiguous() for t in ts]


def _cudnn(q: torch.Tensor, k: torch.Tensor, is_causal: bool) -> bool:
    """Whether attention_forward / _backward run cuDNN's kernels for these operands: half types on a
    Hopper GPU or newer, as PyTorch chooses them there (eager's and inductor's kernels; half the GPU
    time of the memory-efficient ones over a bf16 training step's attention on an H200), unless
    config.attention_half_kernel says "efficient"; causal only over equal lengths (the
    memory-efficient kernel's top-left mask is the one checked against PyTorch's), lengths above 1
    (cuDNN rejects a single query and key). Both ops decide
    alike: their log-sum-exp rows are the same function ([B, H, L] float32), the layouts are
    converted here."""
    if not (q.is_cuda and q.dtype in _HALF) or torch.cuda.get_device_capability(q.device) < (9, 0):
        return False
    if is_causal and q.shape[1] != k.shape[1]:
        return False
    if q.shape[1] == 1 or k.shape[1] == 1:  # cuDNN: "s_q = s_kv = 1 is not supported" (a call at length 1)
        return False
    from mlir_sym.backend import config

    if config.attention_half_kernel not in ("cudnn", "efficient"):
        raise ValueError(f"mlir_sym: attention_half_kernel must be cudnn or efficient, not {config.attention_half_kernel!r}")
    return config.attention_half_kernel == "cudnn" and torch.backends.cuda.cudnn_sdp_enabled()


def eager_attention_forward(query, key, value, is_causal: bool, scale: float) -> tuple[torch.Tensor, torch.Tensor]:
    """attention_forward by PyTorch's memory-efficient kernel (CUDA; [B, L, H, E] operands as they are),
    or cuDNN's (`_cudnn`). The memory-efficient log-sum-exp rows are padded to a multiple of 32: the
    first L of each are kept (contiguous)."""
    q, k, v = _efficient_operands(query, key, value)
    if _cudnn(q, k, is_causal):  # [B, H, L, E] views; the output is laid out as q ([B, L, H, E]), lse [B, H, L, 1]
        out, lse = torch.ops.aten._scaled_dot_product_cudnn_attention(
            q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), None, True, 0.0, bool(is_causal), False,
            scale=scale)[:2]
        return out.transpose(1, 2), lse.reshape(lse.shape[:3])
    length, kv_len = q.shape[1], k.shape[1]
    out, lse = torch.ops.aten._efficient_attention_forward(q, k, v, None, None, None, length, kv_len, 0.0,
                                                           int(is_causal), True, scale=scale)[:2]
    return out, lse if lse.shape[-1] == length else lse[:, :, :length].contiguous()


def eager_attention_backward(grad_out, query, key, value, out, lse, is_causal: bool, scale: float,
                             packed: bool = False) -> tuple[torch.Tensor, ...]:
    """attention_backward by PyTorch's memory-efficient kernel or cuDNN's (CUDA, as the forward:
    `_cudnn`); the grads as it lays them out,
    or with `packed` (q, k, v of one shape) their concatenation along the flattened heads (the
    kernel's shared storage), as attention_backward_packed."""
    g, q, k, v, o = _efficient_operands(grad_out, query, key, value, out)
    length, kv_len = q.shape[1], k.shape[1]
    if _cudnn(q, k, is_causal):  # no dropout: the kernel reads no random state (empty seed and offset)
        none = torch.empty(0, device=q.device)
        grads = [d.transpose(1, 2) for d in torch.ops.aten._scaled_dot_product_cudnn_attention_backward(
            g.transpose(1, 2), q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), o.transpose(1, 2),
            lse.unsqueeze(-1).contiguous(), none, none, None, None, None, length, kv_len, 0.0, bool(is_causal),
            scale=scale)]
        if packed:  # separate buffers: their concatenation is one copy
            return (torch.cat(grads, 2).view(q.shape[0], length, -1),)
        return tuple(grads)
    if length % 32:  # the kernel reads rows of the forward's padded layout (a multiple of 32 apart)
        lse = torch.nn.functional.pad(lse, (0, 32 - length % 32))
    seed = torch.empty((), dtype=torch.int64)  # no dropout: the kernel reads no random state
    dq, dk, dv, _ = torch.ops.aten._efficient_attention_backward(
        g, q, k, v, None, o, None, None, length, kv_len, lse.contiguous(), 0.0, seed, seed, int(is_causal),
        False, scale=scale, shared_storage_dqdkdv=packed)
    if packed:  # views of one [B, L, 3, H, E] buffer: the concatenation [B, L, 3 * H * E]
        b, heads, e = q.shape[0], q.shape[2], q.shape[3]
        return (dq.as_strided((b, length, 3 * heads * e), (length * 3 * heads * e, 3 * heads * e, 1),
                              dq.storage_offset()),)
    return dq, dk, dv


_FLOATS = (torch.float32, torch.float64, torch.bfloat16, torch.float16)
_HALF = (torch.bfloat16, torch.float16)
_SDPA = (torch._C._nn.scaled_dot_product_attention, torch.nn.functional.scaled_dot_product_attention)
_PARAMS = ("query", "key", "value", "attn_mask", "dropout_p", "is_causal", "scale", "enable_gqa")


def _val(a: Any) -> Any:
    return a.meta.get("example_value", a.meta.get("val")) if isinstance(a, fx.Node) else a


def _equal(a, b) -> bool:
    """Whether two sizes (ints or SymInts) are equal for every value of the symbols (no guard)."""
    if str(a) == str(b):
        return True
    try:
        from torch.fx.experimental.symbolic_shapes import statically_known_true

        return bool(statically_known_true(a == b))
    except Exception:  # noqa: BLE001 - sizes of unrelated shape envs
        return False


def _same_dims(a, b) -> bool:
    """Whether two size lists are the same, symbol for symbol."""
    return len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b))


def _why_not(bound: dict[str, Any]) -> str | None:
    q, k, v, mask = (_val(bound[n]) for n in ("query", "key", "value", "attn_mask"))
    if not all(isinstance(t, torch.Tensor) for t in (q, k, v)):
        return "q, k or v is not a tensor"
    if any(t.requires_grad for t in (q, k, v)) or (isinstance(mask, torch.Tensor) and mask.requires_grad):
        return "an input requires grad (the custom op has no backward)"
    if q.dtype not in _FLOATS or not (q.dtype == k.dtype == v.dtype):
        return "not a floating-point dtype of PyTorch's math form"
    if q.dim() < 3 or not (q.dim() == k.dim() == v.dim()):
        return "ranks differ or are below 3"
    if not (_same_dims(q.shape[:-2], k.shape[:-2]) and _same_dims(q.shape[:-2], v.shape[:-2])):
        return "batch dims differ (broadcast or grouped-query)"
    if not (_equal(k.shape[-2], v.shape[-2]) and _equal(q.shape[-1], k.shape[-1])):
        return "key/value lengths or query/key head dims differ"
    if bound["dropout_p"] not in (0, 0.0) or bound["enable_gqa"] not in (False, None):
        return "dropout or enable_gqa"
    if bound["is_causal"] not in (True, False):
        return "is_causal is not a constant"
    if bound["is_causal"] and bound["attn_mask"] is not None:
        return "both attn_mask and is_causal"
    if not (bound["scale"] is None or type(bound["scale"]) in (int, float)):
        return "scale is not a constant"
    if mask is not None and not (isinstance(mask, torch.Tensor) and mask.dim() <= q.dim()
                                 and (mask.dtype == torch.bool or mask.dtype == q.dtype)):
        return "attn_mask is not a bool or same-dtype tensor of rank <= q's"
    return None


def rewrite_sdpa_calls(gm: fx.GraphModule) -> int:
    """Replace Dynamo-graph calls of scaled_dot_product_attention by mlir_sym::attention where the
    expansion is exact (see the module doc); returns how many."""
    count = 0
    for node, bound in _sdpa_calls(gm):
        why = _why_not(bound)
        if why is not None:
            log.debug("attention at %s keeps PyTorch's tracing: %s", node.meta.get("stack_trace", "?"), why)
            continue
        node.target = torch.ops.mlir_sym.attention.default
        node.args = (bound["query"], bound["key"], bound["value"], bound["attn_mask"], bool(bound["is_causal"]),
                     None if bound["scale"] is None else float(bound["scale"]))
        node.kwargs = {}
        count += 1
    if count:
        gm.recompile()
    return count


def _sdpa_calls(gm: fx.GraphModule):
    """(node, its arguments by parameter name with the defaults filled in) of each call of
    scaled_dot_product_attention in Dynamo's graph, except forms with other arguments."""
    for node in list(gm.graph.nodes):
        if node.op != "call_function" or node.target not in _SDPA:
            continue
        if len(node.args) > len(_PARAMS) or any(k not in _PARAMS for k in node.kwargs):
            continue
        bound = {"attn_mask": None, "dropout_p": 0.0, "is_causal": False, "scale": None, "enable_gqa": False}
        bound.update(zip(_PARAMS, node.args))
        bound.update(node.kwargs)
        yield node, bound


LIBRARY_GRAD_MAX_HEAD = 128  # head dims of PyTorch's memory-efficient kernels' fast paths we take


def library_for_grad_why_not(bound: dict[str, Any], devices: str = "cuda") -> str | None:
    """Why a differentiated SDPA call cannot be attention_forward / attention_backward, or None.
    `devices`: "cuda" (calls on CUDA tensors only, the default), "all" (CPU ones too: the importer
    writes them as math there; for testing), "none"."""
    q, k, v, mask = (_val(bound[n]) for n in ("query", "key", "value", "attn_mask"))
    if devices == "none" or not all(isinstance(t, torch.Tensor) for t in (q, k, v)):
        return "off" if devices == "none" else "q, k or v is not a tensor"
    if devices != "all" and q.device.type != "cuda":
        return f"on {q.device.type}"
    if q.dtype not in _FUSED_DTYPES or not (q.dtype == k.dtype == v.dtype):
        return f"dtypes {q.dtype}, {k.dtype}, {v.dtype}"
    if not (q.dim() == k.dim() == v.dim() == 4):
        return "q, k, v are not [batch, heads, length, head dim]"
    if not (_same_dims(q.shape[:2], k.shape[:2]) and _same_dims(q.shape[:2], v.shape[:2])):
        return "batch or heads dims differ (broadcast or grouped-query)"
    if not (_equal(k.shape[-2], v.shape[-2]) and _equal(q.shape[-1], k.shape[-1]) and _equal(q.shape[-1], v.shape[-1])):
        return "key/value lengths or head dims differ"
    for name, t in (("q/k", q), ("v", v)):
        head = _concrete(t.shape[-1])
        if head is None or head % 8 or not 0 < head <= LIBRARY_GRAD_MAX_HEAD:
            return f"{name} head dim {head} is not a multiple of 8 in [8, {LIBRARY_GRAD_MAX_HEAD}]"
    if mask is not None:
        return "a mask"
    if _concrete(q.shape[1]) is None:
        return "the number of heads is not a number"
    if bound["dropout_p"] not in (0, 0.0) or bound["enable_gqa"] not in (False, None):
        return "dropout or enable_gqa"
    if bound["is_causal"] not in (True, False):
        return "is_causal is not a constant"
    if not (bound["scale"] is None or type(bound["scale"]) in (int, float)):
        return "scale is not a constant"
    return None


_VIEW_METHODS = frozenset({"view", "reshape", "transpose", "permute", "split", "chunk", "unflatten", "unbind"})
_VIEW_FUNCTIONS = (operator.getitem, torch.split, torch.chunk, torch.transpose, torch.permute, torch.reshape,
                   torch.unbind)


def _view_ancestors(n: Any):
    """`n` and the tensors it is a view of, through Dynamo-graph view ops (methods and functions)."""
    while isinstance(n, fx.Node):
        yield n
        if not ((n.op == "call_method" and n.target in _VIEW_METHODS)
                or (n.op == "call_function" and n.target in _VIEW_FUNCTIONS)):
            return
        n = n.args[0]


def _projection(bound: dict[str, Any]) -> fx.Node | None:
    """The tensor X [B, L, 3 * H * E] (contiguous) that q, k, v [B, H, L, E] are the heads of, as
    `heads_of(X, H)` transposed (`q, k, v = X.split(H * E, -1)`, each viewed [B, L, H, E] and
    transposed: GPT-style self-attention), found through view ops and checked on the fake values'
    sizes, strides, storage and storage offsets; else None."""
    q, k, v = (bound[n] for n in ("query", "key", "value"))
    qv = _val(q)
    b, heads, length, e = qv.shape
    width = 3 * heads * e
    common = set(_view_ancestors(k)) & set(_view_ancestors(v))
    x = next((n for n in _view_ancestors(q) if n in common and isinstance(_val(n), torch.Tensor)
              and _val(n).dim() == 3 and _same_dims(_val(n).shape, (b, length, width))), None)
    if x is None:
        return None
    xv = _val(x)
    if not _same_dims(xv.stride(), (length * width, width, 1)):
        return None
    # views of X itself, not of a copy on the way (a reshape or an indexing that copies gives a fresh
    # buffer whose strides and offsets can look the same)
    from torch.multiprocessing.reductions import StorageWeakRef

    base = StorageWeakRef(xv.untyped_storage())
    if any(StorageWeakRef(_val(t).untyped_storage()) != base for t in (q, k, v)):
        return None
    for i, t in enumerate((qv, _val(k), _val(v))):
        if not (_same_dims(t.shape, qv.shape) and _same_dims(t.stride(), (length * width, e, width, 1))
                and _equal(t.storage_offset() - xv.storage_offset(), i * heads * e)):
            return None
    return x


def _library_for_grad(gm: fx.GraphModule, node: fx.Node, bound: dict[str, Any]) -> None:
    """Replace SDPA call `node` by attention_forward on [B, L, H, E] views of q, k, v (transposes
    that cancel the user's own), or attention_forward_packed on the projection they are the heads
    of (`_projection`), its output viewed back as [B, H, L, E]: the fused kernels' layout."""
    g = gm.graph
    scale = bound["scale"]
    if scale is None:
        scale = 1.0 / math.sqrt(_concrete(_val(bound["query"]).shape[-1]))
    x = _projection(bound)
    with g.inserting_before(node):
        if x is not None:
            heads = _concrete(_val(bound["query"]).shape[1])
            both = g.call_function(torch.ops.mlir_sym.attention_forward_packed.default,
                                   (x, heads, bool(bound["is_causal"]), float(scale)))
        else:
            q, k, v = (g.call_method("transpose", (bound[n], 1, 2)) for n in ("query", "key", "value"))
            both = g.call_function(torch.ops.mlir_sym.attention_forward.default,
                                   (q, k, v, bool(bound["is_causal"]), float(scale)))
        out = g.call_method("transpose", (g.call_function(operator.getitem, (both, 0)), 1, 2))
    for n in {both, out} | set(out.all_input_nodes):
        n.meta.update({k: v for k, v in node.meta.items() if k in ("stack_trace", "nn_module_stack")})
    out.meta.update(node.meta)
    node.replace_all_uses_with(out)
    g.erase_node(node)


def math_form_for_grad(gm: fx.GraphModule, library: str = "cuda") -> tuple[int, int]:
    """Each Dynamo-graph call of scaled_dot_product_attention whose q, k, v or mask requires grad
    becomes one of two forms that AOTAutograd can differentiate. Traced as it is, a training graph
    held the fused kernels' backward ops (`_scaled_dot_product_flash_attention_for_cpu_backward`,
    and flash / memory-efficient backward on CUDA), which torch-mlir cannot lower.
      - attention_forward on [B, L, H, E] views of q, k, v (`library_for_grad_why_not(call, library)`
        allows it): its backward is attention_backward, from the saved out and log-sum-exp rows. On
        the GPU both are calls of PyTorch's memory-efficient kernels.
      - else PyTorch's math form (`aten._scaled_dot_product_attention_math`: matmuls, the mask,
        softmax), which AOTAutograd decomposes and differentiates op by op; it saves the
        probabilities for the backward.
    Either output keeps the fused kernels' memory layout (`_layout`: a [B, L, H, E] buffer for rank
    4), so views the user code takes of it trace as they run eagerly. Returns how many calls took
    each form: (attention_forward, math)."""
    count = taken = 0
    for node, bound in _sdpa_calls(gm):
        vals = [_val(bound[n]) for n in ("query", "key", "value", "attn_mask")]
        if not any(isinstance(t, torch.Tensor) and t.requires_grad for t in vals):
            continue
        why = library_for_grad_why_not(bound, library)
        if why is None:
            _library_for_grad(gm, node, bound)
            taken += 1
            continue
        log.debug("differentiated attention at %s is in math form: %s", node.meta.get("stack_trace", "?"), why)
        g = gm.graph
        with g.inserting_before(node):
            query, scale = bound["query"], bound["scale"]
            if scale is None and _concrete(vals[0].shape[-1]) is None:
                # a symbolic head dim: the default scale 1 / sqrt(E) would be a SymFloat that the
                # backward graph takes as an input (not supported); a 0-d tensor scales q instead
                e = g.call_method("size", (query, -1))
                t = g.call_function(torch.full, ((), e), {"dtype": torch.float32, "device": vals[0].device})
                query = g.call_function(operator.mul, (query, g.call_method("rsqrt", (t,))))
                scale = 1.0
            mask = bound["attn_mask"]
            if isinstance(vals[3], torch.Tensor) and vals[3].dtype == torch.bool:
                # F.scaled_dot_product_attention gives the math form a bool mask as 0 / -inf (where
                # True keeps a score); the math op itself would add True as 1 and False as 0
                mask = g.call_function(torch.where, (mask, 0.0, float("-inf")))
                mask = g.call_method("to", (mask, vals[0].dtype))
            both = g.call_function(torch.ops.aten._scaled_dot_product_attention_math.default,
                                   (query, bound["key"], bound["value"], mask,
                                    bound["dropout_p"], bound["is_causal"], None),
                                   {"scale": scale, "enable_gqa": bool(bound["enable_gqa"])})
            out = g.call_function(operator.getitem, (both, 0))
            if vals[0].dim() == 4:
                out = g.call_method("transpose", (out, 1, 2))
                out = g.call_method("contiguous", (out,))
                out = g.call_method("transpose", (out, 1, 2))
        for n in {both, out} | set(out.all_input_nodes):
            n.meta.update({k: v for k, v in node.meta.items() if k in ("stack_trace", "nn_module_stack")})
        out.meta.update(node.meta)
        node.replace_all_uses_with(out)
        g.erase_node(node)
        count += 1
    if count or taken:
        gm.recompile()
    return taken, count


FUSED_MAX_HEAD = 128  # q/k and v head dims the fused GPU kernel takes (q's row in registers, k/v tiles in shared memory)
_FUSED_DTYPES = (torch.float32, torch.bfloat16, torch.float16)


def _concrete(size) -> int | None:
    """A size as an int when it is one (a SymInt whose value is fixed included), else None."""
    if isinstance(size, int):
        return size
    node = getattr(size, "node", None)
    if node is None:
        return None
    if node.is_constant():
        return int(node.constant)
    expr = node.expr
    if getattr(node, "shape_env", None) is not None:  # a symbol the shape env specialized (s2 = 768)
        expr = node.shape_env.replace(expr)
    return int(expr) if getattr(expr, "is_Integer", False) else None


def fused_kernel_why_not(node: fx.Node) -> str | None:
    """Why an mlir_sym::attention node cannot be the fused GPU kernel (sym-gpu-attention), or None."""
    q, k, v, mask, causal, scale = node.args
    qv, kv, vv = _val(q), _val(k), _val(v)
    if qv.dtype not in _FUSED_DTYPES:
        return f"dtype {qv.dtype}"
    for name, t in (("q/k", qv), ("v", vv)):
        head = _concrete(t.shape[-1])
        if head is None or not 0 < head <= FUSED_MAX_HEAD:
            return f"{name} head dim {head} is not a number in [1, {FUSED_MAX_HEAD}]"
    if scale is not None and not isinstance(scale, (int, float)):
        return "scale is not a number"
    if mask is not None:
        mv = _val(mask)
        scores = (*qv.shape[:-1], kv.shape[-2])
        for m, full in zip(reversed(mv.shape), reversed(scores)):
            if not (_concrete(m) == 1 or _equal(m, full)):
                return f"mask dim {m} is neither 1 nor the scores' {full}"
    return None



def expand_attention_training(graph: fx.Graph, keep: bool = False) -> int:
    """Write each attention_forward / attention_backward node of an aten graph (and their packed
    forms: q, k, v the heads of one projection, dq, dk, dv concatenated) as core aten ops (their
    results' getitem users replaced); with `keep` (the GPU: calls of PyTorch's kernels,
    sym-torch-attention) they stay. In float32 (half inputs converted, results rounded once), batch
    and heads collapsed into one batch dim of bmms, s = scale * q k^T (-inf above the diagonal when
    causal):
        forward:  lse = max(s) + log(sum(exp(s - max(s)))), out = exp(s - lse) v
        backward: p = exp(s - lse), dv = p^T dout, ds = p * (dout v^T - rowsum(dout * out)),
                  dq = scale * ds k, dk = scale * ds^T q
    Returns how many nodes."""
    if keep:
        return 0
    aten, prims, ops = torch.ops.aten, torch.ops.prims, torch.ops.mlir_sym
    forward, backward = (ops.attention_forward.default, ops.attention_forward_packed.default), \
        (ops.attention_backward.default, ops.attention_backward_packed.default)
    count = 0
    for node in list(graph.nodes):
        if node.op != "call_function" or node.target not in forward + backward:
            continue
        e = Emitter(graph, node)
        causal, scale = node.args[-2:]
        tensors = list(node.args[:-2])
        if node.target is ops.attention_forward_packed.default:  # q, k, v: the heads of the projection
            qkv, n = tensors[0], tensors[1]
            width = e.size(qkv, 2)
            split = e(aten.view.default, qkv, [e.size(qkv, 0), e.size(qkv, 1), 3, n,
                                                e.scalar(operator.floordiv, width, 3 * n)])
            tensors = [e(aten.select.int, split, 2, i) for i in range(3)]
        first = tensors[1] if node.target in backward else tensors[0]  # q
        dtype = _val(first).dtype
        b, heads = e.size(first, 0), e.size(first, 2)

        def heads_first(t: fx.Node) -> fx.Node:  # [B, L, H, E] -> [B * H, L, E] in float32
            t = e(aten.permute.default, t, [0, 2, 1, 3])
            if dtype != torch.float32:
                t = e(prims.convert_element_type.default, t, torch.float32)
            # a reshape to sizes read from the tensor, not prims.collapse: a backward's incoming grad
            # may have a dynamic batch dim in its type whose value the ShapeEnv fixed (1), and
            # collapse_shape's verifier rejects a static product of a dynamic dim
            return merge(t)

        def merge(t: fx.Node) -> fx.Node:  # dims 0 and 1 as one
            rest = [e.size(t, d) for d in range(2, _val(t).dim())]
            return e(aten.reshape.default, t, [e.scalar(operator.mul, e.size(t, 0), e.size(t, 1)), *rest])

        def back(t: fx.Node) -> fx.Node:  # [B * H, L, E] -> [B, L, H, E] in the inputs' dtype
            t = e(aten.view.default, t, [b, heads, e.size(t, 1), e.size(t, 2)])
            t = e(aten.clone.default, e(aten.permute.default, t, [0, 2, 1, 3]), memory_format=torch.contiguous_format)
            return t if dtype == torch.float32 else e(prims.convert_element_type.default, t, dtype)

        def scores(qt: fx.Node, kt: fx.Node) -> fx.Node:
            s = e(aten.bmm.default, e(aten.mul.Tensor, qt, scale), e(aten.transpose.int, kt, 1, 2))
            if causal:
                rows = e(aten.arange.default, e.size(qt, 1), dtype=torch.int64, device=_val(qt).device)
                cols = e(aten.arange.default, e.size(kt, 1), dtype=torch.int64, device=_val(qt).device)
                later = e(aten.gt.Tensor, e(aten.unsqueeze.default, cols, 0), e(aten.unsqueeze.default, rows, 1))
                s = e(aten.masked_fill.Scalar, s, later, float("-inf"))
            return s

        if node.target in forward:
            q, k, v = (heads_first(t) for t in tensors)
            s = scores(q, k)
            top = e(aten.amax.default, s, [-1], True)
            total = e(aten.sum.dim_IntList, e(aten.exp.default, e(aten.sub.Tensor, s, top)), [-1], True)
            lse = e(aten.add.Tensor, e(aten.log.default, total), top)  # [B * H, L, 1]
            out = e(aten.bmm.default, e(aten.exp.default, e(aten.sub.Tensor, s, lse)), v)
            lse = e(aten.view.default, lse, [b, heads, e.size(lse, 1)])
            results = (back(out), lse)
        else:
            g, q, k, v, o = (heads_first(t) for t in tensors[:5])
            lse = e(aten.unsqueeze.default, merge(tensors[5]), -1)
            p = e(aten.exp.default, e(aten.sub.Tensor, scores(q, k), lse))
            dv = e(aten.bmm.default, e(aten.transpose.int, p, 1, 2), g)
            dp = e(aten.bmm.default, g, e(aten.transpose.int, v, 1, 2))
            rowsum = e(aten.sum.dim_IntList, e(aten.mul.Tensor, g, o), [-1], True)
            ds = e(aten.mul.Tensor, p, e(aten.sub.Tensor, dp, rowsum))
            dq = e(aten.mul.Tensor, e(aten.bmm.default, ds, k), scale)
            dk = e(aten.mul.Tensor, e(aten.bmm.default, e(aten.transpose.int, ds, 1, 2), q), scale)
            results = (back(dq), back(dk), back(dv))
            if node.target is ops.attention_backward_packed.default:  # one result: [B, L, 3 * H * E]
                flat = [e(prims.collapse.default, t, 2, 3) for t in results]
                node.replace_all_uses_with(e(aten.cat.default, flat, -1))
                graph.erase_node(node)
                count += 1
                continue
        for user in list(node.users):
            if user.op != "call_function" or user.target is not operator.getitem:
                raise RuntimeError(f"{node.target} at {node.meta.get('stack_trace', '?')}: a use that is not an item of it")
            user.replace_all_uses_with(results[user.args[1]])
            graph.erase_node(user)
        graph.erase_node(node)
        count += 1
    return count


def packed_qkv_grads(graph: fx.Graph) -> int:
    """`cat([dq, dk, dv] each flattened to [B, L, H * E], -1)` of one attention_backward (the backward
    of a projection split into q, k and v) as attention_backward_packed: PyTorch's memory-efficient
    kernel writes the three into one [B, L, 3, H, E] buffer, which is that concatenation (no copy
    of the grads and no concatenation kernel). After composed_permutes (the grads' transposes to
    the user's [B, H, L, E] and back are gone). Returns how many."""
    aten = torch.ops.aten
    flattens = (aten.view.default, aten._unsafe_view.default, aten.reshape.default)
    count = 0
    for node in list(graph.nodes):
        if node.op != "call_function" or node.target is not torch.ops.mlir_sym.attention_backward.default:
            continue
        q, k, v = (_val(a) for a in node.args[1:4])
        if not (_same_dims(q.shape, k.shape) and _same_dims(q.shape, v.shape)) or len(node.users) != 3:
            continue
        items: dict[int, fx.Node] = {u.args[1]: u for u in node.users if u.target is operator.getitem}
        flat = [next(iter(items[i].users), None) if i in items and len(items[i].users) == 1 else None for i in range(3)]
        merged = (q.shape[0], q.shape[1], q.shape[2] * q.shape[3])  # [B, L, H * E]: the chunk's layout
        if any(f is None or f.target not in flattens or len(f.users) != 1 or not _same_dims(_val(f).shape, merged)
               for f in flat):
            continue
        cat = next(iter(flat[0].users))
        if cat.target is not aten.cat.default or list(cat.args[0]) != flat or \
                (cat.args[1] if len(cat.args) > 1 else cat.kwargs.get("dim", 0)) not in (2, -1):
            continue
        with graph.inserting_before(cat):
            packed = graph.call_function(torch.ops.mlir_sym.attention_backward_packed.default, node.args)
        packed.meta.update(cat.meta)
        cat.replace_all_uses_with(packed)
        for n in (cat, *flat, *items.values(), node):
            graph.erase_node(n)
        count += 1
    return count

_NO_VALUE = None  # what _MaskValues gives for an element it cannot write as an expression of the indices
_SMALL = 1 << 20  # constants read as exact: positions plus such offsets stay far from int32's range


def _is_bool(a: Any) -> bool | None:
    """Whether an operand is bool (a Python bool or a bool tensor), an integer (False), or neither (None)."""
    if isinstance(a, bool):
        return True
    if isinstance(a, int):
        return False if abs(a) <= _SMALL else None
    v = _val(a) if isinstance(a, fx.Node) else None
    if not isinstance(v, torch.Tensor):
        return None
    return True if v.dtype == torch.bool else False if v.dtype in (torch.int32, torch.int64) else None


class _MaskValues:
    """A bool tensor of an aten graph computed from sizes alone (aranges, comparisons, views, expands),
    element by element: `at(node, idx)` is a sympy expression of the index symbols `idx` (one per dim of
    the node), or None where the node or an op on the way is not understood. Only ops whose element
    (i0, i1, ...) is a closed form of the indices are read; anything loaded from memory is None.
    Integers and bools are kept apart (sympy reads an integer symbol as a boolean in And / Not, and
    `Eq(1, True)` as false, unlike torch): arithmetic and comparisons take int32 / int64 operands and
    constants of at most 2^20 (no wrap-around), logical ops take bools."""

    def __init__(self) -> None:
        import sympy

        self.sp = sympy
        aten = torch.ops.aten
        self._rel = {aten.le.Tensor: sympy.Le, aten.lt.Tensor: sympy.Lt, aten.ge.Tensor: sympy.Ge,
                     aten.gt.Tensor: sympy.Gt, aten.eq.Tensor: sympy.Eq, aten.le.Scalar: sympy.Le,
                     aten.lt.Scalar: sympy.Lt, aten.ge.Scalar: sympy.Ge, aten.gt.Scalar: sympy.Gt}

    def at(self, a: Any, idx: tuple) -> Any:
        sp = self.sp
        if isinstance(a, bool):
            return sp.true if a else sp.false
        if isinstance(a, int):
            return sp.Integer(a)
        if not isinstance(a, fx.Node) or a.op != "call_function":
            return _NO_VALUE
        aten = torch.ops.aten
        t, args, val = a.target, a.args, _val(a)
        if not isinstance(val, torch.Tensor) or val.dim() != len(idx):
            return _NO_VALUE
        if val.dtype not in (torch.int64, torch.int32, torch.bool):
            return _NO_VALUE  # only values that neither round nor wrap (uint8 j - i) are exact expressions
        kw = a.kwargs
        if t in (aten.arange.default, aten.arange.start, aten.arange.start_step):
            start = args[0] if t is not aten.arange.default and len(args) > 1 else 0
            step = args[2] if len(args) > 2 else kw.get("step", 1)
            if type(start) is not int or type(step) is not int or abs(start) > _SMALL or abs(step) > _SMALL:
                return _NO_VALUE
            return sp.Integer(start) + step * idx[0]
        if t in (aten.add.Tensor, aten.sub.Tensor, aten.mul.Tensor):
            if kw.get("alpha", 1) != 1 or (len(args) > 2 and args[2] != 1) or val.dtype == torch.bool \
                    or any(_is_bool(o) is not False for o in args[:2]):
                return _NO_VALUE
            x, y = (self._broadcast(o, val, idx) for o in args[:2])
            if x is None or y is None:
                return _NO_VALUE
            return x + y if t is aten.add.Tensor else x - y if t is aten.sub.Tensor else x * y
        if t in self._rel:
            if any(_is_bool(o) is not False for o in args[:2]):
                return _NO_VALUE
            x, y = (self._broadcast(o, val, idx) for o in args[:2])
            return _NO_VALUE if x is None or y is None else self._rel[t](x, y)
        if t in (aten.logical_and.default, aten.bitwise_and.Tensor, aten.logical_or.default, aten.bitwise_or.Tensor):
            if val.dtype != torch.bool or any(_is_bool(o) is not True for o in args[:2]):
                return _NO_VALUE
            x, y = (self._broadcast(o, val, idx) for o in args[:2])
            if x is None or y is None:
                return _NO_VALUE
            return sp.And(x, y) if t in (aten.logical_and.default, aten.bitwise_and.Tensor) else sp.Or(x, y)
        if t in (aten.logical_not.default, aten.bitwise_not.default) and val.dtype == torch.bool:
            if _is_bool(args[0]) is not True:
                return _NO_VALUE
            x = self.at(args[0], idx)
            return _NO_VALUE if x is None else sp.Not(x)
        if t in (aten.full.default, aten.full_like.default, aten.ones.default, aten.zeros.default,
                 aten.ones_like.default, aten.zeros_like.default):
            full = t in (aten.full.default, aten.full_like.default)
            fill = args[1] if full else int(t in (aten.ones.default, aten.ones_like.default))
            if type(fill) not in (bool, int):
                return _NO_VALUE
            return (sp.true if fill else sp.false) if val.dtype == torch.bool else sp.Integer(fill)
        if t in (aten.tril.default, aten.triu.default) and val.dim() >= 2:
            diag = args[1] if len(args) > 1 else kw.get("diagonal", 0)
            x = self.at(args[0], idx)
            if x is None or type(diag) is not int or val.dtype != torch.bool or abs(diag) > _SMALL:
                return _NO_VALUE
            i, j = idx[-2], idx[-1]
            keep = sp.Le(j, i + diag) if t is aten.tril.default else sp.Ge(j, i + diag)
            return sp.And(keep, x)
        if t in (aten.clone.default, aten.alias.default, aten.lift_fresh_copy.default):
            return self.at(args[0], idx)
        if t in (aten._to_copy.default, torch.ops.prims.convert_element_type.default):
            src = _val(args[0])
            same = isinstance(src, torch.Tensor) and src.dtype == val.dtype
            return self.at(args[0], idx) if same else _NO_VALUE
        if t is aten.unsqueeze.default:
            d = args[1] % len(idx)
            return self.at(args[0], idx[:d] + idx[d + 1:])
        if t is aten.slice.Tensor:
            d = (args[1] if len(args) > 1 else 0) % len(idx)
            start = args[2] if len(args) > 2 else 0
            step = args[4] if len(args) > 4 else 1
            start = 0 if start is None else start
            if type(start) is not int or type(step) is not int or start < 0:
                return _NO_VALUE
            return self.at(args[0], idx[:d] + (start + step * idx[d],) + idx[d + 1:])
        if t is aten.expand.default:
            return self._broadcast(args[0], val, idx)
        if t in (aten.view.default, aten._unsafe_view.default, aten.reshape.default):
            return self._unit_view(args[0], val, idx)
        return _NO_VALUE

    def _broadcast(self, a: Any, out: torch.Tensor, idx: tuple) -> Any:
        """Element idx of `out` read from `a`, which broadcasts to out's shape (a scalar, or a tensor
        whose trailing dims are out's or 1)."""
        if not isinstance(a, fx.Node):
            return self.at(a, ())
        av = _val(a)
        if not isinstance(av, torch.Tensor) or av.dim() > len(idx):
            return _NO_VALUE
        lead = len(idx) - av.dim()
        sub = []
        for d, size in enumerate(av.shape):
            if _concrete(size) == 1 and _concrete(out.shape[lead + d]) != 1:
                sub.append(self.sp.Integer(0))
            elif _equal(size, out.shape[lead + d]):
                sub.append(idx[lead + d])
            else:
                return _NO_VALUE
        return self.at(a, tuple(sub))

    def _unit_view(self, a: Any, out: torch.Tensor, idx: tuple) -> Any:
        """A view that only inserts or removes dims of size 1."""
        av = _val(a)
        if not isinstance(av, torch.Tensor):
            return _NO_VALUE
        kept = [d for d, s in enumerate(out.shape) if _concrete(s) != 1]
        src = [d for d, s in enumerate(av.shape) if _concrete(s) != 1]
        if len(kept) != len(src) or not all(_equal(out.shape[o], av.shape[s]) for o, s in zip(kept, src)):
            return _NO_VALUE
        sub = [self.sp.Integer(0)] * av.dim()
        for o, s in zip(kept, src):
            sub[s] = idx[o]
        return self.at(a, tuple(sub))


def _is_causal_relation(expr: Any, i: Any, j: Any) -> bool:
    """Whether a sympy relation over integers is exactly `j <= i` (also `i >= j`, `j < i + 1`, ...)."""
    import sympy as sp

    if not isinstance(expr, (sp.Le, sp.Lt, sp.Ge, sp.Gt)):
        return False
    lhs, rhs = expr.lhs, expr.rhs
    if isinstance(expr, (sp.Ge, sp.Gt)):
        lhs, rhs = rhs, lhs
    slack = 1 if isinstance(expr, (sp.Lt, sp.Gt)) else 0  # a < b is a - b + 1 <= 0 on integers
    return sp.expand(lhs - rhs + slack - (j - i)) == 0


def causal_masks_enabled() -> bool:
    """MLIR_SYM_CAUSAL_MASKS=0 keeps causal masks as masks (to measure what `causal_masks` saves)."""
    return os.environ.get("MLIR_SYM_CAUSAL_MASKS", "1") != "0"


def causal_masks(graph: fx.Graph) -> int:
    """Give mlir_sym::attention nodes whose bool mask is the causal one (`mask[..., i, j] = j <= i` for
    every element, computed from aranges of the sizes: what HuggingFace's `sdpa_mask` builds under
    torch.compile, or a `tril` of ones) is_causal=True and no mask, and drop the mask's ops nothing else
    reads. Exact: PyTorch's is_causal is that same top-left-aligned mask. The fused GPU kernel then
    skips the keys past the diagonal instead of loading a mask, and PyTorch's kernels (the library
    branch) take their causal paths instead of converting a bool mask (two fills, a masked fill and a
    copy per call on the cuDNN path). Returns how many nodes changed."""
    import sympy as sp

    values = _MaskValues()
    count = 0
    for node in list(graph.nodes):
        if node.op != "call_function" or node.target is not torch.ops.mlir_sym.attention.default:
            continue
        q, k, v, mask, causal, scale = node.args
        if mask is None or causal:
            continue
        mv, qv, kv = _val(mask), _val(q), _val(k)
        if not isinstance(mv, torch.Tensor) or mv.dtype != torch.bool or mv.dim() < 2:
            continue
        if not (_equal(mv.shape[-2], qv.shape[-2]) and _equal(mv.shape[-1], kv.shape[-2])):
            continue  # a mask broadcast over the query or key positions is not causal
        idx = tuple(sp.Symbol(f"i{d}", integer=True, nonnegative=True) for d in range(mv.dim()))
        try:
            expr = values.at(mask, idx)
        except (TypeError, ValueError, IndexError) as e:  # an op with arguments of another form than read
            log.debug("attention mask at %s not read: %s", node.meta.get("stack_trace", "?"), e)
            continue
        if expr is None or not _is_causal_relation(expr, idx[-2], idx[-1]):
            continue
        node.args = (q, k, v, None, True, scale)
        count += 1
        _erase_unused(graph, mask)
    return count


def _erase_unused(graph: fx.Graph, node: fx.Node) -> None:
    """Erase `node` and, transitively, its inputs once nothing reads them (pure call_function nodes)."""
    work = [node]
    while work:
        n = work.pop()
        if n.op != "call_function" or n.users or n.is_impure():
            continue
        inputs = list(n.all_input_nodes)
        graph.erase_node(n)
        work.extend(inputs)


def expand_attention(graph: fx.Graph, keep_fused: bool = False) -> int:
    """Write each mlir_sym::attention node of an aten graph as core aten ops (see the module doc); with
    `keep_fused` (the GPU), nodes the fused kernel serves stay as they are."""
    aten, prims = torch.ops.aten, torch.ops.prims
    count = 0
    for node in list(graph.nodes):
        if node.op != "call_function" or node.target is not torch.ops.mlir_sym.attention.default:
            continue
        if keep_fused:
            why = fused_kernel_why_not(node)
            if why is None:
                continue
            log.debug("attention at %s is expanded, not the fused GPU kernel: %s", node.meta.get("stack_trace", "?"), why)
        q, k, v, mask, causal, scale = node.args
        qv = _val(q)
        e = Emitter(graph, node)
        nb = qv.dim() - 2
        head = qv.shape[-1]
        if scale is None and isinstance(head, torch.SymInt):
            # a float computed from a size: the importer makes it an input (_derive_float_scalars)
            root = e.scalar(torch._sym_sqrt, e.size(q, nb + 1))
            scale = e.scalar(operator.truediv, 1.0, root)
        elif scale is None:
            scale = 1.0 / math.sqrt(int(head))
        batch = [e.size(q, d) for d in range(nb)]
        length, kv_len = e.size(q, nb), e.size(k, nb)

        def collapse(t: fx.Node) -> fx.Node:
            return e(prims.collapse.default, t, 0, nb - 1) if nb > 1 else t

        def wide(t: fx.Node) -> fx.Node:
            return e(prims.convert_element_type.default, t, torch.float32)

        half = qv.dtype in _HALF
        if half:
            # in float32, rounded once at the end (PyTorch's math form for half types); the products read
            # the half buffers (sym-matmul-half-operands), the scale applies to the float32 scores
            kt = wide(e(aten.transpose.int, collapse(k), 1, 2))
            scores = e(aten.mul.Tensor, e(aten.bmm.default, wide(collapse(q)), kt), scale)
        else:
            kt = e(aten.transpose.int, collapse(k), 1, 2)
            scores = e(aten.bmm.default, collapse(e(aten.mul.Tensor, q, scale)), kt)
        scores = e(aten.view.default, scores, [*batch, length, kv_len])
        fully_masked = mask is not None  # rows may be all -inf: PyTorch's safe softmax gives them 0
        if causal:
            rows = e(aten.arange.default, length, dtype=torch.int64, device=qv.device)
            cols = e(aten.arange.default, kv_len, dtype=torch.int64, device=qv.device)
            later = e(aten.gt.Tensor, e(aten.unsqueeze.default, cols, 0), e(aten.unsqueeze.default, rows, 1))
            scores = e(aten.masked_fill.Scalar, scores, later, float("-inf"))
            fully_masked = False  # row i keeps column 0
        elif mask is not None and _val(mask).dtype == torch.bool:
            scores = e(aten.masked_fill.Scalar, scores, e(aten.logical_not.default, mask), float("-inf"))
        elif mask is not None:
            scores = e(aten.add.Tensor, scores, mask)
        probs = e(aten._softmax.default, scores, -1, False)
        if fully_masked:
            is_inf = e(aten.eq.Scalar, scores, float("-inf"))
            probs = e(aten.masked_fill.Scalar, probs, e(aten.all.dim, is_inf, -1, True), 0.0)
        if half:  # rounded to the half type for the second product, as PyTorch's fused kernels (flash) do
            probs = wide(collapse(e(prims.convert_element_type.default, probs, qv.dtype)))
            out = e(aten.bmm.default, probs, wide(collapse(v)))
        else:
            out = e(aten.bmm.default, collapse(probs), collapse(v))
        if nb > 1:
            out = e(aten.view.default, out, [*batch, length, e.size(v, nb + 1)])
        if half:
            out = e(prims.convert_element_type.default, out, qv.dtype)
        node.replace_all_uses_with(out)
        graph.erase_node(node)
        count += 1
    return count

