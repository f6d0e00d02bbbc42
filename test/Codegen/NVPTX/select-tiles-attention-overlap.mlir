// RUN: blockc-opt %s -split-input-file --blockc-gpu-select-tiles=chip=sm_90a | FileCheck %s --check-prefix=OVERLAP
// RUN: blockc-opt %s -split-input-file --blockc-gpu-select-tiles="chip=sm_90a attention-overlap=false" | FileCheck %s --check-prefix=TILES
// RUN: blockc-opt %s -split-input-file --blockc-gpu-select-tiles="chip=sm_90a attention-consumers=1" | FileCheck %s --check-prefix=ONE

// The warp-specialised sm_90a attention gets its consumers' intra-warpgroup
// overlap (overlap = true) from the heuristic; attention-overlap=false
// keeps one key tile at a time (no overlap parameter, false); the
// one-warpgroup kernel (attention-consumers=1) has none either way. At
// head dim 128 the mma.sync fallback takes 32-key tiles (fallback_kv_tile)
// in every form.
// OVERLAP-LABEL: func.func @attention
// OVERLAP: gpu_mma_attention = #blockc_codegen.gpu_mma_attention<warps = 4, kv_tile = 64, warpgroup = true, consumers = 2, stages = 3, overlap = true, fallback_kv_tile = 32>
// TILES-LABEL: func.func @attention
// TILES: gpu_mma_attention = #blockc_codegen.gpu_mma_attention<warps = 4, kv_tile = 64, warpgroup = true, consumers = 2, stages = 3, fallback_kv_tile = 32>{{[,}]}}
// ONE-LABEL: func.func @attention
// ONE: gpu_mma_attention = #blockc_codegen.gpu_mma_attention<warps = 4, kv_tile = 64, warpgroup = true, fallback_kv_tile = 32>{{[,}]}}
func.func @attention(%q: tensor<1x?x2x128xbf16>, %k: tensor<1x?x1x128xbf16>, %v: tensor<1x?x1x128xbf16>)
    -> tensor<1x?x2x128xf32> {
  %qf = arith.extf %q : tensor<1x?x2x128xbf16> to tensor<1x?x2x128xf32>
  %kf = arith.extf %k : tensor<1x?x1x128xbf16> to tensor<1x?x1x128xf32>
  %vf = arith.extf %v : tensor<1x?x1x128xbf16> to tensor<1x?x1x128xf32>
  %o = transformer.sdpa %qf, %kf, %vf {causal}
      : tensor<1x?x2x128xf32>, tensor<1x?x1x128xf32>, tensor<1x?x1x128xf32> -> tensor<1x?x2x128xf32>
  return %o : tensor<1x?x2x128xf32>
}

// -----

// A hand-written attribute is kept as written: without overlap on the
// warp-specialised kernel, the consumers take one key tile at a time.
// OVERLAP-LABEL: func.func @pinned
// OVERLAP: gpu_mma_attention = #blockc_codegen.gpu_mma_attention<warps = 4, kv_tile = 64, warpgroup = true, consumers = 2>{{[,}]}}
func.func @pinned(%q: tensor<1x?x2x128xbf16>, %k: tensor<1x?x1x128xbf16>, %v: tensor<1x?x1x128xbf16>)
    -> tensor<1x?x2x128xf32> {
  %qf = arith.extf %q : tensor<1x?x2x128xbf16> to tensor<1x?x2x128xf32>
  %kf = arith.extf %k : tensor<1x?x1x128xbf16> to tensor<1x?x1x128xf32>
  %vf = arith.extf %v : tensor<1x?x1x128xbf16> to tensor<1x?x1x128xf32>
  %o = transformer.sdpa %qf, %kf, %vf {causal, blockc_codegen.gpu_mma_attention = #blockc_codegen.gpu_mma_attention<warps = 4, kv_tile = 64, warpgroup = true, consumers = 2>}
      : tensor<1x?x2x128xf32>, tensor<1x?x1x128xf32>, tensor<1x?x1x128xf32> -> tensor<1x?x2x128xf32>
  return %o : tensor<1x?x2x128xf32>
}
