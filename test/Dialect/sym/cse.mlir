// Upstream CSE and canonicalization on sym ops: expressions are Pure (duplicates merge, unused ones
// go), facts and checks have effects (never erased, never merged).
// RUN: symopt %s --split-input-file --cse | filecheck %s --check-prefixes=CHECK,CSE,CSE1
// RUN: symopt %s --split-input-file --canonicalize | filecheck %s --check-prefixes=CHECK,CANON,DCE
// RUN: symopt %s --split-input-file --canonicalize='cse-between-iterations=true' \
// RUN:   | filecheck %s --check-prefixes=CHECK,CSE,DCE
// RUN: symopt %s --split-input-file --cse --canonicalize | filecheck %s --check-prefixes=CHECK,CSE,DCE

"sym.symbol"() {sym_name = "s0", lo = 2 : i64} : () -> ()
"sym.symbol"() {sym_name = "s1", lo = 2 : i64} : () -> ()

// CHECK-LABEL: func.func @merge_pure
// CHECK-NEXT:    %[[S0:.*]] = "sym.value"() {symbol = "s0"} : () -> index
// CSE-NEXT:      %[[C:.*]] = "sym.constant"() {value = 2 : i64} : () -> index
// CSE-NEXT:      %[[M:.*]] = "sym.mul"(%[[S0]], %[[C]]) : (index, index) -> index
// CSE-NEXT:      %[[GE:.*]] = "sym.cmp"(%[[M]], %[[S0]]) {predicate = "ge"} : (index, index) -> i1
// CSE-NEXT:      %[[AND:.*]] = "sym.and"(%[[GE]], %[[GE]]) : (i1, i1) -> i1
// CSE-NEXT:      return %[[AND]] : i1
// Without CSE the duplicates stay (canonicalize only drops the dead ones).
// CANON-COUNT-2: "sym.mul"
// CANON-NOT:     "sym.mul"
// CANON:         return
func.func @merge_pure() -> i1 {
  %a = "sym.value"() {symbol = "s0"} : () -> index
  %b = "sym.value"() {symbol = "s0"} : () -> index
  %c1 = "sym.constant"() {value = 2 : i64} : () -> index
  %c2 = "sym.constant"() {value = 2 : i64} : () -> index
  %m1 = "sym.mul"(%a, %c1) : (index, index) -> index
  %m2 = "sym.mul"(%b, %c2) : (index, index) -> index
  %g1 = "sym.cmp"(%m1, %a) {predicate = "ge"} : (index, index) -> i1
  %g2 = "sym.cmp"(%m2, %b) {predicate = "ge"} : (index, index) -> i1
  %r = "sym.and"(%g1, %g2) : (i1, i1) -> i1
  return %r : i1
}

// Ops that differ in an attribute or an operand are not merged.
// CHECK-LABEL: func.func @keep_different
// CHECK-NEXT:    %[[S0:.*]] = "sym.value"() {symbol = "s0"} : () -> index
// CHECK-NEXT:    %[[S1:.*]] = "sym.value"() {symbol = "s1"} : () -> index
// CHECK-NEXT:    %[[LT:.*]] = "sym.cmp"(%[[S0]], %[[S1]]) {predicate = "lt"} : (index, index) -> i1
// CHECK-NEXT:    %[[LE:.*]] = "sym.cmp"(%[[S0]], %[[S1]]) {predicate = "le"} : (index, index) -> i1
// CHECK-NEXT:    %[[GT:.*]] = "sym.cmp"(%[[S1]], %[[S0]]) {predicate = "lt"} : (index, index) -> i1
// CHECK-NEXT:    return %[[LT]], %[[LE]], %[[GT]] : i1, i1, i1
func.func @keep_different() -> (i1, i1, i1) {
  %a = "sym.value"() {symbol = "s0"} : () -> index
  %b = "sym.value"() {symbol = "s1"} : () -> index
  %lt = "sym.cmp"(%a, %b) {predicate = "lt"} : (index, index) -> i1
  %le = "sym.cmp"(%a, %b) {predicate = "le"} : (index, index) -> i1
  %gt = "sym.cmp"(%b, %a) {predicate = "lt"} : (index, index) -> i1
  return %lt, %le, %gt : i1, i1, i1
}

// Unused expressions of every kind are dropped (a single CSE sweep keeps the operands they used).
// CHECK-LABEL: func.func @drop_unused
// DCE-NEXT:      return
// CSE1-NEXT:     "sym.value"
// CSE1-NEXT:     "sym.constant"
// CSE1-NEXT:     return
func.func @drop_unused(%p: i1) {
  %a = "sym.value"() {symbol = "s0"} : () -> index
  %c = "sym.constant"() {value = 3 : i64} : () -> index
  %0 = "sym.add"(%a, %c) : (index, index) -> index
  %1 = "sym.sub"(%a, %c) : (index, index) -> index
  %2 = "sym.mul"(%a, %c) : (index, index) -> index
  %3 = "sym.floordiv"(%a, %c) : (index, index) -> index
  %4 = "sym.ceildiv"(%a, %c) : (index, index) -> index
  %5 = "sym.mod"(%a, %c) : (index, index) -> index
  %6 = "sym.min"(%a, %c) : (index, index) -> index
  %7 = "sym.max"(%a, %c) : (index, index) -> index
  %8 = "sym.pow"(%a, %c) : (index, index) -> index
  %9 = "sym.cmp"(%a, %c) {predicate = "eq"} : (index, index) -> i1
  %10 = "sym.and"(%p, %p) : (i1, i1) -> i1
  %11 = "sym.or"(%p, %p) : (i1, i1) -> i1
  %12 = "sym.not"(%p) : (i1) -> i1
  return
}

// A dead chain goes entirely under canonicalize (a forward CSE sweep only drops its last op).
// DCE-LABEL: func.func @drop_unused_chain
// DCE-NEXT:    return
// CSE1-LABEL: func.func @drop_unused_chain
// CSE1:         "sym.or"
// CSE1-NOT:     "sym.not"
// CSE1:         return
func.func @drop_unused_chain(%p: i1) {
  %a = "sym.value"() {symbol = "s0"} : () -> index
  %c = "sym.constant"() {value = 3 : i64} : () -> index
  %0 = "sym.cmp"(%a, %c) {predicate = "eq"} : (index, index) -> i1
  %1 = "sym.or"(%p, %0) : (i1, i1) -> i1
  %2 = "sym.not"(%1) : (i1) -> i1
  return
}

// Negative case: the checks and facts stay, duplicates included (each is its own check), and so
// do the expressions they use; the duplicate expressions under them still merge under CSE.
// CHECK-LABEL: func.func @keep_checks(%arg0: index, %arg1: tensor<?xf32>)
// CHECK-NEXT:    %[[S0:.*]] = "sym.value"() {symbol = "s0"} : () -> index
// CSE-NEXT:      %[[C:.*]] = "sym.constant"() {value = 2 : i64} : () -> index
// CSE-NEXT:      %[[GE:.*]] = "sym.cmp"(%[[S0]], %[[C]]) {predicate = "ge"} : (index, index) -> i1
// CSE-NEXT:      "sym.bind"(%arg0, %[[S0]]) : (index, index) -> ()
// CSE-NEXT:      "sym.bind"(%arg0, %[[S0]]) : (index, index) -> ()
// CSE-NEXT:      "sym.bind"(%arg1, %[[S0]]) {dim = 0 : i64} : (tensor<?xf32>, index) -> ()
// CSE-NEXT:      "sym.guard"(%[[GE]]) {origin = "g1"} : (i1) -> ()
// CSE-NEXT:      "sym.guard"(%[[GE]]) {origin = "g1"} : (i1) -> ()
// CSE-NEXT:      "sym.assert"(%[[GE]]) {msg = "a1"} : (i1) -> ()
// CSE-NEXT:      "sym.assert"(%[[GE]]) {msg = "a1"} : (i1) -> ()
// CSE-NEXT:      return
// CANON-COUNT-2: "sym.bind"(%arg0, %{{.*}}) : (index, index) -> ()
// CANON-NEXT:    "sym.bind"(%arg1, %{{.*}}) {dim = 0 : i64} : (tensor<?xf32>, index) -> ()
// CANON-COUNT-2: "sym.guard"(%{{.*}}) {origin = "g1"} : (i1) -> ()
// CANON-COUNT-2: "sym.assert"(%{{.*}}) {msg = "a1"} : (i1) -> ()
// CANON-NEXT:    return
func.func @keep_checks(%n: index, %t: tensor<?xf32>) {
  %a = "sym.value"() {symbol = "s0"} : () -> index
  %b = "sym.value"() {symbol = "s0"} : () -> index
  %c1 = "sym.constant"() {value = 2 : i64} : () -> index
  %c2 = "sym.constant"() {value = 2 : i64} : () -> index
  %g1 = "sym.cmp"(%a, %c1) {predicate = "ge"} : (index, index) -> i1
  %g2 = "sym.cmp"(%b, %c2) {predicate = "ge"} : (index, index) -> i1
  "sym.bind"(%n, %a) : (index, index) -> ()
  "sym.bind"(%n, %b) : (index, index) -> ()
  "sym.bind"(%t, %a) {dim = 0 : i64} : (tensor<?xf32>, index) -> ()
  "sym.guard"(%g1) {origin = "g1"} : (i1) -> ()
  "sym.guard"(%g2) {origin = "g1"} : (i1) -> ()
  "sym.assert"(%g1) {msg = "a1"} : (i1) -> ()
  "sym.assert"(%g2) {msg = "a1"} : (i1) -> ()
  return
}

// -----

// Declarations are never erased, even when no function reads them.
// CHECK:     "sym.symbol"() {lo = 1 : i64, sym_name = "unused"} : () -> ()
// CHECK-NOT: func.func
"sym.symbol"() {sym_name = "unused", lo = 1 : i64} : () -> ()
