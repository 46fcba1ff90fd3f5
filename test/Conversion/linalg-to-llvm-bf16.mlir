// RUN: symopt %s --linalg-to-llvm | filecheck %s

// bf16 arithmetic and math are done in f32 (arith-emulate-unsupported-floats,
// math-extend-to-supported-types) and bf16 conversions are expanded into integer arithmetic
// (arith-expand with bf16) before the LLVM dialect: x86 without AVX512-BF16 would otherwise call
// __truncsfbf2, which the JIT cannot resolve ("Symbols not found: [ __truncsfbf2 ]" on such hosts).
// CHECK-LABEL: llvm.func @to_bf16
// CHECK-NOT:     llvm.fptrunc
// CHECK-NOT:     llvm.fpext
// CHECK-NOT:     : bf16
// CHECK:         llvm.lshr
// CHECK:         llvm.return
#id = affine_map<(d0) -> (d0)>
func.func @to_bf16(%x: tensor<?xf32>) -> tensor<?xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?xf32>
  %e = tensor.empty(%n) : tensor<?xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%x : tensor<?xf32>) outs(%e : tensor<?xf32>) {
  ^bb0(%a: f32, %o: f32):
    %b = arith.truncf %a : f32 to bf16
    %d = arith.addf %b, %b : bf16
    %ex = math.exp %d : bf16
    %y = arith.extf %ex : bf16 to f32
    linalg.yield %y : f32
  } -> tensor<?xf32>
  return %r : tensor<?xf32>
}
