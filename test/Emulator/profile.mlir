// RUN: blockc-opt %s --blockc-nvptx-lower-to-llvm-pipeline="emulate=true profile=true" | env BLOCKC_EMU_PROFILE=1 %emulator_runner 2>&1 | FileCheck %s
// RUN: blockc-opt %s --blockc-nvptx-lower-to-llvm-pipeline="emulate=true profile=true" | env BLOCKC_EMU_PROFILE=2 %emulator_runner 2>&1 | FileCheck %s --check-prefix=SAMPLE
// RUN: blockc-opt %s --blockc-nvptx-lower-to-llvm-pipeline="emulate=true profile=true" | env BLOCKC_EMU_PROFILE=8 %emulator_runner 2>&1 | FileCheck %s --check-prefix=SAMPLE8

// The profile's counters on kernels whose answers are known
// (docs/GPUEmulator.md#profile). Buffers are device memory (gpu.alloc).

// A coalesced f32 copy by 2 warps: one load and one store request per warp,
// each touching 4 sectors of 32 bytes; 256 bytes read and 256 written.
// CHECK: blockc GPU emulator profile: coalesced_kernel grid (1,1,1) block (64,1,1) flops 0 tensor_flops 0 global_requests 4 global_sectors 16 global_bytes 512 unique_bytes 512 shared_requests 0 shared_wavefronts 0 barriers 0
func.func @coalesced() {
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %in = gpu.alloc host_shared () : memref<64xf32>
  %out = gpu.alloc host_shared () : memref<64xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
    %v = memref.load %in[%tx] : memref<64xf32>
    memref.store %v, %out[%tx] : memref<64xf32>
    gpu.terminator
  }
  return
}

// Lane i reads element 32 i: 32 sectors for the load's one request, 4 for
// the store's.
// CHECK: blockc GPU emulator profile: strided_kernel grid (1,1,1) block (32,1,1) flops 0 tensor_flops 0 global_requests 2 global_sectors 36 global_bytes 256 unique_bytes 256 shared_requests 0 shared_wavefronts 0 barriers 0
func.func @strided() {
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %in = gpu.alloc host_shared () : memref<1024xf32>
  %out = gpu.alloc host_shared () : memref<32xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
    %c32k = arith.constant 32 : index
    %i = arith.muli %tx, %c32k : index
    %v = memref.load %in[%i] : memref<1024xf32>
    memref.store %v, %out[%tx] : memref<32xf32>
    gpu.terminator
  }
  return
}

// A shared-memory transpose of a 32 x 32 f32 tile by one warp: row r
// written by lanes 0-31 (one wavefront), then lane i sums row i (column r
// of the read): without padding all 32 lanes hit one bank, 32 wavefronts
// per request (32 x 1 + 32 x 32 = 1056); rows of 33 words spread them (64).
// Each lane adds 32 values: 1024 FLOPs.
// CHECK: blockc GPU emulator profile: transpose_kernel grid (1,1,1) block (32,1,1) flops 1024 tensor_flops 0 global_requests 1 global_sectors 4 global_bytes 128 unique_bytes 128 shared_requests 64 shared_wavefronts 1056 barriers 1
// CHECK: blockc GPU emulator profile: transpose_padded_kernel grid (1,1,1) block (32,1,1) flops 1024 tensor_flops 0 global_requests 1 global_sectors 4 global_bytes 128 unique_bytes 128 shared_requests 64 shared_wavefronts 64 barriers 1
func.func @transpose() {
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %out = gpu.alloc host_shared () : memref<32xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1)
             workgroup(%s : memref<32x32xf32, #gpu.address_space<workgroup>>) {
    %z = arith.constant 0 : index
    %one = arith.constant 1 : index
    %n = arith.constant 32 : index
    %f1 = arith.constant 1.0 : f32
    scf.for %r = %z to %n step %one {
      memref.store %f1, %s[%r, %tx] : memref<32x32xf32, #gpu.address_space<workgroup>>
    }
    gpu.barrier
    %f0 = arith.constant 0.0 : f32
    %sum = scf.for %r = %z to %n step %one iter_args(%acc = %f0) -> (f32) {
      %v = memref.load %s[%tx, %r] : memref<32x32xf32, #gpu.address_space<workgroup>>
      %a = arith.addf %acc, %v : f32
      scf.yield %a : f32
    }
    memref.store %sum, %out[%tx] : memref<32xf32>
    gpu.terminator
  }
  return
}

func.func @transpose_padded() {
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %out = gpu.alloc host_shared () : memref<32xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1)
             workgroup(%s : memref<32x33xf32, #gpu.address_space<workgroup>>) {
    %z = arith.constant 0 : index
    %one = arith.constant 1 : index
    %n = arith.constant 32 : index
    %f1 = arith.constant 1.0 : f32
    scf.for %r = %z to %n step %one {
      memref.store %f1, %s[%r, %tx] : memref<32x33xf32, #gpu.address_space<workgroup>>
    }
    gpu.barrier
    %f0 = arith.constant 0.0 : f32
    %sum = scf.for %r = %z to %n step %one iter_args(%acc = %f0) -> (f32) {
      %v = memref.load %s[%tx, %r] : memref<32x33xf32, #gpu.address_space<workgroup>>
      %a = arith.addf %acc, %v : f32
      scf.yield %a : f32
    }
    memref.store %sum, %out[%tx] : memref<32xf32>
    gpu.terminator
  }
  return
}

// 8 blocks of 32 threads, each block copying its 32 floats with a vector
// FMA of 4 lanes per thread (8 FLOPs). Sampling 2 blocks of 8
// (BLOCKC_EMU_PROFILE=2) runs blocks 2 and 6 (the middles of the grid's
// halves) and scales every counter by 4: the same totals; the distinct
// bytes are scaled per buffer, at most its size.
// CHECK: blockc GPU emulator profile: grid_kernel grid (8,1,1) block (32,1,1) flops 2048 tensor_flops 0 global_requests 16 global_sectors 256 global_bytes 8192 unique_bytes 8192 shared_requests 0 shared_wavefronts 0 barriers 0
// SAMPLE: blockc GPU emulator profile: grid_kernel grid (8,1,1) block (32,1,1) flops 2048 tensor_flops 0 global_requests 16 global_sectors 256 global_bytes 8192 unique_bytes 8192 shared_requests 0 shared_wavefronts 0 barriers 0
func.func @grid() {
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c32 = arith.constant 32 : index
  %in = gpu.alloc host_shared () : memref<1024xf32>
  %out = gpu.alloc host_shared () : memref<1024xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c8, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
    %c4 = arith.constant 4 : index
    %c128 = arith.constant 128 : index
    %base = arith.muli %bx, %c128 : index
    %off = arith.muli %tx, %c4 : index
    %i = arith.addi %base, %off : index
    %v = vector.load %in[%i] : memref<1024xf32>, vector<4xf32>
    %two = arith.constant dense<2.0> : vector<4xf32>
    %w = vector.fma %v, %two, %v : vector<4xf32>
    vector.store %w, %out[%i] : memref<1024xf32>, vector<4xf32>
    gpu.terminator
  }
  return
}

// A 4 x 4 grid, each block copying its 32 floats: 2 requests of 4 sectors
// per block. Sampled 2 blocks (the diagonal: (1,1) and (3,3)) or 8 (the
// diagonal would repeat blocks: linear blocks 1, 3, ..., 15), the totals
// are exact, the distinct bytes capped at each 2 KiB buffer.
// CHECK: blockc GPU emulator profile: grid2d_kernel grid (4,4,1) block (32,1,1) flops 0 tensor_flops 0 global_requests 32 global_sectors 128 global_bytes 4096 unique_bytes 4096 shared_requests 0 shared_wavefronts 0 barriers 0
// SAMPLE: blockc GPU emulator profile: grid2d_kernel grid (4,4,1) block (32,1,1) flops 0 tensor_flops 0 global_requests 32 global_sectors 128 global_bytes 4096 unique_bytes 4096 shared_requests 0 shared_wavefronts 0 barriers 0
// SAMPLE8: blockc GPU emulator profile: grid2d_kernel grid (4,4,1) block (32,1,1) flops 0 tensor_flops 0 global_requests 32 global_sectors 128 global_bytes 4096 unique_bytes 4096 shared_requests 0 shared_wavefronts 0 barriers 0
func.func @grid2d() {
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c32 = arith.constant 32 : index
  %in = gpu.alloc host_shared () : memref<512xf32>
  %out = gpu.alloc host_shared () : memref<512xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c4, %gy = %c4, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
    %c4k = arith.constant 4 : index
    %c32k = arith.constant 32 : index
    %row = arith.muli %by, %c4k : index
    %block = arith.addi %row, %bx : index
    %base = arith.muli %block, %c32k : index
    %i = arith.addi %base, %tx : index
    %v = memref.load %in[%i] : memref<512xf32>
    memref.store %v, %out[%i] : memref<512xf32>
    gpu.terminator
  }
  return
}

func.func @main() {
  call @coalesced() : () -> ()
  call @strided() : () -> ()
  call @transpose() : () -> ()
  call @transpose_padded() : () -> ()
  call @grid() : () -> ()
  call @grid2d() : () -> ()
  return
}
