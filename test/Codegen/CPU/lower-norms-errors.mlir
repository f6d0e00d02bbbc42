// RUN: blockc-opt %s -split-input-file --blockc-cpu-lower-norms -verify-diagnostics

// The kernel's vectors have the width of the function's cpu_target: a
// function with a norm to lower but no target is an error.
// expected-error @+1 {{blockc-cpu-lower-norms: the function has no 'blockc_codegen.cpu_target' (run blockc-cpu-select-tiles first)}}
func.func @no_target(%x: tensor<1x4x32xf32>, %g: tensor<32xf32>) -> tensor<1x4x32xf32> {
  %y = transformer.rms_norm %x, %g : tensor<1x4x32xf32>, tensor<32xf32>
  return %y : tensor<1x4x32xf32>
}

// -----

// Without a norm, no target is needed.
func.func @nothing_to_lower(%x: tensor<1x4x32xf32>) -> tensor<1x4x32xf32> {
  return %x : tensor<1x4x32xf32>
}
