// RUN: symopt %s --split-input-file --sym-gpu-device-asserts | filecheck %s

// Runs after gpu-kernel-outlining (sym-lower-to-nvvm): sym-defer-nested-asserts parked the index check
// of a linalg body as a marker call, outlining moved the call into a kernel and copied the marker's
// declaration into its gpu.module.

// CHECK-LABEL: gpu.module @main_kernel
// CHECK:         gpu.func @main_kernel(%[[IX:[a-z0-9]+]]: index, %[[N:[a-z0-9]+]]: index)
// CHECK-NEXT:      %[[OK:.*]] = arith.cmpi ult, %[[IX]], %[[N]] : index
// CHECK-NEXT:      cf.assert %[[OK]], "index out of range (at model.py:12)"
// CHECK-NEXT:      gpu.return
// CHECK-NOT:     __mlir_sym_nested_assert
// CHECK:       }
// The host module's declaration stays (sym-nested-assert-to-status's business on the CPU path).
// CHECK:       func.func private @__mlir_sym_nested_assert(i1)
module attributes {gpu.container_module} {
  gpu.module @main_kernel {
    gpu.func @main_kernel(%ix: index, %n: index) kernel {
      %ok = arith.cmpi ult, %ix, %n : index
      func.call @__mlir_sym_nested_assert(%ok) {sym.assert_msg = "index out of range (at model.py:12)"} : (i1) -> ()
      gpu.return
    }
    func.func private @__mlir_sym_nested_assert(i1)
  }
  func.func private @__mlir_sym_nested_assert(i1)
}

// -----

// A check nested deeper in the kernel (under the bounds check of the launch), without a message.
// CHECK-LABEL: gpu.module @nested_kernel
// CHECK:         scf.if
// CHECK-NEXT:      %[[OK:.*]] = arith.cmpi
// CHECK-NEXT:      cf.assert %[[OK]], "check failed"
// CHECK-NOT:     func.call
module attributes {gpu.container_module} {
  gpu.module @nested_kernel {
    gpu.func @nested_kernel(%ix: index, %n: index, %in: i1) kernel {
      scf.if %in {
        %ok = arith.cmpi ult, %ix, %n : index
        func.call @__mlir_sym_nested_assert(%ok) : (i1) -> ()
      }
      gpu.return
    }
    func.func private @__mlir_sym_nested_assert(i1)
  }
}

// -----

// On the host the marker call is not this pass's: left alone.
// CHECK-LABEL: func.func @no_rewrite_when_outside_gpu_modules
// CHECK:       call @__mlir_sym_nested_assert(%{{.*}}) {sym.assert_msg = "host check"}
// CHECK-NOT:   cf.assert
func.func @no_rewrite_when_outside_gpu_modules(%ok: i1) -> i32 {
  %s = arith.constant 0 : i32
  func.call @__mlir_sym_nested_assert(%ok) {sym.assert_msg = "host check"} : (i1) -> ()
  return %s : i32
}
func.func private @__mlir_sym_nested_assert(i1)

// -----

// Other calls in kernels are not markers.
// CHECK-LABEL: gpu.module @no_rewrite_when_other_callee
// CHECK:         func.call @helper(%{{.*}}) : (i1) -> ()
// CHECK-NOT:     cf.assert
// CHECK:         func.func private @helper(i1)
module attributes {gpu.container_module} {
  gpu.module @no_rewrite_when_other_callee {
    gpu.func @kernel(%ok: i1) kernel {
      func.call @helper(%ok) : (i1) -> ()
      gpu.return
    }
    func.func private @helper(i1)
  }
}
