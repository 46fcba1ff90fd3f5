// RUN: symopt %s --split-input-file --verify-diagnostics --sym-gpu-map-parallel

func.func @parallel_with_results(%x: memref<?xf32>, %n: index) -> i32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %ok = arith.constant 0 : i32
  // expected-error @+1 {{scf.parallel with reductions (results) is not supported on the GPU path}}
  %s = scf.parallel (%i) = (%c0) to (%n) step (%c1) init (%zero) -> f32 {
    %v = memref.load %x[%i] : memref<?xf32>
    scf.reduce(%v : f32) {
    ^bb0(%a: f32, %b: f32):
      %t = arith.addf %a, %b : f32
      scf.reduce.return %t : f32
    }
  }
  return %ok : i32
}

// -----

// The status returned to the host would be read from device memory.
func.func @device_value_on_host(%flag: memref<1xi32>) -> i32 {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{'memref.load' computes a value the host needs; the GPU path cannot read device results on the host}}
  %s = memref.load %flag[%c0] : memref<1xi32>
  return %s : i32
}
