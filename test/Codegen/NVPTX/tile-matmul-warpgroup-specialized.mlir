// RUN: blockc-opt %s -split-input-file --blockc-gpu-tile-matmul --canonicalize --cse | FileCheck %s

// The warp-specialised warpgroup-MMA kernel (sm_90a, producer = true) of a
// bf16 projection y[b, t, n] += x[b, t, k] * W[n, k]: 128 x 96 output
// tiles, a 3-stage ring, K = 320 (5 steps of 64: the ring wraps). Warpgroup
// 0 is the producer (40 registers; its thread 0 issues the TMA loads once
// the consumers released the stage), warpgroups 1 and 2 multiply (232
// registers) and release each stage per warp; no block barrier after the
// mbarriers' initialisation.

// CHECK-LABEL: func.func @specialized
// 384 threads (a producer and two consumer warpgroups), one block per tile.
// CHECK:         gpu.launch blocks({{[^)]+}}) in (%{{[^ ]+}} = %c1, %{{[^ ]+}} = %{{[^,]+}}, %{{[^ ]+}} = %c1)
// CHECK-SAME:      threads({{[^)]+}}) in (%[[TX:[^ ]+]] = %c384, %{{[^ ]+}} = %c1, %{{[^ ]+}} = %c1)
// CHECK-SAME:      dynamic_shared_memory_size %c87040_i32
// Full barriers for one arrival (the producer's expect_tx), empty barriers
// for the 8 consumer warps.
// CHECK:         %[[FULL:.+]] = nvgpu.mbarrier.create -> <memorySpace = #gpu.address_space<workgroup>, num_barriers = 3>
// CHECK:         %[[EMPTY:.+]] = nvgpu.mbarrier.create -> <memorySpace = #gpu.address_space<workgroup>, num_barriers = 3>
// CHECK:         scf.if
// CHECK-NEXT:      nvgpu.mbarrier.init %[[FULL]][%c0], %c1
// CHECK-NEXT:      nvgpu.mbarrier.init %[[EMPTY]][%c0], %c8
// CHECK-COUNT-4:   nvgpu.mbarrier.init
// CHECK:         gpu.barrier
// CHECK-NOT:     gpu.barrier
// The producer: from step 3 on, it waits for the release of the stage's
// previous use (parity (kt / 3 - 1) % 2), then fills it.
// CHECK:         scf.if %{{.+}} {
// CHECK-NEXT:      nvvm.setmaxregister  decrease 40
// CHECK-NEXT:      scf.if
// CHECK:             scf.for %[[KT:.+]] = %c0 to %c5 step %c1 {
// CHECK-NEXT:          %[[STAGE:.+]] = arith.remui %[[KT]], %c3
// CHECK-NEXT:          %[[REUSE:.+]] = arith.cmpi uge, %[[KT]], %c3
// CHECK-NEXT:          scf.if %[[REUSE]] {
// CHECK-NEXT:            %[[ROUND:.+]] = arith.divui %[[KT]], %c3
// CHECK-NEXT:            %[[PAR:.+]] = arith.remui %[[ROUND]], %c2
// CHECK-NEXT:            %[[EVEN:.+]] = arith.cmpi eq, %[[PAR]], %c0
// CHECK-NEXT:            nvgpu.mbarrier.try_wait.parity %[[EMPTY]][%[[STAGE]]], %[[EVEN]], %c10000000
// CHECK-NEXT:          }
// CHECK-NEXT:          nvgpu.mbarrier.arrive.expect_tx %[[FULL]][%[[STAGE]]], %c28672
// CHECK-COUNT-2:       nvgpu.tma.async.load
// CHECK:           }
// CHECK:         } else {
// The consumers: wait for the full stage, MMA; after the first k16 MMA of
// step kt (which waited for step kt - 1's), each warp releases kt - 1's
// stage: a warp barrier, then lane 0 arrives.
// CHECK-NEXT:      nvvm.setmaxregister  increase 232
// CHECK:           scf.for %[[CK:.+]] = %c0 to %c5 step %c1 iter_args
// CHECK:             nvgpu.mbarrier.try_wait.parity %[[FULL]]
// CHECK:             nvgpu.warpgroup.mma
// CHECK-NEXT:        %[[LATER:.+]] = arith.cmpi ugt, %[[CK]], %c0
// CHECK-NEXT:        scf.if %[[LATER]] {
// CHECK-NEXT:          %[[PREV:.+]] = arith.subi %[[CK]], %c1
// CHECK-NEXT:          %[[PSTAGE:.+]] = arith.remui %[[PREV]], %c3
// CHECK-NEXT:          nvvm.bar.warp.sync %c-1_i32
// CHECK-NEXT:          %[[LANE:.+]] = arith.remui %{{.+}}, %c32
// CHECK-NEXT:          %[[FIRST:.+]] = arith.cmpi eq, %[[LANE]], %c0
// CHECK-NEXT:          scf.if %[[FIRST]] {
// CHECK-NEXT:            nvgpu.mbarrier.arrive.expect_tx %[[EMPTY]][%[[PSTAGE]]], %c0
// CHECK:             nvgpu.warpgroup.mma
// CHECK:             nvgpu.warpgroup.mma
// CHECK:             nvgpu.warpgroup.mma
// CHECK-NEXT:        scf.yield
// The last step's stage (4 % 3) is released once every MMA completed; the
// epilogue reuses the ring after the consumers' named barrier (id 1, 256
// threads), and 256 threads write the tile, 48 elements each, 4 at a time.
// CHECK:           nvvm.wgmma.wait.group.sync.aligned 0
// CHECK-NEXT:      nvvm.bar.warp.sync
// CHECK:             nvgpu.mbarrier.arrive.expect_tx %[[EMPTY]][%c1], %c0
// CHECK:           nvvm.barrier id = %c1_i32 number_of_threads = %c256_i32
// CHECK:           blockc_codegen.accumulator_to_fragment
// CHECK-COUNT-24:    vector.store
// CHECK-NEXT:      nvvm.barrier id = %c1_i32 number_of_threads = %c256_i32
// CHECK:           scf.for %{{.+}} = %c0 to %c48 step %c4 {
// CHECK:         kernel<warpgroup_matmul>

#a = affine_map<(b, t, n, k) -> (b, t, k)>
#w = affine_map<(b, t, n, k) -> (n, k)>
#o = affine_map<(b, t, n, k) -> (b, t, n)>
func.func @specialized(%x: memref<?x?x320xbf16>, %w: memref<96x320xbf16>, %y: memref<?x?x96xf32>) {
  linalg.generic {indexing_maps = [#a, #w, #o], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<?x?x320xbf16>, memref<96x320xbf16>) outs(%y : memref<?x?x96xf32>)
      attrs = {blockc_codegen.gpu_warpgroup_tiles = #blockc_codegen.gpu_warpgroup_tiles<tile_m = 128, tile_n = 96, stages = 3, producer = true>} {
  ^bb0(%in: bf16, %wv: bf16, %acc: f32):
    %xf = arith.extf %in : bf16 to f32
    %wf = arith.extf %wv : bf16 to f32
    %p = arith.mulf %xf, %wf : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Persistent: min(tiles, multiprocessors) blocks, the device's count
// asked of the runtime at each call; producer and consumers walk tiles
// blockIdx.x, + gridDim.x, ... in grouped order (8 row tiles at a time),
// counting the ring's uses over the tiles (5 per tile); the f32 output
// tile lies after the 86016 bytes of ring (dynamic shared memory 86016 +
// 128 x 100 x 4 + 1024).
// CHECK-LABEL: func.func @persistent
// CHECK:         %[[TILES:.+]] = arith.ceildivui %{{.+}}, %c128
// CHECK:         %[[SMS:.+]] = llvm.call @blockcGpuMultiprocessors() : () -> i32
// CHECK:         %[[SMSX:.+]] = arith.index_castui %[[SMS]] : i32 to index
// CHECK:         %[[GRID:.+]] = arith.minui %[[TILES]], %[[SMSX]]
// CHECK:         gpu.launch blocks(%[[BX:[^,]+]], %{{[^,]+}}, %{{[^)]+}}) in (%[[GX:[^ ]+]] = %[[GRID]], %{{[^ ]+}} = %c1, %{{[^ ]+}} = %c1)
// CHECK-SAME:      dynamic_shared_memory_size %c138240_i32
// CHECK:           nvvm.setmaxregister  decrease 40
// CHECK:           scf.for %[[T:.+]] = %[[BX]] to %[[TILES]] step %[[GX]] {
// CHECK-NEXT:        %[[DONE:.+]] = arith.subi %[[T]], %[[BX]]
// CHECK-NEXT:        %[[LOCAL:.+]] = arith.divui %[[DONE]], %[[GX]]
// CHECK-NEXT:        %[[IT0:.+]] = arith.muli %[[LOCAL]], %c5
// CHECK:             arith.minui %{{.+}}, %c8
// CHECK:             scf.for %[[KT:.+]] = %c0 to %c5 step %c1 {
// CHECK-NEXT:          %[[IT:.+]] = arith.addi %[[IT0]], %[[KT]]
// CHECK-NEXT:          arith.remui %[[IT]], %c3
// CHECK:           nvvm.setmaxregister  increase 232
// CHECK:           %[[OUT:.+]] = arith.addi %{{.+}}, %c86016
// CHECK:           scf.for %{{.+}} = %[[BX]] to %[[TILES]] step %[[GX]] {
// CHECK:             nvgpu.warpgroup.mma.init.accumulator
// CHECK:             nvvm.barrier id = %c1_i32 number_of_threads = %c256_i32
// CHECK-NEXT:        %[[WOFF:.+]] = arith.muli %{{.+}}, %c25600
// CHECK-NEXT:        arith.addi %[[OUT]], %[[WOFF]]
// CHECK:             blockc_codegen.accumulator_to_fragment
// CHECK-COUNT-24:      vector.store
// CHECK-NEXT:        nvvm.barrier id = %c1_i32 number_of_threads = %c256_i32
// CHECK-NEXT:        memref.view %{{.+}}[%[[OUT]]][]
// CHECK:         llvm.func @blockcGpuMultiprocessors() -> i32

#a = affine_map<(b, t, n, k) -> (b, t, k)>
#w = affine_map<(b, t, n, k) -> (n, k)>
#o = affine_map<(b, t, n, k) -> (b, t, n)>
func.func @persistent(%x: memref<?x?x320xbf16>, %w: memref<96x320xbf16>, %y: memref<?x?x96xf32>) {
  linalg.generic {indexing_maps = [#a, #w, #o], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<?x?x320xbf16>, memref<96x320xbf16>) outs(%y : memref<?x?x96xf32>)
      attrs = {blockc_codegen.gpu_warpgroup_tiles = #blockc_codegen.gpu_warpgroup_tiles<tile_m = 128, tile_n = 96, stages = 3, producer = true, persistent = true>} {
  ^bb0(%in: bf16, %wv: bf16, %acc: f32):
    %xf = arith.extf %in : bf16 to f32
    %wf = arith.extf %wv : bf16 to f32
    %p = arith.mulf %xf, %wf : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// The registers of the other block sizes: at launch each thread has the
// block's share of the 64K registers (ptxas allocates all of them to a
// kernel with setmaxnreg: 248 for 256 threads, 96 for 640); the consumers
// take their share plus what the producer frees: one consumer warpgroup
// 240 (the cap), four 96 + (96 - 40) / 4 = 110, rounded down to 104.
// CHECK-LABEL: func.func @registers
// CHECK:         threads({{[^)]+}}) in (%{{[^ ]+}} = %c256,
// CHECK:           nvvm.setmaxregister  decrease 40
// CHECK:           nvvm.setmaxregister  increase 240
// CHECK:         threads({{[^)]+}}) in (%{{[^ ]+}} = %c640,
// CHECK:           nvvm.setmaxregister  decrease 40
// CHECK:           nvvm.setmaxregister  increase 104
#a = affine_map<(m, n, k) -> (m, k)>
#w = affine_map<(m, n, k) -> (n, k)>
#o = affine_map<(m, n, k) -> (m, n)>
func.func @registers(%x: memref<?x64xbf16>, %w: memref<64x64xbf16>, %y: memref<?x64xf32>, %z: memref<?x64xf32>) {
  linalg.generic {indexing_maps = [#a, #w, #o], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<?x64xbf16>, memref<64x64xbf16>) outs(%y : memref<?x64xf32>)
      attrs = {blockc_codegen.gpu_warpgroup_tiles = #blockc_codegen.gpu_warpgroup_tiles<tile_m = 64, tile_n = 64, stages = 2, producer = true>} {
  ^bb0(%in: bf16, %wv: bf16, %acc: f32):
    %xf = arith.extf %in : bf16 to f32
    %wf = arith.extf %wv : bf16 to f32
    %p = arith.mulf %xf, %wf : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#a, #w, #o], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<?x64xbf16>, memref<64x64xbf16>) outs(%z : memref<?x64xf32>)
      attrs = {blockc_codegen.gpu_warpgroup_tiles = #blockc_codegen.gpu_warpgroup_tiles<tile_m = 256, tile_n = 64, stages = 2, producer = true>} {
  ^bb0(%in: bf16, %wv: bf16, %acc: f32):
    %xf = arith.extf %in : bf16 to f32
    %wf = arith.extf %wv : bf16 to f32
    %p = arith.mulf %xf, %wf : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}
