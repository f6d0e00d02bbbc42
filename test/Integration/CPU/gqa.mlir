// Grouped-query attention: 8 query heads share 2 K/V heads (query head h
// reads kv head h / 4), rope_theta 5e5 (Llama 3), RMSNorm eps 1e-5, SwiGLU.
// Two shapes: a batch of 2 and a longer single sequence.
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: %blockc_ref gen-weights --config %S/Inputs/gqa.json --seed 1 -o %t/w.safetensors
// RUN: %blockc_ref gen-input --config %S/Inputs/gqa.json --seed 2007 --batch 2 --seq-len 7 -o %t/b2t7.x.npy
// RUN: blockc-run %s --weights=%t/w.safetensors --input=%t/b2t7.x.npy --output=%t/b2t7.y.npy \
// RUN:   | FileCheck %s --check-prefix=B2T7
// RUN: %blockc_ref run --config %S/Inputs/gqa.json --weights %t/w.safetensors --input %t/b2t7.x.npy -o %t/b2t7.ref.npy
// RUN: %blockc_ref compare %t/b2t7.y.npy %t/b2t7.ref.npy --tol 1e-4
// RUN: %blockc_ref gen-input --config %S/Inputs/gqa.json --seed 1033 --batch 1 --seq-len 33 -o %t/b1t33.x.npy
// RUN: blockc-run %s --weights=%t/w.safetensors --input=%t/b1t33.x.npy --output=%t/b1t33.y.npy \
// RUN:   | FileCheck %s --check-prefix=B1T33
// RUN: %blockc_ref run --config %S/Inputs/gqa.json --weights %t/w.safetensors --input %t/b1t33.x.npy -o %t/b1t33.ref.npy
// RUN: %blockc_ref compare %t/b1t33.y.npy %t/b1t33.ref.npy --tol 1e-4

// B2T7:      blockc-run: {{.*}}gqa.mlir @forward (target cpu, threads 1 = OMP_NUM_THREADS)
// B2T7-NEXT: input    [2, 7, 128]  {{.*}}/b2t7.x.npy
// B2T7-NEXT: weights  9 tensors, 139520 parameters  {{.*}}/w.safetensors
// B2T7-NEXT: output   [2, 7, 128]  -> {{.*}}/b2t7.y.npy
// B2T7-NEXT: checksum sum={{[-+.0-9e]+}} abs_sum={{[-+.0-9e]+}}{{$}}

// B1T33:      blockc-run: {{.*}}gqa.mlir @forward (target cpu, threads 1 = OMP_NUM_THREADS)
// B1T33-NEXT: input    [1, 33, 128]  {{.*}}/b1t33.x.npy
// B1T33-NEXT: weights  9 tensors, 139520 parameters  {{.*}}/w.safetensors
// B1T33-NEXT: output   [1, 33, 128]  -> {{.*}}/b1t33.y.npy
// B1T33-NEXT: checksum sum={{[-+.0-9e]+}} abs_sum={{[-+.0-9e]+}}{{$}}

func.func @forward(%x: tensor<?x?x128xf32>,
    %attn_norm: tensor<128xf32> {transformer.weight_name = "model.layers.0.input_layernorm.weight"},
    %wq: tensor<128x128xf32> {transformer.weight_name = "model.layers.0.self_attn.q_proj.weight"},
    %wk: tensor<32x128xf32> {transformer.weight_name = "model.layers.0.self_attn.k_proj.weight"},
    %wv: tensor<32x128xf32> {transformer.weight_name = "model.layers.0.self_attn.v_proj.weight"},
    %wo: tensor<128x128xf32> {transformer.weight_name = "model.layers.0.self_attn.o_proj.weight"},
    %ffn_norm: tensor<128xf32> {transformer.weight_name = "model.layers.0.post_attention_layernorm.weight"},
    %wgate: tensor<256x128xf32> {transformer.weight_name = "model.layers.0.mlp.gate_proj.weight"},
    %wup: tensor<256x128xf32> {transformer.weight_name = "model.layers.0.mlp.up_proj.weight"},
    %wdown: tensor<128x256xf32> {transformer.weight_name = "model.layers.0.mlp.down_proj.weight"})
    -> tensor<?x?x128xf32> {
  %y = transformer.block %x
      attn_norm(%attn_norm : tensor<128xf32>)
      q(%wq : tensor<128x128xf32>)
      k(%wk : tensor<32x128xf32>)
      v(%wv : tensor<32x128xf32>)
      o(%wo : tensor<128x128xf32>)
      ffn_norm(%ffn_norm : tensor<128xf32>)
      gate(%wgate : tensor<256x128xf32>)
      up(%wup : tensor<256x128xf32>)
      down(%wdown : tensor<128x256xf32>)
      {activation = #transformer.activation<silu>,
       num_heads = 8 : i64,
       num_kv_heads = 2 : i64,
       head_dim = 16 : i64,
       d_ff = 256 : i64,
       epsilon = 1.0e-05 : f64,
       causal,
       rope = #transformer.rope<rotate_half>,
       rope_theta = 5.0e+05 : f64}
      : tensor<?x?x128xf32>
  return %y : tensor<?x?x128xf32>
}
