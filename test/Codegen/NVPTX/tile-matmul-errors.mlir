// RUN: blockc-opt %s -split-input-file --blockc-gpu-tile-matmul -verify-diagnostics

// The tiles come from blockc-gpu-select-tiles (their limits are verified on
// the attribute, see test/Dialect/Codegen/nvptx-invalid.mlir): a
// contraction the pass would tile without them is an error.
func.func @unconfigured(%a: memref<8x16xf32>, %b: memref<16x8xf32>, %c: memref<8x8xf32>) {
  // expected-error @+1 {{'linalg.matmul' op has no 'blockc_codegen.gpu_matmul_tiles' (run blockc-gpu-select-tiles first)}}
  linalg.matmul ins(%a, %b : memref<8x16xf32>, memref<16x8xf32>) outs(%c : memref<8x8xf32>)
  return
}

// -----

// Ops the pass leaves alone need no tiles: a contraction on tensors.
func.func @not_a_candidate(%a: tensor<8x16xf32>, %b: tensor<16x8xf32>, %c: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<8x16xf32>, tensor<16x8xf32>) outs(%c : tensor<8x8xf32>) -> tensor<8x8xf32>
  return %r : tensor<8x8xf32>
}
