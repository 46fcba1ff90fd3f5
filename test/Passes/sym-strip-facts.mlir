// RUN: symopt %s --split-input-file --sym-strip-facts | filecheck %s

"sym.symbol"() {sym_name = "s0", lo = 2 : i64} : () -> ()
// Facts about tensor dims are erased and kept as the arg attribute sym.dims.
// CHECK-LABEL: func.func @strips_binds
// CHECK-SAME: {sym.dims = ["s0", "2*s0"]}
// CHECK-NOT: sym.bind
// CHECK-NOT: sym.value
// CHECK: return
func.func @strips_binds(%x: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %s0 = "sym.value"() {symbol = "s0"} : () -> index
  %c2 = "sym.constant"() {value = 2 : i64} : () -> index
  %d1 = "sym.mul"(%c2, %s0) : (index, index) -> index
  "sym.bind"(%x, %s0) {dim = 0 : i64} : (tensor<?x?xf32>, index) -> ()
  "sym.bind"(%x, %d1) {dim = 1 : i64} : (tensor<?x?xf32>, index) -> ()
  return %x : tensor<?x?xf32>
}

// A SymInt argument's bind becomes the arg attribute sym.int.
// CHECK-LABEL: func.func @strips_int_binds
// CHECK-SAME: (%arg0: !torch.int {sym.int = "s0"}, %arg1: tensor<?xf32> {sym.dims = ["2*s0"]})
// CHECK-NOT: sym.bind
func.func @strips_int_binds(%n: !torch.int, %x: tensor<?xf32>) -> tensor<?xf32> {
  %s0 = "sym.value"() {symbol = "s0"} : () -> index
  %c2 = "sym.constant"() {value = 2 : i64} : () -> index
  %d = "sym.mul"(%c2, %s0) : (index, index) -> index
  "sym.bind"(%n, %s0) : (!torch.int, index) -> ()
  "sym.bind"(%x, %d) {dim = 0 : i64} : (tensor<?xf32>, index) -> ()
  return %x : tensor<?xf32>
}

// The guard function keeps its facts: they are its checks.
// CHECK-LABEL: func.func @guards
// CHECK: "sym.bind"
func.func @guards(%a: index) attributes {sym.guards} {
  %s0 = "sym.value"() {symbol = "s0"} : () -> index
  "sym.bind"(%a, %s0) : (index, index) -> ()
  return
}
