// RUN: blockc-opt %s -split-input-file --transformer-derive-decode | FileCheck %s

// A causal language model's decode entry takes the new tokens' ids and
// returns their logits (then the caches): a learned position table (GPT-2's
// wpe) is read at the absolute positions pos .. pos + T - 1, like RoPE.

// CHECK-LABEL: func.func @forward_decode(
// CHECK-SAME: %[[IDS:[^:]+]]: tensor<?x?xi32>, %[[WTE:[^:]+]]: tensor<40x16xf32>, %[[WPE:[^:]+]]: tensor<32x16xf32>
// CHECK-SAME: %[[POS:[^:]+]]: index {transformer.kv_position}
// CHECK-SAME: -> (tensor<?x?x40xf32>, tensor<?x?x4x4xf32>, tensor<?x?x4x4xf32>)
// CHECK: %[[X:.+]] = transformer.embedding %[[IDS]], %[[WTE]] positions(%[[WPE]] : tensor<32x16xf32>) offset %[[POS]] : tensor<?x?xi32>, tensor<40x16xf32> -> tensor<?x?x16xf32>
// CHECK: transformer.kv_cache_append
// CHECK: %[[L:.+]] = transformer.linear %{{.+}}, %[[WTE]] : tensor<?x?x16xf32>, tensor<40x16xf32> -> tensor<?x?x40xf32>
// CHECK: return %[[L]], %{{.+}}, %{{.+}} :
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

// -----

// An offset already there is added to the position; a token table without
// positions (Llama: RoPE) gets none.
// CHECK-LABEL: func.func @forward_decode(
// CHECK-SAME: %[[IDS:[^:]+]]: tensor<?x?xi32>, %[[WTE:[^:]+]]: tensor<40x16xf32>, %[[WPE:[^:]+]]: tensor<32x16xf32>, %[[OFF:[^:]+]]: index
// CHECK-SAME: %[[POS:[^:]+]]: index {transformer.kv_position}
// CHECK: %[[P:.+]] = arith.addi %[[OFF]], %[[POS]] : index
// CHECK: transformer.embedding %[[IDS]], %[[WTE]] positions(%[[WPE]] : tensor<32x16xf32>) offset %[[P]] :
// CHECK: transformer.embedding %[[IDS]], %[[WTE]] : tensor<?x?xi32>
// CHECK: transformer.rope %{{.+}} offset %[[POS]]
func.func @forward(%ids: tensor<?x?xi32>, %wte: tensor<40x16xf32>, %wpe: tensor<32x16xf32>, %off: index,
    %wq: tensor<16x16xf32>, %wk: tensor<16x16xf32>, %wv: tensor<16x16xf32>, %wo: tensor<16x16xf32>)
    -> tensor<?x?x40xf32> {
  %x = transformer.embedding %ids, %wte positions(%wpe : tensor<32x16xf32>) offset %off : tensor<?x?xi32>, tensor<40x16xf32> -> tensor<?x?x16xf32>
  %y = transformer.embedding %ids, %wte : tensor<?x?xi32>, tensor<40x16xf32> -> tensor<?x?x16xf32>
  %s = transformer.residual_add %x, %y : tensor<?x?x16xf32>
  %a = transformer.attention %s q(%wq : tensor<16x16xf32>) k(%wk : tensor<16x16xf32>)
      v(%wv : tensor<16x16xf32>) o(%wo : tensor<16x16xf32>)
      {num_heads = 4 : i64, num_kv_heads = 4 : i64, head_dim = 4 : i64, causal,
       rope = #transformer.rope<rotate_half>} : tensor<?x?x16xf32>
  %l = transformer.linear %a, %wte : tensor<?x?x16xf32>, tensor<40x16xf32> -> tensor<?x?x40xf32>
  return %l : tensor<?x?x40xf32>
}
