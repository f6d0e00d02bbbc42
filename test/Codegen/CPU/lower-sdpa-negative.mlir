// RUN: blockc-opt %s --blockc-cpu-select-tiles="isa=avx512" --blockc-cpu-lower-sdpa | FileCheck %s

// A head dimension that is not a multiple of the vector width (16 lanes
// with AVX-512) is left to convert-transformer-to-linalg.
// CHECK-LABEL: func.func @negative_head_dim_24
// CHECK: transformer.sdpa
// CHECK-NOT: vector.fma
func.func @negative_head_dim_24(%q: tensor<1x4x3x24xf32>) -> tensor<1x4x3x24xf32> {
  %o = transformer.sdpa %q, %q, %q {causal} : tensor<1x4x3x24xf32>, tensor<1x4x3x24xf32>, tensor<1x4x3x24xf32> -> tensor<1x4x3x24xf32>
  return %o : tensor<1x4x3x24xf32>
}
