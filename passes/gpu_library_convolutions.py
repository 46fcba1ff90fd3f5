"""Replace linalg's convolutions on memrefs by calls the GPU runtime serves with PyTorch's (cuDNN).

Runs on the bufferized compute function, before `convert-linalg-to-parallel-loops` would turn a
convolution into a loop nest of one thread per output element, each summing channels x window
products (a 3x3 conv of 64 channels: 576 dependent loads a thread). torch-mlir lowers
`aten.convolution` to a zero `tensor.pad` of the input, a bias broadcast into the output, and one of
`linalg.conv_{1,2,3}d_{ncw_fcw,nchw_fchw,ncdhw_fcdhw}`, `linalg.conv_2d_ngchw_gfchw` (groups: the
channels split into [G, C/G]) or `linalg.depthwise_conv_2d_nchw_chw` (groups = channels). Each
becomes `func.call @__sym_conv_<init|acc>_<plain|grouped|depthwise>_s<strides>_p<padding>_d<dilations>_<b|nb>_<n>(%x, %w[, %bias], %out)`:
`torch.convolution` of x by w, copied into out (`init`) or added to it (`acc`: out += conv, linalg's
semantics). Folded into the call when found:
- the padding: `%x` is a fresh buffer that a zero fill writes whole and a `memref.copy` of a source
  fills at static offsets [0, 0, p...] with the source's sizes, the buffer p larger on both sides of
  each window dim: the call reads the source with padding p, and the buffer, its fill and copy go;
- the output's initialization, right before the call (only view, size and allocation ops between):
  a zero fill (`init`, no bias) or a broadcast of a bias vector along the channel dim(s) (`init`
  with the bias; torch.convolution adds it as eager does), for half inputs also one that converts a
  bias of the inputs' type to the float32 accumulator (the call takes the half bias).
Transposed convolutions reach this as plain ones over an upsampled input; grouped 1-D / 3-D
convolutions, which torch-mlir writes as generics, and convolutions of other element types or
mixed types stay loops.

Before:
  %p = memref.alloc(%n, %h2, %w2) : memref<?x3x?x?xf32>
  linalg.map outs(%p : memref<?x3x?x?xf32>) () { linalg.yield %zero : f32 }
  %sv = memref.subview %p[0, 0, 1, 1] [%n, 3, %h, %w] [1, 1, 1, 1]
  memref.copy %x, %sv
  linalg.broadcast ins(%bias : memref<16xf32>) outs(%out : memref<?x16x?x?xf32>) dimensions = [0, 2, 3]
  linalg.conv_2d_nchw_fchw {dilations = dense<1>, strides = dense<1>} ins(%p, %w) outs(%out)
After:
  call @__sym_conv_init_plain_s1x1_p1x1_d1x1_b_0(%x, %w, %bias, %out)
"""
from __future__ import annotations

import re

from torch_mlir import ir
from torch_mlir.dialects import memref as memref_d

from mlir_sym.passes._compute_common import (ancestor_in, before, constant_value, defining_op, identity_layout, ops_between,
                                               root_buffer, use_owner)
from mlir_sym.passes.gpu_library_calls import GpuLibraryCalls, _is_zero, _previous_op, _whole_views
from mlir_sym.passes.registry import SymPass, register

# op -> (layout, window dims)
_CONVOLUTIONS = {
    "linalg.conv_1d_ncw_fcw": ("plain", 1),
    "linalg.conv_2d_nchw_fchw": ("plain", 2),
    "linalg.conv_3d_ncdhw_fcdhw": ("plain", 3),
    "linalg.conv_2d_ngchw_gfchw": ("grouped", 2),
    "linalg.depthwise_conv_2d_nchw_chw": ("depthwise", 2),
}
_ELEMENTS = {"f32", "f64", "f16", "bf16"}
# ops that write no memory, allowed between an initialization and the convolution it feeds
_NO_WRITES = ("memref.expand_shape", "memref.collapse_shape", "memref.subview", "memref.dim", "memref.cast",
              "memref.reinterpret_cast", "memref.alloc", "arith.", "affine.apply", "index.")


@register
class GpuLibraryConvolutions(SymPass):
    """Replace linalg convolutions on memrefs by runtime calls of torch.convolution (cuDNN)."""

    name = "sym-gpu-library-convolutions"

    def run(self, op: ir.Operation) -> None:
        decls: dict[str, str] = {}
        for fn in list(op.regions[0].blocks[0].operations):
            if fn.operation.name != "func.func" or len(fn.regions[0].blocks) == 0:
                continue
            for block in fn.regions[0].blocks:
                for child in list(block.operations):
                    o = child.operation
                    if o.name in _CONVOLUTIONS and _eligible(o):
                        self._replace(op, o, decls)

    def _replace(self, module: ir.Operation, o: ir.Operation, decls: dict[str, str]) -> None:
        layout, k = _CONVOLUTIONS[o.name]
        x, w, out = list(o.operands)
        strides = _vector_attr(o, "strides", k)
        dilations = _vector_attr(o, "dilations", k)
        dead: list[ir.Operation] = []
        padding = [0] * k
        pad = _zero_padding(o, x, k)
        view = defining_op(x)
        if pad is None and view is not None and len(list(x.uses)) == 1 and _keeps_window_dims(view, k):
            # the padded buffer under a reshape of its channels: grouped [N, G, C/G, ...] over [N, C, ...]
            # (the call reads the flat source), or [N, C, ...] over the grouped layout of an earlier
            # grouped conv's output (the same reshape of the source)
            if view.name == "memref.expand_shape" and layout == "grouped":
                pad = _zero_padding(o, view.operands[0], k, via=view)
            elif view.name == "memref.collapse_shape":
                pad = _zero_padding(o, view.operands[0], k, via=view)
                if pad is not None:
                    if not _identity_layout(pad[0]):
                        pad = None
                    else:
                        with ir.InsertionPoint(o), o.location:
                            src = memref_d.CollapseShapeOp(_collapsed_type(pad[0], view), pad[0],
                                                           view.attributes["reassociation"]).result
                        pad = (src, pad[1], pad[2])
        if pad is not None:
            x, padding, dead = pad
            self.bump("paddings-folded")
        operands = [x, w]
        init, bias = _initialization(o, out, layout)
        if bias is not None and not _unwritten_between(bias, init, o):
            init = bias = None  # the call would read a later value: accumulate onto the initialization
        if init is not None:
            dead.append(init)
            if bias is not None:
                half = _half_source(bias, init, ir.MemRefType(x.type).element_type)
                if half is not None:  # a half bias converted to float32 for the accumulator: the half one
                    bias = half[0]
                    dead.extend(half[1])
                operands.append(bias)
                self.bump("biases-folded")
        operands.append(out)
        kind = (f"conv_{'init' if init is not None else 'acc'}_{layout}_s{_dims(strides)}_p{_dims(padding)}"
                f"_d{_dims(dilations)}_{'b' if bias is not None else 'nb'}")
        root = _fresh_root(out, o, init) if init is not None else None
        if root is None:
            GpuLibraryCalls._library_call(module, o, decls, kind, operands)
        else:  # PyTorch's result becomes the buffer: what reads the buffer after the call reads the call's result
            operands.append(root)
            call = GpuLibraryCalls._library_call(module, o, decls, kind + "_r", operands, [root.type])
            for u in list(root.uses):
                user = use_owner(u)
                top = ancestor_in(user, call.block)  # in the block or nested in it (_fresh_root checked)
                if top is not None and top != call and before(call, top):
                    user.operands[u.operand_number] = call.results[0]
            self.bump("results-handed-out")
        for d in dead:  # the padding's buffer and the initialization, now that nothing reads them
            d.erase()
        self.bump("library-convolutions")


def _fresh_root(out: ir.Value, conv: ir.Operation, init: ir.Operation) -> ir.Value | None:
    """The allocation `out` is (or reshapes) when the call may hand PyTorch's result out as that
    buffer instead of copying it in: a fresh buffer of this block with an identity layout that
    nothing but `out`'s own views, the convolution and its initialization use before the call."""
    root = root_buffer(out)
    a = defining_op(root)
    if a is None or a.name != "memref.alloc" or a.block != conv.block or not _identity_layout(root):
        return None
    views = set(_whole_views(out))
    for u in root.uses:
        user = use_owner(u)
        top = ancestor_in(user, conv.block)
        if top is None:  # used in another block of the function (after sym-assert-to-status' branches)
            return None
        if top in (conv, init) or not before(top, conv):
            continue
        if user.name in ("memref.expand_shape", "memref.collapse_shape") and user.results[0] in views \
                and all(use_owner(v) in (conv, init) for v in user.results[0].uses):
            continue
        return None
    return root




def _half_source(bias: ir.Value, init: ir.Operation, half: ir.Type) -> tuple[ir.Value, list[ir.Operation]] | None:
    """For a float32 bias of half inputs: (the half vector it converts, the conversion and its buffer)
    when a fresh buffer that one `arith.extf` generic fills from a 1-D half vector, read only by the
    initialization, is the bias; else None (the runtime rounds a float32 bias to the inputs' type)."""
    if str(ir.MemRefType(bias.type).element_type) != "f32" or str(half) not in ("bf16", "f16"):
        return None
    alloc = defining_op(bias)
    if alloc is None or alloc.name != "memref.alloc":
        return None
    users = [use_owner(u) for u in bias.uses]
    gens = [u for u in users if u != init]
    if len(gens) != 1 or gens[0].name != "linalg.generic" or len(gens[0].operands) != 2 \
            or gens[0].operands[1] != bias:
        return None
    g = gens[0]
    maps = [str(ir.AffineMapAttr(m).value) for m in ir.ArrayAttr(g.attributes["indexing_maps"])]
    if maps != [str(ir.AffineMap.get_identity(1))] * 2 or ir.MemRefType(g.operands[0].type).shape != \
            ir.MemRefType(bias.type).shape:
        return None
    body = [op.operation for op in g.regions[0].blocks[0].operations]
    src = g.operands[0]
    if len(body) != 2 or body[0].name != "arith.extf" or body[1].operands[0] != body[0].results[0] \
            or body[0].operands[0] != g.regions[0].blocks[0].arguments[0] \
            or str(ir.MemRefType(src.type).element_type) != str(half) or ir.MemRefType(src.type).rank != 1:
        return None
    if not _unwritten_between(src, g, init):
        return None
    return src, [g, alloc]


def _unwritten_between(v: ir.Value, a: ir.Operation, b: ir.Operation) -> bool:
    """Whether no op between `a` and `b` (one block) writes the buffer `v` views."""
    between = ops_between(a, b)
    root = root_buffer(v)
    return between is not None and all(_writes_elsewhere(op, root) for op in between)


def _eligible(o: ir.Operation) -> bool:
    """Memref operands of one float type, or half inputs (bf16 / f16) with a float32 accumulator
    (torch-mlir's half convolutions: the call computes in the half type, as eager, and its result
    converts exactly into the float32 buffer that a rounding reads)."""
    if len(o.results) or len(o.operands) != 3 or not all(isinstance(v.type, ir.MemRefType) for v in o.operands):
        return False
    x, w, out = (str(ir.MemRefType(v.type).element_type) for v in o.operands)
    return (x == w == out and x in _ELEMENTS) or (x == w and x in ("bf16", "f16") and out == "f32")


def _vector_attr(o: ir.Operation, name: str, k: int) -> list[int]:
    if name not in o.attributes:
        return [1] * k
    return [int(v) for v in ir.DenseIntElementsAttr(o.attributes[name])]


def _dims(values: list[int]) -> str:
    return "x".join(str(v) for v in values)


def _zero_padding(conv: ir.Operation, x: ir.Value, k: int, via: ir.Operation | None = None
                  ) -> tuple[ir.Value, list[int], list[ir.Operation]] | None:
    """(source, padding, ops to erase) when `x` is a zero-padded copy of a source (see the module
    doc), else None. `via`: the view of `x` that `conv` reads (it goes too)."""
    alloc = defining_op(x)
    if alloc is None or alloc.name != "memref.alloc":
        return None
    fill = copy = subview = None
    for use in x.uses:
        user = use.owner.operation if hasattr(use.owner, "operation") else use.owner
        if user == (conv if via is None else via):
            continue
        if user.name in ("linalg.map", "linalg.fill") and fill is None and _zero_fill_of(user, x):
            fill = user
        elif user.name == "memref.subview" and subview is None:
            subview = user
        else:
            return None
    if fill is None or subview is None:
        return None
    users = [u.owner.operation if hasattr(u.owner, "operation") else u.owner for u in subview.results[0].uses]
    if len(users) != 1 or users[0].name != "memref.copy" or users[0].operands[1] != subview.results[0]:
        return None
    copy = users[0]
    src = copy.operands[0]
    if not (fill.block == copy.block == conv.block and before(fill, copy) and before(copy, conv)):
        return None
    src_t, pad_t = ir.MemRefType(src.type), ir.MemRefType(x.type)
    rank = pad_t.rank
    offsets = list(ir.DenseI64ArrayAttr(subview.attributes["static_offsets"]))
    strides = list(ir.DenseI64ArrayAttr(subview.attributes["static_strides"]))
    if any(o < 0 for o in offsets) or strides != [1] * rank or offsets[: rank - k] != [0] * (rank - k):
        return None  # dynamic offsets or strides, or padding of the batch or channel dims
    padding = offsets[rank - k:]
    if not _same_sizes(subview, src) or not _grown_by(alloc, pad_t, src, src_t, padding, rank - k):
        return None
    between = ops_between(copy, conv)
    root = root_buffer(src)
    if between is None or not all(_writes_elsewhere(b, root) for b in between):
        return None  # the source may change between the copy and the convolution
    return src, padding, ([via] if via is not None else []) + [copy, subview, fill, alloc]


def _keeps_window_dims(view: ir.Operation, k: int) -> bool:
    """Whether an expand/collapse_shape only splits / merges the channels: [[0], [1, 2], [3], ...]
    with the k window dims last."""
    if view.name not in ("memref.expand_shape", "memref.collapse_shape"):
        return False
    groups = [[int(ir.IntegerAttr(i).value) for i in ir.ArrayAttr(g)] for g in ir.ArrayAttr(view.attributes["reassociation"])]
    return groups == [[0], [1, 2]] + [[3 + d] for d in range(k)]


def _collapsed_type(v: ir.Value, collapse: ir.Operation) -> ir.MemRefType:
    """`v`'s type collapsed by `collapse`'s reassociation (identity layout)."""
    t = ir.MemRefType(v.type)
    shape = []
    for g in ir.ArrayAttr(collapse.attributes["reassociation"]):
        dims = [t.shape[int(ir.IntegerAttr(i).value)] for i in ir.ArrayAttr(g)]
        n = 1
        for d in dims:
            n = -1 if d < 0 or n < 0 else n * d
        shape.append(n if n >= 0 else ir.ShapedType.get_dynamic_size())
    return ir.MemRefType.get(shape, t.element_type)


def _identity_layout(v: ir.Value) -> bool:
    return identity_layout(ir.MemRefType(v.type))


def _zero_fill_of(op: ir.Operation, buf: ir.Value) -> bool:
    """`linalg.fill ins(0) outs(buf)` or `linalg.map outs(buf) { yield 0 }`."""
    if op.name == "linalg.fill":
        return len(op.operands) == 2 and op.operands[1] == buf and _is_zero(op.operands[0])
    if len(op.operands) != 1 or op.operands[0] != buf:
        return False
    body = list(op.regions[0].blocks[0].operations)
    return len(body) == 1 and body[0].operation.name == "linalg.yield" and _is_zero(body[0].operation.operands[0])



def _same_sizes(subview: ir.Operation, src: ir.Value) -> bool:
    """Whether the subview's sizes are the source's: static ones equal, dynamic ones `memref.dim src, i`."""
    sizes = list(ir.DenseI64ArrayAttr(subview.attributes["static_sizes"]))
    dyn = iter(list(subview.operands)[1 + sum(1 for o in ir.DenseI64ArrayAttr(subview.attributes["static_offsets"])
                                               if o < -(1 << 62)):])
    src_shape = ir.MemRefType(src.type).shape
    for i, s in enumerate(sizes):
        if s >= 0:
            if src_shape[i] != s:
                return False
        elif not _is_dim(next(dyn, None), src, i):
            return False
    return True


def _is_dim(v: ir.Value | None, src: ir.Value, i: int) -> bool:
    """Whether `v` is the size of `src`'s dim i: `memref.dim src, i`, or, when `src` is an
    expand_shape or an allocation, the size it was given for dim i."""
    if v is None:
        return False
    op = defining_op(v)
    if op is not None and op.name == "memref.dim" and op.operands[0] == src:
        return constant_value(op.operands[1]) == i
    ex = defining_op(src)
    if ex is not None and ex.name == "func.call" and len(ex.results) == 1 and ex.operands \
            and ex.operands[len(ex.operands) - 1].type == src.type:  # a handed-out result: its buffer's sizes
        return _is_dim(v, ex.operands[len(ex.operands) - 1], i)
    if ex is not None and ex.name in ("memref.expand_shape", "memref.alloc"):
        shape = ir.MemRefType(src.type).shape
        if shape[i] >= 0:
            return False
        dynamic = [d for d in range(len(shape)) if shape[d] < 0]
        sizes = list(ex.operands)[1:] if ex.name == "memref.expand_shape" else list(ex.operands)
        return sizes[dynamic.index(i)] == v
    return False


def _grown_by(alloc: ir.Operation, pad_t: ir.MemRefType, src: ir.Value, src_t: ir.MemRefType,
              padding: list[int], first: int) -> bool:
    """Whether the padded buffer's dims are the source's, window dims grown by 2 * padding (symmetric:
    aten.convolution's padding; an asymmetric F.pad before it keeps its own buffer)."""
    dyn = iter(alloc.operands)
    for i in range(pad_t.rank):
        grow = 2 * padding[i - first] if i >= first else 0
        if pad_t.shape[i] >= 0:
            if src_t.shape[i] < 0 or pad_t.shape[i] != src_t.shape[i] + grow:
                return False
            continue
        size = next(dyn, None)
        if grow == 0:
            if not _is_dim(size, src, i):
                return False
        elif _plus_constant(size, src, i) != grow:
            return False
    return True


_PLUS_RE = re.compile(r"^\(\)\[s0\] -> \(s0 \+ (\d+)\)$")


def _plus_constant(v: ir.Value | None, src: ir.Value, i: int) -> int | None:
    """c when `v` is `memref.dim src, i` + c (an affine.apply of `s0 + c`, or arith.addi), else None."""
    op = defining_op(v) if v is not None else None
    if op is None:
        return None
    if op.name == "affine.apply":
        m = _PLUS_RE.match(str(ir.AffineMapAttr(op.attributes["map"]).value))
        if m and len(op.operands) == 1 and _is_dim(op.operands[0], src, i):
            return int(m.group(1))
    elif op.name == "arith.addi":
        a, b = op.operands
        for d, c in ((a, b), (b, a)):
            if _is_dim(d, src, i) and constant_value(c) is not None:
                return int(constant_value(c))
    return None


def _initialization(conv: ir.Operation, out: ir.Value, layout: str) -> tuple[ir.Operation | None, ir.Value | None]:
    """(the op right before `conv` that writes all of `out`, the bias it broadcasts or None for a
    zero fill), or (None, None) when there is none: the call then adds to `out`."""
    views = _whole_views(out)
    root = root_buffer(out)
    cur = conv
    while True:  # back over ops that neither write nor read out's buffer (the input's padding)
        cur = _previous_op(cur)
        if cur is None:
            return None, None
        if cur.name.startswith(_NO_WRITES):
            continue
        if any(root_buffer(v) == root for v in cur.operands if isinstance(v.type, ir.MemRefType)) \
                or not _writes_elsewhere(cur, root):
            break
    if cur.name == "linalg.fill":
        ok = len(cur.operands) == 2 and any(cur.operands[1] == v for v in views) and _is_zero(cur.operands[0])
        return (cur, None) if ok else (None, None)
    channel_dims = [1, 2] if layout == "grouped" else [1]
    if cur.name == "linalg.broadcast" and len(cur.operands) == 2 and any(cur.operands[1] == v for v in views):
        out_rank = ir.MemRefType(cur.operands[1].type).rank
        dims = list(ir.DenseI64ArrayAttr(cur.attributes["dimensions"]))
        bias = cur.operands[0]
        kept = [d for d in range(out_rank) if d not in dims]
        if ir.MemRefType(bias.type).rank == 1 and kept == [1] and _channels(cur.operands[1]) is not None \
                and ir.MemRefType(bias.type).shape[0] == _channels(cur.operands[1]) and out_rank == \
                ir.MemRefType(root_buffer(out).type).rank and (layout != "grouped" or out_rank != ir.MemRefType(out.type).rank):
            return cur, bias  # a vector of the channels (for the grouped layout: into the [N, C, ...] buffer)
        return None, None
    if cur.name == "linalg.generic":
        bias = _bias_generic(cur, views, channel_dims, str(ir.MemRefType(conv.operands[0].type).element_type))
        if bias is not None:
            return cur, bias
    return None, None


def _channels(buf: ir.Value) -> int | None:
    """The static channel count (dim 1) of an [N, C, ...] buffer."""
    c = ir.MemRefType(buf.type).shape[1]
    return c if c >= 0 else None


def _bias_generic(g: ir.Operation, views: list[ir.Value], channel_dims: list[int], half: str) -> ir.Value | None:
    """The 1-D bias a `linalg.generic` copies into all of one of `views` along the channel dim(s)
    (its input indexed by exactly those dims: a bias vector, or its [G, F/G] expand), else None. With
    half inputs (`half`, their element type) the copy may convert a bias of that type to float32."""
    n_in = ir.DenseI32ArrayAttr(g.attributes["operandSegmentSizes"])[0]
    if n_in != 1 or len(g.operands) != 2 or not any(g.operands[1] == v for v in views):
        return None
    maps = [ir.AffineMapAttr(m).value for m in ir.ArrayAttr(g.attributes["indexing_maps"])]
    its = [str(ir.Attribute(t)) for t in ir.ArrayAttr(g.attributes["iterator_types"])]
    out_rank = ir.MemRefType(g.operands[1].type).rank
    if any("parallel" not in t for t in its) or str(maps[1]) != str(ir.AffineMap.get_identity(out_rank)):
        return None
    res = [str(e) for e in maps[0].results]
    if res != [f"d{d}" for d in channel_dims]:
        return None
    body = [o.operation for o in g.regions[0].blocks[0].operations]
    arg = g.regions[0].blocks[0].arguments[0]
    bias = g.operands[0]
    if len(body) == 2 and body[0].name == "arith.extf" and body[0].operands[0] == arg \
            and body[1].operands[0] == body[0].results[0] and str(ir.MemRefType(bias.type).element_type) == half:
        pass  # a half bias converted into the float32 accumulator of half inputs (exact)
    elif len(body) != 1 or body[0].operands[0] != arg:
        return None
    if ir.MemRefType(bias.type).rank == 1:
        return bias
    ex = defining_op(bias)  # the grouped layout's [G, F/G] view of the bias vector
    if ex is not None and ex.name == "memref.expand_shape" and ir.MemRefType(ex.operands[0].type).rank == 1:
        return ex.operands[0]
    return None



def _writes_elsewhere(op: ir.Operation, root: ir.Value) -> bool:
    """Whether `op` writes nothing, or only buffers other than `root`: fresh allocations, or function
    arguments (output parameters: the caller's fresh tensors, never an input's memory)."""
    if op.name.startswith(_NO_WRITES):
        return True
    if op.name == "memref.copy":
        outs = [op.operands[1]]
    elif not op.name.startswith("linalg."):
        return False
    elif "operandSegmentSizes" in op.attributes:
        n_in = ir.DenseI32ArrayAttr(op.attributes["operandSegmentSizes"])[0]
        outs = list(op.operands)[n_in:]
    elif op.name in ("linalg.broadcast", "linalg.transpose", "linalg.map", "linalg.fill", "linalg.copy"):
        outs = [op.operands[len(op.operands) - 1]]
    else:
        return False
    for out in outs:
        r = root_buffer(out)
        a = defining_op(r)
        if r == root or not (a is None or a.name == "memref.alloc"):
            return False
    return True
