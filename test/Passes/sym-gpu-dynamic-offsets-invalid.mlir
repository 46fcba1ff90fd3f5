// RUN: symopt %s --sym-gpu-dynamic-offsets --verify-diagnostics

// A view made inside the kernel of a buffer with a static offset would keep that offset in its type:
// not supported (no pass makes it), said at the view.
func.func @view_inside_launch(%a: memref<?x192xf32>, %out: memref<64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %a, %c0 : memref<?x192xf32>
  %v = memref.subview %a[0, 64] [%n, 64] [1, 1] : memref<?x192xf32> to memref<?x64xf32, strided<[192, 1], offset: 64>>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    // expected-error @+1 {{a view (memref.subview) inside a gpu.launch of a buffer with a static offset is not supported}}
    %row = memref.subview %v[0, 0] [1, 64] [1, 1] : memref<?x64xf32, strided<[192, 1], offset: 64>> to memref<64xf32, strided<[1], offset: 64>>
    %x = memref.load %row[%c0] : memref<64xf32, strided<[1], offset: 64>>
    memref.store %x, %out[%c0] : memref<64xf32>
    gpu.terminator
  }
  return
}
