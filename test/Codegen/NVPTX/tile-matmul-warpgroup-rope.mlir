// RUN: blockc-opt %s -split-input-file --blockc-gpu-tile-matmul --canonicalize --cse | FileCheck %s

// RoPE in the warpgroup-MMA kernel's TMA-store epilogue (rope_head_dim on
// its tiles, docs/GPU.md): the projection's result, rounded to bf16 by its
// consumer, is read only by a rotate-half RoPE over its [M, H, D] view
// (x at d, its partner at (d + D / 2) mod D, a cos/sin table at d). The
// kernel writes the RoPE's output (allocated before the kernel, its
// collapsed [M, H * D] matrix is the TMA store's) and rotates the staging
// tile (after the 17408 bytes of the f32 tile), once every thread wrote
// its rounded results (4 per loop step) and the consumers met: each of
// the 128 consumer threads takes 16 pairs of columns (c0, c0 + 16) of a
// head, the same columns in each of its rows (its frequency table values
// are loaded once, before the pair loop), reads both values, evaluates
// the RoPE body for both and writes both back; then the fence, the
// barrier and the TMA store. No linalg op is left: the rounded buffer and
// the RoPE are gone.
// CHECK-LABEL: func.func @rope
// CHECK:         %[[ROT:.+]] = memref.alloc(%{{.+}}) : memref<?x2x32xbf16>
// CHECK:         %[[MAT:.+]] = memref.collapse_shape %[[ROT]] {{\[}}[0], [1, 2]] : memref<?x2x32xbf16> into memref<?x64xbf16>
// CHECK:         %[[MATU:.+]] = memref.cast %[[MAT]] : memref<?x64xbf16> to memref<*xbf16>
// CHECK:         %[[MAP:.+]] = nvgpu.tma.create.descriptor %[[MATU]] box[%c64, %c64]
// CHECK:         gpu.launch
// CHECK:           arith.addi %{{.+}}, %c17408 : index
// CHECK-NEXT:      %[[STAGING:.+]] = memref.view {{.+}} to memref<64x64xbf16, #gpu.address_space<workgroup>>
// CHECK-COUNT-4:   memref.store %{{.+}}, %[[STAGING]][
// CHECK-NEXT:    }
// CHECK-NEXT:    nvvm.barrier id = %c1_i32 number_of_threads = %c128_i32
// CHECK:         %[[F0:.+]] = memref.load %{{.+}}[%{{.+}}] : memref<32xf32>
// CHECK:         %[[F1:.+]] = memref.load %{{.+}}[%{{.+}}] : memref<32xf32>
// CHECK-NEXT:    scf.for %[[P:.+]] = %{{.+}} to %c2048 step %c128 {
// CHECK-NOT:       memref<32xf32>
// CHECK:           %[[X0:.+]] = memref.load %[[STAGING]][%[[R:.+]], %[[C0:.+]]]
// CHECK-NEXT:      %[[X1:.+]] = memref.load %[[STAGING]][%[[R]], %[[C1:.+]]]
// CHECK-NOT:       memref<32xf32>
// CHECK:           arith.mulf %{{.+}}, %[[F0]] : f32
// CHECK:           math.cos
// CHECK:           math.sin
// CHECK:           %[[Y0:.+]] = arith.truncf %{{.+}} : f32 to bf16
// CHECK-NOT:       memref<32xf32>
// CHECK:           arith.mulf %{{.+}}, %[[F1]] : f32
// CHECK:           math.cos
// CHECK:           math.sin
// CHECK:           %[[Y1:.+]] = arith.truncf %{{.+}} : f32 to bf16
// CHECK-NEXT:      memref.store %[[Y0]], %[[STAGING]][%[[R]], %[[C0]]]
// CHECK-NEXT:      memref.store %[[Y1]], %[[STAGING]][%[[R]], %[[C1]]]
// CHECK-NEXT:    }
// CHECK-NEXT:    nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK-NEXT:    nvvm.barrier id = %c1_i32 number_of_threads = %c128_i32
// CHECK-NEXT:    scf.if
// CHECK-NEXT:      nvgpu.tma.async.store %[[STAGING]] to %[[MAP]]
// CHECK:         kernel<warpgroup_matmul>
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
  %c16 = arith.constant 16 : index
  %zero = arith.constant 0.0 : f32
  %m = memref.dim %x, %c0 : memref<?x128xbf16>
  %table = memref.get_global @inv_freq : memref<32xf32>
  %acc = memref.alloc(%m) : memref<?x64xf32>
  linalg.fill ins(%zero : f32) outs(%acc : memref<?x64xf32>)
  linalg.generic {indexing_maps = [#a, #w, #o], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<?x128xbf16>, memref<64x128xbf16>) outs(%acc : memref<?x64xf32>)
      attrs = {blockc_codegen.gpu_warpgroup_tiles = #blockc_codegen.gpu_warpgroup_tiles<tile_m = 64, tile_n = 64, stages = 2, producer = true, tma_store = true, rope_head_dim = 32>} {
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
    %low = arith.cmpi ult, %d, %c16 : index
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

// The per-element epilogue (no tma_store): once the f32 tile is written
// and the consumers met, each consumer thread takes 16 pairs of its
// columns (c0, c0 + 16) of a head (its table values loaded once, before
// the loop), evaluates the consumer (the rounding) and the RoPE body for
// both and, for rows inside M, stores the two rotated values to the
// RoPE's output.
// CHECK-LABEL: func.func @rope_elements
// CHECK:         %[[ROT:.+]] = memref.alloc(%{{.+}}) : memref<?x2x32xbf16>
// CHECK:         gpu.launch
// CHECK:           %[[F0:.+]] = memref.load %{{.+}}[%{{.+}}] : memref<32xf32>
// CHECK:           %[[F1:.+]] = memref.load %{{.+}}[%{{.+}}] : memref<32xf32>
// CHECK-NEXT:      scf.for %{{.+}} = %{{.+}} to %c2048 step %c128 {
// CHECK:             scf.if
// CHECK:               memref.load %[[TILE:[a-z_0-9]+]][%[[R:.+]], %{{.+}}] : memref<64x68xf32
// CHECK:               arith.truncf %{{.+}} : f32 to bf16
// CHECK:               memref.load %[[TILE]][%[[R]], %{{.+}}] : memref<64x68xf32
// CHECK:               arith.truncf %{{.+}} : f32 to bf16
// CHECK-NOT:           memref<32xf32>
// CHECK:               arith.mulf %{{.+}}, %[[F0]] : f32
// CHECK:               %[[Y0:.+]] = arith.truncf %{{.+}} : f32 to bf16
// CHECK:               arith.mulf %{{.+}}, %[[F1]] : f32
// CHECK:               %[[Y1:.+]] = arith.truncf %{{.+}} : f32 to bf16
// CHECK-NEXT:          memref.store %[[Y0]], %[[ROT]][%[[M:.+]], %[[H:.+]], %{{.+}}] : memref<?x2x32xbf16>
// CHECK-NEXT:          memref.store %[[Y1]], %[[ROT]][%[[M]], %[[H]], %{{.+}}] : memref<?x2x32xbf16>
// CHECK:         kernel<warpgroup_matmul>
// CHECK-NOT:     linalg.
// CHECK:         memref.copy %[[ROT]], %arg2
memref.global "private" constant @inv_freq_el : memref<32xf32> = dense<0.5>
#a = affine_map<(m, n, k) -> (m, k)>
#w = affine_map<(m, n, k) -> (n, k)>
#o = affine_map<(m, n, k) -> (m, n)>
#id2 = affine_map<(m, n) -> (m, n)>
#id3 = affine_map<(m, h, d) -> (m, h, d)>
#partner = affine_map<(m, h, d) -> (m, h, (d + 16) mod 32)>
#col = affine_map<(m, h, d) -> (d)>
func.func @rope_elements(%x: memref<?x128xbf16>, %w: memref<64x128xbf16>, %out: memref<?x2x32xbf16>) {
  %c0 = arith.constant 0 : index
  %chalf = arith.constant 16 : index
  %zero = arith.constant 0.0 : f32
  %m = memref.dim %x, %c0 : memref<?x128xbf16>
  %table = memref.get_global @inv_freq_el : memref<32xf32>
  %acc = memref.alloc(%m) : memref<?x64xf32>
  linalg.fill ins(%zero : f32) outs(%acc : memref<?x64xf32>)
  linalg.generic {indexing_maps = [#a, #w, #o], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<?x128xbf16>, memref<64x128xbf16>) outs(%acc : memref<?x64xf32>) attrs = {blockc_codegen.gpu_warpgroup_tiles = #blockc_codegen.gpu_warpgroup_tiles<tile_m = 64, tile_n = 64, stages = 2, producer = true, rope_head_dim = 32>} {
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
