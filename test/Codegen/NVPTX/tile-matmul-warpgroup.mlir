// RUN: blockc-opt %s --blockc-gpu-tile-matmul --canonicalize --cse | FileCheck %s

// The warpgroup-MMA kernel (sm_90a) of a bf16 projection y[b, t, n] +=
// x[b, t, k] * W[n, k] with hand-set tiles: 128 x 96 output tiles on two
// warpgroups (256 threads), a 3-stage ring; K = 320: 5 reduction steps of
// 64, so the ring wraps (parity 1 from step 3) and refills in the loop.

// CHECK-LABEL: func.func @projection
// Host: x collapses to [B * T, 320]; tensor maps of 128 x 64 and 96 x 64
// boxes, 128-byte swizzle, zero fill.
// CHECK:         %[[X2:.+]] = memref.collapse_shape %arg0 {{\[\[}}0, 1], [2]] : memref<?x?x320xbf16> into memref<?x320xbf16>
// CHECK:         %[[XU:.+]] = memref.cast %[[X2]] : memref<?x320xbf16> to memref<*xbf16>
// CHECK:         %[[AMAP:.+]] = nvgpu.tma.create.descriptor %[[XU]] box[%c128, %c64] : memref<*xbf16> -> <tensor = memref<128x64xbf16, #gpu.address_space<workgroup>>, swizzle = swizzle_128b, l2promo = none, oob = zero, interleave = none>
// CHECK:         %[[WU:.+]] = memref.cast %arg1 : memref<96x320xbf16> to memref<*xbf16>
// CHECK:         %[[BMAP:.+]] = nvgpu.tma.create.descriptor %[[WU]] box[%c96, %c64] : memref<*xbf16> -> <tensor = memref<96x64xbf16, #gpu.address_space<workgroup>>, swizzle = swizzle_128b
// Grid (1, ceil(B * T / 128), 1); dynamic shared memory: 3 stages of
// (128 + 96) rows x 128 bytes = 86016, plus 1024 to align the ring.
// CHECK:         gpu.launch blocks({{[^)]+}}) in (%{{[^ ]+}} = %c1, %{{[^ ]+}} = %{{[^,]+}}, %{{[^ ]+}} = %c1)
// CHECK-SAME:      threads({{[^)]+}}) in (%{{[^ ]+}} = %c256, %{{[^ ]+}} = %c1, %{{[^ ]+}} = %c1)
// CHECK-SAME:      dynamic_shared_memory_size %c87040_i32
// CHECK:         %[[BASE:.+]] = gpu.dynamic_shared_memory
// CHECK:         %[[PTR:.+]] = memref.extract_aligned_pointer_as_index %[[BASE]]
// CHECK:         %[[MOD:.+]] = arith.remui %[[PTR]], %c1024
// CHECK:         %[[NEG:.+]] = arith.subi %c1024, %[[MOD]]
// CHECK:         %[[PAD:.+]] = arith.remui %[[NEG]], %c1024
// Thread 0 initialises one mbarrier per stage for one arrival...
// CHECK:         %[[BARS:.+]] = nvgpu.mbarrier.create -> <memorySpace = #gpu.address_space<workgroup>, num_barriers = 3>
// CHECK:         scf.if
// CHECK-NEXT:      nvgpu.mbarrier.init %[[BARS]][%c0], %c1
// CHECK-NEXT:      nvgpu.mbarrier.init %[[BARS]][%c1], %c1
// CHECK-NEXT:      nvgpu.mbarrier.init %[[BARS]][%c2], %c1
// CHECK:         gpu.barrier
// ... and loads steps 0 and 1: the stage's 28672 bytes expected, A's
// box at (k, m0) and B's at (k, n0), B 16384 bytes after A.
// CHECK:         scf.if
// CHECK-NEXT:      nvgpu.mbarrier.arrive.expect_tx %[[BARS]][%c0], %c28672
// CHECK-NEXT:      %[[A0:.+]] = memref.view %[[BASE]][%[[PAD]]][] {{.+}} to memref<128x64xbf16, #gpu.address_space<workgroup>>
// CHECK-NEXT:      nvgpu.tma.async.load %[[AMAP]][%c0, %{{.+}}], %[[BARS]][%c0] to %[[A0]]
// CHECK:           nvgpu.tma.async.load %[[BMAP]][%c0, %c0], %[[BARS]][%c0]
// CHECK:           nvgpu.mbarrier.arrive.expect_tx %[[BARS]][%c1], %c28672
// CHECK:           nvgpu.tma.async.load %[[AMAP]][%c64, %{{.+}}], %[[BARS]][%c1]
// CHECK:           nvgpu.tma.async.load %[[BMAP]][%c64, %c0], %[[BARS]][%c1]
// CHECK-NEXT:    }
// The loop: wait for step kt's stage (parity (kt / 3) % 2), four k16
// warpgroup MMAs 32 bytes apart along the swizzled rows (warpgroup w's A
// rows start 8192 bytes further), one barrier, thread 0 refills the stage
// of step kt - 1 with step kt + 2.
// CHECK:         %[[ACC0:.+]] = nvgpu.warpgroup.mma.init.accumulator -> <fragmented = vector<64x96xf32>>
// CHECK:         %[[ACC:.+]] = scf.for %[[KT:.+]] = %c0 to %c5 step %c1 iter_args(%[[IT:.+]] = %[[ACC0]])
// CHECK:           %[[STAGE:.+]] = arith.remui %[[KT]], %c3
// CHECK:           %[[ROUND:.+]] = arith.divui %[[KT]], %c3
// CHECK:           %[[PAR:.+]] = arith.remui %[[ROUND]], %c2
// CHECK:           %[[ODD:.+]] = arith.cmpi ne, %[[PAR]], %c0
// CHECK:           nvgpu.mbarrier.try_wait.parity %[[BARS]][%[[STAGE]]], %[[ODD]], %c10000000
// CHECK:           arith.muli %{{.+}}, %c8192
// CHECK-COUNT-4:   nvgpu.warpgroup.mma %{{.+}}, %{{.+}}, %{{.+}} : <tensor = memref<64x16xbf16, #gpu.address_space<workgroup>>>, <tensor = memref<16x96xbf16, #gpu.address_space<workgroup>>>, <fragmented = vector<64x96xf32>> -> <fragmented = vector<64x96xf32>>
// CHECK-NEXT:      gpu.barrier
// CHECK-NEXT:      %[[NEXT:.+]] = arith.addi %[[KT]], %c2
// CHECK-NEXT:      %[[LIVE:.+]] = arith.cmpi ult, %[[NEXT]], %c5
// CHECK-NEXT:      %[[ISSUE:.+]] = arith.andi %{{.+}}, %[[LIVE]]
// CHECK-NEXT:      scf.if %[[ISSUE]] {
// CHECK-NEXT:        %[[REFILL:.+]] = arith.remui %[[NEXT]], %c3
// CHECK-NEXT:        nvgpu.mbarrier.arrive.expect_tx %[[BARS]][%[[REFILL]]], %c28672
// CHECK-COUNT-2:     nvgpu.tma.async.load
// CHECK:           scf.yield
// Epilogue: all MMAs done, the ring holds warpgroup w's 64 x 96 f32 rows,
// padded to 100 floats (16 bytes: the accumulator fragment's 8 rows per
// store in different banks), at 25600 w bytes, then the block adds the
// 128 x 96 tile to y under bounds checks.
// CHECK:         nvvm.wgmma.wait.group.sync.aligned 0
// CHECK-NEXT:    gpu.barrier
// CHECK-NEXT:    %[[WOFF:.+]] = arith.muli %{{.+}}, %c25600
// CHECK-NEXT:    %[[WAT:.+]] = arith.addi %[[PAD]], %[[WOFF]]
// CHECK-NEXT:    %[[PADDED:.+]] = memref.view %[[BASE]][%[[WAT]]][] {{.+}} to memref<64x100xf32, #gpu.address_space<workgroup>>
// The thread's 48 accumulator registers go in two at a time: warp v = tid
// / 32 % 4 of its warpgroup, lane 4 g + q, holds rows 16 v + g and + 8,
// columns 2 q + 8 j (upstream's nvgpu.warpgroup.mma.store would take the
// warp tid / 32 of the whole block).
// CHECK-NEXT:    %[[FRAG:.+]] = blockc_codegen.accumulator_to_fragment %[[ACC]] : !nvgpu.warpgroup.accumulator<fragmented = vector<64x96xf32>> -> vector<48xf32>
// CHECK-NEXT:    %[[LANE:.+]] = arith.remui %[[TID:.+]], %c32
// CHECK-NEXT:    %[[WARP:.+]] = arith.divui %[[TID]], %c32
// CHECK-NEXT:    %[[V:.+]] = arith.remui %[[WARP]], %c4
// CHECK-NEXT:    %[[V16:.+]] = arith.muli %[[V]], %c16
// CHECK-NEXT:    %[[G:.+]] = arith.divui %[[LANE]], %c4
// CHECK-NEXT:    %[[ROW:.+]] = arith.addi %[[V16]], %[[G]]
// CHECK-NEXT:    %[[Q:.+]] = arith.remui %[[LANE]], %c4
// CHECK-NEXT:    %[[COL:.+]] = arith.muli %[[Q]], %c2
// CHECK-NEXT:    %[[E0:.+]] = vector.extract %[[FRAG]][0]
// CHECK-NEXT:    %[[E1:.+]] = vector.extract %[[FRAG]][1]
// CHECK-NEXT:    %[[P0:.+]] = vector.from_elements %[[E0]], %[[E1]] : vector<2xf32>
// CHECK-NEXT:    vector.store %[[P0]], %[[PADDED]][%[[ROW]], %[[COL]]] {alignment = 8 : i64}
// CHECK-NEXT:    %[[E2:.+]] = vector.extract %[[FRAG]][2]
// CHECK-NEXT:    %[[E3:.+]] = vector.extract %[[FRAG]][3]
// CHECK-NEXT:    %[[P1:.+]] = vector.from_elements %[[E2]], %[[E3]] : vector<2xf32>
// CHECK-NEXT:    %[[ROW8:.+]] = arith.addi %[[ROW]], %c8
// CHECK-NEXT:    vector.store %[[P1]], %[[PADDED]][%[[ROW8]], %[[COL]]] {alignment = 8 : i64}
// CHECK-COUNT-21: vector.store
// CHECK:         %[[E46:.+]] = vector.extract %[[FRAG]][46]
// CHECK-NEXT:    %[[E47:.+]] = vector.extract %[[FRAG]][47]
// CHECK-NEXT:    %[[P23:.+]] = vector.from_elements %[[E46]], %[[E47]] : vector<2xf32>
// CHECK-NEXT:    vector.store %[[P23]], %[[PADDED]][%[[ROW8]], %{{.+}}] {alignment = 8 : i64}
// CHECK-NEXT:    gpu.barrier
// CHECK-NEXT:    %[[TILE:.+]] = memref.view %[[BASE]][%[[PAD]]][] {{.+}} to memref<128x100xf32, #gpu.address_space<workgroup>>
// Each thread adds 48 of the 12288 elements (consecutive threads on
// consecutive columns), 4 at a time: the 4 elements' y values first (at
// indices clamped into y, so unguarded and in flight together), then each
// sum stored where the element is inside y.
// CHECK-NEXT:    arith.subi %{{.+}}, %c1
// CHECK-NEXT:    scf.for %{{.+}} = %c0 to %c48 step %c4 {
// CHECK-COUNT-4:     memref.load %arg2
// CHECK-NOT:         memref.store
// CHECK:             scf.if
// CHECK-NEXT:          %[[V:.+]] = memref.load %[[TILE]]
// CHECK-NEXT:          %[[SUM:.+]] = arith.addf %{{.+}}, %[[V]]
// CHECK-NEXT:          memref.store %[[SUM]], %arg2
// CHECK:         kernel<warpgroup_matmul>
// CHECK-NOT:     linalg.generic

#a = affine_map<(b, t, n, k) -> (b, t, k)>
#w = affine_map<(b, t, n, k) -> (n, k)>
#o = affine_map<(b, t, n, k) -> (b, t, n)>
func.func @projection(%x: memref<?x?x320xbf16>, %w: memref<96x320xbf16>, %y: memref<?x?x96xf32>) {
  linalg.generic {indexing_maps = [#a, #w, #o], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<?x?x320xbf16>, memref<96x320xbf16>) outs(%y : memref<?x?x96xf32>)
      attrs = {blockc_codegen.gpu_warpgroup_tiles = #blockc_codegen.gpu_warpgroup_tiles<tile_m = 128, tile_n = 96, stages = 3>} {
  ^bb0(%in: bf16, %wv: bf16, %acc: f32):
    %xf = arith.extf %in : bf16 to f32
    %wf = arith.extf %wv : bf16 to f32
    %p = arith.mulf %xf, %wf : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}
