"""Per-statement host time of generated host programs (`MLIR_SYM_HOST_PROFILE=1`).

A GPU call's host time is the host program's statements: allocations, views, copies, launches,
library calls. `instrument(source)` rewrites a generated host function so that every statement adds
its wall time (time.perf_counter_ns, host side only: launches are asynchronous) to a counter of its
own; `HostProfile.report()` lists the statements by total time, with their calls. Used by
runtime/cuda.py's HostCall when the switch is on, and by benchmarks/profile_datadep.py.
"""
from __future__ import annotations

import re
import time
from dataclasses import dataclass, field

_CONTROL = re.compile(r"^(if |elif |else:|while |def |_b = |continue$|raise )")


@dataclass
class HostProfile:
    """Counters of one instrumented host function: per statement line, nanoseconds and calls."""

    name: str
    lines: list[str]
    ns: list[int] = field(default_factory=list)
    hits: list[int] = field(default_factory=list)
    calls: int = 0

    def __post_init__(self) -> None:
        self.ns = [0] * len(self.lines)
        self.hits = [0] * len(self.lines)

    def reset(self) -> None:
        """Forget what was counted (the warm-up calls)."""
        self.ns = [0] * len(self.lines)
        self.hits = [0] * len(self.lines)
        self.calls = 0

    def report(self, top: int = 30) -> str:
        total = sum(self.ns)
        calls = max(self.calls, 1)
        rows = sorted((i for i in range(len(self.lines)) if self.hits[i]), key=lambda i: -self.ns[i])[:top]
        out = [f"host program {self.name}: {calls} calls, {total / calls / 1e3:.1f} us of statements a call"]
        out.append(f"{'us/call':>8} {'share':>6} {'runs':>5}  statement")
        for i in rows:
            out.append(f"{self.ns[i] / calls / 1e3:8.2f} {100 * self.ns[i] / max(total, 1):5.1f}% "
                       f"{self.hits[i] // calls:5d}  {self.lines[i].strip()[:110]}")
        return "\n".join(out)


def instrument(source: str, name: str) -> tuple[str, HostProfile]:
    """`source` (one generated `def`) with a timer after every statement; the counters it updates.
    The instrumented function reads `_HP` (the HostProfile) and `_pc` (the clock) from its globals;
    its timer is `_hpt` (no generated name starts so)."""
    src_lines = source.rstrip("\n").split("\n")
    prof = HostProfile(name, src_lines)
    out: list[str] = []
    for i, line in enumerate(src_lines):
        body = line.lstrip()
        ind = line[: len(line) - len(body)]
        if body.startswith("def "):
            out += [line, f"{ind}    _HP.calls += 1", f"{ind}    _hpt = _pc()"]
        elif body.startswith("return"):
            value = body[len("return"):].strip() or "None"
            out += [f"{ind}_r = {value}", f"{ind}_HP.ns[{i}] += _pc() - _hpt; _HP.hits[{i}] += 1", f"{ind}return _r"]
        elif _CONTROL.match(body) or not body:
            out.append(line)
        else:
            out += [line, f"{ind}_n = _pc(); _HP.ns[{i}] += _n - _hpt; _HP.hits[{i}] += 1; _hpt = _n"]
    return "\n".join(out) + "\n", prof


def namespace(prof: HostProfile) -> dict:
    """The globals an instrumented function needs besides the host program's own."""
    return {"_HP": prof, "_pc": time.perf_counter_ns}
