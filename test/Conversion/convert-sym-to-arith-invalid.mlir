// RUN: symopt %s --split-input-file --verify-diagnostics --convert-sym-to-arith

// A symbol no input is bound to cannot be computed at run time.
"sym.symbol"() {sym_name = "s0", lo = 2 : i64} : () -> ()
"sym.symbol"() {sym_name = "s1", lo = 2 : i64} : () -> ()
func.func @guards(%a: index {sym.source = "x.size(0)"}) attributes {sym.guards} {
  %s0 = "sym.value"() {symbol = "s0"} : () -> index
  "sym.bind"(%a, %s0) : (index, index) -> ()
  // expected-error @+1 {{symbol 's1' is not bound to any input size of the guard function}}
  %s1 = "sym.value"() {symbol = "s1"} : () -> index
  %ge = "sym.cmp"(%s1, %s0) {predicate = "ge"} : (index, index) -> i1
  "sym.guard"(%ge) {origin = "test"} : (i1) -> ()
  return
}

// -----

// sym.pow lowers only with a constant exponent.
"sym.symbol"() {sym_name = "s0", lo = 2 : i64} : () -> ()
func.func @guards(%a: index {sym.source = "x.size(0)"}) attributes {sym.guards} {
  %s0 = "sym.value"() {symbol = "s0"} : () -> index
  "sym.bind"(%a, %s0) : (index, index) -> ()
  // expected-error @+1 {{sym.pow needs a constant exponent to be lowered}}
  %p = "sym.pow"(%s0, %s0) : (index, index) -> index
  %ge = "sym.cmp"(%p, %s0) {predicate = "ge"} : (index, index) -> i1
  "sym.guard"(%ge) {origin = "test"} : (i1) -> ()
  return
}
