// sym-canonicalize: canonical conditions, folding by declared ranges and other guards, tautologies,
// asserts only when proven, conditions sympy cannot read left alone, contradictions as located errors.
// Running it twice gives the same output (the rewrite is idempotent).
// RUN: symopt %s --split-input-file --verify-diagnostics --sym-canonicalize | filecheck %s
// RUN: symopt %s --split-input-file --verify-diagnostics --sym-canonicalize --sym-canonicalize | filecheck %s

"sym.symbol"() {sym_name = "s0", lo = 0 : i64} : () -> ()
"sym.symbol"() {sym_name = "s1", lo = 0 : i64} : () -> ()

// One canonical form per relation: terms with positive coefficients on the left (products as
// `c * x`), strict relations made non-strict, the gcd divided out. Unused old expressions go.
// CHECK-LABEL: func.func @canonical_forms
// CHECK-NEXT:    %[[S0:.*]] = "sym.value"() {symbol = "s0"}
// CHECK-NEXT:    "sym.bind"(%arg0, %[[S0]])
// CHECK-NEXT:    %[[S1:.*]] = "sym.value"() {symbol = "s1"}
// CHECK-NEXT:    "sym.bind"(%arg1, %[[S1]])
// CHECK-NEXT:    %[[C2:.*]] = "sym.constant"() {value = 2 : i64}
// CHECK-NEXT:    %[[M:.*]] = "sym.mul"(%[[C2]], %[[S0]])
// CHECK-NEXT:    %[[G0:.*]] = "sym.cmp"(%[[M]], %[[S1]]) {predicate = "ge"}
// CHECK-NEXT:    "sym.guard"(%[[G0]]) {origin = "s0*2 >= s1"}
// CHECK-NEXT:    %[[C4:.*]] = "sym.constant"() {value = 4 : i64}
// CHECK-NEXT:    %[[G1:.*]] = "sym.cmp"(%[[S1]], %[[C4]]) {predicate = "ge"}
// CHECK-NEXT:    "sym.guard"(%[[G1]]) {origin = "3 < s1"}
// CHECK-NEXT:    %[[C3:.*]] = "sym.constant"() {value = 3 : i64}
// CHECK-NEXT:    %[[G2:.*]] = "sym.cmp"(%[[S0]], %[[C3]]) {predicate = "le"}
// CHECK-NEXT:    "sym.guard"(%[[G2]]) {origin = "2*s0 + 2 <= 8"}
// CHECK-NEXT:    return
func.func @canonical_forms(%a: index, %b: index) attributes {sym.guards} {
  %s0 = "sym.value"() {symbol = "s0"} : () -> index
  %s1 = "sym.value"() {symbol = "s1"} : () -> index
  "sym.bind"(%a, %s0) : (index, index) -> ()
  "sym.bind"(%b, %s1) : (index, index) -> ()
  %c2 = "sym.constant"() {value = 2 : i64} : () -> index
  %c3 = "sym.constant"() {value = 3 : i64} : () -> index
  %c8 = "sym.constant"() {value = 8 : i64} : () -> index
  %m = "sym.mul"(%s0, %c2) : (index, index) -> index
  %g0 = "sym.cmp"(%m, %s1) {predicate = "ge"} : (index, index) -> i1
  "sym.guard"(%g0) {origin = "s0*2 >= s1"} : (i1) -> ()
  %g1 = "sym.cmp"(%c3, %s1) {predicate = "lt"} : (index, index) -> i1
  "sym.guard"(%g1) {origin = "3 < s1"} : (i1) -> ()
  %m2 = "sym.mul"(%c2, %s0) : (index, index) -> index
  %p = "sym.add"(%m2, %c2) : (index, index) -> index
  %g2 = "sym.cmp"(%p, %c8) {predicate = "le"} : (index, index) -> i1
  "sym.guard"(%g2) {origin = "2*s0 + 2 <= 8"} : (i1) -> ()
  return
}

// `s1 < s0` and `s0 > s1` are one check (s0 >= s1 + 1): the first stays.
// CHECK-LABEL: func.func @mirrored_forms_merge
// CHECK:         %[[C1:.*]] = "sym.constant"() {value = 1 : i64}
// CHECK-NEXT:    %[[A:.*]] = "sym.add"(%[[C1]], %{{.*}})
// CHECK-NEXT:    %[[G:.*]] = "sym.cmp"(%{{.*}}, %[[A]]) {predicate = "ge"}
// CHECK-NEXT:    "sym.guard"(%[[G]]) {origin = "s1 < s0"}
// CHECK-NEXT:    return
func.func @mirrored_forms_merge(%a: index, %b: index) attributes {sym.guards} {
  %s0 = "sym.value"() {symbol = "s0"} : () -> index
  %s1 = "sym.value"() {symbol = "s1"} : () -> index
  "sym.bind"(%a, %s0) : (index, index) -> ()
  "sym.bind"(%b, %s1) : (index, index) -> ()
  %g0 = "sym.cmp"(%s1, %s0) {predicate = "lt"} : (index, index) -> i1
  "sym.guard"(%g0) {origin = "s1 < s0"} : (i1) -> ()
  %g1 = "sym.cmp"(%s0, %s1) {predicate = "gt"} : (index, index) -> i1
  "sym.guard"(%g1) {origin = "s0 > s1"} : (i1) -> ()
  return
}

// -----

"sym.symbol"() {sym_name = "s0", lo = 2 : i64} : () -> ()
"sym.symbol"() {sym_name = "s1", lo = 2 : i64, hi = 64 : i64} : () -> ()

// With s0 in [2, oo] and s1 in [2, 64] (bounds no guard here checks): all three are implied.
// CHECK-LABEL: func.func @fold_by_ranges
// CHECK-NEXT:    "sym.value"
// CHECK-NEXT:    "sym.value"
// CHECK-NEXT:    "sym.bind"
// CHECK-NEXT:    "sym.bind"
// CHECK-NEXT:    return
func.func @fold_by_ranges(%a: index, %b: index) attributes {sym.guards} {
  %s0 = "sym.value"() {symbol = "s0"} : () -> index
  %s1 = "sym.value"() {symbol = "s1"} : () -> index
  "sym.bind"(%a, %s0) : (index, index) -> ()
  "sym.bind"(%b, %s1) : (index, index) -> ()
  %c1 = "sym.constant"() {value = 1 : i64} : () -> index
  %c4 = "sym.constant"() {value = 4 : i64} : () -> index
  %c100 = "sym.constant"() {value = 100 : i64} : () -> index
  %g0 = "sym.cmp"(%s0, %c1) {predicate = "ge"} : (index, index) -> i1
  "sym.guard"(%g0) {origin = "s0 >= 1"} : (i1) -> ()
  %g1 = "sym.cmp"(%s1, %c100) {predicate = "lt"} : (index, index) -> i1
  "sym.guard"(%g1) {origin = "s1 < 100"} : (i1) -> ()
  %p = "sym.mul"(%s0, %s1) : (index, index) -> index
  %g2 = "sym.cmp"(%p, %c4) {predicate = "ge"} : (index, index) -> i1
  "sym.guard"(%g2) {origin = "s0*s1 >= 4"} : (i1) -> ()
  return
}

// A range check of a declared bound goes only for a stronger range check of the same symbol, never
// for relations that imply it (here 2*s0 >= s1 + 1 and s1 >= 2): the bound must stay checked.
// CHECK-LABEL: func.func @no_fold_range_check_by_relations
// CHECK:         %[[C2:.*]] = "sym.constant"() {value = 2 : i64}
// CHECK-NEXT:    %[[R0:.*]] = "sym.cmp"(%{{.*}}, %[[C2]]) {predicate = "ge"}
// CHECK-NEXT:    "sym.guard"(%[[R0]]) {origin = "range of s0: [2, oo]"}
// CHECK-NEXT:    %[[R1:.*]] = "sym.cmp"(%{{.*}}, %[[C2]]) {predicate = "ge"}
// CHECK-NEXT:    "sym.guard"(%[[R1]]) {origin = "range of s1: [2, 64]"}
// CHECK:         "sym.guard"(%{{.*}}) {origin = "2*s0 > s1"}
// CHECK-NEXT:    return
func.func @no_fold_range_check_by_relations(%a: index, %b: index) attributes {sym.guards} {
  %s0 = "sym.value"() {symbol = "s0"} : () -> index
  %s1 = "sym.value"() {symbol = "s1"} : () -> index
  "sym.bind"(%a, %s0) : (index, index) -> ()
  "sym.bind"(%b, %s1) : (index, index) -> ()
  %c2 = "sym.constant"() {value = 2 : i64} : () -> index
  %r0 = "sym.cmp"(%s0, %c2) {predicate = "ge"} : (index, index) -> i1
  "sym.guard"(%r0) {origin = "range of s0: [2, oo]"} : (i1) -> ()
  %r1 = "sym.cmp"(%s1, %c2) {predicate = "ge"} : (index, index) -> i1
  "sym.guard"(%r1) {origin = "range of s1: [2, 64]"} : (i1) -> ()
  %m = "sym.mul"(%c2, %s0) : (index, index) -> index
  %g = "sym.cmp"(%m, %s1) {predicate = "gt"} : (index, index) -> i1
  "sym.guard"(%g) {origin = "2*s0 > s1"} : (i1) -> ()
  return
}

// The range guards the importer emits for the declared bounds are what makes the bounds facts:
// they are never folded by their own declaration, and they fold the weaker guards.
// CHECK-LABEL: func.func @no_fold_range_guards
// CHECK:         %[[C2:.*]] = "sym.constant"() {value = 2 : i64}
// CHECK-NEXT:    %[[R0:.*]] = "sym.cmp"(%{{.*}}, %[[C2]]) {predicate = "ge"}
// CHECK-NEXT:    "sym.guard"(%[[R0]]) {origin = "range of s0: [2, oo]"}
// CHECK-NEXT:    %[[C64:.*]] = "sym.constant"() {value = 64 : i64}
// CHECK-NEXT:    %[[R1:.*]] = "sym.cmp"(%{{.*}}, %[[C64]]) {predicate = "le"}
// CHECK-NEXT:    "sym.guard"(%[[R1]]) {origin = "range of s1: [2, 64]"}
// CHECK-NEXT:    return
func.func @no_fold_range_guards(%a: index, %b: index) attributes {sym.guards} {
  %s0 = "sym.value"() {symbol = "s0"} : () -> index
  %s1 = "sym.value"() {symbol = "s1"} : () -> index
  "sym.bind"(%a, %s0) : (index, index) -> ()
  "sym.bind"(%b, %s1) : (index, index) -> ()
  %c1 = "sym.constant"() {value = 1 : i64} : () -> index
  %c2 = "sym.constant"() {value = 2 : i64} : () -> index
  %c64 = "sym.constant"() {value = 64 : i64} : () -> index
  %r0 = "sym.cmp"(%s0, %c2) {predicate = "ge"} : (index, index) -> i1
  "sym.guard"(%r0) {origin = "range of s0: [2, oo]"} : (i1) -> ()
  %r1 = "sym.cmp"(%s1, %c64) {predicate = "le"} : (index, index) -> i1
  "sym.guard"(%r1) {origin = "range of s1: [2, 64]"} : (i1) -> ()
  %g0 = "sym.cmp"(%c1, %s0) {predicate = "lt"} : (index, index) -> i1
  "sym.guard"(%g0) {origin = "1 < s0"} : (i1) -> ()
  return
}

// -----

"sym.symbol"() {sym_name = "s0", lo = 0 : i64} : () -> ()
"sym.symbol"() {sym_name = "s1", lo = 0 : i64} : () -> ()

// `s0 >= 2` is implied by `s0 >= 4`, `s0 + s1 >= 8` by `s0 >= 4` and `s1 >= s0`.
// CHECK-LABEL: func.func @fold_implied_by_guards
// CHECK-NEXT:    %[[S0:.*]] = "sym.value"() {symbol = "s0"}
// CHECK-NEXT:    "sym.bind"
// CHECK-NEXT:    %[[S1:.*]] = "sym.value"() {symbol = "s1"}
// CHECK-NEXT:    "sym.bind"
// CHECK-NEXT:    %[[C4:.*]] = "sym.constant"() {value = 4 : i64}
// CHECK-NEXT:    %[[G0:.*]] = "sym.cmp"(%[[S0]], %[[C4]]) {predicate = "ge"}
// CHECK-NEXT:    "sym.guard"(%[[G0]]) {origin = "s0 >= 4"}
// CHECK-NEXT:    %[[G1:.*]] = "sym.cmp"(%[[S1]], %[[S0]]) {predicate = "ge"}
// CHECK-NEXT:    "sym.guard"(%[[G1]]) {origin = "s1 >= s0"}
// CHECK-NEXT:    return
func.func @fold_implied_by_guards(%a: index, %b: index) attributes {sym.guards} {
  %s0 = "sym.value"() {symbol = "s0"} : () -> index
  %s1 = "sym.value"() {symbol = "s1"} : () -> index
  "sym.bind"(%a, %s0) : (index, index) -> ()
  "sym.bind"(%b, %s1) : (index, index) -> ()
  %c2 = "sym.constant"() {value = 2 : i64} : () -> index
  %c4 = "sym.constant"() {value = 4 : i64} : () -> index
  %c8 = "sym.constant"() {value = 8 : i64} : () -> index
  %g0 = "sym.cmp"(%s0, %c2) {predicate = "ge"} : (index, index) -> i1
  "sym.guard"(%g0) {origin = "s0 >= 2"} : (i1) -> ()
  %g1 = "sym.cmp"(%s0, %c4) {predicate = "ge"} : (index, index) -> i1
  "sym.guard"(%g1) {origin = "s0 >= 4"} : (i1) -> ()
  %g2 = "sym.cmp"(%s1, %s0) {predicate = "ge"} : (index, index) -> i1
  "sym.guard"(%g2) {origin = "s1 >= s0"} : (i1) -> ()
  %sum = "sym.add"(%s0, %s1) : (index, index) -> index
  %g3 = "sym.cmp"(%sum, %c8) {predicate = "ge"} : (index, index) -> i1
  "sym.guard"(%g3) {origin = "s0 + s1 >= 8"} : (i1) -> ()
  return
}

// True for every integer, or for the declared range (s0 >= 0: sizes are never negative).
// CHECK-LABEL: func.func @drop_tautologies
// CHECK-NEXT:    "sym.value"
// CHECK-NEXT:    "sym.bind"
// CHECK-NEXT:    return
func.func @drop_tautologies(%a: index) attributes {sym.guards} {
  %s0 = "sym.value"() {symbol = "s0"} : () -> index
  "sym.bind"(%a, %s0) : (index, index) -> ()
  %c1 = "sym.constant"() {value = 1 : i64} : () -> index
  %c2 = "sym.constant"() {value = 2 : i64} : () -> index
  %p1 = "sym.add"(%s0, %c1) : (index, index) -> index
  %g0 = "sym.cmp"(%p1, %s0) {predicate = "gt"} : (index, index) -> i1
  "sym.guard"(%g0) {origin = "s0 + 1 > s0"} : (i1) -> ()
  %m1 = "sym.mul"(%s0, %c2) : (index, index) -> index
  %m2 = "sym.mul"(%c2, %s0) : (index, index) -> index
  %g1 = "sym.cmp"(%m1, %m2) {predicate = "eq"} : (index, index) -> i1
  "sym.guard"(%g1) {origin = "s0*2 == 2*s0"} : (i1) -> ()
  %c0 = "sym.constant"() {value = 0 : i64} : () -> index
  %g2 = "sym.cmp"(%s0, %c0) {predicate = "ge"} : (index, index) -> i1
  "sym.guard"(%g2) {origin = "s0 >= 0"} : (i1) -> ()
  return
}

// Nothing implies these: they stay (rewritten in canonical form only).
// CHECK-LABEL: func.func @no_fold_when_not_implied
// CHECK-NEXT:    %[[S0:.*]] = "sym.value"() {symbol = "s0"}
// CHECK-NEXT:    "sym.bind"
// CHECK-NEXT:    %[[S1:.*]] = "sym.value"() {symbol = "s1"}
// CHECK-NEXT:    "sym.bind"
// CHECK-NEXT:    %[[C2:.*]] = "sym.constant"() {value = 2 : i64}
// CHECK-NEXT:    %[[G0:.*]] = "sym.cmp"(%[[S0]], %[[C2]]) {predicate = "ge"}
// CHECK-NEXT:    "sym.guard"(%[[G0]]) {origin = "s0 >= 2"}
// CHECK-NEXT:    %[[M:.*]] = "sym.mul"(%[[S0]], %[[S1]])
// CHECK-NEXT:    %[[C4096:.*]] = "sym.constant"() {value = 4096 : i64}
// CHECK-NEXT:    %[[G1:.*]] = "sym.cmp"(%[[M]], %[[C4096]]) {predicate = "le"}
// CHECK-NEXT:    "sym.guard"(%[[G1]]) {origin = "s0*s1 <= 4096"}
// CHECK-NEXT:    %[[C8:.*]] = "sym.constant"() {value = 8 : i64}
// CHECK-NEXT:    %[[MOD:.*]] = "sym.mod"(%[[S1]], %[[C8]])
// CHECK-NEXT:    %[[Z:.*]] = "sym.constant"() {value = 0 : i64}
// CHECK-NEXT:    %[[G2:.*]] = "sym.cmp"(%[[MOD]], %[[Z]]) {predicate = "eq"}
// CHECK-NEXT:    "sym.guard"(%[[G2]]) {origin = "s1 % 8 == 0"}
// CHECK-NEXT:    return
func.func @no_fold_when_not_implied(%a: index, %b: index) attributes {sym.guards} {
  %s0 = "sym.value"() {symbol = "s0"} : () -> index
  %s1 = "sym.value"() {symbol = "s1"} : () -> index
  "sym.bind"(%a, %s0) : (index, index) -> ()
  "sym.bind"(%b, %s1) : (index, index) -> ()
  %c2 = "sym.constant"() {value = 2 : i64} : () -> index
  %c8 = "sym.constant"() {value = 8 : i64} : () -> index
  %c4096 = "sym.constant"() {value = 4096 : i64} : () -> index
  %g0 = "sym.cmp"(%s0, %c2) {predicate = "ge"} : (index, index) -> i1
  "sym.guard"(%g0) {origin = "s0 >= 2"} : (i1) -> ()
  %p = "sym.mul"(%s0, %s1) : (index, index) -> index
  %g1 = "sym.cmp"(%p, %c4096) {predicate = "le"} : (index, index) -> i1
  "sym.guard"(%g1) {origin = "s0*s1 <= 4096"} : (i1) -> ()
  %md = "sym.mod"(%s1, %c8) : (index, index) -> index
  %z = "sym.constant"() {value = 0 : i64} : () -> index
  %g2 = "sym.cmp"(%md, %z) {predicate = "eq"} : (index, index) -> i1
  "sym.guard"(%g2) {origin = "s1 % 8 == 0"} : (i1) -> ()
  return
}

// A later guard does not justify an earlier one across an assert (the assert would then fail first
// and turn "another variant" into the user's error); an earlier guard justifies a later check.
// CHECK-LABEL: func.func @no_fold_across_assert
// CHECK:         "sym.guard"(%{{.*}}) {origin = "s0 >= 2"}
// CHECK-NEXT:    "sym.assert"(%arg1) {msg = "user check"}
// CHECK-NEXT:    "sym.constant"() {value = 4 : i64}
// CHECK-NEXT:    %[[G1:.*]] = "sym.cmp"
// CHECK-NEXT:    "sym.guard"(%[[G1]]) {origin = "s0 >= 4"}
// CHECK-NEXT:    return
func.func @no_fold_across_assert(%a: index, %p: i1) attributes {sym.guards} {
  %s0 = "sym.value"() {symbol = "s0"} : () -> index
  "sym.bind"(%a, %s0) : (index, index) -> ()
  %c2 = "sym.constant"() {value = 2 : i64} : () -> index
  %c4 = "sym.constant"() {value = 4 : i64} : () -> index
  %g0 = "sym.cmp"(%s0, %c2) {predicate = "ge"} : (index, index) -> i1
  "sym.guard"(%g0) {origin = "s0 >= 2"} : (i1) -> ()
  "sym.assert"(%p) {msg = "user check"} : (i1) -> ()
  %g1 = "sym.cmp"(%s0, %c4) {predicate = "ge"} : (index, index) -> i1
  "sym.guard"(%g1) {origin = "s0 >= 4"} : (i1) -> ()
  "sym.guard"(%g0) {origin = "s0 >= 2 again"} : (i1) -> ()
  return
}

// An assert goes only when the checks before it prove it.
// CHECK-LABEL: func.func @fold_assert
// CHECK:         "sym.guard"(%{{.*}}) {origin = "s0 >= 4"}
// CHECK-NEXT:    return
func.func @fold_assert(%a: index) attributes {sym.guards} {
  %s0 = "sym.value"() {symbol = "s0"} : () -> index
  "sym.bind"(%a, %s0) : (index, index) -> ()
  %c2 = "sym.constant"() {value = 2 : i64} : () -> index
  %c4 = "sym.constant"() {value = 4 : i64} : () -> index
  %g0 = "sym.cmp"(%s0, %c4) {predicate = "ge"} : (index, index) -> i1
  "sym.guard"(%g0) {origin = "s0 >= 4"} : (i1) -> ()
  %g1 = "sym.cmp"(%s0, %c2) {predicate = "gt"} : (index, index) -> i1
  "sym.assert"(%g1) {msg = "expected s0 > 2"} : (i1) -> ()
  return
}

// The assert is rewritten (s0 > 2 is s0 >= 3), not erased.
// CHECK-LABEL: func.func @no_fold_assert_before_guard
// CHECK:         %[[C3:.*]] = "sym.constant"() {value = 3 : i64}
// CHECK-NEXT:    %[[A:.*]] = "sym.cmp"(%{{.*}}, %[[C3]]) {predicate = "ge"}
// CHECK-NEXT:    "sym.assert"(%[[A]]) {msg = "expected s0 > 2"}
// CHECK-NEXT:    %[[C4:.*]] = "sym.constant"() {value = 4 : i64}
// CHECK-NEXT:    %[[G:.*]] = "sym.cmp"
// CHECK-NEXT:    "sym.guard"(%[[G]]) {origin = "s0 >= 4"}
// CHECK-NEXT:    return
func.func @no_fold_assert_before_guard(%a: index) attributes {sym.guards} {
  %s0 = "sym.value"() {symbol = "s0"} : () -> index
  "sym.bind"(%a, %s0) : (index, index) -> ()
  %c2 = "sym.constant"() {value = 2 : i64} : () -> index
  %c4 = "sym.constant"() {value = 4 : i64} : () -> index
  %g1 = "sym.cmp"(%s0, %c2) {predicate = "gt"} : (index, index) -> i1
  "sym.assert"(%g1) {msg = "expected s0 > 2"} : (i1) -> ()
  %g0 = "sym.cmp"(%s0, %c4) {predicate = "ge"} : (index, index) -> i1
  "sym.guard"(%g0) {origin = "s0 >= 4"} : (i1) -> ()
  return
}

// A condition sympy cannot read stays as it is, and is never dropped.
// CHECK-LABEL: func.func @no_rewrite_opaque
// CHECK:         "sym.guard"(%arg1) {origin = "opaque"}
// CHECK-NEXT:    %[[L:.*]] = "sym.cmp"(%arg2, %{{.*}}) {predicate = "lt"}
// CHECK-NEXT:    "sym.guard"(%[[L]]) {origin = "not a sym expression"}
// CHECK-NEXT:    %[[P:.*]] = "sym.pow"
// CHECK-NEXT:    %[[C9:.*]] = "sym.constant"() {value = 9 : i64}
// CHECK-NEXT:    %[[G:.*]] = "sym.cmp"(%[[P]], %[[C9]]) {predicate = "ge"}
// CHECK-NEXT:    "sym.guard"(%[[G]]) {origin = "s0**s0 >= 9"}
// CHECK-NEXT:    return
func.func @no_rewrite_opaque(%a: index, %p: i1, %q: index) attributes {sym.guards} {
  %s0 = "sym.value"() {symbol = "s0"} : () -> index
  "sym.bind"(%a, %s0) : (index, index) -> ()
  "sym.guard"(%p) {origin = "opaque"} : (i1) -> ()
  %g = "sym.cmp"(%q, %s0) {predicate = "lt"} : (index, index) -> i1
  "sym.guard"(%g) {origin = "not a sym expression"} : (i1) -> ()
  %e = "sym.pow"(%s0, %s0) : (index, index) -> index
  %c9 = "sym.constant"() {value = 9 : i64} : () -> index
  %h = "sym.cmp"(%e, %c9) {predicate = "ge"} : (index, index) -> i1
  "sym.guard"(%h) {origin = "s0**s0 >= 9"} : (i1) -> ()
  return
}

// -----

"sym.symbol"() {sym_name = "s0", lo = 2 : i64} : () -> ()

func.func @contradiction(%a: index) attributes {sym.guards} {
  %s0 = "sym.value"() {symbol = "s0"} : () -> index
  "sym.bind"(%a, %s0) : (index, index) -> ()
  %c10 = "sym.constant"() {value = 10 : i64} : () -> index
  %c5 = "sym.constant"() {value = 5 : i64} : () -> index
  %g = "sym.cmp"(%s0, %c10) {predicate = "ge"} : (index, index) -> i1
  "sym.guard"(%g) {origin = "model.py:3"} : (i1) -> ()
  %h = "sym.cmp"(%s0, %c5) {predicate = "lt"} : (index, index) -> i1
  // expected-error @+1 {{contradictory guards: "model.py:4" (s0 <= 4) cannot hold together with "model.py:3" (s0 >= 10)}}
  "sym.guard"(%h) {origin = "model.py:4"} : (i1) -> ()
  return
}

// -----

"sym.symbol"() {sym_name = "s0", lo = 2 : i64} : () -> ()
"sym.symbol"() {sym_name = "s1", lo = 2 : i64} : () -> ()

func.func @contradiction_through_relation(%a: index, %b: index) attributes {sym.guards} {
  %s0 = "sym.value"() {symbol = "s0"} : () -> index
  %s1 = "sym.value"() {symbol = "s1"} : () -> index
  "sym.bind"(%a, %s0) : (index, index) -> ()
  "sym.bind"(%b, %s1) : (index, index) -> ()
  %c8 = "sym.constant"() {value = 8 : i64} : () -> index
  %c4 = "sym.constant"() {value = 4 : i64} : () -> index
  %g = "sym.cmp"(%s0, %c8) {predicate = "ge"} : (index, index) -> i1
  "sym.guard"(%g) {origin = "model.py:3"} : (i1) -> ()
  %e = "sym.cmp"(%s1, %s0) {predicate = "eq"} : (index, index) -> i1
  "sym.guard"(%e) {origin = "model.py:4"} : (i1) -> ()
  %h = "sym.cmp"(%s1, %c4) {predicate = "le"} : (index, index) -> i1
  // expected-error @+1 {{contradictory guards: "model.py:5" (s1 <= 4) cannot hold together with "model.py:3" (s0 >= 8) and "model.py:4" (s0 == s1)}}
  "sym.guard"(%h) {origin = "model.py:5"} : (i1) -> ()
  return
}

// -----

"sym.symbol"() {sym_name = "s0", lo = 2 : i64, hi = 64 : i64} : () -> ()

func.func @false_for_the_whole_range(%a: index) attributes {sym.guards} {
  %s0 = "sym.value"() {symbol = "s0"} : () -> index
  "sym.bind"(%a, %s0) : (index, index) -> ()
  %c100 = "sym.constant"() {value = 100 : i64} : () -> index
  %h = "sym.cmp"(%s0, %c100) {predicate = "gt"} : (index, index) -> i1
  // expected-error @+1 {{guard "model.py:9" (s0 >= 101) can never hold for the declared range of s0 [2, 64]}}
  "sym.guard"(%h) {origin = "model.py:9"} : (i1) -> ()
  return
}

// -----

"sym.symbol"() {sym_name = "s0", lo = 0 : i64} : () -> ()

func.func @always_false(%a: index) attributes {sym.guards} {
  %s0 = "sym.value"() {symbol = "s0"} : () -> index
  "sym.bind"(%a, %s0) : (index, index) -> ()
  %c1 = "sym.constant"() {value = 1 : i64} : () -> index
  %p = "sym.add"(%s0, %c1) : (index, index) -> index
  %h = "sym.cmp"(%p, %s0) {predicate = "le"} : (index, index) -> i1
  // expected-error @+1 {{guard "model.py:7" is always false}}
  "sym.guard"(%h) {origin = "model.py:7"} : (i1) -> ()
  return
}

// -----

// An unbacked symbol (a count, the value of `.item()`) is known only through its checks: the asserts
// of its declared range [0, 5] stay (a backed symbol's lower bound 0 is a fact: `s0 >= 0` goes), and
// they justify later checks (`u0 <= 7` goes).
"sym.symbol"() {sym_name = "s0", lo = 0 : i64} : () -> ()
"sym.symbol"() {sym_name = "u0", lo = 0 : i64, hi = 5 : i64, unbacked} : () -> ()

// CHECK-LABEL: func.func @unbacked_bounds_are_checked
// CHECK-NOT:     msg = "s0 >= 0"
// CHECK:         "sym.assert"(%{{.*}}) {msg = "u0 >= 0"}
// CHECK-NEXT:    %[[C5:.*]] = "sym.constant"() {value = 5 : i64}
// CHECK-NEXT:    %[[LE:.*]] = "sym.cmp"(%{{.*}}, %[[C5]]) {predicate = "le"}
// CHECK-NEXT:    "sym.assert"(%[[LE]]) {msg = "u0 <= 5"}
// CHECK-NEXT:    return
func.func @unbacked_bounds_are_checked(%a: index, %b: index) attributes {sym.guards} {
  %s0 = "sym.value"() {symbol = "s0"} : () -> index
  %u0 = "sym.value"() {symbol = "u0"} : () -> index
  "sym.bind"(%a, %s0) : (index, index) -> ()
  "sym.bind"(%b, %u0) : (index, index) -> ()
  %c0 = "sym.constant"() {value = 0 : i64} : () -> index
  %c5 = "sym.constant"() {value = 5 : i64} : () -> index
  %c7 = "sym.constant"() {value = 7 : i64} : () -> index
  %g = "sym.cmp"(%s0, %c0) {predicate = "ge"} : (index, index) -> i1
  "sym.assert"(%g) {msg = "s0 >= 0"} : (i1) -> ()
  %lo = "sym.cmp"(%u0, %c0) {predicate = "ge"} : (index, index) -> i1
  "sym.assert"(%lo) {msg = "u0 >= 0"} : (i1) -> ()
  %hi = "sym.cmp"(%u0, %c5) {predicate = "le"} : (index, index) -> i1
  "sym.assert"(%hi) {msg = "u0 <= 5"} : (i1) -> ()
  %h7 = "sym.cmp"(%u0, %c7) {predicate = "le"} : (index, index) -> i1
  "sym.assert"(%h7) {msg = "u0 <= 7"} : (i1) -> ()
  return
}

// -----

// An unknown symbol is rejected by the verifier before any pass runs.
func.func @unknown_symbol(%a: index) attributes {sym.guards} {
  // expected-error @+1 {{refers to unknown symbol 's7'}}
  %s7 = "sym.value"() {symbol = "s7"} : () -> index
  "sym.bind"(%a, %s7) : (index, index) -> ()
  return
}
