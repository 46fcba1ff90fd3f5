"""A compiled artifact: compiled guards + compiled compute + the plan that connects them to torch.

Per call: read the input sizes (sources), run the native guard function, allocate outputs with
torch's allocator from the symbol values, call the compute with memref descriptors over the tensors'
storage, and assemble the outputs (SymInt outputs are evaluated from symbols). Nothing is parsed or
lowered per call.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import torch

from mlir_sym.runtime.cpu import ComputeCall, ScalarCall

log = logging.getLogger("mlir_sym.runtime")


class SymAssertionError(RuntimeError):
    """A runtime assertion of the compiled graph failed: the inputs are invalid for the program."""


class GuardMiss(Exception):
    """A guard of this artifact failed: another variant must serve these inputs (not a user error)."""

    def __init__(self, check_id: int, text: str, origin: str) -> None:
        super().__init__(f"guard {check_id} failed: {text} (from {origin})")
        self.check_id, self.text, self.origin = check_id, text, origin


@dataclass
class OutputPlan:
    kind: str  # "tensor" | "sym" | "none" | "const"
    dtype: torch.dtype | None = None
    size_slice: tuple[int, int] = (0, 0)  # where this tensor's sizes sit in the sizes function's result
    index: int = -1  # sym output: position in the sizes function result; const: unused
    const: Any = None


class Artifact:
    def __init__(
        self,
        *,
        name: str,
        guard: ScalarCall,
        compute: ComputeCall,
        read_sources: Callable[[Sequence[Any]], list[int]],
        symbol_from_source: Sequence[int],
        sizes_fn: Callable[..., tuple],
        outputs: Sequence[OutputPlan],
        tensor_inputs: Sequence[int],
        scalar_inputs: Sequence[int],
        checks: Sequence[tuple[str, str, str]],
        assert_msgs: Sequence[str],
        device: torch.device | None = None,
        keepalive: Any = None,
    ) -> None:
        self.name = name
        self.guard = guard
        self.compute = compute
        self.read_sources = read_sources
        self.symbol_from_source = list(symbol_from_source)
        self.sizes_fn = sizes_fn
        self.outputs = list(outputs)
        self.tensor_inputs = list(tensor_inputs)
        self.scalar_inputs = list(scalar_inputs)
        self.input_order = sorted(self.tensor_inputs + self.scalar_inputs)
        self.checks = list(checks)
        self.assert_msgs = list(assert_msgs)
        self.device = device
        self._keepalive = keepalive
        self.calls = 0

    def check(self, args: Sequence[Any]) -> tuple[list[int], int]:
        sizes = self.read_sources(args)
        return sizes, self.guard(sizes)

    def explain(self, status: int) -> tuple[str, str, str]:
        kind, text, origin = self.checks[abs(status) - 1]
        return kind, text, origin

    def __call__(self, args: Sequence[Any]) -> list[Any]:
        sizes, status = self.check(args)
        if status > 0:
            kind, text, origin = self.explain(status)
            raise GuardMiss(status, text, origin)
        if status < 0:
            kind, text, origin = self.explain(status)
            raise SymAssertionError(f"runtime assertion failed: {text} (at {origin})")
        return self.run_checked(args, sizes)

    def run_checked(self, args: Sequence[Any], sizes: list[int]) -> list[Any]:
        self.calls += 1
        symvals = [sizes[i] for i in self.symbol_from_source]
        out_sizes = self.sizes_fn(*symvals)
        outs: list[torch.Tensor] = []
        results: list[Any] = []
        for o in self.outputs:
            if o.kind == "tensor":
                t = torch.empty(out_sizes[o.size_slice[0]:o.size_slice[1]], dtype=o.dtype, device=self.device)
                outs.append(t)
                results.append(t)
            elif o.kind == "sym":
                results.append(out_sizes[o.index])
            elif o.kind == "const":
                results.append(o.const)
            else:
                results.append(None)
        values: list[Any] = []
        for i in self.input_order:
            a = args[i]
            if isinstance(a, torch.Tensor):
                values.append(a if a.is_contiguous() else a.contiguous())
            else:
                values.append(a)
        values.extend(outs)
        rc = self.compute(values)
        if rc != 0:
            msg = self.assert_msgs[-rc - 1] if 0 < -rc <= len(self.assert_msgs) else f"status {rc}"
            raise SymAssertionError(f"runtime check in compiled code failed: {msg}")
        return results
