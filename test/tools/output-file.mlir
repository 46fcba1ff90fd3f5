// -o writes the output to a file and nothing to stdout.
// RUN: rm -f %t
// RUN: symopt %s --cse -o %t | filecheck %s --allow-empty --check-prefix=STDOUT
// RUN: filecheck %s < %t
// RUN: symopt %s -o - | filecheck %s --check-prefix=CHECK
// RUN: symopt %s --split-input-file -o %t.split
// RUN: filecheck %s --check-prefix=SPLIT < %t.split

// STDOUT-NOT: {{.}}

// CHECK-LABEL: func.func @f(%arg0: index) -> index
// CHECK-NEXT:    %[[R:.*]] = "sym.add"(%arg0, %arg0) : (index, index) -> index
// CHECK-NEXT:    return %[[R]] : index
func.func @f(%a: index) -> index {
  %0 = "sym.add"(%a, %a) : (index, index) -> index
  return %0 : index
}

// SPLIT-LABEL: func.func @f(
// SPLIT-NOT:   func.func
// SPLIT:       // -----
// SPLIT-NEXT: module {
// SPLIT-NEXT:   func.func @g()

// -----

func.func @g() {
  return
}
