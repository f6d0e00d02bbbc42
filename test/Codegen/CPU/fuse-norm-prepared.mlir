// RUN: blockc-opt %s --blockc-cpu-select-tiles="isa=avx512 prepare-weights=true" --blockc-cpu-lower-linear --blockc-cpu-fuse-norm | FileCheck %s --implicit-check-not=transformer.rms_norm

// A kernel reading a prepared (linalg.pack'ed) weight gets the RMSNorm gain
// folded into the weight before the pack (W[n, k] * g[k]: work for the
// prepare function), reads x itself and scales each finished row by r.
// CHECK-LABEL: func.func @norm_q
// CHECK-SAME:  (%[[X:.+]]: tensor<1x5x32xf32>, %[[G:.+]]: tensor<32xf32>, %[[W:.+]]: tensor<48x32xf32>)
// CHECK:       %[[WG:.+]] = linalg.generic {{.*}} ins(%[[W]], %[[G]] : tensor<48x32xf32>, tensor<32xf32>)
// CHECK:         arith.mulf
// CHECK:       %[[PACK:.+]] = linalg.pack %[[WG]] {{.*}} {blockc_codegen.prepared = #blockc_codegen.packed_weight<rows = 48, cols = 32, panel_k = 32, panel_n = 32>}
// CHECK:       scf.forall
// CHECK:       tensor.extract_slice %[[PACK]]
// CHECK:       tensor.extract %[[X]]
// The row scales r, applied to each finished tile row.
// CHECK:       scf.forall.in_parallel
func.func @norm_q(%x: tensor<1x5x32xf32>, %g: tensor<32xf32>, %w: tensor<48x32xf32>) -> tensor<1x5x48xf32> {
  %n = transformer.rms_norm %x, %g {epsilon = 1.0e-05 : f64} : tensor<1x5x32xf32>, tensor<32xf32>
  %y = transformer.linear %n, %w : tensor<1x5x32xf32>, tensor<48x32xf32> -> tensor<1x5x48xf32>
  return %y : tensor<1x5x48xf32>
}
