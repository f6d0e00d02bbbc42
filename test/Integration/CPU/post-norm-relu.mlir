// The 2017 Transformer block ("Attention Is All You Need", base model shape
// scaled down): post-norm LayerNorm (gain and bias), plain ReLU FFN (no gate)
// with biases on up/down, biases on q/k/v/o, NON-causal (encoder)
// self-attention, no RoPE (positions are added to the embeddings).
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: %blockc_ref gen-weights --config %S/Inputs/post-norm-relu.json --seed 1 -o %t/w.safetensors
// RUN: %blockc_ref gen-input --config %S/Inputs/post-norm-relu.json --seed 2 --batch 2 --seq-len 7 -o %t/x.npy
// RUN: blockc-run %s --weights=%t/w.safetensors --input=%t/x.npy --output=%t/y.npy \
// RUN:   | FileCheck %s
// RUN: %blockc_ref run --config %S/Inputs/post-norm-relu.json --weights %t/w.safetensors --input %t/x.npy -o %t/ref.npy
// RUN: %blockc_ref compare %t/y.npy %t/ref.npy --tol 1e-4

// CHECK:      blockc-run: {{.*}}post-norm-relu.mlir @forward (target cpu, threads 1 = OMP_NUM_THREADS)
// CHECK-NEXT: input    [2, 7, 64]  {{.*}}/x.npy
// CHECK-NEXT: weights  16 tensors, 49984 parameters  {{.*}}/w.safetensors
// CHECK-NEXT: output   [2, 7, 64]  -> {{.*}}/y.npy
// CHECK-NEXT: checksum sum={{[-+.0-9e]+}} abs_sum={{[-+.0-9e]+}}{{$}}

func.func @forward(%x: tensor<?x?x64xf32>,
    %attn_norm: tensor<64xf32> {transformer.weight_name = "model.layers.0.input_layernorm.weight"},
    %attn_norm_b: tensor<64xf32> {transformer.weight_name = "model.layers.0.input_layernorm.bias"},
    %wq: tensor<64x64xf32> {transformer.weight_name = "model.layers.0.self_attn.q_proj.weight"},
    %bq: tensor<64xf32> {transformer.weight_name = "model.layers.0.self_attn.q_proj.bias"},
    %wk: tensor<64x64xf32> {transformer.weight_name = "model.layers.0.self_attn.k_proj.weight"},
    %bk: tensor<64xf32> {transformer.weight_name = "model.layers.0.self_attn.k_proj.bias"},
    %wv: tensor<64x64xf32> {transformer.weight_name = "model.layers.0.self_attn.v_proj.weight"},
    %bv: tensor<64xf32> {transformer.weight_name = "model.layers.0.self_attn.v_proj.bias"},
    %wo: tensor<64x64xf32> {transformer.weight_name = "model.layers.0.self_attn.o_proj.weight"},
    %bo: tensor<64xf32> {transformer.weight_name = "model.layers.0.self_attn.o_proj.bias"},
    %ffn_norm: tensor<64xf32> {transformer.weight_name = "model.layers.0.post_attention_layernorm.weight"},
    %ffn_norm_b: tensor<64xf32> {transformer.weight_name = "model.layers.0.post_attention_layernorm.bias"},
    %wup: tensor<256x64xf32> {transformer.weight_name = "model.layers.0.mlp.up_proj.weight"},
    %bup: tensor<256xf32> {transformer.weight_name = "model.layers.0.mlp.up_proj.bias"},
    %wdown: tensor<64x256xf32> {transformer.weight_name = "model.layers.0.mlp.down_proj.weight"},
    %bdown: tensor<64xf32> {transformer.weight_name = "model.layers.0.mlp.down_proj.bias"})
    -> tensor<?x?x64xf32> {
  %y = transformer.block %x
      attn_norm(%attn_norm : tensor<64xf32>)
      attn_norm_bias(%attn_norm_b : tensor<64xf32>)
      q(%wq : tensor<64x64xf32>)
      q_bias(%bq : tensor<64xf32>)
      k(%wk : tensor<64x64xf32>)
      k_bias(%bk : tensor<64xf32>)
      v(%wv : tensor<64x64xf32>)
      v_bias(%bv : tensor<64xf32>)
      o(%wo : tensor<64x64xf32>)
      o_bias(%bo : tensor<64xf32>)
      ffn_norm(%ffn_norm : tensor<64xf32>)
      ffn_norm_bias(%ffn_norm_b : tensor<64xf32>)
      up(%wup : tensor<256x64xf32>)
      up_bias(%bup : tensor<256xf32>)
      down(%wdown : tensor<64x256xf32>)
      down_bias(%bdown : tensor<64xf32>)
      {norm = #transformer.norm<layer>,
       norm_placement = #transformer.placement<post>,
       activation = #transformer.activation<relu>,
       num_heads = 4 : i64,
       num_kv_heads = 4 : i64,
       head_dim = 16 : i64,
       d_ff = 256 : i64,
       epsilon = 1.0e-06 : f64}
      : tensor<?x?x64xf32>
  return %y : tensor<?x?x64xf32>
}
