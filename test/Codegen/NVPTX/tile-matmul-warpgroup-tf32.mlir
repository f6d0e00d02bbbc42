// RUN: blockc-opt %s -split-input-file --blockc-gpu-tile-matmul --canonicalize --cse | FileCheck %s

// The warpgroup-MMA kernel (sm_90a) of an f32 projection with tf32 operands
// (-gpu-allow-tf32, docs/GPU.md#tf32): f32 tiles by TMA, 32 f32 per
// 128-byte swizzled row (K = 96: 3 steps), rounded to tf32 in shared memory
// by the consumers (16 bytes at a time: add 0x1000, clear the low 13 bits),
// then fence.proxy.async and a barrier before the wgmmas read them: 4
// m64nNk8 tf32 MMAs per stage, descriptors 32 bytes apart.

// CHECK-LABEL: func.func @specialized
// CHECK-DAG:     %[[HALF:.+]] = arith.constant dense<4096> : vector<4xi32>
// CHECK-DAG:     %[[MASK:.+]] = arith.constant dense<-8192> : vector<4xi32>
// CHECK:         nvgpu.tma.create.descriptor %{{.+}} box[%c128, %c32] : memref<*xf32> -> <tensor = memref<128x32xf32, #gpu.address_space<workgroup>>, swizzle = swizzle_128b
// CHECK:         nvgpu.tma.create.descriptor %{{.+}} box[%c64, %c32] : memref<*xf32> -> <tensor = memref<64x32xf32, #gpu.address_space<workgroup>>, swizzle = swizzle_128b
// CHECK:         gpu.launch
// CHECK-SAME:      threads({{[^)]+}}) in (%{{[^ ]+}} = %c384,
// The producer: a stage is 24 KiB (128 + 64 rows of 128 bytes).
// CHECK:           nvvm.setmaxregister  decrease 40
// CHECK:           nvgpu.mbarrier.arrive.expect_tx %{{.+}}, %c24576
// CHECK:           nvgpu.tma.async.load {{.+}} -> memref<128x32xf32, #gpu.address_space<workgroup>>
// CHECK:           nvgpu.tma.async.load {{.+}} -> memref<64x32xf32, #gpu.address_space<workgroup>>
// The consumers (256 threads) round the stage's 1536 chunks of 16 bytes.
// CHECK:           nvvm.setmaxregister  increase 232
// CHECK:           scf.for %{{.+}} = %c0 to %c3 step %c1 iter_args
// CHECK:             nvgpu.mbarrier.try_wait.parity
// CHECK:             %[[WORDS:.+]] = memref.view {{.+}} to memref<6144xf32, #gpu.address_space<workgroup>>
// CHECK-NEXT:        scf.for %[[C:.+]] = %{{.+}} to %c1536 step %c256 {
// CHECK-NEXT:          %[[AT:.+]] = arith.muli %[[C]], %c4
// CHECK-NEXT:          %[[CHUNK:.+]] = vector.load %[[WORDS]][%[[AT]]] {alignment = 16 : i64} : memref<6144xf32, #gpu.address_space<workgroup>>, vector<4xf32>
// CHECK-NEXT:          %[[BITS:.+]] = arith.bitcast %[[CHUNK]] : vector<4xf32> to vector<4xi32>
// CHECK:               %[[UP:.+]] = arith.addi %[[BITS]], %[[HALF]]
// CHECK:               %[[CLEARED:.+]] = arith.andi %{{.+}}, %[[MASK]]
// CHECK-NEXT:          %[[ROUNDED:.+]] = arith.bitcast %[[CLEARED]] : vector<4xi32> to vector<4xf32>
// CHECK-NEXT:          vector.store %[[ROUNDED]], %[[WORDS]][%[[AT]]] {alignment = 16 : i64}
// CHECK-NEXT:        }
// CHECK-NEXT:        nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK-NEXT:        nvvm.barrier id = %c1_i32 number_of_threads = %c256_i32
// CHECK:             nvgpu.warpgroup.generate.descriptor %{{.+}} : memref<64x8xf32, #gpu.address_space<workgroup>>, {{.+}} -> <tensor = memref<64x8xtf32, #gpu.address_space<workgroup>>>
// CHECK:             nvgpu.warpgroup.generate.descriptor %{{.+}} : memref<64x8xf32, #gpu.address_space<workgroup>>, {{.+}} -> <tensor = memref<8x64xtf32, #gpu.address_space<workgroup>>>
// CHECK:             nvgpu.warpgroup.mma {{.+}} : <tensor = memref<64x8xtf32, #gpu.address_space<workgroup>>>, <tensor = memref<8x64xtf32, #gpu.address_space<workgroup>>>, <fragmented = vector<64x64xf32>>
// CHECK-COUNT-3:     nvgpu.warpgroup.mma {{.+}} : <tensor = memref<64x8xtf32, #gpu.address_space<workgroup>>>
// CHECK-NOT:         nvgpu.warpgroup.mma
// CHECK:             scf.yield
#a = affine_map<(m, n, k) -> (m, k)>
#w = affine_map<(m, n, k) -> (n, k)>
#o = affine_map<(m, n, k) -> (m, n)>
func.func @specialized(%x: memref<?x96xf32>, %w: memref<64x96xf32>, %y: memref<?x64xf32>) {
  linalg.generic {indexing_maps = [#a, #w, #o], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<?x96xf32>, memref<64x96xf32>) outs(%y : memref<?x64xf32>)
      attrs = {blockc_codegen.gpu_warpgroup_tiles = #blockc_codegen.gpu_warpgroup_tiles<tile_m = 128, tile_n = 64, stages = 2, producer = true>} {
  ^bb0(%in: f32, %wv: f32, %acc: f32):
    %p = arith.mulf %in, %wv : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Without a producer every thread rounds, and the block's barrier joins
// them before the MMAs.
// CHECK-LABEL: func.func @cooperative
// CHECK:         gpu.launch
// CHECK-SAME:      threads({{[^)]+}}) in (%{{[^ ]+}} = %c256,
// CHECK:           scf.for %{{.+}} = %c0 to %c3 step %c1 iter_args
// CHECK:             nvgpu.mbarrier.try_wait.parity
// CHECK:             scf.for %{{.+}} = %{{.+}} to %c1536 step %c256 {
// CHECK:               vector.store {{.+}} vector<4xf32>
// CHECK-NEXT:        }
// CHECK-NEXT:        nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK-NEXT:        gpu.barrier
// CHECK-COUNT-4:     nvgpu.warpgroup.mma {{.+}} : <tensor = memref<64x8xtf32, #gpu.address_space<workgroup>>>
// CHECK-NEXT:        gpu.barrier
#a = affine_map<(m, n, k) -> (m, k)>
#w = affine_map<(m, n, k) -> (n, k)>
#o = affine_map<(m, n, k) -> (m, n)>
func.func @cooperative(%x: memref<?x96xf32>, %w: memref<64x96xf32>, %y: memref<?x64xf32>) {
  linalg.generic {indexing_maps = [#a, #w, #o], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<?x96xf32>, memref<64x96xf32>) outs(%y : memref<?x64xf32>)
      attrs = {blockc_codegen.gpu_warpgroup_tiles = #blockc_codegen.gpu_warpgroup_tiles<tile_m = 128, tile_n = 64, stages = 2>} {
  ^bb0(%in: f32, %wv: f32, %acc: f32):
    %p = arith.mulf %in, %wv : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}
