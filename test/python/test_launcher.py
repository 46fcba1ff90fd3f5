"""runtime/launcher.py on the CPU: the JIT-compiled loop calls the launch function once per record,
in order, with each record's function, sizes, stream and parameter array, and stops at the first
launch that fails (its index out). The launch function here is a Python callback in cuLaunchKernel's
place; the GPU tests run the real one."""
from __future__ import annotations

import ctypes

import pytest

pytest.importorskip("llvmlite")

from mlir_sym.runtime.launcher import RECORD, Batch, launch_all  # noqa: E402

LAUNCH = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_uint, ctypes.c_uint, ctypes.c_uint, ctypes.c_uint,
                          ctypes.c_uint, ctypes.c_uint, ctypes.c_uint, ctypes.c_void_p, ctypes.c_void_p,
                          ctypes.c_void_p)


def _run(records: list[tuple], fail_at: int = -1):
    calls = []

    def fake(f, gx, gy, gz, bx, by, bz, shm, stream, params, extra):
        first = ctypes.cast(params, ctypes.POINTER(ctypes.c_void_p))[0]
        calls.append((f, gx, gy, gz, bx, by, bz, shm, stream, ctypes.c_uint64.from_address(first).value, extra))
        return 700 if len(calls) - 1 == fail_at else 0

    cb = LAUNCH(fake)
    b = Batch()
    for n, (f, sizes, value) in enumerate(records):
        b.params[b.slot] = value
        RECORD.pack_into(b.records, b.n * RECORD.size, f, *sizes, b.argv_base + b.slot * 8)
        b.n += 1
        b.slot += 3  # a kernel of three parameter slots
    rc = launch_all()(ctypes.cast(cb, ctypes.c_void_p).value, b.n, b.records_ptr, 0x1234, b.failed_ref)
    return rc, calls, b


def test_records_are_launched_in_order():
    recs = [(0x1000 + i, (i + 1, 2, 3, 128, 1, 1, 16 * i), 40 + i) for i in range(5)]
    rc, calls, b = _run(recs)
    assert rc == 0 and len(calls) == 5
    for (f, sizes, value), call in zip(recs, calls):
        assert call == (f, *sizes, 0x1234, value, None)
    assert b.record(2) == ((3, 2, 3), (128, 1, 1), 32)


def test_a_failed_launch_stops_the_loop_and_names_its_index():
    recs = [(0x2000 + i, (1, 1, 1, 32, 1, 1, 0), i) for i in range(6)]
    rc, calls, b = _run(recs, fail_at=3)
    assert rc == 700 and len(calls) == 4 and b.failed.value == 3


def test_an_empty_batch_launches_nothing():
    rc, calls, _ = _run([])
    assert rc == 0 and calls == []
