// RUN: blockc-opt %s --transformer-derive-decode | FileCheck %s
// RUN: blockc-opt %s --transformer-derive-decode=entry=two_layers | FileCheck %s --check-prefix=TWO
// RUN: blockc-opt %s --transformer-derive-decode="entry=two_layers kv-layout=bshd" | FileCheck %s --check-prefix=BSHD
// RUN: not blockc-opt %s --transformer-derive-decode="kv-layout=sbhd" 2>&1 | FileCheck %s --check-prefix=LAYOUT
// RUN: not blockc-opt %s --pass-pipeline="builtin.module(transformer-derive-decode{kv-layout=sbhd})" 2>&1 | FileCheck %s --check-prefixes=LAYOUT,PIPELINE

// kv-layout is an enum option: the option parser rejects other values
// before the pass runs.
// LAYOUT: for the --kv-layout option: Cannot find option named 'sbhd'!
// PIPELINE: failed to add `transformer-derive-decode` with options `kv-layout=sbhd`

// Two stacked attention sub-layers (MHA, then GQA without RoPE): the decode
// entry takes the position after the weights, then K and V caches per layer
// in program order (head-major by default: the buffer layout puts element
// (b, s, h, d) at b * sB + h * sH + s * D + d), rotates at the absolute positions, appends to the
// caches and attends over the first pos + T rows.

// The forward function is unchanged.
// CHECK-LABEL: func.func @forward(
// CHECK-SAME: -> tensor<?x?x16xf32>
// CHECK-NOT: kv_cache_append
// CHECK: return

// CHECK-LABEL: func.func @forward_decode(
// CHECK-SAME: %[[X:[^:]+]]: tensor<?x?x16xf32>
// CHECK-SAME: %[[POS:[^:]+]]: index {transformer.kv_position}
// CHECK-SAME: %[[K0:[^:]+]]: tensor<?x?x4x4xf32> {bufferization.buffer_layout = strided<[?, 4, ?, 1], offset: ?>, transformer.kv_cache = #transformer.kv_cache<key>, transformer.kv_layout = #transformer.kv_layout<bhsd>, transformer.layer = 0 : i64}
// CHECK-SAME: %[[V0:[^:]+]]: tensor<?x?x4x4xf32> {bufferization.buffer_layout = strided<[?, 4, ?, 1], offset: ?>, transformer.kv_cache = #transformer.kv_cache<value>, transformer.kv_layout = #transformer.kv_layout<bhsd>, transformer.layer = 0 : i64}
// CHECK-SAME: %[[K1:[^:]+]]: tensor<?x?x2x4xf32> {bufferization.buffer_layout = strided<[?, 4, ?, 1], offset: ?>, transformer.kv_cache = #transformer.kv_cache<key>, transformer.kv_layout = #transformer.kv_layout<bhsd>, transformer.layer = 1 : i64}
// CHECK-SAME: %[[V1:[^:]+]]: tensor<?x?x2x4xf32> {bufferization.buffer_layout = strided<[?, 4, ?, 1], offset: ?>, transformer.kv_cache = #transformer.kv_cache<value>, transformer.kv_layout = #transformer.kv_layout<bhsd>, transformer.layer = 1 : i64})
// CHECK-SAME: -> (tensor<?x?x16xf32>, tensor<?x?x4x4xf32>, tensor<?x?x4x4xf32>, tensor<?x?x2x4xf32>, tensor<?x?x2x4xf32>)
// CHECK: %[[Q:.+]] = transformer.rope %{{.+}} offset %[[POS]] {theta = 5.000000e+05 : f64} : tensor<?x?x4x4xf32>
// CHECK: %[[K:.+]] = transformer.rope %{{.+}} offset %[[POS]] {theta = 5.000000e+05 : f64} : tensor<?x?x4x4xf32>
// CHECK: %[[KC0:.+]] = transformer.kv_cache_append %[[K]] into %[[K0]] at %[[POS]] : tensor<?x?x4x4xf32> into tensor<?x?x4x4xf32>
// CHECK: %[[B:.+]] = tensor.dim %[[K]], %{{.+}} : tensor<?x?x4x4xf32>
// CHECK: %[[T:.+]] = tensor.dim %[[K]], %{{.+}} : tensor<?x?x4x4xf32>
// CHECK: %[[S:.+]] = arith.addi %[[POS]], %[[T]] : index
// CHECK: %[[KS:.+]] = tensor.extract_slice %[[KC0]][0, 0, 0, 0] [%[[B]], %[[S]], 4, 4] [1, 1, 1, 1]
// CHECK: %[[VC0:.+]] = transformer.kv_cache_append %{{.+}} into %[[V0]] at %[[POS]]
// CHECK: %[[VS:.+]] = tensor.extract_slice %[[VC0]][0, 0, 0, 0]
// CHECK: transformer.sdpa %[[Q]], %[[KS]], %[[VS]] {causal}
// The second layer has no RoPE: no rope op, its own caches.
// CHECK-NOT: transformer.rope
// CHECK: %[[KC1:.+]] = transformer.kv_cache_append %{{.+}} into %[[K1]] at %[[POS]] : tensor<?x?x2x4xf32> into tensor<?x?x2x4xf32>
// CHECK: %[[VC1:.+]] = transformer.kv_cache_append %{{.+}} into %[[V1]] at %[[POS]]
// CHECK: transformer.sdpa
// CHECK: return %{{.+}}, %[[KC0]], %[[VC0]], %[[KC1]], %[[VC1]] :
func.func @forward(%x: tensor<?x?x16xf32>,
    %wq: tensor<16x16xf32>, %wk: tensor<16x16xf32>, %wv: tensor<16x16xf32>, %wo: tensor<16x16xf32>,
    %wq1: tensor<16x16xf32>, %wk1: tensor<8x16xf32>, %wv1: tensor<8x16xf32>, %wo1: tensor<16x16xf32>)
    -> tensor<?x?x16xf32> {
  %a = transformer.attention %x q(%wq : tensor<16x16xf32>) k(%wk : tensor<16x16xf32>)
      v(%wv : tensor<16x16xf32>) o(%wo : tensor<16x16xf32>)
      {num_heads = 4 : i64, num_kv_heads = 4 : i64, head_dim = 4 : i64, causal,
       rope = #transformer.rope<rotate_half>, rope_theta = 5.0e5 : f64} : tensor<?x?x16xf32>
  %b = transformer.attention %a q(%wq1 : tensor<16x16xf32>) k(%wk1 : tensor<8x16xf32>)
      v(%wv1 : tensor<8x16xf32>) o(%wo1 : tensor<16x16xf32>)
      {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 4 : i64, causal} : tensor<?x?x16xf32>
  return %b : tensor<?x?x16xf32>
}

// A static batch gives caches with that batch; an existing RoPE offset is
// added to the position. Selected with entry=.
// TWO-LABEL: func.func @two_layers_decode(
// TWO-SAME: %[[POS:[^:]+]]: index {transformer.kv_position}
// TWO-SAME: tensor<2x?x1x8xf32> {bufferization.buffer_layout = strided<[?, 8, ?, 1], offset: ?>, transformer.kv_cache = #transformer.kv_cache<key>, transformer.kv_layout = #transformer.kv_layout<bhsd>, transformer.layer = 0 : i64}
// TWO-SAME: tensor<2x?x1x8xf32> {bufferization.buffer_layout = strided<[?, 8, ?, 1], offset: ?>, transformer.kv_cache = #transformer.kv_cache<value>, transformer.kv_layout = #transformer.kv_layout<bhsd>, transformer.layer = 0 : i64})
// TWO: %[[OFF:.+]] = arith.addi %{{.+}}, %[[POS]] : index
// TWO: transformer.rope %{{.+}} offset %[[OFF]]
// TWO: transformer.kv_cache_append %{{.+}} into %{{.+}} at %[[POS]] : tensor<2x?x1x8xf32> into tensor<2x?x1x8xf32>
// kv-layout=bshd: token-major caches, the tensor's own row-major order (no
// buffer layout attribute).
// BSHD-LABEL: func.func @two_layers_decode(
// BSHD-SAME: tensor<2x?x1x8xf32> {transformer.kv_cache = #transformer.kv_cache<key>, transformer.kv_layout = #transformer.kv_layout<bshd>, transformer.layer = 0 : i64}
// BSHD-SAME: tensor<2x?x1x8xf32> {transformer.kv_cache = #transformer.kv_cache<value>, transformer.kv_layout = #transformer.kv_layout<bshd>, transformer.layer = 0 : i64})
func.func @two_layers(%q: tensor<2x?x2x8xf32>, %k: tensor<2x?x1x8xf32>, %v: tensor<2x?x1x8xf32>, %off: index) -> tensor<2x?x2x8xf32> {
  %kr = transformer.rope %k offset %off : tensor<2x?x1x8xf32>
  %o = transformer.sdpa %q, %kr, %v {causal} : tensor<2x?x2x8xf32>, tensor<2x?x1x8xf32>, tensor<2x?x1x8xf32> -> tensor<2x?x2x8xf32>
  return %o : tensor<2x?x2x8xf32>
}
