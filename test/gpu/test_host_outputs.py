"""The host program's outputs (codegen/host.py, runtime/cuda.py `Runtime.adopt`), on the CPU: an
output the program fills by copying a fresh library result (training attention's out and log-sum-exp)
becomes that result's memory instead of a device copy, when nothing touches the result after the
copy, nothing else uses the output, and the layouts agree at run time."""
from __future__ import annotations

import pytest
import torch

pytest.importorskip("llvmlite")

from mlir_sym.context import make_context  # noqa: E402

_DECL = """
func.func private @__sym_sdpa_forward_0(memref<2x3xf32>) -> (memref<2x3xf32>, memref<2xf32>) attributes {sym.library_call = "sdpa_forward"}
"""
_CALL = """
  %ok = arith.constant 0 : i32
  %r:2 = call @__sym_sdpa_forward_0(%x) {sym.causal = false, sym.scale = 1.0 : f64} : (memref<2x3xf32>) -> (memref<2x3xf32>, memref<2xf32>)
"""


def _program(body: str, args: str, out_params: int | None) -> str:
    from torch_mlir import ir

    from mlir_sym.codegen.host import HostCodegen

    attrs = f" attributes {{sym.out_params = {out_params} : i64}}" if out_params is not None else ""
    text = f"{_DECL}func.func @main({args}) -> i32{attrs} {{{_CALL}{body}  return %ok : i32\n}}\n"
    with make_context():
        module = ir.Module.parse(text)
        fn = next(o for o in module.body.operations if o.operation.name == "func.func"
                  and ir.StringAttr(o.operation.attributes["sym_name"]).value == "main")
        return HostCodegen(fn).build("host").source


class _Rt:
    """The runtime's part these programs call: the library result is fresh tensors, as
    `Runtime.library_sdpa`'s; `adopt` is the runtime's own."""

    def __init__(self) -> None:
        from mlir_sym.runtime.cuda import Runtime

        self.adopt = Runtime.adopt
        self.results: tuple = ()

    def library_sdpa(self, kind, causal, scale, dtypes, roots, x):
        self.results = (x * 2, x.sum(1))
        return self.results


def _run(source: str, *args: torch.Tensor) -> _Rt:
    rt = _Rt()
    ns = {"rt": rt}
    exec(source, ns)  # noqa: S102 - the generated program
    assert ns["host"](*args) == 0
    return rt


_ARGS2 = "%x: memref<2x3xf32>, %o0: memref<2x3xf32>, %o1: memref<2xf32>"
_COPIES2 = """
  memref.copy %r#0, %o0 : memref<2x3xf32> to memref<2x3xf32>
  memref.copy %r#1, %o1 : memref<2xf32> to memref<2xf32>
"""


def test_outputs_become_the_library_results():
    src = _program(_COPIES2, _ARGS2, 2)
    assert src.count("rt.adopt(") == 2 and ".copy_(" not in src, src
    x, o0, o1 = torch.randn(2, 3), torch.empty(2, 3), torch.empty(2)
    rt = _run(src, x, o0, o1)
    assert o0.data_ptr() == rt.results[0].data_ptr() and o1.data_ptr() == rt.results[1].data_ptr()
    assert torch.equal(o0, x * 2) and torch.equal(o1, x.sum(1))


def test_only_out_params_adopt():
    """Without `sym.out_params` the copies' targets may be inputs (the caller's tensors): copied."""
    src = _program(_COPIES2, _ARGS2, None)
    assert "rt.adopt(" not in src and src.count(".copy_(") == 2, src
    src = _program(_COPIES2, _ARGS2, 1)  # only %o1 is an out-param
    assert src.count("rt.adopt(") == 1 and src.count(".copy_(") == 1, src


def test_a_result_copied_twice_is_adopted_once():
    """The same result into two outputs: the first copy must stay a copy (the result is read after
    it), else both outputs would share their memory."""
    body = """
  memref.copy %r#0, %o0 : memref<2x3xf32> to memref<2x3xf32>
  memref.copy %r#0, %o1 : memref<2x3xf32> to memref<2x3xf32>
"""
    src = _program(body, "%x: memref<2x3xf32>, %o0: memref<2x3xf32>, %o1: memref<2x3xf32>", 2)
    assert src.count("rt.adopt(") == 1 and src.count(".copy_(") == 1, src
    x, o0, o1 = torch.randn(2, 3), torch.empty(2, 3), torch.empty(2, 3)
    _run(src, x, o0, o1)
    assert o0.data_ptr() != o1.data_ptr() and torch.equal(o0, x * 2) and torch.equal(o1, x * 2)


def test_a_result_read_through_a_view_after_the_copy_is_copied():
    body = """
  %v = memref.collapse_shape %r#0 [[0, 1]] : memref<2x3xf32> into memref<6xf32>
  memref.copy %r#0, %o0 : memref<2x3xf32> to memref<2x3xf32>
  memref.copy %v, %o1 : memref<6xf32> to memref<6xf32>
"""
    src = _program(body, "%x: memref<2x3xf32>, %o0: memref<2x3xf32>, %o1: memref<6xf32>", 2)
    assert src.count(".copy_(") == 2 and "rt.adopt(" not in src, src


def test_an_output_used_elsewhere_is_copied_into():
    """The output is also written before the copy through a view: the program's writes go to the
    caller's buffer, which the copy then completes."""
    body = """
  %v = memref.collapse_shape %o0 [[0, 1]] : memref<2x3xf32> into memref<6xf32>
  memref.copy %o1, %o1 : memref<2xf32> to memref<2xf32>
  memref.copy %r#0, %o0 : memref<2x3xf32> to memref<2x3xf32>
"""
    src = _program(body, _ARGS2, 2)
    assert "rt.adopt(" not in src, src


def test_adopt_copies_when_layouts_differ():
    from mlir_sym.runtime.cuda import Runtime

    src = torch.randn(3, 2).t()  # [2, 3], strides (1, 2)
    out = torch.empty(2, 3)
    Runtime.adopt(out, src)
    assert out.data_ptr() != src.data_ptr() and torch.equal(out, src) and out.stride() == (3, 1)
    src = torch.randn(2, 3, dtype=torch.float64)
    out = torch.empty(2, 3)
    Runtime.adopt(out, src)
    assert out.dtype == torch.float32 and torch.allclose(out, src.float())
    src = torch.randn(1, 4)[:, :3]  # a unit dim's stride does not matter
    out = torch.empty(1, 3)
    Runtime.adopt(out, src)
    assert out.data_ptr() == src.data_ptr() and out.stride() == (3, 1) and torch.equal(out, src)


def test_a_copy_under_a_branch_is_not_adopted():
    """A copy inside an scf.if, or in a function of several blocks (sym-assert-to-status' branches):
    what runs after it is not the block's rest, so it stays a copy (a review found both outputs
    adopting the same result in such programs)."""
    body = """
  scf.if %c {
    memref.copy %r#0, %o0 : memref<2x3xf32> to memref<2x3xf32>
  }
  memref.copy %r#1, %o1 : memref<2xf32> to memref<2xf32>
"""
    src = _program(body, "%x: memref<2x3xf32>, %c: i1, %o0: memref<2x3xf32>, %o1: memref<2xf32>", 2)
    assert src.count(".copy_(") == 1 and src.count("rt.adopt(") == 1, src
    assert "rt.adopt(v3, v6)" in src, src  # %o1 from %r#1 at the top level
    body = """
  memref.copy %r#0, %o0 : memref<2x3xf32> to memref<2x3xf32>
  cf.br ^bb1
^bb1:
  memref.copy %r#0, %o1 : memref<2x3xf32> to memref<2x3xf32>
"""
    src = _program(body, "%x: memref<2x3xf32>, %o0: memref<2x3xf32>, %o1: memref<2x3xf32>", 2)
    assert "rt.adopt(" not in src and src.count(".copy_(") == 2, src


def test_only_fresh_library_results_are_adopted():
    """A result of another call (here a contraction-like `__sym_` call the runtime may answer with
    one of its own buffers) is copied."""
    decl = "func.func private @__sym_other_0(memref<2x3xf32>) -> memref<2x3xf32>\n"
    text = (f"{decl}func.func @main(%x: memref<2x3xf32>, %o0: memref<2x3xf32>) -> i32 attributes "
            "{sym.out_params = 1 : i64} {\n  %ok = arith.constant 0 : i32\n"
            "  %r = call @__sym_other_0(%x) : (memref<2x3xf32>) -> memref<2x3xf32>\n"
            "  memref.copy %r, %o0 : memref<2x3xf32> to memref<2x3xf32>\n  return %ok : i32\n}\n")
    from torch_mlir import ir

    from mlir_sym.codegen.host import HostCodegen

    with make_context():
        module = ir.Module.parse(text)
        fn = next(o for o in module.body.operations if o.operation.name == "func.func"
                  and ir.StringAttr(o.operation.attributes["sym_name"]).value == "main")
        src = HostCodegen(fn).build("host").source
    assert "rt.adopt(" not in src and ".copy_(" in src, src


@pytest.mark.parametrize("value,dtype,literal", [("true", "i1", "True"), ("-3", "i8", "-3"),
                                                 ("0x7FC00000", "f32", "float('nan')"), ("-2.5", "bf16", "-2.5")])
def test_a_splat_constant_copy_is_a_fill(value, dtype, literal):
    from torch_mlir import ir

    from mlir_sym.codegen.host import HostCodegen

    text = (f'memref.global "private" constant @c : memref<4x{dtype}> = dense<{value}>\n'
            f"func.func @main(%o: memref<4x{dtype}>) -> i32 attributes {{sym.out_params = 1 : i64}} {{\n"
            "  %ok = arith.constant 0 : i32\n"
            f"  %g = memref.get_global @c : memref<4x{dtype}>\n"
            f"  memref.copy %g, %o : memref<4x{dtype}> to memref<4x{dtype}>\n  return %ok : i32\n}}\n")
    with make_context():
        module = ir.Module.parse(text)
        fn = next(o for o in module.body.operations if o.operation.name == "func.func")
        program = HostCodegen(fn).build("host")
    assert f"v0.fill_({literal})" in program.source and not program.constants, program.source
