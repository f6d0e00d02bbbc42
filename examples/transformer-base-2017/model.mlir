// examples/transformer-base-2017/model.mlir - one encoder block of the
// base Transformer of Vaswani et al., "Attention Is All You Need" (2017).
//
// Source: the paper (section 3 and Table 3, row "base"):
//   d_model                512
//   h                      8        MHA
//   d_k = d_v              64
//   d_ff                   2048
//   FFN                    max(0, x W1 + b1) W2 + b2: ReLU, not gated,
//                          biases on both layers (up_proj and down_proj)
//   norm                   post-norm: LayerNorm(x + Sublayer(x))
//   positions              sinusoidal encodings added to the embeddings
//                          before the first block, so no RoPE here
//   attention              encoder self-attention: not causal
//
// Choices the paper leaves open:
//   * LayerNorm epsilon: not stated. We use 1e-6, the default of
//     tensor2tensor's layer_norm (the authors' code). PyTorch's
//     nn.TransformerEncoderLayer defaults to 1e-5.
//   * Projection biases: the paper writes Q/K/V/O as plain matrices and
//     tensor2tensor's projections have no bias; we give q/k/v/o biases, as
//     PyTorch's nn.MultiheadAttention (bias=True) does.
//
// Post-norm naming: input_layernorm is applied after the attention residual
// and post_attention_layernorm after the FFN residual (utils/README.md).
//
// Parameters per block: 3,152,384
//   = attention 1,050,624 (4 x 512 x 512 + 4 x 512 biases)
//   + FFN 2,099,712 (2 x 2048 x 512 + 2048 + 512 biases)
//   + 2 LayerNorms 2,048 (gain and bias, 512 each).
//
// The reference configuration is config.json in this directory
// (utils/blockc_ref.py keys).

func.func @forward(%x: tensor<?x?x512xf32>,
    %attn_norm: tensor<512xf32> {transformer.weight_name = "model.layers.0.input_layernorm.weight"},
    %attn_norm_b: tensor<512xf32> {transformer.weight_name = "model.layers.0.input_layernorm.bias"},
    %wq: tensor<512x512xf32> {transformer.weight_name = "model.layers.0.self_attn.q_proj.weight"},
    %bq: tensor<512xf32> {transformer.weight_name = "model.layers.0.self_attn.q_proj.bias"},
    %wk: tensor<512x512xf32> {transformer.weight_name = "model.layers.0.self_attn.k_proj.weight"},
    %bk: tensor<512xf32> {transformer.weight_name = "model.layers.0.self_attn.k_proj.bias"},
    %wv: tensor<512x512xf32> {transformer.weight_name = "model.layers.0.self_attn.v_proj.weight"},
    %bv: tensor<512xf32> {transformer.weight_name = "model.layers.0.self_attn.v_proj.bias"},
    %wo: tensor<512x512xf32> {transformer.weight_name = "model.layers.0.self_attn.o_proj.weight"},
    %bo: tensor<512xf32> {transformer.weight_name = "model.layers.0.self_attn.o_proj.bias"},
    %ffn_norm: tensor<512xf32> {transformer.weight_name = "model.layers.0.post_attention_layernorm.weight"},
    %ffn_norm_b: tensor<512xf32> {transformer.weight_name = "model.layers.0.post_attention_layernorm.bias"},
    %wu: tensor<2048x512xf32> {transformer.weight_name = "model.layers.0.mlp.up_proj.weight"},
    %bu: tensor<2048xf32> {transformer.weight_name = "model.layers.0.mlp.up_proj.bias"},
    %wd: tensor<512x2048xf32> {transformer.weight_name = "model.layers.0.mlp.down_proj.weight"},
    %bd: tensor<512xf32> {transformer.weight_name = "model.layers.0.mlp.down_proj.bias"})
    -> tensor<?x?x512xf32> {
  %y = transformer.block %x
      attn_norm(%attn_norm : tensor<512xf32>)
      attn_norm_bias(%attn_norm_b : tensor<512xf32>)
      q(%wq : tensor<512x512xf32>)
      q_bias(%bq : tensor<512xf32>)
      k(%wk : tensor<512x512xf32>)
      k_bias(%bk : tensor<512xf32>)
      v(%wv : tensor<512x512xf32>)
      v_bias(%bv : tensor<512xf32>)
      o(%wo : tensor<512x512xf32>)
      o_bias(%bo : tensor<512xf32>)
      ffn_norm(%ffn_norm : tensor<512xf32>)
      ffn_norm_bias(%ffn_norm_b : tensor<512xf32>)
      up(%wu : tensor<2048x512xf32>)
      up_bias(%bu : tensor<2048xf32>)
      down(%wd : tensor<512x2048xf32>)
      down_bias(%bd : tensor<512xf32>)
      {norm = #transformer.norm<layer>,
       norm_placement = #transformer.placement<post>,
       activation = #transformer.activation<relu>,
       num_heads = 8 : i64,
       num_kv_heads = 8 : i64,
       head_dim = 64 : i64,
       d_ff = 2048 : i64,
       epsilon = 1.0e-06 : f64}
      : tensor<?x?x512xf32>
  return %y : tensor<?x?x512xf32>
}
