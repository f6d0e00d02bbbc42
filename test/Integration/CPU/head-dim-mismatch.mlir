// H * head_dim != d: d = 48 but 4 heads of head_dim 20 (q is [80, 48], o is
// [48, 80]), GQA 4/2 (k/v [40, 48]), with q/k/v/o biases.
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: %blockc_ref gen-weights --config %S/Inputs/head-dim-mismatch.json --seed 1 -o %t/w.safetensors
// RUN: %blockc_ref gen-input --config %S/Inputs/head-dim-mismatch.json --seed 2 --batch 2 --seq-len 5 -o %t/x.npy
// RUN: blockc-run %s --weights=%t/w.safetensors --input=%t/x.npy --output=%t/y.npy \
// RUN:   | FileCheck %s
// RUN: %blockc_ref run --config %S/Inputs/head-dim-mismatch.json --weights %t/w.safetensors --input %t/x.npy -o %t/ref.npy
// RUN: %blockc_ref compare %t/y.npy %t/ref.npy --tol 1e-4

// CHECK:      blockc-run: {{.*}}head-dim-mismatch.mlir @forward (target cpu, threads 1 = OMP_NUM_THREADS)
// CHECK-NEXT: input    [2, 5, 48]  {{.*}}/x.npy
// CHECK-NEXT: weights  13 tensors, 25648 parameters  {{.*}}/w.safetensors
// CHECK-NEXT: output   [2, 5, 48]  -> {{.*}}/y.npy
// CHECK-NEXT: checksum sum={{[-+.0-9e]+}} abs_sum={{[-+.0-9e]+}}{{$}}

func.func @forward(%x: tensor<?x?x48xf32>,
    %attn_norm: tensor<48xf32> {transformer.weight_name = "model.layers.0.input_layernorm.weight"},
    %wq: tensor<80x48xf32> {transformer.weight_name = "model.layers.0.self_attn.q_proj.weight"},
    %bq: tensor<80xf32> {transformer.weight_name = "model.layers.0.self_attn.q_proj.bias"},
    %wk: tensor<40x48xf32> {transformer.weight_name = "model.layers.0.self_attn.k_proj.weight"},
    %bk: tensor<40xf32> {transformer.weight_name = "model.layers.0.self_attn.k_proj.bias"},
    %wv: tensor<40x48xf32> {transformer.weight_name = "model.layers.0.self_attn.v_proj.weight"},
    %bv: tensor<40xf32> {transformer.weight_name = "model.layers.0.self_attn.v_proj.bias"},
    %wo: tensor<48x80xf32> {transformer.weight_name = "model.layers.0.self_attn.o_proj.weight"},
    %bo: tensor<48xf32> {transformer.weight_name = "model.layers.0.self_attn.o_proj.bias"},
    %ffn_norm: tensor<48xf32> {transformer.weight_name = "model.layers.0.post_attention_layernorm.weight"},
    %wgate: tensor<96x48xf32> {transformer.weight_name = "model.layers.0.mlp.gate_proj.weight"},
    %wup: tensor<96x48xf32> {transformer.weight_name = "model.layers.0.mlp.up_proj.weight"},
    %wdown: tensor<48x96xf32> {transformer.weight_name = "model.layers.0.mlp.down_proj.weight"})
    -> tensor<?x?x48xf32> {
  %y = transformer.block %x
      attn_norm(%attn_norm : tensor<48xf32>)
      q(%wq : tensor<80x48xf32>)
      q_bias(%bq : tensor<80xf32>)
      k(%wk : tensor<40x48xf32>)
      k_bias(%bk : tensor<40xf32>)
      v(%wv : tensor<40x48xf32>)
      v_bias(%bv : tensor<40xf32>)
      o(%wo : tensor<48x80xf32>)
      o_bias(%bo : tensor<48xf32>)
      ffn_norm(%ffn_norm : tensor<48xf32>)
      gate(%wgate : tensor<96x48xf32>)
      up(%wup : tensor<96x48xf32>)
      down(%wdown : tensor<48x96xf32>)
      {activation = #transformer.activation<silu>,
       num_heads = 4 : i64,
       num_kv_heads = 2 : i64,
       head_dim = 20 : i64,
       d_ff = 96 : i64,
       epsilon = 1.0e-06 : f64,
       causal,
       rope = #transformer.rope<rotate_half>,
       rope_theta = 1.0e+04 : f64}
      : tensor<?x?x48xf32>
  return %y : tensor<?x?x48xf32>
}
