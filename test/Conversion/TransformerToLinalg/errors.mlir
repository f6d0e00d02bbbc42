// RUN: blockc-opt %s -split-input-file --convert-transformer-to-linalg -verify-diagnostics

// The conversion rejects, at the offending op and before rewriting anything,
// what its patterns do not handle: composite ops (which must be decomposed
// first) and element types other than f32.

// A block left in the input is reported, not silently kept.
func.func @composite_block(%x: tensor<2x4x16xf32>, %g1: tensor<16xf32>, %wq: tensor<16x16xf32>, %g2: tensor<16xf32>, %wu: tensor<32x16xf32>, %wd: tensor<16x32xf32>) -> tensor<2x4x16xf32> {
  // expected-error @+1 {{'transformer.block' op is a composite op; run --transformer-decompose before --convert-transformer-to-linalg}}
  %0 = transformer.block %x attn_norm(%g1 : tensor<16xf32>) q(%wq : tensor<16x16xf32>) k(%wq : tensor<16x16xf32>) v(%wq : tensor<16x16xf32>) o(%wq : tensor<16x16xf32>) ffn_norm(%g2 : tensor<16xf32>) up(%wu : tensor<32x16xf32>) down(%wd : tensor<16x32xf32>) {num_heads = 4 : i64, num_kv_heads = 4 : i64, head_dim = 4 : i64, d_ff = 32 : i64} : tensor<2x4x16xf32>
  return %0 : tensor<2x4x16xf32>
}

// -----

// An attention sub-layer is a composite too.
func.func @composite_attention(%x: tensor<2x4x16xf32>, %w: tensor<16x16xf32>) -> tensor<2x4x16xf32> {
  // expected-error @+1 {{'transformer.attention' op is a composite op; run --transformer-decompose before --convert-transformer-to-linalg}}
  %0 = transformer.attention %x q(%w : tensor<16x16xf32>) k(%w : tensor<16x16xf32>) v(%w : tensor<16x16xf32>) o(%w : tensor<16x16xf32>) {num_heads = 4 : i64, num_kv_heads = 4 : i64, head_dim = 4 : i64} : tensor<2x4x16xf32>
  return %0 : tensor<2x4x16xf32>
}

// -----

// So is an FFN sub-layer; the f32 primitive before it does not hide it.
func.func @composite_ffn(%x: tensor<2x4x16xf32>, %g: tensor<16xf32>, %wu: tensor<32x16xf32>, %wd: tensor<16x32xf32>) -> tensor<2x4x16xf32> {
  %n = transformer.rms_norm %x, %g : tensor<2x4x16xf32>, tensor<16xf32>
  // expected-error @+1 {{'transformer.ffn' op is a composite op; run --transformer-decompose before --convert-transformer-to-linalg}}
  %0 = transformer.ffn %n up(%wu : tensor<32x16xf32>) down(%wd : tensor<16x32xf32>) : tensor<2x4x16xf32>
  return %0 : tensor<2x4x16xf32>
}

// -----

// f16 primitives compute in f32: transformer-compute-in-f32 rewrites them
// first (the pipelines run it).
func.func @f16_activation(%x: tensor<2x16xf16>) -> tensor<2x16xf16> {
  // expected-error @+1 {{'transformer.activation' op computes in 'f16': run --transformer-compute-in-f32 before --convert-transformer-to-linalg}}
  %0 = transformer.activation <relu> %x : tensor<2x16xf16>
  return %0 : tensor<2x16xf16>
}

// -----

// bf16 likewise, reported on the first op that computes in it.
func.func @bf16_linear(%x: tensor<2x16xbf16>, %w: tensor<8x16xbf16>) -> tensor<2x8xbf16> {
  // expected-error @+1 {{'transformer.linear' op computes in 'bf16': run --transformer-compute-in-f32 before --convert-transformer-to-linalg}}
  %0 = transformer.linear %x, %w : tensor<2x16xbf16>, tensor<8x16xbf16> -> tensor<2x8xbf16>
  return %0 : tensor<2x8xbf16>
}

// -----

// Paged attention is a kernel of the CPU pipeline (blockc-cpu-lower-sdpa):
// the generic conversion names it instead of failing to legalize it.
func.func @paged_sdpa(%q: tensor<1x?x4x8xf32>, %kp: tensor<?x16x2x8xf32>, %bt: tensor<?x?xi32>, %cu: tensor<?xi32>, %sp: tensor<?xi32>) -> tensor<1x?x4x8xf32> {
  // expected-error @+1 {{'transformer.paged_sdpa' op has no lowering for this target (paged attention is lowered by the CPU pipeline)}}
  %0 = transformer.paged_sdpa %q, %kp, %kp, %bt, %cu, %sp : tensor<1x?x4x8xf32>, tensor<?x16x2x8xf32>, tensor<?x16x2x8xf32>, tensor<?x?xi32>, tensor<?xi32>, tensor<?xi32> -> tensor<1x?x4x8xf32>
  return %0 : tensor<1x?x4x8xf32>
}
