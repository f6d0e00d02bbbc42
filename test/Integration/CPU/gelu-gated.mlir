// GeGLU FFN with the exact (erf) GeLU: down(gelu(gate(x)) * up(x)), with
// biases on gate/up/down (mlp_bias) but not on attention; GQA 4/2, RMSNorm,
// rotate-half RoPE. Default (Llama) weight names, including the HF names of
// the MLP biases (mlp.gate_proj.bias, ...).
//
// --scale 0.15 and --tol 1e-5 make exact and tanh GeLU distinguishable (see
// gelu-tanh-gpt2.mlir): the tanh approximation misses by ~1.2e-4 here.
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: %blockc_ref gen-weights --config %S/Inputs/gelu-gated.json --seed 1 --scale 0.15 -o %t/w.safetensors
// RUN: %blockc_ref gen-input --config %S/Inputs/gelu-gated.json --seed 2 --batch 2 --seq-len 7 -o %t/x.npy
// RUN: blockc-run %s --weights=%t/w.safetensors --input=%t/x.npy --output=%t/y.npy \
// RUN:   | FileCheck %s
// RUN: %blockc_ref run --config %S/Inputs/gelu-gated.json --weights %t/w.safetensors --input %t/x.npy -o %t/ref.npy
// RUN: %blockc_ref compare %t/y.npy %t/ref.npy --tol 1e-5

// CHECK:      blockc-run: {{.*}}gelu-gated.mlir @forward (target cpu, threads 1 = OMP_NUM_THREADS)
// CHECK-NEXT: input    [2, 7, 64]  {{.*}}/x.npy
// CHECK-NEXT: weights  12 tensors, 43520 parameters  {{.*}}/w.safetensors
// CHECK-NEXT: output   [2, 7, 64]  -> {{.*}}/y.npy
// CHECK-NEXT: checksum sum={{[-+.0-9e]+}} abs_sum={{[-+.0-9e]+}}{{$}}

func.func @forward(%x: tensor<?x?x64xf32>,
    %attn_norm: tensor<64xf32>,
    %wq: tensor<64x64xf32>,
    %wk: tensor<32x64xf32>,
    %wv: tensor<32x64xf32>,
    %wo: tensor<64x64xf32>,
    %ffn_norm: tensor<64xf32>,
    %wgate: tensor<160x64xf32>,
    %bgate: tensor<160xf32>,
    %wup: tensor<160x64xf32>,
    %bup: tensor<160xf32>,
    %wdown: tensor<64x160xf32>,
    %bdown: tensor<64xf32>)
    -> tensor<?x?x64xf32> {
  %y = transformer.block %x
      attn_norm(%attn_norm : tensor<64xf32>)
      q(%wq : tensor<64x64xf32>)
      k(%wk : tensor<32x64xf32>)
      v(%wv : tensor<32x64xf32>)
      o(%wo : tensor<64x64xf32>)
      ffn_norm(%ffn_norm : tensor<64xf32>)
      gate(%wgate : tensor<160x64xf32>)
      gate_bias(%bgate : tensor<160xf32>)
      up(%wup : tensor<160x64xf32>)
      up_bias(%bup : tensor<160xf32>)
      down(%wdown : tensor<64x160xf32>)
      down_bias(%bdown : tensor<64xf32>)
      {activation = #transformer.activation<gelu>,
       num_heads = 4 : i64,
       num_kv_heads = 2 : i64,
       head_dim = 16 : i64,
       d_ff = 160 : i64,
       epsilon = 1.0e-06 : f64,
       causal,
       rope = #transformer.rope<rotate_half>,
       rope_theta = 1.0e+04 : f64}
      : tensor<?x?x64xf32>
  return %y : tensor<?x?x64xf32>
}
