// RUN: symopt %s --split-input-file --verify-diagnostics --sym-specialize='values=s0:1'

// expected-error @+1 {{cannot specialize 's0' to 1: outside its range [2, oo]}}
"sym.symbol"() {sym_name = "s0", lo = 2 : i64} : () -> ()
func.func @guards(%a: index) attributes {sym.guards} {
  %s0 = "sym.value"() {symbol = "s0"} : () -> index
  "sym.bind"(%a, %s0) : (index, index) -> ()
  return
}
