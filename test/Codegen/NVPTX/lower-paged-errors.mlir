// RUN: blockc-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(blockc-gpu-lower-paged))' -verify-diagnostics

// Without its schedule (blockc-gpu-select-tiles not run) the paged
// attention is an error.
func.func @unconfigured(%q: tensor<1x?x2x8xf32>, %kp: tensor<?x2x1x8xf32>, %vp: tensor<?x2x1x8xf32>,
    %bt: tensor<?x?xi32>, %cu: tensor<?xi32>, %pos: tensor<?xi32>) -> tensor<1x?x2x8xf32> {
  // expected-error @+1 {{'transformer.paged_sdpa' op has no 'blockc_codegen.gpu_paged_attention' (run blockc-gpu-select-tiles first)}}
  %o = transformer.paged_sdpa %q, %kp, %vp, %bt, %cu, %pos : tensor<1x?x2x8xf32>, tensor<?x2x1x8xf32>, tensor<?x2x1x8xf32>, tensor<?x?xi32>, tensor<?xi32>, tensor<?xi32> -> tensor<1x?x2x8xf32>
  return %o : tensor<1x?x2x8xf32>
}

// -----

// token_positions needs the packed input as the function's first argument
// (its size on the host).
func.func @no_packed_input(%n: index, %cu: tensor<?xi32>, %pos: tensor<?xi32>) -> tensor<?xi32> {
  // expected-error @+1 {{'transformer.token_positions' op on nvptx needs the paged entry's packed input (a ranked tensor [total, ...]) as its function's first argument}}
  %p = transformer.token_positions %cu, %pos : tensor<?xi32>, tensor<?xi32> -> tensor<?xi32>
  return %p : tensor<?xi32>
}
