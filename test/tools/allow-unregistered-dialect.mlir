// Ops of unknown dialects are an error unless --allow-unregistered-dialect is given.
// RUN: not symopt %s 2>&1 | filecheck %s --check-prefix=ERR
// RUN: symopt %s --allow-unregistered-dialect | filecheck %s

// ERR: allow-unregistered-dialect.mlir:[[# @LINE + 4]]:17: error: operation being parsed with an unregistered dialect
// CHECK-LABEL: func.func @f
// CHECK-NEXT:    "foo.bar"(%arg0) : (index) -> index
func.func @f(%a: index) -> index {
  %0 = "foo.bar"(%a) : (index) -> index
  return %0 : index
}
