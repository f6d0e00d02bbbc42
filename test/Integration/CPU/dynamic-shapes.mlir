// One model with dynamic batch and sequence dims (tensor<?x?x48xf32>) and one
// weights file, run at four input shapes: T = 3 and T = 9, each with B = 1 and
// B = 2. Pre-norm LayerNorm, GQA 4/2 with head_dim 12, SwiGLU, default weight
// names.
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: %blockc_ref gen-weights --config %S/Inputs/dynamic-shapes.json --seed 1 -o %t/w.safetensors
// RUN: %blockc_ref gen-input --config %S/Inputs/dynamic-shapes.json --seed 1003 --batch 1 --seq-len 3 -o %t/b1t3.x.npy
// RUN: blockc-run %s --weights=%t/w.safetensors --input=%t/b1t3.x.npy --output=%t/b1t3.y.npy \
// RUN:   | FileCheck %s --check-prefix=B1T3
// RUN: %blockc_ref run --config %S/Inputs/dynamic-shapes.json --weights %t/w.safetensors --input %t/b1t3.x.npy -o %t/b1t3.ref.npy
// RUN: %blockc_ref compare %t/b1t3.y.npy %t/b1t3.ref.npy --tol 1e-4
// RUN: %blockc_ref gen-input --config %S/Inputs/dynamic-shapes.json --seed 1009 --batch 1 --seq-len 9 -o %t/b1t9.x.npy
// RUN: blockc-run %s --weights=%t/w.safetensors --input=%t/b1t9.x.npy --output=%t/b1t9.y.npy \
// RUN:   | FileCheck %s --check-prefix=B1T9
// RUN: %blockc_ref run --config %S/Inputs/dynamic-shapes.json --weights %t/w.safetensors --input %t/b1t9.x.npy -o %t/b1t9.ref.npy
// RUN: %blockc_ref compare %t/b1t9.y.npy %t/b1t9.ref.npy --tol 1e-4
// RUN: %blockc_ref gen-input --config %S/Inputs/dynamic-shapes.json --seed 2003 --batch 2 --seq-len 3 -o %t/b2t3.x.npy
// RUN: blockc-run %s --weights=%t/w.safetensors --input=%t/b2t3.x.npy --output=%t/b2t3.y.npy \
// RUN:   | FileCheck %s --check-prefix=B2T3
// RUN: %blockc_ref run --config %S/Inputs/dynamic-shapes.json --weights %t/w.safetensors --input %t/b2t3.x.npy -o %t/b2t3.ref.npy
// RUN: %blockc_ref compare %t/b2t3.y.npy %t/b2t3.ref.npy --tol 1e-4
// RUN: %blockc_ref gen-input --config %S/Inputs/dynamic-shapes.json --seed 2009 --batch 2 --seq-len 9 -o %t/b2t9.x.npy
// RUN: blockc-run %s --weights=%t/w.safetensors --input=%t/b2t9.x.npy --output=%t/b2t9.y.npy \
// RUN:   | FileCheck %s --check-prefix=B2T9
// RUN: %blockc_ref run --config %S/Inputs/dynamic-shapes.json --weights %t/w.safetensors --input %t/b2t9.x.npy -o %t/b2t9.ref.npy
// RUN: %blockc_ref compare %t/b2t9.y.npy %t/b2t9.ref.npy --tol 1e-4

// B1T3:      input    [1, 3, 48]  {{.*}}/b1t3.x.npy
// B1T3-NEXT: weights  11 tensors, 25536 parameters  {{.*}}/w.safetensors
// B1T3-NEXT: output   [1, 3, 48]  -> {{.*}}/b1t3.y.npy
// B1T3-NEXT: checksum sum={{[-+.0-9e]+}} abs_sum={{[-+.0-9e]+}}{{$}}

// B1T9:      input    [1, 9, 48]  {{.*}}/b1t9.x.npy
// B1T9-NEXT: weights  11 tensors, 25536 parameters  {{.*}}/w.safetensors
// B1T9-NEXT: output   [1, 9, 48]  -> {{.*}}/b1t9.y.npy
// B1T9-NEXT: checksum sum={{[-+.0-9e]+}} abs_sum={{[-+.0-9e]+}}{{$}}

// B2T3:      input    [2, 3, 48]  {{.*}}/b2t3.x.npy
// B2T3-NEXT: weights  11 tensors, 25536 parameters  {{.*}}/w.safetensors
// B2T3-NEXT: output   [2, 3, 48]  -> {{.*}}/b2t3.y.npy
// B2T3-NEXT: checksum sum={{[-+.0-9e]+}} abs_sum={{[-+.0-9e]+}}{{$}}

// B2T9:      input    [2, 9, 48]  {{.*}}/b2t9.x.npy
// B2T9-NEXT: weights  11 tensors, 25536 parameters  {{.*}}/w.safetensors
// B2T9-NEXT: output   [2, 9, 48]  -> {{.*}}/b2t9.y.npy
// B2T9-NEXT: checksum sum={{[-+.0-9e]+}} abs_sum={{[-+.0-9e]+}}{{$}}

func.func @forward(%x: tensor<?x?x48xf32>,
    %attn_norm: tensor<48xf32>,
    %attn_norm_b: tensor<48xf32>,
    %wq: tensor<48x48xf32>,
    %wk: tensor<24x48xf32>,
    %wv: tensor<24x48xf32>,
    %wo: tensor<48x48xf32>,
    %ffn_norm: tensor<48xf32>,
    %ffn_norm_b: tensor<48xf32>,
    %wgate: tensor<128x48xf32>,
    %wup: tensor<128x48xf32>,
    %wdown: tensor<48x128xf32>)
    -> tensor<?x?x48xf32> {
  %y = transformer.block %x
      attn_norm(%attn_norm : tensor<48xf32>)
      attn_norm_bias(%attn_norm_b : tensor<48xf32>)
      q(%wq : tensor<48x48xf32>)
      k(%wk : tensor<24x48xf32>)
      v(%wv : tensor<24x48xf32>)
      o(%wo : tensor<48x48xf32>)
      ffn_norm(%ffn_norm : tensor<48xf32>)
      ffn_norm_bias(%ffn_norm_b : tensor<48xf32>)
      gate(%wgate : tensor<128x48xf32>)
      up(%wup : tensor<128x48xf32>)
      down(%wdown : tensor<48x128xf32>)
      {norm = #transformer.norm<layer>,
       activation = #transformer.activation<silu>,
       num_heads = 4 : i64,
       num_kv_heads = 2 : i64,
       head_dim = 12 : i64,
       d_ff = 128 : i64,
       epsilon = 1.0e-06 : f64,
       causal,
       rope = #transformer.rope<rotate_half>,
       rope_theta = 1.0e+04 : f64}
      : tensor<?x?x48xf32>
  return %y : tensor<?x?x48xf32>
}
