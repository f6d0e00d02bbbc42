// RUN: blockc-opt %s -split-input-file --transformer-derive-decode -verify-diagnostics

// expected-error @+1 {{transformer-derive-decode: no function @forward with a body}}
module {
  func.func @other(%x: tensor<?x?x8xf32>) -> tensor<?x?x8xf32> {
    return %x : tensor<?x?x8xf32>
  }
}

// -----

// expected-error @+1 {{transformer-derive-decode: @forward_decode already exists}}
func.func @forward(%q: tensor<1x?x2x8xf32>, %k: tensor<1x?x2x8xf32>, %v: tensor<1x?x2x8xf32>) -> tensor<1x?x2x8xf32> {
  %o = transformer.sdpa %q, %k, %v {causal} : tensor<1x?x2x8xf32>, tensor<1x?x2x8xf32>, tensor<1x?x2x8xf32> -> tensor<1x?x2x8xf32>
  return %o : tensor<1x?x2x8xf32>
}
func.func @forward_decode() {
  return
}

// -----

// expected-error @+1 {{transformer-derive-decode: @forward has no attention to cache}}
func.func @forward(%x: tensor<?x?x8xf32>, %g: tensor<8xf32>) -> tensor<?x?x8xf32> {
  %y = transformer.rms_norm %x, %g : tensor<?x?x8xf32>, tensor<8xf32>
  return %y : tensor<?x?x8xf32>
}

// -----

// An encoder (non-causal) block attends to later tokens: no decode entry.
func.func @forward(%x: tensor<?x?x16xf32>, %wq: tensor<16x16xf32>, %wk: tensor<16x16xf32>, %wv: tensor<16x16xf32>, %wo: tensor<16x16xf32>) -> tensor<?x?x16xf32> {
  // expected-error @+1 {{'transformer.sdpa' op is not causal: a decode entry needs causal attention (transformer-derive-decode)}}
  %a = transformer.attention %x q(%wq : tensor<16x16xf32>) k(%wk : tensor<16x16xf32>)
      v(%wv : tensor<16x16xf32>) o(%wo : tensor<16x16xf32>)
      {num_heads = 4 : i64, num_kv_heads = 4 : i64, head_dim = 4 : i64} : tensor<?x?x16xf32>
  return %a : tensor<?x?x16xf32>
}
