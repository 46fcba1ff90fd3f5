"""CUDA runtime: load PTX, launch kernels on torch's current stream, run a generated host program.

The only module of mlir_sym that talks to the CUDA driver. It calls `libcuda` through ctypes (the same
driver API `cuda.bindings.driver` wraps, at a fraction of the per-call cost): `cuModuleLoadDataEx`
once per kernel module of an artifact (a cubin from codegen/cubin.py, or PTX the driver JIT-compiles
for the device; its error log goes into the exception), `cuLaunchKernel` per launch with a parameter block packed by one `struct.pack_into`.

A launch plan comes from codegen/host.py: Python source that computes grid/block sizes from the
symbol values of the call, allocates buffers with torch's caching allocator (`Runtime.empty`) and calls
`Runtime.launch`. A launch the driver refuses raises `KernelLaunchError` naming the kernel and its launch
sizes. Errors inside a running kernel surface (as usual with CUDA) at the next synchronizing call; set
`MLIR_SYM_CUDA_SYNC=1` to synchronize after every launch and name the kernel that failed.
"""
from __future__ import annotations

import ctypes
import itertools
import linecache
import logging
import math
import os
import re
import struct
import threading
from typing import Any, Sequence

import torch

from mlir_sym.codegen.host import KernelParam
from mlir_sym.codegen.host_profile import HostProfile, instrument
from mlir_sym.codegen.host_profile import namespace as profile_namespace
from mlir_sym.runtime import cublas

log = logging.getLogger("mlir_sym.runtime")

CU_JIT_INFO_LOG_BUFFER = 3
CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES = 4
CU_JIT_ERROR_LOG_BUFFER = 5
CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6


class CudaError(RuntimeError):
    """A CUDA driver call failed."""


class KernelLaunchError(CudaError):
    """cuLaunchKernel refused a launch (or, with MLIR_SYM_CUDA_SYNC=1, the kernel failed)."""


_LIB: ctypes.CDLL | None = None


def _driver() -> ctypes.CDLL:
    global _LIB
    if _LIB is None:
        names = ["libcuda.so.1", "libcuda.so", "nvcuda.dll"]
        last: Exception | None = None
        for n in names:
            try:
                lib = ctypes.CDLL(n)
                break
            except OSError as e:
                last = e
        else:
            raise CudaError(f"cannot load the CUDA driver library (libcuda.so.1): {last}")
        vp, ui = ctypes.c_void_p, ctypes.c_uint
        lib.cuLaunchKernel.argtypes = [vp, ui, ui, ui, ui, ui, ui, ui, vp, vp, vp]
        lib.cuLaunchKernel.restype = ctypes.c_int
        lib.cuModuleLoadDataEx.argtypes = [ctypes.POINTER(vp), ctypes.c_char_p, ui, ctypes.POINTER(ctypes.c_int),
                                           ctypes.POINTER(vp)]
        lib.cuModuleGetFunction.argtypes = [ctypes.POINTER(vp), vp, ctypes.c_char_p]
        lib.cuModuleUnload.argtypes = [vp]
        lib.cuCtxGetCurrent.argtypes = [ctypes.POINTER(vp)]
        lib.cuCtxSetCurrent.argtypes = [vp]
        lib.cuDeviceGet.argtypes = [ctypes.POINTER(ctypes.c_int), ctypes.c_int]
        lib.cuDevicePrimaryCtxRetain.argtypes = [ctypes.POINTER(vp), ctypes.c_int]
        lib.cuGetErrorString.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_char_p)]
        lib.cuGetErrorName.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_char_p)]
        lib.cuFuncGetAttribute.argtypes = [ctypes.POINTER(ctypes.c_int), ctypes.c_int, vp]
        _LIB = lib
    return _LIB


def error_text(rc: int) -> str:
    lib = _driver()
    name, desc = ctypes.c_char_p(), ctypes.c_char_p()
    lib.cuGetErrorName(rc, ctypes.byref(name))
    lib.cuGetErrorString(rc, ctypes.byref(desc))
    n = name.value.decode() if name.value else f"CUresult {rc}"
    d = desc.value.decode() if desc.value else ""
    return f"{n}: {d}" if d else n


def _check(rc: int, what: str) -> None:
    if rc != 0:
        raise CudaError(f"{what} failed: {error_text(rc)}")


_THREAD = threading.local()  # per thread: the device whose context ensure_context made current


def ensure_context(device: torch.device) -> None:
    """Make the device's primary context (the one torch uses) current on this thread."""
    torch.cuda.init()
    index = device.index if device.index is not None else torch.cuda.current_device()
    with torch.cuda.device(index):
        torch.cuda.current_stream(index)  # forces torch's lazy init of the context on this device
    lib = _driver()
    cur = ctypes.c_void_p()
    _check(lib.cuCtxGetCurrent(ctypes.byref(cur)), "cuCtxGetCurrent")
    dev = ctypes.c_int()
    _check(lib.cuDeviceGet(ctypes.byref(dev), index), "cuDeviceGet")
    prim = ctypes.c_void_p()
    _check(lib.cuDevicePrimaryCtxRetain(ctypes.byref(prim), dev.value), "cuDevicePrimaryCtxRetain")
    if cur.value != prim.value:
        _check(lib.cuCtxSetCurrent(prim), "cuCtxSetCurrent")


_SLOT = {  # one 8-byte slot per kernel parameter; little-endian, value at the slot's start
    "index": "q", "i64": "q", "i32": "i4x", "i16": "h6x", "i8": "b7x", "i1": "?7x",
    "f32": "f4x", "f64": "d", "f16": "e6x", "bf16": "H6x",  # bf16: bits from Runtime.bf16_bits
}


def param_format(params: Sequence[KernelParam]) -> tuple[str, int]:
    """struct format and slot count for a kernel's flattened parameters (memrefs as descriptors:
    allocated, aligned, offset, sizes..., strides...)."""
    fmt, n = "<", 0
    for p in params:
        if p.kind == "memref":
            fmt += "QQq" + "q" * (2 * p.rank)
            n += 3 + 2 * p.rank
        elif p.kind in _SLOT:
            fmt += _SLOT[p.kind]
            n += 1
        else:
            raise CudaError(f"kernel parameter of kind {p.kind} is not supported")
    return fmt, n


class Kernel:
    """One `.entry` of a loaded module with its parameter block (reused across launches: the driver
    copies parameters at launch time)."""

    def __init__(self, name: str, handle: int, params: Sequence[KernelParam]) -> None:
        self.name = name
        self.handle = ctypes.c_void_p(handle)
        self.params = list(params)
        self.fmt, self.nslots = param_format(params)
        self.struct = struct.Struct(self.fmt)
        self.buf = (ctypes.c_uint64 * max(self.nslots, 1))()
        self.argv = (ctypes.c_void_p * max(self.nslots, 1))()
        base = ctypes.addressof(self.buf)
        for i in range(self.nslots):
            self.argv[i] = base + 8 * i
        self.argv_ptr = ctypes.cast(self.argv, ctypes.c_void_p)
        self.launches = 0

    def __repr__(self) -> str:
        return f"Kernel({self.name}, {len(self.params)} args, {self.nslots} params)"


class CudaModule:
    """Kernel modules loaded into the device's primary context: cubins where `codegen/cubin.py` could
    assemble them (loading is then nearly free), else PTX the driver JIT-compiles (the bulk of loading;
    the driver does one module at a time, so these load in turn)."""

    def __init__(self, ptx: str | Sequence[str], kernels: dict[str, Sequence[KernelParam]], device: torch.device,
                 cubins: Sequence[bytes | None] | None = None) -> None:
        """`ptx`: one PTX text or several (modules of their own); `cubins`: for each, its cubin or None."""
        ensure_context(device)
        lib = _driver()
        self.device = device
        parts = [ptx] if isinstance(ptx, str) else list(ptx)
        images = list(cubins) if cubins is not None else [None] * len(parts)
        self.handles: list[int] = []
        where: dict[str, int] = {}  # .entry name -> the module defining it
        for text, cubin in zip(parts, images):
            handle, error = _load_image(cubin, "cubin") if cubin is not None else (0, "")
            if error:
                log.warning("the cubin did not load (%s); the driver compiles its PTX instead", error)
            if not handle:
                handle, error = _load_image(text.encode() + b"\0", "PTX")
                if error:
                    raise CudaError(error)
            self.handles.append(handle)
            for m in _ENTRY.finditer(text):
                where[m.group(1)] = handle
        self.kernels: dict[str, Kernel] = {}
        for name, params in kernels.items():
            if name not in where:
                raise CudaError(f"kernel {name} is in none of the {len(parts)} PTX modules")
            fn = ctypes.c_void_p()
            _check(lib.cuModuleGetFunction(ctypes.byref(fn), ctypes.c_void_p(where[name]), name.encode()),
                   f"cuModuleGetFunction({name})")
            self.kernels[name] = Kernel(name, fn.value, params)

    def __del__(self) -> None:
        try:
            lib = _driver()
            for h in getattr(self, "handles", ()):
                lib.cuModuleUnload(ctypes.c_void_p(h))
        except Exception:  # noqa: BLE001 - interpreter shutdown
            pass


_ENTRY = re.compile(r"\.entry\s+([A-Za-z_$][\w$]*)\s*\(")


def _load_image(image: bytes, kind: str) -> tuple[int, str]:
    """(module handle, "") or (0, the error): one cuModuleLoadDataEx of a cubin or a NUL-terminated PTX."""
    lib = _driver()
    handle = ctypes.c_void_p()
    log_size = 1 << 14
    err_log = ctypes.create_string_buffer(log_size)
    opts = (ctypes.c_int * 2)(CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES)
    vals = (ctypes.c_void_p * 2)(ctypes.addressof(err_log), log_size)
    rc = lib.cuModuleLoadDataEx(ctypes.byref(handle), image, 2, opts, vals)
    if rc != 0:
        text = err_log.value.decode(errors="replace").strip()
        return 0, f"cuModuleLoadDataEx ({kind}) failed: {error_text(rc)}" + (f"\nptxas: {text}" if text else "")
    return handle.value, ""


_VP = ctypes.c_void_p
# tm_tensor.scan's combiners: the torch scan, and how an exclusive scan's start joins its partial scan
_SCANS = {"add": (torch.cumsum, torch.add), "mul": (torch.cumprod, torch.mul),
          "max": (torch.cummax, torch.maximum), "min": (torch.cummin, torch.minimum)}
_ITEM = {"float32": 4, "float64": 8, "float16": 2, "bfloat16": 2, "int64": 8, "int32": 4, "int16": 2,
         "int8": 1, "uint8": 1, "bool": 1}
_TYPESTR = {"float32": "<f4", "float64": "<f8", "float16": "<f2", "bfloat16": "<i2", "int64": "<i8",
            "int32": "<i4", "int16": "<i2", "int8": "|i1", "uint8": "|u1", "bool": "|b1"}


class _DeviceArray:
    """A memref descriptor's memory as `__cuda_array_interface__` (torch.as_tensor wraps it, no copy)."""

    __slots__ = ("__cuda_array_interface__",)

    def __init__(self, desc: tuple, dtype: str) -> None:
        r = (len(desc) - 3) // 2
        item = _ITEM[dtype]
        self.__cuda_array_interface__ = {
            "shape": tuple(desc[3:3 + r]), "strides": tuple(s * item for s in desc[3 + r:]),
            "typestr": _TYPESTR[dtype], "data": (desc[1] + desc[2] * item, False), "version": 2}


def _strided_view(root: torch.Tensor, desc: tuple) -> torch.Tensor:
    """The view `desc` (a descriptor of memory inside `root`'s storage, of root's element type) as a
    tensor: root.as_strided."""
    r = (len(desc) - 3) // 2
    item = root.element_size()
    base = root.data_ptr() - root.storage_offset() * item
    return root.as_strided(desc[3:3 + r], desc[3 + r:], (desc[1] + desc[2] * item - base) // item)


def _as_tensor(x: Any, dtype: str, root: torch.Tensor | None) -> torch.Tensor:
    """A host-program value as a tensor: itself, a view of its root tensor, or a tensor over its memory."""
    if type(x) is not tuple:
        return x
    return wrap(x, dtype) if root is None else _strided_view(root, x)


def _contiguous(t: torch.Tensor) -> torch.Tensor:
    """`t` as a buffer of identity layout (a copy only when it is laid out otherwise)."""
    return t if t.is_contiguous() else t.contiguous()


def _layout(x: Any, dtype: str) -> tuple:
    """(data pointer, sizes, strides) of a tensor or a memref descriptor of element type `dtype`."""
    if type(x) is not tuple:
        return x.data_ptr(), tuple(x.shape), x.stride()
    r = (len(x) - 3) // 2
    return x[1] + x[2] * _ITEM[dtype], x[3:3 + r], x[3 + r:]


def wrap(desc: tuple, dtype: str) -> torch.Tensor:
    """A tensor over a descriptor's memory (valid while the buffer it views lives: within the call)."""
    t = torch.as_tensor(_DeviceArray(desc, dtype))  # on the device the pointer is on
    return t.view(torch.bfloat16) if dtype == "bfloat16" else t


def _launch_fn():
    """cuLaunchKernel without ctypes argtypes (0.9 us less per launch on the H100 host,
    benchmarks/bench_host_primitives.py): the caller passes the pointers as c_void_p (kernel handle,
    stream, parameter array) and the sizes as Python ints, which ctypes passes as C ints (grid and
    block sizes fit in 31 bits)."""
    _driver()
    fn = ctypes.CDLL(_LIB._name)["cuLaunchKernel"]  # a function object of its own, no argtypes
    fn.restype = ctypes.c_int
    return fn


def _raw_stream_fn():
    get = getattr(torch._C, "_cuda_getCurrentRawStream", None)
    if get is not None:
        return get
    return lambda index: torch.cuda.current_stream(index).cuda_stream


class Runtime:
    """What generated host programs call (`rt.*`)."""

    wrap = staticmethod(wrap)  # a descriptor as a tensor over its memory
    float32, float64, float16, bfloat16 = torch.float32, torch.float64, torch.float16, torch.bfloat16
    int64, int32, int16, int8, uint8, bool = torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8, torch.bool

    @staticmethod
    def bf16_bits(x: float) -> int:
        """The bfloat16 nearest to `x` (ties to even; NaN stays NaN), as its 16 bits."""
        (b,) = struct.unpack("<I", struct.pack("<f", x))
        if (b & 0x7F800000) == 0x7F800000 and (b & 0x7FFFFF):
            return (b >> 16) | 0x40
        return ((b + 0x7FFF + ((b >> 16) & 1)) >> 16) & 0xFFFF

    def __init__(self, device: torch.device) -> None:
        self.device = device
        self.index = device.index if device.index is not None else torch.cuda.current_device()
        self._stream = _raw_stream_fn()
        self._launch = _launch_fn()
        self.sync = os.environ.get("MLIR_SYM_CUDA_SYNC", "0") == "1"
        self.launches = 0
        self._scalars: dict[tuple, torch.Tensor] = {}  # device_scalar's copies
        self.arena_hint = 0  # bytes of arena buffers the host program took in a call, at most
        self._gemms: dict[tuple, Any] = {}  # library_einsum's cuBLAS calls by equation and shapes

    # buffers and views
    def empty(self, shape: Sequence[int], dtype: torch.dtype) -> torch.Tensor:
        return torch.empty(shape, dtype=dtype, device=self.device)

    def device_scalar(self, t: torch.Tensor) -> torch.Tensor:
        """A CPU scalar tensor input (a float Dynamo passes as a 0-d tensor: HuggingFace models pass
        about 25 a call, eps values and scales) on the device. Kernels only read inputs
        (sym-readonly-inputs), so one device copy per value serves every call: a `.item()` on the
        host instead of an allocation and a pageable host-to-device copy per input and call."""
        if t.device.type != "cpu":  # a CUDA graph's capture passes its own device buffer
            return t
        key = (t.dtype, repr(t.item()))  # repr: -0.0 and 0.0 differ, every NaN is one key
        d = self._scalars.get(key)
        if d is None:
            if len(self._scalars) >= 1024:
                self._scalars.clear()
            d = self._scalars[key] = t.to(self.device)
        return d

    @staticmethod
    def desc(t: torch.Tensor) -> tuple:
        p = t.data_ptr()
        return (p, p, 0, *t.shape, *t.stride())

    @staticmethod
    def desc0(t: torch.Tensor) -> tuple:
        p = t.data_ptr()
        return (p, p, 0)

    @staticmethod
    def subview(t: torch.Tensor, offs: Sequence[int], sizes: Sequence[int], strides: Sequence[int],
                keep: Sequence[int] | None) -> torch.Tensor:
        st = t.stride()
        off = t.storage_offset() + sum(o * s for o, s in zip(offs, st))
        new_strides = [s * k for s, k in zip(st, strides)]
        if keep is not None:
            sizes = [sizes[i] for i in keep]
            new_strides = [new_strides[i] for i in keep]
        return t.as_strided(list(sizes), new_strides, off)

    class Arena:
        """The buffers of one host-program call that only kernels use (codegen/host.py
        `_descriptor_views`), carved as memref descriptors from one torch allocation: about 1 us a
        buffer instead of a torch.empty (5-7 us). A chunk is as large as the most the program has
        used in a call (`arena_hint`), so a call usually allocates once; chunks go back to torch's
        allocator when the call returns, as the buffers did."""

        __slots__ = ("rt", "chunks", "base", "off", "cap", "used")

        def __init__(self, rt: "Runtime") -> None:
            self.rt = rt
            self.chunks: list[torch.Tensor] = []
            self.base = self.off = self.cap = self.used = 0

        def take(self, shape: tuple, item: int) -> tuple:
            n = item
            for d in shape:
                n *= d
            n = (n + 255) & -256  # 256-byte aligned, as torch's allocator aligns (vector accesses)
            if self.off + n > self.cap:
                size = max(n, self.rt.arena_hint - self.used, 256)
                chunk = torch.empty(size, dtype=torch.uint8, device=self.rt.device)
                self.chunks.append(chunk)
                self.base, self.off, self.cap = chunk.data_ptr(), 0, size
            p = self.base + self.off
            self.off += n
            self.used += n
            if self.used > self.rt.arena_hint:
                self.rt.arena_hint = self.used
            st, s = [], 1
            for d in reversed(shape):
                st.append(s)
                s *= d
            return (p, p, 0, *shape, *reversed(st))

        def keep(self, t: torch.Tensor) -> tuple:
            """`t`'s descriptor; `t` is kept alive until the call returns, as the arena's chunks."""
            self.chunks.append(t)
            return Runtime.desc(t)

    # memref descriptors of views only kernels read (codegen/host.py `_descriptor_views`): tuples
    # (pointer, pointer, 0, sizes..., strides...) computed from a tensor's or another descriptor's
    @staticmethod
    def dsubview(src: Any, item: int, offs: Sequence[int], sizes: Sequence[int], strides: Sequence[int],
                 keep: Sequence[int] | None) -> tuple:
        d = src if type(src) is tuple else Runtime.desc(src)
        st = d[3 + (len(d) - 3) // 2:]
        p = d[1] + item * (d[2] + sum(o * s for o, s in zip(offs, st)))
        new_st = [s * k for s, k in zip(st, strides)]
        if keep is not None:
            sizes = [sizes[i] for i in keep]
            new_st = [new_st[i] for i in keep]
        return (p, p, 0, *sizes, *new_st)

    @staticmethod
    def adopt(out: torch.Tensor, src: torch.Tensor) -> None:
        """`memref.copy src, out` where `out` is an output the caller allocated and `src` a fresh
        library result nothing touches after (codegen/host.py `_adoptable`): `out` becomes a tensor
        on `src`'s memory (`set_`, the same tensor object, so the caller's list of outputs sees it)
        when they are laid out alike, instead of a device copy; else the copy. Under a CUDA graph's
        capture `src` is the graph's pool memory, which the replays rewrite and the output keeps
        alive (runtime/cuda_graphs.py hands it out as any output buffer)."""
        if (src.dtype == out.dtype and src.device == out.device and src.shape == out.shape
                and all(a == b for a, b, n in zip(src.stride(), out.stride(), out.shape) if n > 1)):
            out.set_(src.untyped_storage(), src.storage_offset(), out.shape, out.stride())
        else:
            out.copy_(src)

    @staticmethod
    def as_desc(src: Any) -> tuple:
        """A memref.cast only kernels read: the descriptor of `src` (a tensor or a descriptor)."""
        return src if type(src) is tuple else Runtime.desc(src)

    @staticmethod
    def dexpand(src: Any, groups: Sequence[Sequence[int]], shape: Sequence[int]) -> tuple:
        d = src if type(src) is tuple else Runtime.desc(src)
        st = d[3 + (len(d) - 3) // 2:]
        new_st = [0] * len(shape)
        for i, g in enumerate(groups):
            s = st[i]
            for j in reversed(g):
                new_st[j] = s
                s *= shape[j]
        return (d[0], d[1], d[2], *shape, *new_st)

    @staticmethod
    def dtranspose(src: Any, perm: Sequence[int]) -> tuple:
        """memref.transpose of a descriptor: result dim i is `src`'s dim perm[i] (torch's permute)."""
        d = src if type(src) is tuple else Runtime.desc(src)
        r = (len(d) - 3) // 2
        sizes, st = d[3:3 + r], d[3 + r:]
        return (d[0], d[1], d[2], *[sizes[p] for p in perm], *[st[p] for p in perm])

    @staticmethod
    def dcollapse(src: Any, groups: Sequence[Sequence[int]]) -> tuple:
        d = src if type(src) is tuple else Runtime.desc(src)
        r = (len(d) - 3) // 2
        sizes, st = d[3:3 + r], d[3 + r:]
        new_sizes, new_st = [], []
        for g in groups:
            n = 1
            for i in g:
                n *= sizes[i]
            new_sizes.append(n)
            inner = [i for i in g if sizes[i] != 1]  # a unit dim's stride says nothing
            new_st.append(st[inner[-1]] if inner else (st[g[-1]] if g else 1))
        return (d[0], d[1], d[2], *new_sizes, *new_st)

    @staticmethod
    def read(t: torch.Tensor, idx: tuple) -> Any:
        """One element of a device buffer, on the host (waits for the launches that wrote it)."""
        return t[idx].item()

    # scalar helpers (C semantics where Python's differ)
    @staticmethod
    def divsi(a: int, b: int) -> int:
        q = abs(a) // abs(b)
        return q if (a >= 0) == (b >= 0) else -q

    @staticmethod
    def remsi(a: int, b: int) -> int:
        return a - b * Runtime.divsi(a, b)

    @staticmethod
    def fdiv(a: float, b: float) -> float:
        try:
            return a / b
        except ZeroDivisionError:
            return float("nan") if a == 0 or a != a else float("inf") if a > 0 else float("-inf")

    @staticmethod
    def round_half_away(x: float) -> float:
        return math.floor(x + 0.5) if x >= 0 else -math.floor(-x + 0.5)

    @staticmethod
    def trunc(v: int, bits: int) -> int:
        if isinstance(v, bool):
            return v
        v &= (1 << bits) - 1
        return v - (1 << bits) if bits > 1 and v >= 1 << (bits - 1) else v

    # library calls (func.call @__sym_<kind>_<n> in the host function)
    def library_einsum(self, init: bool, equation: str, dtypes: tuple, a: Any, b: Any, c: Any) -> None:
        """A contraction (sym-gpu-library-calls): c = einsum(a, b) when `init`, else c += einsum(a, b);
        each operand a tensor or a memref descriptor (an arena buffer or a view of one), `dtypes` their
        element types. A (batched) matmul is one cuBLAS call on the descriptors (runtime/cublas.py:
        a plan per equation, sizes and strides, cached); others go through torch."""
        form = _form(equation)
        da = a if type(a) is tuple else Runtime.desc(a)
        db = b if type(b) is tuple else Runtime.desc(b)
        dc = c if type(c) is tuple else Runtime.desc(c)
        tf32 = dtypes[0] == "float32" and torch.backends.cuda.matmul.allow_tf32
        key = (equation, init, dtypes, tf32, da[3:], db[3:], dc[3:])
        entry = self._gemms.get(key)
        if entry is None:
            if len(self._gemms) >= 4096:
                self._gemms.clear()
            entry = self._gemms[key] = self._gemm_entry(form, init, dtypes, da, db, dc)
        if entry is False:
            Runtime.torch_einsum(init, equation, a, b, c, dtypes)
            return
        blas, calls, items = entry
        stream = self._stream(self.index)
        if stream != blas.stream:
            blas.use_stream(stream)
        pa, pb, pc = da[1] + da[2] * items[0], db[1] + db[2] * items[1], dc[1] + dc[2] * items[2]
        for args, (sa, sb, sc), (oa, ob, oc), swap in calls:
            args = list(args)
            args[sa], args[sb] = (_VP(pb + ob), _VP(pa + oa)) if swap else (_VP(pa + oa), _VP(pb + ob))
            args[sc] = _VP(pc + oc)
            rc = (blas.gemm_batched if len(args) > 19 else blas.gemm)(*args)
            if rc != 0:
                raise KernelLaunchError(f"cuBLAS GEMM of '{equation}' ({', '.join(dtypes)}; sizes {da[3:]}, {db[3:]}, "
                                        f"{dc[3:]}) failed with status {rc}")

    def library_einsum_bias(self, equation: str, dtypes: tuple, a: Any, b: Any, bias: Any, c: Any) -> None:
        """A contraction with its bias (sym-gpu-gemm-bias-epilogue): c = einsum(a, b) + bias, the
        vector `bias` indexed by c's last dim, rounded once into c (a linear layer: eager's `addmm`).
        One cuBLASLt GEMM with a bias epilogue when the product is one row-major GEMM and the bias
        has c's type (runtime/cublas.py `BiasGemm`); else torch's path: the product in float32 (or
        c's type), the bias added, then stored into c."""
        form = _form(equation)
        (da, db, dv, dc), (pa, pb, pv, pc) = _descriptors((a, b, bias, c), dtypes)
        if self._lt_gemm(cublas.LT_EPILOGUE_BIAS, equation, (dtypes[0], dtypes[1], dtypes[3], dtypes[2]), form,
                         da, db, dc, dv, pa, pb, pc, pv):
            return
        if dtypes[3] in ("float32", "float64"):  # a wide result (a bf16 bias of a float32 product): the
            self.library_einsum(True, equation, (dtypes[0], dtypes[1], dtypes[3]), a, b, c)  # sum is exact
            (c if type(c) is not tuple else wrap(c, dtypes[3])).add_(
                bias if type(bias) is not tuple else wrap(bias, dtypes[2]))
            return
        Runtime.torch_einsum_bias(equation, a, b, bias, c, dtypes)

    def library_einsum_bgrad(self, equation: str, dtypes: tuple, a: Any, b: Any, c: Any, db_: Any) -> None:
        """A weight gradient with its bias gradient (sym-gpu-gemm-bias-grad): c = einsum(a, b) over
        `k i, k j -> i j`, and db_[i] = sum over k of a[k, i], summed in float32 and rounded once
        into db_'s type (c's). One cuBLASLt GEMM with the `BGRADB` epilogue when the product is one
        row-major GEMM (a is its B operand then); else torch's path: the product, then the sum."""
        form = _form(equation)
        (da, db, dc, dv), (pa, pb, pc, pv) = _descriptors((a, b, c, db_), dtypes)
        dv = _as_vector(dv)  # [1, N] or [N]: N contiguous elements
        if dv is None or not self._lt_gemm(cublas.LT_EPILOGUE_BGRADB, equation, dtypes, form, da, db, dc, dv, pa, pb, pc, pv):
            Runtime.torch_einsum_bgrad(equation, a, b, c, db_, dtypes)

    def _lt_gemm(self, epilogue: int, equation: str, dtypes: tuple, form, da: tuple, db: tuple, dc: tuple,
                 dv: tuple, pa: int, pb: int, pc: int, pv: int) -> bool:
        """Run the cuBLASLt GEMM with `epilogue` and the vector at `pv` (dtypes: a, b, c, vector);
        False when cuBLASLt cannot take it (the caller takes torch's path)."""
        tf32 = dtypes[0] == "float32" and torch.backends.cuda.matmul.allow_tf32
        aligns = (cublas.alignment(pb), cublas.alignment(pa), cublas.alignment(pc))  # A' = b, B' = a
        key = ("lt", epilogue, equation, dtypes, tf32, aligns, da[3:], db[3:], dv[3:], dc[3:])
        entry = self._gemms.get(key)
        if entry is None:
            if len(self._gemms) >= 4096:
                self._gemms.clear()
            entry = self._gemms[key] = self._lt_entry(epilogue, form, dtypes, da, db, dv, dc, aligns)
        if entry is False or cublas.alignment(pv) < 16:
            return False
        blas, gemm = entry
        stream = self._stream(self.index)
        if stream != blas.stream:
            blas.use_stream(stream)
        rc = gemm.run(stream, pb, pa, pv, pc, blas.workspaces[stream].data_ptr())  # C^T = B^T A^T
        if rc != 0:
            raise KernelLaunchError(f"cuBLASLt GEMM (epilogue {epilogue}) of '{equation}' ({', '.join(dtypes)}; sizes "
                                    f"{da[3:]}, {db[3:]}, {dc[3:]}) failed with status {rc}")
        return True

    def _lt_entry(self, epilogue: int, form, dtypes: tuple, da: tuple, db: tuple, dv: tuple, dc: tuple, aligns: tuple):
        """(cuBLAS handle, the cuBLASLt GEMM) for these shapes, or False (torch's path). The vector
        has the product's type; a bias runs along the output's last dim (cuBLASLt's m, the output
        being row-major), a bias gradient along a's kept dim (n: a is cuBLASLt's B operand)."""
        if form is None or dtypes[0] != dtypes[1] or dtypes[2] != dtypes[3] or len(dv) != 5 or dv[4] != 1 \
                or any(t not in cublas.DATA_TYPES for t in dtypes):
            return False
        compute = cublas.compute_type(dtypes[0], dtypes[2])
        if compute is None:
            return False
        ops = [(d[3:3 + (len(d) - 3) // 2], d[3 + (len(d) - 3) // 2:]) for d in (da, db, dc)]
        plan = cublas.bias_plan(form, *ops)
        if plan is None or plan.m == 0 or plan.n == 0 or plan.k == 0 or cublas.slow_transposed(plan, dtypes[0]):
            return False
        if dv[3] != (plan.m if epilogue == cublas.LT_EPILOGUE_BIAS else plan.n):
            return False
        if epilogue == cublas.LT_EPILOGUE_BGRADB and (
                plan.transa != cublas.CUBLAS_OP_N or plan.transb != cublas.CUBLAS_OP_T
                or compute == cublas.COMPUTE_32F_FAST_TF32):
            return False  # the layout measured (row-major dY and X); a sum of TF32-rounded dY: torch's
        blas = cublas.Blas.get(self.index)
        if blas is None:
            return False
        gemm = cublas.BiasGemm.make(self.index, plan, cublas.DATA_TYPES[dtypes[0]], cublas.DATA_TYPES[dtypes[2]],
                                    compute, aligns, epilogue)
        return False if gemm is None else (blas, gemm)

    @staticmethod
    def torch_einsum_bgrad(equation: str, a: Any, b: Any, c: Any, db_: Any, dtypes: tuple = ()) -> None:
        """library_einsum_bgrad through torch: the product, then a's sum over its first (contracted)
        dim in float32, stored into db_ (rounded once)."""
        if dtypes:
            a, b, c, db_ = (x if type(x) is not tuple else wrap(x, t) for x, t in zip((a, b, c, db_), dtypes))
        Runtime.torch_einsum(True, equation, a, b, c)
        acc = torch.float64 if a.dtype == torch.float64 else torch.float32
        db_.copy_(a.sum(0, dtype=acc).view(db_.shape))

    @staticmethod
    def torch_einsum_bias(equation: str, a: Any, b: Any, bias: Any, c: Any, dtypes: tuple = ()) -> None:
        """library_einsum_bias through torch: the product in float32 (c's type when wider), plus the
        bias, stored into c (rounded once)."""
        if dtypes:
            a, b, bias, c = (x if type(x) is not tuple else wrap(x, t) for x, t in zip((a, b, bias, c), dtypes))
        acc = torch.float32 if c.dtype in (torch.bfloat16, torch.float16) else c.dtype
        r = torch.empty(c.shape, dtype=acc, device=c.device)
        Runtime.torch_einsum(True, equation, a, b, r)
        r.add_(bias.to(acc))
        c.copy_(r)

    def _gemm_entry(self, form, init: bool, dtypes: tuple, da: tuple, db: tuple, dc: tuple):
        """(handle, its GEMMs: cuBLAS arguments without pointers, the pointers' slots, byte offsets,
        swap; item sizes) of one contraction's shapes, or False when cuBLAS cannot take it as it is
        (torch's path then)."""
        if form is None or dtypes[0] != dtypes[1] or any(t not in cublas.DATA_TYPES for t in dtypes):
            return False
        compute = cublas.compute_type(dtypes[0], dtypes[2])
        if compute is None:
            return False
        ops = [(d[3:3 + (len(d) - 3) // 2], d[3 + (len(d) - 3) // 2:]) for d in (da, db, dc)]
        plans = cublas.gemm_calls(form, *ops, init)
        if plans is None:
            log.debug("contraction '%s' of sizes and strides %s: not a strided GEMM, through torch", form, ops)
            return False
        if any(p.batch == 0 or p.m == 0 or p.n == 0 or cublas.slow_transposed(p, dtypes[0]) for p, *_ in plans):
            return False  # an empty product (torch's path does nothing); a slow float32 "tn" GEMM
        if init and dtypes[2] in ("bfloat16", "float16") and any(not sub_init for *_, sub_init in plans):
            return False  # GEMMs adding into a half result would round each partial sum: one product
        blas = cublas.Blas.get(self.index)
        if blas is None:
            return False
        a_type, c_type = cublas.DATA_TYPES[dtypes[0]], cublas.DATA_TYPES[dtypes[2]]
        items = tuple(_ITEM[t] for t in dtypes)
        calls = []
        for plan, oa, ob, oc, sub_init in plans:
            args = blas.args(plan, sub_init, a_type, c_type, compute)
            slots = (7, 10, 14) if plan.batch == 1 else (7, 11, 16)
            calls.append((args, slots, (oa * items[0], ob * items[1], oc * items[2]), plan.swap))
        return blas, tuple(calls), items

    @staticmethod
    def torch_einsum(init: bool, equation: str, a: Any, b: Any, c: Any, dtypes: tuple = ()) -> None:
        """library_einsum through torch (what cuBLAS cannot read as it is, integer types; any device),
        descriptors as tensors wrapping their memory. A (batched) matmul goes to torch.matmul (about 8
        us of host time; torch.einsum's equation parsing and permutes cost 35-40 us a call)."""
        if dtypes:
            a, b, c = (x if type(x) is not tuple else wrap(x, t) for x, t in zip((a, b, c), dtypes))
        form = _form(equation)
        if form is None:  # half operands into a float32 accumulator: converted first, as linalg's body does
            r = torch.einsum(equation, a.to(c.dtype), b.to(c.dtype)) if a.dtype != c.dtype else torch.einsum(equation, a, b)
        else:
            pa, pb, np_, ni, nk, nj = form
            a = _grouped(a, pa, np_, ni)
            b = _rhs(a, _grouped(b, pb, b.dim() - nk - nj, nk))
            if a.dtype != c.dtype:  # half operands, float32 accumulator
                r = _mixed_matmul(a, b, c.dtype).view(c.shape)
                c.copy_(r) if init else c.add_(r)
                return
            if init and c.is_contiguous():
                torch.matmul(a, b, out=c.view(*c.shape[:np_], a.shape[-2], b.shape[-1]))
                return
            r = torch.matmul(a, b).view(c.shape)
        c.copy_(r) if init else c.add_(r)

    @staticmethod
    def library_attention(causal: bool, scale: float, dtypes: tuple, roots: tuple, result: bool,
                          *args: Any) -> torch.Tensor | None:
        """sym-gpu-attention's library branch (long sequences): out = PyTorch's scaled_dot_product_attention
        of q, k, v [, mask] (flash attention for half types without a mask, the memory-efficient kernel
        otherwise; eager's own choice), args the operands (tensors or descriptors, `dtypes` their
        element types) and out last. q / k / v are [batch dims..., L, E]: one batch dim gets a unit dim
        in front, more than two are flattened into one (no mask then), as PyTorch's fused kernels
        take 4-d operands. A mask has the scores' rank with dims of size 1 where it broadcasts. A
        descriptor whose root tensor the host program knows (`roots`, None elsewhere) becomes a
        strided view of it, others a tensor over their memory (`wrap`).
        With `result`, the last operand is the buffer `out` views (itself, or transposed): when
        PyTorch's result is laid out as `out` (flash attention's [B, L, H, E] under a [B, H, L, E]
        view, as the host program's transposed output), it is returned as that buffer instead of
        copied (one kernel less); else it is copied into `out` and None is returned."""
        n_in = len(args) - 1 - bool(result)  # q, k, v [, mask]
        q, k, v, mask = (_as_tensor(args[i], dtypes[i], roots[i]) if i < n_in else None for i in range(4))
        nb = q.dim() - 2
        if nb != 2:
            q, k, v = (x.reshape(-1, *x.shape[-3:]) if nb > 2 else x.unsqueeze(0) for x in (q, k, v))
            if mask is not None:
                mask = mask.reshape(-1, *mask.shape[-3:]) if nb > 2 else mask.unsqueeze(0)
        if mask is not None and mask.dtype != torch.bool and mask.dtype != q.dtype:
            mask = mask.to(q.dtype)
        r = torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=causal, scale=scale)
        out = args[n_in]
        if result:  # out's layout from its descriptor or tensor: no tensor is made unless it is copied
            o_at, o_shape, o_stride = _layout(out, dtypes[n_in])
            b_at, b_shape, b_stride = _layout(args[-1], dtypes[-1])
            if nb != 2:
                r = r.view(o_shape)
            if o_at == b_at and all(a == b for a, b, n in zip(r.stride(), o_stride, o_shape) if n > 1):
                return r.as_strided(b_shape, b_stride, r.storage_offset())
        out = _as_tensor(out, dtypes[n_in], roots[n_in])
        out.copy_(r if nb == 2 else r.view(out.shape))
        return None

    @staticmethod
    def library_sdpa(kind: str, causal: bool, scale: float, dtypes: tuple, roots: tuple, *args: Any,
                     heads: int | None = None) -> tuple:
        """Training attention (sym-torch-attention's `sdpa_<kind>` calls) by PyTorch's memory-efficient
        kernels (attention.eager_attention_forward / _backward), its operands tensors or descriptors
        (strided views read in place, `dtypes` their element types):
          forward:          (out [B, L, H, Ev], lse [B, H, L] float32) of q, k, v [B, L|S, H, E];
          forward_packed:   the same of the heads of the projection [B, L, 3 * H * E] (`heads_of`);
          backward:         (dq, dk, dv) from dout, q, k, v, out, lse;
          backward_packed:  (dqkv,), their concatenation, which the kernel writes as one buffer.
        The results are contiguous: the buffers of the host program's identity-layout results."""
        from mlir_sym import attention

        ts = [_as_tensor(a, d, r) for a, d, r in zip(args, dtypes, roots)]
        if kind == "forward_packed":
            ts, kind = list(attention.heads_of(ts[0], heads)), "forward"
        if kind == "forward":
            out = attention.eager_attention_forward(*ts, causal, scale)
        else:
            out = attention.eager_attention_backward(*ts, causal, scale, packed=kind == "backward_packed")
        return tuple(_contiguous(t) for t in out)

    @staticmethod
    def library_conv(init: bool, layout: str, stride: tuple, padding: tuple, dilation: tuple, has_bias: bool,
                     result: bool, x: torch.Tensor, w: torch.Tensor, *rest) -> torch.Tensor | None:
        """sym-gpu-library-convolutions' call: out = (init) or += torch.convolution(x, w[, bias]) with
        these strides, padding and dilations (cuDNN, as eager). `grouped`: x [N, G, C/G, ...] (or
        [N, C, ...]), w [G, F/G, C/G, k...], out [N, G, F/G, ...] (linalg's grouped layout, views of
        [N, C, ...] buffers); `depthwise`: w [C, k...], one filter a channel. With `result`, the last
        operand is the contiguous buffer `out` is (or reshapes): PyTorch's result is returned to be
        that buffer when it is laid out as the buffer (no copy), else it is copied and None returned.
        The host program passes a buffer that only this call uses as its (shape, dtype) instead of
        allocating it: it is allocated only when PyTorch's result cannot be it, and returned."""
        if result:
            root, rest = rest[-1], rest[:-1]
        bias, out = (rest[0], rest[1]) if has_bias else (None, rest[0])
        groups = 1
        if layout == "grouped":  # x may be the [N, C, ...] source its padding was folded from
            groups = w.shape[0]
            x = x.flatten(1, 2) if x.dim() == w.dim() else x
            w = w.flatten(0, 1)
        elif layout == "depthwise":
            groups = x.shape[1]
            w = w.unsqueeze(1)
        if bias is not None and bias.dtype != x.dtype:  # a float32 bias of half inputs (exact: it was one)
            bias = bias.to(x.dtype)
        r = torch.convolution(x, w, bias, list(stride), list(padding), list(dilation), False, [0] * len(stride), groups)
        lazy = result and isinstance(root, tuple)
        shape, dtype = root if lazy else (root.shape, root.dtype) if result else (None, None)
        if result and init and r.is_contiguous() and r.dtype == dtype and r.numel() == math.prod(shape):
            return r.view(shape)
        if lazy:  # `out` is the buffer itself (the host program never views a lazy one)
            root = out = torch.empty(shape, dtype=dtype, device=r.device)
        o = out.view(out.shape[0], -1, *out.shape[3:]) if layout == "grouped" else out  # writes the buffer itself
        if init:
            o.copy_(r)
        else:
            o.add_(r)
        return root if lazy else None

    @staticmethod
    def library_sort(descending: bool, dim: int, keys: torch.Tensor, *others: torch.Tensor) -> None:
        """tm_tensor.sort in place: a stable sort of `keys` along `dim`; `others` move with them."""
        values, perm = torch.sort(keys, dim=dim, descending=descending, stable=True)
        for o in others:
            o.copy_(torch.gather(o, dim, perm))
        keys.copy_(values)

    @staticmethod
    def library_scan(combine: str, inclusive: bool, dim: int, src: torch.Tensor, out: torch.Tensor,
                     acc: torch.Tensor | None) -> None:
        """tm_tensor.scan: out = cumsum/cumprod/cummax/cummin of `src` along `dim` (exclusive: starting
        from `acc`'s value, out[0] = acc, out[i] = acc op src[0] op ... op src[i-1]); `acc` gets out's
        last slice (None: an inclusive scan whose accumulator nothing reads, see codegen/host.py).
        max / min propagate NaN (arith.maximumf / minimumf), as torch.cummax's values do."""
        n = src.shape[dim]
        if n == 0:
            return
        scan, join = _SCANS[combine]
        if inclusive:
            if combine in ("add", "mul"):
                scan(src, dim, dtype=out.dtype, out=out)
            else:
                out.copy_(scan(src, dim).values)
        else:
            start = acc.unsqueeze(dim)
            out.narrow(dim, 0, 1).copy_(start)
            if n > 1:
                part = src.narrow(dim, 0, n - 1)
                part = scan(part, dim, dtype=out.dtype) if combine in ("add", "mul") else scan(part, dim).values
                out.narrow(dim, 1, n - 1).copy_(join(start, part))
        if acc is not None:
            acc.copy_(out.select(dim, n - 1))

    @staticmethod
    def library_scatter(add: bool, dim_map: tuple, updates: torch.Tensor, indices: torch.Tensor,
                        original: torch.Tensor) -> None:
        """tm_tensor.scatter in place: for every update element (n, j1..jk), original[p] = u (or
        original[p] + u), where p's last k dims are j1..jk and dimension dim_map[i] is offset by
        indices[n, i]. One index_put_ with an index tensor per dimension of `original`."""
        rank, k = original.dim(), updates.dim() - 1
        if updates.numel() == 0:
            return
        offset = rank - k
        pos: list = [None] * rank
        for d in range(offset, rank):  # the update's own slice dims
            axis = d - offset + 1
            shape = [1] * updates.dim()
            shape[axis] = updates.shape[axis]
            pos[d] = torch.arange(updates.shape[axis], device=updates.device).view(shape)
        lead = [updates.shape[0]] + [1] * k
        for i, d in enumerate(dim_map):
            idx = indices[:, i].long().view(lead)
            pos[d] = idx if pos[d] is None else pos[d] + idx
        if any(p is None for p in pos):
            raise KernelLaunchError(f"scatter: dimension {pos.index(None)} of the original is not indexed")
        index = tuple(torch.broadcast_to(p, updates.shape) for p in pos)
        original.index_put_(index, updates, accumulate=add)

    # launches
    def launch(self, k: Kernel, gx: int, gy: int, gz: int, bx: int, by: int, bz: int, shm: int,
               args: tuple) -> None:
        if gx <= 0 or gy <= 0 or gz <= 0:
            return  # an empty iteration space
        try:
            k.struct.pack_into(k.buf, 0, *args)
        except struct.error as e:
            raise KernelLaunchError(f"kernel {k.name}: cannot pack its {len(args)} parameters: {e}") from None
        rc = self._launch(k.handle, gx, gy, gz, bx, by, bz, shm, _VP(self._stream(self.index)), k.argv_ptr, None)
        if rc != 0:
            raise KernelLaunchError(f"launch of kernel {k.name} with grid ({gx}, {gy}, {gz}), block ({bx}, {by}, {bz}), "
                                    f"{shm} B shared memory failed: {error_text(rc)}")
        k.launches += 1
        if self.sync:
            try:
                torch.cuda.synchronize(self.device)
            except RuntimeError as e:
                raise KernelLaunchError(f"kernel {k.name} (grid ({gx}, {gy}, {gz}), block ({bx}, {by}, {bz})) "
                                        f"failed: {e}") from None


_MATMUL_FORMS: dict[str, tuple | None] = {}


def _descriptors(xs: tuple, dtypes: tuple) -> tuple[tuple, tuple]:
    """The memref descriptors of tensors or descriptors `xs` (element types `dtypes`), and the
    addresses of their first elements."""
    descs = tuple(x if type(x) is tuple else Runtime.desc(x) for x in xs)
    return descs, tuple(d[1] + d[2] * _ITEM[t] for d, t in zip(descs, dtypes))


def _as_vector(d: tuple) -> tuple | None:
    """A descriptor of N elements with unit stride (dims of size 1 aside) as a rank-1 one, else None."""
    r = (len(d) - 3) // 2
    sizes, strides = d[3:3 + r], d[3 + r:]
    n = 1
    for size, stride in zip(sizes, strides):
        if size != 1:
            if n != 1 or stride != 1:
                return None
            n = size
    return (*d[:3], n, 1)


def _form(equation: str) -> tuple | None:
    form = _MATMUL_FORMS.get(equation, 0)
    if form == 0:
        form = _MATMUL_FORMS[equation] = matmul_form(equation)
    return form


def matmul_form(equation: str) -> tuple | None:
    """(a's permutation or None, b's permutation or None, |P|, |I|, |K|, |J|) when
    `einsum(equation, a, b)` is a (batched) matmul of permuted and reshaped operands, else None.
    The letters group as P (batch: in a, b and the output), I (a and output), J (b and output) and
    K (contracted: a and b). The output must be `P I J`; `a` is permuted (a view) to `P I K` and `b`
    to `P K J`, or to `K J` when it has no P (a weight that matmul broadcasts); each group is then
    flattened into one dim (a view where the strides allow), and `matmul(a'[P, I, K], b'[P, K, J])`
    is viewed as the output. cuBLAS reads a transposed last pair of dims without a copy.
        'abd,dc->abc' -> (None, None, 0, 2, 1, 1)        a linear layer ([a*b, d] @ [d, c])
        'abce,abde->abcd' -> (None, (0, 1, 3, 2), 2, 1, 1, 1)   q @ k^T
        'abe,cde->abcd' -> (None, (2, 0, 1), 0, 2, 1, 2)   a projection into heads"""
    lhs, out = equation.split("->")
    ea, eb = lhs.split(",")
    if any(len(set(e)) != len(e) for e in (ea, eb, out)) or set(out) - set(ea) - set(eb) \
            or (set(ea) ^ set(eb)) - set(out):
        return None
    p = "".join(x for x in out if x in ea and x in eb)
    i = "".join(x for x in out if x in ea and x not in eb)
    j = "".join(x for x in out if x in eb and x not in ea)
    k = "".join(x for x in ea if x not in out)
    if not (i and j and k) or out != p + i + j:
        return None
    want_a = p + i + k
    want_b = (p if set(p) <= set(eb) and len(eb) == len(p) + len(k) + len(j) else "") + k + j
    if sorted(want_b) != sorted(eb):
        return None
    pa = tuple(ea.index(x) for x in want_a)
    pb = tuple(eb.index(x) for x in want_b)
    ident = lambda q: q == tuple(range(len(q)))  # noqa: E731
    return (None if ident(pa) else pa), (None if ident(pb) else pb), len(p), len(i), len(k), len(j)


_OUT_DTYPE = [True]  # whether torch.mm / bmm take out_dtype here (CUDA builds of torch >= 2.8)


def mixed_product(op, a: torch.Tensor, b: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """`op(a, b)` (torch.mm / torch.bmm) of half operands as a `dtype` (float32) tensor: cuBLAS
    accumulates in float32 and writes float32 (`out_dtype`), which is what linalg's mixed matmul
    computes. Without out_dtype, the operands are converted first (the same product, slower)."""
    if _OUT_DTYPE[0]:
        try:
            return op(a, b, out_dtype=dtype)
        except (RuntimeError, TypeError, NotImplementedError) as e:
            if "out of memory" in str(e):
                raise
            _OUT_DTYPE[0] = False
    return op(a.to(dtype), b.to(dtype))


def _mixed_matmul(a: torch.Tensor, b: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """torch.matmul(a, b) for matmul_form's operands ([P.., I, K] and [P.., K, J] or [K, J]) through
    mixed_product: flattened to one mm or bmm."""
    if b.dim() == 2:
        return mixed_product(torch.mm, a.reshape(-1, a.shape[-1]), b, dtype).view(*a.shape[:-1], b.shape[-1])
    if a.dim() == 2:
        return mixed_product(torch.mm, a, b, dtype)
    lead = a.shape[:-2]
    r = mixed_product(torch.bmm, a.reshape(-1, *a.shape[-2:]), b.expand(*lead, *b.shape[-2:]).reshape(-1, *b.shape[-2:]), dtype)
    return r.view(*lead, a.shape[-2], b.shape[-1])


SMALL_M = cublas.SMALL_N  # rows below which a transposed right operand is copied first (see _rhs)


def _rhs(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """The right operand of `a @ b` as cuBLAS reads it fastest. A transposed one (nn.Linear's weight
    as stored, read through a view) makes a "tn" GEMM, for which cuBLAS picks a kernel about 8 times
    slower than the "nn" one when `a` has few rows (BERT at length 8 on an H200: 29 us a GEMM of
    8 x 256 x 256, `benchmarks/profile_hf_calls.py`); there a contiguous copy (one small kernel,
    inside a CUDA graph too) comes first. From SMALL_M rows on the view is read as it is. (The cuBLAS
    path, runtime/cublas.py, leaves only float32 ones to this: for half operands cublasGemmEx's own
    choice is fast, `cublas.slow_transposed`.)"""
    if a.shape[-2] < SMALL_M and b.dim() >= 2 and b.stride(-2) == 1 and b.stride(-1) != 1 and b.shape[-1] > 1:
        return b.contiguous()
    return b


def _grouped(t: torch.Tensor, perm: tuple | None, lead: int, n1: int) -> torch.Tensor:
    """`t` permuted by `perm`, as [lead dims..., prod(next n1 dims), prod(the rest)]."""
    if perm is not None:
        t = t.permute(perm)
    if t.dim() != lead + 2:
        sh = t.shape
        first = 1
        for d in sh[lead:lead + n1]:
            first *= d
        rest = 1
        for d in sh[lead + n1:]:
            rest *= d
        t = t.reshape(*sh[:lead], first, rest)
    return t


def device_constants(constants: dict[str, dict], device: torch.device) -> dict[str, torch.Tensor]:
    """The host program's constant buffers (memref.global values), put on the device once.

    Made outside any active FakeTensorMode: artifacts may be compiled while one is active (the
    count/fill phases of data-dependent graphs are), and a constant made there would be a FakeTensor
    that the first call copies from (the H100 run failed in `aten.copy_` of a real tensor from a fake one)."""
    from torch._subclasses.fake_tensor import unset_fake_temporarily

    out = {}
    with unset_fake_temporarily():
        for name, c in constants.items():
            t = torch.tensor(c["values"], dtype=getattr(torch, c["dtype"])).reshape(c["shape"])
            out[name] = t.to(device)
    return out


PROFILES: list[HostProfile] = []  # with MLIR_SYM_HOST_PROFILE=1: one per host program loaded


_HOST_SERIAL = itertools.count()


class HostCall:
    """The artifact's compute callable: the generated host function bound to its runtime and kernels.
    Called with the compute function's arguments (inputs, then outputs); returns the i32 status."""

    def __init__(self, source: str, fname: str, module: CudaModule, runtime: Runtime,
                 cpu_inputs: Sequence[int] = (), constants: dict[str, dict] | None = None) -> None:
        ns: dict[str, Any] = {"rt": runtime, "math": math}
        for name, t in device_constants(constants or {}, runtime.device).items():
            ns["C_" + "".join(ch if ch.isalnum() else "_" for ch in name)] = t
        for name, k in module.kernels.items():
            ns["K_" + "".join(c if c.isalnum() else "_" for c in name)] = k
        self.source = source
        self.profile: HostProfile | None = None
        if os.environ.get("MLIR_SYM_HOST_PROFILE", "0") == "1":  # per-statement host time (host_profile.py)
            source, self.profile = instrument(source, f"{fname}#{len(PROFILES)}")
            ns.update(profile_namespace(self.profile))
            PROFILES.append(self.profile)
        filename = f"<mlir_sym host {fname} #{next(_HOST_SERIAL)}>"  # one per program: tracebacks and
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)  # profiles show its lines
        exec(compile(source, filename, "exec"), ns)  # noqa: S102 - our own codegen
        self.fn = ns[fname]
        self.module = module
        self.runtime = runtime
        self.cpu_inputs = list(cpu_inputs)  # CPU scalar tensors among the inputs: copied to the device

    def __call__(self, values: Sequence[Any]) -> int:
        if getattr(_THREAD, "device", None) != self.module.device:  # a thread of its own: autograd
            ensure_context(self.module.device)  # runs backward graphs on its device thread, where no
            _THREAD.device = self.module.device  # driver context may be current yet
        if self.cpu_inputs:
            values = list(values)
            for i in self.cpu_inputs:
                values[i] = self.runtime.device_scalar(values[i])
        return self.fn(*values)
