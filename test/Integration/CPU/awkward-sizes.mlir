// Sizes that are not multiples of any vector width or tile: d = 72, three
// heads of head_dim 24, d_ff = 190; a single token (T = 1: attention over
// one key), T = 7 with a batch of 2, and T = 257 (one past a power of two).
//
// FLOPs at B = 1, T = 257: 2 * 257 * (4 * 72 * 72 + 3 * 72 * 190)
// + 4 * 257^2 * 3 * 24 = 31,752,864 + 19,022,112 = 5.077e7.
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: %blockc_ref gen-weights --config %S/Inputs/awkward-sizes.json --seed 1 -o %t/w.safetensors
// RUN: %blockc_ref gen-input --config %S/Inputs/awkward-sizes.json --seed 1001 --batch 1 --seq-len 1 -o %t/b1t1.x.npy
// RUN: blockc-run %s --weights=%t/w.safetensors --input=%t/b1t1.x.npy --output=%t/b1t1.y.npy \
// RUN:   | FileCheck %s --check-prefix=B1T1
// RUN: %blockc_ref run --config %S/Inputs/awkward-sizes.json --weights %t/w.safetensors --input %t/b1t1.x.npy -o %t/b1t1.ref.npy
// RUN: %blockc_ref compare %t/b1t1.y.npy %t/b1t1.ref.npy --tol 1e-4
// RUN: %blockc_ref gen-input --config %S/Inputs/awkward-sizes.json --seed 2007 --batch 2 --seq-len 7 -o %t/b2t7.x.npy
// RUN: blockc-run %s --weights=%t/w.safetensors --input=%t/b2t7.x.npy --output=%t/b2t7.y.npy \
// RUN:   | FileCheck %s --check-prefix=B2T7
// RUN: %blockc_ref run --config %S/Inputs/awkward-sizes.json --weights %t/w.safetensors --input %t/b2t7.x.npy -o %t/b2t7.ref.npy
// RUN: %blockc_ref compare %t/b2t7.y.npy %t/b2t7.ref.npy --tol 1e-4
// RUN: %blockc_ref gen-input --config %S/Inputs/awkward-sizes.json --seed 1257 --batch 1 --seq-len 257 -o %t/b1t257.x.npy
// RUN: blockc-run %s --weights=%t/w.safetensors --input=%t/b1t257.x.npy --output=%t/b1t257.y.npy \
// RUN:   | FileCheck %s --check-prefix=B1T257
// RUN: %blockc_ref run --config %S/Inputs/awkward-sizes.json --weights %t/w.safetensors --input %t/b1t257.x.npy -o %t/b1t257.ref.npy
// RUN: %blockc_ref compare %t/b1t257.y.npy %t/b1t257.ref.npy --tol 1e-4

// B1T1:      blockc-run: {{.*}}awkward-sizes.mlir @forward (target cpu, threads 1 = OMP_NUM_THREADS)
// B1T1-NEXT: input    [1, 1, 72]  {{.*}}/b1t1.x.npy
// B1T1-NEXT: weights  9 tensors, 61920 parameters  {{.*}}/w.safetensors
// B1T1-NEXT: output   [1, 1, 72]  -> {{.*}}/b1t1.y.npy
// B1T1-NEXT: checksum sum={{[-+.0-9e]+}} abs_sum={{[-+.0-9e]+}}{{$}}

// B2T7:      blockc-run: {{.*}}awkward-sizes.mlir @forward (target cpu, threads 1 = OMP_NUM_THREADS)
// B2T7-NEXT: input    [2, 7, 72]  {{.*}}/b2t7.x.npy
// B2T7-NEXT: weights  9 tensors, 61920 parameters  {{.*}}/w.safetensors
// B2T7-NEXT: output   [2, 7, 72]  -> {{.*}}/b2t7.y.npy
// B2T7-NEXT: checksum sum={{[-+.0-9e]+}} abs_sum={{[-+.0-9e]+}}{{$}}

// B1T257:      blockc-run: {{.*}}awkward-sizes.mlir @forward (target cpu, threads 1 = OMP_NUM_THREADS)
// B1T257-NEXT: input    [1, 257, 72]  {{.*}}/b1t257.x.npy
// B1T257-NEXT: weights  9 tensors, 61920 parameters  {{.*}}/w.safetensors
// B1T257-NEXT: output   [1, 257, 72]  -> {{.*}}/b1t257.y.npy
// B1T257-NEXT: checksum sum={{[-+.0-9e]+}} abs_sum={{[-+.0-9e]+}}{{$}}
// B1T257:      flops    5.077e+07 per run,

func.func @forward(%x: tensor<?x?x72xf32>,
    %attn_norm: tensor<72xf32> {transformer.weight_name = "model.layers.0.input_layernorm.weight"},
    %wq: tensor<72x72xf32> {transformer.weight_name = "model.layers.0.self_attn.q_proj.weight"},
    %wk: tensor<72x72xf32> {transformer.weight_name = "model.layers.0.self_attn.k_proj.weight"},
    %wv: tensor<72x72xf32> {transformer.weight_name = "model.layers.0.self_attn.v_proj.weight"},
    %wo: tensor<72x72xf32> {transformer.weight_name = "model.layers.0.self_attn.o_proj.weight"},
    %ffn_norm: tensor<72xf32> {transformer.weight_name = "model.layers.0.post_attention_layernorm.weight"},
    %wgate: tensor<190x72xf32> {transformer.weight_name = "model.layers.0.mlp.gate_proj.weight"},
    %wup: tensor<190x72xf32> {transformer.weight_name = "model.layers.0.mlp.up_proj.weight"},
    %wdown: tensor<72x190xf32> {transformer.weight_name = "model.layers.0.mlp.down_proj.weight"})
    -> tensor<?x?x72xf32> {
  %y = transformer.block %x
      attn_norm(%attn_norm : tensor<72xf32>)
      q(%wq : tensor<72x72xf32>)
      k(%wk : tensor<72x72xf32>)
      v(%wv : tensor<72x72xf32>)
      o(%wo : tensor<72x72xf32>)
      ffn_norm(%ffn_norm : tensor<72xf32>)
      gate(%wgate : tensor<190x72xf32>)
      up(%wup : tensor<190x72xf32>)
      down(%wdown : tensor<72x190xf32>)
      {activation = #transformer.activation<silu>,
       num_heads = 3 : i64,
       num_kv_heads = 3 : i64,
       head_dim = 24 : i64,
       d_ff = 190 : i64,
       epsilon = 1.0e-06 : f64,
       causal,
       rope = #transformer.rope<rotate_half>,
       rope_theta = 1.0e+04 : f64}
      : tensor<?x?x72xf32>
  return %y : tensor<?x?x72xf32>
}
