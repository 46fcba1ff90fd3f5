// Not a test: input for malformed.mlir and stdin.mlir (line numbers matter).
"sym.symbol"() {sym_name = "s0", lo = 2 : i64} : () -> ()

func.func @f() -> index {
  %0 = "sym.value"() {symbol = "s0"} : () -> index
  %1 = foo %0
  return %0 : index
}
