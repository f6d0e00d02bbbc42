// RUN: blockc-opt %s --split-input-file --transformer-compute-in-f32 | FileCheck %s
// RUN: blockc-opt %s --split-input-file --transformer-compute-in-f32 --transformer-compute-in-f32 | FileCheck %s
// RUN: blockc-opt %s --split-input-file --transformer-compute-in-f32 --convert-transformer-to-linalg -o /dev/null

// A linear keeps its weight in the storage type; its input and bias are
// widened and its result rounded once.
// CHECK-LABEL: func.func @linear
//  CHECK-SAME: (%[[X:.*]]: tensor<2x16xbf16>, %[[W:.*]]: tensor<8x16xbf16>, %[[B:.*]]: tensor<8xbf16>)
//   CHECK-DAG: %[[XW:.*]] = arith.extf %[[X]] : tensor<2x16xbf16> to tensor<2x16xf32>
//   CHECK-DAG: %[[BW:.*]] = arith.extf %[[B]] : tensor<8xbf16> to tensor<8xf32>
//       CHECK: %[[Y:.*]] = transformer.linear %[[XW]], %[[W]] bias %[[BW]] : tensor<2x16xf32>, tensor<8x16xbf16>, tensor<8xf32> -> tensor<2x8xf32>
//       CHECK: %[[R:.*]] = arith.truncf %[[Y]] : tensor<2x8xf32> to tensor<2x8xbf16>
//       CHECK: return %[[R]]
func.func @linear(%x: tensor<2x16xbf16>, %w: tensor<8x16xbf16>, %b: tensor<8xbf16>) -> tensor<2x8xbf16> {
  %0 = transformer.linear %x, %w bias %b : tensor<2x16xbf16>, tensor<8x16xbf16>, tensor<8xbf16> -> tensor<2x8xbf16>
  return %0 : tensor<2x8xbf16>
}

// -----

// LlamaRMSNorm rounds the normalised row before the gain, then the
// product.
// CHECK-LABEL: func.func @rms_norm
//  CHECK-SAME: (%[[X:.*]]: tensor<2x16xf16>, %[[G:.*]]: tensor<16xf16>)
//   CHECK-DAG: %[[ONES:.*]] = arith.constant dense<1.000000e+00> : tensor<16xf32>
//   CHECK-DAG: %[[XW:.*]] = arith.extf %[[X]] : tensor<2x16xf16> to tensor<2x16xf32>
//       CHECK: %[[N:.*]] = transformer.rms_norm %[[XW]], %[[ONES]] {epsilon = 1.000000e-05 : f64} : tensor<2x16xf32>, tensor<16xf32>
//       CHECK: %[[NR:.*]] = arith.truncf %[[N]] : tensor<2x16xf32> to tensor<2x16xf16>
//       CHECK: %[[Y:.*]] = linalg.generic {{.*}} ins(%[[NR]], %[[G]] : tensor<2x16xf16>, tensor<16xf16>) outs({{.*}} : tensor<2x16xf16>)
//       CHECK:   arith.extf
//       CHECK:   arith.extf
//       CHECK:   %[[P:.*]] = arith.mulf
//       CHECK:   %[[PR:.*]] = arith.truncf %[[P]] : f32 to f16
//       CHECK:   linalg.yield %[[PR]]
//       CHECK: return %[[Y]]
func.func @rms_norm(%x: tensor<2x16xf16>, %g: tensor<16xf16>) -> tensor<2x16xf16> {
  %0 = transformer.rms_norm %x, %g {epsilon = 1.0e-5 : f64} : tensor<2x16xf16>, tensor<16xf16>
  return %0 : tensor<2x16xf16>
}

// -----

// Elementwise arith on tensors (the SwiGLU product) and the other
// primitives round each result; a KV cache append only copies and stays in
// the storage type, as do shape ops.
// CHECK-LABEL: func.func @elementwise
//       CHECK: %[[A:.*]] = transformer.activation <silu> %{{.*}} : tensor<2x4x8xf32>
//       CHECK: %[[AR:.*]] = arith.truncf %[[A]] : tensor<2x4x8xf32> to tensor<2x4x8xbf16>
//       CHECK: %[[AW:.*]] = arith.extf %[[AR]]
//       CHECK: %[[M:.*]] = arith.mulf %[[AW]], %{{.*}} : tensor<2x4x8xf32>
//       CHECK: arith.truncf %[[M]] : tensor<2x4x8xf32> to tensor<2x4x8xbf16>
//       CHECK: transformer.residual_add {{.*}} : tensor<2x4x8xf32>
//       CHECK: %[[E:.*]] = tensor.expand_shape {{.*}} : tensor<2x4x8xbf16> into tensor<2x4x2x4xbf16>
//       CHECK: transformer.kv_cache_append %[[E]] into %{{.*}} at %{{.*}} : tensor<2x4x2x4xbf16> into tensor<2x16x2x4xbf16>
func.func @elementwise(%g: tensor<2x4x8xbf16>, %u: tensor<2x4x8xbf16>, %c: tensor<2x16x2x4xbf16>, %pos: index) -> (tensor<2x4x8xbf16>, tensor<2x16x2x4xbf16>) {
  %a = transformer.activation <silu> %g : tensor<2x4x8xbf16>
  %m = arith.mulf %a, %u : tensor<2x4x8xbf16>
  %r = transformer.residual_add %m, %u : tensor<2x4x8xbf16>
  %e = tensor.expand_shape %r [[0], [1], [2, 3]] output_shape [2, 4, 2, 4] : tensor<2x4x8xbf16> into tensor<2x4x2x4xbf16>
  %c1 = transformer.kv_cache_append %e into %c at %pos : tensor<2x4x2x4xbf16> into tensor<2x16x2x4xbf16>
  return %r, %c1 : tensor<2x4x8xbf16>, tensor<2x16x2x4xbf16>
}

// -----

// Attention computes scores, softmax and the weighted sum in f32 and
// rounds its output once.
// CHECK-LABEL: func.func @sdpa
//       CHECK: %[[O:.*]] = transformer.sdpa {{.*}} {causal} : tensor<1x4x2x8xf32>, tensor<1x4x2x8xf32>, tensor<1x4x2x8xf32> -> tensor<1x4x2x8xf32>
//       CHECK: arith.truncf %[[O]] : tensor<1x4x2x8xf32> to tensor<1x4x2x8xbf16>
func.func @sdpa(%q: tensor<1x4x2x8xbf16>, %k: tensor<1x4x2x8xbf16>, %v: tensor<1x4x2x8xbf16>) -> tensor<1x4x2x8xbf16> {
  %0 = transformer.sdpa %q, %k, %v {causal} : tensor<1x4x2x8xbf16>, tensor<1x4x2x8xbf16>, tensor<1x4x2x8xbf16> -> tensor<1x4x2x8xbf16>
  return %0 : tensor<1x4x2x8xbf16>
}

// -----

// An f32 model is left as it is.
// CHECK-LABEL: func.func @f32
//   CHECK-NOT: arith.extf
//   CHECK-NOT: arith.truncf
//       CHECK: transformer.rms_norm %{{.*}}, %{{.*}} : tensor<2x16xf32>, tensor<16xf32>
func.func @f32(%x: tensor<2x16xf32>, %g: tensor<16xf32>) -> tensor<2x16xf32> {
  %0 = transformer.rms_norm %x, %g : tensor<2x16xf32>, tensor<16xf32>
  return %0 : tensor<2x16xf32>
}

// -----

// A tensor-parallel all-reduce of a projection's partial output sums the
// unrounded f32 partial and rounds the sum once; one of another operand
// widens it first.
shard.grid @tp(shape = 2)
// CHECK-LABEL: func.func @all_reduce
//       CHECK: %[[Y:.*]] = transformer.linear {{.*}} -> tensor<2x8xf32>
//       CHECK: %[[S:.*]] = shard.all_reduce %[[Y]] on @tp grid_axes = [0] : tensor<2x8xf32> -> tensor<2x8xf32>
//       CHECK: %[[R:.*]] = arith.truncf %[[S]] : tensor<2x8xf32> to tensor<2x8xbf16>
//       CHECK: %[[X:.*]] = arith.extf %{{.*}} : tensor<2x8xbf16> to tensor<2x8xf32>
//       CHECK: %[[T:.*]] = shard.all_reduce %[[X]] on @tp grid_axes = [0] : tensor<2x8xf32> -> tensor<2x8xf32>
//       CHECK: arith.truncf %[[T]] : tensor<2x8xf32> to tensor<2x8xbf16>
func.func @all_reduce(%x: tensor<2x16xbf16>, %w: tensor<8x16xbf16>, %z: tensor<2x8xbf16>) -> (tensor<2x8xbf16>, tensor<2x8xbf16>) {
  %0 = transformer.linear %x, %w : tensor<2x16xbf16>, tensor<8x16xbf16> -> tensor<2x8xbf16>
  %1 = shard.all_reduce %0 on @tp grid_axes = [0] : tensor<2x8xbf16> -> tensor<2x8xbf16>
  %2 = shard.all_reduce %z on @tp grid_axes = [0] : tensor<2x8xbf16> -> tensor<2x8xbf16>
  return %1, %2 : tensor<2x8xbf16>, tensor<2x8xbf16>
}
