"""mlir_sym command-line tools."""
