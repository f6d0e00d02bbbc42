func.func @forward(%x: tensor<0x5x1xf32>, %g1: tensor<1xf32>, %wq: tensor<1x1xf32>, %wk: tensor<1x1xf32>, %wv: tensor<1x1xf32>, %wo: tensor<1x1xf32>, %g2: tensor<1xf32>, %wg: tensor<1x1xf32>, %wu: tensor<1x1xf32>, %wd: tensor<1x1xf32>) -> tensor<0x5x1xf32> {
  %y = transformer.block %x attn_norm(%g1 : tensor<1xf32>) q(%wq : tensor<1x1xf32>) k(%wk : tensor<1x1xf32>) v(%wv : tensor<1x1xf32>) o(%wo : tensor<1x1xf32>) ffn_norm(%g2 : tensor<1xf32>) gate(%wg : tensor<1x1xf32>) up(%wu : tensor<1x1xf32>) down(%wd : tensor<1x1xf32>) {num_heads = 1 : i64, num_kv_heads = 1 : i64, head_dim = 1 : i64, d_ff = 1 : i64, causal} : tensor<0x5x1xf32>
  return %y : tensor<0x5x1xf32>
}
