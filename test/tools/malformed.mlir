// Malformed input: a located `file:line:col: error:` on stderr (with the source line and a caret),
// exit code 1, no traceback, nothing on stdout.
// RUN: not symopt %S/Inputs/malformed.mlir 2>&1 | filecheck %s
// RUN: not symopt %S/Inputs/malformed.mlir 2>/dev/null | filecheck %s --allow-empty --check-prefix=STDOUT
// With --split-input-file, lines are those of the whole file and the good chunks are still printed.
// RUN: not symopt %s --split-input-file 2>&1 >/dev/null | filecheck %s --check-prefix=SPLIT
// RUN: not symopt %s --split-input-file 2>/dev/null | filecheck %s --check-prefix=SPLIT-OUT

// CHECK-NOT:  Traceback
// CHECK:      {{.*}}Inputs/malformed.mlir:6:8: error: custom op 'foo' is unknown
// CHECK-NEXT:   %1 = foo %0
// CHECK-NEXT:        ^
// CHECK-NOT:  Traceback

// STDOUT-NOT: {{.}}

// SPLIT:      {{.*}}malformed.mlir:37:3: error: 'sym.guard' op expects i1 operands, got i32
// SPLIT-NEXT:   "sym.guard"(%c) {origin = "x"} : (i32) -> ()
// SPLIT-NEXT:   ^
// SPLIT-NEXT: {{.*}}malformed.mlir:43:22: error: expected '('
// SPLIT-NOT:  error

// SPLIT-OUT:      func.func @ok
// SPLIT-OUT-NEXT:   return
// SPLIT-OUT:      // -----
// SPLIT-OUT-NEXT: module {
// SPLIT-OUT-NEXT:   func.func @also_ok
// SPLIT-OUT-NOT:  func.func

func.func @ok() {
  return
}

// -----

func.func @bad_guard(%c: i32) {
  "sym.guard"(%c) {origin = "x"} : (i32) -> ()
  return
}

// -----

func.func @bad_syntax{
}

// -----

func.func @also_ok() {
  return
}
