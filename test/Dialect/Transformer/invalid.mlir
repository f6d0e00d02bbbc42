// RUN: blockc-opt %s -split-input-file -verify-diagnostics

// One case per verifier branch of TransformerOps.cpp (every emitOpError and
// every operand name a shape or element-type message can carry), plus
// ODS-generated constraint failures (IntPositive attributes, static weights,
// operand ranks, type-matching traits). Each case is otherwise valid, so the
// expected error is the one the branch under test produces.

//===----------------------------------------------------------------------===//
// rms_norm
//===----------------------------------------------------------------------===//

// A rank-0 input has no row to normalise.
func.func @rms_norm_input_rank(%x: tensor<f32>, %g: tensor<16xf32>) -> tensor<f32> {
  // expected-error @+1 {{expects input of rank >= 1}}
  %0 = transformer.rms_norm %x, %g : tensor<f32>, tensor<16xf32>
  return %0 : tensor<f32>
}

// -----

// The weight must share the input's element type.
func.func @rms_norm_weight_element_type(%x: tensor<2x16xf32>, %g: tensor<16xf16>) -> tensor<2x16xf32> {
  // expected-error @+1 {{expects weight to have element type 'f32' (the element type of input), got 'f16'}}
  %0 = transformer.rms_norm %x, %g : tensor<2x16xf32>, tensor<16xf16>
  return %0 : tensor<2x16xf32>
}

// -----

// The weight is [d] for d the last input dimension.
func.func @rms_norm_weight_shape(%x: tensor<2x16xf32>, %g: tensor<8xf32>) -> tensor<2x16xf32> {
  // expected-error @+1 {{expects weight to have shape [16], got [8]}}
  %0 = transformer.rms_norm %x, %g : tensor<2x16xf32>, tensor<8xf32>
  return %0 : tensor<2x16xf32>
}

// -----

// A rank-2 weight is not [d] either.
func.func @rms_norm_weight_rank2(%x: tensor<2x16xf32>, %g: tensor<1x16xf32>) -> tensor<2x16xf32> {
  // expected-error @+1 {{expects weight to have shape [16], got [1, 16]}}
  %0 = transformer.rms_norm %x, %g : tensor<2x16xf32>, tensor<1x16xf32>
  return %0 : tensor<2x16xf32>
}

// -----

// epsilon must be > 0 (zero is rejected).
func.func @rms_norm_epsilon_zero(%x: tensor<2x16xf32>, %g: tensor<16xf32>) -> tensor<2x16xf32> {
  // expected-error @+1 {{expects a finite epsilon > 0, got 0.000000e+00}}
  %0 = transformer.rms_norm %x, %g {epsilon = 0.0 : f64} : tensor<2x16xf32>, tensor<16xf32>
  return %0 : tensor<2x16xf32>
}

// -----

// epsilon must be finite (+inf is rejected).
func.func @rms_norm_epsilon_inf(%x: tensor<2x16xf32>, %g: tensor<16xf32>) -> tensor<2x16xf32> {
  // expected-error @+1 {{expects a finite epsilon > 0, got INF}}
  %0 = transformer.rms_norm %x, %g {epsilon = 0x7FF0000000000000 : f64} : tensor<2x16xf32>, tensor<16xf32>
  return %0 : tensor<2x16xf32>
}

// -----

// ODS: weights must be statically shaped.
func.func @rms_norm_ods_dynamic_weight(%x: tensor<2x16xf32>, %g: tensor<?xf32>) -> tensor<2x16xf32> {
  // expected-error @+1 {{operand #1 must be statically shaped tensor of 32-bit float or 16-bit float or bfloat16 type values, but got 'tensor<?xf32>'}}
  %0 = transformer.rms_norm %x, %g : tensor<2x16xf32>, tensor<?xf32>
  return %0 : tensor<2x16xf32>
}

// -----

//===----------------------------------------------------------------------===//
// layer_norm
//===----------------------------------------------------------------------===//

// A rank-0 input has no row to normalise.
func.func @layer_norm_input_rank(%x: tensor<f32>, %g: tensor<16xf32>, %b: tensor<16xf32>) -> tensor<f32> {
  // expected-error @+1 {{expects input of rank >= 1}}
  %0 = transformer.layer_norm %x, %g, %b : tensor<f32>, tensor<16xf32>, tensor<16xf32>
  return %0 : tensor<f32>
}

// -----

// The weight must share the input's element type.
func.func @layer_norm_weight_element_type(%x: tensor<2x16xbf16>, %g: tensor<16xf32>, %b: tensor<16xbf16>) -> tensor<2x16xbf16> {
  // expected-error @+1 {{expects weight to have element type 'bf16' (the element type of input), got 'f32'}}
  %0 = transformer.layer_norm %x, %g, %b : tensor<2x16xbf16>, tensor<16xf32>, tensor<16xbf16>
  return %0 : tensor<2x16xbf16>
}

// -----

// The bias must share the input's element type.
func.func @layer_norm_bias_element_type(%x: tensor<2x16xf32>, %g: tensor<16xf32>, %b: tensor<16xf16>) -> tensor<2x16xf32> {
  // expected-error @+1 {{expects bias to have element type 'f32' (the element type of input), got 'f16'}}
  %0 = transformer.layer_norm %x, %g, %b : tensor<2x16xf32>, tensor<16xf32>, tensor<16xf16>
  return %0 : tensor<2x16xf32>
}

// -----

// The weight is [d].
func.func @layer_norm_weight_shape(%x: tensor<2x16xf32>, %g: tensor<32xf32>, %b: tensor<16xf32>) -> tensor<2x16xf32> {
  // expected-error @+1 {{expects weight to have shape [16], got [32]}}
  %0 = transformer.layer_norm %x, %g, %b : tensor<2x16xf32>, tensor<32xf32>, tensor<16xf32>
  return %0 : tensor<2x16xf32>
}

// -----

// The bias is [d].
func.func @layer_norm_bias_shape(%x: tensor<2x16xf32>, %g: tensor<16xf32>, %b: tensor<32xf32>) -> tensor<2x16xf32> {
  // expected-error @+1 {{expects bias to have shape [16], got [32]}}
  %0 = transformer.layer_norm %x, %g, %b : tensor<2x16xf32>, tensor<16xf32>, tensor<32xf32>
  return %0 : tensor<2x16xf32>
}

// -----

// epsilon must be > 0 (negative is rejected).
func.func @layer_norm_epsilon_negative(%x: tensor<2x16xf32>, %g: tensor<16xf32>, %b: tensor<16xf32>) -> tensor<2x16xf32> {
  // expected-error @+1 {{expects a finite epsilon > 0, got -1.000000e-05}}
  %0 = transformer.layer_norm %x, %g, %b {epsilon = -1.0e-5 : f64} : tensor<2x16xf32>, tensor<16xf32>, tensor<16xf32>
  return %0 : tensor<2x16xf32>
}

// -----

//===----------------------------------------------------------------------===//
// linear
//===----------------------------------------------------------------------===//

// A rank-0 input has no feature dimension.
func.func @linear_input_rank(%x: tensor<f32>, %w: tensor<8x16xf32>) -> tensor<f32> {
  // expected-error @+1 {{expects input of rank >= 1}}
  %0 = transformer.linear %x, %w : tensor<f32>, tensor<8x16xf32> -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// The weight must be rank 2 ([out, in]).
func.func @linear_weight_rank(%x: tensor<2x16xf32>, %w: tensor<2x8x16xf32>) -> tensor<2x8xf32> {
  // expected-error @+1 {{expects weight to be a rank-2 [out, in] tensor, got rank 3}}
  %0 = transformer.linear %x, %w : tensor<2x16xf32>, tensor<2x8x16xf32> -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

// The weight must share the input's element type (only an f32 projection
// may keep a narrower weight).
func.func @linear_weight_element_type(%x: tensor<2x16xf16>, %w: tensor<8x16xbf16>) -> tensor<2x8xf16> {
  // expected-error @+1 {{expects weight to have element type 'f16' (the element type of input), got 'bf16'}}
  %0 = transformer.linear %x, %w : tensor<2x16xf16>, tensor<8x16xbf16> -> tensor<2x8xf16>
  return %0 : tensor<2x8xf16>
}

// -----

// Never a wider weight than the input.
func.func @linear_wider_weight(%x: tensor<2x16xbf16>, %w: tensor<8x16xf32>) -> tensor<2x8xbf16> {
  // expected-error @+1 {{expects weight to have element type 'bf16' (the element type of input), got 'f32'}}
  %0 = transformer.linear %x, %w : tensor<2x16xbf16>, tensor<8x16xf32> -> tensor<2x8xbf16>
  return %0 : tensor<2x8xbf16>
}

// -----

// The bias must share the input's element type.
func.func @linear_bias_element_type(%x: tensor<2x16xf32>, %w: tensor<8x16xf32>, %b: tensor<8xf16>) -> tensor<2x8xf32> {
  // expected-error @+1 {{expects bias to have element type 'f32' (the element type of input), got 'f16'}}
  %0 = transformer.linear %x, %w bias %b : tensor<2x16xf32>, tensor<8x16xf32>, tensor<8xf16> -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

// The result must share the input's element type.
func.func @linear_result_element_type(%x: tensor<2x16xf32>, %w: tensor<8x16xf32>) -> tensor<2x8xf16> {
  // expected-error @+1 {{expects result to have element type 'f32' (the element type of input), got 'f16'}}
  %0 = transformer.linear %x, %w : tensor<2x16xf32>, tensor<8x16xf32> -> tensor<2x8xf16>
  return %0 : tensor<2x8xf16>
}

// -----

// The weight's `in` dimension must match the input's last dimension
// (a weight stored [in, out] is caught here).
func.func @linear_weight_transposed(%x: tensor<2x16xf32>, %w: tensor<16x8xf32>) -> tensor<2x16xf32> {
  // expected-error @+1 {{expects weight to have shape [16, 16], got [16, 8]}}
  %0 = transformer.linear %x, %w : tensor<2x16xf32>, tensor<16x8xf32> -> tensor<2x16xf32>
  return %0 : tensor<2x16xf32>
}

// -----

// The bias is [out].
func.func @linear_bias_shape(%x: tensor<2x16xf32>, %w: tensor<8x16xf32>, %b: tensor<16xf32>) -> tensor<2x8xf32> {
  // expected-error @+1 {{expects bias to have shape [8], got [16]}}
  %0 = transformer.linear %x, %w bias %b : tensor<2x16xf32>, tensor<8x16xf32>, tensor<16xf32> -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

// The result's last dimension is `out`.
func.func @linear_result_shape(%x: tensor<2x4x16xf32>, %w: tensor<8x16xf32>) -> tensor<2x4x16xf32> {
  // expected-error @+1 {{expects result to have shape [2, 4, 8], got [2, 4, 16]}}
  %0 = transformer.linear %x, %w : tensor<2x4x16xf32>, tensor<8x16xf32> -> tensor<2x4x16xf32>
  return %0 : tensor<2x4x16xf32>
}

// -----

// The result keeps the input's rank.
func.func @linear_result_rank(%x: tensor<2x4x16xf32>, %w: tensor<8x16xf32>) -> tensor<8x8xf32> {
  // expected-error @+1 {{expects result to have shape [2, 4, 8], got [8, 8]}}
  %0 = transformer.linear %x, %w : tensor<2x4x16xf32>, tensor<8x16xf32> -> tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}

// -----

//===----------------------------------------------------------------------===//
// rope
//===----------------------------------------------------------------------===//

// The head dimension must be static.
func.func @rope_dynamic_head_dim(%x: tensor<1x4x2x?xf32>) -> tensor<1x4x2x?xf32> {
  // expected-error @+1 {{expects a static head dimension}}
  %0 = transformer.rope %x : tensor<1x4x2x?xf32>
  return %0 : tensor<1x4x2x?xf32>
}

// -----

// Without rotary_dim the whole head is rotated, so an odd head dim is
// rejected.
func.func @rope_odd_head_dim(%x: tensor<1x4x2x5xf32>) -> tensor<1x4x2x5xf32> {
  // expected-error @+1 {{expects an even rotary dimension, got 5}}
  %0 = transformer.rope %x : tensor<1x4x2x5xf32>
  return %0 : tensor<1x4x2x5xf32>
}

// -----

// An explicit odd rotary_dim is rejected.
func.func @rope_odd_rotary_dim(%x: tensor<1x4x2x8xf32>) -> tensor<1x4x2x8xf32> {
  // expected-error @+1 {{expects an even rotary dimension, got 3}}
  %0 = transformer.rope %x {rotary_dim = 3 : i64} : tensor<1x4x2x8xf32>
  return %0 : tensor<1x4x2x8xf32>
}

// -----

// rotary_dim may not exceed the head dimension.
func.func @rope_rotary_dim_too_large(%x: tensor<1x4x2x8xf32>) -> tensor<1x4x2x8xf32> {
  // expected-error @+1 {{expects rotary_dim (16) to be at most the head dimension (8)}}
  %0 = transformer.rope %x {rotary_dim = 16 : i64} : tensor<1x4x2x8xf32>
  return %0 : tensor<1x4x2x8xf32>
}

// -----

// theta must be > 0.
func.func @rope_theta_zero(%x: tensor<1x4x2x8xf32>) -> tensor<1x4x2x8xf32> {
  // expected-error @+1 {{expects a finite theta > 0, got 0.000000e+00}}
  %0 = transformer.rope %x {theta = 0.0 : f64} : tensor<1x4x2x8xf32>
  return %0 : tensor<1x4x2x8xf32>
}

// -----

// theta must be finite (NaN is rejected).
func.func @rope_theta_nan(%x: tensor<1x4x2x8xf32>) -> tensor<1x4x2x8xf32> {
  // expected-error @+1 {{expects a finite theta > 0, got nan}}
  %0 = transformer.rope %x {theta = 0x7FF8000000000000 : f64} : tensor<1x4x2x8xf32>
  return %0 : tensor<1x4x2x8xf32>
}

// -----

// ODS: rotary_dim is IntPositive.
func.func @rope_ods_rotary_dim(%x: tensor<1x4x2x8xf32>) -> tensor<1x4x2x8xf32> {
  // expected-error @+1 {{attribute 'rotary_dim' failed to satisfy constraint: 64-bit signless integer attribute whose value is positive}}
  %0 = transformer.rope %x {rotary_dim = 0 : i64} : tensor<1x4x2x8xf32>
  return %0 : tensor<1x4x2x8xf32>
}

// -----

// ODS: rope works on [B, T, H, D] tensors.
func.func @rope_ods_rank(%x: tensor<4x2x8xf32>) -> tensor<4x2x8xf32> {
  // expected-error @+1 {{operand #0 must be 4D tensor of 32-bit float or 16-bit float or bfloat16 type values, but got 'tensor<4x2x8xf32>'}}
  %0 = transformer.rope %x : tensor<4x2x8xf32>
  return %0 : tensor<4x2x8xf32>
}

// -----

//===----------------------------------------------------------------------===//
// sdpa
//===----------------------------------------------------------------------===//

// The key must share the query's element type.
func.func @sdpa_key_element_type(%q: tensor<2x4x4x8xf32>, %k: tensor<2x6x2x8xf16>, %v: tensor<2x6x2x8xf32>) -> tensor<2x4x4x8xf32> {
  // expected-error @+1 {{expects key to have element type 'f32' (the element type of query), got 'f16'}}
  %0 = transformer.sdpa %q, %k, %v : tensor<2x4x4x8xf32>, tensor<2x6x2x8xf16>, tensor<2x6x2x8xf32> -> tensor<2x4x4x8xf32>
  return %0 : tensor<2x4x4x8xf32>
}

// -----

// The value must share the query's element type.
func.func @sdpa_value_element_type(%q: tensor<2x4x4x8xf32>, %k: tensor<2x6x2x8xf32>, %v: tensor<2x6x2x8xbf16>) -> tensor<2x4x4x8xf32> {
  // expected-error @+1 {{expects value to have element type 'f32' (the element type of query), got 'bf16'}}
  %0 = transformer.sdpa %q, %k, %v : tensor<2x4x4x8xf32>, tensor<2x6x2x8xf32>, tensor<2x6x2x8xbf16> -> tensor<2x4x4x8xf32>
  return %0 : tensor<2x4x4x8xf32>
}

// -----

// The result must share the query's element type.
func.func @sdpa_result_element_type(%q: tensor<2x4x4x8xf32>, %k: tensor<2x6x2x8xf32>, %v: tensor<2x6x2x8xf32>) -> tensor<2x4x4x8xf16> {
  // expected-error @+1 {{expects result to have element type 'f32' (the element type of query), got 'f16'}}
  %0 = transformer.sdpa %q, %k, %v : tensor<2x4x4x8xf32>, tensor<2x6x2x8xf32>, tensor<2x6x2x8xf32> -> tensor<2x4x4x8xf16>
  return %0 : tensor<2x4x4x8xf16>
}

// -----

// The query head count must be static.
func.func @sdpa_dynamic_query_heads(%q: tensor<2x4x?x8xf32>, %k: tensor<2x6x2x8xf32>, %v: tensor<2x6x2x8xf32>) -> tensor<2x4x?x8xf32> {
  // expected-error @+1 {{expects static head counts and head dimension in query and key}}
  %0 = transformer.sdpa %q, %k, %v : tensor<2x4x?x8xf32>, tensor<2x6x2x8xf32>, tensor<2x6x2x8xf32> -> tensor<2x4x?x8xf32>
  return %0 : tensor<2x4x?x8xf32>
}

// -----

// The key head count must be static.
func.func @sdpa_dynamic_kv_heads(%q: tensor<2x4x4x8xf32>, %k: tensor<2x6x?x8xf32>, %v: tensor<2x6x?x8xf32>) -> tensor<2x4x4x8xf32> {
  // expected-error @+1 {{expects static head counts and head dimension in query and key}}
  %0 = transformer.sdpa %q, %k, %v : tensor<2x4x4x8xf32>, tensor<2x6x?x8xf32>, tensor<2x6x?x8xf32> -> tensor<2x4x4x8xf32>
  return %0 : tensor<2x4x4x8xf32>
}

// -----

// The query head dimension must be static.
func.func @sdpa_dynamic_head_dim(%q: tensor<2x4x4x?xf32>, %k: tensor<2x6x2x8xf32>, %v: tensor<2x6x2x8xf32>) -> tensor<2x4x4x8xf32> {
  // expected-error @+1 {{expects static head counts and head dimension in query and key}}
  %0 = transformer.sdpa %q, %k, %v : tensor<2x4x4x?xf32>, tensor<2x6x2x8xf32>, tensor<2x6x2x8xf32> -> tensor<2x4x4x8xf32>
  return %0 : tensor<2x4x4x8xf32>
}

// -----

// The value must have the key's sequence length.
func.func @sdpa_value_length(%q: tensor<2x4x4x8xf32>, %k: tensor<2x6x2x8xf32>, %v: tensor<2x5x2x8xf32>) -> tensor<2x4x4x8xf32> {
  // expected-error @+1 {{expects value to have shape [2, 6, 2, 8], got [2, 5, 2, 8]}}
  %0 = transformer.sdpa %q, %k, %v : tensor<2x4x4x8xf32>, tensor<2x6x2x8xf32>, tensor<2x5x2x8xf32> -> tensor<2x4x4x8xf32>
  return %0 : tensor<2x4x4x8xf32>
}

// -----

// The value must have the key's kv head count.
func.func @sdpa_value_heads(%q: tensor<2x4x4x8xf32>, %k: tensor<2x6x2x8xf32>, %v: tensor<2x6x4x8xf32>) -> tensor<2x4x4x8xf32> {
  // expected-error @+1 {{expects value to have shape [2, 6, 2, 8], got [2, 6, 4, 8]}}
  %0 = transformer.sdpa %q, %k, %v : tensor<2x4x4x8xf32>, tensor<2x6x2x8xf32>, tensor<2x6x4x8xf32> -> tensor<2x4x4x8xf32>
  return %0 : tensor<2x4x4x8xf32>
}

// -----

// The key must have the query's batch.
func.func @sdpa_key_batch(%q: tensor<2x4x4x8xf32>, %k: tensor<3x6x2x8xf32>, %v: tensor<3x6x2x8xf32>) -> tensor<2x4x4x8xf32> {
  // expected-error @+1 {{expects key to have shape [2, 6, 2, 8], got [3, 6, 2, 8]}}
  %0 = transformer.sdpa %q, %k, %v : tensor<2x4x4x8xf32>, tensor<3x6x2x8xf32>, tensor<3x6x2x8xf32> -> tensor<2x4x4x8xf32>
  return %0 : tensor<2x4x4x8xf32>
}

// -----

// The key must have the query's head dimension.
func.func @sdpa_key_head_dim(%q: tensor<2x4x4x8xf32>, %k: tensor<2x6x2x4xf32>, %v: tensor<2x6x2x8xf32>) -> tensor<2x4x4x8xf32> {
  // expected-error @+1 {{expects key to have shape [2, 6, 2, 8], got [2, 6, 2, 4]}}
  %0 = transformer.sdpa %q, %k, %v : tensor<2x4x4x8xf32>, tensor<2x6x2x4xf32>, tensor<2x6x2x8xf32> -> tensor<2x4x4x8xf32>
  return %0 : tensor<2x4x4x8xf32>
}

// -----

// The kv head count must divide the query head count.
func.func @sdpa_kv_heads_divide(%q: tensor<2x4x4x8xf32>, %k: tensor<2x6x3x8xf32>, %v: tensor<2x6x3x8xf32>) -> tensor<2x4x4x8xf32> {
  // expected-error @+1 {{expects the number of kv heads (3) to divide the number of query heads (4)}}
  %0 = transformer.sdpa %q, %k, %v : tensor<2x4x4x8xf32>, tensor<2x6x3x8xf32>, tensor<2x6x3x8xf32> -> tensor<2x4x4x8xf32>
  return %0 : tensor<2x4x4x8xf32>
}

// -----

// The result is [B, T, H, D_v]: a wrong T is rejected.
func.func @sdpa_result_length(%q: tensor<2x4x4x8xf32>, %k: tensor<2x6x2x8xf32>, %v: tensor<2x6x2x8xf32>) -> tensor<2x6x4x8xf32> {
  // expected-error @+1 {{expects result to have shape [2, 4, 4, 8], got [2, 6, 4, 8]}}
  %0 = transformer.sdpa %q, %k, %v : tensor<2x4x4x8xf32>, tensor<2x6x2x8xf32>, tensor<2x6x2x8xf32> -> tensor<2x6x4x8xf32>
  return %0 : tensor<2x6x4x8xf32>
}

// -----

// The result head dim follows the value, not the query.
func.func @sdpa_result_value_dim(%q: tensor<2x4x4x8xf32>, %k: tensor<2x6x2x8xf32>, %v: tensor<2x6x2x16xf32>) -> tensor<2x4x4x8xf32> {
  // expected-error @+1 {{expects result to have shape [2, 4, 4, 16], got [2, 4, 4, 8]}}
  %0 = transformer.sdpa %q, %k, %v : tensor<2x4x4x8xf32>, tensor<2x6x2x8xf32>, tensor<2x6x2x16xf32> -> tensor<2x4x4x8xf32>
  return %0 : tensor<2x4x4x8xf32>
}

// -----

// scale must be > 0.
func.func @sdpa_scale_negative(%q: tensor<2x4x4x8xf32>, %k: tensor<2x6x2x8xf32>, %v: tensor<2x6x2x8xf32>) -> tensor<2x4x4x8xf32> {
  // expected-error @+1 {{expects a finite scale > 0, got -5.000000e-01}}
  %0 = transformer.sdpa %q, %k, %v {scale = -0.5 : f64} : tensor<2x4x4x8xf32>, tensor<2x6x2x8xf32>, tensor<2x6x2x8xf32> -> tensor<2x4x4x8xf32>
  return %0 : tensor<2x4x4x8xf32>
}

// -----

// ODS: sdpa works on [B, T, H, D] tensors.
func.func @sdpa_ods_rank(%q: tensor<2x4x32xf32>, %k: tensor<2x6x2x8xf32>, %v: tensor<2x6x2x8xf32>) -> tensor<2x4x4x8xf32> {
  // expected-error @+1 {{operand #0 must be 4D tensor of 32-bit float or 16-bit float or bfloat16 type values, but got 'tensor<2x4x32xf32>'}}
  %0 = transformer.sdpa %q, %k, %v : tensor<2x4x32xf32>, tensor<2x6x2x8xf32>, tensor<2x6x2x8xf32> -> tensor<2x4x4x8xf32>
  return %0 : tensor<2x4x4x8xf32>
}

// -----

//===----------------------------------------------------------------------===//
// activation and residual_add
//===----------------------------------------------------------------------===//

// ODS: activations are float tensors.
func.func @activation_ods_integer(%x: tensor<4xi32>) -> tensor<4xi32> {
  // expected-error @+1 {{operand #0 must be ranked tensor of 32-bit float or 16-bit float or bfloat16 type values, but got 'tensor<4xi32>'}}
  %0 = transformer.activation <silu> %x : tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

// ODS (generic form): the result type is the input type.
func.func @activation_ods_result_type(%x: tensor<4xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{failed to verify that all of {input, result} have same type}}
  %0 = "transformer.activation"(%x) <{kind = #transformer.activation<silu>}> : (tensor<4xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

// ODS (generic form): residual and update have the same type.
func.func @residual_add_ods_same_type(%x: tensor<4xf32>, %u: tensor<4xf16>) -> tensor<4xf32> {
  // expected-error @+1 {{requires the same type for all operands and results}}
  %0 = "transformer.residual_add"(%x, %u) : (tensor<4xf32>, tensor<4xf16>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

//===----------------------------------------------------------------------===//
// ffn
//===----------------------------------------------------------------------===//

// Every weight must share the input's element type.
func.func @ffn_w_down_element_type(%x: tensor<2x4x16xf32>, %w_gate: tensor<32x16xf32>, %w_up: tensor<32x16xf32>, %w_down: tensor<16x32xf16>) -> tensor<2x4x16xf32> {
  // expected-error @+1 {{expects w_down to have element type 'f32' (the element type of input), got 'f16'}}
  %0 = transformer.ffn %x gate(%w_gate : tensor<32x16xf32>) up(%w_up : tensor<32x16xf32>) down(%w_down : tensor<16x32xf16>) : tensor<2x4x16xf32>
  return %0 : tensor<2x4x16xf32>
}

// -----

// The model dimension (last input dim) must be static.
func.func @ffn_dynamic_model_dim(%x: tensor<2x4x?xf32>, %w_gate: tensor<32x16xf32>, %w_up: tensor<32x16xf32>, %w_down: tensor<16x32xf32>) -> tensor<2x4x?xf32> {
  // expected-error @+1 {{expects a static model dimension (the last dimension of input)}}
  %0 = transformer.ffn %x gate(%w_gate : tensor<32x16xf32>) up(%w_up : tensor<32x16xf32>) down(%w_down : tensor<16x32xf32>) : tensor<2x4x?xf32>
  return %0 : tensor<2x4x?xf32>
}

// -----

// d_ff is taken from w_up, which must then be rank 2.
func.func @ffn_w_up_rank(%x: tensor<2x4x16xf32>, %w_up: tensor<32xf32>, %w_down: tensor<16x32xf32>) -> tensor<2x4x16xf32> {
  // expected-error @+1 {{expects w_up to have shape [d_ff, 16], got [32]}}
  %0 = transformer.ffn %x up(%w_up : tensor<32xf32>) down(%w_down : tensor<16x32xf32>) : tensor<2x4x16xf32>
  return %0 : tensor<2x4x16xf32>
}

// -----

// A gate bias without a gate weight is meaningless.
func.func @ffn_b_gate_without_w_gate(%x: tensor<2x4x16xf32>, %b_gate: tensor<32xf32>, %w_up: tensor<32x16xf32>, %w_down: tensor<16x32xf32>) -> tensor<2x4x16xf32> {
  // expected-error @+1 {{expects b_gate only together with w_gate}}
  %0 = transformer.ffn %x gate_bias(%b_gate : tensor<32xf32>) up(%w_up : tensor<32x16xf32>) down(%w_down : tensor<16x32xf32>) : tensor<2x4x16xf32>
  return %0 : tensor<2x4x16xf32>
}

// -----

// w_gate is [d_ff, d] with d_ff from w_up.
func.func @ffn_w_gate_shape(%x: tensor<2x4x16xf32>, %w_gate: tensor<64x16xf32>, %w_up: tensor<32x16xf32>, %w_down: tensor<16x32xf32>) -> tensor<2x4x16xf32> {
  // expected-error @+1 {{expects w_gate to have shape [32, 16], got [64, 16]}}
  %0 = transformer.ffn %x gate(%w_gate : tensor<64x16xf32>) up(%w_up : tensor<32x16xf32>) down(%w_down : tensor<16x32xf32>) : tensor<2x4x16xf32>
  return %0 : tensor<2x4x16xf32>
}

// -----

// b_gate is [d_ff].
func.func @ffn_b_gate_shape(%x: tensor<2x4x16xf32>, %w_gate: tensor<32x16xf32>, %b_gate: tensor<16xf32>, %w_up: tensor<32x16xf32>, %w_down: tensor<16x32xf32>) -> tensor<2x4x16xf32> {
  // expected-error @+1 {{expects b_gate to have shape [32], got [16]}}
  %0 = transformer.ffn %x gate(%w_gate : tensor<32x16xf32>) gate_bias(%b_gate : tensor<16xf32>) up(%w_up : tensor<32x16xf32>) down(%w_down : tensor<16x32xf32>) : tensor<2x4x16xf32>
  return %0 : tensor<2x4x16xf32>
}

// -----

// w_up is [d_ff, d]: its `in` dimension must be d.
func.func @ffn_w_up_shape(%x: tensor<2x4x16xf32>, %w_gate: tensor<32x16xf32>, %w_up: tensor<32x8xf32>, %w_down: tensor<16x32xf32>) -> tensor<2x4x16xf32> {
  // expected-error @+1 {{expects w_up to have shape [32, 16], got [32, 8]}}
  %0 = transformer.ffn %x gate(%w_gate : tensor<32x16xf32>) up(%w_up : tensor<32x8xf32>) down(%w_down : tensor<16x32xf32>) : tensor<2x4x16xf32>
  return %0 : tensor<2x4x16xf32>
}

// -----

// b_up is [d_ff].
func.func @ffn_b_up_shape(%x: tensor<2x4x16xf32>, %w_gate: tensor<32x16xf32>, %w_up: tensor<32x16xf32>, %b_up: tensor<64xf32>, %w_down: tensor<16x32xf32>) -> tensor<2x4x16xf32> {
  // expected-error @+1 {{expects b_up to have shape [32], got [64]}}
  %0 = transformer.ffn %x gate(%w_gate : tensor<32x16xf32>) up(%w_up : tensor<32x16xf32>) up_bias(%b_up : tensor<64xf32>) down(%w_down : tensor<16x32xf32>) : tensor<2x4x16xf32>
  return %0 : tensor<2x4x16xf32>
}

// -----

// w_down is [d, d_ff] (a transposed down weight is caught).
func.func @ffn_w_down_shape(%x: tensor<2x4x16xf32>, %w_gate: tensor<32x16xf32>, %w_up: tensor<32x16xf32>, %w_down: tensor<32x16xf32>) -> tensor<2x4x16xf32> {
  // expected-error @+1 {{expects w_down to have shape [16, 32], got [32, 16]}}
  %0 = transformer.ffn %x gate(%w_gate : tensor<32x16xf32>) up(%w_up : tensor<32x16xf32>) down(%w_down : tensor<32x16xf32>) : tensor<2x4x16xf32>
  return %0 : tensor<2x4x16xf32>
}

// -----

// b_down is [d].
func.func @ffn_b_down_shape(%x: tensor<2x4x16xf32>, %w_gate: tensor<32x16xf32>, %w_up: tensor<32x16xf32>, %w_down: tensor<16x32xf32>, %b_down: tensor<32xf32>) -> tensor<2x4x16xf32> {
  // expected-error @+1 {{expects b_down to have shape [16], got [32]}}
  %0 = transformer.ffn %x gate(%w_gate : tensor<32x16xf32>) up(%w_up : tensor<32x16xf32>) down(%w_down : tensor<16x32xf32>) down_bias(%b_down : tensor<32xf32>) : tensor<2x4x16xf32>
  return %0 : tensor<2x4x16xf32>
}

// -----

// ODS: weights must be statically shaped.
func.func @ffn_ods_dynamic_weight(%x: tensor<2x4x16xf32>, %w_gate: tensor<32x16xf32>, %w_up: tensor<?x16xf32>, %w_down: tensor<16x32xf32>) -> tensor<2x4x16xf32> {
  // expected-error @+1 {{operand #2 must be statically shaped tensor of 32-bit float or 16-bit float or bfloat16 type values, but got 'tensor<?x16xf32>'}}
  %0 = transformer.ffn %x gate(%w_gate : tensor<32x16xf32>) up(%w_up : tensor<?x16xf32>) down(%w_down : tensor<16x32xf32>) : tensor<2x4x16xf32>
  return %0 : tensor<2x4x16xf32>
}

// -----

// ODS: composite activations are [B, T, d].
func.func @ffn_ods_rank(%x: tensor<8x16xf32>, %w_gate: tensor<32x16xf32>, %w_up: tensor<32x16xf32>, %w_down: tensor<16x32xf32>) -> tensor<8x16xf32> {
  // expected-error @+1 {{operand #0 must be 3D tensor of 32-bit float or 16-bit float or bfloat16 type values, but got 'tensor<8x16xf32>'}}
  %0 = transformer.ffn %x gate(%w_gate : tensor<32x16xf32>) up(%w_up : tensor<32x16xf32>) down(%w_down : tensor<16x32xf32>) : tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

//===----------------------------------------------------------------------===//
// attention
//===----------------------------------------------------------------------===//

// Every weight must share the input's element type.
func.func @attention_b_k_element_type(%x: tensor<2x4x16xf32>, %w_q: tensor<16x16xf32>, %w_k: tensor<8x16xf32>, %b_k: tensor<8xbf16>, %w_v: tensor<8x16xf32>, %w_o: tensor<16x16xf32>) -> tensor<2x4x16xf32> {
  // expected-error @+1 {{expects b_k to have element type 'f32' (the element type of input), got 'bf16'}}
  %0 = transformer.attention %x q(%w_q : tensor<16x16xf32>) k(%w_k : tensor<8x16xf32>) k_bias(%b_k : tensor<8xbf16>) v(%w_v : tensor<8x16xf32>) o(%w_o : tensor<16x16xf32>) {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 4 : i64} : tensor<2x4x16xf32>
  return %0 : tensor<2x4x16xf32>
}

// -----

// The model dimension must be static.
func.func @attention_dynamic_model_dim(%x: tensor<2x4x?xf32>, %w_q: tensor<16x16xf32>, %w_k: tensor<8x16xf32>, %w_v: tensor<8x16xf32>, %w_o: tensor<16x16xf32>) -> tensor<2x4x?xf32> {
  // expected-error @+1 {{expects a static model dimension (the last dimension of input)}}
  %0 = transformer.attention %x q(%w_q : tensor<16x16xf32>) k(%w_k : tensor<8x16xf32>) v(%w_v : tensor<8x16xf32>) o(%w_o : tensor<16x16xf32>) {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 4 : i64} : tensor<2x4x?xf32>
  return %0 : tensor<2x4x?xf32>
}

// -----

// rope_theta must be > 0.
func.func @attention_rope_theta_zero(%x: tensor<2x4x16xf32>, %w_q: tensor<16x16xf32>, %w_k: tensor<8x16xf32>, %w_v: tensor<8x16xf32>, %w_o: tensor<16x16xf32>) -> tensor<2x4x16xf32> {
  // expected-error @+1 {{expects a finite rope_theta > 0, got 0.000000e+00}}
  %0 = transformer.attention %x q(%w_q : tensor<16x16xf32>) k(%w_k : tensor<8x16xf32>) v(%w_v : tensor<8x16xf32>) o(%w_o : tensor<16x16xf32>) {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 4 : i64, rope = #transformer.rope<rotate_half>, rope_theta = 0.0 : f64} : tensor<2x4x16xf32>
  return %0 : tensor<2x4x16xf32>
}

// -----

// scale must be > 0.
func.func @attention_scale_negative(%x: tensor<2x4x16xf32>, %w_q: tensor<16x16xf32>, %w_k: tensor<8x16xf32>, %w_v: tensor<8x16xf32>, %w_o: tensor<16x16xf32>) -> tensor<2x4x16xf32> {
  // expected-error @+1 {{expects a finite scale > 0, got -1.000000e+00}}
  %0 = transformer.attention %x q(%w_q : tensor<16x16xf32>) k(%w_k : tensor<8x16xf32>) v(%w_v : tensor<8x16xf32>) o(%w_o : tensor<16x16xf32>) {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 4 : i64, scale = -1.0 : f64} : tensor<2x4x16xf32>
  return %0 : tensor<2x4x16xf32>
}

// -----

// num_kv_heads must divide num_heads.
func.func @attention_kv_heads_divide(%x: tensor<2x4x16xf32>, %w_q: tensor<16x16xf32>, %w_k: tensor<8x16xf32>, %w_v: tensor<8x16xf32>, %w_o: tensor<16x16xf32>) -> tensor<2x4x16xf32> {
  // expected-error @+1 {{expects num_kv_heads (3) to divide num_heads (4)}}
  %0 = transformer.attention %x q(%w_q : tensor<16x16xf32>) k(%w_k : tensor<8x16xf32>) v(%w_v : tensor<8x16xf32>) o(%w_o : tensor<16x16xf32>) {num_heads = 4 : i64, num_kv_heads = 3 : i64, head_dim = 4 : i64} : tensor<2x4x16xf32>
  return %0 : tensor<2x4x16xf32>
}

// -----

// RoPE rotates pairs, so head_dim must be even when rope is set.
func.func @attention_odd_head_dim_rope(%x: tensor<2x4x16xf32>, %w_q: tensor<16x16xf32>, %w_k: tensor<8x16xf32>, %w_v: tensor<8x16xf32>, %w_o: tensor<16x16xf32>) -> tensor<2x4x16xf32> {
  // expected-error @+1 {{expects an even head_dim when RoPE is applied, got 3}}
  %0 = transformer.attention %x q(%w_q : tensor<16x16xf32>) k(%w_k : tensor<8x16xf32>) v(%w_v : tensor<8x16xf32>) o(%w_o : tensor<16x16xf32>) {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 3 : i64, rope = #transformer.rope<interleaved>} : tensor<2x4x16xf32>
  return %0 : tensor<2x4x16xf32>
}

// -----

// w_q is [H*D, d].
func.func @attention_w_q_shape(%x: tensor<2x4x16xf32>, %w_q: tensor<8x16xf32>, %w_k: tensor<8x16xf32>, %w_v: tensor<8x16xf32>, %w_o: tensor<16x16xf32>) -> tensor<2x4x16xf32> {
  // expected-error @+1 {{expects w_q to have shape [16, 16], got [8, 16]}}
  %0 = transformer.attention %x q(%w_q : tensor<8x16xf32>) k(%w_k : tensor<8x16xf32>) v(%w_v : tensor<8x16xf32>) o(%w_o : tensor<16x16xf32>) {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 4 : i64} : tensor<2x4x16xf32>
  return %0 : tensor<2x4x16xf32>
}

// -----

// b_q is [H*D].
func.func @attention_b_q_shape(%x: tensor<2x4x16xf32>, %w_q: tensor<16x16xf32>, %b_q: tensor<8xf32>, %w_k: tensor<8x16xf32>, %w_v: tensor<8x16xf32>, %w_o: tensor<16x16xf32>) -> tensor<2x4x16xf32> {
  // expected-error @+1 {{expects b_q to have shape [16], got [8]}}
  %0 = transformer.attention %x q(%w_q : tensor<16x16xf32>) q_bias(%b_q : tensor<8xf32>) k(%w_k : tensor<8x16xf32>) v(%w_v : tensor<8x16xf32>) o(%w_o : tensor<16x16xf32>) {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 4 : i64} : tensor<2x4x16xf32>
  return %0 : tensor<2x4x16xf32>
}

// -----

// w_k is [H_kv*D, d]: a w_k sized for MHA is rejected under GQA.
func.func @attention_w_k_shape(%x: tensor<2x4x16xf32>, %w_q: tensor<16x16xf32>, %w_k: tensor<16x16xf32>, %w_v: tensor<8x16xf32>, %w_o: tensor<16x16xf32>) -> tensor<2x4x16xf32> {
  // expected-error @+1 {{expects w_k to have shape [8, 16], got [16, 16]}}
  %0 = transformer.attention %x q(%w_q : tensor<16x16xf32>) k(%w_k : tensor<16x16xf32>) v(%w_v : tensor<8x16xf32>) o(%w_o : tensor<16x16xf32>) {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 4 : i64} : tensor<2x4x16xf32>
  return %0 : tensor<2x4x16xf32>
}

// -----

// b_k is [H_kv*D].
func.func @attention_b_k_shape(%x: tensor<2x4x16xf32>, %w_q: tensor<16x16xf32>, %w_k: tensor<8x16xf32>, %b_k: tensor<16xf32>, %w_v: tensor<8x16xf32>, %w_o: tensor<16x16xf32>) -> tensor<2x4x16xf32> {
  // expected-error @+1 {{expects b_k to have shape [8], got [16]}}
  %0 = transformer.attention %x q(%w_q : tensor<16x16xf32>) k(%w_k : tensor<8x16xf32>) k_bias(%b_k : tensor<16xf32>) v(%w_v : tensor<8x16xf32>) o(%w_o : tensor<16x16xf32>) {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 4 : i64} : tensor<2x4x16xf32>
  return %0 : tensor<2x4x16xf32>
}

// -----

// w_v is [H_kv*D, d].
func.func @attention_w_v_shape(%x: tensor<2x4x16xf32>, %w_q: tensor<16x16xf32>, %w_k: tensor<8x16xf32>, %w_v: tensor<8x8xf32>, %w_o: tensor<16x16xf32>) -> tensor<2x4x16xf32> {
  // expected-error @+1 {{expects w_v to have shape [8, 16], got [8, 8]}}
  %0 = transformer.attention %x q(%w_q : tensor<16x16xf32>) k(%w_k : tensor<8x16xf32>) v(%w_v : tensor<8x8xf32>) o(%w_o : tensor<16x16xf32>) {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 4 : i64} : tensor<2x4x16xf32>
  return %0 : tensor<2x4x16xf32>
}

// -----

// b_v is [H_kv*D].
func.func @attention_b_v_shape(%x: tensor<2x4x16xf32>, %w_q: tensor<16x16xf32>, %w_k: tensor<8x16xf32>, %w_v: tensor<8x16xf32>, %b_v: tensor<4xf32>, %w_o: tensor<16x16xf32>) -> tensor<2x4x16xf32> {
  // expected-error @+1 {{expects b_v to have shape [8], got [4]}}
  %0 = transformer.attention %x q(%w_q : tensor<16x16xf32>) k(%w_k : tensor<8x16xf32>) v(%w_v : tensor<8x16xf32>) v_bias(%b_v : tensor<4xf32>) o(%w_o : tensor<16x16xf32>) {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 4 : i64} : tensor<2x4x16xf32>
  return %0 : tensor<2x4x16xf32>
}

// -----

// w_o is [d, H*D].
func.func @attention_w_o_shape(%x: tensor<2x4x16xf32>, %w_q: tensor<16x16xf32>, %w_k: tensor<8x16xf32>, %w_v: tensor<8x16xf32>, %w_o: tensor<16x8xf32>) -> tensor<2x4x16xf32> {
  // expected-error @+1 {{expects w_o to have shape [16, 16], got [16, 8]}}
  %0 = transformer.attention %x q(%w_q : tensor<16x16xf32>) k(%w_k : tensor<8x16xf32>) v(%w_v : tensor<8x16xf32>) o(%w_o : tensor<16x8xf32>) {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 4 : i64} : tensor<2x4x16xf32>
  return %0 : tensor<2x4x16xf32>
}

// -----

// b_o is [d].
func.func @attention_b_o_shape(%x: tensor<2x4x16xf32>, %w_q: tensor<16x16xf32>, %w_k: tensor<8x16xf32>, %w_v: tensor<8x16xf32>, %w_o: tensor<16x16xf32>, %b_o: tensor<8xf32>) -> tensor<2x4x16xf32> {
  // expected-error @+1 {{expects b_o to have shape [16], got [8]}}
  %0 = transformer.attention %x q(%w_q : tensor<16x16xf32>) k(%w_k : tensor<8x16xf32>) v(%w_v : tensor<8x16xf32>) o(%w_o : tensor<16x16xf32>) o_bias(%b_o : tensor<8xf32>) {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 4 : i64} : tensor<2x4x16xf32>
  return %0 : tensor<2x4x16xf32>
}

// -----

// ODS: num_heads is IntPositive.
func.func @attention_ods_num_heads(%x: tensor<2x4x16xf32>, %w_q: tensor<16x16xf32>, %w_k: tensor<8x16xf32>, %w_v: tensor<8x16xf32>, %w_o: tensor<16x16xf32>) -> tensor<2x4x16xf32> {
  // expected-error @+1 {{attribute 'num_heads' failed to satisfy constraint: 64-bit signless integer attribute whose value is positive}}
  %0 = transformer.attention %x q(%w_q : tensor<16x16xf32>) k(%w_k : tensor<8x16xf32>) v(%w_v : tensor<8x16xf32>) o(%w_o : tensor<16x16xf32>) {num_heads = 0 : i64, num_kv_heads = 2 : i64, head_dim = 4 : i64} : tensor<2x4x16xf32>
  return %0 : tensor<2x4x16xf32>
}

// -----

// ODS: weights must be statically shaped.
func.func @attention_ods_dynamic_weight(%x: tensor<2x4x16xf32>, %w_q: tensor<16x?xf32>, %w_k: tensor<8x16xf32>, %w_v: tensor<8x16xf32>, %w_o: tensor<16x16xf32>) -> tensor<2x4x16xf32> {
  // expected-error @+1 {{operand #1 must be statically shaped tensor of 32-bit float or 16-bit float or bfloat16 type values, but got 'tensor<16x?xf32>'}}
  %0 = transformer.attention %x q(%w_q : tensor<16x?xf32>) k(%w_k : tensor<8x16xf32>) v(%w_v : tensor<8x16xf32>) o(%w_o : tensor<16x16xf32>) {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 4 : i64} : tensor<2x4x16xf32>
  return %0 : tensor<2x4x16xf32>
}

// -----

// ODS: composite activations are [B, T, d].
func.func @attention_ods_rank(%x: tensor<1x2x4x16xf32>, %w_q: tensor<16x16xf32>, %w_k: tensor<8x16xf32>, %w_v: tensor<8x16xf32>, %w_o: tensor<16x16xf32>) -> tensor<1x2x4x16xf32> {
  // expected-error @+1 {{operand #0 must be 3D tensor of 32-bit float or 16-bit float or bfloat16 type values, but got 'tensor<1x2x4x16xf32>'}}
  %0 = transformer.attention %x q(%w_q : tensor<16x16xf32>) k(%w_k : tensor<8x16xf32>) v(%w_v : tensor<8x16xf32>) o(%w_o : tensor<16x16xf32>) {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 4 : i64} : tensor<1x2x4x16xf32>
  return %0 : tensor<1x2x4x16xf32>
}

// -----

//===----------------------------------------------------------------------===//
// block
//===----------------------------------------------------------------------===//

// Every operand must share the input's element type (checked in operand
// order: attn_norm is the first mismatch here).
func.func @block_attn_norm_element_type(%x: tensor<2x4x16xbf16>, %attn_norm: tensor<16xf32>, %w_q: tensor<16x16xf32>, %w_k: tensor<8x16xf32>, %w_v: tensor<8x16xf32>, %w_o: tensor<16x16xf32>, %ffn_norm: tensor<16xf32>, %w_gate: tensor<32x16xf32>, %w_up: tensor<32x16xf32>, %w_down: tensor<16x32xf32>) -> tensor<2x4x16xbf16> {
  // expected-error @+1 {{expects attn_norm to have element type 'bf16' (the element type of input), got 'f32'}}
  %0 = transformer.block %x attn_norm(%attn_norm : tensor<16xf32>) q(%w_q : tensor<16x16xf32>) k(%w_k : tensor<8x16xf32>) v(%w_v : tensor<8x16xf32>) o(%w_o : tensor<16x16xf32>) ffn_norm(%ffn_norm : tensor<16xf32>) gate(%w_gate : tensor<32x16xf32>) up(%w_up : tensor<32x16xf32>) down(%w_down : tensor<16x32xf32>) {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 4 : i64, d_ff = 32 : i64} : tensor<2x4x16xbf16>
  return %0 : tensor<2x4x16xbf16>
}

// -----

// A mismatch in the FFN half is named too.
func.func @block_w_gate_element_type(%x: tensor<2x4x16xf32>, %attn_norm: tensor<16xf32>, %w_q: tensor<16x16xf32>, %w_k: tensor<8x16xf32>, %w_v: tensor<8x16xf32>, %w_o: tensor<16x16xf32>, %ffn_norm: tensor<16xf32>, %w_gate: tensor<32x16xf16>, %w_up: tensor<32x16xf32>, %w_down: tensor<16x32xf32>) -> tensor<2x4x16xf32> {
  // expected-error @+1 {{expects w_gate to have element type 'f32' (the element type of input), got 'f16'}}
  %0 = transformer.block %x attn_norm(%attn_norm : tensor<16xf32>) q(%w_q : tensor<16x16xf32>) k(%w_k : tensor<8x16xf32>) v(%w_v : tensor<8x16xf32>) o(%w_o : tensor<16x16xf32>) ffn_norm(%ffn_norm : tensor<16xf32>) gate(%w_gate : tensor<32x16xf16>) up(%w_up : tensor<32x16xf32>) down(%w_down : tensor<16x32xf32>) {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 4 : i64, d_ff = 32 : i64} : tensor<2x4x16xf32>
  return %0 : tensor<2x4x16xf32>
}

// -----

// The model dimension must be static.
func.func @block_dynamic_model_dim(%x: tensor<2x4x?xf32>, %attn_norm: tensor<16xf32>, %w_q: tensor<16x16xf32>, %w_k: tensor<8x16xf32>, %w_v: tensor<8x16xf32>, %w_o: tensor<16x16xf32>, %ffn_norm: tensor<16xf32>, %w_gate: tensor<32x16xf32>, %w_up: tensor<32x16xf32>, %w_down: tensor<16x32xf32>) -> tensor<2x4x?xf32> {
  // expected-error @+1 {{expects a static model dimension (the last dimension of input)}}
  %0 = transformer.block %x attn_norm(%attn_norm : tensor<16xf32>) q(%w_q : tensor<16x16xf32>) k(%w_k : tensor<8x16xf32>) v(%w_v : tensor<8x16xf32>) o(%w_o : tensor<16x16xf32>) ffn_norm(%ffn_norm : tensor<16xf32>) gate(%w_gate : tensor<32x16xf32>) up(%w_up : tensor<32x16xf32>) down(%w_down : tensor<16x32xf32>) {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 4 : i64, d_ff = 32 : i64} : tensor<2x4x?xf32>
  return %0 : tensor<2x4x?xf32>
}

// -----

// epsilon must be > 0.
func.func @block_epsilon_zero(%x: tensor<2x4x16xf32>, %attn_norm: tensor<16xf32>, %w_q: tensor<16x16xf32>, %w_k: tensor<8x16xf32>, %w_v: tensor<8x16xf32>, %w_o: tensor<16x16xf32>, %ffn_norm: tensor<16xf32>, %w_gate: tensor<32x16xf32>, %w_up: tensor<32x16xf32>, %w_down: tensor<16x32xf32>) -> tensor<2x4x16xf32> {
  // expected-error @+1 {{expects a finite epsilon > 0, got 0.000000e+00}}
  %0 = transformer.block %x attn_norm(%attn_norm : tensor<16xf32>) q(%w_q : tensor<16x16xf32>) k(%w_k : tensor<8x16xf32>) v(%w_v : tensor<8x16xf32>) o(%w_o : tensor<16x16xf32>) ffn_norm(%ffn_norm : tensor<16xf32>) gate(%w_gate : tensor<32x16xf32>) up(%w_up : tensor<32x16xf32>) down(%w_down : tensor<16x32xf32>) {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 4 : i64, d_ff = 32 : i64, epsilon = 0.0 : f64} : tensor<2x4x16xf32>
  return %0 : tensor<2x4x16xf32>
}

// -----

// rope_theta must be > 0.
func.func @block_rope_theta_negative(%x: tensor<2x4x16xf32>, %attn_norm: tensor<16xf32>, %w_q: tensor<16x16xf32>, %w_k: tensor<8x16xf32>, %w_v: tensor<8x16xf32>, %w_o: tensor<16x16xf32>, %ffn_norm: tensor<16xf32>, %w_gate: tensor<32x16xf32>, %w_up: tensor<32x16xf32>, %w_down: tensor<16x32xf32>) -> tensor<2x4x16xf32> {
  // expected-error @+1 {{expects a finite rope_theta > 0, got -1.000000e+04}}
  %0 = transformer.block %x attn_norm(%attn_norm : tensor<16xf32>) q(%w_q : tensor<16x16xf32>) k(%w_k : tensor<8x16xf32>) v(%w_v : tensor<8x16xf32>) o(%w_o : tensor<16x16xf32>) ffn_norm(%ffn_norm : tensor<16xf32>) gate(%w_gate : tensor<32x16xf32>) up(%w_up : tensor<32x16xf32>) down(%w_down : tensor<16x32xf32>) {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 4 : i64, d_ff = 32 : i64, rope = #transformer.rope<rotate_half>, rope_theta = -1.0e4 : f64} : tensor<2x4x16xf32>
  return %0 : tensor<2x4x16xf32>
}

// -----

// norm = layer needs the attention norm bias.
func.func @block_layer_missing_attn_norm_bias(%x: tensor<2x4x16xf32>, %attn_norm: tensor<16xf32>, %w_q: tensor<16x16xf32>, %w_k: tensor<8x16xf32>, %w_v: tensor<8x16xf32>, %w_o: tensor<16x16xf32>, %ffn_norm: tensor<16xf32>, %ffn_norm_bias: tensor<16xf32>, %w_gate: tensor<32x16xf32>, %w_up: tensor<32x16xf32>, %w_down: tensor<16x32xf32>) -> tensor<2x4x16xf32> {
  // expected-error @+1 {{expects attn_norm_bias with norm = layer}}
  %0 = transformer.block %x attn_norm(%attn_norm : tensor<16xf32>) q(%w_q : tensor<16x16xf32>) k(%w_k : tensor<8x16xf32>) v(%w_v : tensor<8x16xf32>) o(%w_o : tensor<16x16xf32>) ffn_norm(%ffn_norm : tensor<16xf32>) ffn_norm_bias(%ffn_norm_bias : tensor<16xf32>) gate(%w_gate : tensor<32x16xf32>) up(%w_up : tensor<32x16xf32>) down(%w_down : tensor<16x32xf32>) {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 4 : i64, d_ff = 32 : i64, norm = #transformer.norm<layer>} : tensor<2x4x16xf32>
  return %0 : tensor<2x4x16xf32>
}

// -----

// norm = layer needs the FFN norm bias.
func.func @block_layer_missing_ffn_norm_bias(%x: tensor<2x4x16xf32>, %attn_norm: tensor<16xf32>, %attn_norm_bias: tensor<16xf32>, %w_q: tensor<16x16xf32>, %w_k: tensor<8x16xf32>, %w_v: tensor<8x16xf32>, %w_o: tensor<16x16xf32>, %ffn_norm: tensor<16xf32>, %w_gate: tensor<32x16xf32>, %w_up: tensor<32x16xf32>, %w_down: tensor<16x32xf32>) -> tensor<2x4x16xf32> {
  // expected-error @+1 {{expects ffn_norm_bias with norm = layer}}
  %0 = transformer.block %x attn_norm(%attn_norm : tensor<16xf32>) attn_norm_bias(%attn_norm_bias : tensor<16xf32>) q(%w_q : tensor<16x16xf32>) k(%w_k : tensor<8x16xf32>) v(%w_v : tensor<8x16xf32>) o(%w_o : tensor<16x16xf32>) ffn_norm(%ffn_norm : tensor<16xf32>) gate(%w_gate : tensor<32x16xf32>) up(%w_up : tensor<32x16xf32>) down(%w_down : tensor<16x32xf32>) {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 4 : i64, d_ff = 32 : i64, norm = #transformer.norm<layer>} : tensor<2x4x16xf32>
  return %0 : tensor<2x4x16xf32>
}

// -----

// RMSNorm (the default) takes no attention norm bias.
func.func @block_rms_unexpected_attn_norm_bias(%x: tensor<2x4x16xf32>, %attn_norm: tensor<16xf32>, %attn_norm_bias: tensor<16xf32>, %w_q: tensor<16x16xf32>, %w_k: tensor<8x16xf32>, %w_v: tensor<8x16xf32>, %w_o: tensor<16x16xf32>, %ffn_norm: tensor<16xf32>, %w_gate: tensor<32x16xf32>, %w_up: tensor<32x16xf32>, %w_down: tensor<16x32xf32>) -> tensor<2x4x16xf32> {
  // expected-error @+1 {{unexpected attn_norm_bias with norm = rms (RMSNorm has no bias)}}
  %0 = transformer.block %x attn_norm(%attn_norm : tensor<16xf32>) attn_norm_bias(%attn_norm_bias : tensor<16xf32>) q(%w_q : tensor<16x16xf32>) k(%w_k : tensor<8x16xf32>) v(%w_v : tensor<8x16xf32>) o(%w_o : tensor<16x16xf32>) ffn_norm(%ffn_norm : tensor<16xf32>) gate(%w_gate : tensor<32x16xf32>) up(%w_up : tensor<32x16xf32>) down(%w_down : tensor<16x32xf32>) {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 4 : i64, d_ff = 32 : i64} : tensor<2x4x16xf32>
  return %0 : tensor<2x4x16xf32>
}

// -----

// RMSNorm takes no FFN norm bias.
func.func @block_rms_unexpected_ffn_norm_bias(%x: tensor<2x4x16xf32>, %attn_norm: tensor<16xf32>, %w_q: tensor<16x16xf32>, %w_k: tensor<8x16xf32>, %w_v: tensor<8x16xf32>, %w_o: tensor<16x16xf32>, %ffn_norm: tensor<16xf32>, %ffn_norm_bias: tensor<16xf32>, %w_gate: tensor<32x16xf32>, %w_up: tensor<32x16xf32>, %w_down: tensor<16x32xf32>) -> tensor<2x4x16xf32> {
  // expected-error @+1 {{unexpected ffn_norm_bias with norm = rms (RMSNorm has no bias)}}
  %0 = transformer.block %x attn_norm(%attn_norm : tensor<16xf32>) q(%w_q : tensor<16x16xf32>) k(%w_k : tensor<8x16xf32>) v(%w_v : tensor<8x16xf32>) o(%w_o : tensor<16x16xf32>) ffn_norm(%ffn_norm : tensor<16xf32>) ffn_norm_bias(%ffn_norm_bias : tensor<16xf32>) gate(%w_gate : tensor<32x16xf32>) up(%w_up : tensor<32x16xf32>) down(%w_down : tensor<16x32xf32>) {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 4 : i64, d_ff = 32 : i64} : tensor<2x4x16xf32>
  return %0 : tensor<2x4x16xf32>
}

// -----

// attn_norm is [d].
func.func @block_attn_norm_shape(%x: tensor<2x4x16xf32>, %attn_norm: tensor<32xf32>, %w_q: tensor<16x16xf32>, %w_k: tensor<8x16xf32>, %w_v: tensor<8x16xf32>, %w_o: tensor<16x16xf32>, %ffn_norm: tensor<16xf32>, %w_gate: tensor<32x16xf32>, %w_up: tensor<32x16xf32>, %w_down: tensor<16x32xf32>) -> tensor<2x4x16xf32> {
  // expected-error @+1 {{expects attn_norm to have shape [16], got [32]}}
  %0 = transformer.block %x attn_norm(%attn_norm : tensor<32xf32>) q(%w_q : tensor<16x16xf32>) k(%w_k : tensor<8x16xf32>) v(%w_v : tensor<8x16xf32>) o(%w_o : tensor<16x16xf32>) ffn_norm(%ffn_norm : tensor<16xf32>) gate(%w_gate : tensor<32x16xf32>) up(%w_up : tensor<32x16xf32>) down(%w_down : tensor<16x32xf32>) {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 4 : i64, d_ff = 32 : i64} : tensor<2x4x16xf32>
  return %0 : tensor<2x4x16xf32>
}

// -----

// attn_norm_bias is [d].
func.func @block_attn_norm_bias_shape(%x: tensor<2x4x16xf32>, %attn_norm: tensor<16xf32>, %attn_norm_bias: tensor<8xf32>, %w_q: tensor<16x16xf32>, %w_k: tensor<8x16xf32>, %w_v: tensor<8x16xf32>, %w_o: tensor<16x16xf32>, %ffn_norm: tensor<16xf32>, %ffn_norm_bias: tensor<16xf32>, %w_gate: tensor<32x16xf32>, %w_up: tensor<32x16xf32>, %w_down: tensor<16x32xf32>) -> tensor<2x4x16xf32> {
  // expected-error @+1 {{expects attn_norm_bias to have shape [16], got [8]}}
  %0 = transformer.block %x attn_norm(%attn_norm : tensor<16xf32>) attn_norm_bias(%attn_norm_bias : tensor<8xf32>) q(%w_q : tensor<16x16xf32>) k(%w_k : tensor<8x16xf32>) v(%w_v : tensor<8x16xf32>) o(%w_o : tensor<16x16xf32>) ffn_norm(%ffn_norm : tensor<16xf32>) ffn_norm_bias(%ffn_norm_bias : tensor<16xf32>) gate(%w_gate : tensor<32x16xf32>) up(%w_up : tensor<32x16xf32>) down(%w_down : tensor<16x32xf32>) {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 4 : i64, d_ff = 32 : i64, norm = #transformer.norm<layer>} : tensor<2x4x16xf32>
  return %0 : tensor<2x4x16xf32>
}

// -----

// ffn_norm is [d].
func.func @block_ffn_norm_shape(%x: tensor<2x4x16xf32>, %attn_norm: tensor<16xf32>, %w_q: tensor<16x16xf32>, %w_k: tensor<8x16xf32>, %w_v: tensor<8x16xf32>, %w_o: tensor<16x16xf32>, %ffn_norm: tensor<32xf32>, %w_gate: tensor<32x16xf32>, %w_up: tensor<32x16xf32>, %w_down: tensor<16x32xf32>) -> tensor<2x4x16xf32> {
  // expected-error @+1 {{expects ffn_norm to have shape [16], got [32]}}
  %0 = transformer.block %x attn_norm(%attn_norm : tensor<16xf32>) q(%w_q : tensor<16x16xf32>) k(%w_k : tensor<8x16xf32>) v(%w_v : tensor<8x16xf32>) o(%w_o : tensor<16x16xf32>) ffn_norm(%ffn_norm : tensor<32xf32>) gate(%w_gate : tensor<32x16xf32>) up(%w_up : tensor<32x16xf32>) down(%w_down : tensor<16x32xf32>) {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 4 : i64, d_ff = 32 : i64} : tensor<2x4x16xf32>
  return %0 : tensor<2x4x16xf32>
}

// -----

// ffn_norm_bias is [d].
func.func @block_ffn_norm_bias_shape(%x: tensor<2x4x16xf32>, %attn_norm: tensor<16xf32>, %attn_norm_bias: tensor<16xf32>, %w_q: tensor<16x16xf32>, %w_k: tensor<8x16xf32>, %w_v: tensor<8x16xf32>, %w_o: tensor<16x16xf32>, %ffn_norm: tensor<16xf32>, %ffn_norm_bias: tensor<8xf32>, %w_gate: tensor<32x16xf32>, %w_up: tensor<32x16xf32>, %w_down: tensor<16x32xf32>) -> tensor<2x4x16xf32> {
  // expected-error @+1 {{expects ffn_norm_bias to have shape [16], got [8]}}
  %0 = transformer.block %x attn_norm(%attn_norm : tensor<16xf32>) attn_norm_bias(%attn_norm_bias : tensor<16xf32>) q(%w_q : tensor<16x16xf32>) k(%w_k : tensor<8x16xf32>) v(%w_v : tensor<8x16xf32>) o(%w_o : tensor<16x16xf32>) ffn_norm(%ffn_norm : tensor<16xf32>) ffn_norm_bias(%ffn_norm_bias : tensor<8xf32>) gate(%w_gate : tensor<32x16xf32>) up(%w_up : tensor<32x16xf32>) down(%w_down : tensor<16x32xf32>) {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 4 : i64, d_ff = 32 : i64, norm = #transformer.norm<layer>} : tensor<2x4x16xf32>
  return %0 : tensor<2x4x16xf32>
}

// -----

// num_kv_heads must divide num_heads.
func.func @block_kv_heads_divide(%x: tensor<2x4x16xf32>, %attn_norm: tensor<16xf32>, %w_q: tensor<16x16xf32>, %w_k: tensor<8x16xf32>, %w_v: tensor<8x16xf32>, %w_o: tensor<16x16xf32>, %ffn_norm: tensor<16xf32>, %w_gate: tensor<32x16xf32>, %w_up: tensor<32x16xf32>, %w_down: tensor<16x32xf32>) -> tensor<2x4x16xf32> {
  // expected-error @+1 {{expects num_kv_heads (3) to divide num_heads (4)}}
  %0 = transformer.block %x attn_norm(%attn_norm : tensor<16xf32>) q(%w_q : tensor<16x16xf32>) k(%w_k : tensor<8x16xf32>) v(%w_v : tensor<8x16xf32>) o(%w_o : tensor<16x16xf32>) ffn_norm(%ffn_norm : tensor<16xf32>) gate(%w_gate : tensor<32x16xf32>) up(%w_up : tensor<32x16xf32>) down(%w_down : tensor<16x32xf32>) {num_heads = 4 : i64, num_kv_heads = 3 : i64, head_dim = 4 : i64, d_ff = 32 : i64} : tensor<2x4x16xf32>
  return %0 : tensor<2x4x16xf32>
}

// -----

// head_dim must be even when rope is set.
func.func @block_odd_head_dim_rope(%x: tensor<2x4x16xf32>, %attn_norm: tensor<16xf32>, %w_q: tensor<16x16xf32>, %w_k: tensor<8x16xf32>, %w_v: tensor<8x16xf32>, %w_o: tensor<16x16xf32>, %ffn_norm: tensor<16xf32>, %w_gate: tensor<32x16xf32>, %w_up: tensor<32x16xf32>, %w_down: tensor<16x32xf32>) -> tensor<2x4x16xf32> {
  // expected-error @+1 {{expects an even head_dim when RoPE is applied, got 5}}
  %0 = transformer.block %x attn_norm(%attn_norm : tensor<16xf32>) q(%w_q : tensor<16x16xf32>) k(%w_k : tensor<8x16xf32>) v(%w_v : tensor<8x16xf32>) o(%w_o : tensor<16x16xf32>) ffn_norm(%ffn_norm : tensor<16xf32>) gate(%w_gate : tensor<32x16xf32>) up(%w_up : tensor<32x16xf32>) down(%w_down : tensor<16x32xf32>) {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 5 : i64, d_ff = 32 : i64, rope = #transformer.rope<rotate_half>} : tensor<2x4x16xf32>
  return %0 : tensor<2x4x16xf32>
}

// -----

// w_q is [H*D, d].
func.func @block_w_q_shape(%x: tensor<2x4x16xf32>, %attn_norm: tensor<16xf32>, %w_q: tensor<16x8xf32>, %w_k: tensor<8x16xf32>, %w_v: tensor<8x16xf32>, %w_o: tensor<16x16xf32>, %ffn_norm: tensor<16xf32>, %w_gate: tensor<32x16xf32>, %w_up: tensor<32x16xf32>, %w_down: tensor<16x32xf32>) -> tensor<2x4x16xf32> {
  // expected-error @+1 {{expects w_q to have shape [16, 16], got [16, 8]}}
  %0 = transformer.block %x attn_norm(%attn_norm : tensor<16xf32>) q(%w_q : tensor<16x8xf32>) k(%w_k : tensor<8x16xf32>) v(%w_v : tensor<8x16xf32>) o(%w_o : tensor<16x16xf32>) ffn_norm(%ffn_norm : tensor<16xf32>) gate(%w_gate : tensor<32x16xf32>) up(%w_up : tensor<32x16xf32>) down(%w_down : tensor<16x32xf32>) {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 4 : i64, d_ff = 32 : i64} : tensor<2x4x16xf32>
  return %0 : tensor<2x4x16xf32>
}

// -----

// b_q is [H*D].
func.func @block_b_q_shape(%x: tensor<2x4x16xf32>, %attn_norm: tensor<16xf32>, %w_q: tensor<16x16xf32>, %b_q: tensor<8xf32>, %w_k: tensor<8x16xf32>, %w_v: tensor<8x16xf32>, %w_o: tensor<16x16xf32>, %ffn_norm: tensor<16xf32>, %w_gate: tensor<32x16xf32>, %w_up: tensor<32x16xf32>, %w_down: tensor<16x32xf32>) -> tensor<2x4x16xf32> {
  // expected-error @+1 {{expects b_q to have shape [16], got [8]}}
  %0 = transformer.block %x attn_norm(%attn_norm : tensor<16xf32>) q(%w_q : tensor<16x16xf32>) q_bias(%b_q : tensor<8xf32>) k(%w_k : tensor<8x16xf32>) v(%w_v : tensor<8x16xf32>) o(%w_o : tensor<16x16xf32>) ffn_norm(%ffn_norm : tensor<16xf32>) gate(%w_gate : tensor<32x16xf32>) up(%w_up : tensor<32x16xf32>) down(%w_down : tensor<16x32xf32>) {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 4 : i64, d_ff = 32 : i64} : tensor<2x4x16xf32>
  return %0 : tensor<2x4x16xf32>
}

// -----

// w_k is [H_kv*D, d].
func.func @block_w_k_shape(%x: tensor<2x4x16xf32>, %attn_norm: tensor<16xf32>, %w_q: tensor<16x16xf32>, %w_k: tensor<16x16xf32>, %w_v: tensor<8x16xf32>, %w_o: tensor<16x16xf32>, %ffn_norm: tensor<16xf32>, %w_gate: tensor<32x16xf32>, %w_up: tensor<32x16xf32>, %w_down: tensor<16x32xf32>) -> tensor<2x4x16xf32> {
  // expected-error @+1 {{expects w_k to have shape [8, 16], got [16, 16]}}
  %0 = transformer.block %x attn_norm(%attn_norm : tensor<16xf32>) q(%w_q : tensor<16x16xf32>) k(%w_k : tensor<16x16xf32>) v(%w_v : tensor<8x16xf32>) o(%w_o : tensor<16x16xf32>) ffn_norm(%ffn_norm : tensor<16xf32>) gate(%w_gate : tensor<32x16xf32>) up(%w_up : tensor<32x16xf32>) down(%w_down : tensor<16x32xf32>) {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 4 : i64, d_ff = 32 : i64} : tensor<2x4x16xf32>
  return %0 : tensor<2x4x16xf32>
}

// -----

// b_k is [H_kv*D].
func.func @block_b_k_shape(%x: tensor<2x4x16xf32>, %attn_norm: tensor<16xf32>, %w_q: tensor<16x16xf32>, %w_k: tensor<8x16xf32>, %b_k: tensor<16xf32>, %w_v: tensor<8x16xf32>, %w_o: tensor<16x16xf32>, %ffn_norm: tensor<16xf32>, %w_gate: tensor<32x16xf32>, %w_up: tensor<32x16xf32>, %w_down: tensor<16x32xf32>) -> tensor<2x4x16xf32> {
  // expected-error @+1 {{expects b_k to have shape [8], got [16]}}
  %0 = transformer.block %x attn_norm(%attn_norm : tensor<16xf32>) q(%w_q : tensor<16x16xf32>) k(%w_k : tensor<8x16xf32>) k_bias(%b_k : tensor<16xf32>) v(%w_v : tensor<8x16xf32>) o(%w_o : tensor<16x16xf32>) ffn_norm(%ffn_norm : tensor<16xf32>) gate(%w_gate : tensor<32x16xf32>) up(%w_up : tensor<32x16xf32>) down(%w_down : tensor<16x32xf32>) {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 4 : i64, d_ff = 32 : i64} : tensor<2x4x16xf32>
  return %0 : tensor<2x4x16xf32>
}

// -----

// w_v is [H_kv*D, d].
func.func @block_w_v_shape(%x: tensor<2x4x16xf32>, %attn_norm: tensor<16xf32>, %w_q: tensor<16x16xf32>, %w_k: tensor<8x16xf32>, %w_v: tensor<4x16xf32>, %w_o: tensor<16x16xf32>, %ffn_norm: tensor<16xf32>, %w_gate: tensor<32x16xf32>, %w_up: tensor<32x16xf32>, %w_down: tensor<16x32xf32>) -> tensor<2x4x16xf32> {
  // expected-error @+1 {{expects w_v to have shape [8, 16], got [4, 16]}}
  %0 = transformer.block %x attn_norm(%attn_norm : tensor<16xf32>) q(%w_q : tensor<16x16xf32>) k(%w_k : tensor<8x16xf32>) v(%w_v : tensor<4x16xf32>) o(%w_o : tensor<16x16xf32>) ffn_norm(%ffn_norm : tensor<16xf32>) gate(%w_gate : tensor<32x16xf32>) up(%w_up : tensor<32x16xf32>) down(%w_down : tensor<16x32xf32>) {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 4 : i64, d_ff = 32 : i64} : tensor<2x4x16xf32>
  return %0 : tensor<2x4x16xf32>
}

// -----

// b_v is [H_kv*D].
func.func @block_b_v_shape(%x: tensor<2x4x16xf32>, %attn_norm: tensor<16xf32>, %w_q: tensor<16x16xf32>, %w_k: tensor<8x16xf32>, %w_v: tensor<8x16xf32>, %b_v: tensor<16xf32>, %w_o: tensor<16x16xf32>, %ffn_norm: tensor<16xf32>, %w_gate: tensor<32x16xf32>, %w_up: tensor<32x16xf32>, %w_down: tensor<16x32xf32>) -> tensor<2x4x16xf32> {
  // expected-error @+1 {{expects b_v to have shape [8], got [16]}}
  %0 = transformer.block %x attn_norm(%attn_norm : tensor<16xf32>) q(%w_q : tensor<16x16xf32>) k(%w_k : tensor<8x16xf32>) v(%w_v : tensor<8x16xf32>) v_bias(%b_v : tensor<16xf32>) o(%w_o : tensor<16x16xf32>) ffn_norm(%ffn_norm : tensor<16xf32>) gate(%w_gate : tensor<32x16xf32>) up(%w_up : tensor<32x16xf32>) down(%w_down : tensor<16x32xf32>) {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 4 : i64, d_ff = 32 : i64} : tensor<2x4x16xf32>
  return %0 : tensor<2x4x16xf32>
}

// -----

// w_o is [d, H*D].
func.func @block_w_o_shape(%x: tensor<2x4x16xf32>, %attn_norm: tensor<16xf32>, %w_q: tensor<16x16xf32>, %w_k: tensor<8x16xf32>, %w_v: tensor<8x16xf32>, %w_o: tensor<8x16xf32>, %ffn_norm: tensor<16xf32>, %w_gate: tensor<32x16xf32>, %w_up: tensor<32x16xf32>, %w_down: tensor<16x32xf32>) -> tensor<2x4x16xf32> {
  // expected-error @+1 {{expects w_o to have shape [16, 16], got [8, 16]}}
  %0 = transformer.block %x attn_norm(%attn_norm : tensor<16xf32>) q(%w_q : tensor<16x16xf32>) k(%w_k : tensor<8x16xf32>) v(%w_v : tensor<8x16xf32>) o(%w_o : tensor<8x16xf32>) ffn_norm(%ffn_norm : tensor<16xf32>) gate(%w_gate : tensor<32x16xf32>) up(%w_up : tensor<32x16xf32>) down(%w_down : tensor<16x32xf32>) {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 4 : i64, d_ff = 32 : i64} : tensor<2x4x16xf32>
  return %0 : tensor<2x4x16xf32>
}

// -----

// b_o is [d].
func.func @block_b_o_shape(%x: tensor<2x4x16xf32>, %attn_norm: tensor<16xf32>, %w_q: tensor<16x16xf32>, %w_k: tensor<8x16xf32>, %w_v: tensor<8x16xf32>, %w_o: tensor<16x16xf32>, %b_o: tensor<32xf32>, %ffn_norm: tensor<16xf32>, %w_gate: tensor<32x16xf32>, %w_up: tensor<32x16xf32>, %w_down: tensor<16x32xf32>) -> tensor<2x4x16xf32> {
  // expected-error @+1 {{expects b_o to have shape [16], got [32]}}
  %0 = transformer.block %x attn_norm(%attn_norm : tensor<16xf32>) q(%w_q : tensor<16x16xf32>) k(%w_k : tensor<8x16xf32>) v(%w_v : tensor<8x16xf32>) o(%w_o : tensor<16x16xf32>) o_bias(%b_o : tensor<32xf32>) ffn_norm(%ffn_norm : tensor<16xf32>) gate(%w_gate : tensor<32x16xf32>) up(%w_up : tensor<32x16xf32>) down(%w_down : tensor<16x32xf32>) {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 4 : i64, d_ff = 32 : i64} : tensor<2x4x16xf32>
  return %0 : tensor<2x4x16xf32>
}

// -----

// A gate bias without a gate weight is rejected.
func.func @block_b_gate_without_w_gate(%x: tensor<2x4x16xf32>, %attn_norm: tensor<16xf32>, %w_q: tensor<16x16xf32>, %w_k: tensor<8x16xf32>, %w_v: tensor<8x16xf32>, %w_o: tensor<16x16xf32>, %ffn_norm: tensor<16xf32>, %b_gate: tensor<32xf32>, %w_up: tensor<32x16xf32>, %w_down: tensor<16x32xf32>) -> tensor<2x4x16xf32> {
  // expected-error @+1 {{expects b_gate only together with w_gate}}
  %0 = transformer.block %x attn_norm(%attn_norm : tensor<16xf32>) q(%w_q : tensor<16x16xf32>) k(%w_k : tensor<8x16xf32>) v(%w_v : tensor<8x16xf32>) o(%w_o : tensor<16x16xf32>) ffn_norm(%ffn_norm : tensor<16xf32>) gate_bias(%b_gate : tensor<32xf32>) up(%w_up : tensor<32x16xf32>) down(%w_down : tensor<16x32xf32>) {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 4 : i64, d_ff = 32 : i64} : tensor<2x4x16xf32>
  return %0 : tensor<2x4x16xf32>
}

// -----

// w_gate is [d_ff, d] with d_ff from the attribute.
func.func @block_w_gate_shape(%x: tensor<2x4x16xf32>, %attn_norm: tensor<16xf32>, %w_q: tensor<16x16xf32>, %w_k: tensor<8x16xf32>, %w_v: tensor<8x16xf32>, %w_o: tensor<16x16xf32>, %ffn_norm: tensor<16xf32>, %w_gate: tensor<32x8xf32>, %w_up: tensor<32x16xf32>, %w_down: tensor<16x32xf32>) -> tensor<2x4x16xf32> {
  // expected-error @+1 {{expects w_gate to have shape [32, 16], got [32, 8]}}
  %0 = transformer.block %x attn_norm(%attn_norm : tensor<16xf32>) q(%w_q : tensor<16x16xf32>) k(%w_k : tensor<8x16xf32>) v(%w_v : tensor<8x16xf32>) o(%w_o : tensor<16x16xf32>) ffn_norm(%ffn_norm : tensor<16xf32>) gate(%w_gate : tensor<32x8xf32>) up(%w_up : tensor<32x16xf32>) down(%w_down : tensor<16x32xf32>) {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 4 : i64, d_ff = 32 : i64} : tensor<2x4x16xf32>
  return %0 : tensor<2x4x16xf32>
}

// -----

// b_gate is [d_ff].
func.func @block_b_gate_shape(%x: tensor<2x4x16xf32>, %attn_norm: tensor<16xf32>, %w_q: tensor<16x16xf32>, %w_k: tensor<8x16xf32>, %w_v: tensor<8x16xf32>, %w_o: tensor<16x16xf32>, %ffn_norm: tensor<16xf32>, %w_gate: tensor<32x16xf32>, %b_gate: tensor<16xf32>, %w_up: tensor<32x16xf32>, %w_down: tensor<16x32xf32>) -> tensor<2x4x16xf32> {
  // expected-error @+1 {{expects b_gate to have shape [32], got [16]}}
  %0 = transformer.block %x attn_norm(%attn_norm : tensor<16xf32>) q(%w_q : tensor<16x16xf32>) k(%w_k : tensor<8x16xf32>) v(%w_v : tensor<8x16xf32>) o(%w_o : tensor<16x16xf32>) ffn_norm(%ffn_norm : tensor<16xf32>) gate(%w_gate : tensor<32x16xf32>) gate_bias(%b_gate : tensor<16xf32>) up(%w_up : tensor<32x16xf32>) down(%w_down : tensor<16x32xf32>) {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 4 : i64, d_ff = 32 : i64} : tensor<2x4x16xf32>
  return %0 : tensor<2x4x16xf32>
}

// -----

// w_up must agree with the d_ff attribute (plain FFN, d_ff = 64).
func.func @block_w_up_shape(%x: tensor<2x4x16xf32>, %attn_norm: tensor<16xf32>, %w_q: tensor<16x16xf32>, %w_k: tensor<8x16xf32>, %w_v: tensor<8x16xf32>, %w_o: tensor<16x16xf32>, %ffn_norm: tensor<16xf32>, %w_up: tensor<32x16xf32>, %w_down: tensor<16x64xf32>) -> tensor<2x4x16xf32> {
  // expected-error @+1 {{expects w_up to have shape [64, 16], got [32, 16]}}
  %0 = transformer.block %x attn_norm(%attn_norm : tensor<16xf32>) q(%w_q : tensor<16x16xf32>) k(%w_k : tensor<8x16xf32>) v(%w_v : tensor<8x16xf32>) o(%w_o : tensor<16x16xf32>) ffn_norm(%ffn_norm : tensor<16xf32>) up(%w_up : tensor<32x16xf32>) down(%w_down : tensor<16x64xf32>) {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 4 : i64, d_ff = 64 : i64} : tensor<2x4x16xf32>
  return %0 : tensor<2x4x16xf32>
}

// -----

// b_up is [d_ff].
func.func @block_b_up_shape(%x: tensor<2x4x16xf32>, %attn_norm: tensor<16xf32>, %w_q: tensor<16x16xf32>, %w_k: tensor<8x16xf32>, %w_v: tensor<8x16xf32>, %w_o: tensor<16x16xf32>, %ffn_norm: tensor<16xf32>, %w_gate: tensor<32x16xf32>, %w_up: tensor<32x16xf32>, %b_up: tensor<16xf32>, %w_down: tensor<16x32xf32>) -> tensor<2x4x16xf32> {
  // expected-error @+1 {{expects b_up to have shape [32], got [16]}}
  %0 = transformer.block %x attn_norm(%attn_norm : tensor<16xf32>) q(%w_q : tensor<16x16xf32>) k(%w_k : tensor<8x16xf32>) v(%w_v : tensor<8x16xf32>) o(%w_o : tensor<16x16xf32>) ffn_norm(%ffn_norm : tensor<16xf32>) gate(%w_gate : tensor<32x16xf32>) up(%w_up : tensor<32x16xf32>) up_bias(%b_up : tensor<16xf32>) down(%w_down : tensor<16x32xf32>) {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 4 : i64, d_ff = 32 : i64} : tensor<2x4x16xf32>
  return %0 : tensor<2x4x16xf32>
}

// -----

// w_down is [d, d_ff].
func.func @block_w_down_shape(%x: tensor<2x4x16xf32>, %attn_norm: tensor<16xf32>, %w_q: tensor<16x16xf32>, %w_k: tensor<8x16xf32>, %w_v: tensor<8x16xf32>, %w_o: tensor<16x16xf32>, %ffn_norm: tensor<16xf32>, %w_gate: tensor<32x16xf32>, %w_up: tensor<32x16xf32>, %w_down: tensor<32x16xf32>) -> tensor<2x4x16xf32> {
  // expected-error @+1 {{expects w_down to have shape [16, 32], got [32, 16]}}
  %0 = transformer.block %x attn_norm(%attn_norm : tensor<16xf32>) q(%w_q : tensor<16x16xf32>) k(%w_k : tensor<8x16xf32>) v(%w_v : tensor<8x16xf32>) o(%w_o : tensor<16x16xf32>) ffn_norm(%ffn_norm : tensor<16xf32>) gate(%w_gate : tensor<32x16xf32>) up(%w_up : tensor<32x16xf32>) down(%w_down : tensor<32x16xf32>) {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 4 : i64, d_ff = 32 : i64} : tensor<2x4x16xf32>
  return %0 : tensor<2x4x16xf32>
}

// -----

// b_down is [d].
func.func @block_b_down_shape(%x: tensor<2x4x16xf32>, %attn_norm: tensor<16xf32>, %w_q: tensor<16x16xf32>, %w_k: tensor<8x16xf32>, %w_v: tensor<8x16xf32>, %w_o: tensor<16x16xf32>, %ffn_norm: tensor<16xf32>, %w_gate: tensor<32x16xf32>, %w_up: tensor<32x16xf32>, %w_down: tensor<16x32xf32>, %b_down: tensor<32xf32>) -> tensor<2x4x16xf32> {
  // expected-error @+1 {{expects b_down to have shape [16], got [32]}}
  %0 = transformer.block %x attn_norm(%attn_norm : tensor<16xf32>) q(%w_q : tensor<16x16xf32>) k(%w_k : tensor<8x16xf32>) v(%w_v : tensor<8x16xf32>) o(%w_o : tensor<16x16xf32>) ffn_norm(%ffn_norm : tensor<16xf32>) gate(%w_gate : tensor<32x16xf32>) up(%w_up : tensor<32x16xf32>) down(%w_down : tensor<16x32xf32>) down_bias(%b_down : tensor<32xf32>) {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 4 : i64, d_ff = 32 : i64} : tensor<2x4x16xf32>
  return %0 : tensor<2x4x16xf32>
}

// -----

// ODS: d_ff is IntPositive.
func.func @block_ods_d_ff(%x: tensor<2x4x16xf32>, %attn_norm: tensor<16xf32>, %w_q: tensor<16x16xf32>, %w_k: tensor<8x16xf32>, %w_v: tensor<8x16xf32>, %w_o: tensor<16x16xf32>, %ffn_norm: tensor<16xf32>, %w_gate: tensor<32x16xf32>, %w_up: tensor<32x16xf32>, %w_down: tensor<16x32xf32>) -> tensor<2x4x16xf32> {
  // expected-error @+1 {{attribute 'd_ff' failed to satisfy constraint: 64-bit signless integer attribute whose value is positive}}
  %0 = transformer.block %x attn_norm(%attn_norm : tensor<16xf32>) q(%w_q : tensor<16x16xf32>) k(%w_k : tensor<8x16xf32>) v(%w_v : tensor<8x16xf32>) o(%w_o : tensor<16x16xf32>) ffn_norm(%ffn_norm : tensor<16xf32>) gate(%w_gate : tensor<32x16xf32>) up(%w_up : tensor<32x16xf32>) down(%w_down : tensor<16x32xf32>) {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 4 : i64, d_ff = 0 : i64} : tensor<2x4x16xf32>
  return %0 : tensor<2x4x16xf32>
}

// -----

// ODS: weights must be statically shaped.
func.func @block_ods_dynamic_weight(%x: tensor<2x4x16xf32>, %attn_norm: tensor<16xf32>, %w_q: tensor<16x16xf32>, %w_k: tensor<8x16xf32>, %w_v: tensor<8x16xf32>, %w_o: tensor<16x16xf32>, %ffn_norm: tensor<16xf32>, %w_gate: tensor<32x16xf32>, %w_up: tensor<32x16xf32>, %w_down: tensor<16x?xf32>) -> tensor<2x4x16xf32> {
  // expected-error @+1 {{operand #9 must be statically shaped tensor of 32-bit float or 16-bit float or bfloat16 type values, but got 'tensor<16x?xf32>'}}
  %0 = transformer.block %x attn_norm(%attn_norm : tensor<16xf32>) q(%w_q : tensor<16x16xf32>) k(%w_k : tensor<8x16xf32>) v(%w_v : tensor<8x16xf32>) o(%w_o : tensor<16x16xf32>) ffn_norm(%ffn_norm : tensor<16xf32>) gate(%w_gate : tensor<32x16xf32>) up(%w_up : tensor<32x16xf32>) down(%w_down : tensor<16x?xf32>) {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 4 : i64, d_ff = 32 : i64} : tensor<2x4x16xf32>
  return %0 : tensor<2x4x16xf32>
}

// -----

// ODS: composite activations are [B, T, d].
func.func @block_ods_rank(%x: tensor<16xf32>, %attn_norm: tensor<16xf32>, %w_q: tensor<16x16xf32>, %w_k: tensor<8x16xf32>, %w_v: tensor<8x16xf32>, %w_o: tensor<16x16xf32>, %ffn_norm: tensor<16xf32>, %w_gate: tensor<32x16xf32>, %w_up: tensor<32x16xf32>, %w_down: tensor<16x32xf32>) -> tensor<16xf32> {
  // expected-error @+1 {{operand #0 must be 3D tensor of 32-bit float or 16-bit float or bfloat16 type values, but got 'tensor<16xf32>'}}
  %0 = transformer.block %x attn_norm(%attn_norm : tensor<16xf32>) q(%w_q : tensor<16x16xf32>) k(%w_k : tensor<8x16xf32>) v(%w_v : tensor<8x16xf32>) o(%w_o : tensor<16x16xf32>) ffn_norm(%ffn_norm : tensor<16xf32>) gate(%w_gate : tensor<32x16xf32>) up(%w_up : tensor<32x16xf32>) down(%w_down : tensor<16x32xf32>) {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 4 : i64, d_ff = 32 : i64} : tensor<16xf32>
  return %0 : tensor<16xf32>
}

// -----

// An empty key (zero kv heads) is rejected instead of dividing by zero.
func.func @sdpa_zero_kv_heads(%q: tensor<1x4x2x8xf32>, %k: tensor<1x4x0x8xf32>) {
  // expected-error @+1 {{'transformer.sdpa' op expects at least one kv head, got 0}}
  %0 = transformer.sdpa %q, %k, %k : tensor<1x4x2x8xf32>, tensor<1x4x0x8xf32>, tensor<1x4x0x8xf32> -> tensor<1x4x2x8xf32>
  return
}

// -----

// A result more static than the operands is rejected (the lowering sizes the
// result from the operands).
func.func @linear_result_more_static(%x: tensor<?x4x16xf32>, %w: tensor<8x16xf32>) {
  // expected-error @+1 {{'transformer.linear' op expects result to have shape [?, 4, 8], got [2, 4, 8]}}
  %0 = transformer.linear %x, %w : tensor<?x4x16xf32>, tensor<8x16xf32> -> tensor<2x4x8xf32>
  return
}

// -----

func.func @sdpa_result_more_static(%q: tensor<1x4x2x8xf32>, %v: tensor<1x4x2x?xf32>) {
  // expected-error @+1 {{'transformer.sdpa' op expects result to have shape [1, 4, 2, ?], got [1, 4, 2, 8]}}
  %0 = transformer.sdpa %q, %q, %v : tensor<1x4x2x8xf32>, tensor<1x4x2x8xf32>, tensor<1x4x2x?xf32> -> tensor<1x4x2x8xf32>
  return
}

// -----

func.func @rope_empty_head(%x: tensor<1x2x3x0xf32>) {
  // expected-error @+1 {{'transformer.rope' op expects a non-empty head dimension}}
  %0 = transformer.rope %x : tensor<1x2x3x0xf32>
  return
}

// -----

func.func @rope_interleaved_odd_head(%x: tensor<1x2x3x5xf32>) {
  // expected-error @+1 {{'transformer.rope' op expects an even head dimension for interleaved RoPE, got 5}}
  %0 = transformer.rope %x {layout = #transformer.rope<interleaved>, rotary_dim = 4 : i64} : tensor<1x2x3x5xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// kv_cache_append
//===----------------------------------------------------------------------===//

// The new rows must share the cache's element type.
func.func @kv_cache_append_element_type(%k: tensor<2x1x2x8xf16>, %c: tensor<2x?x2x8xf32>, %p: index) -> tensor<2x?x2x8xf32> {
  // expected-error @+1 {{expects new_entries to have element type 'f32' (the element type of cache), got 'f16'}}
  %0 = transformer.kv_cache_append %k into %c at %p : tensor<2x1x2x8xf16> into tensor<2x?x2x8xf32>
  return %0 : tensor<2x?x2x8xf32>
}

// -----

// Batch, kv heads and head dim of the new rows must match the cache.
func.func @kv_cache_append_kv_heads(%k: tensor<2x1x4x8xf32>, %c: tensor<2x?x2x8xf32>, %p: index) -> tensor<2x?x2x8xf32> {
  // expected-error @+1 {{expects new_entries to have shape [2, 1, 2, 8], got [2, 1, 4, 8]}}
  %0 = transformer.kv_cache_append %k into %c at %p : tensor<2x1x4x8xf32> into tensor<2x?x2x8xf32>
  return %0 : tensor<2x?x2x8xf32>
}

// -----

func.func @kv_cache_append_batch(%k: tensor<3x1x2x8xf32>, %c: tensor<2x?x2x8xf32>, %p: index) -> tensor<2x?x2x8xf32> {
  // expected-error @+1 {{expects new_entries to have shape [2, 1, 2, 8], got [3, 1, 2, 8]}}
  %0 = transformer.kv_cache_append %k into %c at %p : tensor<3x1x2x8xf32> into tensor<2x?x2x8xf32>
  return %0 : tensor<2x?x2x8xf32>
}

// -----

// More new rows than the cache holds can never fit (a static overflow).
func.func @kv_cache_append_capacity(%k: tensor<2x9x2x8xf32>, %c: tensor<2x8x2x8xf32>, %p: index) -> tensor<2x8x2x8xf32> {
  // expected-error @+1 {{expects at most the cache capacity L_max = 8 new entries, got 9}}
  %0 = transformer.kv_cache_append %k into %c at %p : tensor<2x9x2x8xf32> into tensor<2x8x2x8xf32>
  return %0 : tensor<2x8x2x8xf32>
}

// -----

// The result is the updated cache: same type (ODS AllTypesMatch).
func.func @kv_cache_append_rank(%k: tensor<2x1x16xf32>, %c: tensor<2x?x2x8xf32>, %p: index) -> tensor<2x?x2x8xf32> {
  // expected-error @+1 {{operand #0 must be 4D tensor of 32-bit float or 16-bit float or bfloat16 type values}}
  %0 = "transformer.kv_cache_append"(%k, %c, %p) : (tensor<2x1x16xf32>, tensor<2x?x2x8xf32>, index) -> tensor<2x?x2x8xf32>
  return %0 : tensor<2x?x2x8xf32>
}

// -----

func.func @kv_cache_append_result_type(%k: tensor<2x1x2x8xf32>, %c: tensor<2x?x2x8xf32>, %p: index) -> tensor<2x8x2x8xf32> {
  // expected-error @+1 {{failed to verify that all of {cache, result} have same type}}
  %0 = "transformer.kv_cache_append"(%k, %c, %p) : (tensor<2x1x2x8xf32>, tensor<2x?x2x8xf32>, index) -> tensor<2x8x2x8xf32>
  return %0 : tensor<2x8x2x8xf32>
}

//===----------------------------------------------------------------------===//
// embedding
//===----------------------------------------------------------------------===//

// The table is [vocab, d].
func.func @embedding_table_rank(%ids: tensor<2x5xi32>, %t: tensor<300xf32>) -> tensor<2x5x64xf32> {
  // expected-error @+1 {{expects table to be a rank-2 [vocab, d] tensor, got rank 1}}
  %0 = transformer.embedding %ids, %t : tensor<2x5xi32>, tensor<300xf32> -> tensor<2x5x64xf32>
  return %0 : tensor<2x5x64xf32>
}

// -----

// The position table shares the token table's element type.
func.func @embedding_positions_element_type(%ids: tensor<2x5xi32>, %t: tensor<300x64xf32>, %p: tensor<128x64xbf16>) -> tensor<2x5x64xf32> {
  // expected-error @+1 {{expects positions to have element type 'f32' (the element type of table), got 'bf16'}}
  %0 = transformer.embedding %ids, %t positions(%p : tensor<128x64xbf16>) : tensor<2x5xi32>, tensor<300x64xf32> -> tensor<2x5x64xf32>
  return %0 : tensor<2x5x64xf32>
}

// -----

// A position row has the table's row size.
func.func @embedding_positions_shape(%ids: tensor<2x5xi32>, %t: tensor<300x64xf32>, %p: tensor<128x32xf32>) -> tensor<2x5x64xf32> {
  // expected-error @+1 {{expects positions to have shape [max_positions, 64] (the table's row size), got [128, 32]}}
  %0 = transformer.embedding %ids, %t positions(%p : tensor<128x32xf32>) : tensor<2x5xi32>, tensor<300x64xf32> -> tensor<2x5x64xf32>
  return %0 : tensor<2x5x64xf32>
}

// -----

// An offset moves positions in the position table; without one it means
// nothing.
func.func @embedding_offset_without_positions(%ids: tensor<2x5xi32>, %t: tensor<300x64xf32>, %pos: index) -> tensor<2x5x64xf32> {
  // expected-error @+1 {{has a position offset but no position table}}
  %0 = transformer.embedding %ids, %t offset %pos : tensor<2x5xi32>, tensor<300x64xf32> -> tensor<2x5x64xf32>
  return %0 : tensor<2x5x64xf32>
}

// -----

// The rows are copied: the result has the table's element type.
func.func @embedding_result_element_type(%ids: tensor<2x5xi32>, %t: tensor<300x64xbf16>) -> tensor<2x5x64xf32> {
  // expected-error @+1 {{expects the result to have the table's element type 'bf16', got 'f32'}}
  %0 = transformer.embedding %ids, %t : tensor<2x5xi32>, tensor<300x64xbf16> -> tensor<2x5x64xf32>
  return %0 : tensor<2x5x64xf32>
}

// -----

// The result is [B, T, d]: B and T from the ids, d from the table.
func.func @embedding_result_shape(%ids: tensor<2x5xi32>, %t: tensor<300x64xf32>) -> tensor<2x?x64xf32> {
  // expected-error @+1 {{expects result to have shape [2, 5, 64], got [2, ?, 64]}}
  %0 = transformer.embedding %ids, %t : tensor<2x5xi32>, tensor<300x64xf32> -> tensor<2x?x64xf32>
  return %0 : tensor<2x?x64xf32>
}

// -----

// Token ids are i32.
func.func @embedding_ids_type(%ids: tensor<2x5xi64>, %t: tensor<300x64xf32>) -> tensor<2x5x64xf32> {
  // expected-error @+1 {{operand #0 must be 2D tensor of 32-bit signless integer values}}
  %0 = transformer.embedding %ids, %t : tensor<2x5xi64>, tensor<300x64xf32> -> tensor<2x5x64xf32>
  return %0 : tensor<2x5x64xf32>
}

// -----

//===----------------------------------------------------------------------===//
// Ragged batches: per-token positions, token_positions, paged K/V pools
//===----------------------------------------------------------------------===//

func.func @token_positions_sizes(%cu: tensor<3xi32>, %sp: tensor<3xi32>) -> tensor<?xi32> {
  // expected-error @+1 {{expects cu_seqlens to have one more element than seq_positions (B + 1 and B), got 3 and 3}}
  %0 = transformer.token_positions %cu, %sp : tensor<3xi32>, tensor<3xi32> -> tensor<?xi32>
  return %0 : tensor<?xi32>
}

// -----

func.func @rope_positions_and_offset(%x: tensor<1x?x4x8xf32>, %p: tensor<?xi32>, %o: index) -> tensor<1x?x4x8xf32> {
  // expected-error @+1 {{has both a position offset and positions}}
  %0 = transformer.rope %x offset %o positions(%p : tensor<?xi32>) : tensor<1x?x4x8xf32>
  return %0 : tensor<1x?x4x8xf32>
}

// -----

func.func @rope_positions_batch(%x: tensor<2x?x4x8xf32>, %p: tensor<?xi32>) -> tensor<2x?x4x8xf32> {
  // expected-error @+1 {{expects batch size 1 with positions, got 2}}
  %0 = transformer.rope %x positions(%p : tensor<?xi32>) : tensor<2x?x4x8xf32>
  return %0 : tensor<2x?x4x8xf32>
}

// -----

func.func @rope_positions_count(%x: tensor<1x4x4x8xf32>, %p: tensor<3xi32>) -> tensor<1x4x4x8xf32> {
  // expected-error @+1 {{expects positions to have one element per token (4), got 3}}
  %0 = transformer.rope %x positions(%p : tensor<3xi32>) : tensor<1x4x4x8xf32>
  return %0 : tensor<1x4x4x8xf32>
}

// -----

func.func @embedding_token_positions_no_table(%ids: tensor<1x?xi32>, %wte: tensor<300x64xf32>, %p: tensor<?xi32>) -> tensor<1x?x64xf32> {
  // expected-error @+1 {{has per-token positions but no position table}}
  %0 = transformer.embedding %ids, %wte token_positions(%p : tensor<?xi32>) : tensor<1x?xi32>, tensor<300x64xf32> -> tensor<1x?x64xf32>
  return %0 : tensor<1x?x64xf32>
}

// -----

func.func @embedding_token_positions_and_offset(%ids: tensor<1x?xi32>, %wte: tensor<300x64xf32>, %wpe: tensor<128x64xf32>, %p: tensor<?xi32>, %o: index) -> tensor<1x?x64xf32> {
  // expected-error @+1 {{has both a position offset and token_positions}}
  %0 = transformer.embedding %ids, %wte positions(%wpe : tensor<128x64xf32>) offset %o token_positions(%p : tensor<?xi32>) : tensor<1x?xi32>, tensor<300x64xf32> -> tensor<1x?x64xf32>
  return %0 : tensor<1x?x64xf32>
}

// -----

func.func @embedding_token_positions_batch(%ids: tensor<2x?xi32>, %wte: tensor<300x64xf32>, %wpe: tensor<128x64xf32>, %p: tensor<?xi32>) -> tensor<2x?x64xf32> {
  // expected-error @+1 {{expects batch size 1 with token_positions, got 2}}
  %0 = transformer.embedding %ids, %wte positions(%wpe : tensor<128x64xf32>) token_positions(%p : tensor<?xi32>) : tensor<2x?xi32>, tensor<300x64xf32> -> tensor<2x?x64xf32>
  return %0 : tensor<2x?x64xf32>
}

// -----

func.func @embedding_token_positions_count(%ids: tensor<1x5xi32>, %wte: tensor<300x64xf32>, %wpe: tensor<128x64xf32>, %p: tensor<4xi32>) -> tensor<1x5x64xf32> {
  // expected-error @+1 {{expects token_positions to have one element per token (5), got 4}}
  %0 = transformer.embedding %ids, %wte positions(%wpe : tensor<128x64xf32>) token_positions(%p : tensor<4xi32>) : tensor<1x5xi32>, tensor<300x64xf32> -> tensor<1x5x64xf32>
  return %0 : tensor<1x5x64xf32>
}

// -----

func.func @paged_kv_write_element_type(%k: tensor<1x?x2x8xf32>, %kp: tensor<?x16x2x8xbf16>, %bt: tensor<?x?xi32>, %cu: tensor<?xi32>, %sp: tensor<?xi32>) -> tensor<?x16x2x8xbf16> {
  // expected-error @+1 {{expects new_entries to have element type 'bf16' (the element type of pool), got 'f32'}}
  %0 = transformer.paged_kv_write %k into %kp, %bt, %cu, %sp : tensor<1x?x2x8xf32> into tensor<?x16x2x8xbf16>, tensor<?x?xi32>, tensor<?xi32>, tensor<?xi32>
  return %0 : tensor<?x16x2x8xbf16>
}

// -----

func.func @paged_kv_write_page_size(%k: tensor<1x?x2x8xf32>, %kp: tensor<?x?x2x8xf32>, %bt: tensor<?x?xi32>, %cu: tensor<?xi32>, %sp: tensor<?xi32>) -> tensor<?x?x2x8xf32> {
  // expected-error @+1 {{expects pool to have a static page size, kv head count and head dimension, got [?, ?, 2, 8]}}
  %0 = transformer.paged_kv_write %k into %kp, %bt, %cu, %sp : tensor<1x?x2x8xf32> into tensor<?x?x2x8xf32>, tensor<?x?xi32>, tensor<?xi32>, tensor<?xi32>
  return %0 : tensor<?x?x2x8xf32>
}

// -----

func.func @paged_kv_write_batch(%k: tensor<2x?x2x8xf32>, %kp: tensor<?x16x2x8xf32>, %bt: tensor<?x?xi32>, %cu: tensor<?xi32>, %sp: tensor<?xi32>) -> tensor<?x16x2x8xf32> {
  // expected-error @+1 {{expects new_entries to have shape [1, ?, 2, 8], got [2, ?, 2, 8]}}
  %0 = transformer.paged_kv_write %k into %kp, %bt, %cu, %sp : tensor<2x?x2x8xf32> into tensor<?x16x2x8xf32>, tensor<?x?xi32>, tensor<?xi32>, tensor<?xi32>
  return %0 : tensor<?x16x2x8xf32>
}

// -----

func.func @paged_kv_write_block_table(%k: tensor<1x?x2x8xf32>, %kp: tensor<?x16x2x8xf32>, %bt: tensor<3x?xi32>, %cu: tensor<3xi32>, %sp: tensor<2xi32>) -> tensor<?x16x2x8xf32> {
  // expected-error @+1 {{expects one block_table row per sequence (2), got 3}}
  %0 = transformer.paged_kv_write %k into %kp, %bt, %cu, %sp : tensor<1x?x2x8xf32> into tensor<?x16x2x8xf32>, tensor<3x?xi32>, tensor<3xi32>, tensor<2xi32>
  return %0 : tensor<?x16x2x8xf32>
}

// -----

func.func @paged_kv_write_cu_seqlens(%k: tensor<1x?x2x8xf32>, %kp: tensor<?x16x2x8xf32>, %bt: tensor<?x?xi32>, %cu: tensor<2xi32>, %sp: tensor<2xi32>) -> tensor<?x16x2x8xf32> {
  // expected-error @+1 {{expects cu_seqlens to have one more element than seq_positions (B + 1 and B), got 2 and 2}}
  %0 = transformer.paged_kv_write %k into %kp, %bt, %cu, %sp : tensor<1x?x2x8xf32> into tensor<?x16x2x8xf32>, tensor<?x?xi32>, tensor<2xi32>, tensor<2xi32>
  return %0 : tensor<?x16x2x8xf32>
}

// -----

func.func @paged_kv_write_result(%k: tensor<1x?x2x8xf32>, %kp: tensor<?x16x2x8xf32>, %bt: tensor<?x?xi32>, %cu: tensor<?xi32>, %sp: tensor<?xi32>) -> tensor<4x16x2x8xf32> {
  // expected-error @+1 {{failed to verify that all of {pool, result} have same type}}
  %0 = "transformer.paged_kv_write"(%k, %kp, %bt, %cu, %sp) : (tensor<1x?x2x8xf32>, tensor<?x16x2x8xf32>, tensor<?x?xi32>, tensor<?xi32>, tensor<?xi32>) -> tensor<4x16x2x8xf32>
  return %0 : tensor<4x16x2x8xf32>
}

// -----

func.func @paged_sdpa_pool_types(%q: tensor<1x?x4x8xf32>, %kp: tensor<?x16x2x8xf32>, %vp: tensor<?x16x2x8xbf16>, %bt: tensor<?x?xi32>, %cu: tensor<?xi32>, %sp: tensor<?xi32>) -> tensor<1x?x4x8xf32> {
  // expected-error @+1 {{expects key_pool and value_pool to have the same type, got 'tensor<?x16x2x8xf32>' and 'tensor<?x16x2x8xbf16>'}}
  %0 = transformer.paged_sdpa %q, %kp, %vp, %bt, %cu, %sp : tensor<1x?x4x8xf32>, tensor<?x16x2x8xf32>, tensor<?x16x2x8xbf16>, tensor<?x?xi32>, tensor<?xi32>, tensor<?xi32> -> tensor<1x?x4x8xf32>
  return %0 : tensor<1x?x4x8xf32>
}

// -----

func.func @paged_sdpa_pool_shape(%q: tensor<1x?x4x8xf32>, %kp: tensor<?x16x?x8xf32>, %bt: tensor<?x?xi32>, %cu: tensor<?xi32>, %sp: tensor<?xi32>) -> tensor<1x?x4x8xf32> {
  // expected-error @+1 {{expects key_pool to have a static page size, kv head count and head dimension, got [?, 16, ?, 8]}}
  %0 = transformer.paged_sdpa %q, %kp, %kp, %bt, %cu, %sp : tensor<1x?x4x8xf32>, tensor<?x16x?x8xf32>, tensor<?x16x?x8xf32>, tensor<?x?xi32>, tensor<?xi32>, tensor<?xi32> -> tensor<1x?x4x8xf32>
  return %0 : tensor<1x?x4x8xf32>
}

// -----

func.func @paged_sdpa_query_heads(%q: tensor<1x?x?x8xf32>, %kp: tensor<?x16x2x8xf32>, %bt: tensor<?x?xi32>, %cu: tensor<?xi32>, %sp: tensor<?xi32>) -> tensor<1x?x?x8xf32> {
  // expected-error @+1 {{expects a static number of query heads}}
  %0 = transformer.paged_sdpa %q, %kp, %kp, %bt, %cu, %sp : tensor<1x?x?x8xf32>, tensor<?x16x2x8xf32>, tensor<?x16x2x8xf32>, tensor<?x?xi32>, tensor<?xi32>, tensor<?xi32> -> tensor<1x?x?x8xf32>
  return %0 : tensor<1x?x?x8xf32>
}

// -----

func.func @paged_sdpa_query_shape(%q: tensor<2x?x4x16xf32>, %kp: tensor<?x16x2x8xf32>, %bt: tensor<?x?xi32>, %cu: tensor<?xi32>, %sp: tensor<?xi32>) -> tensor<2x?x4x16xf32> {
  // expected-error @+1 {{expects query to have shape [1, ?, 4, 8], got [2, ?, 4, 16]}}
  %0 = transformer.paged_sdpa %q, %kp, %kp, %bt, %cu, %sp : tensor<2x?x4x16xf32>, tensor<?x16x2x8xf32>, tensor<?x16x2x8xf32>, tensor<?x?xi32>, tensor<?xi32>, tensor<?xi32> -> tensor<2x?x4x16xf32>
  return %0 : tensor<2x?x4x16xf32>
}

// -----

func.func @paged_sdpa_kv_heads(%q: tensor<1x?x4x8xf32>, %kp: tensor<?x16x3x8xf32>, %bt: tensor<?x?xi32>, %cu: tensor<?xi32>, %sp: tensor<?xi32>) -> tensor<1x?x4x8xf32> {
  // expected-error @+1 {{expects the number of kv heads (3) to divide the number of query heads (4)}}
  %0 = transformer.paged_sdpa %q, %kp, %kp, %bt, %cu, %sp : tensor<1x?x4x8xf32>, tensor<?x16x3x8xf32>, tensor<?x16x3x8xf32>, tensor<?x?xi32>, tensor<?xi32>, tensor<?xi32> -> tensor<1x?x4x8xf32>
  return %0 : tensor<1x?x4x8xf32>
}

// -----

func.func @paged_sdpa_block_table(%q: tensor<1x?x4x8xf32>, %kp: tensor<?x16x2x8xf32>, %bt: tensor<1x?xi32>, %cu: tensor<?xi32>, %sp: tensor<2xi32>) -> tensor<1x?x4x8xf32> {
  // expected-error @+1 {{expects one block_table row per sequence (2), got 1}}
  %0 = transformer.paged_sdpa %q, %kp, %kp, %bt, %cu, %sp : tensor<1x?x4x8xf32>, tensor<?x16x2x8xf32>, tensor<?x16x2x8xf32>, tensor<1x?xi32>, tensor<?xi32>, tensor<2xi32> -> tensor<1x?x4x8xf32>
  return %0 : tensor<1x?x4x8xf32>
}

// -----

func.func @paged_sdpa_scale(%q: tensor<1x?x4x8xf32>, %kp: tensor<?x16x2x8xf32>, %bt: tensor<?x?xi32>, %cu: tensor<?xi32>, %sp: tensor<?xi32>) -> tensor<1x?x4x8xf32> {
  // expected-error @+1 {{expects a finite scale > 0, got -1.000000e+00}}
  %0 = transformer.paged_sdpa %q, %kp, %kp, %bt, %cu, %sp {scale = -1.0 : f64} : tensor<1x?x4x8xf32>, tensor<?x16x2x8xf32>, tensor<?x16x2x8xf32>, tensor<?x?xi32>, tensor<?xi32>, tensor<?xi32> -> tensor<1x?x4x8xf32>
  return %0 : tensor<1x?x4x8xf32>
}

// -----

func.func @paged_sdpa_result(%q: tensor<1x?x4x8xf32>, %kp: tensor<?x16x2x8xf32>, %bt: tensor<?x?xi32>, %cu: tensor<?xi32>, %sp: tensor<?xi32>) -> tensor<1x?x4x8xbf16> {
  // expected-error @+1 {{failed to verify that all of {query, result} have same type}}
  %0 = "transformer.paged_sdpa"(%q, %kp, %kp, %bt, %cu, %sp) : (tensor<1x?x4x8xf32>, tensor<?x16x2x8xf32>, tensor<?x16x2x8xf32>, tensor<?x?xi32>, tensor<?xi32>, tensor<?xi32>) -> tensor<1x?x4x8xbf16>
  return %0 : tensor<1x?x4x8xbf16>
}
