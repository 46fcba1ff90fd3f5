"""mlir_sym passes, one per file; importing this package registers them all (see registry.py)."""
from mlir_sym.passes import registry  # noqa: F401
from mlir_sym.passes import (  # noqa: F401
    assert_elim,
    assert_to_status,
    canonicalize,
    defer_nested_asserts,
    gpu_map_parallel,
    guard_cse,
    guard_schedule,
    mask_to_where,
    memref_copy_to_linalg,
    nested_assert_to_status,
    readonly_inputs,
    results_to_out_params,
    specialize,
    strip_facts,
    sym_to_arith,
    unshare_inits,
)
