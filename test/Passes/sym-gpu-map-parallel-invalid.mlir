// RUN: symopt %s --split-input-file --verify-diagnostics --sym-gpu-map-parallel
// A reduction block size the launch cannot use is refused, named:
// RUN: not symopt %s --split-input-file --sym-gpu-map-parallel='max-reduction-block=100' 2>&1 | filecheck %s --check-prefix=BADOPT
// BADOPT: error: max-reduction-block must be a power of two in 32..1024, not 100

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

// The host needs a value that only a vector op computes: it cannot be read back.
func.func @device_vector_value_on_host(%flag: memref<4xi32>) -> i32 {
  %c0 = arith.constant 0 : index
  %v = vector.load %flag[%c0] : memref<4xi32>, vector<4xi32>
  // expected-error @+1 {{'vector.extract' computes a value the host needs; the GPU path cannot read it back (only loads and scalar arithmetic can)}}
  %s = vector.extract %v[0] : i32 from vector<4xi32>
  return %s : i32
}
