// examples/small/model.mlir - a small Llama-style block for quick runs.
//
// Not a published checkpoint: a scaled-down Llama-architecture decoder block
// whose shapes keep the NumPy reference and JIT runs to seconds while still
// exercising everything a modern block has (GQA, RoPE, SwiGLU, RMSNorm).
//
//   hidden_size (d)        256
//   num_attention_heads    8
//   num_key_value_heads    2        GQA: 4 query heads share each K/V head
//   head_dim               32       (= d / heads)
//   intermediate_size      688      8d/3 = 682.7, rounded up to a multiple of 16
//   norm                   RMSNorm, pre-norm, eps 1e-6
//   FFN                    SwiGLU: down(silu(gate(x)) * up(x))
//   RoPE                   rotate_half (Hugging Face Llama layout), theta 10000
//   attention              causal (decoder)
//   biases                 none
//
// Parameters per block: 692,736
//   = attention 163,840 (q 65,536 + k 16,384 + v 16,384 + o 65,536)
//   + FFN 528,384 (3 x 688 x 256) + norm gains 512.
//
// The reference configuration of the same block is config.json in this
// directory (utils/blockc_ref.py keys); weight argument names match the
// tensor names the reference generates and reads.

func.func @forward(%x: tensor<?x?x256xf32>,
    %attn_norm: tensor<256xf32> {transformer.weight_name = "model.layers.0.input_layernorm.weight"},
    %wq: tensor<256x256xf32> {transformer.weight_name = "model.layers.0.self_attn.q_proj.weight"},
    %wk: tensor<64x256xf32> {transformer.weight_name = "model.layers.0.self_attn.k_proj.weight"},
    %wv: tensor<64x256xf32> {transformer.weight_name = "model.layers.0.self_attn.v_proj.weight"},
    %wo: tensor<256x256xf32> {transformer.weight_name = "model.layers.0.self_attn.o_proj.weight"},
    %ffn_norm: tensor<256xf32> {transformer.weight_name = "model.layers.0.post_attention_layernorm.weight"},
    %wg: tensor<688x256xf32> {transformer.weight_name = "model.layers.0.mlp.gate_proj.weight"},
    %wu: tensor<688x256xf32> {transformer.weight_name = "model.layers.0.mlp.up_proj.weight"},
    %wd: tensor<256x688xf32> {transformer.weight_name = "model.layers.0.mlp.down_proj.weight"})
    -> tensor<?x?x256xf32> {
  %y = transformer.block %x
      attn_norm(%attn_norm : tensor<256xf32>)
      q(%wq : tensor<256x256xf32>)
      k(%wk : tensor<64x256xf32>)
      v(%wv : tensor<64x256xf32>)
      o(%wo : tensor<256x256xf32>)
      ffn_norm(%ffn_norm : tensor<256xf32>)
      gate(%wg : tensor<688x256xf32>)
      up(%wu : tensor<688x256xf32>)
      down(%wd : tensor<256x688xf32>)
      {activation = #transformer.activation<silu>,
       num_heads = 8 : i64,
       num_kv_heads = 2 : i64,
       head_dim = 32 : i64,
       d_ff = 688 : i64,
       epsilon = 1.0e-06 : f64,
       causal,
       rope = #transformer.rope<rotate_half>,
       rope_theta = 1.0e+04 : f64}
      : tensor<?x?x256xf32>
  return %y : tensor<?x?x256xf32>
}
