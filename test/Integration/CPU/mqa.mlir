// Multi-query attention: 4 query heads, one K/V head (k/v projections are
// [16, 64]). The block sits in layer 3 (transformer.layer = 3) and its
// arguments have no explicit names, so the weights bind by the default names
// model.layers.3.* (the reference config has "layer": 3).
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: %blockc_ref gen-weights --config %S/Inputs/mqa.json --seed 1 -o %t/w.safetensors
// RUN: %blockc_ref gen-input --config %S/Inputs/mqa.json --seed 2 --batch 2 --seq-len 7 -o %t/x.npy
// RUN: blockc-run %s --weights=%t/w.safetensors --input=%t/x.npy --output=%t/y.npy \
// RUN:   | FileCheck %s
// RUN: %blockc_ref run --config %S/Inputs/mqa.json --weights %t/w.safetensors --input %t/x.npy -o %t/ref.npy
// RUN: %blockc_ref compare %t/y.npy %t/ref.npy --tol 1e-4

// CHECK:      blockc-run: {{.*}}mqa.mlir @forward (target cpu, threads 1 = OMP_NUM_THREADS)
// CHECK-NEXT: input    [2, 7, 64]  {{.*}}/x.npy
// CHECK-NEXT: weights  9 tensors, 34944 parameters  {{.*}}/w.safetensors
// CHECK-NEXT: output   [2, 7, 64]  -> {{.*}}/y.npy
// CHECK-NEXT: checksum sum={{[-+.0-9e]+}} abs_sum={{[-+.0-9e]+}}{{$}}

func.func @forward(%x: tensor<?x?x64xf32>,
    %attn_norm: tensor<64xf32>,
    %wq: tensor<64x64xf32>,
    %wk: tensor<16x64xf32>,
    %wv: tensor<16x64xf32>,
    %wo: tensor<64x64xf32>,
    %ffn_norm: tensor<64xf32>,
    %wgate: tensor<128x64xf32>,
    %wup: tensor<128x64xf32>,
    %wdown: tensor<64x128xf32>)
    -> tensor<?x?x64xf32> {
  %y = transformer.block %x
      attn_norm(%attn_norm : tensor<64xf32>)
      q(%wq : tensor<64x64xf32>)
      k(%wk : tensor<16x64xf32>)
      v(%wv : tensor<16x64xf32>)
      o(%wo : tensor<64x64xf32>)
      ffn_norm(%ffn_norm : tensor<64xf32>)
      gate(%wgate : tensor<128x64xf32>)
      up(%wup : tensor<128x64xf32>)
      down(%wdown : tensor<64x128xf32>)
      {activation = #transformer.activation<silu>,
       num_heads = 4 : i64,
       num_kv_heads = 1 : i64,
       head_dim = 16 : i64,
       d_ff = 128 : i64,
       epsilon = 1.0e-06 : f64,
       causal,
       rope = #transformer.rope<rotate_half>,
       rope_theta = 1.0e+04 : f64,
       transformer.layer = 3 : i64}
      : tensor<?x?x64xf32>
  return %y : tensor<?x?x64xf32>
}
