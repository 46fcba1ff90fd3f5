// sym-assert-elim: cf.asserts of lowered compute IR proven by the size facts (arg attr sym.dims, one
// sympy-syntax string per dimension; static sizes; dims >= 0; declared symbol ranges; earlier asserts)
// are erased with the arithmetic only they used; anything unknown keeps its assert.
// RUN: symopt %s --split-input-file --verify-diagnostics --sym-assert-elim | filecheck %s

// CHECK-LABEL: func.func @mm_contracting
// CHECK-NOT:     cf.assert
// CHECK-NOT:     arith.cmpi
// CHECK:         linalg.matmul
func.func @mm_contracting(%arg0: tensor<?x?xf32> {sym.dims = ["s0", "s1"]}, %arg1: tensor<?x?xf32> {sym.dims = ["s1", "s2"]}) -> tensor<?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %cst = arith.constant 0.000000e+00 : f32
  %dim = tensor.dim %arg0, %c0 : tensor<?x?xf32>
  %dim_1 = tensor.dim %arg1, %c1 : tensor<?x?xf32>
  %dim_2 = tensor.dim %arg0, %c1 : tensor<?x?xf32>
  %dim_3 = tensor.dim %arg1, %c0 : tensor<?x?xf32>
  %0 = arith.cmpi eq, %dim_2, %dim_3 : index
  cf.assert %0, "mismatching contracting dimension for torch.aten.mm"
  %1 = tensor.empty(%dim, %dim_1) : tensor<?x?xf32>
  %2 = linalg.fill ins(%cst : f32) outs(%1 : tensor<?x?xf32>) -> tensor<?x?xf32>
  %3 = linalg.matmul ins(%arg0, %arg1 : tensor<?x?xf32>, tensor<?x?xf32>) outs(%2 : tensor<?x?xf32>) -> tensor<?x?xf32>
  return %3 : tensor<?x?xf32>
}

// CHECK-LABEL: func.func @no_elim_when_dims_differ
// CHECK:         %[[EQ:.*]] = arith.cmpi eq
// CHECK-NEXT:    cf.assert %[[EQ]], "mismatching contracting dimension for torch.aten.mm"
func.func @no_elim_when_dims_differ(%arg0: tensor<?x?xf32> {sym.dims = ["s0", "s1"]}, %arg1: tensor<?x?xf32> {sym.dims = ["s2", "s3"]}) -> index {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %dim_2 = tensor.dim %arg0, %c1 : tensor<?x?xf32>
  %dim_3 = tensor.dim %arg1, %c0 : tensor<?x?xf32>
  %0 = arith.cmpi eq, %dim_2, %dim_3 : index
  cf.assert %0, "mismatching contracting dimension for torch.aten.mm"
  return %dim_2 : index
}

// CHECK-LABEL: func.func @no_elim_without_facts
// CHECK:         %[[EQ:.*]] = arith.cmpi eq
// CHECK-NEXT:    cf.assert %[[EQ]], "mismatching contracting dimension for torch.aten.mm"
func.func @no_elim_without_facts(%arg0: tensor<?x?xf32>, %arg1: tensor<?x?xf32>) -> index {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %dim_2 = tensor.dim %arg0, %c1 : tensor<?x?xf32>
  %dim_3 = tensor.dim %arg1, %c0 : tensor<?x?xf32>
  %0 = arith.cmpi eq, %dim_2, %dim_3 : index
  cf.assert %0, "mismatching contracting dimension for torch.aten.mm"
  return %dim_2 : index
}

// torch-mlir's reshape/broadcast checks of `(a + b).reshape(a.shape[0], a.shape[1])`: the broadcast
// checks follow from sym.dims, the "negative values" checks from dims being >= 0 (through
// index_cast), the inferred-dimension count through select/extui on decided conditions.
// CHECK-LABEL: func.func @broadcast_reshape
// CHECK-NOT:     cf.assert
// CHECK:         arith.divsi
// CHECK-NOT:     cf.assert
// CHECK:         return
func.func @broadcast_reshape(%arg0: tensor<?x?xf32> {sym.dims = ["s0", "s1"]}, %arg1: tensor<?x?xf32> {sym.dims = ["s0", "s1"]}) -> (i64, i64) {
  %c1_i64 = arith.constant 1 : i64
  %c0_i64 = arith.constant 0 : i64
  %c1 = arith.constant 1 : index
  %c0 = arith.constant 0 : index
  %dim = tensor.dim %arg1, %c0 : tensor<?x?xf32>
  %0 = arith.index_cast %dim : index to i64
  %dim_0 = tensor.dim %arg1, %c1 : tensor<?x?xf32>
  %1 = arith.index_cast %dim_0 : index to i64
  %dim_1 = tensor.dim %arg0, %c0 : tensor<?x?xf32>
  %dim_2 = tensor.dim %arg0, %c1 : tensor<?x?xf32>
  %2 = arith.cmpi eq, %dim_1, %dim : index
  cf.assert %2, "mismatched size for broadcast"
  %3 = arith.cmpi eq, %dim_2, %dim_0 : index
  cf.assert %3, "mismatched size for broadcast"
  %6 = arith.cmpi slt, %0, %c0_i64 : i64
  %7 = arith.select %6, %c1_i64, %0 : i64
  %8 = arith.extui %6 : i1 to i64
  %9 = arith.muli %7, %1 : i64
  %10 = arith.addi %8, %c1_i64 : i64
  %11 = arith.cmpi slt, %1, %c0_i64 : i64
  %12 = arith.select %11, %7, %9 : i64
  %13 = arith.select %11, %10, %8 : i64
  %14 = arith.cmpi sle, %13, %c1_i64 : i64
  cf.assert %14, "must have at most one inferred (negative) dimension"
  %15 = arith.index_cast %dim_1 : index to i64
  %16 = arith.index_cast %dim_2 : index to i64
  %17 = arith.muli %15, %16 : i64
  %18 = arith.divsi %17, %12 : i64
  %19 = arith.select %6, %18, %0 : i64
  %20 = arith.select %11, %18, %1 : i64
  %21 = arith.cmpi sge, %0, %c0_i64 : i64
  cf.assert %21, "negative values not allowed in new dimensions"
  %22 = arith.cmpi sge, %1, %c0_i64 : i64
  cf.assert %22, "negative values not allowed in new dimensions"
  %25 = arith.index_cast %19 : i64 to index
  %26 = arith.index_cast %20 : i64 to index
  %27 = arith.cmpi eq, %25, %dim : index
  cf.assert %27, "mismatched size for broadcast"
  %28 = arith.cmpi eq, %26, %dim_0 : index
  cf.assert %28, "mismatched size for broadcast"
  return %19, %20 : i64, i64
}

// Without sym.dims only the sign checks go.
// CHECK-LABEL: func.func @negative_values_only
// CHECK-NOT:     "negative values not allowed
// CHECK:         %[[EQ:.*]] = arith.cmpi eq
// CHECK-NEXT:    cf.assert %[[EQ]], "mismatched size for broadcast"
// CHECK-NEXT:    return
func.func @negative_values_only(%arg0: tensor<?x?xf32>, %arg1: tensor<?x?xf32>) -> i64 {
  %c0_i64 = arith.constant 0 : i64
  %c0 = arith.constant 0 : index
  %dim = tensor.dim %arg1, %c0 : tensor<?x?xf32>
  %dim_1 = tensor.dim %arg0, %c0 : tensor<?x?xf32>
  %0 = arith.index_cast %dim : index to i64
  %21 = arith.cmpi sge, %0, %c0_i64 : i64
  cf.assert %21, "negative values not allowed in new dimensions"
  %2 = arith.cmpi eq, %dim_1, %dim : index
  cf.assert %2, "mismatched size for broadcast"
  return %0 : i64
}

// Expressions, static sizes, unsigned compares of non-negative values, and/or/xor.
// CHECK-LABEL: func.func @expressions
// CHECK-NEXT:    return
func.func @expressions(%arg0: tensor<?x4xf32> {sym.dims = ["2*s0", "4"]}, %arg1: tensor<?x?xf32> {sym.dims = ["s0*2", "s0 + 1"]}, %arg2: memref<?xf32> {sym.dims = ["s0"]}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %true = arith.constant true
  %a0 = tensor.dim %arg0, %c0 : tensor<?x4xf32>
  %a1 = tensor.dim %arg0, %c1 : tensor<?x4xf32>
  %b0 = tensor.dim %arg1, %c0 : tensor<?x?xf32>
  %b1 = tensor.dim %arg1, %c1 : tensor<?x?xf32>
  %m0 = memref.dim %arg2, %c0 : memref<?xf32>
  %e0 = arith.cmpi eq, %a0, %b0 : index
  cf.assert %e0, "2*s0 == s0*2"
  %e1 = arith.cmpi ugt, %b1, %m0 : index
  cf.assert %e1, "s0 + 1 > s0 (unsigned)"
  %e2 = arith.cmpi eq, %a1, %c1 : index
  %e3 = arith.cmpi ne, %a1, %c0 : index
  %or = arith.ori %e2, %e3 : i1
  cf.assert %or, "4 == 1 or 4 != 0"
  %two = arith.muli %m0, %c1 : index
  %sum = arith.addi %two, %m0 : index
  %e4 = arith.cmpi eq, %sum, %a0 : index
  %e5 = arith.cmpi ne, %b1, %c0 : index
  %and = arith.andi %e4, %e5 : i1
  cf.assert %and, "s0 + s0 == 2*s0 and s0 + 1 != 0"
  %e6 = arith.cmpi slt, %b1, %m0 : index
  %not = arith.xori %e6, %true : i1
  cf.assert %not, "not (s0 + 1 < s0)"
  return
}

// An assert that holds only by an earlier one: kept facts carry forward in the entry block.
// CHECK-LABEL: func.func @earlier_assert_is_a_fact
// CHECK:         cf.assert %{{.*}}, "s0 < s1: unknown, stays"
// CHECK-NEXT:    return
func.func @earlier_assert_is_a_fact(%arg0: tensor<?xf32> {sym.dims = ["s0"]}, %arg1: tensor<?xf32> {sym.dims = ["s1"]}) {
  %c0 = arith.constant 0 : index
  %a = tensor.dim %arg0, %c0 : tensor<?xf32>
  %b = tensor.dim %arg1, %c0 : tensor<?xf32>
  %lt = arith.cmpi slt, %a, %b : index
  cf.assert %lt, "s0 < s1: unknown, stays"
  %le = arith.cmpi sle, %a, %b : index
  cf.assert %le, "s0 <= s1: implied by the assert above"
  return
}

// Unknown values keep their asserts.
// CHECK-LABEL: func.func @no_elim_unknown
// CHECK:         cf.assert %arg1, "opaque"
// CHECK-NEXT:    arith.cmpi eq
// CHECK-NEXT:    cf.assert %{{.*}}, "s0 == an index argument"
// CHECK-NEXT:    arith.cmpi ult
// CHECK-NEXT:    cf.assert %{{.*}}, "unsigned compare of a value that may be negative"
// CHECK-NEXT:    return
func.func @no_elim_unknown(%arg0: tensor<?xf32> {sym.dims = ["s0"]}, %p: i1, %n: index) {
  %c0 = arith.constant 0 : index
  %a = tensor.dim %arg0, %c0 : tensor<?xf32>
  cf.assert %p, "opaque"
  %e = arith.cmpi eq, %a, %n : index
  cf.assert %e, "s0 == an index argument"
  %u = arith.cmpi ult, %n, %a : index
  cf.assert %u, "unsigned compare of a value that may be negative"
  return
}

// A SymInt argument's value (sym.int) and tensor dims read through the ops that made the tensors:
// torch-mlir's heads split at a dynamic batch ([b*s, 768] expanded to [b, s, 768] by the SymInt
// arguments, sliced, expanded into heads, a linalg result sized by its init) and the products' size
// checks through affine.apply. Without the facts the same checks stay (next function).
// CHECK-LABEL: func.func @dims_through_producers
// CHECK-NOT:     cf.assert
// CHECK:         return
#sz = affine_map<()[s0] -> (s0 * 4)>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func @dims_through_producers(%arg0: i64 {sym.int = "s0"}, %arg1: i64 {sym.int = "s1"}, %x: tensor<?x768xf32> {sym.dims = ["s0*s1", "768"]}, %ids: tensor<?x?xi64> {sym.dims = ["s0", "s1"]}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %b = arith.index_cast %arg0 : i64 to index
  %s = arith.index_cast %arg1 : i64 to index
  %e = tensor.expand_shape %x [[0, 1], [2]] output_shape [%b, %s, 768] : tensor<?x768xf32> into tensor<?x?x768xf32>
  %d0 = tensor.dim %e, %c0 : tensor<?x?x768xf32>
  %d1 = tensor.dim %e, %c1 : tensor<?x?x768xf32>
  %sl = tensor.extract_slice %e[0, 0, 256] [%d0, %d1, 256] [1, 1, 1] : tensor<?x?x768xf32> to tensor<?x?x256xf32>
  %h = tensor.expand_shape %sl [[0], [1], [2, 3]] output_shape [%d0, %d1, 4, 64] : tensor<?x?x256xf32> into tensor<?x?x4x64xf32>
  %h0 = tensor.dim %h, %c0 : tensor<?x?x4x64xf32>
  %i0 = tensor.dim %ids, %c0 : tensor<?x?xi64>
  %same_batch = arith.cmpi eq, %h0, %i0 : index
  cf.assert %same_batch, "batch of the heads"
  %empty = tensor.empty(%d0, %d1) : tensor<?x?x256xf32>
  %g = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%sl : tensor<?x?x256xf32>) outs(%empty : tensor<?x?x256xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<?x?x256xf32>
  %c = tensor.collapse_shape %g [[0, 1], [2]] : tensor<?x?x256xf32> into tensor<?x256xf32>
  %rows = tensor.dim %c, %c0 : tensor<?x256xf32>
  %x0 = tensor.dim %x, %c0 : tensor<?x768xf32>
  %same_rows = arith.cmpi eq, %rows, %x0 : index
  cf.assert %same_rows, "rows of the collapse"
  %a = affine.apply #sz()[%h0]
  %a2 = affine.apply #sz()[%b]
  %same_product = arith.cmpi eq, %a, %a2 : index
  cf.assert %same_product, "4 * batch"
  return
}

// CHECK-LABEL: func.func @symint_without_fact
// CHECK:         cf.assert
func.func @symint_without_fact(%arg0: i64, %ids: tensor<?x?xi64> {sym.dims = ["s0", "s1"]}) {
  %c0 = arith.constant 0 : index
  %b = arith.index_cast %arg0 : i64 to index
  %i0 = tensor.dim %ids, %c0 : tensor<?x?xi64>
  %eq = arith.cmpi eq, %b, %i0 : index
  cf.assert %eq, "batch"
  return
}

// -----

"sym.symbol"() {sym_name = "s0", lo = 2 : i64, hi = 64 : i64} : () -> ()

// Declared ranges are facts.
// CHECK-LABEL: func.func @declared_ranges
// CHECK-NOT:     "s0 != 1"
// CHECK-NOT:     "s0 <= 64"
// CHECK:         %[[LT:.*]] = arith.cmpi slt
// CHECK-NEXT:    cf.assert %[[LT]], "s0 < 64: stays"
// CHECK-NEXT:    return
func.func @declared_ranges(%arg0: tensor<?xf32> {sym.dims = ["s0"]}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %a = tensor.dim %arg0, %c0 : tensor<?xf32>
  %ne = arith.cmpi ne, %a, %c1 : index
  cf.assert %ne, "s0 != 1"
  %le = arith.cmpi sle, %a, %c64 : index
  cf.assert %le, "s0 <= 64"
  %lt = arith.cmpi slt, %a, %c64 : index
  cf.assert %lt, "s0 < 64: stays"
  return
}

// -----

"sym.symbol"() {sym_name = "s0", lo = 2 : i64} : () -> ()

// expected-error @+1 {{sym.dims of argument 1, dim 0: unknown symbol 's9'}}
func.func @unknown_symbol(%arg0: tensor<?xf32> {sym.dims = ["s0"]}, %arg1: tensor<?xf32> {sym.dims = ["s9 + 1"]}) {
  return
}

// -----

// expected-error @+1 {{sym.dims of argument 0, dim 0: cannot parse size expression 's0 +'}}
func.func @bad_expression(%arg0: tensor<?xf32> {sym.dims = ["s0 +"]}) {
  return
}

// -----

// expected-error @+1 {{sym.dims of argument 0 has 1 entries for a rank-2 argument}}
func.func @bad_rank(%arg0: tensor<?x?xf32> {sym.dims = ["s0"]}) {
  return
}

// -----

// expected-error @+1 {{sym.dims of argument 0, dim 1: '3' contradicts the static size 4}}
func.func @bad_static(%arg0: tensor<?x4xf32> {sym.dims = ["s0", "3"]}) {
  return
}

// -----

// expected-error @+1 {{sym.int on argument 0 of type tensor<f32>, not an integer}}
func.func @int_fact_on_a_tensor(%arg0: tensor<f32> {sym.int = "s0"}) {
  return
}

// -----

// expected-error @+1 {{sym.int of argument 0: cannot parse size expression '2 *'}}
func.func @bad_int_fact(%arg0: i64 {sym.int = "2 *"}) {
  return
}

// -----

// The ranges a compute module records (`sym.ranges`: split_guards keeps the declarations with the
// guard function, which checks them): BERT's token_type_ids slice is min(max(s, 0), 512) long,
// which is s for s in [2, 512], so the broadcast check against s goes.
// CHECK-LABEL: func.func @recorded_ranges
// CHECK-NOT:   cf.assert
// CHECK:       return
module attributes {sym.ranges = {s0 = "2:512"}} {
  func.func @recorded_ranges(%arg0: i64 {sym.int = "s0"}) -> index {
    %c0 = arith.constant 0 : index
    %c512 = arith.constant 512 : index
    %0 = arith.index_cast %arg0 : i64 to index
    %1 = arith.maxsi %0, %c0 : index
    %2 = arith.minsi %1, %c512 : index
    %3 = arith.cmpi eq, %2, %0 : index
    cf.assert %3, "mismatched size for broadcast"
    return %2 : index
  }
}

// -----

// Without an upper bound, min(s, 512) may differ from s: the check stays.
// CHECK-LABEL: func.func @recorded_ranges_unbounded
// CHECK:       cf.assert
module attributes {sym.ranges = {s0 = "2:"}} {
  func.func @recorded_ranges_unbounded(%arg0: i64 {sym.int = "s0"}) -> index {
    %c512 = arith.constant 512 : index
    %0 = arith.index_cast %arg0 : i64 to index
    %1 = arith.minsi %0, %c512 : index
    %2 = arith.cmpi eq, %1, %0 : index
    cf.assert %2, "mismatched size for broadcast"
    return %1 : index
  }
}

// -----

// A library call's results have its operands' sizes (`sym.result_dims`, sym-torch-attention's
// training attention): the packed backward's [B, L, 3 * H * E] result has dims 0, 1 of operand 1
// (q), so its size check against the SymInts goes; a dim the attribute does not give (-1) is unknown.
// CHECK-LABEL: func.func @library_call_result_dims
// CHECK-NOT:   cf.assert {{.*}}"B * L"
// CHECK:       cf.assert {{.*}}"unknown dim"
func.func @library_call_result_dims(%g: tensor<?x?x4x16xf32> {sym.dims = ["s0", "s1", "4", "16"]}, %q: tensor<?x?x4x16xf32> {sym.dims = ["s0", "s1", "4", "16"]}, %lse: tensor<?x4x?xf32> {sym.dims = ["s0", "4", "s1"]}, %b: i64 {sym.int = "s0"}, %l: i64 {sym.int = "s1"}) -> tensor<?x?x192xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = call @__sym_sdpa_backward_packed_0(%g, %q, %q, %q, %g, %lse) {sym.causal = true, sym.result_dims = [array<i64: 1, 0, 1, 1, -1, -1>], sym.scale = 1.250000e-01 : f64} : (tensor<?x?x4x16xf32>, tensor<?x?x4x16xf32>, tensor<?x?x4x16xf32>, tensor<?x?x4x16xf32>, tensor<?x?x4x16xf32>, tensor<?x4x?xf32>) -> tensor<?x?x192xf32>
  %d0 = tensor.dim %r, %c0 : tensor<?x?x192xf32>
  %d1 = tensor.dim %r, %c1 : tensor<?x?x192xf32>
  %n = arith.muli %d0, %d1 : index
  %bi = arith.index_cast %b : i64 to index
  %li = arith.index_cast %l : i64 to index
  %bl = arith.muli %bi, %li : index
  %ok = arith.cmpi eq, %n, %bl : index
  cf.assert %ok, "B * L"
  %u = call @__sym_other_0(%q) {sym.result_dims = [array<i64: -1, -1>]} : (tensor<?x?x4x16xf32>) -> tensor<?xf32>
  %du = tensor.dim %u, %c0 : tensor<?xf32>
  %ok2 = arith.cmpi eq, %du, %bi : index
  cf.assert %ok2, "unknown dim"
  return %r : tensor<?x?x192xf32>
}
func.func private @__sym_sdpa_backward_packed_0(tensor<?x?x4x16xf32>, tensor<?x?x4x16xf32>, tensor<?x?x4x16xf32>, tensor<?x?x4x16xf32>, tensor<?x?x4x16xf32>, tensor<?x4x?xf32>) -> tensor<?x?x192xf32> attributes {sym.library_call = "sdpa_backward_packed"}
func.func private @__sym_other_0(tensor<?x?x4x16xf32>) -> tensor<?xf32> attributes {sym.library_call = "other"}

// -----

// Sizes equal by a guard the module records (`sym.equalities`: inputs marked dynamic have symbols of
// their own, and cross entropy's logits rows s2*s3 are guarded equal to the targets' s0*s1): the
// check between them goes, read from the dims or from the product of the SymInt arguments alike. A size the
// equalities do not cover keeps its check.
// CHECK-LABEL: func.func @guarded_equal_products
// CHECK-NOT:   cf.assert {{.*}}"rows"
// CHECK-NOT:   cf.assert {{.*}}"flat"
// CHECK:       cf.assert {{.*}}"not covered"
module attributes {sym.equalities = [["s2*s3", "s0*s1"]]} {
func.func @guarded_equal_products(%logits: tensor<?x8192xf32> {sym.dims = ["s2*s3", "8192"]}, %t: tensor<?xi64> {sym.dims = ["s0*s1"]}, %a: i64 {sym.int = "s2"}, %b: i64 {sym.int = "s3"}, %u: tensor<?xi64> {sym.dims = ["s0"]}) -> index {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %logits, %c0 : tensor<?x8192xf32>
  %m = tensor.dim %t, %c0 : tensor<?xi64>
  %ok = arith.cmpi eq, %n, %m : index
  cf.assert %ok, "rows"
  %ai = arith.index_cast %a : i64 to index
  %bi = arith.index_cast %b : i64 to index
  %ab = arith.muli %ai, %bi : index
  %ok2 = arith.cmpi eq, %ab, %m : index
  cf.assert %ok2, "flat"
  %k = tensor.dim %u, %c0 : tensor<?xi64>
  %ok3 = arith.cmpi eq, %k, %ai : index
  cf.assert %ok3, "not covered"
  return %m : index
}
}

// -----

module attributes {sym.equalities = [["s0", "s9 + 1"]]} {
"sym.symbol"() {sym_name = "s0", lo = 2 : i64} : () -> ()
// expected-error @+1 {{sym.equalities entry 0: unknown symbol 's9'}}
func.func @unknown_symbol_in_an_equality(%arg0: tensor<?xf32> {sym.dims = ["s0"]}) {
  return
}
}
