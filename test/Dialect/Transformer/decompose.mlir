// RUN: blockc-opt %s -split-input-file --transformer-decompose \
// RUN:   | FileCheck %s --implicit-check-not=transformer.block \
// RUN:       --implicit-check-not=transformer.attention \
// RUN:       --implicit-check-not=transformer.ffn \
// RUN:       --implicit-check-not=transformer.rope \
// RUN:       --implicit-check-not=arith.mulf
// RUN: blockc-opt %s -split-input-file --transformer-decompose=composites=block \
// RUN:   | FileCheck %s --check-prefix=BLOCK \
// RUN:       --implicit-check-not=transformer.block \
// RUN:       --implicit-check-not=transformer.linear
// RUN: not blockc-opt %s -split-input-file --transformer-decompose=composites=bogus 2>&1 \
// RUN:   | FileCheck %s --check-prefix=ERR

// With the default composites=all no composite op is left, and every
// transformer.rope and arith.mulf in the output is matched explicitly (the
// implicit CHECK-NOTs prove there is no other). With composites=block only
// blocks are rewritten: attention and ffn sub-layers stay whole, so no
// transformer.linear may appear.

// composites is an enum option: the option parser rejects other values.
// ERR: for the --composites option: Cannot find option named 'bogus'!

// Llama-style pre-norm block: h = x + Attn(RMSNorm(x)); y = h + FFN(RMSNorm(h)).
// The block's epsilon reaches both norms.
// CHECK-LABEL: func.func @block_pre_norm
// CHECK-SAME: (%[[X:.+]]: tensor<2x4x16xf32>, %[[G1:.+]]: tensor<16xf32>, %[[WQ:.+]]: tensor<16x16xf32>, %[[WK:.+]]: tensor<8x16xf32>, %[[WV:.+]]: tensor<8x16xf32>, %[[WO:.+]]: tensor<16x16xf32>, %[[G2:.+]]: tensor<16xf32>, %[[WG:.+]]: tensor<32x16xf32>, %[[WU:.+]]: tensor<32x16xf32>, %[[WD:.+]]: tensor<16x32xf32>)
// CHECK: %[[N1:.+]] = transformer.rms_norm %[[X]], %[[G1]] {epsilon = 1.000000e-05 : f64}
// CHECK: transformer.linear %[[N1]], %[[WQ]]
// CHECK: transformer.linear %[[N1]], %[[WK]]
// CHECK: transformer.linear %[[N1]], %[[WV]]
// CHECK-COUNT-2: transformer.rope
// CHECK: transformer.sdpa {{.*}} {causal}
// CHECK: %[[A:.+]] = transformer.linear %{{[^ ]+}}, %[[WO]]
// CHECK: %[[H:.+]] = transformer.residual_add %[[X]], %[[A]]
// CHECK: %[[N2:.+]] = transformer.rms_norm %[[H]], %[[G2]] {epsilon = 1.000000e-05 : f64}
// CHECK-DAG: %[[UP:.+]] = transformer.linear %[[N2]], %[[WU]]
// CHECK-DAG: %[[GATE:.+]] = transformer.linear %[[N2]], %[[WG]]
// CHECK: %[[ACT:.+]] = transformer.activation <silu> %[[GATE]]
// CHECK: %[[MUL:.+]] = arith.mulf %[[ACT]], %[[UP]]
// CHECK: %[[F:.+]] = transformer.linear %[[MUL]], %[[WD]]
// CHECK: %[[R:.+]] = transformer.residual_add %[[H]], %[[F]]
// CHECK: return %[[R]]

// The block's attention attributes are forwarded to the sub-layer (the
// default rope_theta stays elided), and its FFN weights to the ffn.
// BLOCK-LABEL: func.func @block_pre_norm
// BLOCK-SAME: (%[[X:.+]]: tensor<2x4x16xf32>, %[[G1:.+]]: tensor<16xf32>, %[[WQ:.+]]: tensor<16x16xf32>, %[[WK:.+]]: tensor<8x16xf32>, %[[WV:.+]]: tensor<8x16xf32>, %[[WO:.+]]: tensor<16x16xf32>, %[[G2:.+]]: tensor<16xf32>, %[[WG:.+]]: tensor<32x16xf32>, %[[WU:.+]]: tensor<32x16xf32>, %[[WD:.+]]: tensor<16x32xf32>)
// BLOCK: %[[N1:.+]] = transformer.rms_norm %[[X]], %[[G1]] {epsilon = 1.000000e-05 : f64}
// BLOCK: %[[A:.+]] = transformer.attention %[[N1]] q(%[[WQ]] : tensor<16x16xf32>) k(%[[WK]] : tensor<8x16xf32>) v(%[[WV]] : tensor<8x16xf32>) o(%[[WO]] : tensor<16x16xf32>)
// BLOCK-SAME: {causal, head_dim = 4 : i64, num_heads = 4 : i64, num_kv_heads = 2 : i64, rope = #transformer.rope<rotate_half>} : tensor<2x4x16xf32>
// BLOCK: %[[H:.+]] = transformer.residual_add %[[X]], %[[A]]
// BLOCK: %[[N2:.+]] = transformer.rms_norm %[[H]], %[[G2]] {epsilon = 1.000000e-05 : f64}
// BLOCK: %[[F:.+]] = transformer.ffn %[[N2]] gate(%[[WG]] : tensor<32x16xf32>) up(%[[WU]] : tensor<32x16xf32>) down(%[[WD]] : tensor<16x32xf32>) : tensor<2x4x16xf32>
// BLOCK: %[[R:.+]] = transformer.residual_add %[[H]], %[[F]]
// BLOCK: return %[[R]]
func.func @block_pre_norm(%x: tensor<2x4x16xf32>, %g1: tensor<16xf32>, %wq: tensor<16x16xf32>, %wk: tensor<8x16xf32>, %wv: tensor<8x16xf32>, %wo: tensor<16x16xf32>, %g2: tensor<16xf32>, %wg: tensor<32x16xf32>, %wu: tensor<32x16xf32>, %wd: tensor<16x32xf32>) -> tensor<2x4x16xf32> {
  %0 = transformer.block %x attn_norm(%g1 : tensor<16xf32>) q(%wq : tensor<16x16xf32>) k(%wk : tensor<8x16xf32>) v(%wv : tensor<8x16xf32>) o(%wo : tensor<16x16xf32>) ffn_norm(%g2 : tensor<16xf32>) gate(%wg : tensor<32x16xf32>) up(%wu : tensor<32x16xf32>) down(%wd : tensor<16x32xf32>) {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 4 : i64, d_ff = 32 : i64, epsilon = 1.0e-5 : f64, causal, rope = #transformer.rope<rotate_half>} : tensor<2x4x16xf32>
  return %0 : tensor<2x4x16xf32>
}

// -----

// The 2017 post-norm block: h = LN(x + Attn(x)); y = LN(h + FFN(h)). The
// attention reads the raw input, the norm comes after the residual add, every
// bias lands in its slot, and the block's default epsilon (1e-6) is passed to
// layer_norm explicitly (layer_norm's own default is 1e-5). Dynamic B and T.
// CHECK-LABEL: func.func @block_post_norm
// CHECK-SAME: (%[[X:.+]]: tensor<?x?x16xf32>, %[[G1:.+]]: tensor<16xf32>, %[[B1:.+]]: tensor<16xf32>, %[[WQ:.+]]: tensor<16x16xf32>, %[[BQ:.+]]: tensor<16xf32>, %[[WK:.+]]: tensor<16x16xf32>, %[[BK:.+]]: tensor<16xf32>, %[[WV:.+]]: tensor<16x16xf32>, %[[BV:.+]]: tensor<16xf32>, %[[WO:.+]]: tensor<16x16xf32>, %[[BO:.+]]: tensor<16xf32>, %[[G2:.+]]: tensor<16xf32>, %[[B2:.+]]: tensor<16xf32>, %[[WU:.+]]: tensor<32x16xf32>, %[[BU:.+]]: tensor<32xf32>, %[[WD:.+]]: tensor<16x32xf32>, %[[BD:.+]]: tensor<16xf32>)
// CHECK-NOT: transformer.layer_norm
// CHECK: transformer.linear %[[X]], %[[WQ]] bias %[[BQ]]
// CHECK: transformer.linear %[[X]], %[[WK]] bias %[[BK]]
// CHECK: transformer.linear %[[X]], %[[WV]] bias %[[BV]]
// CHECK: transformer.sdpa %{{[^ ]+}}, %{{[^ ]+}}, %{{[^ ]+}} : tensor<?x?x4x4xf32>
// CHECK: %[[A:.+]] = transformer.linear %{{[^ ]+}}, %[[WO]] bias %[[BO]]
// CHECK: %[[S1:.+]] = transformer.residual_add %[[X]], %[[A]]
// CHECK: %[[H:.+]] = transformer.layer_norm %[[S1]], %[[G1]], %[[B1]] {epsilon = 9.9999999999999995E-7 : f64}
// CHECK: %[[UP:.+]] = transformer.linear %[[H]], %[[WU]] bias %[[BU]]
// CHECK: %[[ACT:.+]] = transformer.activation <relu> %[[UP]]
// CHECK: %[[F:.+]] = transformer.linear %[[ACT]], %[[WD]] bias %[[BD]]
// CHECK: %[[S2:.+]] = transformer.residual_add %[[H]], %[[F]]
// CHECK: %[[R:.+]] = transformer.layer_norm %[[S2]], %[[G2]], %[[B2]] {epsilon = 9.9999999999999995E-7 : f64}
// CHECK: return %[[R]]

// BLOCK-LABEL: func.func @block_post_norm
// BLOCK-SAME: (%[[X:.+]]: tensor<?x?x16xf32>, %[[G1:.+]]: tensor<16xf32>, %[[B1:.+]]: tensor<16xf32>, %[[WQ:.+]]: tensor<16x16xf32>, %[[BQ:.+]]: tensor<16xf32>, %[[WK:.+]]: tensor<16x16xf32>, %[[BK:.+]]: tensor<16xf32>, %[[WV:.+]]: tensor<16x16xf32>, %[[BV:.+]]: tensor<16xf32>, %[[WO:.+]]: tensor<16x16xf32>, %[[BO:.+]]: tensor<16xf32>, %[[G2:.+]]: tensor<16xf32>, %[[B2:.+]]: tensor<16xf32>, %[[WU:.+]]: tensor<32x16xf32>, %[[BU:.+]]: tensor<32xf32>, %[[WD:.+]]: tensor<16x32xf32>, %[[BD:.+]]: tensor<16xf32>)
// BLOCK-NOT: transformer.layer_norm
// BLOCK: %[[A:.+]] = transformer.attention %[[X]] q(%[[WQ]] : tensor<16x16xf32>) q_bias(%[[BQ]] : tensor<16xf32>) k(%[[WK]] : tensor<16x16xf32>) k_bias(%[[BK]] : tensor<16xf32>) v(%[[WV]] : tensor<16x16xf32>) v_bias(%[[BV]] : tensor<16xf32>) o(%[[WO]] : tensor<16x16xf32>) o_bias(%[[BO]] : tensor<16xf32>)
// BLOCK-SAME: {head_dim = 4 : i64, num_heads = 4 : i64, num_kv_heads = 4 : i64} : tensor<?x?x16xf32>
// BLOCK: %[[S1:.+]] = transformer.residual_add %[[X]], %[[A]]
// BLOCK: %[[H:.+]] = transformer.layer_norm %[[S1]], %[[G1]], %[[B1]] {epsilon = 9.9999999999999995E-7 : f64}
// BLOCK: %[[F:.+]] = transformer.ffn %[[H]] up(%[[WU]] : tensor<32x16xf32>) up_bias(%[[BU]] : tensor<32xf32>) down(%[[WD]] : tensor<16x32xf32>) down_bias(%[[BD]] : tensor<16xf32>) {activation = #transformer.activation<relu>}
// BLOCK: %[[S2:.+]] = transformer.residual_add %[[H]], %[[F]]
// BLOCK: %[[R:.+]] = transformer.layer_norm %[[S2]], %[[G2]], %[[B2]] {epsilon = 9.9999999999999995E-7 : f64}
// BLOCK: return %[[R]]
func.func @block_post_norm(%x: tensor<?x?x16xf32>, %g1: tensor<16xf32>, %b1: tensor<16xf32>, %wq: tensor<16x16xf32>, %bq: tensor<16xf32>, %wk: tensor<16x16xf32>, %bk: tensor<16xf32>, %wv: tensor<16x16xf32>, %bv: tensor<16xf32>, %wo: tensor<16x16xf32>, %bo: tensor<16xf32>, %g2: tensor<16xf32>, %b2: tensor<16xf32>, %wu: tensor<32x16xf32>, %bu: tensor<32xf32>, %wd: tensor<16x32xf32>, %bd: tensor<16xf32>) -> tensor<?x?x16xf32> {
  %0 = transformer.block %x attn_norm(%g1 : tensor<16xf32>) attn_norm_bias(%b1 : tensor<16xf32>) q(%wq : tensor<16x16xf32>) q_bias(%bq : tensor<16xf32>) k(%wk : tensor<16x16xf32>) k_bias(%bk : tensor<16xf32>) v(%wv : tensor<16x16xf32>) v_bias(%bv : tensor<16xf32>) o(%wo : tensor<16x16xf32>) o_bias(%bo : tensor<16xf32>) ffn_norm(%g2 : tensor<16xf32>) ffn_norm_bias(%b2 : tensor<16xf32>) up(%wu : tensor<32x16xf32>) up_bias(%bu : tensor<32xf32>) down(%wd : tensor<16x32xf32>) down_bias(%bd : tensor<16xf32>) {norm = #transformer.norm<layer>, norm_placement = #transformer.placement<post>, activation = #transformer.activation<relu>, num_heads = 4 : i64, num_kv_heads = 4 : i64, head_dim = 4 : i64, d_ff = 32 : i64} : tensor<?x?x16xf32>
  return %0 : tensor<?x?x16xf32>
}

// -----

// GQA attention with interleaved RoPE: three projections, a head split each
// ([B, T, H*D] -> [B, T, H, D] for q, H_kv for k and v), RoPE on q and k
// only with the layout and theta forwarded, causal sdpa with the scale,
// head merge and the output projection.
// CHECK-LABEL: func.func @attention_gqa_rope
// CHECK-SAME: (%[[X:.+]]: tensor<2x4x16xf32>, %[[WQ:.+]]: tensor<16x16xf32>, %[[WK:.+]]: tensor<8x16xf32>, %[[WV:.+]]: tensor<8x16xf32>, %[[WO:.+]]: tensor<16x16xf32>)
// CHECK: %[[Q:.+]] = transformer.linear %[[X]], %[[WQ]] : tensor<2x4x16xf32>, tensor<16x16xf32> -> tensor<2x4x16xf32>
// CHECK: %[[K:.+]] = transformer.linear %[[X]], %[[WK]] : tensor<2x4x16xf32>, tensor<8x16xf32> -> tensor<2x4x8xf32>
// CHECK: %[[V:.+]] = transformer.linear %[[X]], %[[WV]] : tensor<2x4x16xf32>, tensor<8x16xf32> -> tensor<2x4x8xf32>
// CHECK: %[[QH:.+]] = tensor.expand_shape %[[Q]] {{\[}}[0], [1], [2, 3]] output_shape [2, 4, 4, 4] : tensor<2x4x16xf32> into tensor<2x4x4x4xf32>
// CHECK: %[[KH:.+]] = tensor.expand_shape %[[K]] {{\[}}[0], [1], [2, 3]] output_shape [2, 4, 2, 4] : tensor<2x4x8xf32> into tensor<2x4x2x4xf32>
// CHECK: %[[VH:.+]] = tensor.expand_shape %[[V]] {{\[}}[0], [1], [2, 3]] output_shape [2, 4, 2, 4] : tensor<2x4x8xf32> into tensor<2x4x2x4xf32>
// CHECK: %[[QR:.+]] = transformer.rope %[[QH]] {layout = #transformer.rope<interleaved>, theta = 5.000000e+05 : f64} : tensor<2x4x4x4xf32>
// CHECK: %[[KR:.+]] = transformer.rope %[[KH]] {layout = #transformer.rope<interleaved>, theta = 5.000000e+05 : f64} : tensor<2x4x2x4xf32>
// CHECK: %[[O:.+]] = transformer.sdpa %[[QR]], %[[KR]], %[[VH]] {causal, scale = 2.500000e-01 : f64} : tensor<2x4x4x4xf32>, tensor<2x4x2x4xf32>, tensor<2x4x2x4xf32> -> tensor<2x4x4x4xf32>
// CHECK: %[[OM:.+]] = tensor.collapse_shape %[[O]] {{\[}}[0], [1], [2, 3]] : tensor<2x4x4x4xf32> into tensor<2x4x16xf32>
// CHECK: %[[R:.+]] = transformer.linear %[[OM]], %[[WO]] : tensor<2x4x16xf32>, tensor<16x16xf32> -> tensor<2x4x16xf32>
// CHECK: return %[[R]]

// BLOCK-LABEL: func.func @attention_gqa_rope
// BLOCK: %[[R:.+]] = transformer.attention
// BLOCK: return %[[R]]
func.func @attention_gqa_rope(%x: tensor<2x4x16xf32>, %wq: tensor<16x16xf32>, %wk: tensor<8x16xf32>, %wv: tensor<8x16xf32>, %wo: tensor<16x16xf32>) -> tensor<2x4x16xf32> {
  %0 = transformer.attention %x q(%wq : tensor<16x16xf32>) k(%wk : tensor<8x16xf32>) v(%wv : tensor<8x16xf32>) o(%wo : tensor<16x16xf32>) {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 4 : i64, causal, rope = #transformer.rope<interleaved>, rope_theta = 5.0e5 : f64, scale = 0.25 : f64} : tensor<2x4x16xf32>
  return %0 : tensor<2x4x16xf32>
}

// -----

// Attention without rope (no transformer.rope: see the implicit CHECK-NOT),
// non-causal and without scale (sdpa has no attributes), with every bias and
// dynamic B and T (the head split takes B and T from tensor.dim). MQA: k and
// v have a single head.
// CHECK-LABEL: func.func @attention_no_rope_biases_dynamic
// CHECK-SAME: (%[[X:.+]]: tensor<?x?x16xf32>, %[[WQ:.+]]: tensor<16x16xf32>, %[[BQ:.+]]: tensor<16xf32>, %[[WK:.+]]: tensor<4x16xf32>, %[[BK:.+]]: tensor<4xf32>, %[[WV:.+]]: tensor<4x16xf32>, %[[BV:.+]]: tensor<4xf32>, %[[WO:.+]]: tensor<16x16xf32>, %[[BO:.+]]: tensor<16xf32>)
// CHECK-DAG: %[[C0:.+]] = arith.constant 0 : index
// CHECK-DAG: %[[C1:.+]] = arith.constant 1 : index
// CHECK: %[[Q:.+]] = transformer.linear %[[X]], %[[WQ]] bias %[[BQ]] : tensor<?x?x16xf32>, tensor<16x16xf32>, tensor<16xf32> -> tensor<?x?x16xf32>
// CHECK: %[[K:.+]] = transformer.linear %[[X]], %[[WK]] bias %[[BK]] : tensor<?x?x16xf32>, tensor<4x16xf32>, tensor<4xf32> -> tensor<?x?x4xf32>
// CHECK: %[[V:.+]] = transformer.linear %[[X]], %[[WV]] bias %[[BV]] : tensor<?x?x16xf32>, tensor<4x16xf32>, tensor<4xf32> -> tensor<?x?x4xf32>
// CHECK: %[[B:.+]] = tensor.dim %[[Q]], %[[C0]]
// CHECK: %[[T:.+]] = tensor.dim %[[Q]], %[[C1]]
// CHECK: %[[QH:.+]] = tensor.expand_shape %[[Q]] {{\[}}[0], [1], [2, 3]] output_shape [%[[B]], %[[T]], 4, 4] : tensor<?x?x16xf32> into tensor<?x?x4x4xf32>
// CHECK: %[[KH:.+]] = tensor.expand_shape %[[K]] {{.*}} into tensor<?x?x1x4xf32>
// CHECK: %[[VH:.+]] = tensor.expand_shape %[[V]] {{.*}} into tensor<?x?x1x4xf32>
// CHECK: %[[O:.+]] = transformer.sdpa %[[QH]], %[[KH]], %[[VH]] : tensor<?x?x4x4xf32>, tensor<?x?x1x4xf32>, tensor<?x?x1x4xf32> -> tensor<?x?x4x4xf32>
// CHECK: %[[OM:.+]] = tensor.collapse_shape %[[O]] {{\[}}[0], [1], [2, 3]] : tensor<?x?x4x4xf32> into tensor<?x?x16xf32>
// CHECK: %[[R:.+]] = transformer.linear %[[OM]], %[[WO]] bias %[[BO]]
// CHECK: return %[[R]]

// BLOCK-LABEL: func.func @attention_no_rope_biases_dynamic
// BLOCK: %[[R:.+]] = transformer.attention
// BLOCK: return %[[R]]
func.func @attention_no_rope_biases_dynamic(%x: tensor<?x?x16xf32>, %wq: tensor<16x16xf32>, %bq: tensor<16xf32>, %wk: tensor<4x16xf32>, %bk: tensor<4xf32>, %wv: tensor<4x16xf32>, %bv: tensor<4xf32>, %wo: tensor<16x16xf32>, %bo: tensor<16xf32>) -> tensor<?x?x16xf32> {
  %0 = transformer.attention %x q(%wq : tensor<16x16xf32>) q_bias(%bq : tensor<16xf32>) k(%wk : tensor<4x16xf32>) k_bias(%bk : tensor<4xf32>) v(%wv : tensor<4x16xf32>) v_bias(%bv : tensor<4xf32>) o(%wo : tensor<16x16xf32>) o_bias(%bo : tensor<16xf32>) {num_heads = 4 : i64, num_kv_heads = 1 : i64, head_dim = 4 : i64} : tensor<?x?x16xf32>
  return %0 : tensor<?x?x16xf32>
}

// -----

// Gated FFN (GeGLU with every bias): act(x W_gate^T + b_gate) * (x W_up^T +
// b_up) through arith.mulf, then the down projection.
// CHECK-LABEL: func.func @ffn_gated
// CHECK-SAME: (%[[X:.+]]: tensor<2x4x16xf32>, %[[WG:.+]]: tensor<32x16xf32>, %[[BG:.+]]: tensor<32xf32>, %[[WU:.+]]: tensor<32x16xf32>, %[[BU:.+]]: tensor<32xf32>, %[[WD:.+]]: tensor<16x32xf32>, %[[BD:.+]]: tensor<16xf32>)
// CHECK-DAG: %[[UP:.+]] = transformer.linear %[[X]], %[[WU]] bias %[[BU]] : tensor<2x4x16xf32>, tensor<32x16xf32>, tensor<32xf32> -> tensor<2x4x32xf32>
// CHECK-DAG: %[[GATE:.+]] = transformer.linear %[[X]], %[[WG]] bias %[[BG]] : tensor<2x4x16xf32>, tensor<32x16xf32>, tensor<32xf32> -> tensor<2x4x32xf32>
// CHECK: %[[ACT:.+]] = transformer.activation <gelu> %[[GATE]] : tensor<2x4x32xf32>
// CHECK: %[[MUL:.+]] = arith.mulf %[[ACT]], %[[UP]] : tensor<2x4x32xf32>
// CHECK: %[[R:.+]] = transformer.linear %[[MUL]], %[[WD]] bias %[[BD]] : tensor<2x4x32xf32>, tensor<16x32xf32>, tensor<16xf32> -> tensor<2x4x16xf32>
// CHECK: return %[[R]]

// BLOCK-LABEL: func.func @ffn_gated
// BLOCK: %[[R:.+]] = transformer.ffn
// BLOCK: return %[[R]]
func.func @ffn_gated(%x: tensor<2x4x16xf32>, %wg: tensor<32x16xf32>, %bg: tensor<32xf32>, %wu: tensor<32x16xf32>, %bu: tensor<32xf32>, %wd: tensor<16x32xf32>, %bd: tensor<16xf32>) -> tensor<2x4x16xf32> {
  %0 = transformer.ffn %x gate(%wg : tensor<32x16xf32>) gate_bias(%bg : tensor<32xf32>) up(%wu : tensor<32x16xf32>) up_bias(%bu : tensor<32xf32>) down(%wd : tensor<16x32xf32>) down_bias(%bd : tensor<16xf32>) {activation = #transformer.activation<gelu>} : tensor<2x4x16xf32>
  return %0 : tensor<2x4x16xf32>
}

// -----

// Plain FFN (ReLU, no biases): the activation applies to the up projection
// and there is no arith.mulf (implicit CHECK-NOT). Dynamic B and T.
// CHECK-LABEL: func.func @ffn_plain
// CHECK-SAME: (%[[X:.+]]: tensor<?x?x16xf32>, %[[WU:.+]]: tensor<32x16xf32>, %[[WD:.+]]: tensor<16x32xf32>)
// CHECK: %[[UP:.+]] = transformer.linear %[[X]], %[[WU]] : tensor<?x?x16xf32>, tensor<32x16xf32> -> tensor<?x?x32xf32>
// CHECK: %[[ACT:.+]] = transformer.activation <relu> %[[UP]] : tensor<?x?x32xf32>
// CHECK: %[[R:.+]] = transformer.linear %[[ACT]], %[[WD]] : tensor<?x?x32xf32>, tensor<16x32xf32> -> tensor<?x?x16xf32>
// CHECK: return %[[R]]

// BLOCK-LABEL: func.func @ffn_plain
// BLOCK: %[[R:.+]] = transformer.ffn
// BLOCK: return %[[R]]
func.func @ffn_plain(%x: tensor<?x?x16xf32>, %wu: tensor<32x16xf32>, %wd: tensor<16x32xf32>) -> tensor<?x?x16xf32> {
  %0 = transformer.ffn %x up(%wu : tensor<32x16xf32>) down(%wd : tensor<16x32xf32>) {activation = #transformer.activation<relu>} : tensor<?x?x16xf32>
  return %0 : tensor<?x?x16xf32>
}
