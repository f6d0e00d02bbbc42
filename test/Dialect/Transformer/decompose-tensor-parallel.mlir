// RUN: blockc-opt %s -split-input-file --transformer-decompose=composites=block | FileCheck %s

// A block that transformer-tensor-parallel partitioned
// (transformer.all_reduce_over = @grid) sums its attention and FFN outputs
// over the grid before each residual add, pre-norm and post-norm alike.

// CHECK-LABEL: func.func @pre_norm
// CHECK:         %[[A:.+]] = transformer.attention
// CHECK-NEXT:    %[[AR:.+]] = shard.all_reduce %[[A]] on @tp grid_axes = [0] : tensor<?x?x16xf32> -> tensor<?x?x16xf32>
// CHECK-NEXT:    %[[H:.+]] = transformer.residual_add %{{.+}}, %[[AR]]
// CHECK:         %[[F:.+]] = transformer.ffn
// CHECK-NEXT:    %[[FR:.+]] = shard.all_reduce %[[F]] on @tp grid_axes = [0] : tensor<?x?x16xf32> -> tensor<?x?x16xf32>
// CHECK-NEXT:    %[[R:.+]] = transformer.residual_add %[[H]], %[[FR]]
// CHECK-NEXT:    return %[[R]]
module {
  shard.grid @tp(shape = 2)
  func.func @pre_norm(%x: tensor<?x?x16xf32>, %g1: tensor<16xf32>, %wq: tensor<8x16xf32>, %wk: tensor<4x16xf32>, %wv: tensor<4x16xf32>, %wo: tensor<16x8xf32>, %g2: tensor<16xf32>, %wu: tensor<16x16xf32>, %wd: tensor<16x16xf32>) -> tensor<?x?x16xf32> {
    %0 = transformer.block %x attn_norm(%g1 : tensor<16xf32>) q(%wq : tensor<8x16xf32>) k(%wk : tensor<4x16xf32>) v(%wv : tensor<4x16xf32>) o(%wo : tensor<16x8xf32>) ffn_norm(%g2 : tensor<16xf32>) up(%wu : tensor<16x16xf32>) down(%wd : tensor<16x16xf32>) {num_heads = 2 : i64, num_kv_heads = 1 : i64, head_dim = 4 : i64, d_ff = 16 : i64, activation = #transformer.activation<relu>, transformer.all_reduce_over = @tp} : tensor<?x?x16xf32>
    return %0 : tensor<?x?x16xf32>
  }
}

// -----

// CHECK-LABEL: func.func @post_norm
// CHECK:         %[[A:.+]] = transformer.attention
// CHECK-NEXT:    %[[AR:.+]] = shard.all_reduce %[[A]] on @tp grid_axes = [0]
// CHECK-NEXT:    %[[S:.+]] = transformer.residual_add %{{.+}}, %[[AR]]
// CHECK-NEXT:    %[[H:.+]] = transformer.layer_norm %[[S]]
// CHECK:         %[[F:.+]] = transformer.ffn
// CHECK-NEXT:    %[[FR:.+]] = shard.all_reduce %[[F]] on @tp grid_axes = [0]
// CHECK-NEXT:    %[[S2:.+]] = transformer.residual_add %[[H]], %[[FR]]
// CHECK-NEXT:    transformer.layer_norm %[[S2]]
module {
  shard.grid @tp(shape = 2)
  func.func @post_norm(%x: tensor<?x?x16xf32>, %g1: tensor<16xf32>, %b1: tensor<16xf32>, %wq: tensor<8x16xf32>, %wk: tensor<8x16xf32>, %wv: tensor<8x16xf32>, %wo: tensor<16x8xf32>, %g2: tensor<16xf32>, %b2: tensor<16xf32>, %wu: tensor<16x16xf32>, %wd: tensor<16x16xf32>) -> tensor<?x?x16xf32> {
    %0 = transformer.block %x attn_norm(%g1 : tensor<16xf32>) attn_norm_bias(%b1 : tensor<16xf32>) q(%wq : tensor<8x16xf32>) k(%wk : tensor<8x16xf32>) v(%wv : tensor<8x16xf32>) o(%wo : tensor<16x8xf32>) ffn_norm(%g2 : tensor<16xf32>) ffn_norm_bias(%b2 : tensor<16xf32>) up(%wu : tensor<16x16xf32>) down(%wd : tensor<16x16xf32>) {num_heads = 2 : i64, num_kv_heads = 2 : i64, head_dim = 4 : i64, d_ff = 16 : i64, norm = #transformer.norm<layer>, norm_placement = #transformer.placement<post>, activation = #transformer.activation<relu>, transformer.all_reduce_over = @tp} : tensor<?x?x16xf32>
    return %0 : tensor<?x?x16xf32>
  }
}
