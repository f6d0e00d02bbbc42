// Interleaved (GPT-J / original Meta) RoPE: element 2i pairs with 2i+1.
// The output under rotate-half RoPE differs by ~7e-3 of the output scale at
// T = 7, so the 1e-4 comparison catches a layout mix-up.
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: %blockc_ref gen-weights --config %S/Inputs/rope-interleaved.json --seed 1 -o %t/w.safetensors
// RUN: %blockc_ref gen-input --config %S/Inputs/rope-interleaved.json --seed 2 --batch 2 --seq-len 7 -o %t/x.npy
// RUN: blockc-run %s --weights=%t/w.safetensors --input=%t/x.npy --output=%t/y.npy \
// RUN:   | FileCheck %s
// RUN: %blockc_ref run --config %S/Inputs/rope-interleaved.json --weights %t/w.safetensors --input %t/x.npy -o %t/ref.npy
// RUN: %blockc_ref compare %t/y.npy %t/ref.npy --tol 1e-4

// CHECK:      blockc-run: {{.*}}rope-interleaved.mlir @forward (target cpu, threads 1 = OMP_NUM_THREADS)
// CHECK-NEXT: input    [2, 7, 64]  {{.*}}/x.npy
// CHECK-NEXT: weights  9 tensors, 41088 parameters  {{.*}}/w.safetensors
// CHECK-NEXT: output   [2, 7, 64]  -> {{.*}}/y.npy
// CHECK-NEXT: checksum sum={{[-+.0-9e]+}} abs_sum={{[-+.0-9e]+}}{{$}}

func.func @forward(%x: tensor<?x?x64xf32>,
    %attn_norm: tensor<64xf32> {transformer.weight_name = "model.layers.0.input_layernorm.weight"},
    %wq: tensor<64x64xf32> {transformer.weight_name = "model.layers.0.self_attn.q_proj.weight"},
    %wk: tensor<64x64xf32> {transformer.weight_name = "model.layers.0.self_attn.k_proj.weight"},
    %wv: tensor<64x64xf32> {transformer.weight_name = "model.layers.0.self_attn.v_proj.weight"},
    %wo: tensor<64x64xf32> {transformer.weight_name = "model.layers.0.self_attn.o_proj.weight"},
    %ffn_norm: tensor<64xf32> {transformer.weight_name = "model.layers.0.post_attention_layernorm.weight"},
    %wgate: tensor<128x64xf32> {transformer.weight_name = "model.layers.0.mlp.gate_proj.weight"},
    %wup: tensor<128x64xf32> {transformer.weight_name = "model.layers.0.mlp.up_proj.weight"},
    %wdown: tensor<64x128xf32> {transformer.weight_name = "model.layers.0.mlp.down_proj.weight"})
    -> tensor<?x?x64xf32> {
  %y = transformer.block %x
      attn_norm(%attn_norm : tensor<64xf32>)
      q(%wq : tensor<64x64xf32>)
      k(%wk : tensor<64x64xf32>)
      v(%wv : tensor<64x64xf32>)
      o(%wo : tensor<64x64xf32>)
      ffn_norm(%ffn_norm : tensor<64xf32>)
      gate(%wgate : tensor<128x64xf32>)
      up(%wup : tensor<128x64xf32>)
      down(%wdown : tensor<64x128xf32>)
      {activation = #transformer.activation<silu>,
       num_heads = 4 : i64,
       num_kv_heads = 4 : i64,
       head_dim = 16 : i64,
       d_ff = 128 : i64,
       epsilon = 1.0e-06 : f64,
       causal,
       rope = #transformer.rope<interleaved>,
       rope_theta = 1.0e+04 : f64}
      : tensor<?x?x64xf32>
  return %y : tensor<?x?x64xf32>
}
