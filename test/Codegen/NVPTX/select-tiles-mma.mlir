// RUN: blockc-opt %s -split-input-file --blockc-gpu-select-tiles=chip=sm_80 | FileCheck %s --check-prefixes=CHECK,MMA,AMPERE
// RUN: blockc-opt %s -split-input-file --blockc-gpu-select-tiles=chip=sm_90a | FileCheck %s --check-prefixes=CHECK,MMA,HOPPER
// RUN: blockc-opt %s -split-input-file --blockc-gpu-select-tiles=chip=sm_75 | FileCheck %s --check-prefixes=CHECK,NOMMA
// RUN: blockc-opt %s -split-input-file --blockc-gpu-select-tiles="chip=sm_90a attention-stages=2" | FileCheck %s --check-prefix=TWOSTAGES
// RUN: not blockc-opt %s -split-input-file --blockc-gpu-select-tiles="chip=sm_90a attention-stages=4" 2>&1 | FileCheck %s --check-prefix=BADSTAGES

// BADSTAGES: error: blockc-gpu-select-tiles: attention-stages must be 2 or 3, got 4

// Tensor-core tiles (mma.sync m16n8k16 needs sm_80): contractions of two
// bf16 / f16 buffers into f32 get 128 x 128 tiles on 2 x 2 warps, k steps
// of 32 (16 when 32 does not divide K) in 4 stages; sm_75 gets none.

// CHECK-LABEL: func.func @buffers
// MMA:           linalg.generic {{.+}} ins(%arg0, %arg1 : memref<?x64xbf16>, memref<32x64xbf16>)
// MMA-SAME:        blockc_codegen.gpu_mma_tiles = #blockc_codegen.gpu_mma_tiles<tile_m = 128, tile_n = 128, tile_k = 32, warps_m = 2, warps_n = 2, stages = 4>
// MMA:           linalg.generic {{.+}} ins(%arg3, %arg4 : memref<?x48xf16>, memref<32x48xf16>)
// MMA-SAME:        blockc_codegen.gpu_mma_tiles = #blockc_codegen.gpu_mma_tiles<tile_m = 128, tile_n = 128, tile_k = 16, warps_m = 2, warps_n = 2, stages = 4>
// NOMMA-NOT:     gpu_mma_tiles
#a = affine_map<(m, n, k) -> (m, k)>
#w = affine_map<(m, n, k) -> (n, k)>
#o = affine_map<(m, n, k) -> (m, n)>
func.func @buffers(%x: memref<?x64xbf16>, %w: memref<32x64xbf16>, %y: memref<?x32xf32>,
                   %xh: memref<?x48xf16>, %wh: memref<32x48xf16>) {
  linalg.generic {indexing_maps = [#a, #w, #o], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<?x64xbf16>, memref<32x64xbf16>) outs(%y : memref<?x32xf32>) {
  ^bb0(%in: bf16, %wv: bf16, %acc: f32):
    %xf = arith.extf %in : bf16 to f32
    %wf = arith.extf %wv : bf16 to f32
    %p = arith.mulf %xf, %wf : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#a, #w, #o], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%xh, %wh : memref<?x48xf16>, memref<32x48xf16>) outs(%y : memref<?x32xf32>) {
  ^bb0(%in: f16, %wv: f16, %acc: f32):
    %xf = arith.extf %in : f16 to f32
    %wf = arith.extf %wv : f16 to f32
    %p = arith.mulf %xf, %wf : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Not tensor-core contractions: K not a multiple of 16, K not the
// innermost index of the weight (a [k, n] weight), a strided input, a
// 16-bit product (no extf: the product would round).
// CHECK-LABEL: func.func @declined
// CHECK-NOT:     gpu_mma_tiles
#a = affine_map<(m, n, k) -> (m, k)>
#w = affine_map<(m, n, k) -> (n, k)>
#wt = affine_map<(m, n, k) -> (k, n)>
#o = affine_map<(m, n, k) -> (m, n)>
func.func @declined(%x: memref<?x40xbf16>, %w: memref<32x40xbf16>, %y: memref<?x32xf32>,
                    %x2: memref<?x64xbf16>, %wt2: memref<64x32xbf16>,
                    %xs: memref<?x64xbf16, strided<[128, 1]>>, %w2: memref<32x64xbf16>,
                    %y16: memref<?x32xbf16>) {
  linalg.generic {indexing_maps = [#a, #w, #o], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<?x40xbf16>, memref<32x40xbf16>) outs(%y : memref<?x32xf32>) {
  ^bb0(%in: bf16, %wv: bf16, %acc: f32):
    %xf = arith.extf %in : bf16 to f32
    %wf = arith.extf %wv : bf16 to f32
    %p = arith.mulf %xf, %wf : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#a, #wt, #o], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x2, %wt2 : memref<?x64xbf16>, memref<64x32xbf16>) outs(%y : memref<?x32xf32>) {
  ^bb0(%in: bf16, %wv: bf16, %acc: f32):
    %xf = arith.extf %in : bf16 to f32
    %wf = arith.extf %wv : bf16 to f32
    %p = arith.mulf %xf, %wf : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#a, #w, #o], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%xs, %w2 : memref<?x64xbf16, strided<[128, 1]>>, memref<32x64xbf16>) outs(%y : memref<?x32xf32>) {
  ^bb0(%in: bf16, %wv: bf16, %acc: f32):
    %xf = arith.extf %in : bf16 to f32
    %wf = arith.extf %wv : bf16 to f32
    %p = arith.mulf %xf, %wf : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#a, #w, #o], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x2, %w2 : memref<?x64xbf16>, memref<32x64xbf16>) outs(%y16 : memref<?x32xbf16>) {
  ^bb0(%in: bf16, %wv: bf16, %acc: bf16):
    %p = arith.mulf %in, %wv : bf16
    %s = arith.addf %acc, %p : bf16
    linalg.yield %s : bf16
  }
  return
}

// -----

// On tensors: the projection whose f32 input is produced as extf from the
// weight's type is configured (blockc-gpu-narrow-mma-operands narrows it);
// the one reading an f32 argument is not.
#id = affine_map<(d0, d1) -> (d0, d1)>
#a = affine_map<(m, n, k) -> (m, k)>
#w = affine_map<(m, n, k) -> (n, k)>
#o = affine_map<(m, n, k) -> (m, n)>
// CHECK-LABEL: func.func @tensors
// MMA:           linalg.generic {{.+}} ins(%{{.+}}, %arg1 : tensor<4x32xf32>, tensor<16x32xbf16>)
// MMA-SAME:        blockc_codegen.gpu_mma_tiles = #blockc_codegen.gpu_mma_tiles<tile_m = 128, tile_n = 128, tile_k = 32, warps_m = 2, warps_n = 2, stages = 4>
// CHECK:         linalg.generic {{.+}} ins(%arg3, %arg1 : tensor<4x32xf32>, tensor<16x32xbf16>)
// CHECK-NOT:       gpu_mma_tiles
// CHECK:         return
func.func @tensors(%x: tensor<4x32xbf16>, %w: tensor<16x32xbf16>, %init: tensor<4x16xf32>, %xf32: tensor<4x32xf32>) -> (tensor<4x16xf32>, tensor<4x16xf32>) {
  %e = tensor.empty() : tensor<4x32xf32>
  %xf = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x32xbf16>) outs(%e : tensor<4x32xf32>) {
  ^bb0(%in: bf16, %out: f32):
    %f = arith.extf %in : bf16 to f32
    linalg.yield %f : f32
  } -> tensor<4x32xf32>
  %y = linalg.generic {indexing_maps = [#a, #w, #o], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%xf, %w : tensor<4x32xf32>, tensor<16x32xbf16>) outs(%init : tensor<4x16xf32>) {
  ^bb0(%in: f32, %wv: bf16, %acc: f32):
    %wf = arith.extf %wv : bf16 to f32
    %p = arith.mulf %in, %wf : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<4x16xf32>
  %z = linalg.generic {indexing_maps = [#a, #w, #o], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%xf32, %w : tensor<4x32xf32>, tensor<16x32xbf16>) outs(%init : tensor<4x16xf32>) {
  ^bb0(%in: f32, %wv: bf16, %acc: f32):
    %wf = arith.extf %wv : bf16 to f32
    %p = arith.mulf %in, %wf : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<4x16xf32>
  return %y, %z : tensor<4x16xf32>, tensor<4x16xf32>
}

// -----

// Attention: an sdpa on operands widened from bf16 gets the tensor-core
// attention (4 warps, 64-key tiles) on sm_80+; f32 operands do not.
// CHECK-LABEL: func.func @attention
// MMA:           transformer.sdpa {{.+}}blockc_codegen.gpu_mma_attention = #blockc_codegen.gpu_mma_attention<warps = 4, kv_tile = 64>
// NOMMA-NOT:     gpu_mma_attention
// CHECK:         transformer.sdpa %arg3, %arg4, %arg5
// CHECK-NOT:       gpu_mma_attention
// CHECK:         return
func.func @attention(%q: tensor<1x?x4x16xbf16>, %k: tensor<1x?x2x16xbf16>, %v: tensor<1x?x2x16xbf16>,
                     %q2: tensor<1x?x4x16xf32>, %k2: tensor<1x?x2x16xf32>, %v2: tensor<1x?x2x16xf32>)
    -> (tensor<1x?x4x16xf32>, tensor<1x?x4x16xf32>) {
  %qf = arith.extf %q : tensor<1x?x4x16xbf16> to tensor<1x?x4x16xf32>
  %kf = arith.extf %k : tensor<1x?x2x16xbf16> to tensor<1x?x2x16xf32>
  %vf = arith.extf %v : tensor<1x?x2x16xbf16> to tensor<1x?x2x16xf32>
  %o = transformer.sdpa %qf, %kf, %vf {causal}
      : tensor<1x?x4x16xf32>, tensor<1x?x2x16xf32>, tensor<1x?x2x16xf32> -> tensor<1x?x4x16xf32>
  %o2 = transformer.sdpa %q2, %k2, %v2 {causal}
      : tensor<1x?x4x16xf32>, tensor<1x?x2x16xf32>, tensor<1x?x2x16xf32> -> tensor<1x?x4x16xf32>
  return %o, %o2 : tensor<1x?x4x16xf32>, tensor<1x?x4x16xf32>
}

// -----

// Head dims 64 and 128 get the warpgroup-MMA attention on sm_90a (head dim
// 16 above keeps mma.sync there too), warp-specialised (two consumer
// warpgroups) with a 3-stage K/V ring (129 and 193 KiB of shared memory fit
// in the H100's 227); attention-stages=2 pins the 2-stage ring (113 and
// 161 KiB); sm_80 keeps mma.sync, with 32-key tiles at head dim 128 (the
// kernel's registers: 64-key tiles spill there), as does sm_90a's mma.sync
// fallback at head dim 128 (fallback_kv_tile).
// CHECK-LABEL: func.func @attention_warpgroup
// AMPERE:         gpu_mma_attention = #blockc_codegen.gpu_mma_attention<warps = 4, kv_tile = 64>{{[,}]}}
// AMPERE:         gpu_mma_attention = #blockc_codegen.gpu_mma_attention<warps = 4, kv_tile = 32>{{[,}]}}
// HOPPER:         gpu_mma_attention = #blockc_codegen.gpu_mma_attention<warps = 4, kv_tile = 64, warpgroup = true, consumers = 2, stages = 3, overlap = true>{{[,}]}}
// HOPPER:         gpu_mma_attention = #blockc_codegen.gpu_mma_attention<warps = 4, kv_tile = 64, warpgroup = true, consumers = 2, stages = 3, overlap = true, fallback_kv_tile = 32>{{[,}]}}
// TWOSTAGES-LABEL: func.func @attention_warpgroup
// TWOSTAGES:      gpu_mma_attention = #blockc_codegen.gpu_mma_attention<warps = 4, kv_tile = 64, warpgroup = true, consumers = 2, overlap = true>{{[,}]}}
// TWOSTAGES:      gpu_mma_attention = #blockc_codegen.gpu_mma_attention<warps = 4, kv_tile = 64, warpgroup = true, consumers = 2, overlap = true, fallback_kv_tile = 32>{{[,}]}}
// NOMMA-NOT:      gpu_mma_attention
func.func @attention_warpgroup(%q: tensor<1x?x4x64xbf16>, %k: tensor<1x?x2x64xbf16>, %v: tensor<1x?x2x64xbf16>,
                               %q2: tensor<1x?x2x128xf16>, %k2: tensor<1x?x1x128xf16>, %v2: tensor<1x?x1x128xf16>)
    -> (tensor<1x?x4x64xf32>, tensor<1x?x2x128xf32>) {
  %qf = arith.extf %q : tensor<1x?x4x64xbf16> to tensor<1x?x4x64xf32>
  %kf = arith.extf %k : tensor<1x?x2x64xbf16> to tensor<1x?x2x64xf32>
  %vf = arith.extf %v : tensor<1x?x2x64xbf16> to tensor<1x?x2x64xf32>
  %o = transformer.sdpa %qf, %kf, %vf {causal}
      : tensor<1x?x4x64xf32>, tensor<1x?x2x64xf32>, tensor<1x?x2x64xf32> -> tensor<1x?x4x64xf32>
  %qf2 = arith.extf %q2 : tensor<1x?x2x128xf16> to tensor<1x?x2x128xf32>
  %kf2 = arith.extf %k2 : tensor<1x?x1x128xf16> to tensor<1x?x1x128xf32>
  %vf2 = arith.extf %v2 : tensor<1x?x1x128xf16> to tensor<1x?x1x128xf32>
  %o2 = transformer.sdpa %qf2, %kf2, %vf2
      : tensor<1x?x2x128xf32>, tensor<1x?x1x128xf32>, tensor<1x?x1x128xf32> -> tensor<1x?x2x128xf32>
  return %o, %o2 : tensor<1x?x4x64xf32>, tensor<1x?x2x128xf32>
}

// -----

// A chip whose blocks have 128 KiB of shared memory (the module's target):
// the warp-specialised kernel's 113 KiB fit at head dim 64 with 2 stages
// (129 KiB with 3 do not), its 161 KiB at head dim 128 do not, which keeps
// the one-warpgroup kernel (57 + 40 KiB).
// CHECK-LABEL: func.func @attention_small_shared
// HOPPER:        gpu_mma_attention = #blockc_codegen.gpu_mma_attention<warps = 4, kv_tile = 64, warpgroup = true, consumers = 2, overlap = true>{{[,}]}}
// HOPPER:        gpu_mma_attention = #blockc_codegen.gpu_mma_attention<warps = 4, kv_tile = 64, warpgroup = true, fallback_kv_tile = 32>{{[,}]}}
module attributes {blockc_codegen.gpu_target = #blockc_codegen.gpu_target<name = "small", arch = "sm_90a", sm = 90, arch_specific = true, ptx = 80, sms = 132, clock_mhz = 1980, bf16_gflops = 989400, tf32_gflops = 494700, fp32_gflops = 66900, memory_gbps = 3350, shared_per_sm = 135168, shared_per_block = 131072, static_shared_per_block = 49152, registers_per_sm = 65536, max_registers_per_thread = 255, max_threads_per_sm = 2048, max_blocks_per_sm = 32>} {
func.func @attention_small_shared(%q: tensor<1x?x4x64xbf16>, %k: tensor<1x?x2x64xbf16>, %v: tensor<1x?x2x64xbf16>,
                                  %q2: tensor<1x?x2x128xf16>, %k2: tensor<1x?x1x128xf16>, %v2: tensor<1x?x1x128xf16>)
    -> (tensor<1x?x4x64xf32>, tensor<1x?x2x128xf32>) {
  %qf = arith.extf %q : tensor<1x?x4x64xbf16> to tensor<1x?x4x64xf32>
  %kf = arith.extf %k : tensor<1x?x2x64xbf16> to tensor<1x?x2x64xf32>
  %vf = arith.extf %v : tensor<1x?x2x64xbf16> to tensor<1x?x2x64xf32>
  %o = transformer.sdpa %qf, %kf, %vf {causal}
      : tensor<1x?x4x64xf32>, tensor<1x?x2x64xf32>, tensor<1x?x2x64xf32> -> tensor<1x?x4x64xf32>
  %qf2 = arith.extf %q2 : tensor<1x?x2x128xf16> to tensor<1x?x2x128xf32>
  %kf2 = arith.extf %k2 : tensor<1x?x1x128xf16> to tensor<1x?x1x128xf32>
  %vf2 = arith.extf %v2 : tensor<1x?x1x128xf16> to tensor<1x?x1x128xf32>
  %o2 = transformer.sdpa %qf2, %kf2, %vf2
      : tensor<1x?x2x128xf32>, tensor<1x?x1x128xf32>, tensor<1x?x1x128xf32> -> tensor<1x?x2x128xf32>
  return %o, %o2 : tensor<1x?x4x64xf32>, tensor<1x?x2x128xf32>
}
}

// -----

// The mma.sync attention at head dims 96 and 256 (sm_80, and sm_90a, whose
// warpgroup kernel takes head dims 64 and 128 only): 64-key tiles below
// head dim 128, 32-key tiles from 128 on.
// CHECK-LABEL: func.func @attention_mma_head_dims
// MMA:           gpu_mma_attention = #blockc_codegen.gpu_mma_attention<warps = 4, kv_tile = 64>{{[,}]}}
// MMA:           gpu_mma_attention = #blockc_codegen.gpu_mma_attention<warps = 4, kv_tile = 32>{{[,}]}}
// NOMMA-NOT:     gpu_mma_attention
func.func @attention_mma_head_dims(%q: tensor<1x?x2x96xbf16>, %k: tensor<1x?x2x96xbf16>, %v: tensor<1x?x2x96xbf16>,
                                   %q2: tensor<1x?x2x256xbf16>, %k2: tensor<1x?x2x256xbf16>, %v2: tensor<1x?x2x256xbf16>)
    -> (tensor<1x?x2x96xf32>, tensor<1x?x2x256xf32>) {
  %qf = arith.extf %q : tensor<1x?x2x96xbf16> to tensor<1x?x2x96xf32>
  %kf = arith.extf %k : tensor<1x?x2x96xbf16> to tensor<1x?x2x96xf32>
  %vf = arith.extf %v : tensor<1x?x2x96xbf16> to tensor<1x?x2x96xf32>
  %o = transformer.sdpa %qf, %kf, %vf {causal}
      : tensor<1x?x2x96xf32>, tensor<1x?x2x96xf32>, tensor<1x?x2x96xf32> -> tensor<1x?x2x96xf32>
  %qf2 = arith.extf %q2 : tensor<1x?x2x256xbf16> to tensor<1x?x2x256xf32>
  %kf2 = arith.extf %k2 : tensor<1x?x2x256xbf16> to tensor<1x?x2x256xf32>
  %vf2 = arith.extf %v2 : tensor<1x?x2x256xbf16> to tensor<1x?x2x256xf32>
  %o2 = transformer.sdpa %qf2, %kf2, %vf2 {causal}
      : tensor<1x?x2x256xf32>, tensor<1x?x2x256xf32>, tensor<1x?x2x256xf32> -> tensor<1x?x2x256xf32>
  return %o, %o2 : tensor<1x?x2x96xf32>, tensor<1x?x2x256xf32>
}
