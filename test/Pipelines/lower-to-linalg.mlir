// RUN: blockc-opt %s --blockc-lower-to-linalg-pipeline | FileCheck %s --implicit-check-not=transformer.
// RUN: blockc-opt %s --blockc-lower-to-linalg-pipeline | not grep -E 'arith.mulf .*: tensor<'

// Stage 1 on a whole post-norm block with biases: nothing of the transformer
// dialect is left, and the gated FFN's tensor-level arith.mulf became a
// linalg.generic (convert-elementwise-to-linalg).
// CHECK-LABEL: func.func @block
// Post-norm order: attention on the raw input, then norm 1, the FFN (exact
// GeLU), then norm 2.
// CHECK: tensor.expand_shape
// CHECK: linalg.generic
// CHECK: math.exp
// CHECK: tensor.collapse_shape
// CHECK: math.rsqrt
// CHECK: math.erf
// CHECK: math.rsqrt
// CHECK: return
func.func @block(%x: tensor<?x?x16xf32>, %g1: tensor<16xf32>, %b1: tensor<16xf32>,
    %wq: tensor<16x16xf32>, %wk: tensor<16x16xf32>, %wv: tensor<16x16xf32>,
    %wo: tensor<16x16xf32>, %bo: tensor<16xf32>, %g2: tensor<16xf32>,
    %b2: tensor<16xf32>, %wg: tensor<32x16xf32>, %wu: tensor<32x16xf32>,
    %wd: tensor<16x32xf32>) -> tensor<?x?x16xf32> {
  %y = transformer.block %x attn_norm(%g1 : tensor<16xf32>)
      attn_norm_bias(%b1 : tensor<16xf32>) q(%wq : tensor<16x16xf32>)
      k(%wk : tensor<16x16xf32>) v(%wv : tensor<16x16xf32>)
      o(%wo : tensor<16x16xf32>) o_bias(%bo : tensor<16xf32>)
      ffn_norm(%g2 : tensor<16xf32>) ffn_norm_bias(%b2 : tensor<16xf32>)
      gate(%wg : tensor<32x16xf32>) up(%wu : tensor<32x16xf32>)
      down(%wd : tensor<16x32xf32>)
      {norm = #transformer.norm<layer>, norm_placement = #transformer.placement<post>,
       activation = #transformer.activation<gelu>, num_heads = 2 : i64,
       num_kv_heads = 2 : i64, head_dim = 8 : i64, d_ff = 32 : i64}
      : tensor<?x?x16xf32>
  return %y : tensor<?x?x16xf32>
}
