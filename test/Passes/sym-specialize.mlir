// RUN: symopt %s --split-input-file --sym-specialize='values=s0:8' | filecheck %s

"sym.symbol"() {sym_name = "s0", lo = 2 : i64} : () -> ()
"sym.symbol"() {sym_name = "s1", lo = 2 : i64} : () -> ()
// CHECK: "sym.symbol"() {lo = 2 : i64, specialized = 8 : i64, sym_name = "s0"}
// CHECK-LABEL: func.func @guards
// CHECK: %[[C8:.*]] = "sym.constant"() {value = 8 : i64}
// CHECK: %[[EQ:.*]] = "sym.cmp"(%{{.*}}, %[[C8]]) {predicate = "eq"}
// CHECK: "sym.guard"(%[[EQ]]) {origin = "specialized s0 = 8"}
// CHECK-NEXT: return
func.func @guards(%a: index {sym.source = "x.size(0)"}, %b: index {sym.source = "x.size(1)"}) attributes {sym.guards} {
  %s0 = "sym.value"() {symbol = "s0"} : () -> index
  "sym.bind"(%a, %s0) : (index, index) -> ()
  %s1 = "sym.value"() {symbol = "s1"} : () -> index
  "sym.bind"(%b, %s1) : (index, index) -> ()
  return
}

// Dims bound to specialized expressions become static (2*s0 -> 16); s1 stays dynamic.
// CHECK-LABEL: func.func @main
// CHECK-SAME: (%arg0: !torch.int, %arg1: !torch.vtensor<[8,?,16],f32>)
// CHECK: torch.tensor_static_info_cast %arg1 : !torch.vtensor<[8,?,16],f32> to !torch.vtensor<[8,?,?],f32>
// CHECK: torch.tensor_static_info_cast %{{.*}} : !torch.vtensor<[8,?,?],f32> to !torch.vtensor<[?,?,?],f32>
// CHECK: %[[N:.*]] = torch.constant.int 8
// CHECK: torch.aten.mul.Scalar %{{.*}}, %[[N]]
func.func @main(%n: !torch.int, %x: !torch.vtensor<[?,?,?],f32>) -> !torch.vtensor<[?,?,?],f32> {
  %s0 = "sym.value"() {symbol = "s0"} : () -> index
  %s1 = "sym.value"() {symbol = "s1"} : () -> index
  %c2 = "sym.constant"() {value = 2 : i64} : () -> index
  %d2 = "sym.mul"(%c2, %s0) : (index, index) -> index
  "sym.bind"(%n, %s0) : (!torch.int, index) -> ()
  "sym.bind"(%x, %s0) {dim = 0 : i64} : (!torch.vtensor<[?,?,?],f32>, index) -> ()
  "sym.bind"(%x, %s1) {dim = 1 : i64} : (!torch.vtensor<[?,?,?],f32>, index) -> ()
  "sym.bind"(%x, %d2) {dim = 2 : i64} : (!torch.vtensor<[?,?,?],f32>, index) -> ()
  %y = torch.aten.mul.Scalar %x, %n : !torch.vtensor<[?,?,?],f32>, !torch.int -> !torch.vtensor<[?,?,?],f32>
  return %y : !torch.vtensor<[?,?,?],f32>
}
