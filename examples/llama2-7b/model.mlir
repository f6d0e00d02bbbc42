// examples/llama2-7b/model.mlir - one decoder block of Llama-2 7B.
//
// Source: the Hugging Face checkpoint meta-llama/Llama-2-7b-hf, config.json:
//   hidden_size            4096
//   num_attention_heads    32
//   num_key_value_heads    32       MHA (no GQA in the 7B model)
//   head_dim               128      (= 4096 / 32; not a key in the config)
//   intermediate_size      11008
//   rms_norm_eps           1e-05    RMSNorm, pre-norm
//   hidden_act             "silu"   SwiGLU FFN
//   rope_theta             10000.0  (the LlamaConfig default)
//   attention_bias         false    no biases anywhere
//   num_hidden_layers      32       (this file is one of them)
// The block is causal. RoPE uses the rotate_half layout: Hugging Face's
// conversion script permutes the rows of W_q and W_k of Meta's original
// (interleaved-pair) checkpoint so that rotate_half applies to HF weights.
//
// Parameters per block: 202,383,360
//   = attention 67,108,864 (4 x 4096 x 4096)
//   + FFN 135,266,304 (3 x 11008 x 4096) + norm gains 8,192.
// 32 blocks + embeddings and LM head (2 x 32000 x 4096) + final norm (4096)
// = 6,738,415,616, the published parameter count of Llama-2 7B.
//
// The reference configuration is config.json in this directory
// (utils/blockc_ref.py keys: HF's rms_norm_eps is spelled norm_eps there).

func.func @forward(%x: tensor<?x?x4096xf32>,
    %attn_norm: tensor<4096xf32> {transformer.weight_name = "model.layers.0.input_layernorm.weight"},
    %wq: tensor<4096x4096xf32> {transformer.weight_name = "model.layers.0.self_attn.q_proj.weight"},
    %wk: tensor<4096x4096xf32> {transformer.weight_name = "model.layers.0.self_attn.k_proj.weight"},
    %wv: tensor<4096x4096xf32> {transformer.weight_name = "model.layers.0.self_attn.v_proj.weight"},
    %wo: tensor<4096x4096xf32> {transformer.weight_name = "model.layers.0.self_attn.o_proj.weight"},
    %ffn_norm: tensor<4096xf32> {transformer.weight_name = "model.layers.0.post_attention_layernorm.weight"},
    %wg: tensor<11008x4096xf32> {transformer.weight_name = "model.layers.0.mlp.gate_proj.weight"},
    %wu: tensor<11008x4096xf32> {transformer.weight_name = "model.layers.0.mlp.up_proj.weight"},
    %wd: tensor<4096x11008xf32> {transformer.weight_name = "model.layers.0.mlp.down_proj.weight"})
    -> tensor<?x?x4096xf32> {
  %y = transformer.block %x
      attn_norm(%attn_norm : tensor<4096xf32>)
      q(%wq : tensor<4096x4096xf32>)
      k(%wk : tensor<4096x4096xf32>)
      v(%wv : tensor<4096x4096xf32>)
      o(%wo : tensor<4096x4096xf32>)
      ffn_norm(%ffn_norm : tensor<4096xf32>)
      gate(%wg : tensor<11008x4096xf32>)
      up(%wu : tensor<11008x4096xf32>)
      down(%wd : tensor<4096x11008xf32>)
      {activation = #transformer.activation<silu>,
       num_heads = 32 : i64,
       num_kv_heads = 32 : i64,
       head_dim = 128 : i64,
       d_ff = 11008 : i64,
       epsilon = 1.0e-05 : f64,
       causal,
       rope = #transformer.rope<rotate_half>,
       rope_theta = 1.0e+04 : f64}
      : tensor<?x?x4096xf32>
  return %y : tensor<?x?x4096xf32>
}
