// RUN: blockc-opt %s -split-input-file --blockc-cpu-lower-sdpa -verify-diagnostics

// The vector width (also the key tile and the query row block) is the
// function's cpu_target's: without one, an sdpa to lower is an error.
// expected-error @+1 {{blockc-cpu-lower-sdpa: the function has no 'blockc_codegen.cpu_target' (run blockc-cpu-select-tiles first)}}
func.func @no_target(%q: tensor<1x4x2x16xf32>) -> tensor<1x4x2x16xf32> {
  %o = transformer.sdpa %q, %q, %q {causal} : tensor<1x4x2x16xf32>, tensor<1x4x2x16xf32>, tensor<1x4x2x16xf32> -> tensor<1x4x2x16xf32>
  return %o : tensor<1x4x2x16xf32>
}

// -----

// A function without an sdpa needs no target.
func.func @nothing_to_lower(%x: tensor<2xf32>) -> tensor<2xf32> {
  return %x : tensor<2xf32>
}
