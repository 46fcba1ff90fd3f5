"""Code generation outside MLIR proper (PTX through llvmlite)."""
