// RUN: blockc-opt %s -split-input-file --transformer-fold-empty | FileCheck %s

// A statically empty result (any zero dimension) becomes tensor.empty of the
// same type, dynamic dimensions read from the input.
// CHECK-LABEL: func.func @empty_rows
// CHECK-SAME: (%[[X:.+]]: tensor<?x0x8xf32>, %[[G:.+]]: tensor<8xf32>, %[[W:.+]]: tensor<4x8xf32>)
// CHECK: %[[C0:.+]] = arith.constant 0 : index
// CHECK: %[[B:.+]] = tensor.dim %[[X]], %[[C0]] : tensor<?x0x8xf32>
// CHECK: %[[N:.+]] = tensor.empty(%[[B]]) : tensor<?x0x8xf32>
// CHECK: %[[C0_2:.+]] = arith.constant 0 : index
// CHECK: %[[B2:.+]] = tensor.dim %[[N]], %[[C0_2]] : tensor<?x0x8xf32>
// CHECK: %[[L:.+]] = tensor.empty(%[[B2]]) : tensor<?x0x4xf32>
// CHECK: return %[[L]] : tensor<?x0x4xf32>
func.func @empty_rows(%x: tensor<?x0x8xf32>, %g: tensor<8xf32>, %w: tensor<4x8xf32>) -> tensor<?x0x4xf32> {
  %n = transformer.rms_norm %x, %g : tensor<?x0x8xf32>, tensor<8xf32>
  %y = transformer.linear %n, %w : tensor<?x0x8xf32>, tensor<4x8xf32> -> tensor<?x0x4xf32>
  return %y : tensor<?x0x4xf32>
}

// -----

// A non-empty result of an empty input (a projection from d = 0) is a real
// computation (zeros) and stays; so does every op with a non-empty result.
// CHECK-LABEL: func.func @from_empty
// CHECK: transformer.linear
// CHECK: transformer.activation
func.func @from_empty(%x: tensor<2x3x0xf32>, %w: tensor<4x0xf32>) -> tensor<2x3x4xf32> {
  %y = transformer.linear %x, %w : tensor<2x3x0xf32>, tensor<4x0xf32> -> tensor<2x3x4xf32>
  %z = transformer.activation <relu> %y : tensor<2x3x4xf32>
  return %z : tensor<2x3x4xf32>
}

// -----

// A cache append aliases its cache: left alone even when empty.
// CHECK-LABEL: func.func @cache
// CHECK: transformer.kv_cache_append
func.func @cache(%c: tensor<0x8x2x4xf32>, %n: tensor<0x1x2x4xf32>, %p: index) -> tensor<0x8x2x4xf32> {
  %r = transformer.kv_cache_append %n into %c at %p : tensor<0x1x2x4xf32> into tensor<0x8x2x4xf32>
  return %r : tensor<0x8x2x4xf32>
}
