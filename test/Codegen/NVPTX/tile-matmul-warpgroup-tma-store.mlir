// RUN: blockc-opt %s -split-input-file --blockc-gpu-tile-matmul --canonicalize --cse | FileCheck %s

// The warpgroup-MMA kernel's epilogue through a TMA store (tma_store =
// true on its tiles, docs/GPU.md): the results, the fused epilogue applied,
// go into a bf16 staging tile after the f32 tile instead of global memory,
// and the consumers' first thread stores it through a tensor map of the
// output; where TMA cannot store the output (f32, rows that are not a
// multiple of 16 bytes) the kernel keeps the per-element stores.

// A q projection rounded to bf16 by its consumer: 128 x 96 tiles, a
// producer and 2 consumer warpgroups. The host makes a tensor map of the
// collapsed [M, 96] bf16 output with 128 x 96 boxes and no swizzle. The
// staging tile follows the 51200 bytes of the f32 tile (128 rows of 100
// floats), inside the 86016 bytes of the ring: the shared memory is the
// same 87040 bytes. The consumers' thread 0 (tid 128) waits for the reads
// of its last store before the staging tile is written (after the
// fragments' stores) and at the end; the 256 consumer threads write the
// whole staging tile (48 elements each, no bounds checks: TMA clips),
// fence their writes for the async proxy and meet; thread 0 stores the
// tile at (n0, m0) and commits the bulk group.
// CHECK-LABEL: func.func @round_to_bf16
// CHECK:         %[[OUT:.+]] = memref.collapse_shape %arg2 {{\[}}[0, 1], [2]] : memref<?x?x96xbf16> into memref<?x96xbf16>
// CHECK:         %[[OUTU:.+]] = memref.cast %[[OUT]] : memref<?x96xbf16> to memref<*xbf16>
// CHECK:         %[[MAP:.+]] = nvgpu.tma.create.descriptor %[[OUTU]] box[%c128, %c96] : memref<*xbf16> -> <tensor = memref<128x96xbf16, #gpu.address_space<workgroup>>, swizzle = none, l2promo = none, oob = zero, interleave = none>
// CHECK:         gpu.launch
// CHECK-SAME:      dynamic_shared_memory_size %c87040_i32
// CHECK:           nvvm.setmaxregister  increase 232
// CHECK:           blockc_codegen.accumulator_to_fragment
// CHECK-COUNT-24:    vector.store
// CHECK-NEXT:      %[[STORER:.+]] = arith.cmpi eq, %{{.+}}, %c0 : index
// CHECK-NEXT:      scf.if %[[STORER]] {
// CHECK-NEXT:        nvvm.cp.async.bulk.wait_group 0 {read}
// CHECK-NEXT:      }
// CHECK-NEXT:      nvvm.barrier id = %c1_i32 number_of_threads = %c256_i32
// CHECK-NEXT:      %[[TILE:.+]] = memref.view %{{.+}}[%[[OFF:.+]]][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<128x100xf32, #gpu.address_space<workgroup>>
// CHECK-NEXT:      %[[SOFF:.+]] = arith.addi %[[OFF]], %c51200 : index
// CHECK-NEXT:      %[[STAGING:.+]] = memref.view %{{.+}}[%[[SOFF]]][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<128x96xbf16, #gpu.address_space<workgroup>>
// CHECK-NEXT:      scf.for %{{.+}} = %c0 to %c48 step %c4 {
// CHECK-NOT:         scf.if
// CHECK-NOT:         memref.store {{.+}} %arg2
// CHECK:             %[[V:.+]] = memref.load %[[TILE]]
// CHECK-NEXT:        %[[S:.+]] = arith.addf %[[V]], %cst : f32
// CHECK-NEXT:        %[[R:.+]] = arith.truncf %[[S]] : f32 to bf16
// CHECK-NEXT:        memref.store %[[R]], %[[STAGING]][
// CHECK-COUNT-3:     memref.store {{.+}}, %[[STAGING]][
// CHECK-NEXT:      }
// CHECK-NEXT:      nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK-NEXT:      nvvm.barrier id = %c1_i32 number_of_threads = %c256_i32
// CHECK-NEXT:      scf.if %[[STORER]] {
// CHECK-NEXT:        nvgpu.tma.async.store %[[STAGING]] to %[[MAP]][%c0, %{{.+}}] : memref<128x96xbf16, #gpu.address_space<workgroup>> -> <tensor = memref<128x96xbf16, #gpu.address_space<workgroup>>, swizzle = none, l2promo = none, oob = zero, interleave = none>
// CHECK-NEXT:        nvvm.cp.async.bulk.commit.group
// CHECK-NEXT:      }
// CHECK-NEXT:      scf.if %[[STORER]] {
// CHECK-NEXT:        nvvm.cp.async.bulk.wait_group 0 {read}
// CHECK-NEXT:      }
// CHECK:         kernel<warpgroup_matmul>
#a = affine_map<(b, t, n, k) -> (b, t, k)>
#w = affine_map<(b, t, n, k) -> (n, k)>
#o = affine_map<(b, t, n, k) -> (b, t, n)>
#id = affine_map<(b, t, n) -> (b, t, n)>
func.func @round_to_bf16(%x: memref<?x?x320xbf16>, %w: memref<96x320xbf16>,
                         %y: memref<?x?x96xbf16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %b = memref.dim %x, %c0 : memref<?x?x320xbf16>
  %t = memref.dim %x, %c1 : memref<?x?x320xbf16>
  %acc = memref.alloc(%b, %t) : memref<?x?x96xf32>
  linalg.fill ins(%zero : f32) outs(%acc : memref<?x?x96xf32>)
  linalg.generic {indexing_maps = [#a, #w, #o], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<?x?x320xbf16>, memref<96x320xbf16>) outs(%acc : memref<?x?x96xf32>)
      attrs = {blockc_codegen.gpu_warpgroup_tiles = #blockc_codegen.gpu_warpgroup_tiles<tile_m = 128, tile_n = 96, stages = 3, producer = true, tma_store = true>} {
  ^bb0(%in: bf16, %wv: bf16, %out: f32):
    %xf = arith.extf %in : bf16 to f32
    %wf = arith.extf %wv : bf16 to f32
    %p = arith.mulf %xf, %wf : f32
    %s = arith.addf %out, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%acc : memref<?x?x96xf32>) outs(%y : memref<?x?x96xbf16>) {
  ^bb0(%in: f32, %out: bf16):
    %v = arith.truncf %in : f32 to bf16
    linalg.yield %v : bf16
  }
  memref.dealloc %acc : memref<?x?x96xf32>
  return
}


// -----

// An f32 output (no consumer rounds it): per-element stores under bounds
// checks, no tensor map of the output, no staging tile.
// CHECK-LABEL: func.func @f32_output
// CHECK-COUNT-2: nvgpu.tma.create.descriptor
// CHECK-NOT:     nvgpu.tma.create.descriptor
// CHECK:         gpu.launch
// CHECK-SAME:      dynamic_shared_memory_size %c33792_i32
// CHECK-NOT:       tma.async.store
// CHECK:           memref.store %{{.+}}, %arg2[%{{.+}}, %{{.+}}] : memref<?x64xf32>
// CHECK-NOT:       tma.async.store
// CHECK-NOT:       cp.async.bulk
// CHECK:         kernel<warpgroup_matmul>
#a = affine_map<(m, n, k) -> (m, k)>
#w = affine_map<(m, n, k) -> (n, k)>
#o = affine_map<(m, n, k) -> (m, n)>
func.func @f32_output(%x: memref<?x64xbf16>, %w: memref<64x64xbf16>, %y: memref<?x64xf32>) {
  linalg.generic {indexing_maps = [#a, #w, #o], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<?x64xbf16>, memref<64x64xbf16>) outs(%y : memref<?x64xf32>)
      attrs = {blockc_codegen.gpu_warpgroup_tiles = #blockc_codegen.gpu_warpgroup_tiles<tile_m = 64, tile_n = 64, stages = 2, tma_store = true>} {
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

// A bf16 output of 36 columns: its rows (72 bytes) are not a multiple of
// 16 bytes, which TMA's strides must be: per-element stores.
// CHECK-LABEL: func.func @unaligned_rows
// CHECK-NOT:       tma.async.store
// CHECK:           memref.store %{{.+}}, %arg2[%{{.+}}, %{{.+}}] : memref<?x36xbf16>
// CHECK-NOT:       tma.async.store
// CHECK-NOT:       cp.async.bulk
// CHECK:         kernel<warpgroup_matmul>
#a = affine_map<(m, n, k) -> (m, k)>
#w = affine_map<(m, n, k) -> (n, k)>
#o = affine_map<(m, n, k) -> (m, n)>
#id = affine_map<(m, n) -> (m, n)>
func.func @unaligned_rows(%x: memref<?x64xbf16>, %w: memref<36x64xbf16>, %y: memref<?x36xbf16>) {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %m = memref.dim %x, %c0 : memref<?x64xbf16>
  %acc = memref.alloc(%m) : memref<?x36xf32>
  linalg.fill ins(%zero : f32) outs(%acc : memref<?x36xf32>)
  linalg.generic {indexing_maps = [#a, #w, #o], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<?x64xbf16>, memref<36x64xbf16>) outs(%acc : memref<?x36xf32>)
      attrs = {blockc_codegen.gpu_warpgroup_tiles = #blockc_codegen.gpu_warpgroup_tiles<tile_m = 64, tile_n = 40, stages = 2, tma_store = true>} {
  ^bb0(%in: bf16, %wv: bf16, %out: f32):
    %xf = arith.extf %in : bf16 to f32
    %wf = arith.extf %wv : bf16 to f32
    %p = arith.mulf %xf, %wf : f32
    %s = arith.addf %out, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%acc : memref<?x36xf32>) outs(%y : memref<?x36xbf16>) {
  ^bb0(%in: f32, %out: bf16):
    %v = arith.truncf %in : f32 to bf16
    linalg.yield %v : bf16
  }
  memref.dealloc %acc : memref<?x36xf32>
  return
}
