// A failing pass: its located diagnostics on stderr, exit code 1, no traceback, no output for
// that chunk. Under --verify-diagnostics the pass's diagnostics are matched like the verifier's.
// RUN: not symopt %s --one-shot-bufferize 2>&1 | filecheck %s
// RUN: not symopt %s --one-shot-bufferize 2>/dev/null | filecheck %s --allow-empty --check-prefix=STDOUT
// RUN: symopt %s --one-shot-bufferize --verify-diagnostics
// The same input is fine without the pass:
// RUN: symopt %s | filecheck %s --check-prefix=NOPASS

// CHECK-NOT:  Traceback
// CHECK:      {{.*}}pass-failure.mlir:[[# @LINE + 8]]:3: error: op was not bufferized
// CHECK-NEXT:   "sym.bind"(%t, %n) {dim = 0 : i64} : (tensor<?xf32>, index) -> ()
// CHECK-NEXT:   ^
// CHECK-NOT:  Traceback
// STDOUT-NOT: {{.}}
// NOPASS: "sym.bind"(%arg0, %arg1) {dim = 0 : i64}
func.func @from_a_pass(%t: tensor<?xf32>, %n: index) {
  // expected-error @+1 {{op was not bufferized}}
  "sym.bind"(%t, %n) {dim = 0 : i64} : (tensor<?xf32>, index) -> ()
  return
}
