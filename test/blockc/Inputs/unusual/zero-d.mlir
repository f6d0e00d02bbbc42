func.func @forward(%x: tensor<?x?x0xf32>, %a0: tensor<0xf32>, %a1: tensor<2x0xf32>, %a2: tensor<2x0xf32>, %a3: tensor<2x0xf32>, %a4: tensor<0x2xf32>, %a5: tensor<0xf32>, %a6: tensor<4x0xf32>, %a7: tensor<4x0xf32>, %a8: tensor<0x4xf32>) -> tensor<?x?x0xf32> {
  %y = transformer.block %x attn_norm(%a0 : tensor<0xf32>) q(%a1 : tensor<2x0xf32>) k(%a2 : tensor<2x0xf32>) v(%a3 : tensor<2x0xf32>) o(%a4 : tensor<0x2xf32>) ffn_norm(%a5 : tensor<0xf32>) gate(%a6 : tensor<4x0xf32>) up(%a7 : tensor<4x0xf32>) down(%a8 : tensor<0x4xf32>) {num_heads = 1 : i64, num_kv_heads = 1 : i64, head_dim = 2 : i64, d_ff = 4 : i64, causal} : tensor<?x?x0xf32>
  return %y : tensor<?x?x0xf32>
}
