// RUN: symopt %s --split-input-file --sym-gpu-div-by-invariant | filecheck %s

// Softmax's normalization: the row sum is computed before the column loop; the division per element
// becomes a multiply by one reciprocal computed before the loop.
// CHECK-LABEL: gpu.func @softmax_normalize
// CHECK:         %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK:         %[[R:.*]] = arith.divf %[[ONE]], %arg1 : f32
// CHECK:         scf.for
// CHECK:           arith.mulf %{{.*}}, %[[R]] : f32
// CHECK-NOT:       arith.divf
// CHECK:         gpu.return
gpu.module @k {
  gpu.func @softmax_normalize(%e: memref<?xf32>, %sum: f32, %n: index, %out: memref<?xf32>) kernel {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    scf.for %j = %c0 to %n step %c1 {
      %x = memref.load %e[%j] : memref<?xf32>
      %y = arith.divf %x, %sum : f32
      memref.store %y, %out[%j] : memref<?xf32>
    }
    gpu.return
  }
}

// -----

// Two loops deep, the divisor defined between them: hoisted before the inner loop only, one
// reciprocal for both divisions by it.
// CHECK-LABEL: gpu.func @hoist_to_the_outermost_invariant_loop
// CHECK:         scf.for
// CHECK:           %[[S:.*]] = memref.load %arg1
// CHECK:           %[[R:.*]] = arith.divf %{{.*}}, %[[S]] : f32
// CHECK-NOT:       arith.divf
// CHECK:           scf.for
// CHECK-COUNT-2:     arith.mulf %{{.*}}, %[[R]] : f32
gpu.module @k {
  gpu.func @hoist_to_the_outermost_invariant_loop(%e: memref<?x?xf32>, %std: memref<?xf32>, %n: index, %out: memref<?x?xf32>) kernel {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    scf.for %i = %c0 to %n step %c1 {
      %s = memref.load %std[%i] : memref<?xf32>
      scf.for %j = %c0 to %n step %c1 {
        %x = memref.load %e[%i, %j] : memref<?x?xf32>
        %y = arith.divf %x, %s : f32
        %z = arith.divf %y, %s : f32
        memref.store %z, %out[%i, %j] : memref<?x?xf32>
      }
    }
    gpu.return
  }
}

// -----

// Left alone: a divisor that changes in the loop, a division outside any loop, and host code.
// CHECK-LABEL: gpu.func @no_rewrite_when_variant_or_not_in_a_loop
// CHECK:         arith.divf %arg1, %arg1
// CHECK:         scf.for
// CHECK:           arith.divf %[[X:.*]], %[[X]] : f32
// CHECK-LABEL: func.func @no_rewrite_on_host
// CHECK:           arith.divf
gpu.module @k {
  gpu.func @no_rewrite_when_variant_or_not_in_a_loop(%e: memref<?xf32>, %s: f32, %n: index, %out: memref<?xf32>) kernel {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %q = arith.divf %s, %s : f32
    memref.store %q, %out[%c0] : memref<?xf32>
    scf.for %j = %c0 to %n step %c1 {
      %x = memref.load %e[%j] : memref<?xf32>
      %y = arith.divf %x, %x : f32
      memref.store %y, %out[%j] : memref<?xf32>
    }
    gpu.return
  }
}
func.func @no_rewrite_on_host(%e: memref<?xf32>, %s: f32, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %j = %c0 to %n step %c1 {
    %x = memref.load %e[%j] : memref<?xf32>
    %y = arith.divf %x, %s : f32
    memref.store %y, %e[%j] : memref<?xf32>
  }
  return
}

// -----

// The divisor is re-read in each iteration (not invariant): the four lanes of the vector body share
// one reciprocal, computed before the first of them. A lone division keeps IEEE division.
// CHECK-LABEL: gpu.func @vector_lanes_share_a_reciprocal
// CHECK:         scf.for
// CHECK:           %[[S:.*]] = memref.load %arg1
// CHECK:           %[[R:.*]] = arith.divf %{{.*}}, %[[S]] : f32
// CHECK-COUNT-4:   arith.mulf %{{.*}}, %[[R]] : f32
// CHECK:           arith.divf %{{.*}}, %[[S]] : f32
// CHECK-NOT:       arith.divf
gpu.module @k {
  gpu.func @vector_lanes_share_a_reciprocal(%e: memref<?xf32>, %sum: memref<1xf32>, %n: index, %out: memref<?xf32>) kernel {
    %c0 = arith.constant 0 : index
    %c4 = arith.constant 4 : index
    scf.for %j = %c0 to %n step %c4 {
      %v = vector.load %e[%j] : memref<?xf32>, vector<4xf32>
      %s = memref.load %sum[%c0] : memref<1xf32>
      %a = vector.extract %v[0] : f32 from vector<4xf32>
      %b = vector.extract %v[1] : f32 from vector<4xf32>
      %c = vector.extract %v[2] : f32 from vector<4xf32>
      %d = vector.extract %v[3] : f32 from vector<4xf32>
      %qa = arith.divf %a, %s : f32
      %qb = arith.divf %b, %s : f32
      %qc = arith.divf %c, %s : f32
      %qd = arith.divf %d, %s : f32
      %w = vector.from_elements %qa, %qb, %qc, %qd : vector<4xf32>
      vector.store %w, %out[%j] : memref<?xf32>, vector<4xf32>
      memref.store %s, %sum[%c0] : memref<1xf32>
      %t = arith.cmpi ult, %j, %n : index
      scf.if %t {
        %lone = arith.divf %a, %s : f32
        memref.store %lone, %out[%j] : memref<?xf32>
      }
    }
    gpu.return
  }
}
