"""Lower elementwise aten ops that torch-mlir has no linalg lowering for to `linalg.generic`s with
math / arith bodies (on the torch dialect, before torch-mlir's backend pipeline).

torch-mlir imports `erfc`, `hypot`, `nextafter`, `gcd`, `lcm`, `|` and `^` by a scalar and `<<` / `>>`
by a tensor as opaque `torch.operator`s, and has ops but no lowering for `erfinv`, `signbit`,
`copysign`, `fmod` by a scalar, integer `pow` by a tensor and `view(dtype)`: compiling any of them failed. Each is one
elementwise computation MLIR's math and arith dialects express exactly, so the op becomes
`torch_c.to_builtin_tensor` of its operands, a `linalg.generic` over the (broadcast) result shape,
and `torch_c.from_builtin_tensor` of the result, which torch-mlir's conversion then passes through.
Bodies compute what eager does:
  erfc(x)          math.erfc (libdevice / libm erfcf: accurate where 1 - erf(x) cancels)
  signbit(x)       the sign bit of a float (true for -0.0 and negative NaNs); x < 0 for integers
  copysign(a, b)   math.copysign in the result's float type
  hypot(a, b)      sqrt(a*a + b*b) in float64 for float32 and half types (neither overflows nor
                   loses precision there); for float64 m * sqrt(1 + (n / m)^2) with m, n the larger
                   and smaller magnitude; an infinite operand gives inf even with a NaN, as C's hypot
  nextafter(x, y)  the neighbour of x towards y by stepping its bits; NaN if either is NaN, y if
                   x == y, the smallest subnormal with y's sign if x is zero
  view(dtype)      arith.bitcast between element types of one width
  fmod(x, y)       arith.remf (C's fmod) of floats, by a tensor or a scalar (torch-mlir's lowering of
                   the Tensor form gave fmod(1.0, 0.1) = 0.0, eager 0.1)
  a | s, a ^ s     arith.ori / xori with a scalar (integers and bools)
  a << b, a >> b   by tensors of amounts, as PyTorch shifts: 0 for `<<` by an amount outside
                   [0, bits), `>>` by at most bits - 1 (the sign fills)
  lgamma(x)        Lanczos in float64 with the reflection below 0.5; +inf at poles and infinities
  digamma(x)       PyTorch's algorithm (Cephes' psi) in float64
  erfinv(y)        PyTorch's own algorithm (ATen's calc_erfinv): a rational approximation, then two
                   Newton steps on erf
  gcd(a, b)        Euclid's algorithm on |a|, |b| as an scf.while in the body (a loop per element,
  lcm(a, b)        not an unrolled chain); lcm = |a / gcd * b|, 0 when the gcd is 0
  a ** b (ints)    pow by squaring in an scf.while (products wrap as eager's do); a negative
                   exponent gives 1 for a base of 1, +-1 for -1, else 0 (ATen's powi)
  i0, i0e, i1,     eager's Cephes algorithms (passes/_special_math.py): Chebyshev series, rational
  i1e, ndtri       approximations, both branches computed and one selected
  bessel_j0/j1/y0/y1, modified_bessel_i0/i1/k0/k1, scaled_modified_bessel_k0/k1, spherical_bessel_j0,
  airy_ai          eager's Cephes kernels (passes/_special_bessel.py): rational approximations, Hankel's
                   asymptotic forms, Chebyshev series, Ai's series unrolled; eager's FMAs kept
  chebyshev / shifted chebyshev t, u, v, w, hermite h / he, laguerre l, legendre p (x, n), zeta,
  polygamma, igamma, igammac
                   eager's algorithms (passes/_special_series.py): recurrences as scf.while loops
                   per element, the trigonometric forms selected; Hurwitz zeta in double; SciPy /
                   Cephes' regimes for the incomplete gamma functions
  erfcx, log_ndtr  ATen's calc_erfcx: 100 Chebyshev pieces (a table read at the piece's row,
                   passes/_erfcx_table.py), a continued fraction past 50; log_ndtr through it below -1
Half-type operands are computed in float32 and rounded once (eager's opmath), except bit operations.
Operands broadcast as aten's rules say (a dim of static size 1 against a larger one; ranks aligned
right); other element types are converted to the result's as eager promotes. Scalar operands
(`!torch.float`, `!torch.int`, `!torch.bool`, constants or symbolic) are read in the body.

Before:
  %1 = torch.operator "torch.aten.erfc"(%0) : (!torch.vtensor<[?,4],f32>) -> !torch.vtensor<[?,4],f32>
After:
  %b = torch_c.to_builtin_tensor %0 : !torch.vtensor<[?,4],f32> -> tensor<?x4xf32>
  %d = tensor.dim %b, %c0 : tensor<?x4xf32>
  %e = tensor.empty(%d) : tensor<?x4xf32>
  %g = linalg.generic {parallel, parallel} ins(%b) outs(%e) { math.erfc }
  %1 = torch_c.from_builtin_tensor %g : tensor<?x4xf32> -> !torch.vtensor<[?,4],f32>
"""
from __future__ import annotations

import re
from typing import Callable

from torch_mlir import ir
from torch_mlir.dialects import arith, linalg, math, scf, tensor

from mlir_sym.passes import _special_math as special
from mlir_sym.passes import _special_bessel, _special_series
from mlir_sym.passes._compute_common import ops_named
from mlir_sym.passes.registry import SymPass, register

# aten ops handled here, as the importer names them (`torch.operator` names or op names)
OPERATOR_NAMES = ("torch.aten.erfc", "torch.aten.hypot", "torch.aten.nextafter", "torch.aten.bitwise_or.Scalar",
                  "torch.aten.bitwise_xor.Scalar", "torch.aten.__rshift__.Tensor", "torch.aten.__lshift__.Tensor",
                  "torch.aten.copysign.Scalar", "torch.aten.lgamma", "torch.aten.digamma", "torch.aten.gcd",
                  "torch.aten.lcm", "torch.aten.i0", "torch.aten.special_i0e", "torch.aten.special_i1",
                  "torch.aten.special_i1e", "torch.aten.special_ndtri", "torch.aten.special_erfcx",
                  "torch.aten.special_log_ndtr")

_VTENSOR = re.compile(r"^!torch\.vtensor<\[([^\]]*)\],(\w+)>$")
_ELEM = {"f32": "f32", "f64": "f64", "bf16": "bf16", "f16": "f16", "i1": "i1",
         "si64": "i64", "si32": "i32", "si16": "i16", "si8": "i8", "ui8": "i8"}
_HALF = ("bf16", "f16")


def _parse(t: ir.Type) -> tuple[list[int | None], str] | None:
    """(dims, torch element name) of a `!torch.vtensor<[...],T>` type; None dims are dynamic."""
    m = _VTENSOR.match(str(t))
    if not m or m.group(2) not in _ELEM:
        return None
    dims = [None if d.strip() == "?" else int(d) for d in m.group(1).split(",")] if m.group(1).strip() else []
    return dims, m.group(2)


def _builtin(dims: list[int | None], elem: str) -> ir.RankedTensorType:
    return ir.RankedTensorType.get([ir.ShapedType.get_dynamic_size() if d is None else d for d in dims],
                                   ir.Type.parse(_ELEM[elem]))


def _name(o: ir.Operation) -> str:
    if o.name == "torch.operator":
        return ir.StringAttr(o.attributes["name"]).value
    return o.name


def _is_float(t: ir.Type) -> bool:
    return str(t) in ("f32", "f64", "bf16", "f16")


def _convert(v: ir.Value, to: ir.Type, signed: bool = True) -> ir.Value:
    """Element `v` as type `to` (float widths, ints to floats), as eager's type promotion converts."""
    src = v.type
    if str(src) == str(to):
        return v
    if _is_float(src) and _is_float(to):
        wide = {"f64": 64, "f32": 32, "bf16": 16, "f16": 16}
        if wide[str(src)] < wide[str(to)]:
            return arith.extf(to, v)
        if wide[str(src)] > wide[str(to)]:
            return arith.truncf(to, v)
        return arith.truncf(to, arith.extf(ir.F32Type.get(), v))  # bf16 <-> f16
    if isinstance(src, ir.IntegerType) and _is_float(to):
        return arith.sitofp(to, v) if signed and ir.IntegerType(src).width > 1 else arith.uitofp(to, v)
    if isinstance(src, ir.IntegerType) and isinstance(to, ir.IntegerType):
        if ir.IntegerType(src).width > ir.IntegerType(to).width:
            return arith.trunci(to, v)
        return arith.extsi(to, v) if ir.IntegerType(src).width > 1 else arith.extui(to, v)
    raise ValueError(f"cannot convert {src} to {to}")


def _compute_type(t: ir.Type) -> ir.Type:
    return ir.F32Type.get() if str(t) in _HALF else t


def _int_of(t: ir.Type) -> ir.IntegerType:
    return ir.IntegerType.get_signless({"f64": 64, "f32": 32, "bf16": 16, "f16": 16}[str(t)])


def _cf(t: ir.Type, value: float) -> ir.Value:
    return arith.constant(t, value)


def _erfc(args: list[ir.Value], out: ir.Type) -> ir.Value:
    ct = _compute_type(out)
    return _convert(math.erfc(_convert(args[0], ct)), out)


def _signbit(args: list[ir.Value], out: ir.Type) -> ir.Value:
    x = args[0]
    if _is_float(x.type):
        it = _int_of(x.type)
        return arith.cmpi(arith.CmpIPredicate.slt, arith.bitcast(it, x), arith.constant(it, 0))
    if ir.IntegerType(x.type).width == 1:
        return arith.constant(ir.IntegerType.get_signless(1), 0)
    return arith.cmpi(arith.CmpIPredicate.slt, x, arith.constant(x.type, 0))


def _copysign(args: list[ir.Value], out: ir.Type) -> ir.Value:
    ct = _compute_type(out)
    return _convert(math.copysign(_convert(args[0], ct), _convert(args[1], ct)), out)


def _hypot(args: list[ir.Value], out: ir.Type) -> ir.Value:
    f64 = ir.F64Type.get()
    a, b = (_convert(v, f64) for v in args)
    inf = _cf(f64, float("inf"))
    if str(out) != "f64":
        r = math.sqrt(arith.addf(arith.mulf(a, a), arith.mulf(b, b)))
    else:
        aa, bb = math.absf(a), math.absf(b)
        m, n = arith.maximumf(aa, bb), arith.minimumf(aa, bb)
        q = arith.divf(n, m)
        r = arith.mulf(m, math.sqrt(arith.addf(_cf(f64, 1.0), arith.mulf(q, q))))
        zero = _cf(f64, 0.0)
        r = arith.select(arith.cmpf(arith.CmpFPredicate.OEQ, m, zero), zero, r)
    either_inf = arith.ori(*(arith.cmpf(arith.CmpFPredicate.OEQ, math.absf(v), inf) for v in (a, b)))
    return _convert(arith.select(either_inf, inf, r), out)


def _nextafter(args: list[ir.Value], out: ir.Type) -> ir.Value:
    x, y = (_convert(v, out) for v in args)
    it = _int_of(out)
    pred = arith.CmpFPredicate
    zero = _cf(out, 0.0)
    bits = arith.bitcast(it, x)
    up = arith.cmpi(arith.CmpIPredicate.eq, arith.extui(ir.IntegerType.get_signless(8), arith.cmpf(pred.OLT, x, y)),
                    arith.extui(ir.IntegerType.get_signless(8), arith.cmpf(pred.OGT, x, zero)))
    one = arith.constant(it, 1)
    step = arith.bitcast(out, arith.select(up, arith.addi(bits, one), arith.subi(bits, one)))
    tiny = math.copysign(arith.bitcast(out, one), y)
    r = arith.select(arith.cmpf(pred.OEQ, x, zero), tiny, step)
    r = arith.select(arith.cmpf(pred.OEQ, x, y), y, r)
    return arith.select(arith.cmpf(pred.UNO, x, y), arith.addf(x, y), r)


def _poly(z: ir.Value, coefficients: list[float], t: ir.Type) -> ir.Value:
    """c[n] z^n + ... + c[0] by Horner's rule (coefficients from the highest)."""
    acc = _cf(t, coefficients[0])
    for c in coefficients[1:]:
        acc = arith.addf(arith.mulf(acc, z), _cf(t, c))
    return acc


def _erfinv(args: list[ir.Value], out: ir.Type) -> ir.Value:
    """PyTorch's calc_erfinv (ATen/native/Math.h): a rational approximation in two ranges, then two
    Newton steps on erf; NaN beyond [-1, 1], +-inf at +-1."""
    t = _compute_type(out)
    y = _convert(args[0], t)
    one = _cf(t, 1.0)
    ya = math.absf(y)
    z = arith.mulf(y, y)
    central = arith.divf(arith.mulf(y, _poly(z, [-0.140543331, 0.914624893, -1.645349621, 0.886226899], t)),
                         _poly(z, [0.012229801, -0.329097515, 1.442710462, -2.118377725, 1.0], t))
    w = math.sqrt(arith.negf(math.log(arith.divf(arith.subf(one, ya), _cf(t, 2.0)))))
    tail = arith.divf(math.copysign(_poly(w, [1.641345311, 3.429567803, -1.624906493, -1.970840454], t), y),
                      _poly(w, [1.637067800, 3.543889200, 1.0], t))
    x = arith.select(arith.cmpf(arith.CmpFPredicate.OLE, ya, _cf(t, 0.7)), central, tail)
    two_over_sqrt_pi = _cf(t, 1.1283791670955126)
    for _ in range(2):
        slope = arith.mulf(two_over_sqrt_pi, math.exp(arith.negf(arith.mulf(x, x))))
        x = arith.subf(x, arith.divf(arith.subf(math.erf(x), y), slope))
    x = arith.select(arith.cmpf(arith.CmpFPredicate.OEQ, ya, one), math.copysign(_cf(t, float("inf")), y), x)
    x = arith.select(arith.cmpf(arith.CmpFPredicate.OGT, ya, one), _cf(t, float("nan")), x)
    return _convert(x, out)


def _fmod(args: list[ir.Value], out: ir.Type) -> ir.Value:
    """C's fmod; the scalar divisor in the result's type first (eager wraps it as a tensor of that type)."""
    ct = _compute_type(out)
    return _convert(arith.remf(_convert(args[0], ct), _convert(_convert(args[1], out), ct)), out)


def _bitwise(op: Callable) -> Callable:
    def body(args: list[ir.Value], out: ir.Type) -> ir.Value:
        return op(_convert(args[0], out), _convert(args[1], out))
    return body


def _shift(left: bool) -> Callable:
    """PyTorch's shifts by amounts outside [0, bits): `<<` gives 0, `>>` shifts by bits - 1 (the sign)."""
    def body(args: list[ir.Value], out: ir.Type) -> ir.Value:
        a, b = _convert(args[0], out), _convert(args[1], out)
        bits = arith.constant(out, ir.IntegerType(out).width)
        inside = arith.cmpi(arith.CmpIPredicate.ult, b, bits)
        if left:
            return arith.select(inside, arith.shli(a, b), arith.constant(out, 0))
        return arith.shrsi(a, arith.minui(b, arith.subi(bits, arith.constant(out, 1))))
    return body


_LANCZOS = [0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313, -176.61502916214059,
            12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7]


def _lgamma_positive(z1: ir.Value, f64: ir.Type) -> ir.Value:
    """log(Gamma(x)) for x >= 0.5 (Lanczos, g = 7, 9 terms: about 1e-15 relative in float64)."""
    z = arith.subf(z1, _cf(f64, 1.0))
    a = _cf(f64, _LANCZOS[0])
    for i, c in enumerate(_LANCZOS[1:], start=1):
        a = arith.addf(a, arith.divf(_cf(f64, c), arith.addf(z, _cf(f64, float(i)))))
    t = arith.addf(z, _cf(f64, 7.5))
    r = arith.addf(_cf(f64, 0.9189385332046727), arith.mulf(arith.addf(z, _cf(f64, 0.5)), math.log(t)))
    return arith.addf(arith.subf(r, t), math.log(a))


def _lgamma(args: list[ir.Value], out: ir.Type) -> ir.Value:
    """log|Gamma(x)| in float64 (C's lgamma): Lanczos for x >= 0.5, the reflection
    log(pi / |sin(pi x)|) - lgamma(1 - x) below; +inf at the poles (0, -1, ...) and at +-inf."""
    f64 = ir.F64Type.get()
    x = _convert(args[0], f64)
    one, pi = _cf(f64, 1.0), _cf(f64, 3.141592653589793)
    pred = arith.CmpFPredicate
    small = arith.cmpf(pred.OLT, x, _cf(f64, 0.5))
    xr = arith.select(small, arith.subf(one, x), x)  # the argument of the Lanczos sum: >= 0.5
    big = _lgamma_positive(xr, f64)
    reflected = arith.subf(math.log(arith.divf(pi, math.absf(math.sin(arith.mulf(pi, x))))), big)
    r = arith.select(small, reflected, big)
    inf = _cf(f64, float("inf"))
    pole = arith.andi(arith.cmpf(pred.OLE, x, _cf(f64, 0.0)), arith.cmpf(pred.OEQ, math.floor(x), x))
    r = arith.select(arith.ori(pole, arith.cmpf(pred.OEQ, math.absf(x), inf)), inf, r)
    return _convert(r, out)


_PSI_A = [8.33333333333333333333E-2, -2.10927960927960927961E-2, 7.57575757575757575758E-3,
          -4.16666666666666666667E-3, 3.96825396825396825397E-3, -8.33333333333333333333E-3, 8.33333333333333333333E-2]


def _digamma(args: list[ir.Value], out: ir.Type) -> ir.Value:
    """PyTorch's calc_digamma (ATen/native/Math.h, Cephes' psi) in float64: the reflection for x < 0
    (NaN at negative integers), the recurrence up to x >= 10, the asymptotic series; -inf at +0.0
    and +inf at -0.0 (copysign(inf, -x))."""
    f64 = ir.F64Type.get()
    x0 = _convert(args[0], f64)
    pred = arith.CmpFPredicate
    one, zero, pi = _cf(f64, 1.0), _cf(f64, 0.0), _cf(f64, 3.141592653589793)
    negative = arith.cmpf(pred.OLT, x0, zero)
    x = arith.select(negative, arith.subf(one, x0), x0)
    result = arith.select(negative, arith.negf(arith.divf(pi, math.tan(arith.mulf(pi, x0)))), zero)
    ten = _cf(f64, 10.0)
    for _ in range(10):
        below = arith.cmpf(pred.OLT, x, ten)
        result = arith.select(below, arith.subf(result, arith.divf(one, x)), result)
        x = arith.select(below, arith.addf(x, one), x)
    z = arith.divf(one, arith.mulf(x, x))
    y = arith.mulf(z, _poly(z, _PSI_A, f64))
    result = arith.addf(result, arith.subf(arith.subf(math.log(x), arith.divf(_cf(f64, 0.5), x)), y))
    result = arith.select(arith.andi(negative, arith.cmpf(pred.OEQ, math.floor(x0), x0)), _cf(f64, float("nan")), result)
    result = arith.select(arith.cmpf(pred.OEQ, x0, zero), math.copysign(_cf(f64, float("inf")), arith.negf(x0)), result)
    return _convert(result, out)


def _while(inits: list[ir.Value], cond: Callable, step: Callable) -> list[ir.Value]:
    """An scf.while over `inits`: `cond(values)` -> i1 decides whether `step(values)` -> new values runs
    again; the values when it stops. Loops whose trip count depends on the element (Euclid's gcd,
    pow by squaring: up to 64 steps) stay loops in the body instead of unrolled chains."""
    types = [v.type for v in inits]
    w = scf.WhileOp(types, inits)
    before = w.before.blocks.append(*types)
    with ir.InsertionPoint(before):
        scf.ConditionOp(cond(list(before.arguments)), list(before.arguments))
    after = w.after.blocks.append(*types)
    with ir.InsertionPoint(after):
        scf.YieldOp(step(list(after.arguments)))
    return list(w.results)


def _gcd_of(a: ir.Value, b: ir.Value) -> ir.Value:
    """ATen's calc_gcd: Euclid on |a| and |b| (remainders unsigned: no trap on INT_MIN)."""
    t = a.type
    zero = arith.constant(t, 0)
    a, b = math.absi(a), math.absi(b)
    _, g = _while([a, b], lambda v: arith.cmpi(arith.CmpIPredicate.ne, v[0], zero),
                  lambda v: [arith.remui(v[1], v[0]), v[0]])
    return g


def _gcd(args: list[ir.Value], out: ir.Type) -> ir.Value:
    return _gcd_of(_convert(args[0], out), _convert(args[1], out))


def _lcm(args: list[ir.Value], out: ir.Type) -> ir.Value:
    """ATen's lcm: |a / gcd * b|, 0 when the gcd is 0."""
    a, b = _convert(args[0], out), _convert(args[1], out)
    g = _gcd_of(a, b)
    zero, one = arith.constant(out, 0), arith.constant(out, 1)
    is_zero = arith.cmpi(arith.CmpIPredicate.eq, g, zero)
    r = math.absi(arith.muli(arith.divsi(a, arith.select(is_zero, one, g)), b))
    return arith.select(is_zero, zero, r)


def _int_pow(args: list[ir.Value], out: ir.Type) -> ir.Value:
    """ATen's powi for signed integers: by squaring (wrapping as eager's products wrap); a negative
    exponent gives 1 for a base of 1, +-1 for -1 (by the exponent's parity), else 0."""
    a, b = _convert(args[0], out), _convert(args[1], out)
    zero, one = arith.constant(out, 0), arith.constant(out, 1)
    pred = arith.CmpIPredicate

    def step(v: list[ir.Value]) -> list[ir.Value]:
        r, x, e = v
        odd = arith.cmpi(pred.ne, arith.andi(e, one), zero)
        return [arith.select(odd, arith.muli(r, x), r), arith.muli(x, x), arith.shrsi(e, one)]

    r, _, _ = _while([one, a, arith.maxsi(b, zero)], lambda v: arith.cmpi(pred.ne, v[2], zero), step)
    minus_one = arith.constant(out, -1)
    odd = arith.cmpi(pred.ne, arith.andi(b, one), zero)
    negative = arith.select(arith.cmpi(pred.eq, a, one), one,
                            arith.select(arith.cmpi(pred.eq, a, minus_one), arith.select(odd, minus_one, one), zero))
    return arith.select(arith.cmpi(pred.slt, b, zero), negative, r)


def _view_dtype(args: list[ir.Value], out: ir.Type) -> ir.Value:
    return arith.bitcast(out, args[0])


_BODIES: dict[str, Callable[[list[ir.Value], ir.Type], ir.Value]] = {
    "torch.aten.erfc": _erfc, "torch.aten.signbit": _signbit, "torch.aten.copysign.Tensor": _copysign,
    "torch.aten.hypot": _hypot, "torch.aten.nextafter": _nextafter, "torch.aten.view.dtype": _view_dtype,
    "torch.aten.erfinv": _erfinv, "torch.aten.fmod.Scalar": _fmod, "torch.aten.fmod.Tensor": _fmod,
    "torch.aten.copysign.Scalar": _copysign, "torch.aten.lgamma": _lgamma, "torch.aten.digamma": _digamma,
    "torch.aten.bitwise_or.Scalar": _bitwise(arith.ori), "torch.aten.bitwise_xor.Scalar": _bitwise(arith.xori),
    "torch.aten.__lshift__.Tensor": _shift(True), "torch.aten.__rshift__.Tensor": _shift(False),
    "torch.aten.gcd": _gcd, "torch.aten.lcm": _lcm, "torch.aten.pow.Tensor_Tensor": _int_pow,
}
_SPECIAL = {"torch.aten.i0": special.bessel_body(0, False), "torch.aten.special_i0e": special.bessel_body(0, True),
            "torch.aten.special_i1": special.bessel_body(1, False), "torch.aten.special_i1e": special.bessel_body(1, True),
            "torch.aten.special_ndtri": special.ndtri_body, "torch.aten.special_erfcx": special.erfcx_body,
            "torch.aten.special_log_ndtr": special.log_ndtr_body}
_SPECIAL.update(_special_bessel.BODIES)  # passes/_special_bessel.py
_SPECIAL.update(_special_series.BODIES)  # passes/_special_series.py
OPERATOR_NAMES += tuple(_special_bessel.BODIES) + tuple(_special_series.BODIES)
for _op, _body in _SPECIAL.items():  # passes/_special_math.py and the two above
    _BODIES[_op] = lambda args, out, _body=_body: _body(args, out, _convert, _compute_type)
_FLOAT_ONLY = (*_SPECIAL, "torch.aten.erfc", "torch.aten.erfinv", "torch.aten.lgamma", "torch.aten.digamma", "torch.aten.hypot", "torch.aten.nextafter",
               "torch.aten.copysign.Tensor", "torch.aten.copysign.Scalar", "torch.aten.fmod.Scalar",
               "torch.aten.fmod.Tensor")
_INT_ONLY = ("torch.aten.bitwise_or.Scalar", "torch.aten.bitwise_xor.Scalar", "torch.aten.__lshift__.Tensor",
             "torch.aten.__rshift__.Tensor", "torch.aten.gcd", "torch.aten.lcm",
             "torch.aten.pow.Tensor_Tensor")  # float pow: torch-mlir's lowering
_SCALARS = {"!torch.float": ("torch_c.to_f64", "f64"), "!torch.int": ("torch_c.to_i64", "i64"),
            "!torch.bool": ("torch_c.to_i1", "i1")}
_TENSOR_OPERANDS = {"torch.aten.view.dtype": 1}  # the others: every operand is a tensor


def _width(t: ir.Type) -> int:
    s = str(t)
    return {"f64": 64, "f32": 32, "bf16": 16, "f16": 16}.get(s) or ir.IntegerType(t).width


@register
class TorchElementwiseMath(SymPass):
    """Lower elementwise aten ops without a torch-mlir lowering (erfc, erfinv, hypot, fmod by a scalar, ...) to linalg.generic."""

    name = "sym-torch-elementwise-math"

    def run(self, op: ir.Operation) -> None:
        for o in ops_named(op, {*_BODIES, "torch.operator"}):
            name = _name(o)
            if name not in _BODIES:
                continue
            if self._lower(o, name):
                self.bump("ops-lowered")

    @staticmethod
    def _lower(o: ir.Operation, name: str) -> bool:
        res = _parse(o.results[0].type) if len(o.results) == 1 else None
        n_operands = _TENSOR_OPERANDS.get(name, len(o.operands))
        operands = list(o.operands[:n_operands])
        kinds = [_parse(v.type) or _SCALARS.get(str(v.type)) for v in operands]
        if res is None or any(k is None for k in kinds):
            return False  # an operand or element type we do not map: left to torch-mlir
        tensors = [k for k in range(len(kinds)) if isinstance(kinds[k][0], list)]  # the others are scalars
        ins = [kinds[k] for k in tensors]
        rdims, relem = res
        is_float = _ELEM[relem] in ("f32", "f64", "bf16", "f16")
        if (name in _FLOAT_ONLY and not is_float) or (name in _INT_ONLY and is_float):
            return False
        if any(elem == "ui8" for _, elem in ins) and name not in _FLOAT_ONLY + ("torch.aten.view.dtype",):
            return False  # unsigned: the integer bodies read integers as signed
        if name == "torch.aten.view.dtype" and (
                ins[0][0] != rdims or _width(ir.Type.parse(_ELEM[ins[0][1]])) != _width(ir.Type.parse(_ELEM[relem]))
                or "i1" in (_ELEM[ins[0][1]], _ELEM[relem])):
            return False
        rank = len(rdims)
        loc = o.location
        if any(len(dims) > rank for dims, _ in ins):
            return False
        sources = {}  # each dynamic result dim: (tensor operand, its dim) of that size (aten broadcasting)
        for d in range(rank):
            if rdims[d] is None:
                sources[d] = next(((k, d - (rank - len(dims))) for k, (dims, _) in enumerate(ins)
                                   if d - (rank - len(dims)) >= 0 and dims[d - (rank - len(dims))] is None), None)
                if sources[d] is None:
                    return False
        with ir.InsertionPoint(o), loc:
            scalars = {}
            for k, (v, kind) in enumerate(zip(operands, kinds)):
                if k not in tensors:
                    op_name, t = kind
                    scalars[k] = ir.Operation.create(op_name, results=[ir.Type.parse(t)], operands=[v]).result
            builtins = []
            for v, (dims, elem) in zip([operands[k] for k in tensors], ins):
                bt = _builtin(dims, elem)
                builtins.append(ir.Operation.create("torch_c.to_builtin_tensor", results=[bt], operands=[v]).result)
            sizes = [tensor.dim(builtins[k], arith.constant(ir.IndexType.get(), j)) for k, j in sources.values()]
            rtype = _builtin(rdims, relem)
            init = ir.Operation.create("tensor.empty", results=[rtype], operands=sizes).result
            maps = []
            for dims, _ in ins:
                lead = rank - len(dims)
                exprs = [ir.AffineConstantExpr.get(0) if (dims[i] == 1 and rdims[lead + i] != 1)
                         else ir.AffineDimExpr.get(lead + i) for i in range(len(dims))]
                maps.append(ir.AffineMap.get(rank, 0, exprs))
            maps.append(ir.AffineMap.get_identity(rank))
            parallel = ir.Attribute.parse("#linalg.iterator_type<parallel>")
            generic = ir.Operation.create(
                "linalg.generic", results=[rtype], operands=builtins + [init],
                attributes={
                    "indexing_maps": ir.ArrayAttr.get([ir.AffineMapAttr.get(m) for m in maps]),
                    "iterator_types": ir.ArrayAttr.get([parallel] * rank),
                    "operandSegmentSizes": ir.DenseI32ArrayAttr.get([len(builtins), 1]),
                },
                regions=1)
            block = generic.regions[0].blocks.append(*[b.type.element_type for b in builtins],
                                                     rtype.element_type)
            with ir.InsertionPoint(block):
                elements = iter([arith.uitofp(ir.F32Type.get(), a) if elem == "ui8" and name in _FLOAT_ONLY else a
                                 for a, (_, elem) in zip(list(block.arguments)[:-1], ins)])
                args = [scalars[k] if k in scalars else next(elements) for k in range(len(operands))]
                value = _BODIES[name](args, rtype.element_type)
                linalg.YieldOp([value])
            back = ir.Operation.create("torch_c.from_builtin_tensor", results=[o.results[0].type],
                                       operands=[generic.result]).result
        o.results[0].replace_all_uses_with(back)
        o.erase()
        return True
