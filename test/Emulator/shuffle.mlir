// RUN: blockc-opt %s --blockc-nvptx-lower-to-llvm-pipeline="emulate=true" | %emulator_runner | FileCheck %s

// gpu.shuffle under the emulator, with the semantics of the shfl.sync that
// convert-gpu-to-nvvm emits (member mask = the first `width` lanes, clamp
// width - 1, up: 32 - width): lane i holds i; a result whose `valid` flag
// is false is stored as -1. The last row shuffles with width 16 in lanes
// 0-15 only (lanes 16-31 store -2): the lanes past the width are invalid.
// The expected rows follow from PTX's shfl.sync definition, not from the
// emulator.

func.func private @printMemrefF32(memref<*xf32>) attributes {llvm.emit_c_interface}

// xor 1, down 4, up 4, idx 5 (width 32), down 4 (width 16):
// CHECK:      [1,   0,   3,   2,   5,   4,   7,   6,   9,   8,   11,   10,   13,   12,   15,   14,   17,   16,   19,   18,   21,   20,   23,   22,   25,   24,   27,   26,   29,   28,   31,   30],
// CHECK-NEXT: [4,   5,   6,   7,   8,   9,   10,   11,   12,   13,   14,   15,   16,   17,   18,   19,   20,   21,   22,   23,   24,   25,   26,   27,   28,   29,   30,   31,   -1,   -1,   -1,   -1],
// CHECK-NEXT: [-1,   -1,   -1,   -1,   0,   1,   2,   3,   4,   5,   6,   7,   8,   9,   10,   11,   12,   13,   14,   15,   16,   17,   18,   19,   20,   21,   22,   23,   24,   25,   26,   27],
// CHECK-NEXT: [5,   5,   5,   5,   5,   5,   5,   5,   5,   5,   5,   5,   5,   5,   5,   5,   5,   5,   5,   5,   5,   5,   5,   5,   5,   5,   5,   5,   5,   5,   5,   5],
// CHECK-NEXT: [4,   5,   6,   7,   8,   9,   10,   11,   12,   13,   14,   15,   -1,   -1,   -1,   -1,   -2,   -2,   -2,   -2,   -2,   -2,   -2,   -2,   -2,   -2,   -2,   -2,   -2,   -2,   -2,   -2]]
func.func @main() {
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %out = memref.alloc() : memref<5x32xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
    %i = arith.index_cast %tx : index to i32
    %v = arith.sitofp %i : i32 to f32
    %minus1 = arith.constant -1.0 : f32
    %minus2 = arith.constant -2.0 : f32
    %w32 = arith.constant 32 : i32
    %w16 = arith.constant 16 : i32
    %one = arith.constant 1 : i32
    %four = arith.constant 4 : i32
    %five = arith.constant 5 : i32
    %c0 = arith.constant 0 : index
    %c1_ = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c3 = arith.constant 3 : index
    %c4 = arith.constant 4 : index
    %x, %xv = gpu.shuffle xor %v, %one, %w32 : f32
    %xs = arith.select %xv, %x, %minus1 : f32
    memref.store %xs, %out[%c0, %tx] : memref<5x32xf32>
    %d, %dv = gpu.shuffle down %v, %four, %w32 : f32
    %ds = arith.select %dv, %d, %minus1 : f32
    memref.store %ds, %out[%c1_, %tx] : memref<5x32xf32>
    %u, %uv = gpu.shuffle up %v, %four, %w32 : f32
    %us = arith.select %uv, %u, %minus1 : f32
    memref.store %us, %out[%c2, %tx] : memref<5x32xf32>
    %n, %nv = gpu.shuffle idx %v, %five, %w32 : f32
    %ns = arith.select %nv, %n, %minus1 : f32
    memref.store %ns, %out[%c3, %tx] : memref<5x32xf32>
    %c16 = arith.constant 16 : index
    %low = arith.cmpi ult, %tx, %c16 : index
    %r = scf.if %low -> f32 {
      %h, %hv = gpu.shuffle down %v, %four, %w16 : f32
      %hs = arith.select %hv, %h, %minus1 : f32
      scf.yield %hs : f32
    } else {
      scf.yield %minus2 : f32
    }
    memref.store %r, %out[%c4, %tx] : memref<5x32xf32>
    gpu.terminator
  }
  %u = memref.cast %out : memref<5x32xf32> to memref<*xf32>
  call @printMemrefF32(%u) : (memref<*xf32>) -> ()
  memref.dealloc %out : memref<5x32xf32>
  return
}
