// --verify-diagnostics: mlir-opt's expected-error/-warning/-remark/-note comments, @+N, @-N,
// @above, @below, same line, -re. Passes when every expectation is met and nothing else is emitted.
// RUN: symopt %s --split-input-file --verify-diagnostics
// RUN: symopt %s --split-input-file --verify-diagnostics --cse | filecheck %s --check-prefix=OUT
// Mismatches are located errors on stderr and a non-zero exit:
// RUN: not symopt %S/Inputs/verify-mismatch.mlir --split-input-file --verify-diagnostics 2>&1 \
// RUN:   | filecheck %s --check-prefix=MISMATCH
// Without --split-input-file the file is one module; the verifier reports every failing op, so the
// expectations still match:
// RUN: symopt %s --verify-diagnostics | filecheck %s --allow-empty --check-prefix=NOSPLIT
// NOSPLIT-NOT: {{.}}

func.func @plus_one(%a: index, %b: index) -> i1 {
  // expected-error @+1 {{unknown predicate 'slt'}}
  %0 = "sym.cmp"(%a, %b) {predicate = "slt"} : (index, index) -> i1
  return %0 : i1
}

// -----

func.func @above(%a: index, %b: index) -> i1 {
  %0 = "sym.cmp"(%a, %b) {predicate = "slt"} : (index, index) -> i1
  // expected-error @above {{unknown predicate 'slt'}}
  return %0 : i1
}

// -----

func.func @minus_two(%a: index, %b: index) -> i1 {
  %0 = "sym.cmp"(%a, %b) {predicate = "slt"} : (index, index) -> i1

  // expected-error @-2 {{'sym.cmp' op unknown predicate}}
  return %0 : i1
}

// -----

func.func @below(%a: index, %b: index) -> i1 {
  // expected-error @below {{unknown predicate 'slt'}}
  %0 = "sym.cmp"(%a, %b) {predicate = "slt"} : (index, index) -> i1
  return %0 : i1
}

// -----

func.func @same_line_re(%a: index, %b: index) -> i1 {
  %0 = "sym.cmp"(%a, %b) {predicate = "slt"} : (index, index) -> i1 // expected-error-re {{unknown predicate '{{s[a-z]+}}' (expected one of {{.*}})}}
  return %0 : i1
}

// -----

// A diagnostic with its note.
func.func @note(%c: index) {
  // expected-error @+1 {{expected base type 'builtin.integer' but got 'builtin.index'}}
  "sym.guard"(%c) {origin = "x"} : (index) -> ()
  return
}

// -----

// A chunk without expectations and without diagnostics.
func.func @clean() {
  return
}

// Chunks that went through are printed.
// OUT:     func.func @clean
// OUT-NOT: func.func

// MISMATCH-DAG: verify-mismatch.mlir:7:8: error: unexpected error: 'sym.cmp' op unknown predicate 'slt'
// MISMATCH-DAG: verify-mismatch.mlir:6:6: error: expected error "unknown predicate 'sge'" was not produced
// MISMATCH-DAG: verify-mismatch.mlir:14:6: error: expected error "never emitted" was not produced
// MISMATCH-DAG: verify-mismatch.mlir:21:8: error: unexpected error: 'sym.cmp' op unknown predicate 'slt'
// MISMATCH-DAG: verify-mismatch.mlir:29:8: error: 'error' diagnostic emitted when expecting a 'warning'
// MISMATCH-DAG: verify-mismatch.mlir:28:6: error: expected warning "unknown predicate" was not produced
// MISMATCH-DAG: verify-mismatch.mlir:36:6: error: expected error "unknown predicate" was not produced
// MISMATCH-DAG: verify-mismatch.mlir:37:8: error: unexpected error: 'sym.cmp' op unknown predicate
// MISMATCH:     symopt: error: {{.*}}verify-mismatch.mlir: diagnostics do not match the expected-* comments
