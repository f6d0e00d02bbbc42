// RUN: blockc-opt %s --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(func.func(blockc-cpu-tile-elementwise))'

#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @not_multiple(%x: tensor<?x12xf32>, %e: tensor<?x12xf32>) -> tensor<?x12xf32> {
  // expected-error @+1 {{blockc-cpu-tile-elementwise: the innermost loop (12) is not a multiple of width 8}}
  %y = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<?x12xf32>) outs(%e : tensor<?x12xf32>)
      attrs = {blockc_codegen.elementwise_tiles = #blockc_codegen.elementwise_tiles<rows = 1, width = 8>} {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<?x12xf32>
  return %y : tensor<?x12xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @dynamic(%x: tensor<?x?xf32>, %e: tensor<?x?xf32>) -> tensor<?x?xf32> {
  // expected-error @+1 {{blockc-cpu-tile-elementwise: the innermost loop (dynamic) is not a multiple of width 8}}
  %y = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<?x?xf32>) outs(%e : tensor<?x?xf32>)
      attrs = {blockc_codegen.elementwise_tiles = #blockc_codegen.elementwise_tiles<rows = 1, width = 8>} {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<?x?xf32>
  return %y : tensor<?x?xf32>
}

// -----

func.func @reduction(%x: tensor<4x16xf32>, %e: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{blockc-cpu-tile-elementwise: elementwise_tiles needs an all-parallel linalg.generic or linalg.fill on tensors with at least one loop}}
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<4x16xf32>) outs(%e : tensor<4xf32>)
      attrs = {blockc_codegen.elementwise_tiles = #blockc_codegen.elementwise_tiles<rows = 1, width = 0>} {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.addf %in, %out : f32
    linalg.yield %0 : f32
  } -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// RoPE's rotate-half read: upstream's tiles of this operand would be wrong.
#id = affine_map<(d0, d1) -> (d0, d1)>
#rot = affine_map<(d0, d1) -> (d0, (d1 + 8) mod 16)>
func.func @rotate_half(%x: tensor<?x16xf32>, %e: tensor<?x16xf32>) -> tensor<?x16xf32> {
  // expected-error @+1 {{blockc-cpu-tile-elementwise: every operand must be read through a projected permutation}}
  %y = linalg.generic {indexing_maps = [#rot, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<?x16xf32>) outs(%e : tensor<?x16xf32>)
      attrs = {blockc_codegen.elementwise_tiles = #blockc_codegen.elementwise_tiles<rows = 1, width = 0>} {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<?x16xf32>
  return %y : tensor<?x16xf32>
}
