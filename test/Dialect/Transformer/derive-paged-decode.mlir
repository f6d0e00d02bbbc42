// RUN: blockc-opt %s -split-input-file --transformer-derive-paged-decode | FileCheck %s
// RUN: blockc-opt %s -split-input-file --transformer-derive-paged-decode="page-size=4 keep-entry=false" | FileCheck %s --check-prefix=S4

// Two attention sub-layers (MHA with RoPE, then GQA without): the paged
// entry takes the packed tokens [total, d], the weights, cu_seqlens, the
// cached lengths and the block table, then the K and V page pools of each
// layer in program order; every rope reads the per-token positions and every
// attention writes its new rows into the pages before attending over them.

// The forward function is unchanged (and removed with keep-entry=false).
// CHECK-LABEL: func.func @forward(
// CHECK-NOT: transformer.paged
// CHECK: return
// S4-NOT: func.func @forward(

// CHECK-LABEL: func.func @forward_paged(
// CHECK-SAME: %[[X:[^:]+]]: tensor<?x16xf32>
// CHECK-SAME: %[[CU:[^:]+]]: tensor<?xi32> {transformer.seq_offsets}
// CHECK-SAME: %[[SP:[^:]+]]: tensor<?xi32> {transformer.seq_positions}
// CHECK-SAME: %[[BT:[^:]+]]: tensor<?x?xi32> {transformer.block_table}
// CHECK-SAME: %[[K0:[^:]+]]: tensor<?x16x4x4xf32> {transformer.kv_cache = #transformer.kv_cache<key>, transformer.layer = 0 : i64, transformer.page_size = 16 : i64}
// CHECK-SAME: %[[V0:[^:]+]]: tensor<?x16x4x4xf32> {transformer.kv_cache = #transformer.kv_cache<value>, transformer.layer = 0 : i64, transformer.page_size = 16 : i64}
// CHECK-SAME: %[[K1:[^:]+]]: tensor<?x16x2x4xf32> {transformer.kv_cache = #transformer.kv_cache<key>, transformer.layer = 1 : i64, transformer.page_size = 16 : i64}
// CHECK-SAME: %[[V1:[^:]+]]: tensor<?x16x2x4xf32> {transformer.kv_cache = #transformer.kv_cache<value>, transformer.layer = 1 : i64, transformer.page_size = 16 : i64})
// CHECK-SAME: -> (tensor<?x16xf32>, tensor<?x16x4x4xf32>, tensor<?x16x4x4xf32>, tensor<?x16x2x4xf32>, tensor<?x16x2x4xf32>)
// CHECK: %[[XB:.+]] = tensor.expand_shape %[[X]] {{\[}}[0, 1], [2]] output_shape [1, %{{.+}}, 16] : tensor<?x16xf32> into tensor<1x?x16xf32>
// CHECK: %[[XC:.+]] = tensor.cast %[[XB]] : tensor<1x?x16xf32> to tensor<?x?x16xf32>
// CHECK: %[[P:.+]] = transformer.token_positions %[[CU]], %[[SP]] : tensor<?xi32>, tensor<?xi32> -> tensor<?xi32>
// CHECK: transformer.linear %[[XC]]
// CHECK: %[[Q:.+]] = transformer.rope %{{.+}} positions(%[[P]] : tensor<?xi32>) {theta = 5.000000e+05 : f64} : tensor<?x?x4x4xf32>
// CHECK: %[[K:.+]] = transformer.rope %{{.+}} positions(%[[P]] : tensor<?xi32>) {theta = 5.000000e+05 : f64} : tensor<?x?x4x4xf32>
// CHECK: %[[KR:.+]] = tensor.cast %[[K]] : tensor<?x?x4x4xf32> to tensor<1x?x4x4xf32>
// CHECK: %[[KW0:.+]] = transformer.paged_kv_write %[[KR]] into %[[K0]], %[[BT]], %[[CU]], %[[SP]] : tensor<1x?x4x4xf32> into tensor<?x16x4x4xf32>, tensor<?x?xi32>, tensor<?xi32>, tensor<?xi32>
// CHECK: %[[VW0:.+]] = transformer.paged_kv_write %{{.+}} into %[[V0]], %[[BT]], %[[CU]], %[[SP]]
// CHECK: %[[QR:.+]] = tensor.cast %[[Q]] : tensor<?x?x4x4xf32> to tensor<1x?x4x4xf32>
// CHECK: %[[O:.+]] = transformer.paged_sdpa %[[QR]], %[[KW0]], %[[VW0]], %[[BT]], %[[CU]], %[[SP]] : tensor<1x?x4x4xf32>, tensor<?x16x4x4xf32>, tensor<?x16x4x4xf32>, tensor<?x?xi32>, tensor<?xi32>, tensor<?xi32> -> tensor<1x?x4x4xf32>
// CHECK: tensor.cast %[[O]] : tensor<1x?x4x4xf32> to tensor<?x?x4x4xf32>
// The second layer has no RoPE and two kv heads: its own pools.
// CHECK-NOT: transformer.rope
// CHECK-NOT: transformer.sdpa
// CHECK: %[[KW1:.+]] = transformer.paged_kv_write %{{.+}} into %[[K1]], %[[BT]], %[[CU]], %[[SP]] : tensor<1x?x2x4xf32> into tensor<?x16x2x4xf32>
// CHECK: %[[VW1:.+]] = transformer.paged_kv_write %{{.+}} into %[[V1]]
// CHECK: transformer.paged_sdpa %{{.+}}, %[[KW1]], %[[VW1]], %[[BT]], %[[CU]], %[[SP]] : tensor<1x?x4x4xf32>, tensor<?x16x2x4xf32>
// CHECK: %[[YC:.+]] = tensor.cast %{{.+}} : tensor<?x?x16xf32> to tensor<1x?x16xf32>
// CHECK: %[[Y:.+]] = tensor.collapse_shape %[[YC]] {{\[}}[0, 1], [2]] : tensor<1x?x16xf32> into tensor<?x16xf32>
// CHECK: return %[[Y]], %[[KW0]], %[[VW0]], %[[KW1]], %[[VW1]] :

// S4-LABEL: func.func @forward_paged(
// S4-SAME: tensor<?x4x4x4xf32> {transformer.kv_cache = #transformer.kv_cache<key>, transformer.layer = 0 : i64, transformer.page_size = 4 : i64}
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

// -----

// A causal language model: packed ids [total] to logits [total, vocab]; the
// learned position table is read at the per-token positions.
// CHECK-LABEL: func.func @forward_paged(
// CHECK-SAME: %[[IDS:[^:]+]]: tensor<?xi32>, %[[WTE:[^:]+]]: tensor<40x16xf32>, %[[WPE:[^:]+]]: tensor<32x16xf32>
// CHECK-SAME: -> (tensor<?x40xf32>, tensor<?x16x4x4xf32>, tensor<?x16x4x4xf32>)
// CHECK: %[[IB:.+]] = tensor.expand_shape %[[IDS]] {{\[}}[0, 1]] output_shape [1, %{{.+}}] : tensor<?xi32> into tensor<1x?xi32>
// CHECK: %[[IC:.+]] = tensor.cast %[[IB]] : tensor<1x?xi32> to tensor<?x?xi32>
// CHECK: %[[P:.+]] = transformer.token_positions
// CHECK: transformer.embedding %[[IC]], %[[WTE]] positions(%[[WPE]] : tensor<32x16xf32>) token_positions(%[[P]] : tensor<?xi32>) : tensor<?x?xi32>, tensor<40x16xf32> -> tensor<?x?x16xf32>
// CHECK: transformer.paged_kv_write
// CHECK: transformer.paged_sdpa
// CHECK: %[[L:.+]] = transformer.linear %{{.+}}, %[[WTE]] : tensor<?x?x16xf32>, tensor<40x16xf32> -> tensor<?x?x40xf32>
// CHECK: %[[LC:.+]] = tensor.cast %[[L]] : tensor<?x?x40xf32> to tensor<1x?x40xf32>
// CHECK: %[[LF:.+]] = tensor.collapse_shape %[[LC]] {{\[}}[0, 1], [2]] : tensor<1x?x40xf32> into tensor<?x40xf32>
// CHECK: return %[[LF]],
func.func @forward(%ids: tensor<?x?xi32>, %wte: tensor<40x16xf32>, %wpe: tensor<32x16xf32>,
    %wq: tensor<16x16xf32>, %wk: tensor<16x16xf32>, %wv: tensor<16x16xf32>, %wo: tensor<16x16xf32>)
    -> tensor<?x?x40xf32> {
  %x = transformer.embedding %ids, %wte positions(%wpe : tensor<32x16xf32>) : tensor<?x?xi32>, tensor<40x16xf32> -> tensor<?x?x16xf32>
  %a = transformer.attention %x q(%wq : tensor<16x16xf32>) k(%wk : tensor<16x16xf32>)
      v(%wv : tensor<16x16xf32>) o(%wo : tensor<16x16xf32>)
      {num_heads = 4 : i64, num_kv_heads = 4 : i64, head_dim = 4 : i64, causal} : tensor<?x?x16xf32>
  %l = transformer.linear %a, %wte : tensor<?x?x16xf32>, tensor<40x16xf32> -> tensor<?x?x40xf32>
  return %l : tensor<?x?x40xf32>
}
