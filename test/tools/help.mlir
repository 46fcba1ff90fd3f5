// --help lists the flags, every registered mlir_sym pass with its summary, and says that any
// upstream pass is accepted as a flag.
// RUN: symopt --help | filecheck %s
// RUN: symopt --help > %t
// RUN: %PYTHON -c "import sys; from mlir_sym.passes import registry; text = open(sys.argv[1]).read(); missing = ['--%%s %%s' %% (n, c.summary()) for n, c in registry.registered().items() if '--' + n not in text or c.summary() not in text]; sys.exit('missing from --help: %%s' %% missing if missing else 0)" %t

// CHECK:      usage: symopt
// CHECK-DAG:  --pass-pipeline
// CHECK-DAG:  --split-input-file
// CHECK-DAG:  --verify-diagnostics
// CHECK-DAG:  --mlir-print-ir-after-all
// CHECK-DAG:  --mlir-timing
// CHECK-DAG:  --mlir-print-op-generic
// CHECK-DAG:  --allow-unregistered-dialect
// CHECK-DAG:  -o FILE
// CHECK:      mlir_sym passes
// Options are listed with their defaults (hyphenated names read from the pass's attributes):
// CHECK-DAG:  max-reduction-block=int (default: 256)
// CHECK-DAG:  fuse-rows=int (default: 1)
// CHECK:      upstream passes: every pass of the bundled MLIR is accepted as a flag
