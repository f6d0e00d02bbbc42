// RUN: blockc-opt %s -split-input-file -verify-diagnostics

// Every diagnostic of #transformer.weight_quant and of the ops' checks of
// it (TransformerDialect.cpp, TransformerOps.cpp checkWeightQuant).

func.func @int8_group(%x: tensor<2x3x64xf32>, %w: tensor<32x64xf32>) -> tensor<2x3x32xf32> {
  // expected-error @+1 {{int8 weights are quantised per output row: group_size is for int4}}
  %0 = transformer.linear %x, %w {weight_quant = #transformer.weight_quant<int8, group_size = 32>} : tensor<2x3x64xf32>, tensor<32x64xf32> -> tensor<2x3x32xf32>
  return %0 : tensor<2x3x32xf32>
}

// -----

func.func @int4_no_group(%x: tensor<2x3x64xf32>, %w: tensor<32x64xf32>) -> tensor<2x3x32xf32> {
  // expected-error @+1 {{int4 weights need group_size = 32, 64 or 128, got 0}}
  %0 = transformer.linear %x, %w {weight_quant = #transformer.weight_quant<int4>} : tensor<2x3x64xf32>, tensor<32x64xf32> -> tensor<2x3x32xf32>
  return %0 : tensor<2x3x32xf32>
}

// -----

func.func @int4_group_16(%x: tensor<2x3x64xf32>, %w: tensor<32x64xf32>) -> tensor<2x3x32xf32> {
  // expected-error @+1 {{int4 weights need group_size = 32, 64 or 128, got 16}}
  %0 = transformer.linear %x, %w {weight_quant = #transformer.weight_quant<int4, group_size = 16>} : tensor<2x3x64xf32>, tensor<32x64xf32> -> tensor<2x3x32xf32>
  return %0 : tensor<2x3x32xf32>
}

// -----

func.func @linear_k(%x: tensor<2x3x96xf32>, %w: tensor<32x96xf32>) -> tensor<2x3x32xf32> {
  // expected-error @+1 {{'transformer.linear' op weight_quant group_size 64 does not divide the input dimension 96 of weight}}
  %0 = transformer.linear %x, %w {weight_quant = #transformer.weight_quant<int4, group_size = 64>} : tensor<2x3x96xf32>, tensor<32x96xf32> -> tensor<2x3x32xf32>
  return %0 : tensor<2x3x32xf32>
}

// -----

// d = 64 holds whole groups; d_ff = 96 (the down projection's K) does not.
func.func @block_down(%x: tensor<1x?x64xf32>, %g1: tensor<64xf32>, %wq: tensor<64x64xf32>, %g2: tensor<64xf32>, %wg: tensor<96x64xf32>, %wd: tensor<64x96xf32>) -> tensor<1x?x64xf32> {
  // expected-error @+1 {{'transformer.block' op weight_quant group_size 64 does not divide the input dimension 96 of w_down}}
  %0 = transformer.block %x attn_norm(%g1 : tensor<64xf32>) q(%wq : tensor<64x64xf32>) k(%wq : tensor<64x64xf32>) v(%wq : tensor<64x64xf32>) o(%wq : tensor<64x64xf32>) ffn_norm(%g2 : tensor<64xf32>) gate(%wg : tensor<96x64xf32>) up(%wg : tensor<96x64xf32>) down(%wd : tensor<64x96xf32>) {num_heads = 4 : i64, num_kv_heads = 4 : i64, head_dim = 16 : i64, d_ff = 96 : i64, causal, weight_quant = #transformer.weight_quant<int4, group_size = 64>} : tensor<1x?x64xf32>
  return %0 : tensor<1x?x64xf32>
}

// -----

// The FFN's up projection reads d = 48.
func.func @ffn_up(%x: tensor<2x4x48xf32>, %wu: tensor<64x48xf32>, %wd: tensor<48x64xf32>) -> tensor<2x4x48xf32> {
  // expected-error @+1 {{'transformer.ffn' op weight_quant group_size 32 does not divide the input dimension 48 of w_up}}
  %0 = transformer.ffn %x up(%wu : tensor<64x48xf32>) down(%wd : tensor<48x64xf32>) {activation = #transformer.activation<relu>, weight_quant = #transformer.weight_quant<int4, group_size = 32>} : tensor<2x4x48xf32>
  return %0 : tensor<2x4x48xf32>
}

// -----

// d = 64, but the output projection reads H x D = 3 x 16 = 48.
func.func @attention_o(%x: tensor<2x4x64xf32>, %wq: tensor<48x64xf32>, %wkv: tensor<16x64xf32>, %wo: tensor<64x48xf32>) -> tensor<2x4x64xf32> {
  // expected-error @+1 {{'transformer.attention' op weight_quant group_size 32 does not divide the input dimension 48 of w_o}}
  %0 = transformer.attention %x q(%wq : tensor<48x64xf32>) k(%wkv : tensor<16x64xf32>) v(%wkv : tensor<16x64xf32>) o(%wo : tensor<64x48xf32>) {num_heads = 3 : i64, num_kv_heads = 1 : i64, head_dim = 16 : i64, causal, weight_quant = #transformer.weight_quant<int4, group_size = 32>} : tensor<2x4x64xf32>
  return %0 : tensor<2x4x64xf32>
}

// -----

// activations = int8 quantises runs of 32 input columns: K = 48 holds none
// whole.
func.func @activations_k(%x: tensor<2x3x48xf32>, %w: tensor<32x48xf32>) -> tensor<2x3x32xf32> {
  // expected-error @+1 {{'transformer.linear' op weight_quant activations = int8 quantises the input in runs of 32 columns: the input dimension 48 of weight is not a multiple of 32}}
  %0 = transformer.linear %x, %w {weight_quant = #transformer.weight_quant<int8, activations = int8>} : tensor<2x3x48xf32>, tensor<32x48xf32> -> tensor<2x3x32xf32>
  return %0 : tensor<2x3x32xf32>
}

// -----

// d = 64, d_ff = 80: the down projection's K = 80 is no multiple of 32.
func.func @activations_block_down(%x: tensor<1x?x64xf32>, %g1: tensor<64xf32>, %wq: tensor<64x64xf32>, %g2: tensor<64xf32>, %wg: tensor<80x64xf32>, %wd: tensor<64x80xf32>) -> tensor<1x?x64xf32> {
  // expected-error @+1 {{'transformer.block' op weight_quant activations = int8 quantises the input in runs of 32 columns: the input dimension 80 of w_down is not a multiple of 32}}
  %0 = transformer.block %x attn_norm(%g1 : tensor<64xf32>) q(%wq : tensor<64x64xf32>) k(%wq : tensor<64x64xf32>) v(%wq : tensor<64x64xf32>) o(%wq : tensor<64x64xf32>) ffn_norm(%g2 : tensor<64xf32>) gate(%wg : tensor<80x64xf32>) up(%wg : tensor<80x64xf32>) down(%wd : tensor<64x80xf32>) {num_heads = 4 : i64, num_kv_heads = 4 : i64, head_dim = 16 : i64, d_ff = 80 : i64, causal, weight_quant = #transformer.weight_quant<int8, activations = int8>} : tensor<1x?x64xf32>
  return %0 : tensor<1x?x64xf32>
}

// -----

func.func @activations_int4(%x: tensor<2x3x64xf32>, %w: tensor<32x64xf32>) -> tensor<2x3x32xf32> {
  // expected-error @+1 {{expected 'group_size' or 'activations' (in that order, each once), got 'group_size'}}
  %0 = transformer.linear %x, %w {weight_quant = #transformer.weight_quant<int4, activations = int8, group_size = 32>} : tensor<2x3x64xf32>, tensor<32x64xf32> -> tensor<2x3x32xf32>
  return %0 : tensor<2x3x32xf32>
}

// -----

func.func @activations_int16(%x: tensor<2x3x64xf32>, %w: tensor<32x64xf32>) -> tensor<2x3x32xf32> {
  // expected-error @+1 {{expected one of [none, int8] for run-time quantisation of the inputs of quantised projections, got: int16}}
  %0 = transformer.linear %x, %w {weight_quant = #transformer.weight_quant<int8, activations = int16>} : tensor<2x3x64xf32>, tensor<32x64xf32> -> tensor<2x3x32xf32>
  return %0 : tensor<2x3x32xf32>
}
