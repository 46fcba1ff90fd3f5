"""Write each `tm_tensor.attention` that sym-torch-attention made as one fused GPU launch: flash
attention's online softmax, with no scores buffer and no library calls.

Expanded, attention is a product `q @ k^T` (a cuBLAS call), a mask-and-softmax kernel over a
[batch, heads, L, S] scores buffer and a product `p @ v` (a second cuBLAS call); a heads-first product
whose batch and heads dims do not collapse is a cuBLAS call per batch index. Here it is one launch
over every batch index: a warp per query row, 16 rows (warps) per block (8 past head dim 64: q's row
lives in registers); per chunk of 32 keys the block stages k and v in shared memory (f32; k's rows
padded by one word, so that lane j reading its key's row hits distinct banks; software pipelined: the
next chunk's tiles are loaded, every load before any store, while this one is computed), each lane scores its key against the row of q it holds in registers
(pre-scaled), the warp takes the chunk's max and sum with xor shuffles and rescales its running sum
and accumulator (lane l owns the output's dims l, l + 32, ...), then adds each key's probability
(an idx shuffle) times v's row. Masks: causal (a row's keys end at min(i + 1, S); the block stages the
keys its last row reads), bool (false is -inf) or additive float, broadcast over dims of size 1;
rows whose keys are all masked give 0 (PyTorch's safe softmax). Half inputs are computed in f32;
each probability is rounded to the half type before its product with v (flash attention's rounding
of P), the output once. A mask that sym-torch-attention broadcast with a linalg.generic (and whatever
fusion put into it) is computed in the kernel at each (row, key) from the generic's inputs. Loads see through buffers only a `memref.copy` or `linalg.transpose` of
a view fills for this op (the heads split: q, k, v are read in place from the qkv buffer), and an
output that only a `linalg.transpose` reads is written transposed into that transpose's buffer.

Long sequences: past `library-above` scores (batch dims x L x S; 2^21 in float32) or
`library-above-half` (2^16 in bf16 / f16), where PyTorch's kernels win (flash attention on tensor cores
for half types, the memory-efficient kernel in float32), the host program calls PyTorch's attention
instead: the kernel sits in the else branch of an `scf.if` on the size, computed at run time (one
artifact for every size, no recompile; static sizes decide here). The call (`@__sym_attention_<n>`,
runtime/cuda.py `library_attention`) reads the same in-place views and writes the same (transposed)
output; a mask the kernel would compute from its producer generic is computed by a copy of that
generic at the mask's broadcast shape (dims no input of the generic reads are 1: [B, 1, 1, S], not
the scores' [B, H, L, S]). -1 turns the branch off.

Before:
  tm_tensor.attention {sym.causal = true, sym.scale = 1.250000e-01 : f64}
      ins(%q, %k, %v : memref<1x4x?x64xf32>, ...) outs(%o : memref<1x4x?x64xf32>)
After (the library branch left out):
  %grid = arith.muli %heads_and_batch, %row_blocks : index
  gpu.launch blocks(...) in (%gx = %grid, ...) threads(...) in (%sx = %c32, %sy = %c16, %sz = %c1)
      workgroup(%ks : memref<2080xf32, #gpu.address_space<workgroup>>, %vs : memref<2048xf32, ...>) {
    ... loads of chunk 0's k / v tiles
    ... scf.for over chunks of 32 keys: gpu.barrier, store the tiles, gpu.barrier, load the next
        chunk's, scores, gpu.shuffle xor (max, sum), rescale, gpu.shuffle idx (p_j) * v[j] ...
    memref.store ... %o[...]
  }
"""
from __future__ import annotations

import math

from torch_mlir import ir
from torch_mlir.dialects import arith as arith_d
from torch_mlir.dialects import func as func_d
from torch_mlir.dialects import memref as memref_d
from torch_mlir.dialects import scf as scf_d

from mlir_sym.passes._compute_common import (MEMREF_VIEW_OPS, clone_remapped, defining_op, dim_or_zero,
                                             indexing_maps, ops_between, ops_named, root_buffer, transpose_view, use_owner,
                                             before,
                                             walk_ops)
from mlir_sym.passes.registry import SymPass, located_error, register

ROWS = 16  # warps (query rows) per block, by default (option `rows`; 4 took 2-2.6 times as long at length 512-2048 on an H100)
MAX_HEAD = 128  # q's row in registers, k and v tiles of 32 rows in shared memory (attention.FUSED_MAX_HEAD)
WARP_SYNCHRONOUS = "sym.warp_synchronous"  # on the launch: lanes exchange values, so 32 lanes are needed
CHUNK = 32  # keys per step: one per lane
_HALF = ("bf16", "f16")
# Past these many scores (batch dims x L x S) the runtime calls PyTorch's attention instead (option
# library-above / library-above-half; -1: never). H100, heads 4, head dim 64 (bench_attention.py):
# in float32 the kernel took 32 us at 1 x 512 (1M scores) against 55 for torch's memory-efficient
# kernel, 86 against 55 at 4 x 512 (4M); in bf16 flash attention (tensor cores) took 5.0 us at
# 2 x 128 (131K scores) against 11.2, and 5.2 against 5.7 at 1 x 32 (4K), where copying its result
# costs more than it saves.
LIBRARY_ABOVE = 1 << 21
LIBRARY_ABOVE_HALF = 1 << 16
LIBRARY_CALL = "attention"  # sym.library_call of the declaration: @__sym_attention_<n>


def _static_dims(t: ir.Type) -> list[int | None]:
    s = ir.ShapedType(t)
    return [None if s.is_dynamic_dim(d) else s.get_dim_size(d) for d in range(s.rank)]


class _Text:
    """MLIR text of the kernel, SSA names numbered."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.n = 0

    def __call__(self, rhs: str, indent: int = 2) -> str:
        self.n += 1
        name = f"%t{self.n}"
        self.lines.append(" " * indent + f"{name} = {rhs}")
        return name

    def raw(self, line: str, indent: int = 2) -> None:
        self.lines.append(" " * indent + line)


def kernel_text(types: dict[str, str], nb: int, e: int, ev: int, elem: str, mask: tuple | None,
                causal: bool, scale: float, rows_per_block: int = ROWS) -> str:
    """A private function whose body computes the attention of its operands (q, k, v, [mask,] out:
    `types` their memref types) with one gpu.launch: nb batch dims, head dims e (q, k) and ev (v), the
    element type `elem`, mask (its static dims, element type, whether it has the scores' full shape)
    or None."""
    t = _Text()
    f32 = "f32"
    args = ["%q: " + types["q"], "%k: " + types["k"], "%v: " + types["v"]]
    if mask is not None:
        args.append("%m: " + types["m"])
    args.append("%o: " + types["o"])
    c = {}

    def const(v: int, indent: int = 2) -> str:
        key = (v, indent)
        if key not in c:
            c[key] = t(f"arith.constant {v} : index", indent)
        return c[key]

    def fconst(v: str, indent: int) -> str:
        return t(f"arith.constant {v} : f32", indent)

    def load(ref: str, typ: str, idxs: list[str], el: str, indent: int) -> str:
        x = t(f"memref.load {ref}[{', '.join(idxs)}] : {typ}", indent)
        return t(f"arith.extf {x} : {el} to f32", indent) if el in _HALF else x

    qdims = _static_dims(ir.Type.parse(types["q"]))

    def qdim(d: int) -> str:
        return const(qdims[d]) if qdims[d] is not None else t(f"memref.dim %q, {const(d)} : {types['q']}")

    batch = [qdim(d) for d in range(nb)]
    length = qdim(nb)
    kdims = _static_dims(ir.Type.parse(types["k"]))
    keys = const(kdims[nb]) if kdims[nb] is not None else t(f"memref.dim %k, {const(nb)} : {types['k']}")
    n = batch[0]
    for b in batch[1:]:
        n = t(f"arith.muli {n}, {b} : index")
    rows = const(rows_per_block)
    rblocks = t(f"arith.ceildivui {length}, {rows} : index")
    grid = t(f"arith.muli {n}, {rblocks} : index")
    one, lanes = const(1), const(CHUNK)
    ks_n, vs_n = CHUNK * (e + 1), CHUNK * ev
    smem = "#gpu.address_space<workgroup>"
    t.raw(f"gpu.launch blocks(%bx, %by, %bz) in (%gx = {grid}, %gy = {one}, %gz = {one}) "
          f"threads(%tx, %ty, %tz) in (%sx = {lanes}, %sy = {rows}, %sz = {one}) "
          f"workgroup(%ks : memref<{ks_n}xf32, {smem}>, %vs : memref<{vs_n}xf32, {smem}>) {{")
    I = 4
    c.clear()  # constants inside the launch are its own (sunk anyway)
    k0, k1 = const(0, I), const(1, I)
    rb = t(f"arith.remui %bx, {rblocks} : index", I)
    rest = t(f"arith.divui %bx, {rblocks} : index", I)
    bidx: list[str] = [""] * nb
    for d in reversed(range(nb)):  # batch indices, the last dim fastest
        if d == 0:
            bidx[d] = rest
        else:
            bidx[d] = t(f"arith.remui {rest}, {batch[d]} : index", I)
            rest = t(f"arith.divui {rest}, {batch[d]} : index", I)
    kr = const(rows_per_block, I)
    i0 = t(f"arith.muli {rb}, {kr} : index", I)
    i = t(f"arith.addi {i0}, %ty : index", I)
    live = t(f"arith.cmpi ult, {i}, {length} : index", I)
    ic = t(f"arith.select {live}, {i}, {k0} : index", I)
    if causal:  # row i reads keys j <= i; the block stages those of its last row
        last = t(f"arith.addi {i0}, {const(rows_per_block - 1, I)} : index", I)
        lm1 = t(f"arith.subi {length}, {k1} : index", I)
        last = t(f"arith.minui {last}, {lm1} : index", I)
        bend = t(f"arith.addi {last}, {k1} : index", I)
        bend = t(f"arith.minui {bend}, {keys} : index", I)
        jend = t(f"arith.addi {ic}, {k1} : index", I)
        jend = t(f"arith.minui {jend}, {keys} : index", I)
    else:
        bend = jend = keys
    kl = const(CHUNK, I)
    tid = t(f"arith.muli %ty, {kl} : index", I)
    tid = t(f"arith.addi {tid}, %tx : index", I)
    nthreads = const(CHUNK * rows_per_block, I)
    sc = fconst(f"{float(scale):.9e}", I)
    qrow = [load("%q", types["q"], bidx + [ic, const(d, I)], elem, I) for d in range(e)]
    qrow = [t(f"arith.mulf {x}, {sc} : f32", I) for x in qrow]
    ninf = fconst("0xFF800000", I)
    zero = fconst("0.000000e+00", I)
    racc = (ev + CHUNK - 1) // CHUNK  # accumulators per lane
    chunks = t(f"arith.ceildivui {bend}, {kl} : index", I)

    def slots(width: int) -> list:
        """This thread's elements of a [32, width] tile: (row in the tile, column, in range or None),
        one per round of the block's threads (loop invariants)."""
        total, out = CHUNK * width, []
        for u in range((total + CHUNK * rows_per_block - 1) // (CHUNK * rows_per_block)):
            el = t(f"arith.addi {tid}, {const(u * CHUNK * rows_per_block, I)} : index", I)
            inside = None
            if (u + 1) * CHUNK * rows_per_block > total:  # the last round: some threads have nothing
                inside = t(f"arith.cmpi ult, {el}, {const(total, I)} : index", I)
                el = t(f"arith.select {inside}, {el}, {const(0, I)} : index", I)
            out.append((t(f"arith.divui {el}, {const(width, I)} : index", I),
                        t(f"arith.remui {el}, {const(width, I)} : index", I), inside))
        return out

    def stage(ref: str, typ: str, tile: list, first: str, ind: int) -> list:
        """The loads of rows first .. first + 31 of `ref` (0 past the keys) into this thread's slots:
        all issued before any store."""
        out = []
        for jj, d, _ in tile:
            j = t(f"arith.addi {first}, {jj} : index", ind)
            ok = t(f"arith.cmpi ult, {j}, {keys} : index", ind)
            jc = t(f"arith.select {ok}, {j}, {const(0, ind)} : index", ind)
            x = load(ref, typ, bidx + [jc, d], elem, ind)
            out.append(t(f"arith.select {ok}, {x}, {fconst('0.000000e+00', ind)} : f32", ind))
        return out

    def store(vals: list, tile: list, width: int, pad: int, dst: str, dst_n: int, ind: int) -> None:
        for x, (jj, d, inside) in zip(vals, tile):
            pos = t(f"arith.muli {jj}, {const(width + pad, ind)} : index", ind)
            pos = t(f"arith.addi {pos}, {d} : index", ind)
            st = f"memref.store {x}, {dst}[{pos}] : memref<{dst_n}xf32, {smem}>"
            if inside is None:
                t.raw(st, ind)
            else:
                t.raw(f"scf.if {inside} {{", ind)
                t.raw(st, ind + 2)
                t.raw("}", ind)

    # software pipelined: chunk 0's k / v tiles are loaded before the loop, each step stores the
    # loaded tiles, then loads the next chunk's while it computes this one
    ktile, vtile = slots(e), slots(ev)
    pre = stage("%k", types["k"], ktile, k0, I) + stage("%v", types["v"], vtile, k0, I)
    accs = [f"%a{r}" for r in range(racc)]
    carried = [f"%pf{n}" for n in range(len(pre))]
    iters = ", ".join([f"%run_max = {ninf}", f"%run_sum = {zero}"] + [f"{a} = {zero}" for a in accs]
                      + [f"{c} = {x}" for c, x in zip(carried, pre)])
    n_iter = 2 + racc + len(pre)
    t.raw(f"%res:{n_iter} = scf.for %ch = {k0} to {chunks} step {k1} iter_args({iters}) -> ({', '.join([f32] * n_iter)}) {{", I)
    J = 6
    j0 = t(f"arith.muli %ch, {const(CHUNK, J)} : index", J)
    t.raw("gpu.barrier", J)
    store(carried[:len(ktile)], ktile, e, 1, "%ks", ks_n, J)
    store(carried[len(ktile):], vtile, ev, 0, "%vs", vs_n, J)
    t.raw("gpu.barrier", J)
    jnext = t(f"arith.addi {j0}, {const(CHUNK, J)} : index", J)
    nxt = stage("%k", types["k"], ktile, jnext, J) + stage("%v", types["v"], vtile, jnext, J)
    # lane tx scores key j0 + tx: four partial sums (independent FMA chains)
    row = t(f"arith.muli %tx, {const(e + 1, J)} : index", J)
    parts = [None] * 4
    for d in range(e):
        at = t(f"arith.addi {row}, {const(d, J)} : index", J)
        kd = t(f"memref.load %ks[{at}] : memref<{ks_n}xf32, {smem}>", J)
        p = d % 4
        parts[p] = t(f"arith.mulf {qrow[d]}, {kd} : f32", J) if parts[p] is None else \
            t(f"math.fma {qrow[d]}, {kd}, {parts[p]} : f32", J)
    live_parts = [p for p in parts if p is not None]
    s = live_parts[0]
    for p in live_parts[1:]:
        s = t(f"arith.addf {s}, {p} : f32", J)
    j = t(f"arith.addi {j0}, %tx : index", J)
    if mask is not None:
        mdims, melem, full = mask  # full: the scores' own shape (no dim broadcasts)
        mr = len(mdims)
        inkeys = t(f"arith.cmpi ult, {j}, {keys} : index", J)
        jk = t(f"arith.select {inkeys}, {j}, {const(0, J)} : index", J)
        full = bidx + [ic, jk]
        midx = []
        for dd in range(mr):
            src = full[len(full) - mr + dd]
            if full:
                midx.append(src)
            elif mdims[dd] == 1:
                midx.append(const(0, J))
            elif mdims[dd] is None:  # broadcast if this dim is 1 at run time
                size = t(f"memref.dim %m, {const(dd, J)} : {types['m']}", J)
                unit = t(f"arith.cmpi eq, {size}, {const(1, J)} : index", J)
                midx.append(t(f"arith.select {unit}, {const(0, J)}, {src} : index", J))
            else:
                midx.append(src)
        mv = t(f"memref.load %m[{', '.join(midx)}] : {types['m']}", J)
        if melem == "i1":
            minf = fconst("0xFF800000", J)
            s = t(f"arith.select {mv}, {s}, {minf} : f32", J)
        else:
            if melem in _HALF:
                mv = t(f"arith.extf {mv} : {melem} to f32", J)
            s = t(f"arith.addf {s}, {mv} : f32", J)
    valid = t(f"arith.cmpi ult, {j}, {jend} : index", J)
    minf = fconst("0xFF800000", J)
    s = t(f"arith.select {valid}, {s}, {minf} : f32", J)

    def warp(v: str, op: str) -> str:
        width = t("arith.constant 32 : i32", J)
        for off in (16, 8, 4, 2, 1):
            o = t(f"arith.constant {off} : i32", J)
            t.n += 1
            sh = f"%t{t.n}"
            t.raw(f"{sh}, %t{t.n}v = gpu.shuffle xor {v}, {o}, {width} : f32", J)
            v = t(f"{op} {v}, {sh} : f32", J)
        return v

    cmax = warp(s, "arith.maximumf")
    mnew = t(f"arith.maximumf %run_max, {cmax} : f32", J)
    isinf = t(f"arith.cmpf oeq, {mnew}, {minf} : f32", J)
    fz = fconst("0.000000e+00", J)
    mz = t(f"arith.select {isinf}, {fz}, {mnew} : f32", J)
    p = t(f"arith.subf {s}, {mz} : f32", J)
    p = t(f"math.exp {p} : f32", J)
    corr = t(f"arith.subf %run_max, {mz} : f32", J)
    corr = t(f"math.exp {corr} : f32", J)
    psum = warp(p, "arith.addf")
    lnew = t(f"math.fma %run_sum, {corr}, {psum} : f32", J)
    if elem in _HALF:  # the probability rounded to the half type for its product with v
        p = t(f"arith.truncf {p} : f32 to {elem}", J)
        p = t(f"arith.extf {p} : {elem} to f32", J)
    acc = [t(f"arith.mulf {a}, {corr} : f32", J) for a in accs]
    width = t("arith.constant 32 : i32", J)
    dcols = []
    for r in range(racc):  # lane's output dims, clamped in v's row (its stores are skipped)
        dcol = t(f"arith.addi %tx, {const(CHUNK * r, J)} : index", J)
        if ev % CHUNK:
            dcol = t(f"arith.minui {dcol}, {const(ev - 1, J)} : index", J)
        dcols.append(dcol)
    for jj in range(CHUNK):
        lane = t(f"arith.constant {jj} : i32", J)
        t.n += 1
        pj = f"%t{t.n}"
        t.raw(f"{pj}, %t{t.n}v = gpu.shuffle idx {p}, {lane}, {width} : f32", J)
        for r in range(racc):
            pos = t(f"arith.addi {dcols[r]}, {const(jj * ev, J)} : index", J)
            vv = t(f"memref.load %vs[{pos}] : memref<{vs_n}xf32, {smem}>", J)
            acc[r] = t(f"math.fma {pj}, {vv}, {acc[r]} : f32", J)
    t.raw(f"scf.yield {', '.join([mnew, lnew] + acc + nxt)} : {', '.join([f32] * n_iter)}", J)
    t.raw("}", I)
    for key in [key for key in c if key[1] > I]:  # constants of the loop's body stay there
        del c[key]
    # out = acc / l (0 when every key was masked)
    pos_l = t(f"arith.cmpf ogt, %res#1, {zero} : f32", I)
    fone = fconst("1.000000e+00", I)
    inv = t(f"arith.divf {fone}, %res#1 : f32", I)
    inv = t(f"arith.select {pos_l}, {inv}, {zero} : f32", I)
    t.raw(f"scf.if {live} {{", I)
    S_ = I + 2
    for r in range(racc):
        dcol = t(f"arith.addi %tx, {const(CHUNK * r, S_)} : index", S_)
        y = t(f"arith.mulf %res#{2 + r}, {inv} : f32", S_)
        if elem in _HALF:
            y = t(f"arith.truncf {y} : f32 to {elem}", S_)
        store = f"memref.store {y}, %o[{', '.join(bidx + [i, dcol])}] : {types['o']}"
        if ev % CHUNK and CHUNK * r + CHUNK > ev:
            inside = t(f"arith.cmpi ult, {dcol}, {const(ev, S_)} : index", S_)
            t.raw(f"scf.if {inside} {{", S_)
            t.raw(store, S_ + 2)
            t.raw("}", S_)
        else:
            t.raw(store, S_)
    t.raw("}", I)
    t.raw("gpu.terminator", I)
    t.raw("}")
    body = "\n".join(t.lines)
    return f"func.func private @__sym_attention_kernel({', '.join(args)}) {{\n{body}\n  return\n}}"


def _uncast(v: ir.Value) -> ir.Value:
    """`v` seen through memref.casts (sym-torch-attention's dynamic dims) to its static type."""
    while (o := defining_op(v)) is not None and o.name == "memref.cast":
        v = o.operands[0]
    return v


def _uses(buf: ir.Value, casts: list) -> list[tuple[ir.Operation, int]]:
    """(user, operand number) of `buf` and of the memref.casts of it (collected into `casts`)."""
    out = []
    for u in buf.uses:
        o = use_owner(u)
        if o.name == "memref.cast":
            casts.append(o)
            out.extend(_uses(o.results[0], casts))
        else:
            out.append((o, u.operand_number))
    return out


def _filled_by(buf: ir.Value, at: ir.Operation) -> tuple[ir.Operation | None, list]:
    """The one op that writes `buf` (an alloc) if it is a `memref.copy` or `linalg.transpose` and `buf`
    has no other users than it, `at`, casts and deallocs; (that op, the casts and deallocs)."""
    alloc = defining_op(buf)
    if alloc is None or alloc.name != "memref.alloc":
        return None, []
    writer, dead = None, []
    for o, n in _uses(buf, dead):
        if o == at:
            continue
        if o.name == "memref.dealloc":
            dead.append(o)
        elif o.name in ("memref.copy", "linalg.transpose") and n == 1 and writer is None:
            writer = o
        else:
            return None, []
    if writer is None or writer.block != at.block:
        return None, []
    return writer, dead


def _mask_producer(m: ir.Value, at: ir.Operation) -> tuple[ir.Operation, list] | None:
    """(the linalg.generic, what goes with it) when `m` is a buffer that only an elementwise generic
    writes (sym-torch-attention's broadcast, with what fusion put into it) and only `at` reads: the
    kernel computes its body at each (row, key) instead of reading a scores-sized buffer."""
    alloc = defining_op(m)
    if alloc is None or alloc.name != "memref.alloc":
        return None
    dead: list = []
    writer = None
    for o, n in _uses(m, dead):
        if o == at:
            continue
        if o.name == "memref.dealloc":
            dead.append(o)
        elif o.name == "linalg.generic" and writer is None:
            writer = o
        else:
            return None
    if writer is None or writer.block != at.block or len(writer.results) != 0:
        return None
    segments = list(ir.DenseI32ArrayAttr(writer.attributes["operandSegmentSizes"]))
    if segments[1] != 1 or writer.operands[segments[0]] != m:
        return None
    maps = indexing_maps(writer)
    if maps[-1] != ir.AffineMap.get_identity(maps[-1].n_dims) or \
            any(str(t) != "#linalg.iterator_type<parallel>" for t in ir.ArrayAttr(writer.attributes["iterator_types"])):
        return None
    ins = list(writer.operands)[:segments[0]]
    if not all(dim_or_zero(e) for mp in maps[:-1] for e in mp.results):
        return None
    if any(isinstance(x.type, ir.MemRefType) and _written_between(x, writer, at) for x in ins):
        return None
    body = writer.regions[0].blocks[0]
    if any(o.operation.name not in _INLINE_OK and not o.operation.name.startswith(("arith.", "math."))
           for o in body.operations):
        return None
    return writer, [*dead, writer, alloc]


_INLINE_OK = ("linalg.index", "linalg.yield")


def _inline_mask(launch: ir.Operation, m: ir.Value, g: ir.Operation) -> None:
    """Replace each load of `m` inside `launch` by `g`'s body computed at the load's indices."""
    loads = [o for o in walk_ops(launch) if o.name == "memref.load" and o.operands[0] == m]
    segments = list(ir.DenseI32ArrayAttr(g.attributes["operandSegmentSizes"]))
    ins = list(g.operands)[:segments[0]]
    maps = indexing_maps(g)
    body = g.regions[0].blocks[0]
    for load in loads:
        idxs = list(load.operands)[1:]
        mapping: dict = {}
        with ir.InsertionPoint(load), load.location:
            zero = None
            for x, mp, arg in zip(ins, maps, body.arguments):
                if not isinstance(x.type, ir.MemRefType):
                    mapping[arg] = x
                    continue
                at = []
                for e in mp.results:
                    if isinstance(e, ir.AffineDimExpr):
                        at.append(idxs[e.position])
                    else:
                        zero = zero or arith_d.ConstantOp(ir.IndexType.get(), 0).result
                        at.append(zero)
                mapping[arg] = memref_d.LoadOp(x, at).result
            for o in body.operations:
                o = o.operation
                if o.name == "linalg.yield":
                    load.results[0].replace_all_uses_with(mapping.get(o.operands[0], o.operands[0]))
                elif o.name == "linalg.index":
                    mapping[o.results[0]] = idxs[ir.IntegerAttr(o.attributes["dim"]).value]
                else:
                    clone_remapped(o, mapping)
        load.erase()


def _permutation(o: ir.Operation) -> list[int]:
    return list(ir.DenseI64ArrayAttr(o.attributes["permutation"]))


_READERS = ("memref.dim", "memref.dealloc", "memref.load") + MEMREF_VIEW_OPS


def _written_between(buf: ir.Value, a: ir.Operation, b: ir.Operation) -> bool:
    """Whether an op strictly between `a` and `b` (one block) may write `buf`'s root buffer: a
    linalg op's outs, a copy's target, anything else that takes a view of it but a dim, a load or
    a dealloc (calls and launches conservatively)."""
    root = root_buffer(buf)
    inside = False
    for o in a.block.operations:
        o = o.operation
        if o == a:
            inside = True
            continue
        if o == b:
            return False
        if not inside or o.name in _READERS:
            continue
        operands = list(o.operands)
        if o.name.startswith("linalg.") and "operandSegmentSizes" in o.attributes:
            n_outs = list(ir.DenseI32ArrayAttr(o.attributes["operandSegmentSizes"]))[-1]
            operands = operands[len(operands) - n_outs:]
        elif o.name in ("memref.copy", "linalg.transpose", "linalg.broadcast", "linalg.copy"):
            operands = operands[-1:]
        if any(isinstance(x.type, ir.MemRefType) and root_buffer(x) == root for x in operands):
            return True
        if o.regions and o.name != "linalg.generic" and any(
                root_buffer(x) == root for x in _nested_operands(o)):
            return True
    return False


def _nested_operands(op: ir.Operation):
    for region in op.regions:
        for block in region.blocks:
            for o in block.operations:
                yield from (x for x in o.operation.operands if isinstance(x.type, ir.MemRefType))
                yield from _nested_operands(o.operation)


def _inverse(perm: list[int]) -> list[int]:
    inv = [0] * len(perm)
    for i, p in enumerate(perm):
        inv[p] = i
    return inv


@register
class GpuAttention(SymPass):
    """Write tm_tensor.attention (from sym-torch-attention) as one fused flash-attention launch."""

    name = "sym-gpu-attention"
    options = {"rows": int, "library-above": int, "library-above-half": int}
    rows = ROWS

    def run(self, op: ir.Operation) -> None:
        module = op
        for att in ops_named(module, {"tm_tensor.attention"}):
            if "sym.causal" not in att.attributes:
                raise located_error(att, "tm_tensor.attention without sym.causal / sym.scale: only "
                                         "sym-torch-attention's are lowered")
            self._lower(module, att)
            self.bump("attentions")

    def _operand(self, v: ir.Value, at: ir.Operation, erase: list) -> ir.Value:
        """`v` (seen through casts), or the view a copy / transpose filled it from (read in place)."""
        v = _uncast(v)
        writer, dead = _filled_by(v, at)
        if writer is None or _written_between(writer.operands[0], writer, at):
            return v
        if writer.name == "memref.copy":
            src = writer.operands[0]
        else:
            src = transpose_view(writer.operands[0], _permutation(writer), at)
            if src is None:
                return v
        erase.extend([*dead, writer, defining_op(v)])
        self.bump("reads-in-place")
        return src

    def _output(self, out: ir.Value, at: ir.Operation, erase: list) -> ir.Value:
        """`out` (seen through casts), or (when only a linalg.transpose after `at` reads it) that
        transpose's buffer seen through the inverse permutation."""
        out = _uncast(out)
        alloc = defining_op(out)
        if alloc is None or alloc.name != "memref.alloc":
            return out
        dead: list = []
        readers = [(o, n) for o, n in _uses(out, dead) if o != at]
        if len(readers) == 1 and readers[0][0].name == "linalg.generic" and not dead:
            return self._relayout(out, alloc, *readers[0], at, erase)
        tr = [o for o, n in readers if o.name == "linalg.transpose" and n == 0]
        if len(tr) != 1 or any(o.name != "memref.dealloc" and o != tr[0] for o, _ in readers) \
                or tr[0].block != at.block:
            return out
        dst = tr[0].operands[1]
        ddef = defining_op(dst)
        if ddef is None or ddef.block != at.block or not (
                ddef.name == "memref.alloc" or _reshaped_argument(ddef)):
            return out  # a fresh buffer, or the function's output seen in the attention's shape
        if not before(ddef, at):  # the transpose's buffer is allocated after: allocate it here
            if any(defining_op(x) is not None and not before(defining_op(x), at) for x in ddef.operands):
                return out
            ddef.move_before(at)
        if any(root_buffer(x) == dst for o in (ops_between(at, tr[0]) or []) for x in o.operands):
            return out
        view = transpose_view(dst, _inverse(_permutation(tr[0])), at)
        if view is None:
            return out
        erase.extend([tr[0], *[o for o, _ in readers if o.name == "memref.dealloc"], *dead, alloc])
        self.bump("writes-transposed")
        return view

    def _relayout(self, out: ir.Value, alloc: ir.Operation, g: ir.Operation, n: int, at: ir.Operation,
                  erase: list) -> ir.Value:
        """`out`'s only reader is the generic `g`, as its input `n`: when `g` reads it with a
        permutation of its loops in another order (GPT-2's and BERT's output projection reads the
        attention's [B, H, L, E] as (b, h, l, e) -> its loops (b, l, c, h, e), once fusion folded the
        transpose back to [B, L, H, E] into it), a buffer with `out`'s dims in `g`'s loop order
        replaces it: the kernel writes it through a transposed view, `g` reads it in order. For a
        contraction this is the difference between one GEMM and one per head (and per batch index):
        the heads and head dims collapse into one contracted dim. Else `out`."""
        segments = list(ir.DenseI32ArrayAttr(g.attributes["operandSegmentSizes"]))
        if n >= segments[0] or g.operands[n] != out:
            return out
        maps = indexing_maps(g)
        results = list(maps[n].results)
        if not all(isinstance(e, ir.AffineDimExpr) for e in results):
            return out
        order = sorted(range(len(results)), key=lambda d: results[d].position)
        if order == list(range(len(results))):
            return out
        new = _permuted_alloc(alloc, order)
        view = transpose_view(new, _inverse(order), at)
        if view is None:
            defining_op(new).erase()
            return out
        g.operands[n] = new
        maps[n] = ir.AffineMap.get(maps[n].n_dims, maps[n].n_symbols, [results[d] for d in order])
        g.attributes["indexing_maps"] = ir.ArrayAttr.get([ir.AffineMapAttr.get(m) for m in maps])
        erase.append(alloc)
        self.bump("outputs-in-reader-order")
        return view

    def _lower(self, module: ir.Operation, att: ir.Operation) -> None:
        ops = list(att.operands)
        causal = bool(ir.BoolAttr(att.attributes["sym.causal"]).value)
        scale = ir.FloatAttr(att.attributes["sym.scale"]).value
        erase: list = []
        q, k, v = (self._operand(x, att, erase) for x in ops[:3])
        m = None
        producer = None
        if len(ops) == 5:
            m = _uncast(ops[3])
            producer = _mask_producer(m, att)
        out = self._output(ops[-1], att, erase)
        qt = ir.MemRefType(q.type)
        elem = str(qt.element_type)
        nb = qt.rank - 2
        e = qt.shape[-1]
        ev = ir.MemRefType(v.type).shape[-1]
        if nb < 1 or ir.ShapedType(q.type).is_dynamic_dim(qt.rank - 1) or ir.ShapedType(v.type).is_dynamic_dim(qt.rank - 1):
            raise located_error(att, f"tm_tensor.attention needs rank >= 3 and static head dims, got {q.type}, {v.type}")
        if elem not in ("f32", "bf16", "f16") or not (0 < e <= MAX_HEAD and 0 < ev <= MAX_HEAD):
            raise located_error(att, f"tm_tensor.attention: the fused kernel takes f32 / bf16 / f16 with head dims "
                                     f"up to {MAX_HEAD}, got {elem} with {e} and {ev}")
        threshold = getattr(self, "library-above-half" if elem in _HALF else "library-above",
                            LIBRARY_ABOVE_HALF if elem in _HALF else LIBRARY_ABOVE)
        static = _static_dims(q.type)[:nb + 1] + _static_dims(k.type)[nb:nb + 1]
        scores = None if None in static else math.prod(static)
        library = threshold >= 0 and (scores is None or scores > threshold) and \
            (m is None or (nb <= 2 and ir.MemRefType(m.type).rank == nb + 2))
        if library and nb == 2:
            q = self._query_in_key_order(q, att)
        types = {"q": str(q.type), "k": str(k.type), "v": str(v.type), "o": str(out.type)}
        operands = [q, k, v]
        mask = None
        if m is not None:
            types["m"] = str(m.type)
            mask = (_static_dims(m.type), str(ir.MemRefType(m.type).element_type), producer is not None)
            operands.append(m)
        operands.append(out)
        # q's row (e registers) and the prefetched tiles: past head dim 64, 8 rows a block (256
        # threads may use 255 registers; 512 threads, 128)
        rows = self.rows if max(e, ev) <= 64 else min(self.rows, 8)
        text = kernel_text(types, nb, e, ev, elem, mask, causal, scale, rows)
        tmpl = ir.Module.parse(text, context=module.context)
        block = tmpl.body.operations[0].regions[0].blocks[0]
        body = [o.operation for o in block.operations][:-1]  # all but func.return
        at = att  # where the kernel goes: before `att`, or into the else branch of the library's split
        if library:
            at = self._library_branch(module, att, (q, k, v, m, out), producer, nb, causal, scale, threshold)
        clones = [o.clone(ip=ir.InsertionPoint(at)) for o in body]

        # the clones still use the template's arguments and results (sizes): remap them
        for arg, actual in zip(block.arguments, operands):
            arg.replace_all_uses_with(actual)
        for old, new in zip(body, clones):
            for r_old, r_new in zip(old.results, new.results):
                r_old.replace_all_uses_with(r_new)
        del body, block
        tmpl.body.operations[0].erase()  # its ops use this module's values now: gone before any of those
        for c in clones:
            if c.name == "gpu.launch":
                c.attributes[WARP_SYNCHRONOUS] = ir.UnitAttr.get()
                if producer is not None:
                    _inline_mask(c, m, producer[0])
                    erase.extend(producer[1])
                    self.bump("masks-computed-in-kernel")
        att.erase()
        for o in erase:  # casts before what they cast, readers before their buffers
            o.erase()

    def _query_in_key_order(self, q: ir.Value, att: ir.Operation) -> ir.Value:
        """For the library branch: a [B, H, L, E] query buffer (a memref.alloc that one generic before
        `att` writes and nothing but `att` reads) becomes a [B, L, H, E] buffer seen through a
        transposed view. PyTorch's cuDNN attention gives its output the query's memory order, and the
        output buffer is [B, L, H, E] (the heads merge after it: `_output`): with a [B, H, L, E]
        query its result was copied into the output (a copy kernel a call and layer, 12 us of 182
        for a bf16 GPT-2 at batch 8, length 128 on an H100). Else `q`."""
        alloc = defining_op(q)
        if alloc is None or alloc.name != "memref.alloc" or alloc.block != att.block:
            return q
        qt = ir.MemRefType(q.type)
        if not (isinstance(qt.layout, ir.AffineMapAttr) and qt.layout.value == ir.AffineMap.get_identity(qt.rank)):
            return q
        casts: list = []
        users = _uses(q, casts)
        writers = [o for o, n in users if o.name == "linalg.generic" and
                   n >= list(ir.DenseI32ArrayAttr(o.attributes["operandSegmentSizes"]))[0]]
        if casts or len(writers) != 1 or writers[0].block != att.block or not before(writers[0], att) \
                or any(o not in (att, writers[0]) and o.name != "memref.dealloc" for o, _ in users) \
                or [n for o, n in users if o == att] != [0]:  # q is also k or v: keep it
            return q
        order = [0, 2, 1, 3]
        new = _permuted_alloc(alloc, order)
        view = transpose_view(new, order, alloc)
        if view is None:
            defining_op(new).erase()
            return q
        for o, n in users:
            o.operands[n] = new if o.name == "memref.dealloc" else view
        alloc.erase()
        self.bump("queries-in-key-order")
        return view

    def _library_branch(self, module: ir.Operation, att: ir.Operation, operands: tuple, producer,
                        nb: int, causal: bool, scale: float, threshold: int) -> ir.Operation:
        """Before `att`: `scf.if (scores > threshold) { [the mask at its broadcast shape;] call
        @__sym_attention_<n>(q, k, v, [mask,] out) {sym.causal, sym.scale} } else {}`, the runtime's
        call of PyTorch's attention on the same views (runtime/cuda.py `library_attention`); returns
        the else branch's terminator, before which the kernel goes. A mask the kernel would compute
        from a producer generic is computed by a copy of that generic into a buffer whose dims no
        input or index of the generic reads are 1 (BERT's [B, 1, 1, S] padding mask, not its
        [B, H, L, S] broadcast), which PyTorch broadcasts."""
        q, k, v, m, out = operands
        idx = ir.IndexType.get()
        with ir.InsertionPoint(att), att.location:
            def size(x: ir.Value, d: int) -> ir.Value:
                st = _static_dims(x.type)[d]
                if st is not None:
                    return arith_d.ConstantOp(idx, st).result
                return memref_d.DimOp(x, arith_d.ConstantOp(idx, d).result).result

            sizes = [size(q, d) for d in range(nb + 1)] + [size(k, nb)]  # the scores' shape
            scores = sizes[0]
            for s in sizes[1:]:
                scores = arith_d.MulIOp(scores, s).result
            big = arith_d.CmpIOp(arith_d.CmpIPredicate.ugt, scores, arith_d.ConstantOp(idx, threshold).result).result
            root = _fresh_root(out, att)
            branch = scf_d.IfOp(big, [root.type] if root is not None else [], has_else=True)
            with ir.InsertionPoint(branch.then_block):
                elem = ir.MemRefType(q.type).element_type
                mask = m if producer is None else _broadcast_shape_mask(producer[0], m, sizes, elem)
                args = [q, k, v] + ([mask] if mask is not None else []) + [out] + ([root] if root is not None else [])
                results = [root.type] if root is not None else []
                call = func_d.CallOp(results, ir.FlatSymbolRefAttr.get(_declaration(module, args, results)), args)
                call.attributes["sym.causal"] = ir.BoolAttr.get(causal)
                call.attributes["sym.scale"] = ir.FloatAttr.get_f64(scale)
                scf_d.YieldOp(list(call.results))
            with ir.InsertionPoint(branch.else_block):
                done = scf_d.YieldOp([root] if root is not None else [])
        if root is not None:  # what reads the output after the branch reads the branch's buffer
            for u in list(root.uses):
                o = use_owner(u)
                while o.block != att.block:
                    o = o.parent
                if o != branch.operation and before(branch.operation, o):
                    use_owner(u).operands[u.operand_number] = branch.results[0]
            self.bump("library-results-in-place")
        self.bump("library-branches")
        return done.operation


def _permuted_alloc(alloc: ir.Operation, order: list[int]) -> ir.Value:
    """Before `alloc` (a memref.alloc): a new buffer whose dim d is the old one's dim order[d] (the
    dynamic sizes follow their dims)."""
    t = ir.MemRefType(alloc.results[0].type)
    dynamic = ir.ShapedType.get_dynamic_size()
    sizes = iter(alloc.operands)
    dyn = [next(sizes) if t.shape[d] == dynamic else None for d in range(t.rank)]
    with ir.InsertionPoint(alloc), alloc.location:
        return memref_d.AllocOp(ir.MemRefType.get([t.shape[d] for d in order], t.element_type),
                                [dyn[d] for d in order if dyn[d] is not None], []).result


def _reshaped_argument(op: ir.Operation) -> bool:
    """Whether `op` is an expand_shape / collapse_shape of a function argument (an out-param that
    sym-forward-copies made the result's buffer: [b, s, 256] seen as [b, s, 4, 64])."""
    return op.name in ("memref.expand_shape", "memref.collapse_shape") and \
        isinstance(op.operands[0].owner, ir.Block) and op.operands[0].owner.owner.operation.name == "func.func"


def _fresh_root(out: ir.Value, att: ir.Operation) -> ir.Value | None:
    """The buffer `out` is (a memref.alloc) or is a memref.transpose of, when the attention may give the
    output in memory of its own instead (PyTorch's result, when its layout is the buffer's: no copy):
    nothing but `att` uses `out`, and nothing before `att` but that transpose uses the buffer.
    The library branch then yields the buffer to read after it (library_attention's result, or the
    buffer itself)."""
    if any(use_owner(u) != att for u in out.uses):
        return None
    o = defining_op(out)
    root = out if o is not None and o.name == "memref.alloc" else \
        o.operands[0] if o is not None and o.name == "memref.transpose" else None
    if root is None or defining_op(root) is None or defining_op(root).name != "memref.alloc" \
            or defining_op(root).block != att.block:
        return None
    for u in root.uses:
        user = use_owner(u)
        while user.block != att.block:
            user = user.parent
        if user != o and user != att and before(user, att):
            return None
    return root


def _declaration(module: ir.Operation, args: list[ir.Value], results: list[ir.Type]) -> str:
    """The private declaration `@__sym_attention_<n>` of the runtime's attention for these operand
    and result types (tagged sym.library_call = "attention"), made once."""
    types = [a.type for a in args]
    fn_type = ir.FunctionType.get(types, results)
    n = 0
    for f in module.regions[0].blocks[0].operations:
        f = f.operation
        if f.name == "func.func" and "sym.library_call" in f.attributes \
                and ir.StringAttr(f.attributes["sym.library_call"]).value == LIBRARY_CALL:
            if ir.TypeAttr(f.attributes["function_type"]).value == fn_type:
                return ir.StringAttr(f.attributes["sym_name"]).value
            n += 1
    name = f"__sym_{LIBRARY_CALL}_{n}"
    with ir.InsertionPoint(module.regions[0].blocks[0]), module.location:
        f = func_d.FuncOp(name, fn_type, visibility="private")
        f.operation.attributes["sym.library_call"] = ir.StringAttr.get(LIBRARY_CALL)
    return name


def _broadcast_shape_mask(g: ir.Operation, m: ir.Value, sizes: list[ir.Value], elem: ir.Type) -> ir.Value:
    """A copy of the mask's producer generic `g` (here) into a new buffer shaped like `m` but with size
    1 in the dims that none of `g`'s inputs nor its body's linalg.index read (the loops over them
    compute the same value); `sizes` are `m`'s sizes. A bool mask is written as the additive mask
    PyTorch would make of it (0 where true, -inf where false) in the element type `elem` of q:
    PyTorch's conversion costs three kernels and 40 us of host time a call. Returns the buffer."""
    maps = indexing_maps(g)
    used = {e.position for mp in maps[:-1] for e in mp.results if isinstance(e, ir.AffineDimExpr)}
    used |= {ir.IntegerAttr(o.operation.attributes["dim"]).value for o in g.regions[0].blocks[0].operations
             if o.operation.name == "linalg.index"}
    mt = ir.MemRefType(m.type)
    dynamic = ir.ShapedType.get_dynamic_size()
    shape = [(mt.shape[d] if d in used else 1) for d in range(mt.rank)]
    dyn = [sizes[d] for d in range(mt.rank) if shape[d] == dynamic]
    boolean = str(mt.element_type) == "i1"
    buf = memref_d.AllocOp(ir.MemRefType.get(shape, elem if boolean else mt.element_type), dyn, []).result
    copy = g.clone()
    copy.operands[list(ir.DenseI32ArrayAttr(g.attributes["operandSegmentSizes"]))[0]] = buf
    if boolean:
        body = copy.regions[0].blocks[0]
        body.arguments[len(body.arguments) - 1].set_type(elem)
        yld = [o.operation for o in body.operations][-1]
        with ir.InsertionPoint(yld), yld.location:
            zero = arith_d.ConstantOp(elem, ir.FloatAttr.get(elem, 0.0)).result
            ninf = arith_d.ConstantOp(elem, ir.FloatAttr.get(elem, float("-inf"))).result
            yld.operands[0] = arith_d.SelectOp(yld.operands[0], zero, ninf).result
    return buf
