func.func @forward(%x: tensor<?x?x33xf32>, %a0: tensor<33xf32>, %a1: tensor<33x33xf32>, %a2: tensor<3x33xf32>, %a3: tensor<3x33xf32>, %a4: tensor<33x33xf32>, %a5: tensor<33xf32>, %a6: tensor<7x33xf32>, %a7: tensor<7x33xf32>, %a8: tensor<33x7xf32>) -> tensor<?x?x33xf32> {
  %y = transformer.block %x attn_norm(%a0 : tensor<33xf32>) q(%a1 : tensor<33x33xf32>) k(%a2 : tensor<3x33xf32>) v(%a3 : tensor<3x33xf32>) o(%a4 : tensor<33x33xf32>) ffn_norm(%a5 : tensor<33xf32>) gate(%a6 : tensor<7x33xf32>) up(%a7 : tensor<7x33xf32>) down(%a8 : tensor<33x7xf32>) {num_heads = 11 : i64, num_kv_heads = 1 : i64, head_dim = 3 : i64, d_ff = 7 : i64, causal} : tensor<?x?x33xf32>
  return %y : tensor<?x?x33xf32>
}
