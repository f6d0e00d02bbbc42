// A tiny GQA block (d = 32, 4 heads, 2 kv heads, head_dim 8, d_ff = 64) used
// by the driver tests; Inputs/tiny.json describes the same block for the
// NumPy reference.
func.func @forward(%x: tensor<?x?x32xf32>,
    %g1: tensor<32xf32>, %wq: tensor<32x32xf32>, %wk: tensor<16x32xf32>,
    %wv: tensor<16x32xf32>, %wo: tensor<32x32xf32>, %g2: tensor<32xf32>,
    %wg: tensor<64x32xf32>, %wu: tensor<64x32xf32>, %wd: tensor<32x64xf32>)
    -> tensor<?x?x32xf32> {
  %y = transformer.block %x attn_norm(%g1 : tensor<32xf32>)
      q(%wq : tensor<32x32xf32>) k(%wk : tensor<16x32xf32>)
      v(%wv : tensor<16x32xf32>) o(%wo : tensor<32x32xf32>)
      ffn_norm(%g2 : tensor<32xf32>) gate(%wg : tensor<64x32xf32>)
      up(%wu : tensor<64x32xf32>) down(%wd : tensor<32x64xf32>)
      {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 8 : i64,
       d_ff = 64 : i64, causal, rope = #transformer.rope<rotate_half>}
      : tensor<?x?x32xf32>
  return %y : tensor<?x?x32xf32>
}
