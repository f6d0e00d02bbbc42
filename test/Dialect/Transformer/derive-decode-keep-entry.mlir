// RUN: blockc-opt %s -split-input-file --transformer-derive-decode="keep-entry=false" -verify-diagnostics | FileCheck %s

// keep-entry=false: the decode entry replaces the function it was derived
// from (at position 0 it is the prefill), so the module has no @forward.
// CHECK-LABEL: func.func @forward_decode(
// CHECK-SAME: index {transformer.kv_position}
// CHECK: transformer.kv_cache_append
// CHECK: transformer.sdpa
// CHECK-NOT: func.func @forward(
func.func @forward(%q: tensor<1x?x2x8xf32>, %k: tensor<1x?x2x8xf32>, %v: tensor<1x?x2x8xf32>) -> tensor<1x?x2x8xf32> {
  %o = transformer.sdpa %q, %k, %v {causal} : tensor<1x?x2x8xf32>, tensor<1x?x2x8xf32>, tensor<1x?x2x8xf32> -> tensor<1x?x2x8xf32>
  return %o : tensor<1x?x2x8xf32>
}

// -----

// A function that is still called cannot be removed: an error at it, and
// nothing is removed.
// expected-error @+1 {{transformer-derive-decode: @forward is still referenced, so keep-entry=false cannot remove it}}
func.func @forward(%q: tensor<1x?x2x8xf32>, %k: tensor<1x?x2x8xf32>, %v: tensor<1x?x2x8xf32>) -> tensor<1x?x2x8xf32> {
  %o = transformer.sdpa %q, %k, %v {causal} : tensor<1x?x2x8xf32>, tensor<1x?x2x8xf32>, tensor<1x?x2x8xf32> -> tensor<1x?x2x8xf32>
  return %o : tensor<1x?x2x8xf32>
}
func.func @caller(%q: tensor<1x?x2x8xf32>, %k: tensor<1x?x2x8xf32>, %v: tensor<1x?x2x8xf32>) -> tensor<1x?x2x8xf32> {
  %o = func.call @forward(%q, %k, %v) : (tensor<1x?x2x8xf32>, tensor<1x?x2x8xf32>, tensor<1x?x2x8xf32>) -> tensor<1x?x2x8xf32>
  return %o : tensor<1x?x2x8xf32>
}
