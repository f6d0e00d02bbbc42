// RUN: blockc-opt %s --split-input-file --blockc-cpu-select-tiles="isa=avx512" --blockc-cpu-lower-sdpa | FileCheck %s
// RUN: blockc-opt %s --split-input-file --blockc-cpu-select-tiles="isa=avx2" --blockc-cpu-lower-sdpa | FileCheck %s --check-prefix=AVX2

// Head dims that are not a multiple of the target width (16 lanes with
// AVX-512, 8 with AVX2): the kernel takes the widest vector of 4 lanes or
// more that divides D, and reads Q, K and V in place.

// D = 24: 8 lanes with both ISAs, no padding.
// CHECK-LABEL: func.func @head_dim_24
// CHECK-NOT: tensor.pad
// CHECK-NOT: transformer.sdpa
// CHECK-NOT: vector<16xf32>
// CHECK: math.fma {{.*}} : vector<8xf32>
// CHECK: kernel = #blockc_codegen.kernel<attention>
// CHECK-NOT: tensor.extract_slice {{.*}} to tensor<1x4x3x24xf32>
// CHECK: return
// AVX2-LABEL: func.func @head_dim_24
// AVX2-NOT: tensor.pad
// AVX2: math.fma {{.*}} : vector<8xf32>
func.func @head_dim_24(%q: tensor<1x4x3x24xf32>) -> tensor<1x4x3x24xf32> {
  %o = transformer.sdpa %q, %q, %q {causal} : tensor<1x4x3x24xf32>, tensor<1x4x3x24xf32>, tensor<1x4x3x24xf32> -> tensor<1x4x3x24xf32>
  return %o : tensor<1x4x3x24xf32>
}

// -----

// D = 12: 4 lanes.
// CHECK-LABEL: func.func @head_dim_12
// CHECK-NOT: tensor.pad
// CHECK-NOT: vector<8xf32>
// CHECK: math.fma {{.*}} : vector<4xf32>
// AVX2-LABEL: func.func @head_dim_12
// AVX2-NOT: tensor.pad
// AVX2-NOT: vector<8xf32>
// AVX2: math.fma {{.*}} : vector<4xf32>
func.func @head_dim_12(%q: tensor<2x?x4x12xf32>, %kv: tensor<2x?x2x12xf32>) -> tensor<2x?x4x12xf32> {
  %o = transformer.sdpa %q, %kv, %kv : tensor<2x?x4x12xf32>, tensor<2x?x2x12xf32>, tensor<2x?x2x12xf32> -> tensor<2x?x4x12xf32>
  return %o : tensor<2x?x4x12xf32>
}

// -----

// D = 6: no width of 4 lanes or more divides it, so Q, K and V are padded
// with zeros to D = 8 (8 lanes), and the output drops the two padded
// columns.
// CHECK-LABEL: func.func @head_dim_6
// CHECK-SAME: (%[[Q:.*]]: tensor<1x?x4x6xf32>, %[[K:.*]]: tensor<1x?x2x6xf32>, %[[V:.*]]: tensor<1x?x2x6xf32>)
// CHECK: %[[ZQ:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: tensor.pad %[[Q]] low[0, 0, 0, 0] high[0, 0, 0, 2]
// CHECK-NEXT: ^bb0
// CHECK-NEXT: tensor.yield %[[ZQ]] : f32
// CHECK-NEXT: } : tensor<1x?x4x6xf32> to tensor<1x?x4x8xf32>
// CHECK: tensor.pad %[[K]] low[0, 0, 0, 0] high[0, 0, 0, 2]
// CHECK: } : tensor<1x?x2x6xf32> to tensor<1x?x2x8xf32>
// CHECK: tensor.pad %[[V]] low[0, 0, 0, 0] high[0, 0, 0, 2]
// CHECK: } : tensor<1x?x2x6xf32> to tensor<1x?x2x8xf32>
// CHECK: %[[OUT:.*]] = scf.forall {{.*}} -> (tensor<1x?x4x8xf32>)
// CHECK: math.fma {{.*}} : vector<8xf32>
// CHECK: kernel = #blockc_codegen.kernel<attention>
// CHECK: %[[T:.*]] = tensor.dim %[[Q]], %c1
// CHECK: %[[R:.*]] = tensor.extract_slice %[[OUT]][0, 0, 0, 0] [1, %[[T]], 4, 6] [1, 1, 1, 1] : tensor<1x?x4x8xf32> to tensor<1x?x4x6xf32>
// CHECK: return %[[R]]
// AVX2-LABEL: func.func @head_dim_6
// AVX2: tensor.pad
// AVX2-SAME: high[0, 0, 0, 2]
// AVX2: math.fma {{.*}} : vector<8xf32>
func.func @head_dim_6(%q: tensor<1x?x4x6xf32>, %k: tensor<1x?x2x6xf32>, %v: tensor<1x?x2x6xf32>) -> tensor<1x?x4x6xf32> {
  %o = transformer.sdpa %q, %k, %v {causal} : tensor<1x?x4x6xf32>, tensor<1x?x2x6xf32>, tensor<1x?x2x6xf32> -> tensor<1x?x4x6xf32>
  return %o : tensor<1x?x4x6xf32>
}

// -----

// Not f32: left to convert-transformer-to-linalg.
// CHECK-LABEL: func.func @negative_f16
// CHECK: transformer.sdpa
// CHECK-NOT: math.fma
func.func @negative_f16(%q: tensor<1x4x3x16xf16>) -> tensor<1x4x3x16xf16> {
  %o = transformer.sdpa %q, %q, %q {causal} : tensor<1x4x3x16xf16>, tensor<1x4x3x16xf16>, tensor<1x4x3x16xf16> -> tensor<1x4x3x16xf16>
  return %o : tensor<1x4x3x16xf16>
}
