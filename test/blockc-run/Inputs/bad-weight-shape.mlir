// tiny.mlir with a w_o weight of the wrong shape: [32, 16] instead of
// [d, H * head_dim] = [32, 32]. Parses, fails the block verifier.

func.func @forward(%x: tensor<?x?x32xf32>,
    %attn_norm: tensor<32xf32> {transformer.weight_name = "model.layers.0.input_layernorm.weight"},
    %wq: tensor<32x32xf32> {transformer.weight_name = "model.layers.0.self_attn.q_proj.weight"},
    %wk: tensor<16x32xf32> {transformer.weight_name = "model.layers.0.self_attn.k_proj.weight"},
    %wv: tensor<16x32xf32> {transformer.weight_name = "model.layers.0.self_attn.v_proj.weight"},
    %wo: tensor<32x16xf32> {transformer.weight_name = "model.layers.0.self_attn.o_proj.weight"},
    %ffn_norm: tensor<32xf32> {transformer.weight_name = "model.layers.0.post_attention_layernorm.weight"},
    %wgate: tensor<64x32xf32> {transformer.weight_name = "model.layers.0.mlp.gate_proj.weight"},
    %wup: tensor<64x32xf32> {transformer.weight_name = "model.layers.0.mlp.up_proj.weight"},
    %wdown: tensor<32x64xf32> {transformer.weight_name = "model.layers.0.mlp.down_proj.weight"})
    -> tensor<?x?x32xf32> {
  %y = transformer.block %x
      attn_norm(%attn_norm : tensor<32xf32>)
      q(%wq : tensor<32x32xf32>)
      k(%wk : tensor<16x32xf32>)
      v(%wv : tensor<16x32xf32>)
      o(%wo : tensor<32x16xf32>)
      ffn_norm(%ffn_norm : tensor<32xf32>)
      gate(%wgate : tensor<64x32xf32>)
      up(%wup : tensor<64x32xf32>)
      down(%wdown : tensor<32x64xf32>)
      {activation = #transformer.activation<silu>,
       num_heads = 2 : i64,
       num_kv_heads = 1 : i64,
       head_dim = 16 : i64,
       d_ff = 64 : i64,
       epsilon = 1.0e-06 : f64,
       causal,
       rope = #transformer.rope<rotate_half>,
       rope_theta = 1.0e+04 : f64}
      : tensor<?x?x32xf32>
  return %y : tensor<?x?x32xf32>
}
