// RUN: blockc-opt %s -split-input-file --blockc-cpu-fuse-norm -verify-diagnostics

// The row-scale and tile-scaling vectors have the width of the function's
// cpu_target: a function with a norm to fuse (into a hand-written projection
// kernel here) but no target is an error.
// expected-error @+1 {{blockc-cpu-fuse-norm: the function has no 'blockc_codegen.cpu_target' (run blockc-cpu-select-tiles first)}}
func.func @no_target(%x: tensor<2x3x16xf32>, %g: tensor<16xf32>) -> (tensor<2x3x8xf32>, vector<16xf32>) {
  %n = transformer.rms_norm %x, %g {epsilon = 1.0e-06 : f64} : tensor<2x3x16xf32>, tensor<16xf32>
  %c0 = arith.constant 0.0 : f32
  %i0 = arith.constant 0 : index
  %e = tensor.empty() : tensor<2x3x8xf32>
  %z = linalg.fill ins(%c0 : f32) outs(%e : tensor<2x3x8xf32>) -> tensor<2x3x8xf32>
  %y = scf.forall (%i) in (1) shared_outs(%o = %z) -> (tensor<2x3x8xf32>) {
    %v = vector.transfer_read %n[%i0, %i0, %i0], %c0 {in_bounds = [true]} : tensor<2x3x16xf32>, vector<16xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %o into %o[0, 0, 0] [2, 3, 8] [1, 1, 1] : tensor<2x3x8xf32> into tensor<2x3x8xf32>
    }
  } {blockc_codegen.kernel = #blockc_codegen.kernel<linear>}
  %u = vector.transfer_read %x[%i0, %i0, %i0], %c0 {in_bounds = [true]} : tensor<2x3x16xf32>, vector<16xf32>
  return %y, %u : tensor<2x3x8xf32>, vector<16xf32>
}

// -----

// Without anything to fuse, no target is needed.
func.func @nothing_to_fuse(%x: tensor<2x3x16xf32>, %g: tensor<16xf32>) -> tensor<2x3x16xf32> {
  %n = transformer.rms_norm %x, %g {epsilon = 1.0e-06 : f64} : tensor<2x3x16xf32>, tensor<16xf32>
  return %n : tensor<2x3x16xf32>
}
