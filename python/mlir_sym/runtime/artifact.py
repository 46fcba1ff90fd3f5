"""A compiled artifact: compiled guards + compiled compute + the plan that connects them to torch.

Per call: read the input sizes (sources), run the native guard function, allocate outputs with
torch's allocator from the symbol values, call the compute with memref descriptors over the tensors'
storage, and assemble the outputs (SymInt outputs are evaluated from symbols). Nothing is parsed or
lowered per call.
"""
from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import torch

from mlir_sym.mutations import storages, take
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
    kind: str  # "tensor" | "sym" | "none" | "const" | "alias"
    dtype: torch.dtype | None = None
    size_slice: tuple[int, int] = (0, 0)  # where this tensor's sizes sit in the sizes function's result
    index: int = -1  # sym output: position in the sizes function result; const: unused
    const: Any = None
    # alias: a view of an input ("input", arg index) or of another output ("output", output index),
    # made after the compute by `replay(base, symbol_values)` (the graph's own view ops).
    base: tuple[str, int] | None = None
    replay: Callable[[torch.Tensor, Sequence[int]], torch.Tensor] | None = None
    device: str | None = None  # tensor: the device type eager returns it on, when not the artifact's


@dataclass
class Variant:
    """One compiled version of the graph: its native guard function and its compute."""

    name: str
    guard: ScalarCall
    compute: ComputeCall
    checks: list[tuple[str, str, str]]
    assert_msgs: list[str]
    keepalive: Any = None
    calls: int = 0
    # () -> a JSON-able form of the compiled code from which the variant is rebuilt without compiling
    # (the artifact cache, artifact_cache.py); None where it cannot be.
    record: Callable[[], dict] | None = None


class Artifact:
    """Every compiled variant of one graph, tried in order (specializations first, generic last).

    The first variant whose guards all hold runs; a failing assert is the user's error whichever
    variant reports it; when no variant's guards hold, `GuardMiss` tells the backend to serve the
    call another way (Dynamo's own guards normally make that impossible for the generic variant).
    """

    def __init__(
        self,
        *,
        name: str,
        variants: Sequence[Variant],
        read_sources: Callable[[Sequence[Any]], list[int]],
        symbol_from_source: Sequence[int],
        sizes_fn: Callable[..., tuple],
        outputs: Sequence[OutputPlan],
        device: torch.device | None = None,
    ) -> None:
        self.name = name
        self.variants = list(variants)
        self.read_sources = read_sources
        self.symbol_from_source = list(symbol_from_source)
        self.sizes_fn = sizes_fn
        self.outputs = list(outputs)
        self.device = device
        self.calls = 0
        self.derived_fn: Callable[..., tuple] | None = None  # see importer.ImportedGraph.derived
        self.plan: dict | None = None  # the per-call plan as data (capture.artifact_plan)
        self._memo: dict[tuple, tuple[Variant, list[int], list[Any]]] = {}
        self.graphs: Any = None  # a runtime.cuda_graphs.CudaGraphs when CUDA graphs are on for it
        # per input, the dim order it is permuted by before anything reads it (a transposed weight
        # passed as the contiguous tensor it views: importer.ImportedGraph.input_perms), or None
        self.input_perms: list[tuple[int, ...] | None] | None = None
        # output index -> input index: the output is a new value of that input (an input mutation,
        # mutations.py) that the compute may write into the input's own memory, passed as its buffer
        self.into: dict[int, int] = {}

    @property
    def generic(self) -> Variant:
        return self.variants[-1]

    @property
    def checks(self) -> list[tuple[str, str, str]]:
        return self.generic.checks

    MEMO_LIMIT = 4096  # distinct input-size tuples remembered (then forgotten all at once)

    def permuted(self, args: Sequence[Any]) -> Sequence[Any]:
        """`args` as the compute takes them: the inputs of `input_perms` permuted (views)."""
        if self.input_perms is None:
            return args
        perms = self.input_perms
        return [a.permute(perms[i]) if i < len(perms) and perms[i] is not None else a for i, a in enumerate(args)]

    def select(self, args: Sequence[Any]) -> tuple[Variant, list[int]]:
        """The variant to run for `args` and the input sizes; raises GuardMiss/SymAssertionError."""
        sizes = self.read_sources(self.permuted(args))
        plan = self._memo.get(tuple(sizes)) or self._plan(sizes)
        return plan[0], sizes

    def _plan(self, sizes: list[int]) -> tuple[Variant, list[int], list[tuple]]:
        """For these input sizes: the variant whose guards hold, the symbol values and the output
        shapes. Guards and output sizes are functions of the sizes alone, so the plan is remembered
        per size tuple: a size seen before costs one dict lookup, not a guard call."""
        miss = 0
        for v in self.variants:
            status = v.guard(sizes)
            if status == 0:
                break
            if status < 0:  # an assert: the user's error, raised on every call (never remembered)
                kind, text, origin = v.checks[-status - 1]
                raise SymAssertionError(f"runtime assertion failed: {text} (at {origin})")
            miss = status
        else:
            kind, text, origin = self.generic.checks[miss - 1]
            raise GuardMiss(miss, text, origin)
        symvals = [sizes[i] for i in self.symbol_from_source]
        out_sizes = self.sizes_fn(*symvals)
        shapes = [tuple(out_sizes[o.size_slice[0]:o.size_slice[1]]) if o.kind == "tensor"
                  else out_sizes[o.index] if o.kind == "sym" else None for o in self.outputs]
        plan = (v, symvals, shapes)
        if len(self._memo) >= self.MEMO_LIMIT:
            self._memo.clear()
        self._memo[tuple(sizes)] = plan
        return plan

    def __call__(self, args: Sequence[Any]) -> list[Any]:
        args = self.permuted(args)
        sizes = self.read_sources(args)
        key = tuple(sizes)
        plan = self._memo.get(key) or self._plan(sizes)
        if self.graphs is not None:  # runtime/cuda_graphs.py: this size's CUDA graph, if it has one
            out = self.graphs.call(key, plan, args)
            if out is not None:
                self.calls += 1
                plan[0].calls += 1
                return out
            if key not in self.graphs.graphs:  # undecided: its host time tells whether a graph pays
                t0 = time.perf_counter()
                out = self._run(plan, args)
                self.graphs.ran(key, time.perf_counter() - t0)
                return out
        return self._run(plan, args)

    def _run(self, plan: tuple[Variant, list[int], list[Any]], args: Sequence[Any],
             out_buffers: list[torch.Tensor] | None = None) -> list[Any]:
        """One call of `plan`'s variant; its tensor outputs are new tensors or, given, `out_buffers`."""
        variant, symvals, shapes = plan
        self.calls += 1
        variant.calls += 1
        outs: list[torch.Tensor] = []
        results: list[Any] = []
        given = iter(out_buffers) if out_buffers is not None else None
        bases = storages(args) if self.into and given is None else None
        for o, shape in zip(self.outputs, shapes):
            if o.kind == "tensor":
                t = next(given) if given is not None else \
                    take(args, len(results), self.into, shape, o.dtype, self.device, bases) if bases else None
                if t is None:
                    t = torch.empty(shape, dtype=o.dtype, device=self.device)
                outs.append(t)
                results.append(t)
            elif o.kind == "sym":
                results.append(shape)
            elif o.kind == "const":
                results.append(o.const)
            else:  # "none"; "alias" is filled in after the compute
                results.append(None)
        values: list[Any] = []
        for a in args:
            if isinstance(a, torch.Tensor):
                values.append(a if a.is_contiguous() else a.contiguous())
            else:
                values.append(a)
        if self.derived_fn is not None:  # float scalars computed from sizes: trailing inputs
            values.extend(self.derived_fn(*symvals))
        values.extend(outs)
        rc = variant.compute(values)
        if rc != 0:
            raise status_error(variant, rc)
        for k, o in enumerate(self.outputs):
            if o.kind == "tensor" and o.device is not None and o.device != results[k].device.type:
                results[k] = results[k].to(o.device)  # e.g. torch.arange(n.item()) in a CUDA graph: CPU
            if o.kind == "alias":
                kind, i = o.base
                results[k] = o.replay(args[i] if kind == "input" else results[i], symvals)
        return results


def status_error(variant: Variant, rc: int) -> SymAssertionError:
    """The error of a nonzero status `rc` of `variant`'s compute: the failed check's message."""
    msgs = variant.assert_msgs
    msg = msgs[-rc - 1] if 0 < -rc <= len(msgs) else f"status {rc}"
    return SymAssertionError(f"runtime check in compiled code failed: {msg}")


@dataclass
class CountPhase:
    """One count step of a CountFillArtifact (see mlir_sym/datadep.py): `artifact` takes the graph's
    inputs followed by the values of the symbols `inputs` (counted by earlier phases) and returns one
    0-d integer tensor per symbol of `outputs`; `derived` computes further symbols from those values
    (the length of `x[:n]`: `fn(values, args)`). `artifact` is None for a phase of derived sizes only."""

    artifact: Artifact | None
    inputs: list[str]
    outputs: list[str]
    derived: list[tuple[str, Callable[[dict[str, int], Sequence[Any]], int]]]


class CountFillArtifact:
    """A graph whose output sizes depend on the data: count, allocate, fill.

    Per call: each count phase runs and its counts are read back to the host (on a GPU, a
    synchronization: an output's size must be known before it is allocated); then the fill artifact
    runs with the graph's inputs followed by the symbol values (`fill_inputs` order): its guard
    function checks their ranges and torch._check facts (a failure raises SymAssertionError), it
    allocates the outputs from the symbol values and fills them. One compilation serves every size
    and every mask.
    """

    def __init__(self, *, name: str, phases: Sequence[CountPhase], fill: Artifact, fill_inputs: Sequence[str]) -> None:
        self.name = name
        self.phases = list(phases)
        self.fill = fill
        self.fill_inputs = list(fill_inputs)
        self.calls = 0
        self.source_ir = fill.source_ir
        self.last_counts: dict[str, int] = {}

    @property
    def variants(self) -> list[Variant]:
        return self.fill.variants

    @property
    def generic(self) -> Variant:
        return self.fill.generic

    @property
    def checks(self) -> list[tuple[str, str, str]]:
        return self.fill.checks

    @property
    def count_artifacts(self) -> list[Artifact]:
        return [p.artifact for p in self.phases if p.artifact is not None]

    def counts(self, args: Sequence[Any]) -> dict[str, int]:
        """The value of every data-dependent symbol for these inputs."""
        vals: dict[str, int] = {}
        for p in self.phases:
            if p.artifact is not None:
                outs = p.artifact(list(args) + [vals[s] for s in p.inputs])
                for s, t in zip(p.outputs, outs):
                    vals[s] = int(t)  # device-to-host read of the count
            for s, fn in p.derived:
                vals[s] = fn(vals, args)
        return vals

    def __call__(self, args: Sequence[Any]) -> list[Any]:
        self.calls += 1
        vals = self.counts(args)
        self.last_counts = vals
        return self.fill(list(args) + [vals[s] for s in self.fill_inputs])
