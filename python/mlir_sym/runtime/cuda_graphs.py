"""CUDA graphs of an artifact's calls, per input-size tuple (on by default; `MLIR_SYM_CUDA_GRAPHS=0` or
`mlir_sym.backend.config.cuda_graphs = False` turns them off).

At small sizes a GPU call is its host program: 5 to 10 us of Python per launch, library call or
allocation (benchmarks/bench_host_primitives.py), while the kernels take a few microseconds. For an
artifact whose host program launches at least `min_launches` kernels and library calls (a
convolution counts as `min_launches`: PyTorch's cuDNN call costs the host 50-100 us), the second
call with the same input sizes (the artifact's memo key) captures the whole host program into a CUDA
graph (torch.cuda.graph, one memory pool per artifact for the temporaries); later calls with those
sizes copy the inputs into the graph's input buffers (one multi-tensor copy kernel a dtype,
torch._foreach_copy_) and replay the graph: a few host statements a call instead of one per launch.
The first call of a size runs normally.

Outputs are handed out, not copied: a graph writes its outputs into buffers of its own (from torch's
allocator, outside the pool), and a replay returns new tensors on them. A host program that makes
an output of a library call's own result (training attention's out and log-sum-exp,
`Runtime.adopt`) leaves that output in the memory the capture allocated: such an artifact captures
each graph into a pool of its own, as a shared pool would let a later capture place its outputs on
blocks an earlier graph's replays still write as temporaries. A caller keeps what it got:
a graph is replayed only when no tensor other than its own references its output buffers (the
storages' use counts, as inductor's CUDA graph trees check theirs), so while a caller holds an
output of the size's graph (or a view of one: `out = model(x)` in a loop holds the previous call's
outputs during the next call), a second graph of the size, captured then, replays instead; when the
outputs of both are held, the call runs normally (new outputs). A loop that keeps its last outputs
alternates between the two graphs and copies nothing out. The tensors handed out are not views
(`detach`): a caller may change them in place. A caller that resizes an output's storage drops the
size's graphs. The use counts do not see another stream still reading an output its caller has
dropped after `record_stream`: such a caller must synchronize with that stream before the next call. Where torch lacks the use counts
(`torch._C._storage_Use_Count`, a private API), outputs are copied out of one graph instead (the
foreach copy: 19-22 us of an H100's time a call for GPT-2's or Llama's logits at batch 8, length 128).

An output that is a view of an input (a training forward returns inputs it saves for the backward)
or of another output is not the graph's: each call makes it from the caller's tensor (or from the
output handed out), as a normal call does.

A size whose input and output bytes are at most `max_bytes` a call (16 MiB,
`MLIR_SYM_CUDA_GRAPH_MAX_BYTES`) is graphed: the first FREE_SIZES (8) such sizes of an artifact
always, more (up to `max_graphs`, 256, `MLIR_SYM_CUDA_GRAPH_MAX_SIZES`) while its graphs keep at most
MAX_SMALL_TOTAL_BYTES (256 MiB) of input copies and outputs. Decode steps need the many: each step of
a `generate` has a new past length, seen again at the next generate; with 8 sizes, 7 of 8 decode
steps of repeated generates ran their launches one by one (H200, bf16 GPT-2 and Llama at batch 1:
3.72 / 4.09 ms a token against 1.61 / 1.13 with every size graphed, inductor 2.74 / 3.09;
`benchmarks/bench_generate.py`, rows `mlir_sym@8` and `mlir_sym`). A larger one is graphed when its host program paid for
the copies: the least host time of its first two (normal) calls at least `PAYBACK` times what copying
its inputs (and outputs, where copied) costs on the device (read and write at `COPY_BYTES_PER_S`), up
to `MAX_GRAPH_BYTES` of inputs and outputs. Where the kernels dominate (one large elementwise op) the
copies would cost and the size runs normally.

What the graph reads in place: an input that was the same tensor object, at the same address, at
the first two calls of the size (parameters, buffers, a static KV cache) is not copied. When a
later call brings another tensor there (HF's `generate` makes a new static cache each time), that
call runs normally, and the next one, given the same new tensor, captures the size's graph again
for it (`_rebound`; inductor's CUDA graph trees re-record when a static input's address changes),
while the graph replaced had replayed at least MIN_REPLAYS times: a tensor that moves every call or
two runs normally instead. Before, such a size ran normally for good, and every decode step of a
second `generate` launched its kernels one by one. Not copied either: an input that starts another artifact's graph output buffer
(`_GRAPH_OUTPUTS`): a training backward's saved activations are the forward graph's outputs, whose
buffers stay put (they are handed out, and a graph never overwrites one that is held). Copied, they
cost the backward 361 MB of copies a step at length 256 (201 us of an H200's time). When such an
input comes from another buffer (the forward replayed its spare while the loss of the step before
was held), the graph captured for that set of addresses replays (`_Graph.variants`, at most
`MAX_VARIANTS`); from a buffer that is no graph's output (the producer ran normally), a variant that
copies it replays. Such inputs are never kept as parameters (no reference: a producer's output
referenced by a consumer's graph would look held for ever). The graph's own output buffers are never
read in place (a call fed its own last output would write what it reads).
Every other tensor input is copied into the graph's own buffer at each call, so in-place changes of
the caller's tensors are seen. Not graphed (they run normally): host programs that read a device
value back (a synchronization: data-dependent sizes, asserts on device values),
`MLIR_SYM_CUDA_SYNC=1`; at most `max_graphs` sizes an artifact (FREE_SIZES where each graph has a pool of its own). A CPU scalar tensor input (a
float Dynamo made a tensor) gets a device buffer it is copied into at each call.
"""
from __future__ import annotations

import logging
import os
import weakref
from dataclasses import dataclass
from typing import Any, Sequence

import torch
from torch.multiprocessing.reductions import StorageWeakRef

from mlir_sym.mutations import copy_all as _copy_all, storages, take

log = logging.getLogger("mlir_sym.runtime")

PAYBACK = 4.0  # a large size is graphed when its host time is this many times its copies' device time
COPY_BYTES_PER_S = 1.5e12  # device copies, read and write (an H100 copies 3 TB/s of both)
MAX_GRAPH_BYTES = 1 << 30  # never more input and output bytes a call than this in a graph
# nor more than this in all the graphs of one artifact together (their input copies and output
# buffers, which they keep between calls): a training step at [8, 256] of a 4-layer model saves
# 270 MB of activations for its backward, which reads 360 MB; graphed, its host program of 380
# launches no longer sets the step's pace
MAX_TOTAL_BYTES = 2 << 30
# sizes within max_bytes: the first FREE_SIZES are graphed whatever their graphs keep (at most
# max_bytes each); more (decode steps: a size per step, each seen again at the next generate), up to
# `max_graphs`, while all the artifact's graphs keep at most MAX_SMALL_TOTAL_BYTES, and not where each
# graph has a memory pool of its own (its temporaries are not counted in `kept`)
FREE_SIZES = 8
MAX_SMALL_TOTAL_BYTES = 256 << 20
MIN_REPLAYS = 2  # a graph whose in-place inputs moved is captured again only if it replayed this often
MAX_VARIANTS = 2  # graphs of one size for other addresses of the graph outputs it reads in place
# the first byte of every graph output buffer handed out -> (the storage's bytes, the capturing
# CudaGraphs' id): inputs that start one are read in place by the graphs of other artifacts
_GRAPH_OUTPUTS: dict[int, tuple[int, int]] = {}
_PENDING = "pending"  # _why_not_graphed: not enough host times of the size yet


@dataclass
class _Graph:
    graph: Any  # torch.cuda.CUDAGraph
    static: list  # the graph's inputs: the caller's tensor (read in place) or the graph's own copy
    in_place: list  # per input: the data_ptr read in place, None when copied (or not a tensor)
    outs: list  # the graph's outputs (buffers of their own, outside the graphs' pool)
    scalars: dict  # input index -> the value of a CPU scalar input its device buffer holds
    replays: int = 0
    held: list | None = None  # per tensor output: (storage handle, use count when nobody else holds it)
    spare: Any = None  # the size's second capture (a _Graph), replayed while this one's outputs are held
    ptrs: list | None = None  # the output buffers' addresses the graph writes
    follow: dict | None = None  # input index -> strides, for the graph outputs of others read in place
    pool: Any = None  # the memory pool it was captured into
    variants: dict | None = None  # (the addresses of `follow`'s inputs) -> the graph for them

    def busy(self) -> bool:
        """Whether a caller still holds (a view of) an output this graph returned."""
        return any(_use_count(c) > base for c, base in self.held or ())

    def moved(self) -> bool:
        """Whether an output's storage was resized by a caller (`resize_`): it is not the buffer the
        graph writes any more."""
        return any(o.data_ptr() != p for o, p in zip([o for o in self.outs if isinstance(o, torch.Tensor)],
                                                     self.ptrs or ()))


_NO_SPARE = "no spare"  # a spare's capture failed: not tried again


class CudaGraphs:
    """The CUDA graphs of one artifact (runtime/artifact.py calls `call` before running a plan)."""

    def __init__(self, artifact: Any, max_graphs: int = 256, max_bytes: int = 16 << 20, hand_out: bool = True) -> None:
        self.artifact = artifact
        self.max_graphs = max_graphs
        self.max_bytes = max_bytes
        self.graphs: dict[tuple, _Graph | None] = {}  # None: this size runs normally
        self.first_ptrs: dict[tuple, list] = {}
        self.host_s: dict[tuple, tuple[float, int]] = {}  # a size's least host time of normal calls, how many
        self.pool = None
        self.captures = 0
        self.replays = 0
        self.busy_calls = 0  # calls run normally because every capture of their size had outputs held
        self.rebinds: dict[tuple, tuple] = {}  # per size: inputs read in place that moved at the last call
        self.recaptures = 0  # graphs captured again for new tensors read in place (_rebound)
        self.device_type = torch.device(getattr(artifact, "device", None) or "cuda").type
        self.hand_out = _use_count is not None and hand_out  # outputs handed out, not cloned
        self.views = [k for k, o in enumerate(artifact.outputs) if o.kind == "alias"]
        self.kept: dict[tuple, int] = {}  # per size: the bytes its graphs keep (input copies, outputs)
        # outputs on memory the host program's library calls allocate (Runtime.adopt): a pool a graph
        self.own_pools = any("rt.adopt(" in _host_source(v) for v in getattr(artifact, "variants", ()))
        weakref.finalize(self, _forget_outputs, id(self))  # its buffers are not graph outputs any more

    @staticmethod
    def eligible(artifact: Any, min_launches: int) -> str | None:
        """None when `artifact` can be graphed, else why not."""
        dev = getattr(artifact, "device", None)
        if dev is None or torch.device(dev).type != "cuda":
            return "not a CUDA artifact"
        launches = 0
        for v in artifact.variants:
            host = v.compute
            if getattr(getattr(host, "runtime", None), "sync", False):
                return "MLIR_SYM_CUDA_SYNC synchronizes after every launch"
            gpu = (v.keepalive or {}).get("gpu") if isinstance(v.keepalive, dict) else None
            if gpu is None or "rt.read(" in gpu["host_source"]:
                return "the host program reads device values back"
            # a convolution (torch.convolution: cuDNN's plan lookup and launches) costs the host as much
            # as min_launches launches or more: one makes the artifact worth a graph
            convs = gpu["host_source"].count("rt.library_conv(")
            launches = max(launches, gpu["launch_sites"] + gpu["library_calls"] + max(0, min_launches - 1) * convs)
        if launches < min_launches:
            return f"{launches} launches a call (fewer than {min_launches})"
        return None

    def call(self, key: tuple, plan: tuple, args: Sequence[Any]) -> list | None:
        """The outputs for `args` from this size's graph (captured at the size's second call), or
        None: the caller runs the plan normally."""
        g = self.graphs.get(key, 0)
        if g is None:
            return None
        if g == 0:
            first = self.first_ptrs.pop(key, None)
            if first is None:  # the size's first call: remember which tensors it was given
                if len(self.first_ptrs) >= 1024:
                    self.first_ptrs.clear()
                self.first_ptrs[key] = [_first(a) if isinstance(a, torch.Tensor)
                                        and a.device.type == self.device_type else None for a in args]
                return None
            if len(self.graphs) >= 4096:  # sizes that run normally: forget them, not the graphs
                self.graphs = {k: v for k, v in self.graphs.items() if v is not None}
            # each graph in a pool of its own (temporaries `kept` does not count): FREE_SIZES at most
            limit = min(self.max_graphs, FREE_SIZES) if self.own_pools else self.max_graphs
            if self._graphed() >= limit:
                self.graphs[key] = None
                return None
            # read in place: the very tensor of the first call, at the same address (a parameter);
            # a new activation that happens to reuse the first one's memory is copied; another
            # artifact's graph output (a saved activation of a graphed forward) is read where it is
            follow = self._graph_outputs_of_others(args)  # never kept as a parameter: no reference
            in_place = [a.data_ptr() if i in follow else f[1] if f is not None and _same_tensor(a, f)
                        else None for i, (a, f) in enumerate(zip(args, first))]
            copied = sum(_nbytes(a) for a, p in zip(args, in_place) if p is None)
            out_bytes = self._output_bytes(plan)
            why = self._why_not_graphed(key, copied + out_bytes, copied + (0 if self.hand_out else out_bytes))
            if why == _PENDING:  # one host time so far: decide after another normal call
                self.first_ptrs[key] = first
                return None
            if why is not None:
                self.graphs[key] = None
                log.info("mlir_sym: no CUDA graph of %s for sizes %s: %d input bytes a call to copy, %d "
                         "output bytes, %s", self.artifact.name, key, copied, out_bytes, why)
                return None
            g = self._capture(key, plan, args, in_place, follow=follow)
            if g is None:
                return None
        follow, elsewhere = g.follow, False
        for i, (a, p) in enumerate(zip(args, g.in_place)):  # before any capture of a spare or a variant:
            if p is None:  # they read these in place too
                continue
            if follow and i in follow:
                elsewhere = elsewhere or a.data_ptr() != p or a.stride() != follow[i]
            elif a.data_ptr() != p:  # a tensor read in place is another one now: a graph for it
                g = self._rebound(key, plan, args, g)
                if g is None:
                    return None
                follow, elsewhere = g.follow, False
                break
        else:  # nothing read in place moved: a new tensor seen before was not a second call in a row
            if self.rebinds:
                self.rebinds.pop(key, None)
        if elsewhere:  # another graph's output from another buffer: the graph for where it is now
            g = self._variant(key, plan, args, g)
            if g is None:
                return None
        if g.held is not None:  # outputs handed out: replay a capture whose outputs nobody holds
            if g.moved():
                self._discard(key)  # a caller resized an output's storage: the graph writes freed memory
                return None
            if g.busy():
                if g.spare is None:
                    g.spare = (self._capture(key, plan, args, g.in_place, spare=True, follow=g.follow)
                               if self._room_for_another(key) else None) or _NO_SPARE
                if g.spare is _NO_SPARE or g.spare.busy() or g.spare.moved():
                    self.busy_calls += 1
                    return None  # every capture's outputs are held: run normally (fresh outputs)
                g = g.spare
        dsts, srcs = [], []
        for i, (a, s, p) in enumerate(zip(args, g.static, g.in_place)):
            if p is not None:
                continue  # read in place (checked above)
            elif i in g.scalars:  # a CPU scalar (mostly a constant: eps, a scale): copy when it changed
                v = repr(a.item())
                if v != g.scalars[i]:
                    s.copy_(a)
                    g.scalars[i] = v
            elif isinstance(a, torch.Tensor):
                dsts.append(s)
                srcs.append(a)
        _copy_all(dsts, srcs)
        g.graph.replay()
        g.replays += 1
        self.replays += 1
        if g.held is not None:  # new tensors on the graph's output buffers (their use counts tell); not
            # views (detach): a caller may change them in place as any fresh output
            return self._with_views([o.detach() if isinstance(o, torch.Tensor) else o for o in g.outs], plan, args)
        outs = [o for o in g.outs if isinstance(o, torch.Tensor)]
        copies = iter(_copy_all([torch.empty_like(o) for o in outs], outs))
        return self._with_views([next(copies) if isinstance(o, torch.Tensor) else o for o in g.outs], plan, args)

    def _rebound(self, key: tuple, plan: tuple, args: Sequence[Any], g: _Graph) -> _Graph | None:
        """The size's graph captured again for the tensors now given where `g` reads others in place
        (a new static KV cache at each `generate`, a model's weights loaded anew), or None: this call
        runs normally. As a size's first capture waits for its second call, the new graph is captured
        when a second call in a row brings the same new tensors (a replay in between forgets them: two
        caches used in turns run normally rather than recapture every third call), and only while graphs pay: when `g`
        (its spare and variants) replayed at least MIN_REPLAYS times; else the size runs normally
        from then on (tensors that move every few calls)."""
        moved = tuple(i for i, (a, p) in enumerate(zip(args, g.in_place))
                      if p is not None and not (g.follow and i in g.follow) and a.data_ptr() != p)
        pending = self.rebinds.pop(key, None)
        if pending is None or pending[0] != moved or not all(_same_tensor(args[i], f) for i, f in zip(moved, pending[1])):
            if len(self.rebinds) >= 1024:
                self.rebinds.clear()
            self.rebinds[key] = (moved, [_first(args[i]) for i in moved])
            return None
        replays = sum(h.replays for h in _all_graphs(g))
        self._discard(key)
        if replays < MIN_REPLAYS:
            log.info("mlir_sym: CUDA graph of %s for sizes %s dropped: inputs %s it reads in place moved after "
                     "%d replays; the size runs normally", self.artifact.name, key, list(moved), replays)
            return None
        # the others' graph outputs it followed: followed where they are now, if they still are some
        follow = {i: st for i, st in self._graph_outputs_of_others(args).items() if g.follow and i in g.follow}
        in_place = [None if p is None or (g.follow and i in g.follow and i not in follow) else a.data_ptr()
                    for i, (a, p) in enumerate(zip(args, g.in_place))]
        self.recaptures += 1
        log.info("mlir_sym: inputs %s of %s read in place are new tensors: capturing its graph for sizes %s again",
                 list(moved), self.artifact.name, key)
        return self._capture(key, plan, args, in_place, follow=follow)

    def _graph_outputs_of_others(self, args: Sequence[Any]) -> dict:
        """Index -> strides of each contiguous tensor input that starts a graph output buffer of another
        artifact's graphs and lies within it."""
        follow = {}
        for i, a in enumerate(args):
            if isinstance(a, torch.Tensor) and a.device.type == self.device_type:
                entry = _GRAPH_OUTPUTS.get(a.data_ptr())
                if entry is not None and entry[1] != id(self) and _nbytes(a) <= entry[0] and a.is_contiguous():
                    follow[i] = a.stride()
        return follow

    def _variant(self, key: tuple, plan: tuple, args: Sequence[Any], g: _Graph) -> _Graph | None:
        """The graph of this size for where the graph outputs of others that `g` reads in place are now
        (its parameters checked by the caller): one reading them in place when they are other graphs'
        output buffers again, else one copying them (as every input was before the graph outputs were
        read in place); each captured the first time, up to MAX_VARIANTS. None: run normally."""
        follow = g.follow
        now = self._graph_outputs_of_others([args[i] if i in follow else None for i in range(len(args))])
        addresses = tuple(args[i].data_ptr() for i in follow) if now.keys() == follow.keys() and all(
            now[i] == st for i, st in follow.items()) else None  # None: the copying one
        variants = g.variants if g.variants is not None else {}
        v = variants.get(addresses)
        if v is None:
            if len(variants) >= MAX_VARIANTS:
                return None
            if not self._room_for_another(key):  # remembered: not asked again at every call
                variants[addresses] = _NO_SPARE
                g.variants = variants
                return None
            in_place = list(g.in_place)
            for i in follow:
                in_place[i] = None if addresses is None else args[i].data_ptr()
            v = self._capture(key, plan, args, in_place, spare=True,
                              follow=None if addresses is None else follow) or _NO_SPARE
            variants[addresses] = v
            g.variants = variants
        return None if v is _NO_SPARE else v

    def _with_views(self, results: list, plan: tuple, args: Sequence[Any]) -> list:
        """`results` with the outputs that are views made from the caller's inputs or the outputs."""
        for k in self.views:
            spec = self.artifact.outputs[k]
            kind, i = spec.base
            results[k] = spec.replay(args[i] if kind == "input" else results[i], plan[1])
        return results

    def ran(self, key: tuple, host_s: float) -> None:
        """A normal call of size `key` took `host_s` seconds of host time (launches are asynchronous):
        the least of the calls so far, and how many."""
        if key not in self.graphs:
            if len(self.host_s) >= 1024:
                self.host_s.clear()
            best, n = self.host_s.get(key, (host_s, 0))
            self.host_s[key] = (min(best, host_s), n + 1)

    def _why_not_graphed(self, key: tuple, nbytes: int, copied: int) -> str | None:
        """Why a size of `nbytes` input and output bytes a call, `copied` of them copied at each
        replay, runs normally, or None (see the module doc)."""
        if nbytes <= self.max_bytes:
            graphed = self._graphed()
            if graphed < FREE_SIZES:
                return None
            if self.own_pools:  # each graph keeps a pool of its temporaries, which `kept` does not count
                return f"{graphed} sizes graphed, each in a memory pool of its own (at most {FREE_SIZES})"
            kept = sum(self.kept.values())
            if kept + nbytes > MAX_SMALL_TOTAL_BYTES:
                return f"the artifact's graphs keep {kept} bytes (at most {MAX_SMALL_TOTAL_BYTES} past {FREE_SIZES} sizes)"
            return None
        if nbytes > MAX_GRAPH_BYTES:
            return f"above {MAX_GRAPH_BYTES} bytes"
        kept = sum(self.kept.values())
        if kept + nbytes > MAX_TOTAL_BYTES:
            return f"the artifact's graphs keep {kept} bytes (at most {MAX_TOTAL_BYTES} in all)"
        host, n = self.host_s.get(key, (None, 0))
        if n < 2:  # the first call of a size pays one-time costs (cuDNN plans, cuBLAS workspaces, allocations)
            return _PENDING
        copies = 2 * copied / COPY_BYTES_PER_S
        if host < PAYBACK * copies:
            return f"host time {host} s against copies of {copies:.2e} s"
        return None

    def _graphed(self) -> int:
        """How many sizes have graphs (computed at a size's capture decisions only, not per call)."""
        return sum(1 for v in self.graphs.values() if v is not None)

    def _room_for_another(self, key: tuple) -> bool:
        """Whether size `key` may capture another graph (a spare while its first one's outputs are
        held, a variant for other addresses), about as many bytes as it keeps now: always while at
        most FREE_SIZES sizes are graphed (as before there could be more); past them, within
        MAX_SMALL_TOTAL_BYTES for the small sizes, MAX_TOTAL_BYTES for the others."""
        if self._graphed() <= FREE_SIZES:
            return True
        mine = self.kept.get(key, 0)
        budget = MAX_SMALL_TOTAL_BYTES if mine <= self.max_bytes else MAX_TOTAL_BYTES
        return sum(self.kept.values()) + mine <= budget

    def _output_bytes(self, plan: tuple) -> int:
        """The bytes of the tensor outputs of a call with this plan (their shapes are the plan's), but
        input mutations written in place (into the input: its bytes are the input's)."""
        total = 0
        into = getattr(self.artifact, "into", None) or {}
        for k, (o, shape) in enumerate(zip(self.artifact.outputs, plan[2])):
            if o.kind == "tensor" and shape is not None and k not in into:
                n = 1
                for d in shape:
                    n *= int(d)
                total += n * o.dtype.itemsize
        return total

    def _discard(self, key: tuple) -> None:
        """Run this size normally from now on, dropping its graph. When no graph is left, the next
        capture takes a fresh memory pool: PyTorch's allocator asserts (`use_count > 0`) when a
        capture joins a pool whose graphs were all destroyed (GPT-2 at batch 8, length 512)."""
        g = self.graphs.get(key)
        self.graphs[key] = None
        self.kept.pop(key, None)
        for h in _all_graphs(g):
            for p in h.ptrs or ():
                if _GRAPH_OUTPUTS.get(p, (0, None))[1] == id(self):
                    del _GRAPH_OUTPUTS[p]
        if not any(g is not None for g in self.graphs.values()):
            self.pool = None

    def _capture(self, key: tuple, plan: tuple, args: Sequence[Any], in_place: list,
                 spare: bool = False, follow: dict | None = None) -> _Graph | None:
        dev = torch.device(self.artifact.device)
        # the graph's own input buffers; a CPU scalar tensor (which the host program would copy to
        # the device inside the graph, not capturable) gets a device buffer it is copied into
        static = [a if p is not None or not isinstance(a, torch.Tensor) else
                  a.to(dev) if a.device.type != self.device_type else a.clone() for a, p in zip(args, in_place)]
        # the outputs' buffers come from torch's allocator, outside the pool that every graph of the
        # artifact shares for its temporaries: a caller may hold them while other graphs replay
        # an input mutation written in place (Artifact.into) writes the graph's input: the caller's
        # tensor read in place, or the graph's own copy (copied to the caller after each replay)
        into = getattr(self.artifact, "into", None) or {}
        outs_pre = None
        if self.hand_out:
            outs_pre = []
            bases = storages(static) if into else None
            for k, (o, shape) in enumerate(zip(self.artifact.outputs, plan[2])):
                if o.kind == "tensor":
                    t = take(static, k, into, shape, o.dtype, dev, bases) if into else None
                    outs_pre.append(t if t is not None else torch.empty(shape, dtype=o.dtype, device=dev))
        if self.own_pools:  # its outputs stay in its pool: no other capture may take those blocks
            pool = torch.cuda.graph_pool_handle()
        else:
            if self.pool is None:
                self.pool = torch.cuda.graph_pool_handle()
            pool = self.pool
        graph = torch.cuda.CUDAGraph()
        try:
            with torch.cuda.graph(graph, pool=pool):
                outs = self.artifact._run(plan, static, outs_pre)
        except Exception as e:  # noqa: BLE001 - a host program torch cannot capture runs normally
            log.warning("mlir_sym: CUDA graph capture of %s failed for sizes %s (%s); running it normally",
                        self.artifact.name, key, str(e).splitlines()[0])
            if not spare:
                self._discard(key)
            return None
        scalars = {i: repr(a.item()) for i, (a, p) in enumerate(zip(args, in_place))
                   if p is None and isinstance(a, torch.Tensor) and a.device.type != self.device_type}
        # views of inputs or outputs: made at each call from the caller's tensors (_with_views)
        outs = [None if spec.kind == "alias" else o for o, spec in zip(outs, self.artifact.outputs)]
        for i in follow or ():  # no reference to another graph's output kept: it would stay "held",
            static[i] = None  # and that graph would never replay into it again
        g = _Graph(graph, static, in_place, outs, scalars, follow=follow or None, pool=pool)
        # outputs that are the graph's inputs (mutations written in place): not buffers of its own
        written = {k for k, i in into.items() if isinstance(outs[k], torch.Tensor) and isinstance(static[i], torch.Tensor)
                   and outs[k].data_ptr() == static[i].data_ptr()}
        own = [o for k, o in enumerate(outs) if isinstance(o, torch.Tensor) and k not in written]
        if self.hand_out and all(o is p for o, p in zip([o for o in outs if isinstance(o, torch.Tensor)], outs_pre)):
            handles = [o.untyped_storage()._cdata for o in own]
            held = [(c, _use_count(c)) for c in handles]
            # the count of a storage only its own tensor references: a higher one now would be a
            # reference we do not know of, and taking it as "nobody holds it" could let a replay
            # overwrite what a caller holds; such a graph copies its outputs out instead
            control = torch.empty(1, device=dev)
            alone = _use_count(control.untyped_storage()._cdata)
            if all(base == alone for _, base in held):
                g.held = held
                g.ptrs = [o.data_ptr() for o in outs if isinstance(o, torch.Tensor)]
                for o in own:
                    _GRAPH_OUTPUTS[o.data_ptr()] = (o.untyped_storage().nbytes(), id(self))
            else:
                log.info("mlir_sym: outputs of the CUDA graph of %s for sizes %s are referenced elsewhere; "
                         "copying them out", self.artifact.name, key)
        if not spare:
            self.graphs[key] = g
        self.kept[key] = self.kept.get(key, 0) + sum(_nbytes(t) for t, p in zip(static, in_place) if p is None) \
            + sum(_nbytes(o) for o in own)
        self.captures += 1
        log.info("mlir_sym: captured a CUDA graph of %s for sizes %s%s; %d inputs read in place (%d of them "
                 "another graph's outputs), %d bytes copied a call", self.artifact.name, key,
                 " (another one: the first one's outputs are held, or its inputs moved)" if spare else "",
                 sum(p is not None for p in in_place), len(follow or ()),
                 sum(_nbytes(a) for a, p in zip(args, in_place) if p is None))
        if log.isEnabledFor(logging.DEBUG):
            log.debug("mlir_sym: %s copies inputs %s", self.artifact.name,
                      [(i, tuple(a.shape), str(a.dtype)) for i, (a, p) in enumerate(zip(args, in_place))
                       if p is None and isinstance(a, torch.Tensor)])
        return g


_use_count = getattr(torch._C, "_storage_Use_Count", None)  # references to a StorageImpl (a private API)


def _host_source(variant: Any) -> str:
    """The generated host program of a GPU variant ("" for others)."""
    keepalive = getattr(variant, "keepalive", None)
    gpu = keepalive.get("gpu") if isinstance(keepalive, dict) else None
    return gpu["host_source"] if gpu else ""


def _all_graphs(g: Any) -> list:
    """A size's graph, its spare, its variants and theirs (the _Graph objects among them)."""
    if not isinstance(g, _Graph):
        return []
    out = [g, *_all_graphs(g.spare)]
    for v in (g.variants or {}).values():
        out += _all_graphs(v)
    return out


def _first(a: torch.Tensor) -> tuple:
    """What `_same_tensor` compares a later call's tensor with: weak references to `a`'s storage and
    to `a`, and its address."""
    return (StorageWeakRef(a.untyped_storage()), a.data_ptr(), weakref.ref(a))


def _same_tensor(a: torch.Tensor, first: tuple) -> bool:
    """Whether `a` is the first call's tensor (`first`, from `_first`): the very object (a registered
    buffer's strided view too), or a contiguous tensor at the same address of the same storage, still
    alive, which reads the same memory at this size. A parameter's `weight.t()` saved for a backward
    comes as a new tensor object at every step (autograd unpacks it, no `_base`), and the artifact
    permutes it back (`Artifact.input_perms`): the graph reads the parameter in place, where it
    copied every linear layer's weight at every replay. A new activation that happens to reuse the
    first one's memory has another storage: copied. So is a view into a graph's output buffer (not
    at its start: those are followed, `_graph_outputs_of_others`): the graph would keep it, and the
    buffer's own graph, seeing it held, would write its outputs elsewhere at every later call."""
    if a.data_ptr() != first[1]:
        return False
    if first[2]() is a:
        return True
    storage = first[0]
    if storage.expired() or not a.is_contiguous():
        return False
    s = a.untyped_storage()
    return storage.cdata == s._cdata and s.data_ptr() not in _GRAPH_OUTPUTS


def _forget_outputs(owner: int) -> None:
    """Unregister the graph output buffers of a CudaGraphs that is gone (weakref.finalize)."""
    for p in [p for p, (_, o) in _GRAPH_OUTPUTS.items() if o == owner]:
        del _GRAPH_OUTPUTS[p]


def _nbytes(t: Any) -> int:
    return t.numel() * t.element_size() if isinstance(t, torch.Tensor) else 0


def enabled_from_env() -> bool:
    return os.environ.get("MLIR_SYM_CUDA_GRAPHS", "1") != "0"


def max_bytes_from_env() -> int:
    return int(os.environ.get("MLIR_SYM_CUDA_GRAPH_MAX_BYTES", str(16 << 20)))


def max_sizes_from_env() -> int:
    return int(os.environ.get("MLIR_SYM_CUDA_GRAPH_MAX_SIZES", "256"))


def min_launches_from_env() -> int:
    return int(os.environ.get("MLIR_SYM_CUDA_GRAPH_MIN_LAUNCHES", "4"))
