// RUN: blockc-opt %s --split-input-file --blockc-cpu-outline-parallel-kernels | FileCheck %s

// Each outermost omp.parallel becomes a call of a private, no_inline
// function: the values it reads from above are its arguments in order of
// first use (the parallel's own operands first), constants are cloned in,
// a nested omp.parallel moves with its parent, and code outside the
// kernels stays.
// CHECK-LABEL: func.func @two_kernels(
// CHECK-SAME:    %[[A:.+]]: memref<16xf32>, %[[B:.+]]: memref<16xf32>, %[[N:.+]]: index, %[[T:.+]]: i32)
// CHECK:         call @two_kernels_kernel(%[[T]], %[[A]], %[[B]], %[[N]]) : (i32, memref<16xf32>, memref<16xf32>, index) -> ()
// CHECK:         memref.store
// CHECK:         call @two_kernels_kernel_0(%[[B]]) : (memref<16xf32>) -> ()
// CHECK-NOT:     omp.parallel
// CHECK:         return
// CHECK:       func.func private @two_kernels_kernel(%[[KT:.+]]: i32, %[[KA:.+]]: memref<16xf32>, %[[KB:.+]]: memref<16xf32>, %[[KN:.+]]: index) attributes {llvm.linkage = #llvm.linkage<internal>, no_inline, passthrough = ["noinline"]}
// CHECK:         %[[C0:.+]] = arith.constant 0 : index
// CHECK:         omp.parallel num_threads(%[[KT]] : i32) {
// CHECK:           memref.load %[[KA]][%[[C0]]]
// CHECK:           memref.store %{{.+}}, %[[KB]][%[[KN]]]
// CHECK:           omp.parallel {
// CHECK:         return
// CHECK:       func.func private @two_kernels_kernel_0(%{{.+}}: memref<16xf32>) attributes {llvm.linkage = #llvm.linkage<internal>, no_inline, passthrough = ["noinline"]}
// CHECK-NOT:   func.func private @two_kernels_kernel_1
func.func @two_kernels(%a: memref<16xf32>, %b: memref<16xf32>, %n: index, %threads: i32) {
  %c0 = arith.constant 0 : index
  omp.parallel num_threads(%threads : i32) {
    %v = memref.load %a[%c0] : memref<16xf32>
    memref.store %v, %b[%n] : memref<16xf32>
    omp.parallel {
      memref.store %v, %b[%c0] : memref<16xf32>
      omp.terminator
    }
    omp.terminator
  }
  %f = arith.constant 1.0 : f32
  memref.store %f, %a[%c0] : memref<16xf32>
  omp.parallel {
    memref.store %f, %b[%c0] : memref<16xf32>
    omp.terminator
  }
  return
}

// -----

// A function without kernels and a declaration are left alone.
// CHECK-LABEL: func.func private @external(memref<4xf32>)
// CHECK-LABEL: func.func @no_kernel(
// CHECK-NEXT:    call @external
// CHECK-NEXT:    return
// CHECK-NOT:   func.func
func.func private @external(memref<4xf32>)
func.func @no_kernel(%a: memref<4xf32>) {
  call @external(%a) : (memref<4xf32>) -> ()
  return
}
