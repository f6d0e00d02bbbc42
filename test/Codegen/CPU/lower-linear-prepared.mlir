// RUN: blockc-opt %s -split-input-file --blockc-cpu-select-tiles="isa=avx2 prepare-weights=true" --blockc-cpu-lower-linear | FileCheck %s
// RUN: blockc-opt %s -split-input-file --blockc-cpu-select-tiles="isa=avx512 prepare-weights=true" --blockc-cpu-lower-linear | FileCheck %s --check-prefix=AVX512

// With prepare-weights, blockc-cpu-select-tiles marks a projection whose
// weight is an argument of a public function weight_layout<packed_panels>;
// blockc-cpu-lower-linear then packs the whole weight with one linalg.pack
// (the layout recorded as blockc_codegen.prepared; blockc-cpu-prepare-weights
// moves it into the prepare function) and builds only the packed kernel,
// reading panel [n-block, k-block] of it: no in-kernel packing, no
// transposes, no dot-product kernel and no choice on T.

// AVX2: panels of 40 (K) x 16 (2 x 8 lanes) columns, ceil(24 / 16) = 2.
// CHECK-LABEL: func.func @linear
// CHECK-SAME:  (%{{.+}}: tensor<?x?x40xf32>, %[[W:.+]]: tensor<24x40xf32>)
// CHECK:       %[[PACK:.+]] = linalg.pack %[[W]] padding_value(%{{.+}} : f32) inner_dims_pos = [1, 0] inner_tiles = [40, 16] into %{{.+}} {blockc_codegen.prepared = #blockc_codegen.packed_weight<rows = 24, cols = 40, panel_k = 40, panel_n = 16>} : tensor<24x40xf32> -> tensor<2x1x40x16xf32>
// CHECK-NOT:   scf.if
// CHECK:       scf.forall (%[[NB:.+]]) in (2)
// CHECK:       scf.for %[[KC:.+]] = %{{.+}} to %{{.+}} step %{{.+}}
// CHECK:       %[[KB:.+]] = arith.divui %[[KC]], %{{.+}} : index
// CHECK:       tensor.extract_slice %[[PACK]][%[[NB]], %[[KB]], 0, 0] [1, 1, 40, 16] [1, 1, 1, 1] : tensor<2x1x40x16xf32> to tensor<40x16xf32>
// CHECK:       vector.fma
// CHECK-NOT:   vector.transpose
// CHECK-NOT:   vector.reduction
// CHECK:       return
// AVX512-LABEL: func.func @linear
// AVX512:       linalg.pack %{{.+}} inner_dims_pos = [1, 0] inner_tiles = [48, 32] into %{{.+}} {blockc_codegen.prepared = #blockc_codegen.packed_weight<rows = 24, cols = 40, panel_k = 48, panel_n = 32>} : tensor<24x40xf32> -> tensor<1x1x48x32xf32>
// AVX512-NOT:   vector.transpose
// AVX512:       vector.fma {{.*}} : vector<16xf32>
func.func @linear(%x: tensor<?x?x40xf32>, %w: tensor<24x40xf32>) -> tensor<?x?x24xf32> {
  %y = transformer.linear %x, %w : tensor<?x?x40xf32>, tensor<24x40xf32> -> tensor<?x?x24xf32>
  return %y : tensor<?x?x24xf32>
}

// -----

// A private function's weight is not an entry argument: the kernels pack
// per call as before (both kernels for a dynamic T).
// CHECK-LABEL: func.func private @inner
// CHECK-NOT:   linalg.pack
// CHECK:       scf.if
// CHECK:       vector.transpose
func.func private @inner(%x: tensor<?x?x40xf32>, %w: tensor<24x40xf32>) -> tensor<?x?x24xf32> {
  %y = transformer.linear %x, %w : tensor<?x?x40xf32>, tensor<24x40xf32> -> tensor<?x?x24xf32>
  return %y : tensor<?x?x24xf32>
}

// -----

// A weight computed in the function is not marked either.
// CHECK-LABEL: func.func @computed
// CHECK-NOT:   linalg.pack
// CHECK:       scf.if
func.func @computed(%x: tensor<?x?x40xf32>, %w: tensor<24x40xf32>) -> tensor<?x?x24xf32> {
  %w2 = arith.addf %w, %w : tensor<24x40xf32>
  %y = transformer.linear %x, %w2 : tensor<?x?x40xf32>, tensor<24x40xf32> -> tensor<?x?x24xf32>
  return %y : tensor<?x?x24xf32>
}
