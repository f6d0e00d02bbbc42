// RUN: blockc-opt %s --blockc-nvptx-lower-to-llvm-pipeline="emulate=true" | %emulator_runner 2>&1 | FileCheck %s

// nvgpu.warpgroup.mma.store under the emulator, as upstream's
// convert-nvgpu-to-nvvm lowers it on a GPU: thread t stores its fragment at
// rows 16 (t / 32) + g (+ 8), t / 32 being the warp of the whole block, not
// of its warpgroup. Two warpgroups (256 threads) each compute A B = 16
// everywhere (m64n8k16, bf16 ones, no swizzle); warpgroup 1 doubles its
// accumulator, and both store into the same 64 x 8 view of the first rows
// of a 128 x 8 buffer (the op's destination is 64 rows): warpgroup 0's
// rows land at 0-63 and warpgroup 1's at 64-127, past the view.

func.func private @printMemrefF32(memref<*xf32>) attributes {llvm.emit_c_interface}

!da = !nvgpu.warpgroup.descriptor<tensor = memref<64x16xbf16, #gpu.address_space<workgroup>>>
!db = !nvgpu.warpgroup.descriptor<tensor = memref<16x8xbf16, #gpu.address_space<workgroup>>>
!acc = !nvgpu.warpgroup.accumulator<fragmented = vector<64x8xf32>>

// CHECK: sizes = [128, 8]
// CHECK-COUNT-64: [16,   16,   16,   16,   16,   16,   16,   16]
// CHECK-COUNT-64: [32,   32,   32,   32,   32,   32,   32,   32]
func.func @two_warpgroups(%out: memref<128x8xf32>) {
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1)
             workgroup(%s : memref<2048xbf16, #gpu.address_space<workgroup>>) {
    %c8 = arith.constant 8 : index
    %c128 = arith.constant 128 : index
    %ones = arith.constant dense<1.0> : vector<8xbf16>
    %at = arith.muli %tx, %c8 : index
    vector.store %ones, %s[%at] : memref<2048xbf16, #gpu.address_space<workgroup>>, vector<8xbf16>
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
    // Warpgroup w scales its accumulator by w + 1.
    %wg = arith.divui %tx, %c128 : index
    %wgi = arith.index_cast %wg : index to i32
    %wgf = arith.sitofp %wgi : i32 to f32
    %one = arith.constant 1.0 : f32
    %factor = arith.addf %wgf, %one : f32
    %fs = vector.broadcast %factor : f32 to vector<4xf32>
    %f1 = blockc_codegen.accumulator_to_fragment %acc1 : !acc -> vector<4xf32>
    %f2 = arith.mulf %f1, %fs : vector<4xf32>
    %acc2 = blockc_codegen.fragment_to_accumulator %f2 : vector<4xf32> -> !acc
    %view = memref.subview %out[0, 0] [64, 8] [1, 1] : memref<128x8xf32> to memref<64x8xf32, strided<[8, 1]>>
    nvgpu.warpgroup.mma.store %acc2, %view : !acc to memref<64x8xf32, strided<[8, 1]>>
    gpu.terminator
  }
  return
}

func.func @main() {
  %out = memref.alloc() : memref<128x8xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c128 = arith.constant 128 : index
  %minus = arith.constant dense<-1.0> : vector<8xf32>
  scf.for %r = %c0 to %c128 step %c1 {
    vector.store %minus, %out[%r, %c0] : memref<128x8xf32>, vector<8xf32>
  }
  call @two_warpgroups(%out) : (memref<128x8xf32>) -> ()
  %u = memref.cast %out : memref<128x8xf32> to memref<*xf32>
  call @printMemrefF32(%u) : (memref<*xf32>) -> ()
  memref.dealloc %out : memref<128x8xf32>
  return
}
