// RUN: blockc-opt %s -split-input-file --blockc-gpu-select-tiles=chip=sm_80 | FileCheck %s --check-prefixes=CHECK,ROPE
// RUN: blockc-opt %s -split-input-file --blockc-gpu-select-tiles="chip=sm_80 mma-rope=false gemv-rope-append=false" | FileCheck %s --check-prefixes=CHECK,OFF
// RUN: blockc-opt %s -split-input-file --blockc-gpu-select-tiles=chip=sm_90a | FileCheck %s --check-prefixes=CHECK,SM90A

// RoPE in the mma.sync kernel's epilogue (docs/GPU.md): on sm_80 a
// projection whose rounded result only a rotate-half RoPE reads (over its
// [M, H, D] view) gets rope_head_dim = D on its mma.sync tiles when D
// divides tile_n (128); not with mma-rope=false (the OFF run also sets
// gemv-rope-append=false: the gpu_gemv of these dynamic-M projections
// would carry its own rope_head_dim). On sm_90a the warpgroup
// kernel takes it (rope_head_dim on its tiles, not on the mma.sync ones).

// CHECK-LABEL: func.func @rope
// ROPE:          gpu_mma_tiles<tile_m = 128, tile_n = 128, tile_k = 32, warps_m = 2, warps_n = 2, stages = 4, rope_head_dim = 64>
// OFF:           gpu_mma_tiles<tile_m = 128, tile_n = 128, tile_k = 32, warps_m = 2, warps_n = 2, stages = 4>}
// SM90A:         gpu_mma_tiles<tile_m = 128, tile_n = 128, tile_k = 32, warps_m = 2, warps_n = 2, stages = 4>,
// SM90A-SAME:    gpu_warpgroup_tiles<tile_m = 128, tile_n = 128, stages = 4, producer = true, tma_store = true, rope_head_dim = 64>
memref.global "private" constant @inv_freq : memref<64xf32> = dense<0.5>
#a = affine_map<(m, n, k) -> (m, k)>
#w = affine_map<(m, n, k) -> (n, k)>
#o = affine_map<(m, n, k) -> (m, n)>
#id2 = affine_map<(m, n) -> (m, n)>
#id3 = affine_map<(m, h, d) -> (m, h, d)>
#partner = affine_map<(m, h, d) -> (m, h, (d + 32) mod 64)>
#col = affine_map<(m, h, d) -> (d)>
func.func @rope(%x: memref<?x128xbf16>, %w: memref<128x128xbf16>, %out: memref<?x2x64xbf16>) {
  %c0 = arith.constant 0 : index
  %chalf = arith.constant 32 : index
  %zero = arith.constant 0.0 : f32
  %m = memref.dim %x, %c0 : memref<?x128xbf16>
  %table = memref.get_global @inv_freq : memref<64xf32>
  %acc = memref.alloc(%m) : memref<?x128xf32>
  linalg.fill ins(%zero : f32) outs(%acc : memref<?x128xf32>)
  linalg.generic {indexing_maps = [#a, #w, #o], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<?x128xbf16>, memref<128x128xbf16>) outs(%acc : memref<?x128xf32>) {
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

// -----

// Tiles that stage 1 wrote on tensors (the heuristic's own) get the
// RoPE on buffers; head dim 128.
// CHECK-LABEL: func.func @rope_stage1
// ROPE:          gpu_mma_tiles<tile_m = 128, tile_n = 128, tile_k = 32, warps_m = 2, warps_n = 2, stages = 4, rope_head_dim = 128>
// OFF-NOT:       rope_head_dim
memref.global "private" constant @inv_freq128 : memref<128xf32> = dense<0.5>
#a = affine_map<(m, n, k) -> (m, k)>
#w = affine_map<(m, n, k) -> (n, k)>
#o = affine_map<(m, n, k) -> (m, n)>
#id2 = affine_map<(m, n) -> (m, n)>
#id3 = affine_map<(m, h, d) -> (m, h, d)>
#partner = affine_map<(m, h, d) -> (m, h, (d + 64) mod 128)>
#col = affine_map<(m, h, d) -> (d)>
func.func @rope_stage1(%x: memref<?x128xbf16>, %w: memref<128x128xbf16>, %out: memref<?x1x128xbf16>) {
  %c0 = arith.constant 0 : index
  %chalf = arith.constant 64 : index
  %zero = arith.constant 0.0 : f32
  %m = memref.dim %x, %c0 : memref<?x128xbf16>
  %table = memref.get_global @inv_freq128 : memref<128xf32>
  %acc = memref.alloc(%m) : memref<?x128xf32>
  linalg.fill ins(%zero : f32) outs(%acc : memref<?x128xf32>)
  linalg.generic {indexing_maps = [#a, #w, #o], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<?x128xbf16>, memref<128x128xbf16>) outs(%acc : memref<?x128xf32>) attrs = {blockc_codegen.gpu_mma_tiles = #blockc_codegen.gpu_mma_tiles<tile_m = 128, tile_n = 128, tile_k = 32, warps_m = 2, warps_n = 2, stages = 4>} {
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
  %heads = memref.expand_shape %q [[0], [1, 2]] output_shape [%m, 1, 128] : memref<?x128xbf16> into memref<?x1x128xbf16>
  %rot = memref.alloc(%m) : memref<?x1x128xbf16>
  linalg.generic {indexing_maps = [#id3, #partner, #col, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%heads, %heads, %table : memref<?x1x128xbf16>, memref<?x1x128xbf16>, memref<128xf32>) outs(%rot : memref<?x1x128xbf16>) {
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
  memref.copy %rot, %out : memref<?x1x128xbf16> to memref<?x1x128xbf16>
  memref.dealloc %rot : memref<?x1x128xbf16>
  return
}

// -----

// Tiles written by hand are kept as they are.
// CHECK-LABEL: func.func @rope_hand
// CHECK:         gpu_mma_tiles<tile_m = 64, tile_n = 64, tile_k = 32, warps_m = 2, warps_n = 2, stages = 3>
memref.global "private" constant @inv_freq32 : memref<32xf32> = dense<0.5>
#a = affine_map<(m, n, k) -> (m, k)>
#w = affine_map<(m, n, k) -> (n, k)>
#o = affine_map<(m, n, k) -> (m, n)>
#id2 = affine_map<(m, n) -> (m, n)>
#id3 = affine_map<(m, h, d) -> (m, h, d)>
#partner = affine_map<(m, h, d) -> (m, h, (d + 16) mod 32)>
#col = affine_map<(m, h, d) -> (d)>
func.func @rope_hand(%x: memref<?x128xbf16>, %w: memref<64x128xbf16>, %out: memref<?x2x32xbf16>) {
  %c0 = arith.constant 0 : index
  %chalf = arith.constant 16 : index
  %zero = arith.constant 0.0 : f32
  %m = memref.dim %x, %c0 : memref<?x128xbf16>
  %table = memref.get_global @inv_freq32 : memref<32xf32>
  %acc = memref.alloc(%m) : memref<?x64xf32>
  linalg.fill ins(%zero : f32) outs(%acc : memref<?x64xf32>)
  linalg.generic {indexing_maps = [#a, #w, #o], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<?x128xbf16>, memref<64x128xbf16>) outs(%acc : memref<?x64xf32>) attrs = {blockc_codegen.gpu_mma_tiles = #blockc_codegen.gpu_mma_tiles<tile_m = 64, tile_n = 64, tile_k = 32, warps_m = 2, warps_n = 2, stages = 3>} {
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

// Heads of 48 columns: 128-column tiles would split them.
// CHECK-LABEL: func.func @rope_hd48
// CHECK:         gpu_mma_tiles
// CHECK-NOT:     rope_head_dim
memref.global "private" constant @inv_freq48 : memref<48xf32> = dense<0.5>
#a = affine_map<(m, n, k) -> (m, k)>
#w = affine_map<(m, n, k) -> (n, k)>
#o = affine_map<(m, n, k) -> (m, n)>
#id2 = affine_map<(m, n) -> (m, n)>
#id3 = affine_map<(m, h, d) -> (m, h, d)>
#partner = affine_map<(m, h, d) -> (m, h, (d + 24) mod 48)>
#col = affine_map<(m, h, d) -> (d)>
func.func @rope_hd48(%x: memref<?x128xbf16>, %w: memref<96x128xbf16>, %out: memref<?x2x48xbf16>) {
  %c0 = arith.constant 0 : index
  %chalf = arith.constant 24 : index
  %zero = arith.constant 0.0 : f32
  %m = memref.dim %x, %c0 : memref<?x128xbf16>
  %table = memref.get_global @inv_freq48 : memref<48xf32>
  %acc = memref.alloc(%m) : memref<?x96xf32>
  linalg.fill ins(%zero : f32) outs(%acc : memref<?x96xf32>)
  linalg.generic {indexing_maps = [#a, #w, #o], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<?x128xbf16>, memref<96x128xbf16>) outs(%acc : memref<?x96xf32>) {
  ^bb0(%in: bf16, %wv: bf16, %o: f32):
    %xf = arith.extf %in : bf16 to f32
    %wf = arith.extf %wv : bf16 to f32
    %p = arith.mulf %xf, %wf : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  }
  %q = memref.alloc(%m) : memref<?x96xbf16>
  linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%acc : memref<?x96xf32>) outs(%q : memref<?x96xbf16>) {
  ^bb0(%in: f32, %o: bf16):
    %r = arith.truncf %in : f32 to bf16
    linalg.yield %r : bf16
  }
  memref.dealloc %acc : memref<?x96xf32>
  %heads = memref.expand_shape %q [[0], [1, 2]] output_shape [%m, 2, 48] : memref<?x96xbf16> into memref<?x2x48xbf16>
  %rot = memref.alloc(%m) : memref<?x2x48xbf16>
  linalg.generic {indexing_maps = [#id3, #partner, #col, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%heads, %heads, %table : memref<?x2x48xbf16>, memref<?x2x48xbf16>, memref<48xf32>) outs(%rot : memref<?x2x48xbf16>) {
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
  memref.dealloc %q : memref<?x96xbf16>
  memref.copy %rot, %out : memref<?x2x48xbf16> to memref<?x2x48xbf16>
  memref.dealloc %rot : memref<?x2x48xbf16>
  return
}
