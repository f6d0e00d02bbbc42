// RUN: blockc-opt %s --split-input-file --blockc-gpu-strided-copies-to-kernels | FileCheck %s

// A copy into a strided view (a decode step's K rows into its cache)
// becomes linalg.copy of the same operands; a contiguous copy stays
// (gpu.memcpy later), as does a copy inside a kernel.
// CHECK-LABEL: func.func @copies
// CHECK-SAME: (%[[K:.*]]: memref<?x1x2x32xf32>, %[[CACHE:.*]]: memref<?x16x2x32xf32>, %[[A:.*]]: memref<64xf32>, %[[B:.*]]: memref<64xf32>, %[[POS:.*]]: index)
// CHECK: %[[SV:.*]] = memref.subview %[[CACHE]]
// CHECK-NEXT: linalg.copy ins(%[[K]] : memref<?x1x2x32xf32>) outs(%[[SV]] : memref<?x1x2x32xf32, strided<[1024, 64, 32, 1], offset: ?>>)
// CHECK-NEXT: memref.copy %[[A]], %[[B]] : memref<64xf32> to memref<64xf32>
// CHECK: gpu.launch
// CHECK-NEXT: memref.copy %[[SV]], %[[K]]
// CHECK-NOT: linalg.copy
func.func @copies(%k: memref<?x1x2x32xf32>, %cache: memref<?x16x2x32xf32>, %a: memref<64xf32>, %b: memref<64xf32>, %pos: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %k, %c0 : memref<?x1x2x32xf32>
  %sv = memref.subview %cache[0, %pos, 0, 0] [%n, 1, 2, 32] [1, 1, 1, 1] : memref<?x16x2x32xf32> to memref<?x1x2x32xf32, strided<[1024, 64, 32, 1], offset: ?>>
  memref.copy %k, %sv : memref<?x1x2x32xf32> to memref<?x1x2x32xf32, strided<[1024, 64, 32, 1], offset: ?>>
  memref.copy %a, %b : memref<64xf32> to memref<64xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    memref.copy %sv, %k : memref<?x1x2x32xf32, strided<[1024, 64, 32, 1], offset: ?>> to memref<?x1x2x32xf32>
    gpu.terminator
  }
  return
}

// -----

// A strided copy in another memory space stays.
// CHECK-LABEL: func.func @other_space
// CHECK: memref.copy
// CHECK-NOT: linalg.copy
func.func @other_space(%a: memref<4x8xf32, strided<[16, 1]>, 3>, %b: memref<4x8xf32, 3>) {
  memref.copy %a, %b : memref<4x8xf32, strided<[16, 1]>, 3> to memref<4x8xf32, 3>
  return
}
