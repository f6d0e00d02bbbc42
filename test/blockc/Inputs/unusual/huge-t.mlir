func.func @forward(%x: tensor<1x1073741824x64xf32>, %a0: tensor<64xf32>, %a1: tensor<64x64xf32>, %a2: tensor<64x64xf32>, %a3: tensor<64x64xf32>, %a4: tensor<64x64xf32>, %a5: tensor<64xf32>, %a6: tensor<64x64xf32>, %a7: tensor<64x64xf32>, %a8: tensor<64x64xf32>) -> tensor<1x1073741824x64xf32> {
  %y = transformer.block %x attn_norm(%a0 : tensor<64xf32>) q(%a1 : tensor<64x64xf32>) k(%a2 : tensor<64x64xf32>) v(%a3 : tensor<64x64xf32>) o(%a4 : tensor<64x64xf32>) ffn_norm(%a5 : tensor<64xf32>) gate(%a6 : tensor<64x64xf32>) up(%a7 : tensor<64x64xf32>) down(%a8 : tensor<64x64xf32>) {num_heads = 4 : i64, num_kv_heads = 4 : i64, head_dim = 16 : i64, d_ff = 64 : i64, causal} : tensor<1x1073741824x64xf32>
  return %y : tensor<1x1073741824x64xf32>
}
