// RUN: blockc-opt %s --blockc-nvptx-lower-to-llvm-pipeline="emulate=true" | %emulator_runner 2>&1 | FileCheck %s

// The warpgroup accumulator fragment ops under the emulator. A and B
// (m64n8k16, bf16, no swizzle) are read from 4 KiB of shared memory that
// the 128 threads fill with ones, so every element of A B is 16 whatever
// the descriptors' layout. @waited reads the accumulator after its wgmma
// waited for its group (16), doubles it in registers, writes it back as an
// accumulator and accumulates A B onto it: every thread's 4 registers end
// at 2 x 16 + 16 = 48. @in_flight reads the accumulator while its wgmma
// group is still in flight (waitGroup = 1), which the emulator refuses.

func.func private @printMemrefF32(memref<*xf32>) attributes {llvm.emit_c_interface}

!da = !nvgpu.warpgroup.descriptor<tensor = memref<64x16xbf16, #gpu.address_space<workgroup>>>
!db = !nvgpu.warpgroup.descriptor<tensor = memref<16x8xbf16, #gpu.address_space<workgroup>>>
!acc = !nvgpu.warpgroup.accumulator<fragmented = vector<64x8xf32>>

// CHECK: sizes = [128, 4]
// CHECK-COUNT-128: 48,   48,   48,   48]
func.func @waited(%out: memref<128x4xf32>) {
  %c1 = arith.constant 1 : index
  %c128 = arith.constant 128 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c128, %sy = %c1, %sz = %c1)
             workgroup(%s : memref<2048xbf16, #gpu.address_space<workgroup>>) {
    %c0 = arith.constant 0 : index
    %c16 = arith.constant 16 : index
    %ones = arith.constant dense<1.0> : vector<16xbf16>
    %at = arith.muli %tx, %c16 : index
    vector.store %ones, %s[%at] : memref<2048xbf16, #gpu.address_space<workgroup>>, vector<16xbf16>
    gpu.barrier
    // Start address >> 4 in bits 0-13, leading byte offset 128 >> 4 at
    // bit 16, stride byte offset 256 >> 4 at bit 32, no swizzle: A at 0,
    // B at 2048.
    %ia = arith.constant 68720001024 : i64
    %ib = arith.constant 68720001152 : i64
    %da = builtin.unrealized_conversion_cast %ia : i64 to !da
    %db = builtin.unrealized_conversion_cast %ib : i64 to !db
    %acc0 = nvgpu.warpgroup.mma.init.accumulator -> !acc
    %acc1 = nvgpu.warpgroup.mma %da, %db, %acc0 {waitGroup = 0 : i64} : !da, !db, !acc -> !acc
    %f1 = blockc_codegen.accumulator_to_fragment %acc1 : !acc -> vector<4xf32>
    %f2 = arith.addf %f1, %f1 : vector<4xf32>
    %acc2 = blockc_codegen.fragment_to_accumulator %f2 : vector<4xf32> -> !acc
    %acc3 = nvgpu.warpgroup.mma %da, %db, %acc2 {waitGroup = 0 : i64} : !da, !db, !acc -> !acc
    %f3 = blockc_codegen.accumulator_to_fragment %acc3 : !acc -> vector<4xf32>
    vector.store %f3, %out[%tx, %c0] : memref<128x4xf32>, vector<4xf32>
    gpu.terminator
  }
  return
}

// CHECK: blockc GPU emulator: kernel 'in_flight_kernel': thread ({{[0-9]+}},0,0) of block (0,0,0): blockc_codegen.accumulator_to_fragment {{.*}}wgmma-fragment.mlir:[[@LINE+19]]:{{[0-9]+}} reads a warpgroup accumulator while 1 wgmma group is in flight: wait for it with wgmma.wait_group 0 first
func.func @in_flight(%out: memref<128x4xf32>) {
  %c1 = arith.constant 1 : index
  %c128 = arith.constant 128 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c128, %sy = %c1, %sz = %c1)
             workgroup(%s : memref<2048xbf16, #gpu.address_space<workgroup>>) {
    %c0 = arith.constant 0 : index
    %c16 = arith.constant 16 : index
    %ones = arith.constant dense<1.0> : vector<16xbf16>
    %at = arith.muli %tx, %c16 : index
    vector.store %ones, %s[%at] : memref<2048xbf16, #gpu.address_space<workgroup>>, vector<16xbf16>
    gpu.barrier
    %ia = arith.constant 68720001024 : i64
    %ib = arith.constant 68720001152 : i64
    %da = builtin.unrealized_conversion_cast %ia : i64 to !da
    %db = builtin.unrealized_conversion_cast %ib : i64 to !db
    %acc0 = nvgpu.warpgroup.mma.init.accumulator -> !acc
    %acc1 = nvgpu.warpgroup.mma %da, %db, %acc0 {waitGroup = 1 : i64} : !da, !db, !acc -> !acc
    %f1 = blockc_codegen.accumulator_to_fragment %acc1 : !acc -> vector<4xf32>
    vector.store %f1, %out[%tx, %c0] : memref<128x4xf32>, vector<4xf32>
    gpu.terminator
  }
  return
}

func.func @main() {
  %out = memref.alloc() : memref<128x4xf32>
  call @waited(%out) : (memref<128x4xf32>) -> ()
  %u = memref.cast %out : memref<128x4xf32> to memref<*xf32>
  call @printMemrefF32(%u) : (memref<*xf32>) -> ()
  call @in_flight(%out) : (memref<128x4xf32>) -> ()
  memref.dealloc %out : memref<128x4xf32>
  return
}
