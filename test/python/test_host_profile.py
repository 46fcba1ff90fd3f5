"""MLIR_SYM_HOST_PROFILE's instrumentation (codegen/host_profile.py): an instrumented host program
computes what the original does, on every branch, and counts each statement it runs."""
from __future__ import annotations

from mlir_sym.codegen.host_profile import instrument, namespace

SOURCE = """def host(v0, v1):
    _b = 0
    while True:
        if _b == 0:
            v2 = (v0 * 2)
            v3 = (v2 > v1)
            if v3:
                _b = 1
                continue
            else:
                _b = 2
                continue
        elif _b == 1:
            _t = None  # host programs name temporaries `_t` (attention's library branch)
            v4 = (v2 - v1) if _t is None else _t
            return v4
        elif _b == 2:
            return
        else:
            raise RuntimeError('bad block')
"""


def _run(source: str, ns: dict, *args):
    exec(compile(source, "<test>", "exec"), ns)  # noqa: S102
    return ns["host"](*args)


def test_instrumented_program_matches_the_original_and_counts_statements():
    text, prof = instrument(SOURCE, "host")
    assert text != SOURCE
    for args in [(5, 3), (1, 7), (0, 0)]:
        assert _run(text, namespace(prof), *args) == _run(SOURCE, {}, *args)
    assert prof.calls == 3
    lines = SOURCE.split("\n")
    hits = {lines[i].strip(): prof.hits[i] for i in range(len(prof.lines)) if prof.hits[i]}
    assert hits == {"v2 = (v0 * 2)": 3, "v3 = (v2 > v1)": 3, "_t = None  # host programs name temporaries `_t` (attention's library branch)": 1,
                    "v4 = (v2 - v1) if _t is None else _t": 1, "return v4": 1, "return": 2}
    report = prof.report()
    assert "3 calls" in report and "v4 = (v2 - v1) if _t is None else _t" in report
