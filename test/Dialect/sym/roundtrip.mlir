// Every sym op parses, verifies and prints back to text that parses to the same IR.
// The examples are those of dialects/sym.md.
// RUN: symopt %s | symopt | filecheck %s
// RUN: symopt %s --mlir-print-op-generic | symopt | filecheck %s
// RUN: symopt %s --mlir-print-op-generic | filecheck %s --check-prefix=GENERIC
// The examples of dialects/sym.md each parse and verify, and every line of them is in this file:
// RUN: %PYTHON -c "import re, sys; md = open(sys.argv[1]).read(); print((chr(10) + '// -----' + chr(10)).join(re.findall('```mlir' + chr(10) + '(.*?)```', md, re.S)))" %S/../../../dialects/sym.md \
// RUN:   | symopt --split-input-file | filecheck %s --check-prefix=MD
// RUN: %PYTHON -c "import re, sys; md = open(sys.argv[1]).read(); mine = open(sys.argv[2]).read().splitlines(); blocks = re.findall('```mlir' + chr(10) + '(.*?)```', md, re.S); bad = [l for b in blocks for l in b.splitlines() if l.strip() and l not in mine]; sys.exit('sym.md examples that are not in roundtrip.mlir: %%s' %% bad if bad else (0 if len(blocks) >= 20 else 'too few sym.md examples'))" %S/../../../dialects/sym.md %s
// MD-COUNT-19: // -----
// MD-NOT:      // -----

// CHECK:      "sym.symbol"() {hi = 64 : i64, hint = 8 : i64, lo = 2 : i64, sym_name = "s0"} : () -> ()
// CHECK-NEXT: "sym.symbol"() {lo = 0 : i64, sym_name = "u0"} : () -> ()
"sym.symbol"() {sym_name = "s0", lo = 2 : i64, hi = 64 : i64, hint = 8 : i64} : () -> ()
"sym.symbol"() {sym_name = "u0", lo = 0 : i64} : () -> ()

// GENERIC-LABEL: "func.func"() <{function_type = () -> index, sym_name = "value"}>
// GENERIC:       "sym.value"() {symbol = "s0"} : () -> index

// CHECK-LABEL: func.func @value() -> index
// CHECK-NEXT:    %[[S0:.*]] = "sym.value"() {symbol = "s0"} : () -> index
// CHECK-NEXT:    return %[[S0]] : index
func.func @value() -> index {
  %s0 = "sym.value"() {symbol = "s0"} : () -> index
  return %s0 : index
}

// CHECK-LABEL: func.func @constant() -> index
// CHECK-NEXT:    %[[C:.*]] = "sym.constant"() {value = 4 : i64} : () -> index
// CHECK-NEXT:    return %[[C]] : index
func.func @constant() -> index {
  %c4 = "sym.constant"() {value = 4 : i64} : () -> index
  return %c4 : index
}

// CHECK-LABEL: func.func @add(%arg0: index, %arg1: index) -> index
// CHECK-NEXT:    %[[R:.*]] = "sym.add"(%arg0, %arg1) : (index, index) -> index
// CHECK-NEXT:    return %[[R]] : index
func.func @add(%a: index, %b: index) -> index {
  %r = "sym.add"(%a, %b) : (index, index) -> index
  return %r : index
}

// CHECK-LABEL: func.func @sub(
// CHECK-NEXT:    "sym.sub"(%arg0, %arg1) : (index, index) -> index
func.func @sub(%a: index, %b: index) -> index {
  %r = "sym.sub"(%a, %b) : (index, index) -> index
  return %r : index
}

// CHECK-LABEL: func.func @mul(
// CHECK-NEXT:    "sym.mul"(%arg0, %arg1) : (index, index) -> index
func.func @mul(%a: index, %b: index) -> index {
  %r = "sym.mul"(%a, %b) : (index, index) -> index
  return %r : index
}

// CHECK-LABEL: func.func @floordiv(
// CHECK-NEXT:    "sym.floordiv"(%arg0, %arg1) : (index, index) -> index
func.func @floordiv(%a: index, %b: index) -> index {
  %r = "sym.floordiv"(%a, %b) : (index, index) -> index
  return %r : index
}

// CHECK-LABEL: func.func @ceildiv(
// CHECK-NEXT:    "sym.ceildiv"(%arg0, %arg1) : (index, index) -> index
func.func @ceildiv(%a: index, %b: index) -> index {
  %r = "sym.ceildiv"(%a, %b) : (index, index) -> index
  return %r : index
}

// CHECK-LABEL: func.func @mod(
// CHECK-NEXT:    "sym.mod"(%arg0, %arg1) : (index, index) -> index
func.func @mod(%a: index, %b: index) -> index {
  %r = "sym.mod"(%a, %b) : (index, index) -> index
  return %r : index
}

// CHECK-LABEL: func.func @min(
// CHECK-NEXT:    "sym.min"(%arg0, %arg1) : (index, index) -> index
func.func @min(%a: index, %b: index) -> index {
  %r = "sym.min"(%a, %b) : (index, index) -> index
  return %r : index
}

// CHECK-LABEL: func.func @max(
// CHECK-NEXT:    "sym.max"(%arg0, %arg1) : (index, index) -> index
func.func @max(%a: index, %b: index) -> index {
  %r = "sym.max"(%a, %b) : (index, index) -> index
  return %r : index
}

// CHECK-LABEL: func.func @pow(%arg0: index) -> index
// CHECK-NEXT:    %[[TWO:.*]] = "sym.constant"() {value = 2 : i64} : () -> index
// CHECK-NEXT:    "sym.pow"(%arg0, %[[TWO]]) : (index, index) -> index
func.func @pow(%a: index) -> index {
  %c2 = "sym.constant"() {value = 2 : i64} : () -> index
  %r = "sym.pow"(%a, %c2) : (index, index) -> index
  return %r : index
}

// CHECK-LABEL: func.func @cmp(
// CHECK-NEXT:    %[[LE:.*]] = "sym.cmp"(%arg0, %arg1) {predicate = "le"} : (index, index) -> i1
// CHECK-NEXT:    return %[[LE]] : i1
func.func @cmp(%a: index, %b: index) -> i1 {
  %le = "sym.cmp"(%a, %b) {predicate = "le"} : (index, index) -> i1
  return %le : i1
}

// CHECK-LABEL: func.func @and(
// CHECK-NEXT:    "sym.and"(%arg0, %arg1) : (i1, i1) -> i1
func.func @and(%p: i1, %q: i1) -> i1 {
  %r = "sym.and"(%p, %q) : (i1, i1) -> i1
  return %r : i1
}

// CHECK-LABEL: func.func @or(
// CHECK-NEXT:    "sym.or"(%arg0, %arg1) : (i1, i1) -> i1
func.func @or(%p: i1, %q: i1) -> i1 {
  %r = "sym.or"(%p, %q) : (i1, i1) -> i1
  return %r : i1
}

// CHECK-LABEL: func.func @not(
// CHECK-NEXT:    "sym.not"(%arg0) : (i1) -> i1
func.func @not(%p: i1) -> i1 {
  %r = "sym.not"(%p) : (i1) -> i1
  return %r : i1
}

// CHECK-LABEL: func.func @bind(%arg0: !torch.vtensor<[?,4],f32>, %arg1: !torch.int, %arg2: index, %arg3: tensor<?x?xf32>)
// CHECK-NEXT:    %[[S0:.*]] = "sym.value"() {symbol = "s0"} : () -> index
// CHECK-NEXT:    "sym.bind"(%arg0, %[[S0]]) {dim = 0 : i64} : (!torch.vtensor<[?,4],f32>, index) -> ()
// CHECK-NEXT:    "sym.bind"(%arg1, %[[S0]]) : (!torch.int, index) -> ()
// CHECK-NEXT:    "sym.bind"(%arg2, %[[S0]]) : (index, index) -> ()
// CHECK-NEXT:    "sym.bind"(%arg3, %[[S0]]) {dim = 1 : i64} : (tensor<?x?xf32>, index) -> ()
// CHECK-NEXT:    return
func.func @bind(%x: !torch.vtensor<[?,4],f32>, %n: !torch.int, %i: index, %t: tensor<?x?xf32>) {
  %s0 = "sym.value"() {symbol = "s0"} : () -> index
  "sym.bind"(%x, %s0) {dim = 0 : i64} : (!torch.vtensor<[?,4],f32>, index) -> ()
  "sym.bind"(%n, %s0) : (!torch.int, index) -> ()
  "sym.bind"(%i, %s0) : (index, index) -> ()
  "sym.bind"(%t, %s0) {dim = 1 : i64} : (tensor<?x?xf32>, index) -> ()
  return
}

// CHECK-LABEL: func.func @guard(%arg0: i1)
// CHECK-NEXT:    "sym.guard"(%arg0) {origin = "x.size(0) >= 4  # model.py:12"} : (i1) -> ()
func.func @guard(%c: i1) {
  "sym.guard"(%c) {origin = "x.size(0) >= 4  # model.py:12"} : (i1) -> ()
  return
}

// CHECK-LABEL: func.func @assert(%arg0: i1)
// CHECK-NEXT:    "sym.assert"(%arg0) {msg = "expected x.size(0) to be even", origin = "model.py:13"} : (i1) -> ()
func.func @assert(%c: i1) {
  "sym.assert"(%c) {msg = "expected x.size(0) to be even", origin = "model.py:13"} : (i1) -> ()
  return
}

// The guard function convention: unit attr `sym.guards`, arg attr `sym.source` per input size.
// CHECK-LABEL: func.func @guards(%arg0: index {sym.source = "L['x'].size()[0]"}, %arg1: index {sym.source = "L['y'].size()[0]"}) attributes {sym.guards}
// CHECK-NEXT:    %[[S0:.*]] = "sym.value"() {symbol = "s0"} : () -> index
// CHECK-NEXT:    "sym.bind"(%arg0, %[[S0]]) : (index, index) -> ()
// CHECK-NEXT:    "sym.bind"(%arg1, %[[S0]]) : (index, index) -> ()
// CHECK-NEXT:    %[[C2:.*]] = "sym.constant"() {value = 2 : i64} : () -> index
// CHECK-NEXT:    %[[GE:.*]] = "sym.cmp"(%[[S0]], %[[C2]]) {predicate = "ge"} : (index, index) -> i1
// CHECK-NEXT:    "sym.guard"(%[[GE]]) {origin = "range of s0"} : (i1) -> ()
// CHECK-NEXT:    return
func.func @guards(%a: index {sym.source = "L['x'].size()[0]"}, %b: index {sym.source = "L['y'].size()[0]"}) attributes {sym.guards} {
  %s0 = "sym.value"() {symbol = "s0"} : () -> index
  "sym.bind"(%a, %s0) : (index, index) -> ()
  "sym.bind"(%b, %s0) : (index, index) -> ()
  %c2 = "sym.constant"() {value = 2 : i64} : () -> index
  %ge = "sym.cmp"(%s0, %c2) {predicate = "ge"} : (index, index) -> i1
  "sym.guard"(%ge) {origin = "range of s0"} : (i1) -> ()
  return
}
