// RUN: blockc-opt %s -split-input-file --blockc-cpu-fuse-activation -verify-diagnostics

// The epilogue's vectors have the width of the function's cpu_target: a
// function with an activation to fuse but no target (here a hand-written
// projection kernel) is an error.
// expected-error @+1 {{blockc-cpu-fuse-activation: the function has no 'blockc_codegen.cpu_target' (run blockc-cpu-select-tiles first)}}
func.func @no_target() -> tensor<2x3x40xf32> {
  %e = tensor.empty() : tensor<2x3x40xf32>
  %y = scf.forall (%i) in (1) shared_outs(%o = %e) -> (tensor<2x3x40xf32>) {
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %o into %o[0, 0, 0] [2, 3, 40] [1, 1, 1] : tensor<2x3x40xf32> into tensor<2x3x40xf32>
    }
  } {blockc_codegen.kernel = #blockc_codegen.kernel<linear>}
  %r = transformer.activation <relu> %y : tensor<2x3x40xf32>
  return %r : tensor<2x3x40xf32>
}

// -----

// Without anything to fuse, no target is needed.
func.func @nothing_to_fuse(%a: tensor<2x3x40xf32>) -> tensor<2x3x40xf32> {
  %r = transformer.activation <relu> %a : tensor<2x3x40xf32>
  return %r : tensor<2x3x40xf32>
}
