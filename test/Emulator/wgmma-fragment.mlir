// RUN: blockc-opt %s --blockc-nvptx-lower-to-llvm-pipeline="emulate=true" | %emulator_runner 2>&1 | FileCheck %s

// The warpgroup accumulator fragment ops under the emulator. A and B
// (m64n8k16, bf16, no swizzle) are read from 4 KiB of shared memory that
// the 128 threads fill with ones, so every element of A B is 16 whatever
// the descriptors' layout. @waited reads the accumulator after its wgmma
// waited for its group (16), doubles it in registers, writes it back as an
// accumulator and accumulates A B onto it: every thread's 4 registers end
// at 2 x 16 + 16 = 48. @in_flight reads the accumulator while its wgmma
// group is still in flight (waitGroup = 1), which the emulator refuses.
//
// FlashAttention-3's overlap, with two accumulators (the emulator numbers
// them: S 0, O 1): S's wgmma commits and leaves its group in flight
// (waitGroup = 1), then P V's commits and waits for all but the newest
// group (waitGroup = 1), which retires S alone. @overlap reads S while P V
// is in flight (allowed: its group was waited for), waits for P V
// (wgmma.wait_group 0) and reads O: every thread's registers are 16 + 16 =
// 32. The emulator refuses @o_in_flight, which reads O while P V is in
// flight, @o_rescaled, which writes O (rescales it in registers) while P V
// is in flight, and @p_written, which stores into P V's A tile (the P
// staging buffer) while P V is in flight.

func.func private @printMemrefF32(memref<*xf32>) attributes {llvm.emit_c_interface}
llvm.func @blockcEmuClearError()

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

// CHECK: blockc GPU emulator: kernel 'in_flight_kernel': thread ({{[0-9]+}},0,0) of block (0,0,0): blockc_codegen.accumulator_to_fragment {{.*}}wgmma-fragment.mlir:[[@LINE+19]]:{{[0-9]+}} reads warpgroup accumulator 0 while the wgmma group that writes it is in flight (1 group in flight, it is the 1st newest): wait for it with wgmma.wait_group 0 first
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

// CHECK: sizes = [128, 4]
// CHECK-COUNT-128: 32,   32,   32,   32]
func.func @overlap(%out: memref<128x4xf32>) {
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
    %s0 = nvgpu.warpgroup.mma.init.accumulator -> !acc
    %s1 = nvgpu.warpgroup.mma %da, %db, %s0 {waitGroup = 1 : i64} : !da, !db, !acc -> !acc
    %o0 = nvgpu.warpgroup.mma.init.accumulator -> !acc
    %o1 = nvgpu.warpgroup.mma %da, %db, %o0 {waitGroup = 1 : i64} : !da, !db, !acc -> !acc
    %fs = blockc_codegen.accumulator_to_fragment %s1 : !acc -> vector<4xf32>
    nvvm.wgmma.wait.group.sync.aligned 0
    %fo = blockc_codegen.accumulator_to_fragment %o1 : !acc -> vector<4xf32>
    %sum = arith.addf %fs, %fo : vector<4xf32>
    vector.store %sum, %out[%tx, %c0] : memref<128x4xf32>, vector<4xf32>
    gpu.terminator
  }
  return
}

// CHECK: blockc GPU emulator: kernel 'o_in_flight_kernel': thread ({{[0-9]+}},0,0) of block (0,0,0): blockc_codegen.accumulator_to_fragment {{.*}}wgmma-fragment.mlir:[[@LINE+22]]:{{[0-9]+}} reads warpgroup accumulator 1 while the wgmma group that writes it is in flight (1 group in flight, it is the 1st newest): wait for it with wgmma.wait_group 0 first
func.func @o_in_flight(%out: memref<128x4xf32>) {
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
    %s0 = nvgpu.warpgroup.mma.init.accumulator -> !acc
    %s1 = nvgpu.warpgroup.mma %da, %db, %s0 {waitGroup = 1 : i64} : !da, !db, !acc -> !acc
    %o0 = nvgpu.warpgroup.mma.init.accumulator -> !acc
    %o1 = nvgpu.warpgroup.mma %da, %db, %o0 {waitGroup = 1 : i64} : !da, !db, !acc -> !acc
    %fs = blockc_codegen.accumulator_to_fragment %s1 : !acc -> vector<4xf32>
    %fo = blockc_codegen.accumulator_to_fragment %o1 : !acc -> vector<4xf32>
    vector.store %fo, %out[%tx, %c0] : memref<128x4xf32>, vector<4xf32>
    gpu.terminator
  }
  return
}

// The rescale's write of O in a loop that carries O (the same registers
// as P V's accumulator): P V's group is in flight.
// CHECK: blockc GPU emulator: kernel 'o_rescaled_kernel': thread ({{[0-9]+}},0,0) of block (0,0,0): blockc_codegen.fragment_to_accumulator {{.*}}wgmma-fragment.mlir:[[@LINE+23]]:{{[0-9]+}} writes warpgroup accumulator 1 while the wgmma group that writes it is in flight (1 group in flight, it is the 1st newest): wait for it with wgmma.wait_group 0 first
func.func @o_rescaled(%out: memref<128x4xf32>) {
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
    %s0 = nvgpu.warpgroup.mma.init.accumulator -> !acc
    %s1 = nvgpu.warpgroup.mma %da, %db, %s0 {waitGroup = 1 : i64} : !da, !db, !acc -> !acc
    %o0 = nvgpu.warpgroup.mma.init.accumulator -> !acc
    %o1 = nvgpu.warpgroup.mma %da, %db, %o0 {waitGroup = 1 : i64} : !da, !db, !acc -> !acc
    %fs = blockc_codegen.accumulator_to_fragment %s1 : !acc -> vector<4xf32>
    %o = scf.for %i = %c0 to %c16 step %c16 iter_args(%oa = %o1) -> (!acc) {
      %o2 = blockc_codegen.fragment_to_accumulator %fs : vector<4xf32> -> !acc
      %o3 = nvgpu.warpgroup.mma %da, %db, %o2 {waitGroup = 0 : i64} : !da, !db, !acc -> !acc
      scf.yield %o3 : !acc
    }
    %fo = blockc_codegen.accumulator_to_fragment %o : !acc -> vector<4xf32>
    vector.store %fo, %out[%tx, %c0] : memref<128x4xf32>, vector<4xf32>
    gpu.terminator
  }
  return
}

// A (64 rows, no swizzle, 256 bytes per 8 rows, k in two 128-byte core
// matrices: bytes [0, 2048)) and B ([2048, 2304)), read by P V in flight.
// CHECK: blockc GPU emulator: kernel 'p_written_kernel': thread ({{[0-9]+}},0,0) of block (0,0,0): vector.store {{.*}}wgmma-fragment.mlir:[[@LINE+21]]:{{[0-9]+}} writes shared bytes [0, 32), which a wgmma group in flight reads (shared bytes [0, 2304), the wgmma at nvgpu.warpgroup.mma {{.*}}wgmma-fragment.mlir:[[@LINE+20]]:{{[0-9]+}}{{.*}}): the group must be waited for (wgmma.wait_group) by every thread that issued it before the buffer is written
func.func @p_written(%out: memref<128x4xf32>) {
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
    %s0 = nvgpu.warpgroup.mma.init.accumulator -> !acc
    %s1 = nvgpu.warpgroup.mma %da, %db, %s0 {waitGroup = 1 : i64} : !da, !db, !acc -> !acc
    %o0 = nvgpu.warpgroup.mma.init.accumulator -> !acc
    %o1 = nvgpu.warpgroup.mma %da, %db, %o0 {waitGroup = 1 : i64} : !da, !db, !acc -> !acc
    vector.store %ones, %s[%c0] : memref<2048xbf16, #gpu.address_space<workgroup>>, vector<16xbf16>
    nvvm.wgmma.wait.group.sync.aligned 0
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
  llvm.call @blockcEmuClearError() : () -> ()
  call @overlap(%out) : (memref<128x4xf32>) -> ()
  call @printMemrefF32(%u) : (memref<*xf32>) -> ()
  call @o_in_flight(%out) : (memref<128x4xf32>) -> ()
  llvm.call @blockcEmuClearError() : () -> ()
  call @o_rescaled(%out) : (memref<128x4xf32>) -> ()
  llvm.call @blockcEmuClearError() : () -> ()
  call @p_written(%out) : (memref<128x4xf32>) -> ()
  memref.dealloc %out : memref<128x4xf32>
  return
}
