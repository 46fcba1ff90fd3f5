"""Bodies of special functions for sym-torch-elementwise-math: modified Bessel functions of the first
kind (`i0`, `special_i0e`, `special_i1`, `special_i1e`) and the inverse of the normal CDF
(`special_ndtri`), computed as eager's CPU kernels compute them (ATen/native/Math.h, after Cephes):

  i0(x)     exp|x| * chbevl(|x| / 2 - 2, A) for |x| <= 8, else exp|x| * chbevl(32 / |x| - 2, B) / sqrt|x|
  i0e(x)    the same without exp|x|
  i1(x)     exp|x| * |x| * chbevl(|x| / 2 - 2, A1) (|x| <= 8), exp|x| * chbevl(32 / |x| - 2, B1) / sqrt|x|,
  i1e(x)    with x's sign (+0.0 at -0.0); i1e without exp|x|. float32 uses the last 17 / 7 terms of
            the Chebyshev series (eager's float tables), float64 all 29 / 25
  ndtri(y)  -inf at 0, inf at 1, NaN outside [0, 1]; a rational function of (y - 1/2)^2 in the middle,
            of 1 / sqrt(-2 log y) in the tails (y or 1 - y below exp(-2)); the tail's log and sqrt in
            float64, as eager's `::log` / `::sqrt` are, the rest in the element type

Both branches are computed and one is selected (elementwise code has no branches). Half types are
computed in float32 and rounded once. chbevl is Clenshaw's recurrence b0 = x*b1 - b2 + c[i],
unrolled over the constant table; eager's AVX2 build contracts x*b1 - b2 into an FMA, so results may
differ from its CPU kernels in the last bits (a few ulp), not more.
"""
from __future__ import annotations

from torch_mlir import ir
from torch_mlir.dialects import arith, math

# Cephes' Chebyshev coefficients (highest order first), as ATen/native/Math.h has them.
I0E_A = [
    -4.41534164647933937950E-18, 3.33079451882223809783E-17, -2.43127984654795469359E-16,
    1.71539128555513303061E-15, -1.16853328779934516808E-14, 7.67618549860493561688E-14,
    -4.85644678311192946090E-13, 2.95505266312963983461E-12, -1.72682629144155570723E-11,
    9.67580903537323691224E-11, -5.18979560163526290666E-10, 2.65982372468238665035E-9,
    -1.30002500998624804212E-8, 6.04699502254191894932E-8, -2.67079385394061173391E-7,
    1.11738753912010371815E-6, -4.41673835845875056359E-6, 1.64484480707288970893E-5,
    -5.75419501008210370398E-5, 1.88502885095841655729E-4, -5.76375574538582365885E-4,
    1.63947561694133579842E-3, -4.32430999505057594430E-3, 1.05464603945949983183E-2,
    -2.37374148058994688156E-2, 4.93052842396707084878E-2, -9.49010970480476444210E-2,
    1.71620901522208775349E-1, -3.04682672343198398683E-1, 6.76795274409476084995E-1,
]
I0E_B = [
    -7.23318048787475395456E-18, -4.83050448594418207126E-18, 4.46562142029675999901E-17,
    3.46122286769746109310E-17, -2.82762398051658348494E-16, -3.42548561967721913462E-16,
    1.77256013305652638360E-15, 3.81168066935262242075E-15, -9.55484669882830764870E-15,
    -4.15056934728722208663E-14, 1.54008621752140982691E-14, 3.85277838274214270114E-13,
    7.18012445138366623367E-13, -1.79417853150680611778E-12, -1.32158118404477131188E-11,
    -3.14991652796324136454E-11, 1.18891471078464383424E-11, 4.94060238822496958910E-10,
    3.39623202570838634515E-9, 2.26666899049817806459E-8, 2.04891858946906374183E-7,
    2.89137052083475648297E-6, 6.88975834691682398426E-5, 3.36911647825569408990E-3,
    8.04490411014108831608E-1,
]
I1E_A = [
    2.77791411276104639959E-18, -2.11142121435816608115E-17, 1.55363195773620046921E-16,
    -1.10559694773538630805E-15, 7.60068429473540693410E-15, -5.04218550472791168711E-14,
    3.22379336594557470981E-13, -1.98397439776494371520E-12, 1.17361862988909016308E-11,
    -6.66348972350202774223E-11, 3.62559028155211703701E-10, -1.88724975172282928790E-9,
    9.38153738649577178388E-9, -4.44505912879632808065E-8, 2.00329475355213526229E-7,
    -8.56872026469545474066E-7, 3.47025130813767847674E-6, -1.32731636560394358279E-5,
    4.78156510755005422638E-5, -1.61760815825896745588E-4, 5.12285956168575772895E-4,
    -1.51357245063125314899E-3, 4.15642294431288815669E-3, -1.05640848946261981558E-2,
    2.47264490306265168283E-2, -5.29459812080949914269E-2, 1.02643658689847095384E-1,
    -1.76416518357834055153E-1, 2.52587186443633654823E-1,
]
I1E_B = [
    7.51729631084210481353E-18, 4.41434832307170791151E-18, -4.65030536848935832153E-17,
    -3.20952592199342395980E-17, 2.96262899764595013876E-16, 3.30820231092092828324E-16,
    -1.88035477551078244854E-15, -3.81440307243700780478E-15, 1.04202769841288027642E-14,
    4.27244001671195135429E-14, -2.10154184277266431302E-14, -4.08355111109219731823E-13,
    -7.19855177624590851209E-13, 2.03562854414708950722E-12, 1.41258074366137813316E-11,
    3.25260358301548823856E-11, -1.89749581235054123450E-11, -5.58974346219658380687E-10,
    -3.83538038596423702205E-9, -2.63146884688951950684E-8, -2.51223623787020892529E-7,
    -3.88256480887769039346E-6, -1.10588938762623716291E-4, -9.76109749136146840777E-3,
    7.78576235018280120474E-1,
]
P0 = [
    -5.99633501014107895267E1, 9.80010754185999661536E1, -5.66762857469070293439E1,
    1.39312609387279679503E1, -1.23916583867381258016E0,
]
Q0 = [
    1.00000000000000000000E0, 1.95448858338141759834E0, 4.67627912898881538453E0,
    8.63602421390890590575E1, -2.25462687854119370527E2, 2.00260212380060660359E2,
    -8.20372256168333339912E1, 1.59056225126211695515E1, -1.18331621121330003142E0,
]
P1 = [
    4.05544892305962419923E0, 3.15251094599893866154E1, 5.71628192246421288162E1,
    4.40805073893200834700E1, 1.46849561928858024014E1, 2.18663306850790267539E0,
    -1.40256079171354495875E-1, -3.50424626827848203418E-2, -8.57456785154685413611E-4,
]
Q1 = [
    1.00000000000000000000E0, 1.57799883256466749731E1, 4.53907635128879210584E1,
    4.13172038254672030440E1, 1.50425385692907503408E1, 2.50464946208309415979E0,
    -1.42182922854787788574E-1, -3.80806407691578277194E-2, -9.33259480895457427372E-4,
]
P2 = [
    3.23774891776946035970E0, 6.91522889068984211695E0, 3.93881025292474443415E0,
    1.33303460815807542389E0, 2.01485389549179081538E-1, 1.23716634817820021358E-2,
    3.01581553508235416007E-4, 2.65806974686737550832E-6, 6.23974539184983293730E-9,
]
Q2 = [
    1.00000000000000000000E0, 6.02427039364742014255E0, 3.67983563856160859403E0,
    1.37702099489081330271E0, 2.16236993594496635890E-1, 1.34204006088543189037E-2,
    3.28014464682127739104E-4, 2.89247864745380683936E-6, 6.79019408009981274425E-9,
]
_I1_FLOAT_TERMS = (17, 7)  # eager's float tables: the last terms of the double ones


def _f(t: ir.Type, v: float) -> ir.Value:
    return arith.constant(t, v)


def fma(a: ir.Value, b: ir.Value, c: ir.Value) -> ir.Value:
    """a * b + c rounded once, as eager's contracted (AVX2) build computes it."""
    return math.fma(a, b, c)


def _chbevl(x: ir.Value, coefficients: list[float], t: ir.Type, fused: bool = False) -> ir.Value:
    """Clenshaw's `p = q; q = a; a = x * q - p + c[i]`, then 0.5 * (a - p); `fused`: x * q - p as an FMA."""
    b0, b1, b2 = _f(t, coefficients[0]), _f(t, 0.0), _f(t, 0.0)
    for c in coefficients[1:]:
        b2, b1 = b1, b0
        xq = fma(x, b1, arith.negf(b2)) if fused else arith.subf(arith.mulf(x, b1), b2)
        b0 = arith.addf(xq, _f(t, c))
    return arith.mulf(_f(t, 0.5), arith.subf(b0, b2))


def _polevl(x: ir.Value, coefficients: list[float], t: ir.Type, fused: bool = False) -> ir.Value:
    """Horner's `p = p * x + c[i]` from p = c[0]; `fused`: each step an FMA."""
    acc = _f(t, coefficients[0])
    for c in coefficients[1:]:
        acc = fma(acc, x, _f(t, c)) if fused else arith.addf(arith.mulf(acc, x), _f(t, c))
    return acc


def _bessel(x: ir.Value, t: ir.Type, order: int, scaled: bool) -> ir.Value:
    """I0 / I1 of `x` (type t: f32 or f64), times exp(-|x|) when `scaled`."""
    a_table, b_table = (I0E_A, I0E_B) if order == 0 else (I1E_A, I1E_B)
    if order == 1 and str(t) == "f32":
        a_table, b_table = a_table[-_I1_FLOAT_TERMS[0]:], b_table[-_I1_FLOAT_TERMS[1]:]
    ax = math.absf(x)
    near = _chbevl(arith.subf(arith.divf(ax, _f(t, 2.0)), _f(t, 2.0)), a_table, t)
    far = _chbevl(arith.subf(arith.divf(_f(t, 32.0), ax), _f(t, 2.0)), b_table, t)
    if scaled:  # i0e: c; i1e: c * |x| (near), c / sqrt|x| (far)
        near = arith.mulf(near, ax) if order == 1 else near
    else:  # i0: exp|x| * c; i1: exp|x| * |x| * c (near), exp|x| * c / sqrt|x| (far), in eager's order
        e = math.exp(ax)
        near = arith.mulf(arith.mulf(e, ax), near) if order == 1 else arith.mulf(e, near)
        far = arith.mulf(e, far)
    far = arith.divf(far, math.sqrt(ax))
    r = arith.select(arith.cmpf(arith.CmpFPredicate.OLE, ax, _f(t, 8.0)), near, far)
    if order == 1:  # x's sign; -0.0 < 0 is false: +0.0 as eager
        r = arith.select(arith.cmpf(arith.CmpFPredicate.OLT, x, _f(t, 0.0)), arith.negf(r), r)
    return r


def bessel_body(order: int, scaled: bool):
    def body(args: list[ir.Value], out: ir.Type, convert, compute_type) -> ir.Value:
        t = compute_type(out)
        return convert(_bessel(convert(args[0], t), t, order, scaled), out)
    return body


def ndtri_body(args: list[ir.Value], out: ir.Type, convert, compute_type) -> ir.Value:
    t = compute_type(out)
    f64 = ir.F64Type.get()
    y0 = convert(args[0], t)
    pred = arith.CmpFPredicate
    one, zero, e2 = _f(t, 1.0), _f(t, 0.0), _f(t, 0.13533528323661269189)
    upper = arith.cmpf(pred.OGT, y0, arith.subf(one, e2))
    y = arith.select(upper, arith.subf(one, y0), y0)
    # middle: y - 1/2 and its square
    ym = arith.subf(y, _f(t, 0.5))
    y2 = arith.mulf(ym, ym)
    mid = arith.addf(ym, arith.mulf(ym, arith.divf(arith.mulf(y2, _polevl(y2, P0, t)), _polevl(y2, Q0, t))))
    mid = arith.mulf(mid, _f(t, 2.50662827463100050242))
    # tails: x = sqrt(-2 log y) and x0 = x - log(x) / x in float64 (eager's ::log, ::sqrt)
    yd = convert(y, f64)
    xd = convert(math.sqrt(arith.mulf(_f(f64, -2.0), math.log(yd))), t)
    xw = convert(xd, f64)
    x0 = convert(arith.subf(xw, arith.divf(math.log(xw), xw)), t)
    z = arith.divf(one, xd)
    x1 = arith.select(arith.cmpf(pred.OLT, xd, _f(t, 8.0)),
                      arith.divf(arith.mulf(z, _polevl(z, P1, t)), _polevl(z, Q1, t)),
                      arith.divf(arith.mulf(z, _polevl(z, P2, t)), _polevl(z, Q2, t)))
    tail = arith.subf(x0, x1)
    tail = arith.select(upper, tail, arith.negf(tail))
    r = arith.select(arith.cmpf(pred.OGT, y, e2), mid, tail)
    r = arith.select(arith.cmpf(pred.OEQ, y0, one), _f(t, float("inf")), r)
    r = arith.select(arith.cmpf(pred.OEQ, y0, zero), _f(t, float("-inf")), r)
    outside = arith.ori(arith.cmpf(pred.OLT, y0, zero), arith.cmpf(pred.OGT, y0, one))
    r = arith.select(outside, _f(t, float("nan")), r)  # a NaN input: -NaN from the tail, as eager's
    return convert(r, out)


# erfcx and log_ndtr: ATen's calc_erfcx (S. G. Johnson's Faddeeva algorithm) and calc_log_ndtr
_ISPI = 0.56418958354775628694807945156  # 1 / sqrt(pi)
_SQRT1_2 = 0.70710678118654752440


def _enclosing_function(block: ir.Block) -> ir.Operation:
    op = block.owner
    while op is not None and op.name != "func.func":
        op = op.parent
    if op is None:
        raise ValueError("erfcx's table needs an enclosing func.func")
    return op


def _erfcx_table() -> ir.Value:
    """ATen's 100 x 7 Chebyshev pieces of erfcx_y100 as an f64 constant at the function's entry (a
    global buffer once bufferized: the body reads its piece's row)."""
    import numpy as np

    from mlir_sym.passes._erfcx_table import ERFCX_Y100

    fn = _enclosing_function(ir.InsertionPoint.current.block)
    attr = ir.DenseElementsAttr.get(np.array(ERFCX_Y100, dtype=np.float64))
    with ir.InsertionPoint.at_block_begin(fn.regions[0].blocks[0]):
        return arith.ConstantOp(attr.type, attr).result


def _erfcx_y100(y100: ir.Value, t: ir.Type) -> ir.Value:
    """ATen's erfcx_y100 in float64 (its literals are doubles): piece int(y100) of the table at
    2 y100 - (2k + 1) (computed in t, as eager does), 1 at y100 = 100; y100 in (0, 100]."""
    from torch_mlir.dialects import tensor

    f64, i64, idx = ir.F64Type.get(), ir.IntegerType.get_signless(64), ir.IndexType.get()
    ok = arith.cmpf(arith.CmpFPredicate.ORD, y100, y100)
    y = arith.select(ok, y100, _f(t, 0.0))  # NaN x: any piece (the result is x)
    k = arith.fptosi(i64, y)
    kc = arith.minsi(arith.maxsi(k, arith.constant(i64, 0)), arith.constant(i64, 99))
    offset = arith.sitofp(t, arith.addi(arith.muli(kc, arith.constant(i64, 2)), arith.constant(i64, 1)))
    tt = arith.extf(f64, arith.subf(arith.mulf(_f(t, 2.0), y), offset)) if str(t) != "f64" else \
        arith.subf(arith.mulf(_f(t, 2.0), y), offset)
    table = _erfcx_table()
    row = arith.index_cast(idx, kc)
    c = [tensor.extract(table, [row, arith.constant(idx, j)]) for j in range(7)]
    acc = c[6]
    for j in range(5, -1, -1):
        acc = arith.addf(c[j], arith.mulf(acc, tt))
    last = arith.cmpi(arith.CmpIPredicate.sge, k, arith.constant(i64, 100))
    return arith.select(last, _f(f64, 1.0), acc)


def _erfcx(x: ir.Value, t: ir.Type) -> ir.Value:
    """calc_erfcx of x (type t: f32 or f64), eager's branches: a continued fraction past 50 (1/(x
    sqrt(pi)) past 5e7), the table on [0, 50], 2 exp(x^2) - the table on [-6.1, 0), 2 exp(x^2) below,
    +inf below -26.7; NaN stays."""
    f64 = ir.F64Type.get()
    pred = arith.CmpFPredicate

    def wide(v: ir.Value) -> ir.Value:
        return v if str(t) == "f64" else arith.extf(f64, v)

    def narrow(v: ir.Value) -> ir.Value:
        return v if str(t) == "f64" else arith.truncf(t, v)

    zero = _f(t, 0.0)
    nonneg = arith.cmpf(pred.OGE, x, zero)
    y100 = arith.select(nonneg, arith.divf(_f(t, 400.0), arith.addf(_f(t, 4.0), x)),
                        arith.divf(_f(t, 400.0), arith.subf(_f(t, 4.0), x)))
    piece = _erfcx_y100(y100, t)
    xx = wide(arith.mulf(x, x))
    xw = wide(x)
    num = arith.mulf(_f(f64, _ISPI), arith.addf(arith.mulf(xx, arith.addf(xx, _f(f64, 4.5))), _f(f64, 2.0)))
    den = arith.mulf(xw, arith.addf(arith.mulf(xx, arith.addf(xx, _f(f64, 5.0))), _f(f64, 3.75)))
    fraction = narrow(arith.divf(num, den))
    one_term = arith.divf(_f(t, _ISPI), x)
    large = arith.select(arith.cmpf(pred.OGT, x, _f(t, 5e7)), one_term, fraction)
    pos = arith.select(arith.cmpf(pred.OGT, x, _f(t, 50.0)), large, narrow(piece))
    twice = arith.mulf(_f(t, 2.0), math.exp(arith.mulf(x, x)))
    mid = narrow(arith.subf(wide(twice), piece))
    neg = arith.select(arith.cmpf(pred.OLT, x, _f(t, -6.1)), twice, mid)
    neg = arith.select(arith.cmpf(pred.OLT, x, _f(t, -26.7)), _f(t, float("inf")), neg)
    r = arith.select(nonneg, pos, neg)
    return arith.select(arith.cmpf(pred.UNO, x, x), x, r)


def erfcx_body(args: list[ir.Value], out: ir.Type, convert, compute_type) -> ir.Value:
    t = compute_type(out)
    return convert(_erfcx(convert(args[0], t), t), out)


def log_ndtr_body(args: list[ir.Value], out: ir.Type, convert, compute_type) -> ir.Value:
    """calc_log_ndtr: log(erfcx(-x / sqrt 2) / 2) - x^2 / 2 below -1, else log1p(-erfc(x / sqrt 2) / 2)."""
    t = compute_type(out)
    x = convert(args[0], t)
    s = arith.mulf(x, _f(t, _SQRT1_2))
    low = arith.subf(math.log(arith.divf(_erfcx(arith.negf(s), t), _f(t, 2.0))), arith.mulf(s, s))
    high = math.log1p(arith.negf(arith.divf(math.erfc(s), _f(t, 2.0))))
    r = arith.select(arith.cmpf(arith.CmpFPredicate.OLT, x, _f(t, -1.0)), low, high)
    return convert(r, out)
