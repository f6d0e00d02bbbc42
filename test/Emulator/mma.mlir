// RUN: blockc-opt %s --blockc-nvptx-lower-to-llvm-pipeline="emulate=true" | %emulator_runner | FileCheck %s
// RUN: blockc-opt %s --blockc-nvptx-lower-to-llvm-pipeline="emulate=true profile=true" | env BLOCKC_EMU_PROFILE=1 %emulator_runner 2>&1 >/dev/null | FileCheck %s --check-prefix=PROFILE

// The profile counts the one m16n8k16 instruction as 2 x 16 x 8 x 16 tensor
// FLOPs (and nothing else does arithmetic), and the barrier.
// PROFILE: blockc GPU emulator profile: main_kernel grid (1,1,1) block (32,1,1) flops 4096 tensor_flops 4096 {{.*}} barriers 1

// One warp's tensor-core step under the emulator: cp.async copies a 16 x 16
// bf16 A (row-major) and a B stored [n][k] (8 x 16) into shared memory,
// ldmatrix.x4 / .x2 load the fragments, mma.sync m16n8k16 multiplies, and
// each lane stores its four accumulators where the PTX ISA's fragment
// table puts them (rows g and g + 8, columns 2t and 2t + 1 of lane 4g + t).
// A[i][k] = i - k and B[k][n] = 1 if k = n, 2 if k = n + 8, else 0, so
// D[i][n] = A[i][n] + 2 A[i][n + 8] = 3i - 3n - 16: any permuted lane,
// register or half shows.

func.func private @printMemrefF32(memref<*xf32>) attributes {llvm.emit_c_interface}

// CHECK:      [-16,   -19,   -22,   -25,   -28,   -31,   -34,   -37],
// CHECK-NEXT: [-13,   -16,   -19,   -22,   -25,   -28,   -31,   -34],
// CHECK-NEXT: [-10,   -13,   -16,   -19,   -22,   -25,   -28,   -31],
// CHECK-NEXT: [-7,   -10,   -13,   -16,   -19,   -22,   -25,   -28],
// CHECK-NEXT: [-4,   -7,   -10,   -13,   -16,   -19,   -22,   -25],
// CHECK-NEXT: [-1,   -4,   -7,   -10,   -13,   -16,   -19,   -22],
// CHECK-NEXT: [2,   -1,   -4,   -7,   -10,   -13,   -16,   -19],
// CHECK-NEXT: [5,   2,   -1,   -4,   -7,   -10,   -13,   -16],
// CHECK-NEXT: [8,   5,   2,   -1,   -4,   -7,   -10,   -13],
// CHECK-NEXT: [11,   8,   5,   2,   -1,   -4,   -7,   -10],
// CHECK-NEXT: [14,   11,   8,   5,   2,   -1,   -4,   -7],
// CHECK-NEXT: [17,   14,   11,   8,   5,   2,   -1,   -4],
// CHECK-NEXT: [20,   17,   14,   11,   8,   5,   2,   -1],
// CHECK-NEXT: [23,   20,   17,   14,   11,   8,   5,   2],
// CHECK-NEXT: [26,   23,   20,   17,   14,   11,   8,   5],
// CHECK-NEXT: [29,   26,   23,   20,   17,   14,   11,   8]]
func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %c32 = arith.constant 32 : index
  %a = memref.alloc() : memref<16x16xbf16>
  %b = memref.alloc() : memref<8x16xbf16>
  %d = memref.alloc() : memref<16x8xf32>
  scf.for %i = %c0 to %c16 step %c1 {
    scf.for %k = %c0 to %c16 step %c1 {
      %diff = arith.subi %i, %k : index
      %di = arith.index_cast %diff : index to i32
      %f = arith.sitofp %di : i32 to f32
      %h = arith.truncf %f : f32 to bf16
      memref.store %h, %a[%i, %k] : memref<16x16xbf16>
    }
  }
  %zero = arith.constant 0.0 : bf16
  %one = arith.constant 1.0 : bf16
  %two = arith.constant 2.0 : bf16
  scf.for %n = %c0 to %c8 step %c1 {
    scf.for %k = %c0 to %c16 step %c1 {
      memref.store %zero, %b[%n, %k] : memref<8x16xbf16>
    }
    memref.store %one, %b[%n, %n] : memref<8x16xbf16>
    %n8 = arith.addi %n, %c8 : index
    memref.store %two, %b[%n, %n8] : memref<8x16xbf16>
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1)
             workgroup(%as : memref<16x16xbf16, #gpu.address_space<workgroup>>,
                       %bs : memref<16x16xbf16, #gpu.address_space<workgroup>>) {
    %z = arith.constant 0 : index
    %e8 = arith.constant 8 : index
    %e2 = arith.constant 2 : index
    %e4 = arith.constant 4 : index
    %e16 = arith.constant 16 : index
    // A: lane l copies 8 elements of row l / 2 at column 8 (l % 2); B:
    // lanes 0-15 copy row l / 2 likewise, lanes 16-31 zero-fill rows 8-15
    // of the shared tile (source size 0), which no fragment reads.
    %row = arith.divui %tx, %e2 : index
    %half = arith.remui %tx, %e2 : index
    %col = arith.muli %half, %e8 : index
    %t1 = nvgpu.device_async_copy %a[%row, %col], %as[%row, %col], 8 {bypassL1} : memref<16x16xbf16> to memref<16x16xbf16, #gpu.address_space<workgroup>>
    %brow = arith.remui %row, %e8 : index
    %low = arith.cmpi ult, %tx, %e16 : index
    %bsrc = arith.select %low, %e8, %z : index
    %t2 = nvgpu.device_async_copy %b[%brow, %col], %bs[%row, %col], 8, %bsrc {bypassL1} : memref<8x16xbf16> to memref<16x16xbf16, #gpu.address_space<workgroup>>
    %g = nvgpu.device_async_create_group %t1, %t2
    nvgpu.device_async_wait %g {numGroups = 0 : i32}
    gpu.barrier
    // ldmatrix.x4 of A: matrix q = lane / 8 is (rows 8 (q % 2), cols 8 (q / 2)).
    %q = arith.divui %tx, %e8 : index
    %r8 = arith.remui %tx, %e8 : index
    %qm = arith.remui %q, %e2 : index
    %qd = arith.divui %q, %e2 : index
    %arow0 = arith.muli %qm, %e8 : index
    %arow = arith.addi %arow0, %r8 : index
    %acol = arith.muli %qd, %e8 : index
    %fa = nvgpu.ldmatrix %as[%arow, %acol] {numTiles = 4 : i32, transpose = false} : memref<16x16xbf16, #gpu.address_space<workgroup>> -> vector<4x2xbf16>
    // ldmatrix.x2 of B: matrix q (lanes 0-15) is (n 0-7, k 8q).
    %qb = arith.remui %q, %e2 : index
    %bcol = arith.muli %qb, %e8 : index
    %fb = nvgpu.ldmatrix %bs[%r8, %bcol] {numTiles = 2 : i32, transpose = false} : memref<16x16xbf16, #gpu.address_space<workgroup>> -> vector<2x2xbf16>
    %acc = arith.constant dense<0.0> : vector<2x2xf32>
    %dv = nvgpu.mma.sync (%fa, %fb, %acc) {mmaShape = [16, 8, 16]} : (vector<4x2xbf16>, vector<2x2xbf16>, vector<2x2xf32>) -> vector<2x2xf32>
    %gid = arith.divui %tx, %e4 : index
    %tig = arith.remui %tx, %e4 : index
    %c0d = arith.muli %tig, %e2 : index
    %c1d = arith.addi %c0d, %c1 : index
    %g8 = arith.addi %gid, %e8 : index
    %d00 = vector.extract %dv[0, 0] : f32 from vector<2x2xf32>
    %d01 = vector.extract %dv[0, 1] : f32 from vector<2x2xf32>
    %d10 = vector.extract %dv[1, 0] : f32 from vector<2x2xf32>
    %d11 = vector.extract %dv[1, 1] : f32 from vector<2x2xf32>
    memref.store %d00, %d[%gid, %c0d] : memref<16x8xf32>
    memref.store %d01, %d[%gid, %c1d] : memref<16x8xf32>
    memref.store %d10, %d[%g8, %c0d] : memref<16x8xf32>
    memref.store %d11, %d[%g8, %c1d] : memref<16x8xf32>
    gpu.terminator
  }
  %u = memref.cast %d : memref<16x8xf32> to memref<*xf32>
  call @printMemrefF32(%u) : (memref<*xf32>) -> ()
  memref.dealloc %a : memref<16x16xbf16>
  memref.dealloc %b : memref<8x16xbf16>
  memref.dealloc %d : memref<16x8xf32>
  return
}
