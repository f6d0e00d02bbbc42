// RUN: blockc-opt %s -split-input-file --blockc-gpu-narrow-mma-operands | FileCheck %s

// A configured projection of a bf16 weight whose f32 input is produced as
// extf from bf16 reads that input in bf16: a truncf generic in front, an
// extf in the body.

#id = affine_map<(d0, d1) -> (d0, d1)>
#a = affine_map<(m, n, k) -> (m, k)>
#w = affine_map<(m, n, k) -> (n, k)>
#o = affine_map<(m, n, k) -> (m, n)>
// CHECK-LABEL: func.func @projection
// CHECK:         %[[X:.+]] = linalg.generic
// CHECK:           arith.extf %{{.+}} : bf16 to f32
// CHECK:         %[[E:.+]] = tensor.empty() : tensor<4x32xbf16>
// CHECK:         %[[N:.+]] = linalg.generic {{.+}} ins(%[[X]] : tensor<4x32xf32>) outs(%[[E]] : tensor<4x32xbf16>)
// CHECK:           arith.truncf %{{.+}} : f32 to bf16
// CHECK:         linalg.generic {{.+}} ins(%[[N]], %{{.+}} : tensor<4x32xbf16>, tensor<16x32xbf16>)
// CHECK-SAME:      blockc_codegen.gpu_mma_tiles
// CHECK-NEXT:    ^bb0(%[[IN:.+]]: bf16, %[[WV:.+]]: bf16, %[[ACC:.+]]: f32):
// CHECK-NEXT:      %[[XA:.+]] = arith.extf %[[IN]] : bf16 to f32
// CHECK-NEXT:      %[[XW:.+]] = arith.extf %[[WV]] : bf16 to f32
// CHECK-NEXT:      %[[P:.+]] = arith.mulf %[[XA]], %[[XW]] : f32
// CHECK-NEXT:      %[[S:.+]] = arith.addf %[[ACC]], %[[P]] : f32
// CHECK-NEXT:      linalg.yield %[[S]] : f32
func.func @projection(%x: tensor<4x32xbf16>, %w: tensor<16x32xbf16>, %init: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %e = tensor.empty() : tensor<4x32xf32>
  %xf = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x32xbf16>) outs(%e : tensor<4x32xf32>) {
  ^bb0(%in: bf16, %out: f32):
    %f = arith.extf %in : bf16 to f32
    linalg.yield %f : f32
  } -> tensor<4x32xf32>
  %y = linalg.generic {indexing_maps = [#a, #w, #o], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%xf, %w : tensor<4x32xf32>, tensor<16x32xbf16>) outs(%init : tensor<4x16xf32>)
      attrs = {blockc_codegen.gpu_mma_tiles = #blockc_codegen.gpu_mma_tiles<tile_m = 128, tile_n = 128, tile_k = 32, warps_m = 2, warps_n = 2, stages = 2>} {
  ^bb0(%in: f32, %wv: bf16, %acc: f32):
    %wf = arith.extf %wv : bf16 to f32
    %p = arith.mulf %in, %wf : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}

// -----

// Without the configuration, and with two 16-bit inputs already, nothing
// changes.
#a = affine_map<(m, n, k) -> (m, k)>
#w = affine_map<(m, n, k) -> (n, k)>
#o = affine_map<(m, n, k) -> (m, n)>
// CHECK-LABEL: func.func @unchanged
// CHECK-NOT:     arith.truncf
// CHECK:         ins(%arg0, %arg1 : tensor<4x32xf32>, tensor<16x32xbf16>)
// CHECK-NOT:     arith.truncf
// CHECK:         ins(%arg2, %arg1 : tensor<4x32xbf16>, tensor<16x32xbf16>)
// CHECK-NOT:     arith.truncf
func.func @unchanged(%x: tensor<4x32xf32>, %w: tensor<16x32xbf16>, %x16: tensor<4x32xbf16>, %init: tensor<4x16xf32>) -> (tensor<4x16xf32>, tensor<4x16xf32>) {
  %y = linalg.generic {indexing_maps = [#a, #w, #o], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<4x32xf32>, tensor<16x32xbf16>) outs(%init : tensor<4x16xf32>) {
  ^bb0(%in: f32, %wv: bf16, %acc: f32):
    %wf = arith.extf %wv : bf16 to f32
    %p = arith.mulf %in, %wf : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<4x16xf32>
  %z = linalg.generic {indexing_maps = [#a, #w, #o], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x16, %w : tensor<4x32xbf16>, tensor<16x32xbf16>) outs(%init : tensor<4x16xf32>)
      attrs = {blockc_codegen.gpu_mma_tiles = #blockc_codegen.gpu_mma_tiles<tile_m = 128, tile_n = 128, tile_k = 32, warps_m = 2, warps_n = 2, stages = 2>} {
  ^bb0(%in: bf16, %wv: bf16, %acc: f32):
    %xf = arith.extf %in : bf16 to f32
    %wf = arith.extf %wv : bf16 to f32
    %p = arith.mulf %xf, %wf : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<4x16xf32>
  return %y, %z : tensor<4x16xf32>, tensor<4x16xf32>
}

// -----

// Two f32 inputs with tensor-core tiles: a TF32 contraction (-gpu-allow-tf32),
// nothing to narrow, no error.
#a = affine_map<(m, n, k) -> (m, k)>
#w = affine_map<(m, n, k) -> (n, k)>
#o = affine_map<(m, n, k) -> (m, n)>
// CHECK-LABEL: func.func @tf32
// CHECK-NOT:     arith.truncf
// CHECK:         ins(%arg0, %arg1 : tensor<4x32xf32>, tensor<16x32xf32>)
// CHECK-NOT:     arith.truncf
func.func @tf32(%x: tensor<4x32xf32>, %w: tensor<16x32xf32>, %init: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %y = linalg.generic {indexing_maps = [#a, #w, #o], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<4x32xf32>, tensor<16x32xf32>) outs(%init : tensor<4x16xf32>)
      attrs = {blockc_codegen.gpu_mma_tiles = #blockc_codegen.gpu_mma_tiles<tile_m = 128, tile_n = 128, tile_k = 16, warps_m = 2, warps_n = 2, stages = 4>} {
  ^bb0(%in: f32, %wv: f32, %acc: f32):
    %p = arith.mulf %in, %wv : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}
