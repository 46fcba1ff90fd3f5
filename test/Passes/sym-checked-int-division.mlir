// RUN: symopt %s --split-input-file --sym-checked-int-division | filecheck %s

#id = affine_map<(i) -> (i)>

// A divisor read from a tensor: asserted nonzero; 0 and INT_MIN / -1 divide by 1 instead.
// CHECK-LABEL: func.func @divsi
// CHECK:       ^bb0(%[[A:.*]]: i64, %[[B:.*]]: i64, %{{.*}}: i64):
// CHECK:         %[[NZ:.*]] = arith.cmpi ne, %[[B]], %{{.*}} : i64
// CHECK-NEXT:    cf.assert %[[NZ]], "ZeroDivisionError"
// CHECK:         %[[M1:.*]] = arith.cmpi eq, %[[B]], %{{.*}} : i64
// CHECK:         %[[MN:.*]] = arith.cmpi eq, %[[A]], %{{.*}} : i64
// CHECK:         %[[OV:.*]] = arith.andi %[[M1]], %[[MN]] : i1
// CHECK:         %[[BAD:.*]] = arith.ori %{{.*}}, %[[OV]] : i1
// CHECK:         %[[D:.*]] = arith.select %[[BAD]], %{{.*}}, %[[B]] : i64
// CHECK:         arith.divsi %[[A]], %[[D]] : i64
func.func @divsi(%a: tensor<?xi64>, %b: tensor<?xi64>, %e: tensor<?xi64>) -> tensor<?xi64> {
  %r = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%a, %b : tensor<?xi64>, tensor<?xi64>) outs(%e : tensor<?xi64>) {
  ^bb0(%x: i64, %y: i64, %out: i64):
    %q = arith.divsi %x, %y : i64
    linalg.yield %q : i64
  } -> tensor<?xi64>
  return %r : tensor<?xi64>
}

// -----

#id = affine_map<(i) -> (i)>

// Unsigned remainders have no overflow case; constants other than 0 and -1 need no check, nor do
// index computations outside linalg bodies.
// CHECK-LABEL: func.func @remui_and_constants
// CHECK:         cf.assert
// CHECK-NOT:     arith.andi
// CHECK:         arith.remui
// CHECK-NEXT:    arith.divsi %{{.*}}, %c3_i32 : i32
// CHECK-NOT:     cf.assert
// CHECK:       arith.divsi %{{.*}}, %{{.*}} : index
func.func @remui_and_constants(%a: tensor<?xi32>, %b: tensor<?xi32>, %e: tensor<?xi32>, %n: index, %m: index) -> (tensor<?xi32>, index) {
  %c3 = arith.constant 3 : i32
  %r = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%a, %b : tensor<?xi32>, tensor<?xi32>) outs(%e : tensor<?xi32>) {
  ^bb0(%x: i32, %y: i32, %out: i32):
    %q = arith.remui %x, %y : i32
    %s = arith.divsi %q, %c3 : i32
    linalg.yield %s : i32
  } -> tensor<?xi32>
  %k = arith.divsi %n, %m : index
  return %r, %k : tensor<?xi32>, index
}
