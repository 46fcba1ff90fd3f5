"""mlir_sym passes, one per file; importing this package registers them all (see registry.py)."""
from mlir_sym.passes import registry  # noqa: F401
