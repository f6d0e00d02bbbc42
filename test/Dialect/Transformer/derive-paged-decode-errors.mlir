// RUN: blockc-opt %s -split-input-file --transformer-derive-paged-decode -verify-diagnostics
// RUN: not blockc-opt %s -split-input-file --transformer-derive-paged-decode=page-size=0 2>&1 | FileCheck %s --check-prefix=PAGE

// PAGE: transformer-derive-paged-decode: page-size must be positive, got 0

// expected-error @+1 {{transformer-derive-paged-decode: no function @forward with a body}}
module {
  func.func @other(%x: tensor<?x?x8xf32>) -> tensor<?x?x8xf32> {
    return %x : tensor<?x?x8xf32>
  }
}

// -----

// expected-error @+1 {{transformer-derive-paged-decode: @forward has no attention to cache}}
func.func @forward(%x: tensor<?x?x8xf32>, %g: tensor<8xf32>) -> tensor<?x?x8xf32> {
  %y = transformer.rms_norm %x, %g : tensor<?x?x8xf32>, tensor<8xf32>
  return %y : tensor<?x?x8xf32>
}

// -----

func.func @forward(%x: tensor<?x?x16xf32>, %wq: tensor<16x16xf32>, %wk: tensor<16x16xf32>, %wv: tensor<16x16xf32>, %wo: tensor<16x16xf32>) -> tensor<?x?x16xf32> {
  // expected-error @+1 {{'transformer.sdpa' op is not causal: a paged entry needs causal attention (transformer-derive-paged-decode)}}
  %a = transformer.attention %x q(%wq : tensor<16x16xf32>) k(%wk : tensor<16x16xf32>)
      v(%wv : tensor<16x16xf32>) o(%wo : tensor<16x16xf32>)
      {num_heads = 4 : i64, num_kv_heads = 4 : i64, head_dim = 4 : i64} : tensor<?x?x16xf32>
  return %a : tensor<?x?x16xf32>
}

// -----

// A static batch of 2 cannot hold the packed tokens as one sequence.
// expected-error @+1 {{transformer-derive-paged-decode: @forward must take activations [B, T, d] or token ids [B, T] (i32) with B dynamic or 1 first}}
func.func @forward(%q: tensor<2x?x2x8xf32>, %x: tensor<2x?x16xf32>) -> tensor<2x?x2x8xf32> {
  %o = transformer.sdpa %q, %q, %q {causal} : tensor<2x?x2x8xf32>, tensor<2x?x2x8xf32>, tensor<2x?x2x8xf32> -> tensor<2x?x2x8xf32>
  return %o : tensor<2x?x2x8xf32>
}

// -----

// expected-error @+1 {{transformer-derive-paged-decode: @forward must return one tensor [B, T, n] with B dynamic or 1}}
func.func @forward(%x: tensor<?x?x8xf32>, %q: tensor<1x?x2x8xf32>) -> (tensor<1x?x2x8xf32>, tensor<1x?x2x8xf32>) {
  %o = transformer.sdpa %q, %q, %q {causal} : tensor<1x?x2x8xf32>, tensor<1x?x2x8xf32>, tensor<1x?x2x8xf32> -> tensor<1x?x2x8xf32>
  return %o, %o : tensor<1x?x2x8xf32>, tensor<1x?x2x8xf32>
}

// -----

// A rope that already has an offset cannot take per-token positions too.
func.func @forward(%x: tensor<?x?x8xf32>, %q: tensor<1x?x2x8xf32>, %off: index) -> tensor<1x?x2x8xf32> {
  // expected-error @+1 {{'transformer.rope' op has a position offset, which a paged entry cannot combine with per-token positions (transformer-derive-paged-decode)}}
  %r = transformer.rope %q offset %off : tensor<1x?x2x8xf32>
  %o = transformer.sdpa %r, %r, %r {causal} : tensor<1x?x2x8xf32>, tensor<1x?x2x8xf32>, tensor<1x?x2x8xf32> -> tensor<1x?x2x8xf32>
  return %o : tensor<1x?x2x8xf32>
}

// -----

// The pools need keys and values of one type.
func.func @forward(%x: tensor<?x?x8xf32>, %q: tensor<1x?x2x8xf32>, %v: tensor<1x?x2x?xf32>) -> tensor<1x?x2x?xf32> {
  // expected-error @+1 {{'transformer.sdpa' op needs keys and values of one type with static kv heads and head dim for a paged entry (transformer-derive-paged-decode)}}
  %o = transformer.sdpa %q, %q, %v {causal} : tensor<1x?x2x8xf32>, tensor<1x?x2x8xf32>, tensor<1x?x2x?xf32> -> tensor<1x?x2x?xf32>
  return %o : tensor<1x?x2x?xf32>
}
