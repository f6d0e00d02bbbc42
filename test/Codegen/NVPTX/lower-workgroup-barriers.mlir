// RUN: blockc-opt %s -split-input-file -verify-diagnostics --blockc-gpu-lower-workgroup-barriers | FileCheck %s

// Inside a launch, the workgroup barrier becomes gpu.barrier.
// CHECK-LABEL: func.func @kernel
// CHECK:         gpu.launch
// CHECK:           memref.store
// CHECK-NEXT:      gpu.barrier
// CHECK-NEXT:      memref.load
// CHECK-NOT:     blockc_codegen.workgroup_barrier
func.func @kernel(%m: memref<32xf32>) {
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
    %f = arith.constant 1.0 : f32
    memref.store %f, %m[%tx] : memref<32xf32>
    blockc_codegen.workgroup_barrier
    %v = memref.load %m[%tx] : memref<32xf32>
    gpu.terminator
  }
  return
}

// -----

func.func @host() {
  // expected-error @+1 {{'blockc_codegen.workgroup_barrier' op is not inside a GPU kernel}}
  blockc_codegen.workgroup_barrier
  return
}
