// A rank-2 input [T, d] (one sequence, no batch dimension) is run as
// [1, T, d] and written back as a rank-2 [T, d] output, which must match the
// reference (which also keeps the rank).
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: %blockc_ref gen-weights --config %S/Inputs/rank2-input.json --seed 1 -o %t/w.safetensors
// RUN: %blockc_ref gen-input --config %S/Inputs/rank2-input.json --seed 2 --batch 1 --seq-len 7 --rank2 -o %t/x.npy
// RUN: %blockc_ref info %t/x.npy | FileCheck %s --check-prefix=IN
// RUN: blockc-run %s --weights=%t/w.safetensors --input=%t/x.npy --output=%t/y.npy \
// RUN:   | FileCheck %s
// RUN: %blockc_ref info %t/y.npy | FileCheck %s --check-prefix=OUT
// RUN: %blockc_ref run --config %S/Inputs/rank2-input.json --weights %t/w.safetensors --input %t/x.npy -o %t/ref.npy
// RUN: %blockc_ref compare %t/y.npy %t/ref.npy --tol 1e-4

// IN:  <f4 [7, 32]{{$}}
// OUT: <f4 [7, 32]{{$}}

// The summary may show the [T, d] file shape or the [1, T, d] view the block
// runs on; the files themselves must be rank 2 (IN/OUT above).
// CHECK:      blockc-run: {{.*}}rank2-input.mlir @forward (target cpu, threads 1 = OMP_NUM_THREADS)
// CHECK-NEXT: input    [{{(1, )?}}7, 32]  {{.*}}/x.npy
// CHECK-NEXT: weights  9 tensors, 13376 parameters  {{.*}}/w.safetensors
// CHECK-NEXT: output   [{{(1, )?}}7, 32]  -> {{.*}}/y.npy
// CHECK-NEXT: checksum sum={{[-+.0-9e]+}} abs_sum={{[-+.0-9e]+}}{{$}}

func.func @forward(%x: tensor<?x?x32xf32>,
    %attn_norm: tensor<32xf32> {transformer.weight_name = "model.layers.0.input_layernorm.weight"},
    %wq: tensor<32x32xf32> {transformer.weight_name = "model.layers.0.self_attn.q_proj.weight"},
    %wk: tensor<32x32xf32> {transformer.weight_name = "model.layers.0.self_attn.k_proj.weight"},
    %wv: tensor<32x32xf32> {transformer.weight_name = "model.layers.0.self_attn.v_proj.weight"},
    %wo: tensor<32x32xf32> {transformer.weight_name = "model.layers.0.self_attn.o_proj.weight"},
    %ffn_norm: tensor<32xf32> {transformer.weight_name = "model.layers.0.post_attention_layernorm.weight"},
    %wgate: tensor<96x32xf32> {transformer.weight_name = "model.layers.0.mlp.gate_proj.weight"},
    %wup: tensor<96x32xf32> {transformer.weight_name = "model.layers.0.mlp.up_proj.weight"},
    %wdown: tensor<32x96xf32> {transformer.weight_name = "model.layers.0.mlp.down_proj.weight"})
    -> tensor<?x?x32xf32> {
  %y = transformer.block %x
      attn_norm(%attn_norm : tensor<32xf32>)
      q(%wq : tensor<32x32xf32>)
      k(%wk : tensor<32x32xf32>)
      v(%wv : tensor<32x32xf32>)
      o(%wo : tensor<32x32xf32>)
      ffn_norm(%ffn_norm : tensor<32xf32>)
      gate(%wgate : tensor<96x32xf32>)
      up(%wup : tensor<96x32xf32>)
      down(%wdown : tensor<32x96xf32>)
      {activation = #transformer.activation<silu>,
       num_heads = 2 : i64,
       num_kv_heads = 2 : i64,
       head_dim = 16 : i64,
       d_ff = 96 : i64,
       epsilon = 1.0e-06 : f64,
       causal,
       rope = #transformer.rope<rotate_half>,
       rope_theta = 1.0e+04 : f64}
      : tensor<?x?x32xf32>
  return %y : tensor<?x?x32xf32>
}
