"""Rewrites of the aten FX graph that give compiled code eager PyTorch's numerics, where torch-mlir's
lowerings differ from them. Run by the importer after AOTAutograd, before torch-mlir; each returns
the number of nodes it rewrote.

`widen_half_reductions`: reductions that accumulate (sum, mean, cumsum, prod) on bfloat16 / float16
get `dtype=float32` and their result is converted back: PyTorch's kernels accumulate in float32 and
round once; torch-mlir's lowering would accumulate in the input type (a 4096-long bf16 row sum of
ones stops at 256).

`half_math_in_float`: every other pointwise or reducing op on bfloat16 / float16 that eager computes
in float32 ("opmath": its CPU and CUDA kernels load, compute in float32, round once) gets its half
inputs converted to float32 and its result converted back. torch-mlir lowers such ops in the input
type, rounding every intermediate: 30-78 % of bf16 tanh-gelu and selu results and 34 % of f16
sigmoid results differed from eager's, and `linalg_vector_norm` and `var` accumulated in bf16 (a
norm over 512 elements was off by 4.0). Ops exact in the half type stay as they are, and so do
additions, subtractions, multiplications and divisions of half tensors: in the half type they are
correctly rounded, as eager's float32 result rounded once is (double rounding aside). With a Python
scalar, eager's kernels round the scalar to the half type for + and - (as torch-mlir does) but
multiply and divide by its float32 value (`x * 0.7071067811865476`: torch-mlir's product by the bf16
0.70703125 differed from eager's in 45 % of the elements): those, and divisions with a rounding
mode (a quotient just below an integer must not round up to it before the floor), are computed in
float32. Each op's result is rounded where eager rounds it, but the CPU JIT keeps chains of bf16 arithmetic
in float32 (`arith-emulate-unsupported-floats` folds its own conversions), as inductor does.

`nan_propagating_selections`: torch-mlir lowers `clamp` (and `clamp_min`, `clamp_max`, `hardtanh`,
`relu6`, `hardsigmoid`) and `maximum` / `minimum` with compares that are false, or unordered-true, on
NaN, so `x.clamp(0, 1)` turned NaN into 0 and `torch.maximum(nan, 1.0)` gave 1.0; eager propagates
the NaN; `logaddexp(nan, -inf)` gave -inf. Such an op on a float tensor `x` becomes `where(isnan(x), x, op(x, ...))` (one compare and
a select in the fused kernel).

`tanh_gelu_formula`: torch-mlir's `gelu(x, approximate="tanh")` multiplies by 0.797724 where the
formula has sqrt(2 / pi) = 0.7978845608 (a relative error of 2e-4, 5e-5 absolute at x = 1.3 in
float32); it becomes eager's formula (in float32 for half inputs), `0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3)))`.

`pow_special_exponents`: eager computes `x ** 0.5` as sqrt, `x ** -0.5` as rsqrt, `x ** 2` and `x ** 3`
as products, `x ** -1` and `x ** -2` as quotients (its CPU and CUDA pow kernels special-case these);
torch-mlir calls powf, which differs on signed zeros and infinities (`(-inf) ** 0.5` is inf for powf,
nan for sqrt) and costs a GPU kernel far more than a multiplication. Such pows on float tensors
become those ops.

`exact_integer_division`: torch-mlir lowers an integer `div(a, b, rounding_mode="floor")` (and `//`)
through float64 (`floor(sitofp(a) / sitofp(b))`: wrong beyond 2^53, and no zero check) and has no
lowering for integer `fmod` or for integer `pow` by a constant: they become the truncating
division (checked for zero by sym-checked-int-division) with floor's correction,
`a - trunc(a / b) * b`, and square-and-multiply products (wrapping as eager's do).

`python_floor_division`: eager divides floats with `rounding_mode="floor"` (and `//`) as Python does,
from the remainder: `(a - fmod(a, b)) / b`, corrected by one where the remainder's sign differs from
the divisor's, then floored (ATen's div_floor_floating); torch-mlir floors the quotient, which a
rounding up of `a / b` makes one too large (`1.0 // 0.1` is 9.0 in eager and Python, `floor(1.0 / 0.1)`
is 10.0), and `inf // x` is NaN, `88.7 // -inf` is -1.0. Float floor divisions become eager's formula.

`byte_divisions`: torch-mlir's lowering of `div(rounding_mode=...)`, `remainder` and `fmod` of int8 and
uint8 tensors crashed the process by a Python int (a segmentation fault in torch-to-linalg:
`x.to(torch.int8) // -1`) and divided uint8 as signed (`fmod(uint8 255, 7)` gave 255); they are
computed in int32 (every result fits) and converted back.

`float_comparison_scalars`: torch-mlir folds a comparison of a constant float tensor with a Python int
to false (`torch.zeros(()) == 0`, `torch.ones(3) > 0`: a `where` on such a condition took the other
branch); a float tensor's comparison with an int compares with the int's float value instead, as
eager converts it.

`self_comparisons_as_isnan`: torch-mlir folds `aten.eq.Tensor(x, x)` to true when x's shape is static
(any static graph, and every variant specialized to sizes), which is false for NaN: PyTorch's
`isfinite(x)` is `(x == x) & (x.abs() != inf)`, so `torch.isfinite(nan)` was True, and `frexp(nan)`
gave (0.75, 129). A float tensor compared with itself becomes `~isnan(x)` (`==`, `<=`, `>=`) or
`isnan(x)` (`!=`).

`reciprocal_as_division`: torch-mlir's `reciprocal` asserts that no element is zero (a runtime error
"unimplemented: tensor with zero element"); eager gives inf. It becomes `1 / x`.
"""
from __future__ import annotations

import math

import torch
import torch.fx as fx

from mlir_sym.fx_rewrites import Emitter

_HALF = (torch.bfloat16, torch.float16)
aten, prims = torch.ops.aten, torch.ops.prims

# Reductions that accumulate and take a `dtype` argument.
_ACCUMULATING = {"aten.sum.dim_IntList", "aten.sum.default", "aten.mean.dim", "aten.mean.default",
                 "aten.cumsum.default", "aten.prod.default", "aten.prod.dim_int"}

# Reductions and normalizations without a `dtype` argument that eager computes in float32.
_FLOAT_REDUCTIONS = {
    "aten.linalg_vector_norm.default", "aten.var.correction", "aten.var.dim", "aten.std.correction",
    "aten.std.dim", "aten.logsumexp.default", "aten._softmax.default", "aten._log_softmax.default",
    "aten._softmax_backward_data.default", "aten._log_softmax_backward_data.default",
    "aten.norm.ScalarOpt_dim", "aten.cumprod.default", "aten.logcumsumexp.default",
    "aten.mse_loss.default", "aten.smooth_l1_loss.default", "aten.huber_loss.default",
}

# Pointwise ops whose result in the half type is exact (selection, sign, rounding to integers):
# computing them in float32 changes nothing.
_EXACT = {
    "abs", "neg", "relu", "sign", "sgn", "signbit", "where", "masked_fill", "clamp", "clamp_min",
    "clamp_max", "maximum", "minimum", "fmax", "fmin", "floor", "ceil", "round", "trunc", "frac",
    "hardtanh", "threshold", "threshold_backward", "nan_to_num", "copy", "fill", "clone", "copysign",
    "isnan", "isinf", "isfinite", "isneginf", "isposinf", "lift_fresh_copy", "heaviside", "nextafter",
}

# Binary ops whose other operand eager converts to the half type before computing in float32: a
# Python scalar (`x % 0.7` divides by bf16's 0.69921875) or a 0-d tensor of another float type
# (measured on the CPU: 5-84 % of bf16 results differed when it was used unrounded). Multiplication
# and division keep the scalar's float32 value (_SCALED), as do scalar parameters (lerp's weight).
_ROUNDS_OTHER_OPERANDS = {"pow", "fmod", "remainder", "atan2", "hypot", "copysign", "nextafter", "xlogy",
                          "logaddexp", "logaddexp2", "fmax", "fmin", "maximum", "minimum"}

# Correctly rounded in the half type (as eager's float32 result rounded once is). Eager's CPU kernels
# round a Python scalar operand of add / sub / rsub to the half type, as torch-mlir does, but multiply
# and divide by the scalar's float32 value; its CUDA kernels add and subtract a CPU scalar at float32
# too (opmath_symmetric_gpu_kernel_with_scalars; measured on an H100: `x - 0.7` in bf16).
_ARITH = {"add", "sub", "rsub"}
_SCALED = {"mul", "div"}


def _val(a):
    return a.meta.get("val") if isinstance(a, fx.Node) else None


def _tensor_of(a, dtype) -> bool:
    v = _val(a)
    return isinstance(v, torch.Tensor) and v.dtype == dtype


def _calls(graph: fx.Graph, target: str) -> list[fx.Node]:
    """The graph's calls of `target` ("aten.gelu.default"), listed first: the rewrites replace them."""
    return [n for n in graph.nodes if n.op == "call_function" and str(n.target) == target]


def _one_over(e: Emitter, x, val: torch.Tensor) -> fx.Node:
    """`1 / x` as eager divides: a 0-d one of the result's type over `x`."""
    return e(aten.div.Tensor, e(aten.full.default, [], 1.0, dtype=val.dtype, device=val.device), x)


def _replace(graph: fx.Graph, node: fx.Node, new: fx.Node) -> int:
    """`node`'s uses read `new` and `node` goes; 1, the count of rewritten nodes."""
    node.replace_all_uses_with(new)
    graph.erase_node(node)
    return 1


def _packet(node: fx.Node) -> str:
    """'aten.add.Tensor' -> 'add'."""
    parts = str(node.target).split(".")
    return parts[1] if len(parts) >= 2 else parts[0]


def _wants_float(node: fx.Node, dtype: torch.dtype) -> bool:
    name = str(node.target)
    if name in _FLOAT_REDUCTIONS:
        return True
    if not isinstance(node.target, torch._ops.OpOverload) or torch.Tag.pointwise not in node.target.tags:
        return False
    op = _packet(node)
    if op in _EXACT:
        return False
    val = node.meta.get("val")
    if op in _ARITH and not (isinstance(val, torch.Tensor) and val.device.type == "cuda"):
        return False
    if op in _SCALED or op in _ARITH:
        return node.kwargs.get("rounding_mode") is not None or any(_scales_in_float(a, dtype) for a in node.args[1:])
    return True


def _scales_in_float(a, dtype: torch.dtype) -> bool:
    """Whether eager multiplies / divides a `dtype` tensor by operand `a` at more than `dtype`'s
    precision: a Python number the half type does not represent (257 or 0.7071 in bf16), a symbolic
    scalar, or a CPU tensor of another type (a 0-d float32 scale, the float Dynamo passes as a tensor:
    eager's kernels take a CPU scalar at float32). A 0-d tensor on the GPU is not a CPU scalar: eager's
    CUDA kernels convert it to the half type like any operand (measured on an H100)."""
    if isinstance(a, bool) or a is None:
        return False
    if isinstance(a, (int, float)):
        return float(torch.tensor(a, dtype=dtype)) != a
    v = _val(a) if isinstance(a, fx.Node) else a
    if isinstance(v, torch.Tensor) and v.dim() == 0 and v.device.type != "cpu":
        return False
    return not (isinstance(v, torch.Tensor) and v.dtype == dtype)


def widen_half_reductions(graph: fx.Graph) -> int:
    count = 0
    for node in list(graph.nodes):
        if node.op != "call_function" or str(node.target) not in _ACCUMULATING:
            continue
        val = node.meta.get("val")
        if not isinstance(val, torch.Tensor) or val.dtype not in _HALF or node.kwargs.get("dtype") is not None:
            continue
        src = node.args[0]
        if not (isinstance(src, fx.Node) and isinstance(src.meta.get("val"), torch.Tensor)
                and src.meta["val"].dtype == val.dtype):
            continue
        node.kwargs = {**node.kwargs, "dtype": torch.float32}
        with graph.inserting_after(node):
            back = graph.call_function(prims.convert_element_type.default, (node, val.dtype))
        node.replace_all_uses_with(back, delete_user_cb=lambda u: u is not back)
        back.meta = dict(node.meta)
        node.meta["val"] = val.to(torch.float32)
        if "tensor_meta" in node.meta:  # what torch-mlir's importer reads the type from
            from torch.fx.passes.shape_prop import _extract_tensor_metadata

            node.meta["tensor_meta"] = _extract_tensor_metadata(node.meta["val"])
        count += 1
    return count


def half_math_in_float(graph: fx.Graph) -> int:
    count = 0
    for node in list(graph.nodes):
        if node.op != "call_function":
            continue
        val = node.meta.get("val")
        if not isinstance(val, torch.Tensor) or val.dtype not in _HALF or not _wants_float(node, val.dtype):
            continue
        dtype = val.dtype
        e = Emitter(graph, node)
        widened: dict[fx.Node, fx.Node] = {}

        rounds = _packet(node) in _ROUNDS_OTHER_OPERANDS

        def widen(a):
            v = _val(a)
            if rounds and isinstance(a, (int, float)) and not isinstance(a, bool):
                return float(torch.tensor(a, dtype=dtype))  # a Python scalar, in the half type first
            if not isinstance(v, torch.Tensor) or v.dtype.is_complex or (v.dtype == torch.float32 and not rounds):
                return a
            if a not in widened:  # integer and bool operands take the result's type first, as in eager
                half = a if v.dtype == dtype else e(prims.convert_element_type.default, a, dtype)
                widened[a] = e(prims.convert_element_type.default, half, torch.float32)
            return widened[a]

        args = fx.node.map_aggregate(node.args, widen)
        kwargs = fx.node.map_aggregate(node.kwargs, widen)
        out = e(node.target, *args, **kwargs)
        if not (isinstance(out.meta["val"], torch.Tensor) and out.meta["val"].dtype == torch.float32):
            for n in [out, *widened.values()]:  # the op does not compute in float32 this way: leave it
                graph.erase_node(n)
            continue
        count += _replace(graph, node, e(prims.convert_element_type.default, out, dtype))
    return count


_NAN_KEEPING = {
    "aten.clamp.default", "aten.clamp.Tensor", "aten.clamp_min.default", "aten.clamp_min.Tensor",
    "aten.clamp_max.default", "aten.clamp_max.Tensor", "aten.hardtanh.default", "aten.hardsigmoid.default",
    "aten.maximum.default", "aten.minimum.default", "aten.logaddexp.default", "aten.logaddexp2.default",
}


def nan_propagating_selections(graph: fx.Graph) -> int:
    count = 0
    for node in list(graph.nodes):
        if node.op != "call_function" or str(node.target) not in _NAN_KEEPING:
            continue
        val, x = node.meta.get("val"), node.args[0]
        xv = _val(x)
        if not (isinstance(val, torch.Tensor) and val.dtype.is_floating_point and isinstance(xv, torch.Tensor)
                and xv.dtype.is_floating_point):
            continue  # `where` below broadcasts and promotes a narrower first operand as the op does
        users = list(node.users)
        e = Emitter(graph, node)
        e.at = node.next  # the new nodes go after the op
        keep = e(aten.where.self, e(aten.isnan.default, x), x, node)
        for u in users:
            u.replace_input_with(node, keep)
        count += 1
    return count


def tanh_gelu_formula(graph: fx.Graph) -> int:
    count = 0
    for node in _calls(graph, "aten.gelu.default"):
        if node.kwargs.get("approximate", node.args[1] if len(node.args) > 1 else "none") != "tanh":
            continue
        e = Emitter(graph, node)
        dtype = node.meta["val"].dtype
        x = node.args[0] if dtype not in _HALF else e(prims.convert_element_type.default, node.args[0], torch.float32)
        cube = e(aten.mul.Tensor, e(aten.mul.Tensor, x, x), x)
        inner = e(aten.mul.Tensor, e(aten.add.Tensor, x, e(aten.mul.Tensor, cube, 0.044715)), math.sqrt(2 / math.pi))
        half_x = e(aten.mul.Tensor, x, 0.5)
        out = e(aten.mul.Tensor, half_x, e(aten.add.Tensor, e(aten.tanh.default, inner), 1))
        count += _replace(graph, node, out if dtype not in _HALF else e(prims.convert_element_type.default, out, dtype))
    return count


def pow_special_exponents(graph: fx.Graph) -> int:
    count = 0
    for node in _calls(graph, "aten.pow.Tensor_Scalar"):
        x, p = node.args[0], node.args[1]
        val = node.meta.get("val")
        if not (isinstance(val, torch.Tensor) and val.dtype.is_floating_point and _tensor_of(x, val.dtype)) \
                or isinstance(p, bool) or not isinstance(p, (int, float)) or p not in (0.5, -0.5, 2, 3, -1, -2):
            continue
        e = Emitter(graph, node)
        if p == 0.5:
            out = e(aten.sqrt.default, x)
        elif p == -0.5:
            out = e(aten.rsqrt.default, x)
        else:
            power = e(aten.mul.Tensor, x, x) if abs(p) >= 2 else x
            power = e(aten.mul.Tensor, power, x) if abs(p) == 3 else power
            out = power if p > 0 else _one_over(e, power, val)
        count += _replace(graph, node, out)
    return count


def reciprocal_as_division(graph: fx.Graph) -> int:
    count = 0
    for node in _calls(graph, "aten.reciprocal.default"):
        val = node.meta.get("val")
        if not isinstance(val, torch.Tensor) or not val.dtype.is_floating_point:
            continue
        count += _replace(graph, node, _one_over(Emitter(graph, node), node.args[0], val))
    return count


def _is_int(v) -> bool:
    """A signed integer tensor (torch-mlir divides uint8 as signed: left to its error)."""
    return isinstance(v, torch.Tensor) and not v.dtype.is_floating_point and not v.dtype.is_complex \
        and v.dtype not in (torch.bool, torch.uint8)


def _int_operand(e: Emitter, a, dtype: torch.dtype, device):
    """Operand `a` of an integer division as a `dtype` tensor or a Python int; None if it is neither
    a signed integer tensor, a bool tensor (converted), nor an int."""
    if isinstance(a, bool):
        return int(a)
    if isinstance(a, int):
        return a
    v = _val(a)
    if _is_int(v):
        return a
    if isinstance(v, torch.Tensor) and v.dtype == torch.bool:
        return e(prims.convert_element_type.default, a, dtype)
    return None


def _floor_divisions(graph: fx.Graph) -> list[fx.Node]:
    """The graph's `div(a, b, rounding_mode="floor")` calls (what `//` and floor_divide decompose to)."""
    return [n for t in ("aten.div.Tensor_mode", "aten.div.Scalar_mode") for n in _calls(graph, t)
            if n.kwargs.get("rounding_mode") == "floor"]


def exact_integer_division(graph: fx.Graph) -> int:
    count = 0
    for node in _floor_divisions(graph):
        val = node.meta.get("val")
        if not _is_int(val):
            continue
        e = Emitter(graph, node)
        a = _int_operand(e, node.args[0], val.dtype, val.device)
        b = _int_operand(e, node.args[1], val.dtype, val.device)
        if a is None or b is None or not (isinstance(a, fx.Node) or isinstance(b, fx.Node)):
            continue
        if not isinstance(a, fx.Node):  # a Python int dividend: a 0-d tensor of the result's type
            a = e(aten.full.default, [], a, dtype=val.dtype, device=val.device)
        div = aten.div.Tensor_mode if isinstance(b, fx.Node) else aten.div.Scalar_mode
        q = e(div, a, b, rounding_mode="trunc")
        r = e(aten.sub.Tensor, a, e(aten.mul.Tensor, q, b))
        inexact = e(aten.ne.Scalar, r, 0)
        if isinstance(b, fx.Node):
            below = e(aten.ne.Tensor, e(aten.lt.Scalar, r, 0), e(aten.lt.Scalar, b, 0))
        else:
            below = e(aten.ne.Scalar, e(aten.lt.Scalar, r, 0), b < 0)
        fix = e(aten.logical_and.default, inexact, below)
        count += _replace(graph, node, e(aten.sub.Tensor, q, e(prims.convert_element_type.default, fix, val.dtype)))
    for target in ("aten.fmod.Tensor", "aten.fmod.Scalar"):
        for node in _calls(graph, target):
            val = node.meta.get("val")
            a, b = node.args[0], node.args[1]
            if not _is_int(val) or not _is_int(_val(a)) or isinstance(b, (float, bool)) \
                    or (isinstance(b, fx.Node) and not _is_int(_val(b))):
                continue
            e = Emitter(graph, node)
            div = aten.div.Tensor_mode if isinstance(b, fx.Node) else aten.div.Scalar_mode
            q = e(div, a, b, rounding_mode="trunc")
            count += _replace(graph, node, e(aten.sub.Tensor, a, e(aten.mul.Tensor, q, b)))
    for node in _calls(graph, "aten.pow.Tensor_Scalar"):
        x, p = node.args[0], node.args[1]
        val = node.meta.get("val")
        if not _is_int(val) or not _is_int(_val(x)) or isinstance(p, bool) or not isinstance(p, int) or p < 0:
            continue  # a negative exponent: eager raises, torch-mlir's error names the op
        e = Emitter(graph, node)
        result, base = None, x
        while True:
            if p & 1:
                result = base if result is None else e(aten.mul.Tensor, result, base)
            p >>= 1
            if not p:
                break
            base = e(aten.mul.Tensor, base, base)
        if result is None:  # x ** 0
            result = e(aten.full_like.default, x, 1)
        count += _replace(graph, node, result)
    return count


def python_floor_division(graph: fx.Graph) -> int:
    count = 0
    for node in _floor_divisions(graph):
        val = node.meta.get("val")
        if not isinstance(val, torch.Tensor) or not val.dtype.is_floating_point or val.dtype in _HALF:
            continue  # half types: half_math_in_float made the division a float32 one already
        a, b = node.args[0], node.args[1]
        e = Emitter(graph, node)
        if not isinstance(b, fx.Node):
            if isinstance(b, bool) or not isinstance(b, (int, float)):
                continue
            b = e(aten.full.default, [], float(b), dtype=val.dtype, device=val.device)
        mod = e(aten.fmod.Tensor, a, b)
        div = e(aten.div.Tensor, e(aten.sub.Tensor, a, mod), b)
        signs_differ = e(aten.ne.Tensor, e(aten.lt.Scalar, b, 0.0), e(aten.lt.Scalar, mod, 0.0))
        fix = e(aten.logical_and.default, e(aten.ne.Scalar, mod, 0.0), signs_differ)
        div = e(aten.where.self, fix, e(aten.sub.Tensor, div, 1.0), div)
        floored = e(aten.floor.default, div)
        floored = e(aten.where.self, e(aten.gt.Scalar, e(aten.sub.Tensor, div, floored), 0.5),
                    e(aten.add.Tensor, floored, 1.0), floored)
        quotient = e(aten.div.Tensor, a, b)
        signed_zero = e(aten.mul.Tensor, quotient, 0.0)  # 0 with the sign of a / b where div is 0
        out = e(aten.where.self, e(aten.ne.Scalar, div, 0.0), floored, signed_zero)
        out = e(aten.where.self, e(aten.eq.Scalar, b, 0.0), quotient, out)
        count += _replace(graph, node, out)
    return count


_COMPARISONS = {"aten.eq.Scalar", "aten.ne.Scalar", "aten.lt.Scalar", "aten.le.Scalar", "aten.gt.Scalar",
                "aten.ge.Scalar"}


def float_comparison_scalars(graph: fx.Graph) -> int:
    count = 0
    for node in graph.nodes:
        if node.op != "call_function" or str(node.target) not in _COMPARISONS or len(node.args) != 2:
            continue
        x, s = node.args
        v = _val(x)
        if isinstance(v, torch.Tensor) and v.dtype.is_floating_point and isinstance(s, int) and not isinstance(s, bool):
            node.args = (x, float(s))
            count += 1
    return count


_SELF_COMPARISONS = {"aten.eq.Tensor": False, "aten.le.Tensor": False, "aten.ge.Tensor": False, "aten.ne.Tensor": True}


def self_comparisons_as_isnan(graph: fx.Graph) -> int:
    count = 0
    for node in list(graph.nodes):
        if node.op != "call_function" or str(node.target) not in _SELF_COMPARISONS or len(node.args) != 2 \
                or node.kwargs or node.args[0] is not node.args[1]:
            continue
        v = _val(node.args[0])
        if not (isinstance(v, torch.Tensor) and v.dtype.is_floating_point):
            continue
        e = Emitter(graph, node)
        nan = e(aten.isnan.default, node.args[0])
        count += _replace(graph, node, nan if _SELF_COMPARISONS[str(node.target)] else e(aten.logical_not.default, nan))
    return count


_BYTE_DIVISIONS = {"aten.div.Scalar_mode", "aten.div.Tensor_mode", "aten.remainder.Scalar", "aten.remainder.Tensor",
                   "aten.fmod.Scalar", "aten.fmod.Tensor"}


def byte_divisions(graph: fx.Graph) -> int:
    count = 0
    for node in list(graph.nodes):
        if node.op != "call_function" or str(node.target) not in _BYTE_DIVISIONS:
            continue
        val = node.meta.get("val")
        if not (isinstance(val, torch.Tensor) and val.dtype in (torch.int8, torch.uint8)):
            continue
        e = Emitter(graph, node)

        def wide(a):
            v = _val(a)
            if isinstance(v, torch.Tensor):
                return e(prims.convert_element_type.default, a, torch.int32)
            return a

        out = e(node.target, *[wide(a) for a in node.args], **node.kwargs)
        count += _replace(graph, node, e(prims.convert_element_type.default, out, val.dtype))
    return count
