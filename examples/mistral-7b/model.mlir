// examples/mistral-7b/model.mlir - one decoder block of Mistral 7B v0.2.
//
// Source: the Hugging Face config.json of mistralai/Mistral-7B-Instruct-v0.2
// (v0.3 has the same block; only the vocabulary grew):
//   hidden_size            4096
//   num_attention_heads    32
//   num_key_value_heads    8        GQA: 4 query heads share each K/V head
//   head_dim               128      (= 4096 / 32)
//   intermediate_size      14336
//   rms_norm_eps           1e-05    RMSNorm, pre-norm
//   hidden_act             "silu"   SwiGLU FFN
//   rope_theta             1000000.0
//   sliding_window         null     full causal attention
//   num_hidden_layers      32       (this file is one of them)
// No biases. RoPE layout rotate_half (Hugging Face weights).
//
// Version note: Mistral-7B-v0.1 used rope_theta 10000.0 and a 4096-token
// sliding attention window. This file models v0.2+ (theta 1e6, no window).
// For v0.1, set rope_theta = 1.0e+04: that matches v0.1 exactly only while
// the sequence plus cache is at most 4096 tokens, because transformer.block
// has no sliding-window mask.
//
// Parameters per block: 218,112,000
//   = attention 41,943,040 (q, o: 4096 x 4096; k, v: 1024 x 4096)
//   + FFN 176,160,768 (3 x 14336 x 4096) + norm gains 8,192.
// 32 blocks + embeddings and LM head (2 x 32000 x 4096) + final norm (4096)
// = 7,241,732,096 for v0.1/v0.2.
//
// The reference configuration is config.json in this directory
// (utils/blockc_ref.py keys: HF's rms_norm_eps is spelled norm_eps there).

func.func @forward(%x: tensor<?x?x4096xf32>,
    %attn_norm: tensor<4096xf32> {transformer.weight_name = "model.layers.0.input_layernorm.weight"},
    %wq: tensor<4096x4096xf32> {transformer.weight_name = "model.layers.0.self_attn.q_proj.weight"},
    %wk: tensor<1024x4096xf32> {transformer.weight_name = "model.layers.0.self_attn.k_proj.weight"},
    %wv: tensor<1024x4096xf32> {transformer.weight_name = "model.layers.0.self_attn.v_proj.weight"},
    %wo: tensor<4096x4096xf32> {transformer.weight_name = "model.layers.0.self_attn.o_proj.weight"},
    %ffn_norm: tensor<4096xf32> {transformer.weight_name = "model.layers.0.post_attention_layernorm.weight"},
    %wg: tensor<14336x4096xf32> {transformer.weight_name = "model.layers.0.mlp.gate_proj.weight"},
    %wu: tensor<14336x4096xf32> {transformer.weight_name = "model.layers.0.mlp.up_proj.weight"},
    %wd: tensor<4096x14336xf32> {transformer.weight_name = "model.layers.0.mlp.down_proj.weight"})
    -> tensor<?x?x4096xf32> {
  %y = transformer.block %x
      attn_norm(%attn_norm : tensor<4096xf32>)
      q(%wq : tensor<4096x4096xf32>)
      k(%wk : tensor<1024x4096xf32>)
      v(%wv : tensor<1024x4096xf32>)
      o(%wo : tensor<4096x4096xf32>)
      ffn_norm(%ffn_norm : tensor<4096xf32>)
      gate(%wg : tensor<14336x4096xf32>)
      up(%wu : tensor<14336x4096xf32>)
      down(%wd : tensor<4096x14336xf32>)
      {activation = #transformer.activation<silu>,
       num_heads = 32 : i64,
       num_kv_heads = 8 : i64,
       head_dim = 128 : i64,
       d_ff = 14336 : i64,
       epsilon = 1.0e-05 : f64,
       causal,
       rope = #transformer.rope<rotate_half>,
       rope_theta = 1.0e+06 : f64}
      : tensor<?x?x4096xf32>
  return %y : tensor<?x?x4096xf32>
}
