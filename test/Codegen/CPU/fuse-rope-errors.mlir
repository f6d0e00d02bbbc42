// RUN: blockc-opt %s -split-input-file --blockc-cpu-fuse-rope -verify-diagnostics

// The rotation's vectors have the width of the function's cpu_target: a
// function with a RoPE of a projection kernel but no target (here a
// hand-written kernel) is an error.
// expected-error @+1 {{blockc-cpu-fuse-rope: the function has no 'blockc_codegen.cpu_target' (run blockc-cpu-select-tiles first)}}
func.func @no_target() -> tensor<2x3x2x16xf32> {
  %e = tensor.empty() : tensor<2x3x32xf32>
  %y = scf.forall (%i) in (1) shared_outs(%o = %e) -> (tensor<2x3x32xf32>) {
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %o into %o[0, 0, 0] [2, 3, 32] [1, 1, 1] : tensor<2x3x32xf32> into tensor<2x3x32xf32>
    }
  } {blockc_codegen.kernel = #blockc_codegen.kernel<linear>}
  %h = tensor.expand_shape %y [[0], [1], [2, 3]] output_shape [2, 3, 2, 16] : tensor<2x3x32xf32> into tensor<2x3x2x16xf32>
  %r = transformer.rope %h : tensor<2x3x2x16xf32>
  return %r : tensor<2x3x2x16xf32>
}

// -----

// A RoPE of anything but a kernel needs no target (here: an argument, and
// the heads of an argument).
func.func @nothing_to_fuse(%a: tensor<2x3x2x16xf32>) -> tensor<2x3x2x16xf32> {
  %r = transformer.rope %a : tensor<2x3x2x16xf32>
  return %r : tensor<2x3x2x16xf32>
}
func.func @heads_of_an_argument(%a: tensor<2x3x32xf32>) -> tensor<2x3x2x16xf32> {
  %h = tensor.expand_shape %a [[0], [1], [2, 3]] output_shape [2, 3, 2, 16] : tensor<2x3x32xf32> into tensor<2x3x2x16xf32>
  %r = transformer.rope %h : tensor<2x3x2x16xf32>
  return %r : tensor<2x3x2x16xf32>
}
