// RUN: blockc-opt %s --blockc-nvptx-lower-to-llvm-pipeline="emulate=true" | %emulator_runner | FileCheck %s

// gpu.barrier under the emulator: every thread of the block reaches it
// before any goes on. Host buffers are plain host memory here (the emulator
// runtime's device memory is host memory).

func.func private @printMemrefF32(memref<*xf32>) attributes {llvm.emit_c_interface}

// 64 threads write their id to shared memory; after the barrier thread i
// reads slot 63 - i: the output is the reversed ids only if the barrier
// waited for every thread (threads run one after another until they block).
// CHECK: [63,  62,  61,  60,  59,  58,  57,  56,  55,  54,  53,  52,  51,  50,  49,  48,  47,  46,  45,  44,  43,  42,  41,  40,  39,  38,  37,  36,  35,  34,  33,  32,  31,  30,  29,  28,  27,  26,  25,  24,  23,  22,  21,  20,  19,  18,  17,  16,  15,  14,  13,  12,  11,  10,  9,  8,  7,  6,  5,  4,  3,  2,  1,  0]
func.func @reverse() {
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %out = memref.alloc() : memref<64xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1)
             workgroup(%s : memref<64xf32, #gpu.address_space<workgroup>>) {
    %i = arith.index_cast %tx : index to i32
    %f = arith.sitofp %i : i32 to f32
    memref.store %f, %s[%tx] : memref<64xf32, #gpu.address_space<workgroup>>
    gpu.barrier
    %c63 = arith.constant 63 : index
    %j = arith.subi %c63, %tx : index
    %v = memref.load %s[%j] : memref<64xf32, #gpu.address_space<workgroup>>
    memref.store %v, %out[%tx] : memref<64xf32>
    gpu.terminator
  }
  %u = memref.cast %out : memref<64xf32> to memref<*xf32>
  call @printMemrefF32(%u) : (memref<*xf32>) -> ()
  memref.dealloc %out : memref<64xf32>
  return
}

// A tree reduction over 128 threads of 4 blocks, with a barrier inside a
// loop: every level reads what other threads wrote in the level before.
// Block b sums 128 * b + (0..127).
// CHECK: [8128,  24512,  40896,  57280]
func.func @tree() {
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c128 = arith.constant 128 : index
  %out = memref.alloc() : memref<4xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c4, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c128, %sy = %c1, %sz = %c1)
             workgroup(%s : memref<128xf32, #gpu.address_space<workgroup>>) {
    %base = arith.muli %bx, %c128 : index
    %g = arith.addi %base, %tx : index
    %i = arith.index_cast %g : index to i32
    %f = arith.sitofp %i : i32 to f32
    memref.store %f, %s[%tx] : memref<128xf32, #gpu.address_space<workgroup>>
    gpu.barrier
    %c0 = arith.constant 0 : index
    %c2 = arith.constant 2 : index
    %c64 = arith.constant 64 : index
    %last = scf.while (%half = %c64) : (index) -> index {
      %more = arith.cmpi ugt, %half, %c0 : index
      scf.condition(%more) %half : index
    } do {
    ^bb0(%h: index):
      %active = arith.cmpi ult, %tx, %h : index
      scf.if %active {
        %other = arith.addi %tx, %h : index
        %a = memref.load %s[%tx] : memref<128xf32, #gpu.address_space<workgroup>>
        %b = memref.load %s[%other] : memref<128xf32, #gpu.address_space<workgroup>>
        %sum = arith.addf %a, %b : f32
        memref.store %sum, %s[%tx] : memref<128xf32, #gpu.address_space<workgroup>>
      }
      gpu.barrier
      %next = arith.divui %h, %c2 : index
      scf.yield %next : index
    }
    %first = arith.cmpi eq, %tx, %c0 : index
    scf.if %first {
      %total = memref.load %s[%c0] : memref<128xf32, #gpu.address_space<workgroup>>
      memref.store %total, %out[%bx] : memref<4xf32>
    }
    gpu.terminator
  }
  %u = memref.cast %out : memref<4xf32> to memref<*xf32>
  call @printMemrefF32(%u) : (memref<*xf32>) -> ()
  memref.dealloc %out : memref<4xf32>
  return
}

func.func @main() {
  call @reverse() : () -> ()
  call @tree() : () -> ()
  return
}
