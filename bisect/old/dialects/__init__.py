"""MLIR dialects defined by mlir_sym (see sym.md)."""
