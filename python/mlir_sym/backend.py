"""The `torch.compile` backend `mlir_sym` (registered through the `torch_dynamo_backends` entry point).

Dynamo hands us a Torch-level FX graph with SymInt sizes; AOTAutograd (with torch-mlir's
decompositions) turns it into an aten graph, which `capture.compile_graph` compiles into an artifact
that serves every size in range. Artifacts are cached per graph (structure + symbolic input shapes +
guards), so the same graph seen again (another frame, another module instance) is not recompiled.

Dynamo settings for data-dependent sizes. Two of Dynamo's options decide whether code whose sizes
depend on the data reaches a backend at all; mlir_sym compiles it when they are on, and does not turn
them on itself:

  torch._dynamo.config.capture_dynamic_output_shape_ops = True
      nonzero, x[mask], masked_select, unique, unique_consecutive, repeat_interleave(repeats): ops
      whose output size is data-dependent stay in the graph, their size an unbacked symbol (u0);
  torch._dynamo.config.capture_scalar_outputs = True
      .item() stays in the graph as an unbacked value (sizes taken from data: x[:n.item()],
      torch.arange(n.item()); torch._check/_check_is_size on it become runtime asserts).

  (or scoped: `with torch._dynamo.config.patch(capture_dynamic_output_shape_ops=True,
  capture_scalar_outputs=True): ...`). Why they are needed: with Dynamo's defaults each such op is
  a graph break, for every backend: Dynamo runs the op eagerly between compiled graphs (results stay
  correct: test_datadep.py::test_without_dynamo_settings_graph_breaks). Why the backend cannot set them:
  Dynamo reads them while tracing a frame, before it calls any backend, and a backend that changed
  them on import would change them for every other backend in the process. With them on,
  sym-mask-to-where turns masked code whose data-dependent size does not escape into `where`s, and
  datadep.py compiles the rest in count/fill phases inside one artifact: no graph break, no
  recompile, no eager fallback (on a GPU, reading the counts back is a synchronization per call).

Config (`mlir_sym.backend.config`, or environment variables):
  fallback_to_eager (MLIR_SYM_FALLBACK=1): a graph we cannot compile runs eagerly, with a warning
      naming the op, instead of raising. Off by default: no silent fallbacks.
  direct_calls (MLIR_SYM_DIRECT=0 turns it off): when AOTAutograd's runtime wrapper has nothing to
      do for a graph (inference, no input mutation but data mutations kept in the graph, which the
      call does and counts in the inputs' version counters; no output aliasing an input or another output,
      no subclass, RNG state or effect token, no duplicated or lifted inputs), Dynamo calls the
      artifact directly (grad mode off around the call, and autocast for a graph traced under it,
      as the wrapper would): the wrapper costs about as much per call as our whole artifact on
      small inputs.
  fast_calls (MLIR_SYM_FAST_CALL=0 turns it off): a directly called artifact is one generated
      function (runtime/fast_call.py: sizes, plan, outputs, compute, marks written out for its
      inputs and outputs), which hands a size's first call to the layers (its guards run there);
      artifacts with CUDA graphs keep the layers.
  float_inputs (MLIR_SYM_FLOAT_INPUTS=graph|restart|off, default graph): float inputs AOTAutograd
      is certain to specialize (float_inputs.py: nn.Embedding's norm_type, eps values Dynamo already
      made constants) are specialized in Dynamo's graph under a guard ("graph": no restart), or
      Dynamo is asked to restart before AOTAutograd traces ("restart"), or left to AOTAutograd's
      pass, which restarts Dynamo after its trace ("off").
  attention_op (MLIR_SYM_ATTENTION_OP=0 turns it off): scaled_dot_product_attention is traced as one
      node and expanded after AOTAutograd (attention.py), not decomposed op by op while tracing.
      MLIR_SYM_CAUSAL_MASKS=0: bool masks equal to the causal one (built from aranges or a tril)
      stay masks instead of becoming is_causal (attention.causal_masks).
  attention_grad_op (MLIR_SYM_ATTENTION_GRAD_OP=cuda|all|none, default cuda): differentiated
      attention on CUDA tensors is traced as mlir_sym::attention_forward, whose backward is
      mlir_sym::attention_backward: calls of PyTorch's memory-efficient kernels on the GPU, that save
      a log-sum-exp per score row instead of the probabilities. "all" takes CPU calls too (written
      as math by the importer; for testing), "none" differentiates PyTorch's math form op by op.
  attention_half_kernel (MLIR_SYM_ATTENTION_HALF_KERNEL=cudnn|efficient, default cudnn): the kernels
      of those ops for bf16 / f16 operands on Hopper GPUs: cuDNN's (PyTorch's choice there, eager's
      and inductor's) or the memory-efficient ones (every other case: float32, older GPUs).
  cuda_graphs (MLIR_SYM_CUDA_GRAPHS=0 turns it off), cuda_graph_min_launches
      (MLIR_SYM_CUDA_GRAPH_MIN_LAUNCHES, default 4), cuda_graph_max_bytes (MLIR_SYM_CUDA_GRAPH_MAX_BYTES,
      default 16 MiB), cuda_graph_max_sizes (MLIR_SYM_CUDA_GRAPH_MAX_SIZES, default 256): a CUDA artifact of at least that many launches a call replays a CUDA graph per
      input-size tuple from the size's second call on, for sizes whose inputs and outputs are at most
      that many bytes (runtime/cuda_graphs.py: inputs copied in, outputs handed out, a second graph of
      the size replayed while a caller holds the first one's), for at most that many sizes.
Logging: Python `logging` under `mlir_sym`; `MLIR_SYM_LOGS=compile,guards,ir` (prefix `+` for DEBUG),
in the spirit of `TORCH_LOGS`.
"""
from __future__ import annotations

import contextlib
import functools
import hashlib
import logging
import os
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import torch
import torch.fx as fx
from torch._dynamo.backends.common import aot_autograd
from torch._dynamo.exc import TensorifyScalarRestartAnalysis
from torch._dynamo.symbolic_convert import TensorifyState
from torch._functorch.aot_autograd import make_boxed_func

from mlir_sym import artifact_cache, attention, datadep, float_inputs, mutations, timing
from mlir_sym.capture import UnsupportedOpError, compile_graph, cpu_compute_pipeline
from mlir_sym.importer import UnsupportedGraph, find_shape_env
from mlir_sym.pipelines import PIPELINES, LoweringError
from mlir_sym.runtime.artifact import Artifact, CountFillArtifact, GuardMiss, SymAssertionError, status_error
from mlir_sym.runtime import fast_call
from mlir_sym.runtime.cuda_graphs import (CudaGraphs, enabled_from_env, max_bytes_from_env, max_sizes_from_env,
                                          min_launches_from_env)

log = logging.getLogger("mlir_sym")


@dataclass
class Config:
    fallback_to_eager: bool = field(default_factory=lambda: os.environ.get("MLIR_SYM_FALLBACK", "0") == "1")
    # Also compile a variant specialized to the sizes seen while tracing (guarded by `s == hint`),
    # tried before the generic one: a fast path for a hot size, never a recompile for other sizes.
    specialize_hints: bool = field(default_factory=lambda: os.environ.get("MLIR_SYM_SPECIALIZE", "0") == "1")
    direct_calls: bool = field(default_factory=lambda: os.environ.get("MLIR_SYM_DIRECT", "1") == "1")
    # A directly called artifact's call as one generated function (runtime/fast_call.py) instead of
    # the general path's layers; MLIR_SYM_FAST_CALL=0 keeps the layers (for bisecting).
    fast_calls: bool = field(default_factory=lambda: os.environ.get("MLIR_SYM_FAST_CALL", "1") == "1")
    # The float inputs AOTAutograd's tensorify pass would specialize (float_inputs.py): specialized
    # in Dynamo's graph under guards ("graph"), by Dynamo's restart asked for before AOTAutograd
    # traces ("restart"), or by the pass after a whole trace, which then restarts Dynamo ("off").
    float_inputs: str = field(default_factory=lambda: os.environ.get("MLIR_SYM_FLOAT_INPUTS", "graph"))
    # Trace scaled_dot_product_attention as one node (mlir_sym::attention, attention.py), expanded
    # after AOTAutograd, instead of tracing PyTorch's decomposition of it op by op.
    attention_op: bool = field(default_factory=lambda: os.environ.get("MLIR_SYM_ATTENTION_OP", "1") == "1")
    # Differentiated attention as attention_forward / attention_backward (PyTorch's memory-efficient
    # kernels on the GPU) on "cuda" tensors, on "all" (the CPU writes them as math: for testing), or
    # "none" (PyTorch's math form, differentiated op by op).
    attention_grad_op: str = field(default_factory=lambda: os.environ.get("MLIR_SYM_ATTENTION_GRAD_OP", "cuda"))
    # Their kernels for half operands on sm90+: "cudnn" or "efficient" (attention._cudnn).
    attention_half_kernel: str = field(default_factory=lambda: os.environ.get("MLIR_SYM_ATTENTION_HALF_KERNEL", "cudnn"))
    # CUDA graphs per input-size tuple for artifacts of at least `cuda_graph_min_launches` launches a
    # call, at small sizes (runtime/cuda_graphs.py).
    cuda_graphs: bool = field(default_factory=enabled_from_env)
    cuda_graph_min_launches: int = field(default_factory=min_launches_from_env)
    cuda_graph_max_bytes: int = field(default_factory=max_bytes_from_env)
    cuda_graph_max_sizes: int = field(default_factory=max_sizes_from_env)  # graphed input-size tuples an artifact
    # Input mutations of inference graphs (a static KV cache's index_copy_, a counter's add_) in the
    # compiled code, written into the input where they overwrite part of it (mutations.py), instead of
    # a new value AOTAutograd's wrapper copies back; MLIR_SYM_INPLACE_MUTATIONS=0 leaves them to it.
    inplace_mutations: bool = field(default_factory=lambda: os.environ.get("MLIR_SYM_INPLACE_MUTATIONS", "1") == "1")


config = Config()


@dataclass
class Stats:
    """Process-wide counters (tests assert on them: e.g. one compilation for many sizes)."""

    compiles: int = 0
    cache_hits: int = 0
    fallbacks: int = 0
    guard_misses: int = 0
    calls: int = 0
    direct_graphs: int = 0  # graphs Dynamo calls without AOTAutograd's runtime wrapper
    artifact_cache_hits: int = 0  # graphs loaded from the disk (artifact_cache.py): nothing traced or compiled
    artifact_cache_stores: int = 0
    artifact_cache_restarts: int = 0  # Dynamo restarts replayed from the disk (float specializations)
    early_restarts: int = 0  # Dynamo restarts asked for before AOTAutograd traced (float_inputs.py)
    floats_in_graph: int = 0  # float inputs specialized in Dynamo's graph instead of a restart
    attention_ops: int = 0  # scaled_dot_product_attention calls traced as mlir_sym::attention
    attention_grad_ops: int = 0  # differentiated ones traced as mlir_sym::attention_forward
    mutations_in_place: int = 0  # input mutations a call found written in the input (mutations.py)
    mutations_copied: int = 0  # and those it copied into the input

    def reset(self) -> None:
        self.compiles = self.cache_hits = self.fallbacks = self.guard_misses = self.calls = 0
        self.direct_graphs = self.artifact_cache_hits = self.artifact_cache_stores = self.artifact_cache_restarts = 0
        self.early_restarts = self.floats_in_graph = self.attention_ops = self.attention_grad_ops = 0
        self.mutations_in_place = self.mutations_copied = 0


stats = Stats()
_CACHE: dict[str, Artifact] = {}


def _setup_logging() -> None:
    spec = os.environ.get("MLIR_SYM_LOGS", "")
    if not spec:
        return
    handler = logging.StreamHandler()
    handler.setFormatter(logging.Formatter("[%(name)s] %(message)s"))
    for item in spec.split(","):
        item = item.strip()
        if not item:
            continue
        level = logging.DEBUG if item.startswith("+") else logging.INFO
        name = item.lstrip("+")
        logger = logging.getLogger("mlir_sym" if name in ("all", "mlir_sym") else f"mlir_sym.{name}")
        logger.setLevel(level)
        if not logger.handlers:
            logger.addHandler(handler)
            logger.propagate = False  # one line per record, even where torch configured the root logger


_setup_logging()


def graph_key(gm: fx.GraphModule) -> str:
    """Structure + symbolic input metadata (sizes and strides) + the ShapeEnv facts the artifact
    depends on, and the pipelines' text (options set in this process, e.g. sym-gpu-attention's
    thresholds, give another artifact)."""
    h = hashlib.sha256(gm.code.encode())
    h.update(repr(sorted(PIPELINES.items())).encode())
    h.update(cpu_compute_pipeline().encode())  # MLIR_SYM_EMULATE_GPU: which one lowers CPU artifacts
    for n in gm.graph.nodes:
        if n.op == "placeholder":
            v = n.meta.get("val")
            if isinstance(v, torch.Tensor):
                # strides too: an input's layout decides whether the artifact takes it permuted
                # (fx_rewrites.permuted_inputs); another layout's artifact would copy it every call
                h.update(f"{n.name}:{v.dtype}:{tuple(str(s) for s in v.shape)}:{tuple(str(s) for s in v.stride())}:"
                         f"{v.device}".encode())
            else:
                h.update(f"{n.name}:{v}".encode())
    se = find_shape_env(gm)
    if se is not None:
        h.update(str(sorted((str(k), str(v)) for k, v in se.var_to_range.items())).encode())
        h.update(str([str(g.expr) for g in se.guards]).encode())
    return h.hexdigest()


def _decompositions() -> dict:
    from torch_mlir.extras.fx_decomp_util import get_decomposition_table

    from mlir_sym.decompositions import DECOMPOSITIONS

    return {**get_decomposition_table(), **DECOMPOSITIONS}


def _compile_aten(gm: fx.GraphModule, example_inputs: Sequence[Any], into: dict[int, int] | None = None) -> Callable:
    """The runner of `gm`'s artifact (compiled, or this process's for the same graph); `into`: the
    outputs the compute writes into inputs (mutations.written_into), part of the key: the same graph
    without a mutation (`y = c.index_copy(...)`, returned) must not write into its input."""
    key = graph_key(gm) + (f"|into={sorted(into.items())}" if into else "")
    art = _CACHE.get(key)
    if art is not None:
        stats.cache_hits += 1
        log.info("cache hit for graph %s", key[:12])
    else:
        try:
            with timing.phase("backend-compile"), timing.gc_paused():
                art, _, cstats = datadep.compile_graph(gm, _compiler(example_inputs),
                                                       specialize_hints=config.specialize_hints)
        except (UnsupportedOpError, UnsupportedGraph, LoweringError) as e:
            if not config.fallback_to_eager:
                raise
            stats.fallbacks += 1
            log.warning("mlir_sym: running this graph eagerly (fallback_to_eager is on): %s", str(e).splitlines()[0])
            return make_boxed_func(gm)
        stats.compiles += 1
        _CACHE[key] = art
    if into and isinstance(art, Artifact):  # not a count/fill artifact's fill: the copy serves those
        perms = art.input_perms or []  # an input read permuted: the compute's view of it is not its memory
        art.into = {k: i for k, i in into.items() if i >= len(perms) or perms[i] is None}
    return _runner(art, gm)


def _graphed(art: Any) -> None:
    """CUDA graphs per size for `art` where config and the artifact allow (runtime/cuda_graphs.py); a
    data-dependent graph's count phases and fill are artifacts of their own (the counts are read
    back between them, outside any graph)."""
    if isinstance(art, CountFillArtifact):
        for a in [*art.count_artifacts, art.fill]:
            _graphed(a)
        return
    if not isinstance(art, Artifact) or getattr(art, "graphs", None) is not None:
        return
    why = CudaGraphs.eligible(art, config.cuda_graph_min_launches)
    if why is None:
        art.graphs = CudaGraphs(art, max_graphs=config.cuda_graph_max_sizes, max_bytes=config.cuda_graph_max_bytes)
    else:
        log.info("mlir_sym: no CUDA graphs for %s: %s", art.name, why)


def _runner(art: Artifact, gm: fx.GraphModule) -> Callable:
    if config.cuda_graphs:
        _graphed(art)
    def run(args: list) -> list:
        stats.calls += 1
        try:
            return art(args)
        except GuardMiss as miss:
            # Dynamo's own guards admitted these inputs, so the aten graph is valid for them; this
            # artifact's narrower assumptions are not. Issue #3 adds variants; until then run the graph.
            stats.guard_misses += 1
            log.warning("mlir_sym: %s; running graph %s eagerly for these sizes", miss, art.name)
            return list(gm(*args))
        except SymAssertionError as e:  # a check named with eager's exception type raises that type
            err = users_error(e)
            if err is e:
                raise
            raise err from None

    run._boxed_call = True  # type: ignore[attr-defined]
    run.artifact = art  # type: ignore[attr-defined]
    return run


def users_error(e: SymAssertionError) -> SymAssertionError:
    """The exception the user sees for a failed runtime check: a CompiledIndexError for one that eager
    reports as an IndexError, else `e`."""
    if "IndexError: " in str(e) or any(m in str(e) for m in _INDEX_CHECKS):
        err = CompiledIndexError(str(e))
        err.__suppress_context__ = True  # as `raise ... from None` shows it, wherever it is raised
        return err
    return e


class CompiledIndexError(IndexError, SymAssertionError):
    """A compiled check that eager PyTorch reports as an IndexError (e.g. a mask of the wrong shape): its
    message starts with `IndexError: ` (sym-mask-to-where writes them so), or is one of torch-mlir's
    index bounds checks (`_INDEX_CHECKS`: gathers, embeddings). Also a RuntimeError (SymAssertionError),
    which is what eager's index_select along a later dim raises."""


# torch-mlir's per-element index bounds checks (its embedding and gather lowerings)
_INDEX_CHECKS = ("index must be smaller than dim size", "index must be larger or equal to 0")


def _check_devices(gm: fx.GraphModule, example_inputs: Sequence[Any]) -> None:
    tensors = [t for t in example_inputs if isinstance(t, torch.Tensor)]
    devices = {t.device.type for t in tensors}
    if devices == {"cpu", "cuda"} and all(t.dim() == 0 for t in tensors if t.device.type == "cpu"):
        devices = {"cuda"}  # CPU scalars beside CUDA tensors, as eager allows: the GPU runtime moves them
    if len(devices) > 1:
        shapes = [f"{t.device.type}{list(t.shape)}" for t in tensors]
        raise RuntimeError(f"mlir_sym: inputs on mixed devices {sorted(devices)}; move them to one device "
                           f"(inputs: {', '.join(shapes)})")
    other = devices - {"cpu", "cuda"}
    if other:
        raise RuntimeError(f"mlir_sym: device '{other.pop()}' is not supported by this build (CPU and CUDA only)")


def _compiler(example_inputs: Sequence[Any]) -> Callable:
    """capture.compile_graph for CPU inputs, gpu_compile.compile_graph for CUDA inputs."""
    if any(isinstance(t, torch.Tensor) and t.device.type == "cuda" for t in example_inputs):
        from mlir_sym.gpu_compile import compile_graph as compile_cuda

        return compile_cuda
    return compile_graph


def attention_math(example_inputs: Sequence[Any]):
    """On CUDA, trace scaled_dot_product_attention in its math form (matmul, softmax, matmul), which we
    fuse and lower, instead of the fused kernel PyTorch would pick (flash, memory-efficient or cuDNN
    attention: opaque ops torch-mlir cannot lower). The CPU keeps its flash-for-CPU op, which
    torch-mlir's decompositions already turn into the math form."""
    from torch.nn.attention import SDPBackend, sdpa_kernel

    cuda = any(isinstance(a, torch.Tensor) and a.device.type == "cuda" for a in example_inputs)
    return sdpa_kernel([SDPBackend.MATH]) if cuda else contextlib.nullcontext()


def wrapper_is_noop(meta: Any, n_graph_inputs: int, n_dynamo_inputs: int) -> str | None:
    """Why AOTAutograd's inference runtime wrapper does work for a graph with this metadata
    (`ViewAndMutationMeta`), or None when it only calls the compiled graph with grad mode off."""
    from torch._functorch._aot_autograd.schemas import OutputType

    if meta is None:
        return "no AOTAutograd metadata"
    if n_graph_inputs != n_dynamo_inputs:
        return f"{n_graph_inputs} graph inputs for {n_dynamo_inputs} Dynamo inputs (deduplicated, lifted or added)"
    if any(i.mutates_metadata or (i.mutates_data and i.mutation_type.name != "MUTATED_IN_GRAPH")
           or getattr(i, "mutation_inductor_storage_resize", False) for i in meta.input_info):
        return "an input's mutation is left to the wrapper"  # data mutations kept in the graph: ours
    if any(o.output_type != OutputType.non_alias for o in meta.output_info) or meta.num_intermediate_bases:
        return "an output aliases an input or another output"
    if any(not isinstance(m, int) and type(m).__name__ != "PlainTensorMeta" for m in meta.subclass_inp_meta or ()):
        return "a tensor subclass input"
    if meta.tokens or getattr(meta, "is_rng_op_functionalized", False) or getattr(meta, "num_graphsafe_rng_states", 0):
        return "effect tokens or RNG state"
    if getattr(meta, "grad_enabled_mutation", None) is not None:
        return "the graph changes grad mode"
    return None


def _compile_mutating(gm: fx.GraphModule, example_inputs: Sequence[Any]) -> Callable:
    """_compile_aten for a graph that may mutate inputs (keep_inference_input_mutations, which also
    keeps a training forward's mutations of inputs without grad in its graph, BatchNorm's running
    stats): the mutations taken out (mutations.py) and done by the returned call, which AOTAutograd's
    wrapper then leaves alone."""
    muts = mutations.split(gm) if config.inplace_mutations else []
    run = _compile_aten(gm, example_inputs, mutations.written_into(muts))
    if not muts:
        return run
    run = mutations.with_mutations(run, muts, stats)
    run.mutations = muts  # type: ignore[attr-defined]
    return run


def _compile_inference(gm: fx.GraphModule, example_inputs: Sequence[Any], *, sink: list, n_dynamo_inputs: int) -> Callable:
    """The inference compiler: as _compile_aten, and records in `sink` the runner Dynamo may call
    directly (see Config.direct_calls) when the runtime wrapper would do nothing."""
    run = _compile_mutating(gm, example_inputs)
    ctx = torch._guards.TracingContext.try_get()
    meta = getattr(ctx, "fw_metadata", None)
    why = wrapper_is_noop(meta, len(example_inputs), n_dynamo_inputs)
    if why is None and getattr(run, "artifact", None) is not None:
        # the inputs the graph mutates get their version counters bumped, as the wrapper does
        bump = list(getattr(meta, "mutated_graph_handled_indices_seen_by_autograd", None) or ())
        sink.append((run, [(i, set(o.dynamic_dims)) for i, o in enumerate(meta.output_info) if o.dynamic_dims], bump))
    elif why is not None:
        log.debug("AOTAutograd's runtime wrapper stays: %s", why)
    return run


def _dynamic_dims_marker() -> Callable[[torch.Tensor, set[int]], None]:
    """How this torch's AOTAutograd wrapper marks an output's dynamic dims for Dynamo: newer versions
    have `mark_dynamo_propagated_dynamic_indices`; older ones (torch 2.11 on the H100) set
    `_dynamo_weak_dynamic_indices` themselves."""
    from torch._functorch._aot_autograd import runtime_wrappers

    fn = getattr(runtime_wrappers, "mark_dynamo_propagated_dynamic_indices", None)
    if fn is not None:
        return fn

    def mark(t: torch.Tensor, dims: set[int]) -> None:
        if hasattr(t, "_dynamo_weak_dynamic_indices"):
            t._dynamo_weak_dynamic_indices |= dims
        else:
            t._dynamo_weak_dynamic_indices = dims.copy()

    return mark


def _input_kinds(example_inputs: Sequence[Any]) -> list[str]:
    """Per Dynamo input: "tensor", "int" (an int or SymInt) or its type's name (Dynamo's guards keep
    them so for the compiled graph)."""
    return ["tensor" if isinstance(x, torch.Tensor) else "int" if isinstance(x, (int, torch.SymInt))
            and not isinstance(x, bool) else type(x).__name__ for x in example_inputs]


def _direct(run: Callable, dynamic_dims: list[tuple[int, set[int]]], kinds: Sequence[str] | None = None,
            bump: Sequence[int] = ()) -> Callable:
    """`run` as Dynamo calls it, doing what the runtime wrapper would: grad mode off during the call,
    autocast off when the graph was traced under it (its casts are in the graph; the host program's
    own torch calls must not be cast again: AOTAutograd's `disable_amp`; Dynamo guards on the
    autocast state, so every call of this graph comes under the state it was compiled in), and the
    outputs' dynamic dims marked for the frames that consume them, the version counters of the inputs
    at `bump` (mutated, mutations.py) incremented. Given the input kinds, the artifact's generated
    call (runtime/fast_call.py), which falls back to this general path; not for a graph that mutates
    inputs (its call does the mutations' copies)."""
    mark = _dynamic_dims_marker()
    increment_version = torch.autograd.graph.increment_version
    set_grad = torch._C._set_grad_enabled
    amp_off = torch._C._DisableAutocast if torch._C._is_any_autocast_enabled() else contextlib.nullcontext

    def call(*args: Any) -> list:
        if torch.is_grad_enabled():
            set_grad(False)
            try:
                with amp_off():
                    outs = run(list(args))
            finally:
                set_grad(True)
        else:
            with amp_off():
                outs = run(list(args))
        for i, dims in dynamic_dims:
            if isinstance(outs[i], torch.Tensor):
                mark(outs[i], dims)
        for i in bump:
            increment_version(args[i])
        return outs

    call.artifact = run.artifact  # type: ignore[attr-defined]
    if config.fast_calls and kinds is not None and not getattr(run, "mutations", None):
        why = fast_call.why_not(run.artifact, kinds)
        if why is None:
            fast = fast_call.generate(run.artifact, kinds, dynamic_dims, call, mark, stats,
                                      lambda variant, rc: users_error(status_error(variant, rc)),
                                      disable_amp=amp_off is not contextlib.nullcontext)
            fast.artifact = run.artifact  # type: ignore[attr-defined]
            return fast
        log.debug("no generated call for %s: %s", getattr(run.artifact, "name", "?"), why)
    return call


def prepare_floats(gm: fx.GraphModule, shape_env) -> None:
    """The float inputs AOTAutograd would specialize, specialized now in Dynamo's graph under guards,
    or Dynamo's restart asked for at once (float_inputs.py, `config.float_inputs`). A second call
    finds nothing left to do."""
    if config.float_inputs not in ("graph", "restart", "off"):
        raise ValueError(f"mlir_sym: float_inputs must be graph, restart or off, not {config.float_inputs!r}")
    if config.float_inputs == "graph":
        stats.floats_in_graph += len(float_inputs.specialize_in_graph(gm, shape_env))
    if config.float_inputs != "off":  # what could not be specialized in the graph
        try:
            float_inputs.restart_early(gm, shape_env)
        except TensorifyScalarRestartAnalysis:
            stats.early_restarts += 1
            raise


def prepare_for_aot(gm: fx.GraphModule, shape_env) -> None:
    """What the backend does to Dynamo's graph before AOTAutograd traces it: the float inputs
    (`prepare_floats`), and attention made one node, or its math form where it is differentiated
    (attention.py)."""
    prepare_floats(gm, shape_env)
    stats.attention_grad_ops += attention.math_form_for_grad(gm, config.attention_grad_op)[0]
    if config.attention_op:
        stats.attention_ops += attention.rewrite_sdpa_calls(gm)


def mlir_sym_backend(gm: fx.GraphModule, example_inputs: Sequence[Any], **kwargs: Any) -> Callable:
    """The Dynamo backend: AOTAutograd with torch-mlir's decompositions, our compiler for each graph;
    or, for a graph compiled before (this process or another), the artifact from the disk cache."""
    _check_devices(gm, example_inputs)
    shape_env = artifact_cache.shape_env_of(gm, example_inputs)
    if shape_env is not None:
        prepare_floats(gm, shape_env)  # before the cache: a graph loaded from it needs the same guards
    cache_key = mark = None
    if config.direct_calls and not config.specialize_hints and artifact_cache.enabled():
        why = artifact_cache.why_not_cacheable(gm, shape_env)
        if why is None:
            with timing.phase("artifact-cache-key"):
                cache_key = artifact_cache.key(gm, example_inputs, shape_env, {
                    "direct": True, "attention_op": config.attention_op, "attention_grad_op": config.attention_grad_op})
            device = next((t.device for t in example_inputs if isinstance(t, torch.Tensor) and t.device.type == "cuda"), None)
            try:
                with timing.gc_paused():
                    hit = artifact_cache.try_load(cache_key, shape_env, device)
            except TensorifyScalarRestartAnalysis:  # replayed: Dynamo retraces with floats specialized
                stats.artifact_cache_restarts += 1
                raise
            if hit is not None:
                art, dims = hit
                stats.artifact_cache_hits += 1
                stats.direct_graphs += 1
                _CACHE[cache_key] = art  # this process's artifacts, compiled or loaded
                return _direct(_runner(art, gm), dims, _input_kinds(example_inputs))
            mark = artifact_cache.Mark(shape_env)
        else:
            log.debug("artifact cache not used: %s", why)
    sink: list = []
    lifted = any(True for _ in gm.parameters()) or any(True for _ in gm.buffers())  # AOTAutograd prepends them
    backend = aot_autograd(
        fw_compiler=_compile_mutating,
        bw_compiler=_compile_mutating,
        inference_compiler=functools.partial(_compile_inference, sink=sink, n_dynamo_inputs=len(example_inputs)),
        decompositions=_decompositions(),
        keep_inference_input_mutations=config.inplace_mutations,
    )
    specialized = set(TensorifyState.force_specializations)
    try:
        prepare_for_aot(gm, shape_env)
        with attention_math(example_inputs):  # AOTAutograd traces here
            compiled = backend(gm, example_inputs, **kwargs)
    except TensorifyScalarRestartAnalysis:
        # AOTAutograd asks Dynamo to retrace with some float inputs specialized: remember it, so that
        # the next process asks at once instead of tracing this graph again
        if cache_key is not None:
            artifact_cache.store_restart(cache_key, sorted(TensorifyState.force_specializations - specialized))
        raise
    if config.direct_calls and len(sink) == 1 and not lifted:
        stats.direct_graphs += 1
        run, dims, bump = sink[0]
        art = run.artifact
        # not a graph that mutates inputs: the artifact alone would not do its mutations' copies
        if mark is not None and isinstance(art, Artifact) and art.plan is not None and not bump \
                and not getattr(run, "mutations", None):
            stats.artifact_cache_stores += artifact_cache.store(cache_key, art, art.plan, dims, mark.added_guards())
        return _direct(run, dims, _input_kinds(example_inputs), bump)
    return compiled
