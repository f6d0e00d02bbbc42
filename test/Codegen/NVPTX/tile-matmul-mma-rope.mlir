// RUN: blockc-opt %s -split-input-file --blockc-gpu-tile-matmul --canonicalize --cse | FileCheck %s

// RoPE in the mma.sync kernel's epilogue (rope_head_dim on its tiles,
// docs/GPU.md): the projection's result, rounded to bf16 by its consumer,
// is read only by a rotate-half RoPE over its [M, H, D] view (x at d, its
// partner at (d + D / 2) mod D, a table at d). The RoPE's output is
// allocated before the kernel. Once the ring is drained (the last wait, a
// barrier), each thread stores its 32 rounded results into a 32 x 72 bf16
// staging tile over the ring (rows padded by 8); after a barrier each of
// the 64 threads takes 16 pairs of columns (c0, c0 + 16) of a head, the
// same columns in each of its rows (64 is a multiple of the 32 pairs of a
// row, so its two table values are loaded before the pair loop), and for
// rows inside M stores the RoPE's two values to its output. No linalg op
// is left: the rounded buffer and the RoPE are gone.
// CHECK-LABEL: func.func @rope
// CHECK:         %[[TABLE:.+]] = memref.get_global @inv_freq : memref<32xf32>
// CHECK:         %[[ROT:.+]] = memref.alloc(%{{.+}}) : memref<?x2x32xbf16>
// CHECK:         gpu.launch
// CHECK-SAME:        threads({{.+}}) in ({{.+}} = %c64, {{.+}} = %c1, {{.+}} = %c1) dynamic_shared_memory_size %c15360_i32
// CHECK:           nvgpu.mma.sync
// CHECK:           nvgpu.device_async_wait %{{.+}} {numGroups = 0 : i32}
// CHECK-NEXT:      gpu.barrier
// CHECK-NEXT:      %[[STAGING:.+]] = memref.view %{{.+}}[%c0][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<32x72xbf16, #gpu.address_space<workgroup>>
// CHECK-COUNT-32:  memref.store %{{.+}}, %[[STAGING]][
// CHECK-NOT:       memref.store
// CHECK:           gpu.barrier
// CHECK:           %[[F0:.+]] = memref.load %[[TABLE]][%{{.+}}] : memref<32xf32>
// CHECK:           %[[F1:.+]] = memref.load %[[TABLE]][%{{.+}}] : memref<32xf32>
// CHECK-NEXT:      scf.for %{{.+}} = %{{.+}} to %c1024 step %c64 {
// CHECK:             scf.if
// CHECK:               %[[X0:.+]] = memref.load %[[STAGING]][%[[R:.+]], %[[C0:.+]]]
// CHECK-NEXT:          %[[X1:.+]] = memref.load %[[STAGING]][%[[R]], %[[C1:.+]]]
// CHECK-NOT:           memref<32xf32>
// CHECK:               arith.mulf %{{.+}}, %[[F0]] : f32
// CHECK:               %[[Y0:.+]] = arith.truncf %{{.+}} : f32 to bf16
// CHECK-NOT:           memref<32xf32>
// CHECK:               arith.mulf %{{.+}}, %[[F1]] : f32
// CHECK:               %[[Y1:.+]] = arith.truncf %{{.+}} : f32 to bf16
// CHECK-NEXT:          memref.store %[[Y0]], %[[ROT]][%[[M:.+]], %[[H:.+]], %{{.+}}] : memref<?x2x32xbf16>
// CHECK-NEXT:          memref.store %[[Y1]], %[[ROT]][%[[M]], %[[H]], %{{.+}}] : memref<?x2x32xbf16>
// CHECK:         kernel<tensor_core_matmul>
// CHECK-NOT:     linalg.
// CHECK:         memref.copy %[[ROT]], %arg2
memref.global "private" constant @inv_freq : memref<32xf32> = dense<0.5>
#a = affine_map<(m, n, k) -> (m, k)>
#w = affine_map<(m, n, k) -> (n, k)>
#o = affine_map<(m, n, k) -> (m, n)>
#id2 = affine_map<(m, n) -> (m, n)>
#id3 = affine_map<(m, h, d) -> (m, h, d)>
#partner = affine_map<(m, h, d) -> (m, h, (d + 16) mod 32)>
#col = affine_map<(m, h, d) -> (d)>
func.func @rope(%x: memref<?x128xbf16>, %w: memref<64x128xbf16>, %out: memref<?x2x32xbf16>) {
  %c0 = arith.constant 0 : index
  %chalf = arith.constant 16 : index
  %zero = arith.constant 0.0 : f32
  %m = memref.dim %x, %c0 : memref<?x128xbf16>
  %table = memref.get_global @inv_freq : memref<32xf32>
  %acc = memref.alloc(%m) : memref<?x64xf32>
  linalg.fill ins(%zero : f32) outs(%acc : memref<?x64xf32>)
  linalg.generic {indexing_maps = [#a, #w, #o], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<?x128xbf16>, memref<64x128xbf16>) outs(%acc : memref<?x64xf32>) attrs = {blockc_codegen.gpu_mma_tiles = #blockc_codegen.gpu_mma_tiles<tile_m = 32, tile_n = 64, tile_k = 32, warps_m = 1, warps_n = 2, stages = 2, rope_head_dim = 32>} {
  ^bb0(%in: bf16, %wv: bf16, %o: f32):
    %xf = arith.extf %in : bf16 to f32
    %wf = arith.extf %wv : bf16 to f32
    %p = arith.mulf %xf, %wf : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  }
  %q = memref.alloc(%m) : memref<?x64xbf16>
  linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%acc : memref<?x64xf32>) outs(%q : memref<?x64xbf16>) {
  ^bb0(%in: f32, %o: bf16):
    %r = arith.truncf %in : f32 to bf16
    linalg.yield %r : bf16
  }
  memref.dealloc %acc : memref<?x64xf32>
  %heads = memref.expand_shape %q [[0], [1, 2]] output_shape [%m, 2, 32] : memref<?x64xbf16> into memref<?x2x32xbf16>
  %rot = memref.alloc(%m) : memref<?x2x32xbf16>
  linalg.generic {indexing_maps = [#id3, #partner, #col, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%heads, %heads, %table : memref<?x2x32xbf16>, memref<?x2x32xbf16>, memref<32xf32>) outs(%rot : memref<?x2x32xbf16>) {
  ^bb0(%xv: bf16, %pv: bf16, %f: f32, %o: bf16):
    %t = linalg.index 0 : index
    %d = linalg.index 2 : index
    %ti = arith.index_cast %t : index to i64
    %tf = arith.sitofp %ti : i64 to f32
    %angle = arith.mulf %tf, %f : f32
    %cos = math.cos %angle : f32
    %sin = math.sin %angle : f32
    %neg = arith.negf %sin : f32
    %low = arith.cmpi ult, %d, %chalf : index
    %sgn = arith.select %low, %neg, %sin : f32
    %xe = arith.extf %xv : bf16 to f32
    %pe = arith.extf %pv : bf16 to f32
    %a1 = arith.mulf %xe, %cos : f32
    %a2 = arith.mulf %pe, %sgn : f32
    %y = arith.addf %a1, %a2 : f32
    %yb = arith.truncf %y : f32 to bf16
    linalg.yield %yb : bf16
  }
  memref.dealloc %q : memref<?x64xbf16>
  memref.copy %rot, %out : memref<?x2x32xbf16> to memref<?x2x32xbf16>
  memref.dealloc %rot : memref<?x2x32xbf16>
  return
}

// -----

// One warp on a 16 x 128 tile of two heads of 64: its 32 threads stride
// over the 64 pairs of a row, so each takes different columns in
// alternate rows and loads the table values of each pair in the loop. The
// staging tile takes 4352 bytes, less than the ring's 23040.
// CHECK-LABEL: func.func @rope_per_pair
// CHECK:         gpu.launch
// CHECK-SAME:        dynamic_shared_memory_size %c23040_i32
// CHECK:           %[[STAGING:.+]] = memref.view %{{.+}}[%c0][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<16x136xbf16, #gpu.address_space<workgroup>>
// CHECK:           gpu.barrier
// CHECK-NEXT:      scf.for %{{.+}} = %{{.+}} to %c1024 step %c32 {
// CHECK:             memref.load %{{.+}}[%{{.+}}] : memref<64xf32>
// CHECK:             memref.load %{{.+}}[%{{.+}}] : memref<64xf32>
// CHECK:             scf.if
// CHECK:               memref.load %[[STAGING]]
// CHECK-NEXT:          memref.load %[[STAGING]]
memref.global "private" constant @inv_freq64 : memref<64xf32> = dense<0.5>
#a = affine_map<(m, n, k) -> (m, k)>
#w = affine_map<(m, n, k) -> (n, k)>
#o = affine_map<(m, n, k) -> (m, n)>
#id2 = affine_map<(m, n) -> (m, n)>
#id3 = affine_map<(m, h, d) -> (m, h, d)>
#partner = affine_map<(m, h, d) -> (m, h, (d + 32) mod 64)>
#col = affine_map<(m, h, d) -> (d)>
func.func @rope_per_pair(%x: memref<?x128xbf16>, %w: memref<128x128xbf16>, %out: memref<?x2x64xbf16>) {
  %c0 = arith.constant 0 : index
  %chalf = arith.constant 32 : index
  %zero = arith.constant 0.0 : f32
  %m = memref.dim %x, %c0 : memref<?x128xbf16>
  %table = memref.get_global @inv_freq64 : memref<64xf32>
  %acc = memref.alloc(%m) : memref<?x128xf32>
  linalg.fill ins(%zero : f32) outs(%acc : memref<?x128xf32>)
  linalg.generic {indexing_maps = [#a, #w, #o], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<?x128xbf16>, memref<128x128xbf16>) outs(%acc : memref<?x128xf32>) attrs = {blockc_codegen.gpu_mma_tiles = #blockc_codegen.gpu_mma_tiles<tile_m = 16, tile_n = 128, tile_k = 32, warps_m = 1, warps_n = 1, stages = 2, rope_head_dim = 64>} {
  ^bb0(%in: bf16, %wv: bf16, %o: f32):
    %xf = arith.extf %in : bf16 to f32
    %wf = arith.extf %wv : bf16 to f32
    %p = arith.mulf %xf, %wf : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  }
  %q = memref.alloc(%m) : memref<?x128xbf16>
  linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%acc : memref<?x128xf32>) outs(%q : memref<?x128xbf16>) {
  ^bb0(%in: f32, %o: bf16):
    %r = arith.truncf %in : f32 to bf16
    linalg.yield %r : bf16
  }
  memref.dealloc %acc : memref<?x128xf32>
  %heads = memref.expand_shape %q [[0], [1, 2]] output_shape [%m, 2, 64] : memref<?x128xbf16> into memref<?x2x64xbf16>
  %rot = memref.alloc(%m) : memref<?x2x64xbf16>
  linalg.generic {indexing_maps = [#id3, #partner, #col, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%heads, %heads, %table : memref<?x2x64xbf16>, memref<?x2x64xbf16>, memref<64xf32>) outs(%rot : memref<?x2x64xbf16>) {
  ^bb0(%xv: bf16, %pv: bf16, %f: f32, %o: bf16):
    %t = linalg.index 0 : index
    %d = linalg.index 2 : index
    %ti = arith.index_cast %t : index to i64
    %tf = arith.sitofp %ti : i64 to f32
    %angle = arith.mulf %tf, %f : f32
    %cos = math.cos %angle : f32
    %sin = math.sin %angle : f32
    %neg = arith.negf %sin : f32
    %low = arith.cmpi ult, %d, %chalf : index
    %sgn = arith.select %low, %neg, %sin : f32
    %xe = arith.extf %xv : bf16 to f32
    %pe = arith.extf %pv : bf16 to f32
    %a1 = arith.mulf %xe, %cos : f32
    %a2 = arith.mulf %pe, %sgn : f32
    %y = arith.addf %a1, %a2 : f32
    %yb = arith.truncf %y : f32 to bf16
    linalg.yield %yb : bf16
  }
  memref.dealloc %q : memref<?x128xbf16>
  memref.copy %rot, %out : memref<?x2x64xbf16> to memref<?x2x64xbf16>
  memref.dealloc %rot : memref<?x2x64xbf16>
  return
}
