// sym-guard-schedule: binds first, then guards cheapest first (single-symbol ranges, linear
// equalities, other linear relations, nonlinear), by load order inside a class, each condition computed
// just before its check; never across an assert.
// RUN: symopt %s --split-input-file --sym-guard-schedule | filecheck %s
// Idempotent:
// RUN: symopt %s --split-input-file --sym-guard-schedule --sym-guard-schedule | filecheck %s

"sym.symbol"() {sym_name = "s0", lo = 2 : i64} : () -> ()
"sym.symbol"() {sym_name = "s1", lo = 2 : i64} : () -> ()
"sym.symbol"() {sym_name = "s2", lo = 2 : i64} : () -> ()

// CHECK-LABEL: func.func @cheapest_first
// CHECK-NEXT:    %[[S0:.*]] = "sym.value"() {symbol = "s0"}
// CHECK-NEXT:    "sym.bind"(%arg0, %[[S0]])
// CHECK-NEXT:    %[[S1:.*]] = "sym.value"() {symbol = "s1"}
// CHECK-NEXT:    "sym.bind"(%arg1, %[[S1]])
// CHECK-NEXT:    %[[S2:.*]] = "sym.value"() {symbol = "s2"}
// CHECK-NEXT:    "sym.bind"(%arg2, %[[S2]])
// CHECK-NEXT:    %[[C2:.*]] = "sym.constant"() {value = 2 : i64}
// CHECK-NEXT:    %[[R0:.*]] = "sym.cmp"(%[[S0]], %[[C2]]) {predicate = "ge"}
// CHECK-NEXT:    "sym.guard"(%[[R0]]) {origin = "s0 >= 2"}
// CHECK-NEXT:    %[[C8:.*]] = "sym.constant"() {value = 8 : i64}
// CHECK-NEXT:    %[[R1:.*]] = "sym.cmp"(%[[S1]], %[[C8]]) {predicate = "ge"}
// CHECK-NEXT:    "sym.guard"(%[[R1]]) {origin = "s1 >= 8"}
// CHECK-NEXT:    %[[C64:.*]] = "sym.constant"() {value = 64 : i64}
// CHECK-NEXT:    %[[R2:.*]] = "sym.cmp"(%[[S2]], %[[C64]]) {predicate = "le"}
// CHECK-NEXT:    "sym.guard"(%[[R2]]) {origin = "s2 <= 64"}
// CHECK-NEXT:    %[[E:.*]] = "sym.cmp"(%[[S0]], %[[S2]]) {predicate = "eq"}
// CHECK-NEXT:    "sym.guard"(%[[E]]) {origin = "Eq(s0, s2)"}
// CHECK-NEXT:    %[[L:.*]] = "sym.cmp"(%[[S1]], %[[S2]]) {predicate = "le"}
// CHECK-NEXT:    "sym.guard"(%[[L]]) {origin = "s1 <= s2"}
// CHECK-NEXT:    %[[P:.*]] = "sym.mul"(%[[S0]], %[[S1]])
// CHECK-NEXT:    %[[C4096:.*]] = "sym.constant"() {value = 4096 : i64}
// CHECK-NEXT:    %[[N:.*]] = "sym.cmp"(%[[P]], %[[C4096]]) {predicate = "le"}
// CHECK-NEXT:    "sym.guard"(%[[N]]) {origin = "s0*s1 <= 4096"}
// CHECK-NEXT:    return
func.func @cheapest_first(%a: index, %b: index, %c: index) attributes {sym.guards} {
  %s0 = "sym.value"() {symbol = "s0"} : () -> index
  %s1 = "sym.value"() {symbol = "s1"} : () -> index
  %s2 = "sym.value"() {symbol = "s2"} : () -> index
  %c2 = "sym.constant"() {value = 2 : i64} : () -> index
  %c8 = "sym.constant"() {value = 8 : i64} : () -> index
  %c64 = "sym.constant"() {value = 64 : i64} : () -> index
  %c4096 = "sym.constant"() {value = 4096 : i64} : () -> index
  %p = "sym.mul"(%s0, %s1) : (index, index) -> index
  %n = "sym.cmp"(%p, %c4096) {predicate = "le"} : (index, index) -> i1
  %e = "sym.cmp"(%s0, %s2) {predicate = "eq"} : (index, index) -> i1
  %l = "sym.cmp"(%s1, %s2) {predicate = "le"} : (index, index) -> i1
  %r2 = "sym.cmp"(%s2, %c64) {predicate = "le"} : (index, index) -> i1
  %r1 = "sym.cmp"(%s1, %c8) {predicate = "ge"} : (index, index) -> i1
  %r0 = "sym.cmp"(%s0, %c2) {predicate = "ge"} : (index, index) -> i1
  "sym.bind"(%a, %s0) : (index, index) -> ()
  "sym.guard"(%n) {origin = "s0*s1 <= 4096"} : (i1) -> ()
  "sym.guard"(%e) {origin = "Eq(s0, s2)"} : (i1) -> ()
  "sym.bind"(%b, %s1) : (index, index) -> ()
  "sym.guard"(%l) {origin = "s1 <= s2"} : (i1) -> ()
  "sym.guard"(%r2) {origin = "s2 <= 64"} : (i1) -> ()
  "sym.bind"(%c, %s2) : (index, index) -> ()
  "sym.guard"(%r1) {origin = "s1 >= 8"} : (i1) -> ()
  "sym.guard"(%r0) {origin = "s0 >= 2"} : (i1) -> ()
  return
}

// Within one class, a guard comes as soon as the inputs it reads are loaded: s0's before s1's.
// CHECK-LABEL: func.func @by_load_order
// CHECK:         "sym.guard"(%{{.*}}) {origin = "s0 >= 4"}
// CHECK-NEXT:    %[[G:.*]] = "sym.cmp"
// CHECK-NEXT:    "sym.guard"(%[[G]]) {origin = "s1 >= 4"}
// CHECK-NEXT:    return
func.func @by_load_order(%a: index, %b: index) attributes {sym.guards} {
  %s0 = "sym.value"() {symbol = "s0"} : () -> index
  %s1 = "sym.value"() {symbol = "s1"} : () -> index
  "sym.bind"(%a, %s0) : (index, index) -> ()
  "sym.bind"(%b, %s1) : (index, index) -> ()
  %c4 = "sym.constant"() {value = 4 : i64} : () -> index
  %g1 = "sym.cmp"(%s1, %c4) {predicate = "ge"} : (index, index) -> i1
  "sym.guard"(%g1) {origin = "s1 >= 4"} : (i1) -> ()
  %g0 = "sym.cmp"(%s0, %c4) {predicate = "ge"} : (index, index) -> i1
  "sym.guard"(%g0) {origin = "s0 >= 4"} : (i1) -> ()
  return
}

// Guards never cross an assert, asserts keep their order, binds of a later segment stay in it.
// CHECK-LABEL: func.func @no_reorder_across_assert
// CHECK-NEXT:    %[[S0:.*]] = "sym.value"() {symbol = "s0"}
// CHECK-NEXT:    "sym.bind"(%arg0, %[[S0]])
// CHECK-NEXT:    %[[M:.*]] = "sym.mul"(%[[S0]], %[[S0]])
// CHECK-NEXT:    %[[C4:.*]] = "sym.constant"() {value = 4 : i64}
// CHECK-NEXT:    %[[N:.*]] = "sym.cmp"(%[[M]], %[[C4]]) {predicate = "ge"}
// CHECK-NEXT:    "sym.guard"(%[[N]]) {origin = "s0*s0 >= 4"}
// CHECK-NEXT:    "sym.assert"(%arg2) {msg = "user check"}
// CHECK-NEXT:    %[[S1:.*]] = "sym.value"() {symbol = "s1"}
// CHECK-NEXT:    "sym.bind"(%arg1, %[[S1]])
// CHECK-NEXT:    %[[R:.*]] = "sym.cmp"(%[[S0]], %[[C4]]) {predicate = "ge"}
// CHECK-NEXT:    "sym.guard"(%[[R]]) {origin = "s0 >= 4"}
// CHECK-NEXT:    return
func.func @no_reorder_across_assert(%a: index, %b: index, %p: i1) attributes {sym.guards} {
  %s0 = "sym.value"() {symbol = "s0"} : () -> index
  %s1 = "sym.value"() {symbol = "s1"} : () -> index
  "sym.bind"(%a, %s0) : (index, index) -> ()
  %c4 = "sym.constant"() {value = 4 : i64} : () -> index
  %m = "sym.mul"(%s0, %s0) : (index, index) -> index
  %n = "sym.cmp"(%m, %c4) {predicate = "ge"} : (index, index) -> i1
  "sym.guard"(%n) {origin = "s0*s0 >= 4"} : (i1) -> ()
  "sym.assert"(%p) {msg = "user check"} : (i1) -> ()
  %r = "sym.cmp"(%s0, %c4) {predicate = "ge"} : (index, index) -> i1
  "sym.guard"(%r) {origin = "s0 >= 4"} : (i1) -> ()
  "sym.bind"(%b, %s1) : (index, index) -> ()
  return
}

// Already in order: nothing moves.
// CHECK-LABEL: func.func @no_reorder_when_sorted
// CHECK-NEXT:    %[[S0:.*]] = "sym.value"() {symbol = "s0"}
// CHECK-NEXT:    "sym.bind"(%arg0, %[[S0]])
// CHECK-NEXT:    %[[C4:.*]] = "sym.constant"() {value = 4 : i64}
// CHECK-NEXT:    %[[R:.*]] = "sym.cmp"(%[[S0]], %[[C4]]) {predicate = "ge"}
// CHECK-NEXT:    "sym.guard"(%[[R]]) {origin = "s0 >= 4"}
// CHECK-NEXT:    %[[M:.*]] = "sym.mul"(%[[S0]], %[[S0]])
// CHECK-NEXT:    %[[N:.*]] = "sym.cmp"(%[[M]], %[[C4]]) {predicate = "ge"}
// CHECK-NEXT:    "sym.guard"(%[[N]]) {origin = "s0*s0 >= 4"}
// CHECK-NEXT:    return
func.func @no_reorder_when_sorted(%a: index) attributes {sym.guards} {
  %s0 = "sym.value"() {symbol = "s0"} : () -> index
  "sym.bind"(%a, %s0) : (index, index) -> ()
  %c4 = "sym.constant"() {value = 4 : i64} : () -> index
  %r = "sym.cmp"(%s0, %c4) {predicate = "ge"} : (index, index) -> i1
  "sym.guard"(%r) {origin = "s0 >= 4"} : (i1) -> ()
  %m = "sym.mul"(%s0, %s0) : (index, index) -> index
  %n = "sym.cmp"(%m, %c4) {predicate = "ge"} : (index, index) -> i1
  "sym.guard"(%n) {origin = "s0*s0 >= 4"} : (i1) -> ()
  return
}

// Ops other than sym ops: the function is left as it is.
// CHECK-LABEL: func.func @no_reorder_unknown_ops
// CHECK:         "sym.guard"(%{{.*}}) {origin = "s0*s0 >= x"}
// CHECK-NEXT:    arith.constant 4 : index
// CHECK-NEXT:    %[[R:.*]] = "sym.cmp"
// CHECK-NEXT:    "sym.guard"(%[[R]]) {origin = "s0 >= 4"}
// CHECK-NEXT:    return
func.func @no_reorder_unknown_ops(%a: index, %x: index) attributes {sym.guards} {
  %s0 = "sym.value"() {symbol = "s0"} : () -> index
  "sym.bind"(%a, %s0) : (index, index) -> ()
  %m = "sym.mul"(%s0, %s0) : (index, index) -> index
  %n = "sym.cmp"(%m, %x) {predicate = "ge"} : (index, index) -> i1
  "sym.guard"(%n) {origin = "s0*s0 >= x"} : (i1) -> ()
  %c4 = arith.constant 4 : index
  %r = "sym.cmp"(%s0, %c4) {predicate = "ge"} : (index, index) -> i1
  "sym.guard"(%r) {origin = "s0 >= 4"} : (i1) -> ()
  return
}
