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

// With cp_async_wait = N, each thread commits its open cp.async copies as a
// group and waits for all but its N newest groups before the barrier: the
// copy (whose token nothing uses) lands before the load reads it.
// CHECK-LABEL: func.func @copies
// CHECK:         gpu.launch
// CHECK:           nvgpu.device_async_copy
// CHECK-NEXT:      %[[G:.+]] = nvgpu.device_async_create_group{{ *$}}
// CHECK-NEXT:      nvgpu.device_async_wait %[[G]] {numGroups = 1 : i32}
// CHECK-NEXT:      gpu.barrier
// CHECK-NEXT:      memref.load
func.func @copies(%src: memref<256xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
    %s = memref.alloca() : memref<32x4xf32, #gpu.address_space<workgroup>>
    %i = arith.muli %tx, %c32 : index
    %t = nvgpu.device_async_copy %src[%i], %s[%tx, %c0], 4 : memref<256xf32> to memref<32x4xf32, #gpu.address_space<workgroup>>
    blockc_codegen.workgroup_barrier {cp_async_wait = 1 : i32}
    %v = memref.load %s[%tx, %c0] : memref<32x4xf32, #gpu.address_space<workgroup>>
    gpu.terminator
  }
  return
}

// -----

func.func @negative_wait() {
  // expected-error @+1 {{'blockc_codegen.workgroup_barrier' op attribute 'cp_async_wait' failed to satisfy constraint}}
  blockc_codegen.workgroup_barrier {cp_async_wait = -1 : i32}
  return
}

// -----

func.func @host() {
  // expected-error @+1 {{'blockc_codegen.workgroup_barrier' op is not inside a GPU kernel}}
  blockc_codegen.workgroup_barrier
  return
}
