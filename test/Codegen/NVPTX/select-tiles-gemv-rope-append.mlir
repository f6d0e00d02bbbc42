// RUN: blockc-opt %s --blockc-gpu-select-tiles=chip=sm_80 | FileCheck %s --check-prefix=FUSED
// RUN: blockc-opt %s --blockc-gpu-select-tiles=chip=sm_90a | FileCheck %s --check-prefix=FUSED
// RUN: blockc-opt %s --blockc-gpu-select-tiles="chip=sm_80 gemv-rope-append=false" | FileCheck %s --check-prefix=PLAIN

// The weight-streaming kernel's RoPE and KV-cache append
// (docs/GPU.md#decoding): the q, k and v projections of a decode entry
// (head dim 32, 2 heads), minimal. q's rounded result is read by a
// rotate-half RoPE only: rope_head_dim = 32 with a warp per pair of
// partner columns (columns = 2); k's also, and that RoPE's output is only
// copied into the K cache at %pos: kv_append too; v's rounded result is
// only copied (as [B, T, H, D]) into the V cache: kv_append alone. With
// gemv-rope-append=false: today's attribute, the RoPE and copies stay
// separate kernels.

// FUSED-LABEL: func.func @decode_kv
// FUSED:         ins(%arg0, %arg1 :
// FUSED-SAME:      blockc_codegen.gpu_gemv = #blockc_codegen.gpu_gemv<warps = 4, columns = 2, rows = 1, unroll = 2, max_m = 16, rope_head_dim = 32>
// FUSED:         ins(%arg0, %arg2 :
// FUSED-SAME:      blockc_codegen.gpu_gemv = #blockc_codegen.gpu_gemv<warps = 4, columns = 2, rows = 1, unroll = 2, max_m = 16, rope_head_dim = 32, kv_append = true>
// FUSED:         ins(%arg0, %arg3 :
// FUSED-SAME:      blockc_codegen.gpu_gemv = #blockc_codegen.gpu_gemv<warps = 4, columns = 1, rows = 1, unroll = 2, max_m = 16, kv_append = true>

// PLAIN-LABEL: func.func @decode_kv
// PLAIN-NOT:     kv_append
// PLAIN-COUNT-3: blockc_codegen.gpu_gemv = #blockc_codegen.gpu_gemv<warps = 4, columns = 1, rows = 1, unroll = 2, max_m = 16>,
// PLAIN-NOT:     kv_append
#a = affine_map<(b, t, n, k) -> (b, t, k)>
#w = affine_map<(b, t, n, k) -> (n, k)>
#o = affine_map<(b, t, n, k) -> (b, t, n)>
#id3 = affine_map<(b, t, n) -> (b, t, n)>
#id4 = affine_map<(b, t, h, d) -> (b, t, h, d)>
#rot = affine_map<(b, t, h, d) -> (b, t, h, (d + 16) mod 32)>
#tab = affine_map<(b, t, h, d) -> (d)>
func.func @decode_kv(%x: memref<?x?x256xbf16>, %wq: memref<64x256xbf16>,
                     %wk: memref<64x256xbf16>, %wv: memref<64x256xbf16>,
                     %theta: memref<32xf32>, %pos: index,
                     %kc: memref<?x?x2x32xbf16, strided<[?, 32, ?, 1], offset: ?>>,
                     %vc: memref<?x?x2x32xbf16, strided<[?, 32, ?, 1], offset: ?>>,
                     %qout: memref<?x?x2x32xbf16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %b = memref.dim %x, %c0 : memref<?x?x256xbf16>
  %t = memref.dim %x, %c1 : memref<?x?x256xbf16>
  // q: projection, rounding, RoPE (its output copied to a plain argument).
  %qacc = memref.alloc(%b, %t) : memref<?x?x64xf32>
  linalg.fill ins(%zero : f32) outs(%qacc : memref<?x?x64xf32>)
  linalg.generic {indexing_maps = [#a, #w, #o], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %wq : memref<?x?x256xbf16>, memref<64x256xbf16>) outs(%qacc : memref<?x?x64xf32>) {
  ^bb0(%in: bf16, %wt: bf16, %acc: f32):
    %xf = arith.extf %in : bf16 to f32
    %wf = arith.extf %wt : bf16 to f32
    %p = arith.mulf %xf, %wf : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  %q = memref.alloc(%b, %t) : memref<?x?x64xbf16>
  linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%qacc : memref<?x?x64xf32>) outs(%q : memref<?x?x64xbf16>) {
  ^bb0(%in: f32, %out: bf16):
    %r = arith.truncf %in : f32 to bf16
    linalg.yield %r : bf16
  }
  %qv = memref.expand_shape %q [[0], [1], [2, 3]] output_shape [%b, %t, 2, 32] : memref<?x?x64xbf16> into memref<?x?x2x32xbf16>
  %qr = memref.alloc(%b, %t) : memref<?x?x2x32xbf16>
  linalg.generic {indexing_maps = [#id4, #rot, #tab, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%qv, %qv, %theta : memref<?x?x2x32xbf16>, memref<?x?x2x32xbf16>, memref<32xf32>) outs(%qr : memref<?x?x2x32xbf16>) {
  ^bb0(%in: bf16, %pt: bf16, %th: f32, %out: bf16):
    %c16 = arith.constant 16 : index
    %tt = linalg.index 1 : index
    %d = linalg.index 3 : index
    %tp = arith.addi %tt, %pos : index
    %ti = arith.index_cast %tp : index to i64
    %tf = arith.sitofp %ti : i64 to f32
    %ang = arith.mulf %tf, %th : f32
    %co = math.cos %ang : f32
    %si = math.sin %ang : f32
    %lo = arith.cmpi ult, %d, %c16 : index
    %ns = arith.negf %si : f32
    %ss = arith.select %lo, %ns, %si : f32
    %xf = arith.extf %in : bf16 to f32
    %pf = arith.extf %pt : bf16 to f32
    %u = arith.mulf %xf, %co : f32
    %v = arith.mulf %pf, %ss : f32
    %y = arith.addf %u, %v : f32
    %yb = arith.truncf %y : f32 to bf16
    linalg.yield %yb : bf16
  }
  memref.copy %qr, %qout : memref<?x?x2x32xbf16> to memref<?x?x2x32xbf16>
  // k: the same, its RoPE's output copied into the cache at %pos.
  %kacc = memref.alloc(%b, %t) : memref<?x?x64xf32>
  linalg.fill ins(%zero : f32) outs(%kacc : memref<?x?x64xf32>)
  linalg.generic {indexing_maps = [#a, #w, #o], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %wk : memref<?x?x256xbf16>, memref<64x256xbf16>) outs(%kacc : memref<?x?x64xf32>) {
  ^bb0(%in: bf16, %wt: bf16, %acc: f32):
    %xf = arith.extf %in : bf16 to f32
    %wf = arith.extf %wt : bf16 to f32
    %p = arith.mulf %xf, %wf : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  %k = memref.alloc(%b, %t) : memref<?x?x64xbf16>
  linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%kacc : memref<?x?x64xf32>) outs(%k : memref<?x?x64xbf16>) {
  ^bb0(%in: f32, %out: bf16):
    %r = arith.truncf %in : f32 to bf16
    linalg.yield %r : bf16
  }
  %kv = memref.expand_shape %k [[0], [1], [2, 3]] output_shape [%b, %t, 2, 32] : memref<?x?x64xbf16> into memref<?x?x2x32xbf16>
  %kr = memref.alloc(%b, %t) : memref<?x?x2x32xbf16>
  linalg.generic {indexing_maps = [#id4, #rot, #tab, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%kv, %kv, %theta : memref<?x?x2x32xbf16>, memref<?x?x2x32xbf16>, memref<32xf32>) outs(%kr : memref<?x?x2x32xbf16>) {
  ^bb0(%in: bf16, %pt: bf16, %th: f32, %out: bf16):
    %c16 = arith.constant 16 : index
    %tt = linalg.index 1 : index
    %d = linalg.index 3 : index
    %tp = arith.addi %tt, %pos : index
    %ti = arith.index_cast %tp : index to i64
    %tf = arith.sitofp %ti : i64 to f32
    %ang = arith.mulf %tf, %th : f32
    %co = math.cos %ang : f32
    %si = math.sin %ang : f32
    %lo = arith.cmpi ult, %d, %c16 : index
    %ns = arith.negf %si : f32
    %ss = arith.select %lo, %ns, %si : f32
    %xf = arith.extf %in : bf16 to f32
    %pf = arith.extf %pt : bf16 to f32
    %u = arith.mulf %xf, %co : f32
    %v = arith.mulf %pf, %ss : f32
    %y = arith.addf %u, %v : f32
    %yb = arith.truncf %y : f32 to bf16
    linalg.yield %yb : bf16
  }
  %ks = memref.subview %kc[0, %pos, 0, 0] [%b, %t, 2, 32] [1, 1, 1, 1] : memref<?x?x2x32xbf16, strided<[?, 32, ?, 1], offset: ?>> to memref<?x?x2x32xbf16, strided<[?, 32, ?, 1], offset: ?>>
  memref.copy %kr, %ks : memref<?x?x2x32xbf16> to memref<?x?x2x32xbf16, strided<[?, 32, ?, 1], offset: ?>>
  // v: projection, rounding, its view copied into the cache at %pos.
  %vacc = memref.alloc(%b, %t) : memref<?x?x64xf32>
  linalg.fill ins(%zero : f32) outs(%vacc : memref<?x?x64xf32>)
  linalg.generic {indexing_maps = [#a, #w, #o], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %wv : memref<?x?x256xbf16>, memref<64x256xbf16>) outs(%vacc : memref<?x?x64xf32>) {
  ^bb0(%in: bf16, %wt: bf16, %acc: f32):
    %xf = arith.extf %in : bf16 to f32
    %wf = arith.extf %wt : bf16 to f32
    %p = arith.mulf %xf, %wf : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  %v = memref.alloc(%b, %t) : memref<?x?x64xbf16>
  linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%vacc : memref<?x?x64xf32>) outs(%v : memref<?x?x64xbf16>) {
  ^bb0(%in: f32, %out: bf16):
    %r = arith.truncf %in : f32 to bf16
    linalg.yield %r : bf16
  }
  %vv = memref.expand_shape %v [[0], [1], [2, 3]] output_shape [%b, %t, 2, 32] : memref<?x?x64xbf16> into memref<?x?x2x32xbf16>
  %vs = memref.subview %vc[0, %pos, 0, 0] [%b, %t, 2, 32] [1, 1, 1, 1] : memref<?x?x2x32xbf16, strided<[?, 32, ?, 1], offset: ?>> to memref<?x?x2x32xbf16, strided<[?, 32, ?, 1], offset: ?>>
  memref.copy %vv, %vs : memref<?x?x2x32xbf16> to memref<?x?x2x32xbf16, strided<[?, 32, ?, 1], offset: ?>>
  return
}

// v's rounded result written into the buffer its projection reads (the
// norm's output: bufferization's reuse when one empty tensor starts both,
// which blockc-gpu-separate-head-buffers now prevents in the pipeline):
// that buffer has readers besides the append copy, so no kv_append.

// FUSED-LABEL: func.func @decode_v_shared
// FUSED:         ins(%[[N:.+]], %arg1 :
// FUSED-SAME:      blockc_codegen.gpu_gemv = #blockc_codegen.gpu_gemv<warps = 4, columns = 1, rows = 1, unroll = 2, max_m = 16>,
// FUSED:         outs(%[[N]] :
// FUSED:         memref.copy
func.func @decode_v_shared(%x: memref<?x?x256xbf16>, %wv: memref<256x256xbf16>,
                           %pos: index,
                           %vc: memref<?x?x8x32xbf16, strided<[?, 32, ?, 1], offset: ?>>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %b = memref.dim %x, %c0 : memref<?x?x256xbf16>
  %t = memref.dim %x, %c1 : memref<?x?x256xbf16>
  %n = memref.alloc(%b, %t) : memref<?x?x256xbf16>
  memref.copy %x, %n : memref<?x?x256xbf16> to memref<?x?x256xbf16>
  %vacc = memref.alloc(%b, %t) : memref<?x?x256xf32>
  linalg.fill ins(%zero : f32) outs(%vacc : memref<?x?x256xf32>)
  linalg.generic {indexing_maps = [#a, #w, #o], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%n, %wv : memref<?x?x256xbf16>, memref<256x256xbf16>) outs(%vacc : memref<?x?x256xf32>) {
  ^bb0(%in: bf16, %wt: bf16, %acc: f32):
    %xf = arith.extf %in : bf16 to f32
    %wf = arith.extf %wt : bf16 to f32
    %p = arith.mulf %xf, %wf : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%vacc : memref<?x?x256xf32>) outs(%n : memref<?x?x256xbf16>) {
  ^bb0(%in: f32, %out: bf16):
    %r = arith.truncf %in : f32 to bf16
    linalg.yield %r : bf16
  }
  %vv = memref.expand_shape %n [[0], [1], [2, 3]] output_shape [%b, %t, 8, 32] : memref<?x?x256xbf16> into memref<?x?x8x32xbf16>
  %vs = memref.subview %vc[0, %pos, 0, 0] [%b, %t, 8, 32] [1, 1, 1, 1] : memref<?x?x8x32xbf16, strided<[?, 32, ?, 1], offset: ?>> to memref<?x?x8x32xbf16, strided<[?, 32, ?, 1], offset: ?>>
  memref.copy %vv, %vs : memref<?x?x8x32xbf16> to memref<?x?x8x32xbf16, strided<[?, 32, ?, 1], offset: ?>>
  return
}
