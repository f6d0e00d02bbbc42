// RUN: blockc-opt %s --split-input-file --convert-weight-quant-to-linalg | FileCheck %s

// int8: one scale per output row (W viewed [N, 1, K]); the linear reads the
// dequantised weight and loses its weight_quant.
// CHECK-DAG: #[[ID3:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[ROW3:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-DAG: #[[ID2:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[GRP:.*]] = affine_map<(d0, d1) -> (d0, d1 floordiv 64)>
// CHECK-LABEL: func.func @int8
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x64xf32>, %[[W:.*]]: tensor<8x64xf32>)
// CHECK: %[[V:.*]] = tensor.expand_shape %[[W]] {{\[\[}}0], [1, 2]] output_shape [8, 1, 64] : tensor<8x64xf32> into tensor<8x1x64xf32>
// CHECK: %[[Z:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<8x1xf32>)
// CHECK: %[[AMAX:.*]] = linalg.generic {indexing_maps = [#[[ID3]], #[[ROW3]]], iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[V]] : tensor<8x1x64xf32>) outs(%[[Z]] : tensor<8x1xf32>)
// CHECK: math.absf
// CHECK: arith.maximumf
// CHECK: %[[DQ:.*]] = linalg.generic {indexing_maps = [#[[ID2]], #[[GRP]], #[[ID2]]], iterator_types = ["parallel", "parallel"]} ins(%[[W]], %[[AMAX]] : tensor<8x64xf32>, tensor<8x1xf32>)
// CHECK: ^bb0(%[[IN:.*]]: f32, %[[A:.*]]: f32, %{{.*}}: f32):
// CHECK: %[[L:.*]] = arith.constant 1.270000e+02 : f32
// CHECK: %[[S:.*]] = arith.divf %[[A]], %[[L]] : f32
// CHECK: %[[R:.*]] = arith.divf %[[IN]], %[[S]] : f32
// CHECK: %[[RE:.*]] = math.roundeven %[[R]] : f32
// CHECK: %[[LO:.*]] = arith.constant -1.270000e+02 : f32
// CHECK: %[[C1:.*]] = arith.maximumf %[[RE]], %[[LO]] : f32
// CHECK: %[[C2:.*]] = arith.minimumf %[[C1]], %{{.*}} : f32
// CHECK: %[[IS0:.*]] = arith.cmpf oeq, %[[S]], %[[ZERO:.*]] : f32
// CHECK: %[[SEL:.*]] = arith.select %[[IS0]], %[[ZERO]], %[[C2]] : f32
// CHECK: %[[P:.*]] = arith.mulf %[[SEL]], %[[S]] : f32
// CHECK: linalg.yield %[[P]] : f32
// CHECK: transformer.linear %[[X]], %[[DQ]] : tensor<2x3x64xf32>, tensor<8x64xf32> -> tensor<2x3x8xf32>
// CHECK-NOT: weight_quant
func.func @int8(%x: tensor<2x3x64xf32>, %w: tensor<8x64xf32>) -> tensor<2x3x8xf32> {
  %0 = transformer.linear %x, %w {weight_quant = #transformer.weight_quant<int8>} : tensor<2x3x64xf32>, tensor<8x64xf32> -> tensor<2x3x8xf32>
  return %0 : tensor<2x3x8xf32>
}

// -----

// int4, groups of 32: W viewed [N, K/32, 32], scales [N, K/32], the level
// 7; two projections quantising one weight the same way share its
// dequantised form, a third with other groups has its own.
// CHECK-LABEL: func.func @int4_shared
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x128xf32>, %[[W:.*]]: tensor<8x128xf32>, %[[B:.*]]: tensor<8xf32>)
// CHECK: tensor.expand_shape %[[W]] {{.*}} output_shape [8, 2, 64]
// CHECK: %[[DQ64:.*]] = linalg.generic {{.*}} ins(%[[W]], %{{.*}} : tensor<8x128xf32>, tensor<8x2xf32>)
// CHECK: tensor.expand_shape %[[W]] {{.*}} output_shape [8, 4, 32]
// CHECK: %[[DQ32:.*]] = linalg.generic {{.*}} ins(%[[W]], %{{.*}} : tensor<8x128xf32>, tensor<8x4xf32>)
// CHECK: arith.constant 7.000000e+00 : f32
// CHECK: transformer.linear %[[X]], %[[DQ32]] bias %[[B]] :
// CHECK: transformer.linear %[[X]], %[[DQ32]] :
// CHECK: transformer.linear %[[X]], %[[DQ64]] :
// CHECK-NOT: linalg.generic
func.func @int4_shared(%x: tensor<2x3x128xf32>, %w: tensor<8x128xf32>, %b: tensor<8xf32>) -> (tensor<2x3x8xf32>, tensor<2x3x8xf32>, tensor<2x3x8xf32>) {
  %0 = transformer.linear %x, %w bias %b {weight_quant = #transformer.weight_quant<int4, group_size = 32>} : tensor<2x3x128xf32>, tensor<8x128xf32>, tensor<8xf32> -> tensor<2x3x8xf32>
  %1 = transformer.linear %x, %w {weight_quant = #transformer.weight_quant<int4, group_size = 32>} : tensor<2x3x128xf32>, tensor<8x128xf32> -> tensor<2x3x8xf32>
  %2 = transformer.linear %x, %w {weight_quant = #transformer.weight_quant<int4, group_size = 64>} : tensor<2x3x128xf32>, tensor<8x128xf32> -> tensor<2x3x8xf32>
  return %0, %1, %2 : tensor<2x3x8xf32>, tensor<2x3x8xf32>, tensor<2x3x8xf32>
}

// -----

// A bf16 weight is quantised in f32 and the dequantised weight truncated
// back to bf16.
// CHECK-LABEL: func.func @bf16
// CHECK: arith.extf %{{.*}} : bf16 to f32
// CHECK: math.absf
// CHECK: arith.extf %{{.*}} : bf16 to f32
// CHECK: math.roundeven
// CHECK: arith.truncf %{{.*}} : f32 to bf16
// CHECK: transformer.linear {{.*}} : tensor<2x3x64xbf16>, tensor<8x64xbf16> -> tensor<2x3x8xbf16>
func.func @bf16(%x: tensor<2x3x64xbf16>, %w: tensor<8x64xbf16>) -> tensor<2x3x8xbf16> {
  %0 = transformer.linear %x, %w {weight_quant = #transformer.weight_quant<int8>} : tensor<2x3x64xbf16>, tensor<8x64xbf16> -> tensor<2x3x8xbf16>
  return %0 : tensor<2x3x8xbf16>
}

// -----

// An f32 projection of a bf16 weight: the dequantised weight is f32 (never
// rounded back to bf16).
// CHECK-LABEL: func.func @f32_of_bf16
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<8x64xf32>)
// CHECK: arith.extf %{{.*}} : bf16 to f32
// CHECK-NOT: arith.truncf
// CHECK: transformer.linear {{.*}} : tensor<2x3x64xf32>, tensor<8x64xf32> -> tensor<2x3x8xf32>
func.func @f32_of_bf16(%x: tensor<2x3x64xf32>, %w: tensor<8x64xbf16>) -> tensor<2x3x8xf32> {
  %0 = transformer.linear %x, %w {weight_quant = #transformer.weight_quant<int8>} : tensor<2x3x64xf32>, tensor<8x64xbf16> -> tensor<2x3x8xf32>
  return %0 : tensor<2x3x8xf32>
}

// -----

// Without weight_quant nothing changes.
// CHECK-LABEL: func.func @plain
// CHECK-NOT: linalg
// CHECK: transformer.linear
func.func @plain(%x: tensor<2x3x64xf32>, %w: tensor<8x64xf32>) -> tensor<2x3x8xf32> {
  %0 = transformer.linear %x, %w : tensor<2x3x64xf32>, tensor<8x64xf32> -> tensor<2x3x8xf32>
  return %0 : tensor<2x3x8xf32>
}

// -----

// activations = int8: the input is replaced by x' = q_x s_x, per row and
// run of 32 columns (x viewed [B, T, K / 32, 32], dynamic T kept), with the
// same rules at level 127.
// CHECK-LABEL: func.func @activations
// CHECK-SAME: (%[[X:.*]]: tensor<2x?x64xf32>, %[[W:.*]]: tensor<8x64xf32>)
// CHECK: %[[DQ:.*]] = linalg.generic {{.*}} ins(%[[W]], %{{.*}} : tensor<8x64xf32>, tensor<8x2xf32>)
// CHECK: %[[XR:.*]] = tensor.expand_shape %[[X]] {{\[\[}}0], [1], [2, 3]] output_shape [2, %{{.*}}, 2, 32] : tensor<2x?x64xf32> into tensor<2x?x2x32xf32>
// CHECK: %[[AMAX:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%[[XR]] : tensor<2x?x2x32xf32>) outs(%{{.*}} : tensor<2x?x2xf32>)
// CHECK: %[[XQ:.*]] = linalg.generic {{.*}} ins(%[[X]], %[[AMAX]] : tensor<2x?x64xf32>, tensor<2x?x2xf32>)
// CHECK: arith.constant 1.270000e+02 : f32
// CHECK: math.roundeven
// CHECK: arith.mulf
// CHECK: transformer.linear %[[XQ]], %[[DQ]] : tensor<2x?x64xf32>, tensor<8x64xf32> -> tensor<2x?x8xf32>
// CHECK-NOT: weight_quant
func.func @activations(%x: tensor<2x?x64xf32>, %w: tensor<8x64xf32>) -> tensor<2x?x8xf32> {
  %0 = transformer.linear %x, %w {weight_quant = #transformer.weight_quant<int4, group_size = 32, activations = int8>} : tensor<2x?x64xf32>, tensor<8x64xf32> -> tensor<2x?x8xf32>
  return %0 : tensor<2x?x8xf32>
}
