// RUN: symopt %s --split-input-file --sym-memref-copy-to-linalg | filecheck %s

// CHECK-LABEL: func.func @strided_source
// CHECK: linalg.copy {{.*}}ins(%arg0 : memref<?xf32, strided<[?], offset: ?>>) outs(%arg1 : memref<?xf32>)
// CHECK-NOT: memref.copy
func.func @strided_source(%a: memref<?xf32, strided<[?], offset: ?>>, %b: memref<?xf32>) {
  memref.copy %a, %b : memref<?xf32, strided<[?], offset: ?>> to memref<?xf32>
  return
}

// Contiguous copies lower to llvm.memcpy: left alone.
// CHECK-LABEL: func.func @no_rewrite_when_contiguous
// CHECK: memref.copy %arg0, %arg1 : memref<?x4xf32> to memref<?x4xf32>
func.func @no_rewrite_when_contiguous(%a: memref<?x4xf32>, %b: memref<?x4xf32>) {
  memref.copy %a, %b : memref<?x4xf32> to memref<?x4xf32>
  return
}
