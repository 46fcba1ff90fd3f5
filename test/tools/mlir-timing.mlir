// --mlir-timing reports the wall time of each pass, ours and upstream ones alike, on stderr; the
// output IR is unchanged.
// RUN: symopt %s --sym-canonicalize --cse --mlir-timing 2> %t.err | filecheck %s --check-prefix=OUT
// RUN: filecheck %s --check-prefix=TIME < %t.err
// RUN: symopt %s --cse 2>&1 >/dev/null | filecheck %s --check-prefix=NOTIME --allow-empty

// OUT-LABEL: func.func @f
// OUT: return
func.func @f(%a: index) -> index {
  return %a : index
}

// TIME: Execution time report
// TIME: Wall Time
// TIME-DAG: sym-canonicalize
// TIME-DAG: CSEPass
// TIME: Total

// NOTIME-NOT: Execution time report
