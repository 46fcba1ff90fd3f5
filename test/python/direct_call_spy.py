"""Helpers of the generated-call tests (test_fast_call.py here, test/gpu/test_fast_call_gpu.py): the
callables the backend returns to Dynamo, and a count of the calls that take the general path."""
from __future__ import annotations

from mlir_sym import backend


class Returned(list):
    """The callables `backend._direct` returned; `args` the arguments of the last call of one."""

    args: tuple = ()


def spy_on_direct(monkeypatch) -> Returned:
    seen = Returned()
    direct = backend._direct

    def spy(*a):
        c = direct(*a)
        seen.append(c)

        def recording(*args):
            seen.args = args
            return c(*args)

        return recording

    monkeypatch.setattr(backend, "_direct", spy)
    return seen


def count_general(fn) -> list:
    """Wrap the generated call `fn`'s general path: the list gets one entry per call that took it."""
    slow = fn.__globals__["slow"]
    calls: list = []

    def counting(*args):
        calls.append(args)
        return slow(*args)

    fn.__globals__["slow"] = counting
    return calls
