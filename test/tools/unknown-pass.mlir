// An unknown pass flag (or pipeline element) is an error naming the pass and listing ours.
// RUN: not symopt %s --no-such-pass 2>&1 | filecheck %s
// RUN: not symopt %s --cse --no-such-pass='x=1' 2>&1 | filecheck %s
// RUN: not symopt %s --pass-pipeline='builtin.module(cse,no-such-pass)' 2>&1 | filecheck %s
// RUN: not symopt %s --no-such-pass 2>/dev/null | filecheck %s --allow-empty --check-prefix=STDOUT
// Each registered mlir_sym pass is listed:
// RUN: not symopt %s --no-such-pass 2> %t.err
// RUN: %PYTHON -c "import sys; from mlir_sym.passes import registry; text = open(sys.argv[1]).read(); missing = [n for n in registry.registered() if n not in text]; sys.exit('not listed: %%s' %% missing if missing else 0)" %t.err

// CHECK: symopt: error: unknown pass 'no-such-pass'. mlir_sym passes: {{.*}}; upstream passes: any pass of the bundled MLIR
// CHECK-NOT: Traceback
// STDOUT-NOT: {{.}}

func.func @f() {
  return
}
