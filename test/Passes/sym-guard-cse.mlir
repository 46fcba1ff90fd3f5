// sym-guard-cse: guards equal in meaning are merged (first one kept), range guards on one symbol
// merged, guards implied by the kept ones erased; declared ranges are not facts here, binds are never
// touched, asserts go only when identical to an earlier check, nothing is rewritten.
// RUN: symopt %s --split-input-file --sym-guard-cse | filecheck %s
// Idempotent:
// RUN: symopt %s --split-input-file --sym-guard-cse --sym-guard-cse | filecheck %s

"sym.symbol"() {sym_name = "s0", lo = 2 : i64} : () -> ()
"sym.symbol"() {sym_name = "s1", lo = 2 : i64} : () -> ()

// `s0*2 >= 8` / `8 <= 2*s0`, `s0 < s1` / `s1 > s0`, `s0 + s1 <= 100` / `100 >= s1 + s0`.
// CHECK-LABEL: func.func @equal_forms
// CHECK:         "sym.guard"(%{{.*}}) {origin = "s0*2 >= 8"}
// CHECK-NEXT:    %[[LT:.*]] = "sym.cmp"
// CHECK-NEXT:    "sym.guard"(%[[LT]]) {origin = "s0 < s1"}
// CHECK-NEXT:    %[[C100:.*]] = "sym.constant"() {value = 100 : i64}
// CHECK-NEXT:    %[[ADD:.*]] = "sym.add"
// CHECK-NEXT:    %[[LE:.*]] = "sym.cmp"(%[[ADD]], %[[C100]]) {predicate = "le"}
// CHECK-NEXT:    "sym.guard"(%[[LE]]) {origin = "s0 + s1 <= 100"}
// CHECK-NEXT:    return
func.func @equal_forms(%a: index, %b: index) attributes {sym.guards} {
  %s0 = "sym.value"() {symbol = "s0"} : () -> index
  %s1 = "sym.value"() {symbol = "s1"} : () -> index
  "sym.bind"(%a, %s0) : (index, index) -> ()
  "sym.bind"(%b, %s1) : (index, index) -> ()
  %c2 = "sym.constant"() {value = 2 : i64} : () -> index
  %c8 = "sym.constant"() {value = 8 : i64} : () -> index
  %m1 = "sym.mul"(%s0, %c2) : (index, index) -> index
  %g0 = "sym.cmp"(%m1, %c8) {predicate = "ge"} : (index, index) -> i1
  "sym.guard"(%g0) {origin = "s0*2 >= 8"} : (i1) -> ()
  %m2 = "sym.mul"(%c2, %s0) : (index, index) -> index
  %g1 = "sym.cmp"(%c8, %m2) {predicate = "le"} : (index, index) -> i1
  "sym.guard"(%g1) {origin = "8 <= 2*s0"} : (i1) -> ()
  %g2 = "sym.cmp"(%s0, %s1) {predicate = "lt"} : (index, index) -> i1
  "sym.guard"(%g2) {origin = "s0 < s1"} : (i1) -> ()
  %g3 = "sym.cmp"(%s1, %s0) {predicate = "gt"} : (index, index) -> i1
  "sym.guard"(%g3) {origin = "s1 > s0"} : (i1) -> ()
  %c100 = "sym.constant"() {value = 100 : i64} : () -> index
  %a1 = "sym.add"(%s0, %s1) : (index, index) -> index
  %a2 = "sym.add"(%s1, %s0) : (index, index) -> index
  %e0 = "sym.cmp"(%a1, %c100) {predicate = "le"} : (index, index) -> i1
  "sym.guard"(%e0) {origin = "s0 + s1 <= 100"} : (i1) -> ()
  %e1 = "sym.cmp"(%c100, %a2) {predicate = "ge"} : (index, index) -> i1
  "sym.guard"(%e1) {origin = "100 >= s1 + s0"} : (i1) -> ()
  return
}

// CHECK-LABEL: func.func @merge_ranges
// CHECK-NEXT:    %[[S0:.*]] = "sym.value"() {symbol = "s0"}
// CHECK-NEXT:    "sym.bind"(%arg0, %[[S0]])
// CHECK-NEXT:    %[[C4:.*]] = "sym.constant"() {value = 4 : i64}
// CHECK-NEXT:    %[[C64:.*]] = "sym.constant"() {value = 64 : i64}
// CHECK-NEXT:    %[[LO:.*]] = "sym.cmp"(%[[S0]], %[[C4]]) {predicate = "ge"}
// CHECK-NEXT:    "sym.guard"(%[[LO]]) {origin = "s0 >= 4"}
// CHECK-NEXT:    %[[HI:.*]] = "sym.cmp"(%[[S0]], %[[C64]]) {predicate = "le"}
// CHECK-NEXT:    "sym.guard"(%[[HI]]) {origin = "s0 <= 64"}
// CHECK-NEXT:    return
func.func @merge_ranges(%a: index) attributes {sym.guards} {
  %s0 = "sym.value"() {symbol = "s0"} : () -> index
  "sym.bind"(%a, %s0) : (index, index) -> ()
  %c2 = "sym.constant"() {value = 2 : i64} : () -> index
  %c4 = "sym.constant"() {value = 4 : i64} : () -> index
  %c64 = "sym.constant"() {value = 64 : i64} : () -> index
  %c100 = "sym.constant"() {value = 100 : i64} : () -> index
  %g0 = "sym.cmp"(%s0, %c2) {predicate = "ge"} : (index, index) -> i1
  "sym.guard"(%g0) {origin = "s0 >= 2"} : (i1) -> ()
  %g1 = "sym.cmp"(%s0, %c100) {predicate = "lt"} : (index, index) -> i1
  "sym.guard"(%g1) {origin = "s0 < 100"} : (i1) -> ()
  %g2 = "sym.cmp"(%s0, %c4) {predicate = "ge"} : (index, index) -> i1
  "sym.guard"(%g2) {origin = "s0 >= 4"} : (i1) -> ()
  %g3 = "sym.cmp"(%s0, %c64) {predicate = "le"} : (index, index) -> i1
  "sym.guard"(%g3) {origin = "s0 <= 64"} : (i1) -> ()
  return
}

// Expensive guards are tried first: the product, then the relations. What stays: the range checks
// s0 >= 4 and s1 >= 4 (a range check of a declared bound goes only for a stronger one of the same
// symbol) and s0 == s1; they imply all the others.
// CHECK-LABEL: func.func @drop_implied
// CHECK:         "sym.bind"
// CHECK-NEXT:    "sym.bind"
// CHECK-NEXT:    %[[C4:.*]] = "sym.constant"() {value = 4 : i64}
// CHECK-NEXT:    %[[C3:.*]] = "sym.constant"() {value = 3 : i64}
// CHECK-NEXT:    %[[G0:.*]] = "sym.cmp"(%{{.*}}, %[[C4]]) {predicate = "ge"}
// CHECK-NEXT:    "sym.guard"(%[[G0]]) {origin = "s0 >= 4"}
// CHECK-NEXT:    %[[G:.*]] = "sym.cmp"(%{{.*}}, %[[C3]]) {predicate = "gt"}
// CHECK-NEXT:    "sym.guard"(%[[G]]) {origin = "s1 > 3"}
// CHECK-NEXT:    %[[E:.*]] = "sym.cmp"(%{{.*}}, %{{.*}}) {predicate = "eq"}
// CHECK-NEXT:    "sym.guard"(%[[E]]) {origin = "Eq(s0, s1)"}
// CHECK-NEXT:    return
func.func @drop_implied(%a: index, %b: index) attributes {sym.guards} {
  %s0 = "sym.value"() {symbol = "s0"} : () -> index
  %s1 = "sym.value"() {symbol = "s1"} : () -> index
  "sym.bind"(%a, %s0) : (index, index) -> ()
  "sym.bind"(%b, %s1) : (index, index) -> ()
  %c4 = "sym.constant"() {value = 4 : i64} : () -> index
  %c3 = "sym.constant"() {value = 3 : i64} : () -> index
  %c16 = "sym.constant"() {value = 16 : i64} : () -> index
  %g0 = "sym.cmp"(%s0, %c4) {predicate = "ge"} : (index, index) -> i1
  "sym.guard"(%g0) {origin = "s0 >= 4"} : (i1) -> ()
  %g1 = "sym.cmp"(%s1, %s0) {predicate = "ge"} : (index, index) -> i1
  "sym.guard"(%g1) {origin = "s1 >= s0"} : (i1) -> ()
  %g2 = "sym.cmp"(%s1, %c3) {predicate = "gt"} : (index, index) -> i1
  "sym.guard"(%g2) {origin = "s1 > 3"} : (i1) -> ()
  %p = "sym.mul"(%s0, %s1) : (index, index) -> index
  %g3 = "sym.cmp"(%p, %c16) {predicate = "ge"} : (index, index) -> i1
  "sym.guard"(%g3) {origin = "s0*s1 >= 16"} : (i1) -> ()
  %e = "sym.cmp"(%s0, %s1) {predicate = "eq"} : (index, index) -> i1
  "sym.guard"(%e) {origin = "Eq(s0, s1)"} : (i1) -> ()
  %g4 = "sym.cmp"(%s0, %s1) {predicate = "le"} : (index, index) -> i1
  "sym.guard"(%g4) {origin = "s0 <= s1"} : (i1) -> ()
  return
}

// Declared ranges are not facts for this pass (sym-canonicalize uses them), binds are not checks
// it merges, and relations that only look alike stay.
// CHECK-LABEL: func.func @no_merge_when_different
// CHECK-COUNT-3: "sym.bind"
// CHECK-NEXT:    %[[C1:.*]] = "sym.constant"() {value = 1 : i64}
// CHECK-NEXT:    %[[G0:.*]] = "sym.cmp"(%{{.*}}, %[[C1]]) {predicate = "ge"}
// CHECK-NEXT:    "sym.guard"(%[[G0]]) {origin = "s0 >= 1"}
// CHECK-NEXT:    %[[LT:.*]] = "sym.cmp"(%{{.*}}, %{{.*}}) {predicate = "lt"}
// CHECK-NEXT:    "sym.guard"(%[[LT]]) {origin = "s0 < s1"}
// CHECK-NEXT:    %[[LE:.*]] = "sym.cmp"(%{{.*}}, %{{.*}}) {predicate = "le"}
// CHECK-NEXT:    "sym.assert"(%[[LE]]) {msg = "implied by an earlier check, not identical: stays"}
// CHECK-NEXT:    %[[M:.*]] = "sym.mul"
// CHECK-NEXT:    %[[C8:.*]] = "sym.constant"() {value = 8 : i64}
// CHECK-NEXT:    %[[P:.*]] = "sym.cmp"(%[[M]], %[[C8]]) {predicate = "ge"}
// CHECK-NEXT:    "sym.guard"(%[[P]]) {origin = "s0*s1 >= 8"}
// CHECK-NEXT:    return
func.func @no_merge_when_different(%a: index, %b: index) attributes {sym.guards} {
  %s0 = "sym.value"() {symbol = "s0"} : () -> index
  %s1 = "sym.value"() {symbol = "s1"} : () -> index
  "sym.bind"(%a, %s0) : (index, index) -> ()
  "sym.bind"(%b, %s0) : (index, index) -> ()
  "sym.bind"(%b, %s0) : (index, index) -> ()
  %c1 = "sym.constant"() {value = 1 : i64} : () -> index
  %g0 = "sym.cmp"(%s0, %c1) {predicate = "ge"} : (index, index) -> i1
  "sym.guard"(%g0) {origin = "s0 >= 1"} : (i1) -> ()
  %g1 = "sym.cmp"(%s0, %s1) {predicate = "lt"} : (index, index) -> i1
  "sym.guard"(%g1) {origin = "s0 < s1"} : (i1) -> ()
  "sym.assert"(%g1) {msg = "identical to the guard before it: erased"} : (i1) -> ()
  %g2 = "sym.cmp"(%s0, %s1) {predicate = "le"} : (index, index) -> i1
  "sym.assert"(%g2) {msg = "implied by an earlier check, not identical: stays"} : (i1) -> ()
  %m = "sym.mul"(%s0, %s1) : (index, index) -> index
  %c8 = "sym.constant"() {value = 8 : i64} : () -> index
  %g3 = "sym.cmp"(%m, %c8) {predicate = "ge"} : (index, index) -> i1
  "sym.guard"(%g3) {origin = "s0*s1 >= 8"} : (i1) -> ()
  "sym.assert"(%g2) {msg = "identical to an earlier assert: erased"} : (i1) -> ()
  return
}

// A guard justified by a later one only up to the next assert.
// CHECK-LABEL: func.func @no_merge_across_assert
// CHECK:         "sym.guard"(%{{.*}}) {origin = "s0 >= 2"}
// CHECK-NEXT:    "sym.assert"(%arg1) {msg = "user check"}
// CHECK-NEXT:    %[[G:.*]] = "sym.cmp"
// CHECK-NEXT:    "sym.guard"(%[[G]]) {origin = "s0 >= 4"}
// CHECK-NEXT:    return
func.func @no_merge_across_assert(%a: index, %p: i1) attributes {sym.guards} {
  %s0 = "sym.value"() {symbol = "s0"} : () -> index
  "sym.bind"(%a, %s0) : (index, index) -> ()
  %c2 = "sym.constant"() {value = 2 : i64} : () -> index
  %c4 = "sym.constant"() {value = 4 : i64} : () -> index
  %g0 = "sym.cmp"(%s0, %c2) {predicate = "ge"} : (index, index) -> i1
  "sym.guard"(%g0) {origin = "s0 >= 2"} : (i1) -> ()
  "sym.assert"(%p) {msg = "user check"} : (i1) -> ()
  %g1 = "sym.cmp"(%s0, %c4) {predicate = "ge"} : (index, index) -> i1
  "sym.guard"(%g1) {origin = "s0 >= 4"} : (i1) -> ()
  return
}

// Conditions sympy cannot read are merged only when they are the same SSA value.
// CHECK-LABEL: func.func @opaque
// CHECK:         "sym.guard"(%arg1) {origin = "p"}
// CHECK-NEXT:    "sym.guard"(%arg2) {origin = "q"}
// CHECK-NEXT:    return
func.func @opaque(%a: index, %p: i1, %q: i1) attributes {sym.guards} {
  %s0 = "sym.value"() {symbol = "s0"} : () -> index
  "sym.bind"(%a, %s0) : (index, index) -> ()
  "sym.guard"(%p) {origin = "p"} : (i1) -> ()
  "sym.guard"(%q) {origin = "q"} : (i1) -> ()
  "sym.guard"(%p) {origin = "p again"} : (i1) -> ()
  return
}
