// Llama-style decoder block, multi-head attention (H = H_kv = 4, D = 16):
// pre-norm RMSNorm, rotate-half RoPE, SwiGLU FFN, no biases, causal.
// The weight arguments carry no transformer.weight_name, so they bind by the
// default Hugging Face Llama names (model.layers.0.*) derived from their
// block operand roles.
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: %blockc_ref gen-weights --config %S/Inputs/llama-mha.json --seed 1 -o %t/w.safetensors
// RUN: %blockc_ref gen-input --config %S/Inputs/llama-mha.json --seed 2 --batch 2 --seq-len 7 -o %t/x.npy
// RUN: blockc-run %s --weights=%t/w.safetensors --input=%t/x.npy --output=%t/y.npy \
// RUN:   | FileCheck %s
// RUN: %blockc_ref run --config %S/Inputs/llama-mha.json --weights %t/w.safetensors --input %t/x.npy -o %t/ref.npy
// RUN: %blockc_ref compare %t/y.npy %t/ref.npy --tol 1e-4
// Ten timed runs of the same compiled code must give bit-identical output
// (e.g. nothing accumulates into the output buffer across calls).
// RUN: blockc-run %s --weights=%t/w.safetensors --input=%t/x.npy --output=%t/y10.npy --repeat=10 \
// RUN:   | FileCheck %s --check-prefix=REPEAT
// RUN: cmp %t/y.npy %t/y10.npy

// CHECK:      blockc-run: {{.*}}llama-mha.mlir @forward (target cpu, threads 1 = OMP_NUM_THREADS)
// CHECK-NEXT: input    [2, 7, 64]  {{.*}}/x.npy
// CHECK-NEXT: weights  9 tensors, 50304 parameters  {{.*}}/w.safetensors
// CHECK-NEXT: output   [2, 7, 64]  -> {{.*}}/y.npy
// CHECK-NEXT: checksum sum={{[-+.0-9e]+}} abs_sum={{[-+.0-9e]+}}{{$}}
// REPEAT: output   [2, 7, 64]  -> {{.*}}/y10.npy
// REPEAT: run      median {{.*}} over 10 runs (min {{.*}})

func.func @forward(%x: tensor<?x?x64xf32>,
    %attn_norm: tensor<64xf32>,
    %wq: tensor<64x64xf32>,
    %wk: tensor<64x64xf32>,
    %wv: tensor<64x64xf32>,
    %wo: tensor<64x64xf32>,
    %ffn_norm: tensor<64xf32>,
    %wgate: tensor<176x64xf32>,
    %wup: tensor<176x64xf32>,
    %wdown: tensor<64x176xf32>)
    -> tensor<?x?x64xf32> {
  %y = transformer.block %x
      attn_norm(%attn_norm : tensor<64xf32>)
      q(%wq : tensor<64x64xf32>)
      k(%wk : tensor<64x64xf32>)
      v(%wv : tensor<64x64xf32>)
      o(%wo : tensor<64x64xf32>)
      ffn_norm(%ffn_norm : tensor<64xf32>)
      gate(%wgate : tensor<176x64xf32>)
      up(%wup : tensor<176x64xf32>)
      down(%wdown : tensor<64x176xf32>)
      {activation = #transformer.activation<silu>,
       num_heads = 4 : i64,
       num_kv_heads = 4 : i64,
       head_dim = 16 : i64,
       d_ff = 176 : i64,
       epsilon = 1.0e-06 : f64,
       causal,
       rope = #transformer.rope<rotate_half>,
       rope_theta = 1.0e+04 : f64}
      : tensor<?x?x64xf32>
  return %y : tensor<?x?x64xf32>
}
