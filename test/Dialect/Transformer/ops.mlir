// RUN: blockc-opt %s | blockc-opt | FileCheck %s
// RUN: blockc-opt %s --mlir-print-op-generic | blockc-opt | FileCheck %s

// Round trip of every transformer op through the custom assembly format and
// through the generic form. Default-valued attributes (epsilon, theta,
// layout, activation, norm, norm_placement, rope_theta) must be elided when
// they hold their default, including after the generic form spelled them out.

//===----------------------------------------------------------------------===//
// rms_norm
//===----------------------------------------------------------------------===//

// The default epsilon (1e-6) is not printed.
// CHECK-LABEL: func.func @rms_norm
// CHECK-SAME: (%[[X:.+]]: tensor<2x4x16xf32>, %[[G:.+]]: tensor<16xf32>)
// CHECK: %[[R:.+]] = transformer.rms_norm %[[X]], %[[G]] : tensor<2x4x16xf32>, tensor<16xf32>
// CHECK: return %[[R]]
func.func @rms_norm(%x: tensor<2x4x16xf32>, %g: tensor<16xf32>) -> tensor<2x4x16xf32> {
  %0 = transformer.rms_norm %x, %g : tensor<2x4x16xf32>, tensor<16xf32>
  return %0 : tensor<2x4x16xf32>
}

// A non-default epsilon survives; dynamic B and T.
// CHECK-LABEL: func.func @rms_norm_epsilon_dynamic
// CHECK-SAME: (%[[X:.+]]: tensor<?x?x16xf32>, %[[G:.+]]: tensor<16xf32>)
// CHECK: transformer.rms_norm %[[X]], %[[G]] {epsilon = 1.000000e-05 : f64} : tensor<?x?x16xf32>, tensor<16xf32>
func.func @rms_norm_epsilon_dynamic(%x: tensor<?x?x16xf32>, %g: tensor<16xf32>) -> tensor<?x?x16xf32> {
  %0 = transformer.rms_norm %x, %g {epsilon = 1.0e-5 : f64} : tensor<?x?x16xf32>, tensor<16xf32>
  return %0 : tensor<?x?x16xf32>
}

// bf16 is accepted by the dialect (only the lowering is f32-only).
// CHECK-LABEL: func.func @rms_norm_bf16
// CHECK: transformer.rms_norm %{{[^ ]+}}, %{{[^ ]+}} : tensor<4x16xbf16>, tensor<16xbf16>
func.func @rms_norm_bf16(%x: tensor<4x16xbf16>, %g: tensor<16xbf16>) -> tensor<4x16xbf16> {
  %0 = transformer.rms_norm %x, %g : tensor<4x16xbf16>, tensor<16xbf16>
  return %0 : tensor<4x16xbf16>
}

//===----------------------------------------------------------------------===//
// layer_norm
//===----------------------------------------------------------------------===//

// The default epsilon (1e-5) is not printed; weight and bias keep their order.
// CHECK-LABEL: func.func @layer_norm
// CHECK-SAME: (%[[X:.+]]: tensor<2x4x16xf32>, %[[G:.+]]: tensor<16xf32>, %[[B:.+]]: tensor<16xf32>)
// CHECK: %[[R:.+]] = transformer.layer_norm %[[X]], %[[G]], %[[B]] : tensor<2x4x16xf32>, tensor<16xf32>, tensor<16xf32>
// CHECK: return %[[R]]
func.func @layer_norm(%x: tensor<2x4x16xf32>, %g: tensor<16xf32>, %b: tensor<16xf32>) -> tensor<2x4x16xf32> {
  %0 = transformer.layer_norm %x, %g, %b : tensor<2x4x16xf32>, tensor<16xf32>, tensor<16xf32>
  return %0 : tensor<2x4x16xf32>
}

// A non-default epsilon survives; dynamic B and T.
// CHECK-LABEL: func.func @layer_norm_epsilon_dynamic
// CHECK-SAME: (%[[X:.+]]: tensor<?x?x16xf32>, %[[G:.+]]: tensor<16xf32>, %[[B:.+]]: tensor<16xf32>)
// CHECK: transformer.layer_norm %[[X]], %[[G]], %[[B]] {epsilon = 9.9999999999999995E-7 : f64} : tensor<?x?x16xf32>, tensor<16xf32>, tensor<16xf32>
func.func @layer_norm_epsilon_dynamic(%x: tensor<?x?x16xf32>, %g: tensor<16xf32>, %b: tensor<16xf32>) -> tensor<?x?x16xf32> {
  %0 = transformer.layer_norm %x, %g, %b {epsilon = 1.0e-6 : f64} : tensor<?x?x16xf32>, tensor<16xf32>, tensor<16xf32>
  return %0 : tensor<?x?x16xf32>
}

//===----------------------------------------------------------------------===//
// linear
//===----------------------------------------------------------------------===//

// Without bias: no `bias` keyword and only two operand types.
// CHECK-LABEL: func.func @linear
// CHECK-SAME: (%[[X:.+]]: tensor<2x4x16xf32>, %[[W:.+]]: tensor<32x16xf32>)
// CHECK: %[[R:.+]] = transformer.linear %[[X]], %[[W]] : tensor<2x4x16xf32>, tensor<32x16xf32> -> tensor<2x4x32xf32>
// CHECK: return %[[R]]
func.func @linear(%x: tensor<2x4x16xf32>, %w: tensor<32x16xf32>) -> tensor<2x4x32xf32> {
  %0 = transformer.linear %x, %w : tensor<2x4x16xf32>, tensor<32x16xf32> -> tensor<2x4x32xf32>
  return %0 : tensor<2x4x32xf32>
}

// An f32 projection with a weight kept in bf16 (what
// transformer-compute-in-f32 leaves).
// CHECK-LABEL: func.func @linear_narrow_weight
// CHECK: transformer.linear %{{.*}}, %{{.*}} : tensor<2x16xf32>, tensor<8x16xbf16> -> tensor<2x8xf32>
func.func @linear_narrow_weight(%x: tensor<2x16xf32>, %w: tensor<8x16xbf16>) -> tensor<2x8xf32> {
  %0 = transformer.linear %x, %w : tensor<2x16xf32>, tensor<8x16xbf16> -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// With bias; dynamic B and T.
// CHECK-LABEL: func.func @linear_bias_dynamic
// CHECK-SAME: (%[[X:.+]]: tensor<?x?x16xf32>, %[[W:.+]]: tensor<32x16xf32>, %[[B:.+]]: tensor<32xf32>)
// CHECK: transformer.linear %[[X]], %[[W]] bias %[[B]] : tensor<?x?x16xf32>, tensor<32x16xf32>, tensor<32xf32> -> tensor<?x?x32xf32>
func.func @linear_bias_dynamic(%x: tensor<?x?x16xf32>, %w: tensor<32x16xf32>, %b: tensor<32xf32>) -> tensor<?x?x32xf32> {
  %0 = transformer.linear %x, %w bias %b : tensor<?x?x16xf32>, tensor<32x16xf32>, tensor<32xf32> -> tensor<?x?x32xf32>
  return %0 : tensor<?x?x32xf32>
}

// A rank-2 input is also a valid linear input (any rank >= 1).
// CHECK-LABEL: func.func @linear_rank2
// CHECK: transformer.linear %{{[^ ]+}}, %{{[^ ]+}} : tensor<4x16xf32>, tensor<8x16xf32> -> tensor<4x8xf32>
func.func @linear_rank2(%x: tensor<4x16xf32>, %w: tensor<8x16xf32>) -> tensor<4x8xf32> {
  %0 = transformer.linear %x, %w : tensor<4x16xf32>, tensor<8x16xf32> -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

//===----------------------------------------------------------------------===//
// rope
//===----------------------------------------------------------------------===//

// All defaults: rotate_half, theta 1e4, no offset, no rotary_dim.
// CHECK-LABEL: func.func @rope
// CHECK-SAME: (%[[X:.+]]: tensor<2x4x4x8xf32>)
// CHECK: %[[R:.+]] = transformer.rope %[[X]] : tensor<2x4x4x8xf32>
// CHECK: return %[[R]]
func.func @rope(%x: tensor<2x4x4x8xf32>) -> tensor<2x4x4x8xf32> {
  %0 = transformer.rope %x : tensor<2x4x4x8xf32>
  return %0 : tensor<2x4x4x8xf32>
}

// An explicit default layout is elided; the offset operand and theta survive.
// CHECK-LABEL: func.func @rope_offset_theta
// CHECK-SAME: (%[[X:.+]]: tensor<1x?x4x8xf32>, %[[POS:.+]]: index)
// CHECK: transformer.rope %[[X]] offset %[[POS]] {theta = 5.000000e+05 : f64} : tensor<1x?x4x8xf32>
func.func @rope_offset_theta(%x: tensor<1x?x4x8xf32>, %pos: index) -> tensor<1x?x4x8xf32> {
  %0 = transformer.rope %x offset %pos {theta = 5.0e5 : f64, layout = #transformer.rope<rotate_half>} : tensor<1x?x4x8xf32>
  return %0 : tensor<1x?x4x8xf32>
}

// Interleaved layout with a partial rotary_dim; dynamic B and T.
// CHECK-LABEL: func.func @rope_interleaved_partial
// CHECK-SAME: (%[[X:.+]]: tensor<?x?x4x8xf32>)
// CHECK: transformer.rope %[[X]] {layout = #transformer.rope<interleaved>, rotary_dim = 4 : i64} : tensor<?x?x4x8xf32>
func.func @rope_interleaved_partial(%x: tensor<?x?x4x8xf32>) -> tensor<?x?x4x8xf32> {
  %0 = transformer.rope %x {layout = #transformer.rope<interleaved>, rotary_dim = 4 : i64} : tensor<?x?x4x8xf32>
  return %0 : tensor<?x?x4x8xf32>
}

// Interleaved layout together with an offset.
// CHECK-LABEL: func.func @rope_interleaved_offset
// CHECK-SAME: (%[[X:.+]]: tensor<2x4x4x8xf32>, %[[POS:.+]]: index)
// CHECK: transformer.rope %[[X]] offset %[[POS]] {layout = #transformer.rope<interleaved>} : tensor<2x4x4x8xf32>
func.func @rope_interleaved_offset(%x: tensor<2x4x4x8xf32>, %pos: index) -> tensor<2x4x4x8xf32> {
  %0 = transformer.rope %x offset %pos {layout = #transformer.rope<interleaved>} : tensor<2x4x4x8xf32>
  return %0 : tensor<2x4x4x8xf32>
}

//===----------------------------------------------------------------------===//
// sdpa
//===----------------------------------------------------------------------===//

// MHA (H_kv = H), neither causal nor scale.
// CHECK-LABEL: func.func @sdpa_mha
// CHECK-SAME: (%[[Q:.+]]: tensor<2x4x4x8xf32>, %[[K:.+]]: tensor<2x6x4x8xf32>, %[[V:.+]]: tensor<2x6x4x8xf32>)
// CHECK: %[[R:.+]] = transformer.sdpa %[[Q]], %[[K]], %[[V]] : tensor<2x4x4x8xf32>, tensor<2x6x4x8xf32>, tensor<2x6x4x8xf32> -> tensor<2x4x4x8xf32>
// CHECK: return %[[R]]
func.func @sdpa_mha(%q: tensor<2x4x4x8xf32>, %k: tensor<2x6x4x8xf32>, %v: tensor<2x6x4x8xf32>) -> tensor<2x4x4x8xf32> {
  %0 = transformer.sdpa %q, %k, %v : tensor<2x4x4x8xf32>, tensor<2x6x4x8xf32>, tensor<2x6x4x8xf32> -> tensor<2x4x4x8xf32>
  return %0 : tensor<2x4x4x8xf32>
}

// GQA (4 query heads over 2 kv heads), causal.
// CHECK-LABEL: func.func @sdpa_gqa_causal
// CHECK-SAME: (%[[Q:.+]]: tensor<2x4x4x8xf32>, %[[K:.+]]: tensor<2x6x2x8xf32>, %[[V:.+]]: tensor<2x6x2x8xf32>)
// CHECK: transformer.sdpa %[[Q]], %[[K]], %[[V]] {causal} : tensor<2x4x4x8xf32>, tensor<2x6x2x8xf32>, tensor<2x6x2x8xf32> -> tensor<2x4x4x8xf32>
func.func @sdpa_gqa_causal(%q: tensor<2x4x4x8xf32>, %k: tensor<2x6x2x8xf32>, %v: tensor<2x6x2x8xf32>) -> tensor<2x4x4x8xf32> {
  %0 = transformer.sdpa %q, %k, %v {causal} : tensor<2x4x4x8xf32>, tensor<2x6x2x8xf32>, tensor<2x6x2x8xf32> -> tensor<2x4x4x8xf32>
  return %0 : tensor<2x4x4x8xf32>
}

// MQA (one kv head) with an explicit scale; dynamic B, T and S.
// CHECK-LABEL: func.func @sdpa_mqa_scale_dynamic
// CHECK-SAME: (%[[Q:.+]]: tensor<?x?x4x8xf32>, %[[K:.+]]: tensor<?x?x1x8xf32>, %[[V:.+]]: tensor<?x?x1x8xf32>)
// CHECK: transformer.sdpa %[[Q]], %[[K]], %[[V]] {scale = 1.250000e-01 : f64} : tensor<?x?x4x8xf32>, tensor<?x?x1x8xf32>, tensor<?x?x1x8xf32> -> tensor<?x?x4x8xf32>
func.func @sdpa_mqa_scale_dynamic(%q: tensor<?x?x4x8xf32>, %k: tensor<?x?x1x8xf32>, %v: tensor<?x?x1x8xf32>) -> tensor<?x?x4x8xf32> {
  %0 = transformer.sdpa %q, %k, %v {scale = 0.125 : f64} : tensor<?x?x4x8xf32>, tensor<?x?x1x8xf32>, tensor<?x?x1x8xf32> -> tensor<?x?x4x8xf32>
  return %0 : tensor<?x?x4x8xf32>
}

// Causal and scale together; the value head dim may differ from the query's.
// CHECK-LABEL: func.func @sdpa_causal_scale_value_dim
// CHECK: transformer.sdpa %{{[^ ]+}}, %{{[^ ]+}}, %{{[^ ]+}} {causal, scale = 5.000000e-01 : f64} : tensor<1x4x2x8xf32>, tensor<1x4x2x8xf32>, tensor<1x4x2x16xf32> -> tensor<1x4x2x16xf32>
func.func @sdpa_causal_scale_value_dim(%q: tensor<1x4x2x8xf32>, %k: tensor<1x4x2x8xf32>, %v: tensor<1x4x2x16xf32>) -> tensor<1x4x2x16xf32> {
  %0 = transformer.sdpa %q, %k, %v {causal, scale = 0.5 : f64} : tensor<1x4x2x8xf32>, tensor<1x4x2x8xf32>, tensor<1x4x2x16xf32> -> tensor<1x4x2x16xf32>
  return %0 : tensor<1x4x2x16xf32>
}

//===----------------------------------------------------------------------===//
// activation
//===----------------------------------------------------------------------===//

// Each of the four activation kinds keeps its keyword.
// CHECK-LABEL: func.func @activation_silu
// CHECK-SAME: (%[[X:.+]]: tensor<2x4x16xf32>)
// CHECK: %[[R:.+]] = transformer.activation <silu> %[[X]] : tensor<2x4x16xf32>
// CHECK: return %[[R]]
func.func @activation_silu(%x: tensor<2x4x16xf32>) -> tensor<2x4x16xf32> {
  %0 = transformer.activation <silu> %x : tensor<2x4x16xf32>
  return %0 : tensor<2x4x16xf32>
}

// CHECK-LABEL: func.func @activation_gelu
// CHECK: transformer.activation <gelu> %{{[^ ]+}} : tensor<?x?x16xf32>
func.func @activation_gelu(%x: tensor<?x?x16xf32>) -> tensor<?x?x16xf32> {
  %0 = transformer.activation <gelu> %x : tensor<?x?x16xf32>
  return %0 : tensor<?x?x16xf32>
}

// CHECK-LABEL: func.func @activation_gelu_tanh
// CHECK: transformer.activation <gelu_tanh> %{{[^ ]+}} : tensor<2x4x16xf32>
func.func @activation_gelu_tanh(%x: tensor<2x4x16xf32>) -> tensor<2x4x16xf32> {
  %0 = transformer.activation <gelu_tanh> %x : tensor<2x4x16xf32>
  return %0 : tensor<2x4x16xf32>
}

// CHECK-LABEL: func.func @activation_relu
// CHECK: transformer.activation <relu> %{{[^ ]+}} : tensor<2x4x16xf32>
func.func @activation_relu(%x: tensor<2x4x16xf32>) -> tensor<2x4x16xf32> {
  %0 = transformer.activation <relu> %x : tensor<2x4x16xf32>
  return %0 : tensor<2x4x16xf32>
}

//===----------------------------------------------------------------------===//
// residual_add
//===----------------------------------------------------------------------===//

// Operand order (residual, update) is preserved.
// CHECK-LABEL: func.func @residual_add
// CHECK-SAME: (%[[X:.+]]: tensor<2x4x16xf32>, %[[U:.+]]: tensor<2x4x16xf32>)
// CHECK: %[[R:.+]] = transformer.residual_add %[[X]], %[[U]] : tensor<2x4x16xf32>
// CHECK: return %[[R]]
func.func @residual_add(%x: tensor<2x4x16xf32>, %u: tensor<2x4x16xf32>) -> tensor<2x4x16xf32> {
  %0 = transformer.residual_add %x, %u : tensor<2x4x16xf32>
  return %0 : tensor<2x4x16xf32>
}

// CHECK-LABEL: func.func @residual_add_dynamic
// CHECK: transformer.residual_add %{{[^ ]+}}, %{{[^ ]+}} : tensor<?x?x16xf32>
func.func @residual_add_dynamic(%x: tensor<?x?x16xf32>, %u: tensor<?x?x16xf32>) -> tensor<?x?x16xf32> {
  %0 = transformer.residual_add %x, %u : tensor<?x?x16xf32>
  return %0 : tensor<?x?x16xf32>
}

//===----------------------------------------------------------------------===//
// ffn
//===----------------------------------------------------------------------===//

// Gated (SwiGLU) without biases; the default activation (silu) is elided.
// CHECK-LABEL: func.func @ffn_gated
// CHECK-SAME: (%[[X:.+]]: tensor<2x4x16xf32>, %[[WG:.+]]: tensor<32x16xf32>, %[[WU:.+]]: tensor<32x16xf32>, %[[WD:.+]]: tensor<16x32xf32>)
// CHECK: %[[R:.+]] = transformer.ffn %[[X]] gate(%[[WG]] : tensor<32x16xf32>) up(%[[WU]] : tensor<32x16xf32>) down(%[[WD]] : tensor<16x32xf32>) : tensor<2x4x16xf32>
// CHECK: return %[[R]]
func.func @ffn_gated(%x: tensor<2x4x16xf32>, %wg: tensor<32x16xf32>, %wu: tensor<32x16xf32>, %wd: tensor<16x32xf32>) -> tensor<2x4x16xf32> {
  %0 = transformer.ffn %x gate(%wg : tensor<32x16xf32>) up(%wu : tensor<32x16xf32>) down(%wd : tensor<16x32xf32>) {activation = #transformer.activation<silu>} : tensor<2x4x16xf32>
  return %0 : tensor<2x4x16xf32>
}

// Gated (GeGLU) with every bias.
// CHECK-LABEL: func.func @ffn_gated_all_biases
// CHECK-SAME: (%[[X:.+]]: tensor<2x4x16xf32>, %[[WG:.+]]: tensor<32x16xf32>, %[[BG:.+]]: tensor<32xf32>, %[[WU:.+]]: tensor<32x16xf32>, %[[BU:.+]]: tensor<32xf32>, %[[WD:.+]]: tensor<16x32xf32>, %[[BD:.+]]: tensor<16xf32>)
// CHECK: transformer.ffn %[[X]] gate(%[[WG]] : tensor<32x16xf32>) gate_bias(%[[BG]] : tensor<32xf32>) up(%[[WU]] : tensor<32x16xf32>) up_bias(%[[BU]] : tensor<32xf32>) down(%[[WD]] : tensor<16x32xf32>) down_bias(%[[BD]] : tensor<16xf32>) {activation = #transformer.activation<gelu>} : tensor<2x4x16xf32>
func.func @ffn_gated_all_biases(%x: tensor<2x4x16xf32>, %wg: tensor<32x16xf32>, %bg: tensor<32xf32>, %wu: tensor<32x16xf32>, %bu: tensor<32xf32>, %wd: tensor<16x32xf32>, %bd: tensor<16xf32>) -> tensor<2x4x16xf32> {
  %0 = transformer.ffn %x gate(%wg : tensor<32x16xf32>) gate_bias(%bg : tensor<32xf32>) up(%wu : tensor<32x16xf32>) up_bias(%bu : tensor<32xf32>) down(%wd : tensor<16x32xf32>) down_bias(%bd : tensor<16xf32>) {activation = #transformer.activation<gelu>} : tensor<2x4x16xf32>
  return %0 : tensor<2x4x16xf32>
}

// Gated with only the gate bias: the operand segments keep it in the gate
// slot, not the up or down slot.
// CHECK-LABEL: func.func @ffn_gated_gate_bias_only
// CHECK-SAME: (%[[X:.+]]: tensor<2x4x16xf32>, %[[WG:.+]]: tensor<32x16xf32>, %[[BG:.+]]: tensor<32xf32>, %[[WU:.+]]: tensor<32x16xf32>, %[[WD:.+]]: tensor<16x32xf32>)
// CHECK: transformer.ffn %[[X]] gate(%[[WG]] : tensor<32x16xf32>) gate_bias(%[[BG]] : tensor<32xf32>) up(%[[WU]] : tensor<32x16xf32>) down(%[[WD]] : tensor<16x32xf32>) : tensor<2x4x16xf32>
func.func @ffn_gated_gate_bias_only(%x: tensor<2x4x16xf32>, %wg: tensor<32x16xf32>, %bg: tensor<32xf32>, %wu: tensor<32x16xf32>, %wd: tensor<16x32xf32>) -> tensor<2x4x16xf32> {
  %0 = transformer.ffn %x gate(%wg : tensor<32x16xf32>) gate_bias(%bg : tensor<32xf32>) up(%wu : tensor<32x16xf32>) down(%wd : tensor<16x32xf32>) : tensor<2x4x16xf32>
  return %0 : tensor<2x4x16xf32>
}

// Plain FFN (no gate) without biases, ReLU.
// CHECK-LABEL: func.func @ffn_plain
// CHECK-SAME: (%[[X:.+]]: tensor<2x4x16xf32>, %[[WU:.+]]: tensor<32x16xf32>, %[[WD:.+]]: tensor<16x32xf32>)
// CHECK: transformer.ffn %[[X]] up(%[[WU]] : tensor<32x16xf32>) down(%[[WD]] : tensor<16x32xf32>) {activation = #transformer.activation<relu>} : tensor<2x4x16xf32>
func.func @ffn_plain(%x: tensor<2x4x16xf32>, %wu: tensor<32x16xf32>, %wd: tensor<16x32xf32>) -> tensor<2x4x16xf32> {
  %0 = transformer.ffn %x up(%wu : tensor<32x16xf32>) down(%wd : tensor<16x32xf32>) {activation = #transformer.activation<relu>} : tensor<2x4x16xf32>
  return %0 : tensor<2x4x16xf32>
}

// Plain FFN with only the up bias.
// CHECK-LABEL: func.func @ffn_plain_up_bias
// CHECK-SAME: (%[[X:.+]]: tensor<2x4x16xf32>, %[[WU:.+]]: tensor<32x16xf32>, %[[BU:.+]]: tensor<32xf32>, %[[WD:.+]]: tensor<16x32xf32>)
// CHECK: transformer.ffn %[[X]] up(%[[WU]] : tensor<32x16xf32>) up_bias(%[[BU]] : tensor<32xf32>) down(%[[WD]] : tensor<16x32xf32>) {activation = #transformer.activation<gelu_tanh>} : tensor<2x4x16xf32>
func.func @ffn_plain_up_bias(%x: tensor<2x4x16xf32>, %wu: tensor<32x16xf32>, %bu: tensor<32xf32>, %wd: tensor<16x32xf32>) -> tensor<2x4x16xf32> {
  %0 = transformer.ffn %x up(%wu : tensor<32x16xf32>) up_bias(%bu : tensor<32xf32>) down(%wd : tensor<16x32xf32>) {activation = #transformer.activation<gelu_tanh>} : tensor<2x4x16xf32>
  return %0 : tensor<2x4x16xf32>
}

// Plain FFN with only the down bias; dynamic B and T.
// CHECK-LABEL: func.func @ffn_plain_down_bias_dynamic
// CHECK-SAME: (%[[X:.+]]: tensor<?x?x16xf32>, %[[WU:.+]]: tensor<32x16xf32>, %[[WD:.+]]: tensor<16x32xf32>, %[[BD:.+]]: tensor<16xf32>)
// CHECK: transformer.ffn %[[X]] up(%[[WU]] : tensor<32x16xf32>) down(%[[WD]] : tensor<16x32xf32>) down_bias(%[[BD]] : tensor<16xf32>) : tensor<?x?x16xf32>
func.func @ffn_plain_down_bias_dynamic(%x: tensor<?x?x16xf32>, %wu: tensor<32x16xf32>, %wd: tensor<16x32xf32>, %bd: tensor<16xf32>) -> tensor<?x?x16xf32> {
  %0 = transformer.ffn %x up(%wu : tensor<32x16xf32>) down(%wd : tensor<16x32xf32>) down_bias(%bd : tensor<16xf32>) : tensor<?x?x16xf32>
  return %0 : tensor<?x?x16xf32>
}

//===----------------------------------------------------------------------===//
// attention
//===----------------------------------------------------------------------===//

// MHA without biases, RoPE, causal or scale (the 2017 attention sub-layer).
// CHECK-LABEL: func.func @attention_plain
// CHECK-SAME: (%[[X:.+]]: tensor<2x4x16xf32>, %[[WQ:.+]]: tensor<16x16xf32>, %[[WK:.+]]: tensor<16x16xf32>, %[[WV:.+]]: tensor<16x16xf32>, %[[WO:.+]]: tensor<16x16xf32>)
// CHECK: %[[R:.+]] = transformer.attention %[[X]] q(%[[WQ]] : tensor<16x16xf32>) k(%[[WK]] : tensor<16x16xf32>) v(%[[WV]] : tensor<16x16xf32>) o(%[[WO]] : tensor<16x16xf32>) {head_dim = 4 : i64, num_heads = 4 : i64, num_kv_heads = 4 : i64} : tensor<2x4x16xf32>
// CHECK: return %[[R]]
func.func @attention_plain(%x: tensor<2x4x16xf32>, %wq: tensor<16x16xf32>, %wk: tensor<16x16xf32>, %wv: tensor<16x16xf32>, %wo: tensor<16x16xf32>) -> tensor<2x4x16xf32> {
  %0 = transformer.attention %x q(%wq : tensor<16x16xf32>) k(%wk : tensor<16x16xf32>) v(%wv : tensor<16x16xf32>) o(%wo : tensor<16x16xf32>) {num_heads = 4 : i64, num_kv_heads = 4 : i64, head_dim = 4 : i64} : tensor<2x4x16xf32>
  return %0 : tensor<2x4x16xf32>
}

// GQA with rotate_half RoPE, a non-default theta, causal and scale; the
// default rope_theta would be elided, this one is kept.
// CHECK-LABEL: func.func @attention_gqa_rope
// CHECK-SAME: (%[[X:.+]]: tensor<2x4x16xf32>, %[[WQ:.+]]: tensor<16x16xf32>, %[[WK:.+]]: tensor<8x16xf32>, %[[WV:.+]]: tensor<8x16xf32>, %[[WO:.+]]: tensor<16x16xf32>)
// CHECK: transformer.attention %[[X]] q(%[[WQ]] : tensor<16x16xf32>) k(%[[WK]] : tensor<8x16xf32>) v(%[[WV]] : tensor<8x16xf32>) o(%[[WO]] : tensor<16x16xf32>)
// CHECK-SAME: {causal, head_dim = 4 : i64, num_heads = 4 : i64, num_kv_heads = 2 : i64, rope = #transformer.rope<rotate_half>, rope_theta = 5.000000e+05 : f64, scale = 2.500000e-01 : f64} : tensor<2x4x16xf32>
func.func @attention_gqa_rope(%x: tensor<2x4x16xf32>, %wq: tensor<16x16xf32>, %wk: tensor<8x16xf32>, %wv: tensor<8x16xf32>, %wo: tensor<16x16xf32>) -> tensor<2x4x16xf32> {
  %0 = transformer.attention %x q(%wq : tensor<16x16xf32>) k(%wk : tensor<8x16xf32>) v(%wv : tensor<8x16xf32>) o(%wo : tensor<16x16xf32>) {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 4 : i64, causal, rope = #transformer.rope<rotate_half>, rope_theta = 5.0e5 : f64, scale = 0.25 : f64} : tensor<2x4x16xf32>
  return %0 : tensor<2x4x16xf32>
}

// Every bias, interleaved RoPE, explicit default rope_theta (elided).
// CHECK-LABEL: func.func @attention_all_biases
// CHECK-SAME: (%[[X:.+]]: tensor<2x4x16xf32>, %[[WQ:.+]]: tensor<16x16xf32>, %[[BQ:.+]]: tensor<16xf32>, %[[WK:.+]]: tensor<8x16xf32>, %[[BK:.+]]: tensor<8xf32>, %[[WV:.+]]: tensor<8x16xf32>, %[[BV:.+]]: tensor<8xf32>, %[[WO:.+]]: tensor<16x16xf32>, %[[BO:.+]]: tensor<16xf32>)
// CHECK: transformer.attention %[[X]] q(%[[WQ]] : tensor<16x16xf32>) q_bias(%[[BQ]] : tensor<16xf32>) k(%[[WK]] : tensor<8x16xf32>) k_bias(%[[BK]] : tensor<8xf32>) v(%[[WV]] : tensor<8x16xf32>) v_bias(%[[BV]] : tensor<8xf32>) o(%[[WO]] : tensor<16x16xf32>) o_bias(%[[BO]] : tensor<16xf32>)
// CHECK-SAME: {head_dim = 4 : i64, num_heads = 4 : i64, num_kv_heads = 2 : i64, rope = #transformer.rope<interleaved>} : tensor<2x4x16xf32>
func.func @attention_all_biases(%x: tensor<2x4x16xf32>, %wq: tensor<16x16xf32>, %bq: tensor<16xf32>, %wk: tensor<8x16xf32>, %bk: tensor<8xf32>, %wv: tensor<8x16xf32>, %bv: tensor<8xf32>, %wo: tensor<16x16xf32>, %bo: tensor<16xf32>) -> tensor<2x4x16xf32> {
  %0 = transformer.attention %x q(%wq : tensor<16x16xf32>) q_bias(%bq : tensor<16xf32>) k(%wk : tensor<8x16xf32>) k_bias(%bk : tensor<8xf32>) v(%wv : tensor<8x16xf32>) v_bias(%bv : tensor<8xf32>) o(%wo : tensor<16x16xf32>) o_bias(%bo : tensor<16xf32>) {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 4 : i64, rope = #transformer.rope<interleaved>, rope_theta = 10000.0 : f64} : tensor<2x4x16xf32>
  return %0 : tensor<2x4x16xf32>
}

// MQA with only the k and v biases (segments must not shift them to q/o);
// dynamic B and T.
// CHECK-LABEL: func.func @attention_mqa_kv_biases_dynamic
// CHECK-SAME: (%[[X:.+]]: tensor<?x?x16xf32>, %[[WQ:.+]]: tensor<16x16xf32>, %[[WK:.+]]: tensor<4x16xf32>, %[[BK:.+]]: tensor<4xf32>, %[[WV:.+]]: tensor<4x16xf32>, %[[BV:.+]]: tensor<4xf32>, %[[WO:.+]]: tensor<16x16xf32>)
// CHECK: transformer.attention %[[X]] q(%[[WQ]] : tensor<16x16xf32>) k(%[[WK]] : tensor<4x16xf32>) k_bias(%[[BK]] : tensor<4xf32>) v(%[[WV]] : tensor<4x16xf32>) v_bias(%[[BV]] : tensor<4xf32>) o(%[[WO]] : tensor<16x16xf32>)
// CHECK-SAME: {causal, head_dim = 4 : i64, num_heads = 4 : i64, num_kv_heads = 1 : i64} : tensor<?x?x16xf32>
func.func @attention_mqa_kv_biases_dynamic(%x: tensor<?x?x16xf32>, %wq: tensor<16x16xf32>, %wk: tensor<4x16xf32>, %bk: tensor<4xf32>, %wv: tensor<4x16xf32>, %bv: tensor<4xf32>, %wo: tensor<16x16xf32>) -> tensor<?x?x16xf32> {
  %0 = transformer.attention %x q(%wq : tensor<16x16xf32>) k(%wk : tensor<4x16xf32>) k_bias(%bk : tensor<4xf32>) v(%wv : tensor<4x16xf32>) v_bias(%bv : tensor<4xf32>) o(%wo : tensor<16x16xf32>) {num_heads = 4 : i64, num_kv_heads = 1 : i64, head_dim = 4 : i64, causal} : tensor<?x?x16xf32>
  return %0 : tensor<?x?x16xf32>
}

//===----------------------------------------------------------------------===//
// block
//===----------------------------------------------------------------------===//

// Llama-style: pre-norm RMSNorm, GQA, RoPE, causal, SwiGLU, no biases. The
// explicit defaults (norm = rms, norm_placement = pre, activation = silu)
// are elided.
// CHECK-LABEL: func.func @block_llama
// CHECK-SAME: (%[[X:.+]]: tensor<2x4x16xf32>, %[[G1:.+]]: tensor<16xf32>, %[[WQ:.+]]: tensor<16x16xf32>, %[[WK:.+]]: tensor<8x16xf32>, %[[WV:.+]]: tensor<8x16xf32>, %[[WO:.+]]: tensor<16x16xf32>, %[[G2:.+]]: tensor<16xf32>, %[[WG:.+]]: tensor<32x16xf32>, %[[WU:.+]]: tensor<32x16xf32>, %[[WD:.+]]: tensor<16x32xf32>)
// CHECK: %[[R:.+]] = transformer.block %[[X]] attn_norm(%[[G1]] : tensor<16xf32>) q(%[[WQ]] : tensor<16x16xf32>) k(%[[WK]] : tensor<8x16xf32>) v(%[[WV]] : tensor<8x16xf32>) o(%[[WO]] : tensor<16x16xf32>) ffn_norm(%[[G2]] : tensor<16xf32>) gate(%[[WG]] : tensor<32x16xf32>) up(%[[WU]] : tensor<32x16xf32>) down(%[[WD]] : tensor<16x32xf32>)
// CHECK-SAME: {causal, d_ff = 32 : i64, epsilon = 1.000000e-05 : f64, head_dim = 4 : i64, num_heads = 4 : i64, num_kv_heads = 2 : i64, rope = #transformer.rope<rotate_half>, rope_theta = 5.000000e+05 : f64} : tensor<2x4x16xf32>
// CHECK: return %[[R]]
func.func @block_llama(%x: tensor<2x4x16xf32>, %g1: tensor<16xf32>, %wq: tensor<16x16xf32>, %wk: tensor<8x16xf32>, %wv: tensor<8x16xf32>, %wo: tensor<16x16xf32>, %g2: tensor<16xf32>, %wg: tensor<32x16xf32>, %wu: tensor<32x16xf32>, %wd: tensor<16x32xf32>) -> tensor<2x4x16xf32> {
  %0 = transformer.block %x attn_norm(%g1 : tensor<16xf32>) q(%wq : tensor<16x16xf32>) k(%wk : tensor<8x16xf32>) v(%wv : tensor<8x16xf32>) o(%wo : tensor<16x16xf32>) ffn_norm(%g2 : tensor<16xf32>) gate(%wg : tensor<32x16xf32>) up(%wu : tensor<32x16xf32>) down(%wd : tensor<16x32xf32>) {norm = #transformer.norm<rms>, norm_placement = #transformer.placement<pre>, activation = #transformer.activation<silu>, num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 4 : i64, d_ff = 32 : i64, epsilon = 1.0e-5 : f64, causal, rope = #transformer.rope<rotate_half>, rope_theta = 5.0e5 : f64} : tensor<2x4x16xf32>
  return %0 : tensor<2x4x16xf32>
}

// The 2017 block: post-norm LayerNorm with every bias, MHA without RoPE,
// plain ReLU FFN. Each optional operand must come back in its own slot.
// CHECK-LABEL: func.func @block_post_norm_all_biases
// CHECK-SAME: (%[[X:.+]]: tensor<2x4x16xf32>, %[[G1:.+]]: tensor<16xf32>, %[[B1:.+]]: tensor<16xf32>, %[[WQ:.+]]: tensor<16x16xf32>, %[[BQ:.+]]: tensor<16xf32>, %[[WK:.+]]: tensor<16x16xf32>, %[[BK:.+]]: tensor<16xf32>, %[[WV:.+]]: tensor<16x16xf32>, %[[BV:.+]]: tensor<16xf32>, %[[WO:.+]]: tensor<16x16xf32>, %[[BO:.+]]: tensor<16xf32>, %[[G2:.+]]: tensor<16xf32>, %[[B2:.+]]: tensor<16xf32>, %[[WU:.+]]: tensor<32x16xf32>, %[[BU:.+]]: tensor<32xf32>, %[[WD:.+]]: tensor<16x32xf32>, %[[BD:.+]]: tensor<16xf32>)
// CHECK: transformer.block %[[X]] attn_norm(%[[G1]] : tensor<16xf32>) attn_norm_bias(%[[B1]] : tensor<16xf32>)
// CHECK-SAME: q(%[[WQ]] : tensor<16x16xf32>) q_bias(%[[BQ]] : tensor<16xf32>) k(%[[WK]] : tensor<16x16xf32>) k_bias(%[[BK]] : tensor<16xf32>) v(%[[WV]] : tensor<16x16xf32>) v_bias(%[[BV]] : tensor<16xf32>) o(%[[WO]] : tensor<16x16xf32>) o_bias(%[[BO]] : tensor<16xf32>)
// CHECK-SAME: ffn_norm(%[[G2]] : tensor<16xf32>) ffn_norm_bias(%[[B2]] : tensor<16xf32>) up(%[[WU]] : tensor<32x16xf32>) up_bias(%[[BU]] : tensor<32xf32>) down(%[[WD]] : tensor<16x32xf32>) down_bias(%[[BD]] : tensor<16xf32>)
// CHECK-SAME: {activation = #transformer.activation<relu>, d_ff = 32 : i64, head_dim = 4 : i64, norm = #transformer.norm<layer>, norm_placement = #transformer.placement<post>, num_heads = 4 : i64, num_kv_heads = 4 : i64} : tensor<2x4x16xf32>
func.func @block_post_norm_all_biases(%x: tensor<2x4x16xf32>, %g1: tensor<16xf32>, %b1: tensor<16xf32>, %wq: tensor<16x16xf32>, %bq: tensor<16xf32>, %wk: tensor<16x16xf32>, %bk: tensor<16xf32>, %wv: tensor<16x16xf32>, %bv: tensor<16xf32>, %wo: tensor<16x16xf32>, %bo: tensor<16xf32>, %g2: tensor<16xf32>, %b2: tensor<16xf32>, %wu: tensor<32x16xf32>, %bu: tensor<32xf32>, %wd: tensor<16x32xf32>, %bd: tensor<16xf32>) -> tensor<2x4x16xf32> {
  %0 = transformer.block %x attn_norm(%g1 : tensor<16xf32>) attn_norm_bias(%b1 : tensor<16xf32>) q(%wq : tensor<16x16xf32>) q_bias(%bq : tensor<16xf32>) k(%wk : tensor<16x16xf32>) k_bias(%bk : tensor<16xf32>) v(%wv : tensor<16x16xf32>) v_bias(%bv : tensor<16xf32>) o(%wo : tensor<16x16xf32>) o_bias(%bo : tensor<16xf32>) ffn_norm(%g2 : tensor<16xf32>) ffn_norm_bias(%b2 : tensor<16xf32>) up(%wu : tensor<32x16xf32>) up_bias(%bu : tensor<32xf32>) down(%wd : tensor<16x32xf32>) down_bias(%bd : tensor<16xf32>) {norm = #transformer.norm<layer>, norm_placement = #transformer.placement<post>, activation = #transformer.activation<relu>, num_heads = 4 : i64, num_kv_heads = 4 : i64, head_dim = 4 : i64, d_ff = 32 : i64, epsilon = 1.0e-6 : f64} : tensor<2x4x16xf32>
  return %0 : tensor<2x4x16xf32>
}

// Gated block with gate and up biases only (segments of the FFN half) and
// dynamic B and T.
// CHECK-LABEL: func.func @block_dynamic_gate_bias
// CHECK-SAME: (%[[X:.+]]: tensor<?x?x16xf32>, %[[G1:.+]]: tensor<16xf32>, %[[WQ:.+]]: tensor<16x16xf32>, %[[WK:.+]]: tensor<16x16xf32>, %[[WV:.+]]: tensor<16x16xf32>, %[[WO:.+]]: tensor<16x16xf32>, %[[G2:.+]]: tensor<16xf32>, %[[WG:.+]]: tensor<32x16xf32>, %[[BG:.+]]: tensor<32xf32>, %[[WU:.+]]: tensor<32x16xf32>, %[[BU:.+]]: tensor<32xf32>, %[[WD:.+]]: tensor<16x32xf32>)
// CHECK: transformer.block %[[X]] attn_norm(%[[G1]] : tensor<16xf32>) q(%[[WQ]] : tensor<16x16xf32>) k(%[[WK]] : tensor<16x16xf32>) v(%[[WV]] : tensor<16x16xf32>) o(%[[WO]] : tensor<16x16xf32>) ffn_norm(%[[G2]] : tensor<16xf32>) gate(%[[WG]] : tensor<32x16xf32>) gate_bias(%[[BG]] : tensor<32xf32>) up(%[[WU]] : tensor<32x16xf32>) up_bias(%[[BU]] : tensor<32xf32>) down(%[[WD]] : tensor<16x32xf32>)
// CHECK-SAME: {activation = #transformer.activation<gelu>, d_ff = 32 : i64, head_dim = 4 : i64, num_heads = 4 : i64, num_kv_heads = 4 : i64} : tensor<?x?x16xf32>
func.func @block_dynamic_gate_bias(%x: tensor<?x?x16xf32>, %g1: tensor<16xf32>, %wq: tensor<16x16xf32>, %wk: tensor<16x16xf32>, %wv: tensor<16x16xf32>, %wo: tensor<16x16xf32>, %g2: tensor<16xf32>, %wg: tensor<32x16xf32>, %bg: tensor<32xf32>, %wu: tensor<32x16xf32>, %bu: tensor<32xf32>, %wd: tensor<16x32xf32>) -> tensor<?x?x16xf32> {
  %0 = transformer.block %x attn_norm(%g1 : tensor<16xf32>) q(%wq : tensor<16x16xf32>) k(%wk : tensor<16x16xf32>) v(%wv : tensor<16x16xf32>) o(%wo : tensor<16x16xf32>) ffn_norm(%g2 : tensor<16xf32>) gate(%wg : tensor<32x16xf32>) gate_bias(%bg : tensor<32xf32>) up(%wu : tensor<32x16xf32>) up_bias(%bu : tensor<32xf32>) down(%wd : tensor<16x32xf32>) {activation = #transformer.activation<gelu>, num_heads = 4 : i64, num_kv_heads = 4 : i64, head_dim = 4 : i64, d_ff = 32 : i64} : tensor<?x?x16xf32>
  return %0 : tensor<?x?x16xf32>
}

//===----------------------------------------------------------------------===//
// kv_cache_append
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @kv_cache_append
// CHECK-SAME: (%[[K:.+]]: tensor<2x1x2x8xf32>, %[[C:.+]]: tensor<2x?x2x8xf32>, %[[P:.+]]: index)
// CHECK: %[[R:.+]] = transformer.kv_cache_append %[[K]] into %[[C]] at %[[P]] : tensor<2x1x2x8xf32> into tensor<2x?x2x8xf32>
// CHECK: return %[[R]]
func.func @kv_cache_append(%k: tensor<2x1x2x8xf32>, %c: tensor<2x?x2x8xf32>, %p: index) -> tensor<2x?x2x8xf32> {
  %0 = transformer.kv_cache_append %k into %c at %p : tensor<2x1x2x8xf32> into tensor<2x?x2x8xf32>
  return %0 : tensor<2x?x2x8xf32>
}

// Dynamic batch and length on both sides, static capacity.
// CHECK-LABEL: func.func @kv_cache_append_dynamic
// CHECK: transformer.kv_cache_append %{{.*}} into %{{.*}} at %{{.*}} : tensor<?x?x1x16xf32> into tensor<?x64x1x16xf32>
func.func @kv_cache_append_dynamic(%k: tensor<?x?x1x16xf32>, %c: tensor<?x64x1x16xf32>, %p: index) -> tensor<?x64x1x16xf32> {
  %0 = transformer.kv_cache_append %k into %c at %p : tensor<?x?x1x16xf32> into tensor<?x64x1x16xf32>
  return %0 : tensor<?x64x1x16xf32>
}

//===----------------------------------------------------------------------===//
// embedding
//===----------------------------------------------------------------------===//

// A token embedding alone (Llama), and with GPT-2's position table and a
// position offset (a decode step).
// CHECK-LABEL: func.func @embedding
// CHECK: transformer.embedding %{{.+}}, %{{.+}} : tensor<?x?xi32>, tensor<300x64xbf16> -> tensor<?x?x64xbf16>
// CHECK-LABEL: func.func @embedding_positions
// CHECK-SAME: (%[[IDS:.+]]: tensor<2x5xi32>, %[[WTE:.+]]: tensor<300x64xf32>, %[[WPE:.+]]: tensor<128x64xf32>, %[[POS:.+]]: index)
// CHECK: transformer.embedding %[[IDS]], %[[WTE]] positions(%[[WPE]] : tensor<128x64xf32>) offset %[[POS]] : tensor<2x5xi32>, tensor<300x64xf32> -> tensor<2x5x64xf32>
// CHECK: transformer.embedding %[[IDS]], %[[WTE]] positions(%[[WPE]] : tensor<128x64xf32>) : tensor<2x5xi32>, tensor<300x64xf32> -> tensor<2x5x64xf32>
func.func @embedding(%ids: tensor<?x?xi32>, %wte: tensor<300x64xbf16>) -> tensor<?x?x64xbf16> {
  %0 = transformer.embedding %ids, %wte : tensor<?x?xi32>, tensor<300x64xbf16> -> tensor<?x?x64xbf16>
  return %0 : tensor<?x?x64xbf16>
}
func.func @embedding_positions(%ids: tensor<2x5xi32>, %wte: tensor<300x64xf32>, %wpe: tensor<128x64xf32>, %pos: index) -> (tensor<2x5x64xf32>, tensor<2x5x64xf32>) {
  %0 = transformer.embedding %ids, %wte positions(%wpe : tensor<128x64xf32>) offset %pos : tensor<2x5xi32>, tensor<300x64xf32> -> tensor<2x5x64xf32>
  %1 = transformer.embedding %ids, %wte positions(%wpe : tensor<128x64xf32>) : tensor<2x5xi32>, tensor<300x64xf32> -> tensor<2x5x64xf32>
  return %0, %1 : tensor<2x5x64xf32>, tensor<2x5x64xf32>
}

//===----------------------------------------------------------------------===//
// Ragged batches: per-token positions, token_positions, paged K/V pools
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @per_token_positions
// CHECK-SAME: (%[[X:.+]]: tensor<1x?x4x8xf32>, %[[P:.+]]: tensor<?xi32>, %[[IDS:.+]]: tensor<1x?xi32>, %[[WTE:.+]]: tensor<300x64xf32>, %[[WPE:.+]]: tensor<128x64xf32>)
// CHECK: transformer.rope %[[X]] positions(%[[P]] : tensor<?xi32>) {theta = 5.000000e+05 : f64} : tensor<1x?x4x8xf32>
// CHECK: transformer.embedding %[[IDS]], %[[WTE]] positions(%[[WPE]] : tensor<128x64xf32>) token_positions(%[[P]] : tensor<?xi32>) : tensor<1x?xi32>, tensor<300x64xf32> -> tensor<1x?x64xf32>
func.func @per_token_positions(%x: tensor<1x?x4x8xf32>, %p: tensor<?xi32>, %ids: tensor<1x?xi32>, %wte: tensor<300x64xf32>, %wpe: tensor<128x64xf32>) -> (tensor<1x?x4x8xf32>, tensor<1x?x64xf32>) {
  %0 = transformer.rope %x positions(%p : tensor<?xi32>) {theta = 5.0e5 : f64} : tensor<1x?x4x8xf32>
  %1 = transformer.embedding %ids, %wte positions(%wpe : tensor<128x64xf32>) token_positions(%p : tensor<?xi32>) : tensor<1x?xi32>, tensor<300x64xf32> -> tensor<1x?x64xf32>
  return %0, %1 : tensor<1x?x4x8xf32>, tensor<1x?x64xf32>
}

// CHECK-LABEL: func.func @paged
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<1x?x4x8xf32>, %[[K:[^:]+]]: tensor<1x?x2x8xf32>, %[[KP:[^:]+]]: tensor<?x16x2x8xbf16>, %[[VP:[^:]+]]: tensor<?x16x2x8xbf16>, %[[BT:[^:]+]]: tensor<?x?xi32>, %[[CU:[^:]+]]: tensor<?xi32>, %[[SP:[^:]+]]: tensor<?xi32>)
// CHECK: %[[P:.+]] = transformer.token_positions %[[CU]], %[[SP]] : tensor<?xi32>, tensor<?xi32> -> tensor<?xi32>
// CHECK: %[[W:.+]] = transformer.paged_kv_write %{{.+}} into %[[KP]], %[[BT]], %[[CU]], %[[SP]] : tensor<1x?x2x8xbf16> into tensor<?x16x2x8xbf16>, tensor<?x?xi32>, tensor<?xi32>, tensor<?xi32>
// CHECK: transformer.paged_sdpa %[[Q]], %[[W]], %[[VP]], %[[BT]], %[[CU]], %[[SP]] {scale = 2.500000e-01 : f64} : tensor<1x?x4x8xf32>, tensor<?x16x2x8xbf16>, tensor<?x16x2x8xbf16>, tensor<?x?xi32>, tensor<?xi32>, tensor<?xi32> -> tensor<1x?x4x8xf32>
func.func @paged(%q: tensor<1x?x4x8xf32>, %k: tensor<1x?x2x8xf32>, %kp: tensor<?x16x2x8xbf16>, %vp: tensor<?x16x2x8xbf16>,
    %bt: tensor<?x?xi32>, %cu: tensor<?xi32>, %sp: tensor<?xi32>) -> (tensor<?xi32>, tensor<1x?x4x8xf32>) {
  %p = transformer.token_positions %cu, %sp : tensor<?xi32>, tensor<?xi32> -> tensor<?xi32>
  %kb = arith.truncf %k : tensor<1x?x2x8xf32> to tensor<1x?x2x8xbf16>
  %w = transformer.paged_kv_write %kb into %kp, %bt, %cu, %sp : tensor<1x?x2x8xbf16> into tensor<?x16x2x8xbf16>, tensor<?x?xi32>, tensor<?xi32>, tensor<?xi32>
  %o = transformer.paged_sdpa %q, %w, %vp, %bt, %cu, %sp {scale = 0.25 : f64} : tensor<1x?x4x8xf32>, tensor<?x16x2x8xbf16>, tensor<?x16x2x8xbf16>, tensor<?x?xi32>, tensor<?xi32>, tensor<?xi32> -> tensor<1x?x4x8xf32>
  return %p, %o : tensor<?xi32>, tensor<1x?x4x8xf32>
}
