// RUN: symopt %s --split-input-file --convert-sym-to-arith | filecheck %s

// Each symbol is loaded once from the first input bound to it; a second binding becomes a check.
"sym.symbol"() {sym_name = "s0", lo = 2 : i64} : () -> ()
// CHECK-LABEL: func.func @guards
// CHECK-SAME: -> i32
// CHECK-NOT: "sym.
// CHECK: %[[EQ:.*]] = arith.cmpi eq, %arg1, %arg0 : index
// CHECK: %[[GE:.*]] = arith.cmpi sge, %arg0, %{{.*}} : index
// CHECK: %[[R1:.*]] = arith.select %[[GE]], %c0_i32, %c3_i32 : i32
// CHECK: %[[R0:.*]] = arith.select %[[EQ]], %[[R1]], %c2_i32 : i32
// CHECK: return %[[R0]] : i32
func.func @guards(%a: index {sym.source = "x.size(0)"}, %b: index {sym.source = "y.size(0)"}) attributes {sym.guards} {
  %s0 = "sym.value"() {symbol = "s0"} : () -> index
  "sym.bind"(%a, %s0) : (index, index) -> ()
  "sym.bind"(%b, %s0) : (index, index) -> ()
  %c2 = "sym.constant"() {value = 2 : i64} : () -> index
  %ge = "sym.cmp"(%s0, %c2) {predicate = "ge"} : (index, index) -> i1
  "sym.guard"(%ge) {origin = "range of s0"} : (i1) -> ()
  return
}

// -----

// An assert's id is returned negated; floordiv/mod get Python semantics with a divisor that cannot trap.
"sym.symbol"() {sym_name = "s0", lo = 0 : i64} : () -> ()
"sym.symbol"() {sym_name = "s1", lo = 0 : i64} : () -> ()
// CHECK-LABEL: func.func @guards
// CHECK: arith.floordivsi
// CHECK: arith.constant -3 : i32
func.func @guards(%a: index {sym.source = "n"}, %b: index {sym.source = "m"}) attributes {sym.guards} {
  %s0 = "sym.value"() {symbol = "s0"} : () -> index
  %s1 = "sym.value"() {symbol = "s1"} : () -> index
  "sym.bind"(%a, %s0) : (index, index) -> ()
  "sym.bind"(%b, %s1) : (index, index) -> ()
  %m = "sym.mod"(%s0, %s1) : (index, index) -> index
  %c0 = "sym.constant"() {value = 0 : i64} : () -> index
  %eq = "sym.cmp"(%m, %c0) {predicate = "eq"} : (index, index) -> i1
  "sym.assert"(%eq) {msg = "n must be a multiple of m"} : (i1) -> ()
  return
}

// -----

// Functions without the sym.guards attribute are left alone.
"sym.symbol"() {sym_name = "s0", lo = 2 : i64} : () -> ()
// CHECK-LABEL: func.func @not_a_guard_function
// CHECK: "sym.value"
func.func @not_a_guard_function() -> index {
  %s0 = "sym.value"() {symbol = "s0"} : () -> index
  return %s0 : index
}
