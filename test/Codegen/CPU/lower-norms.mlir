// RUN: blockc-opt %s -split-input-file --blockc-cpu-select-tiles="isa=avx2" --blockc-cpu-lower-norms | FileCheck %s --implicit-check-not="vector<16xf32>"
// RUN: blockc-opt %s -split-input-file --blockc-cpu-select-tiles="isa=avx512" --blockc-cpu-lower-norms | FileCheck %s --check-prefix=AVX512

// LayerNorm: one parallel iteration per row (b, t), marked as a norm
// kernel; the row is read in vectors (8 lanes with AVX2) in four passes:
// max |x| (the overflow guard), the sum, the sum of squared deviations,
// then (x inv - mean) r g + b written into the row's slice.
// CHECK-LABEL: func.func @layer_norm
// CHECK-SAME:  (%[[X:.+]]: tensor<?x?x32xf32>, %[[G:.+]]: tensor<32xf32>, %[[B:.+]]: tensor<32xf32>)
// CHECK:       %[[Y:.+]] = scf.forall (%[[BI:.+]], %[[TI:.+]]) in (%{{.+}}, %{{.+}}) shared_outs(%[[O:.+]] = %{{.+}}) -> (tensor<?x?x32xf32>)
// CHECK:       %[[ROW:.+]] = tensor.extract_slice %[[O]][%[[BI]], %[[TI]], 0] [1, 1, 32] [1, 1, 1]
// CHECK:       scf.for %{{.+}} = %c0{{.*}} to %c32{{.*}} step %c8
// CHECK:       math.absf %{{.+}} : vector<8xf32>
// CHECK:       arith.maximumf %{{.+}} : vector<8xf32>
// CHECK:       vector.reduction <maximumf>
// CHECK:       scf.for
// CHECK:       arith.addf %{{.+}} : vector<8xf32>
// CHECK:       vector.reduction <add>
// CHECK:       scf.for
// CHECK:       arith.subf %{{.+}} : vector<8xf32>
// CHECK:       vector.reduction <add>
// CHECK:       math.rsqrt %{{.+}} : f32
// CHECK:       scf.for %[[J:.+]] = %c0{{.*}} to %c32{{.*}} step %c8{{.*}} iter_args(%[[ACC:.+]] = %[[ROW]])
// CHECK:       vector.transfer_read %[[G]][%[[J]]]
// CHECK:       vector.transfer_read %[[B]][%[[J]]]
// CHECK:       vector.transfer_write %{{.+}}, %[[ACC]][%c0{{.*}}, %c0{{.*}}, %[[J]]] {in_bounds = [true]} : vector<8xf32>, tensor<1x1x32xf32>
// CHECK:       tensor.parallel_insert_slice %{{.+}} into %[[O]][%[[BI]], %[[TI]], 0] [1, 1, 32] [1, 1, 1]
// CHECK:       } {blockc_codegen.kernel = #blockc_codegen.kernel<norm>}
// CHECK-NOT:   transformer.layer_norm
// CHECK:       return %[[Y]]
// AVX512-LABEL: func.func @layer_norm
// AVX512:       scf.for %{{.+}} = %c0{{.*}} to %c32{{.*}} step %c16
// AVX512:       vector<16xf32>
// AVX512:       kernel<norm>
func.func @layer_norm(%x: tensor<?x?x32xf32>, %g: tensor<32xf32>, %b: tensor<32xf32>) -> tensor<?x?x32xf32> {
  %y = transformer.layer_norm %x, %g, %b {epsilon = 1.0e-5 : f64} : tensor<?x?x32xf32>, tensor<32xf32>, tensor<32xf32>
  return %y : tensor<?x?x32xf32>
}

// -----

// An RMSNorm that blockc-cpu-fuse-norm left (here: returned): three
// passes, max |x|, the sum of squares, then x inv r g (no mean, no bias).
// CHECK-LABEL: func.func @rms_norm
// CHECK:       scf.forall
// CHECK:       vector.reduction <maximumf>
// CHECK:       arith.mulf %{{.+}} : vector<8xf32>
// CHECK:       vector.reduction <add>
// CHECK-NOT:   vector.reduction
// CHECK:       math.rsqrt
// CHECK-NOT:   arith.subf
// CHECK:       kernel<norm>
func.func @rms_norm(%x: tensor<2x3x32xf32>, %g: tensor<32xf32>) -> tensor<2x3x32xf32> {
  %y = transformer.rms_norm %x, %g : tensor<2x3x32xf32>, tensor<32xf32>
  return %y : tensor<2x3x32xf32>
}

// -----

// Left to the linalg lowering: D not a multiple of the vector width (AVX2:
// 8).
// CHECK-LABEL: func.func @odd_width
// CHECK:       transformer.layer_norm
func.func @odd_width(%x: tensor<1x4x12xf32>, %g: tensor<12xf32>, %b: tensor<12xf32>) -> tensor<1x4x12xf32> {
  %y = transformer.layer_norm %x, %g, %b : tensor<1x4x12xf32>, tensor<12xf32>, tensor<12xf32>
  return %y : tensor<1x4x12xf32>
}
