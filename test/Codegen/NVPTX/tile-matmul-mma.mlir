// RUN: blockc-opt %s --blockc-gpu-tile-matmul --canonicalize --cse | FileCheck %s

// The tensor-core kernel of a bf16 projection y[b, t, n] += x[b, t, k] *
// W[n, k] with hand-set small tiles: 32 x 32 tiles on 1 x 2 warps (warp
// tile 32 x 16: 2 m16 A fragments, 2 n8 B fragments from one ldmatrix.x4),
// k steps of 32 (2 k16 steps) in a 3-stage ring. K = 64: 2 reduction steps.

#a = affine_map<(b, t, n, k) -> (b, t, k)>
#w = affine_map<(b, t, n, k) -> (n, k)>
#o = affine_map<(b, t, n, k) -> (b, t, n)>

// CHECK-LABEL: func.func @projection
// Grid (ceil(48 / 32), ceil(B * T / 32), 1), 64 threads.
// The ring: 3 stages x (32 + 32) rows x 40 bf16 = 15360 bytes of dynamic
// shared memory, A's stages then B's.
// CHECK:         gpu.launch blocks({{[^)]+}}) in (%{{[^ ]+}} = %c2, %{{[^ ]+}} = %{{[^,]+}}, %{{[^ ]+}} = %c1)
// CHECK-SAME:      threads({{[^)]+}}) in (%{{[^ ]+}} = %c64, %{{[^ ]+}} = %c1, %{{[^ ]+}} = %c1)
// CHECK-SAME:      dynamic_shared_memory_size %c15360_i32
// CHECK:         %[[BASE:.+]] = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
// CHECK:         %[[AS:.+]] = memref.view %[[BASE]][%c0][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<3x32x40xbf16, #gpu.address_space<workgroup>>
// CHECK:         %[[BS:.+]] = memref.view %[[BASE]][%c7680][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<3x32x40xbf16, #gpu.address_space<workgroup>>
// Prologue: 2 stages in flight, each 32 x 32 bf16 per operand = 128
// 16-byte chunks, 2 per thread, zero-filled past the rows or the steps.
// CHECK:         nvgpu.device_async_copy %arg0[{{.+}}], %[[AS]][%c0, {{.+}}], 8, %{{.+}} {bypassL1} : memref<?x?x64xbf16> to memref<3x32x40xbf16, #gpu.address_space<workgroup>>
// CHECK:         nvgpu.device_async_copy %arg1[{{.+}}], %[[BS]][%c0, {{.+}}], 8, %{{.+}} {bypassL1} : memref<48x64xbf16> to memref<3x32x40xbf16, #gpu.address_space<workgroup>>
// CHECK:         %[[G0:.+]] = nvgpu.device_async_create_group
// CHECK:         nvgpu.device_async_copy %arg0[{{.+}}], %[[AS]][%c1,
// CHECK:         %[[G1:.+]] = nvgpu.device_async_create_group
// One barrier per step: wait for step kt (at most stages - 2 = 1 group
// pending), synchronise, refill the stage of step kt - 1, consume kt.
// CHECK:         %[[ACC:.+]]:4 = scf.for %[[KT:.+]] = %c0 to %c2 step %c1 iter_args({{.+}}) -> (vector<2x2xf32>, vector<2x2xf32>, vector<2x2xf32>, vector<2x2xf32>)
// CHECK:           nvgpu.device_async_wait %[[G1]] {numGroups = 1 : i32}
// CHECK-NEXT:      gpu.barrier
// CHECK:           nvgpu.device_async_create_group
// CHECK-COUNT-2:   nvgpu.ldmatrix %[[AS]][{{.+}}] {numTiles = 4 : i32, transpose = false} : memref<3x32x40xbf16, #gpu.address_space<workgroup>> -> vector<4x2xbf16>
// CHECK:           nvgpu.ldmatrix %[[BS]][{{.+}}] {numTiles = 4 : i32, transpose = false}
// CHECK-COUNT-4:   nvgpu.mma.sync({{.+}}) {mmaShape = [16, 8, 16]} : (vector<4x2xbf16>, vector<2x2xbf16>, vector<2x2xf32>) -> vector<2x2xf32>
// CHECK-COUNT-2:   nvgpu.ldmatrix %[[AS]]
// CHECK:           nvgpu.ldmatrix %[[BS]]
// CHECK-COUNT-4:   nvgpu.mma.sync
// CHECK-NOT:       gpu.barrier
// CHECK:           scf.yield
// CHECK:         nvgpu.device_async_wait %[[G1]] {numGroups = 0 : i32}
// Epilogue: 4 accumulators x 4 elements, each added under a bounds check.
// CHECK-COUNT-16: memref.store
// CHECK:         gpu.terminator
// CHECK:         } {blockc_codegen.kernel = #blockc_codegen.kernel<tensor_core_matmul>}
// CHECK-NOT:     linalg.generic
func.func @projection(%x: memref<?x?x64xbf16>, %w: memref<48x64xbf16>, %y: memref<?x?x48xf32>) {
  linalg.generic {indexing_maps = [#a, #w, #o], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<?x?x64xbf16>, memref<48x64xbf16>) outs(%y : memref<?x?x48xf32>)
      attrs = {blockc_codegen.gpu_mma_tiles = #blockc_codegen.gpu_mma_tiles<tile_m = 32, tile_n = 32, tile_k = 32, warps_m = 1, warps_n = 2, stages = 3>} {
  ^bb0(%in: bf16, %wv: bf16, %acc: f32):
    %xf = arith.extf %in : bf16 to f32
    %wf = arith.extf %wv : bf16 to f32
    %p = arith.mulf %xf, %wf : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}
