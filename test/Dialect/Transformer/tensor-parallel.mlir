// RUN: blockc-opt %s -split-input-file --transformer-tensor-parallel=ranks=2 | FileCheck %s

// A GQA block (4 heads of 16, 2 K/V heads, d_ff 128) with biases over 2
// ranks: q/k/v, gate/up and their biases split by rows (whole heads, K/V
// heads 1 per rank), o and down by columns, the biases of o and down read
// by rank 0 only, the norms whole; the block gets its local sizes and the
// grid to all-reduce over; the module the grid, the rank count and the MPI
// implementation.

// CHECK:      module attributes {dlti.map = #dlti.map<"MPI:Implementation" = "OpenMPI">, transformer.tensor_parallel = 2 : i64}
// CHECK-NEXT:   shard.grid @blockc_tp(shape = 2)
// CHECK-LABEL:  func.func @forward(
// CHECK-SAME:     %arg{{[0-9]+}}: tensor<?x?x64xf32>, %arg{{[0-9]+}}: tensor<64xf32>,
// CHECK-SAME:     %arg{{[0-9]+}}: tensor<32x64xf32> {transformer.shard_slice = #transformer.shard_slice<axis = 0, ranks = [array<i64: 0, 32>, array<i64: 32, 64>]>},
// CHECK-SAME:     %arg{{[0-9]+}}: tensor<32xf32> {transformer.shard_slice = #transformer.shard_slice<axis = 0, ranks = [array<i64: 0, 32>, array<i64: 32, 64>]>},
// CHECK-SAME:     %arg{{[0-9]+}}: tensor<16x64xf32> {transformer.shard_slice = #transformer.shard_slice<axis = 0, ranks = [array<i64: 0, 16>, array<i64: 16, 32>]>},
// CHECK-SAME:     %arg{{[0-9]+}}: tensor<16xf32> {transformer.shard_slice = #transformer.shard_slice<axis = 0, ranks = [array<i64: 0, 16>, array<i64: 16, 32>]>},
// CHECK-SAME:     %arg{{[0-9]+}}: tensor<16x64xf32> {transformer.shard_slice = #transformer.shard_slice<axis = 0, ranks = [array<i64: 0, 16>, array<i64: 16, 32>]>},
// CHECK-SAME:     %arg{{[0-9]+}}: tensor<16xf32> {transformer.shard_slice = #transformer.shard_slice<axis = 0, ranks = [array<i64: 0, 16>, array<i64: 16, 32>]>},
// CHECK-SAME:     %arg{{[0-9]+}}: tensor<64x32xf32> {transformer.shard_slice = #transformer.shard_slice<axis = 1, ranks = [array<i64: 0, 32>, array<i64: 32, 64>]>},
// CHECK-SAME:     %arg{{[0-9]+}}: tensor<64xf32> {transformer.shard_slice = #transformer.shard_slice<axis = 0, ranks = [array<i64: 0, 64>, array<i64>]>},
// CHECK-SAME:     %arg{{[0-9]+}}: tensor<64xf32>,
// CHECK-SAME:     %arg{{[0-9]+}}: tensor<64x64xf32> {transformer.shard_slice = #transformer.shard_slice<axis = 0, ranks = [array<i64: 0, 64>, array<i64: 64, 128>]>},
// CHECK-SAME:     %arg{{[0-9]+}}: tensor<64x64xf32> {transformer.shard_slice = #transformer.shard_slice<axis = 0, ranks = [array<i64: 0, 64>, array<i64: 64, 128>]>},
// CHECK-SAME:     %arg{{[0-9]+}}: tensor<64x64xf32> {transformer.shard_slice = #transformer.shard_slice<axis = 1, ranks = [array<i64: 0, 64>, array<i64: 64, 128>]>},
// CHECK-SAME:     %arg{{[0-9]+}}: tensor<64xf32> {transformer.shard_slice = #transformer.shard_slice<axis = 0, ranks = [array<i64: 0, 64>, array<i64>]>})
// CHECK:          transformer.block
// CHECK-SAME:       {causal, d_ff = 64 : i64, head_dim = 16 : i64, num_heads = 2 : i64, num_kv_heads = 1 : i64, transformer.all_reduce_over = @blockc_tp}
func.func @forward(%x: tensor<?x?x64xf32>, %g1: tensor<64xf32>,
    %wq: tensor<64x64xf32>, %bq: tensor<64xf32>, %wk: tensor<32x64xf32>, %bk: tensor<32xf32>,
    %wv: tensor<32x64xf32>, %bv: tensor<32xf32>, %wo: tensor<64x64xf32>, %bo: tensor<64xf32>,
    %g2: tensor<64xf32>, %wg: tensor<128x64xf32>, %wu: tensor<128x64xf32>,
    %wd: tensor<64x128xf32>, %bd: tensor<64xf32>) -> tensor<?x?x64xf32> {
  %y = transformer.block %x attn_norm(%g1 : tensor<64xf32>)
      q(%wq : tensor<64x64xf32>) q_bias(%bq : tensor<64xf32>)
      k(%wk : tensor<32x64xf32>) k_bias(%bk : tensor<32xf32>)
      v(%wv : tensor<32x64xf32>) v_bias(%bv : tensor<32xf32>)
      o(%wo : tensor<64x64xf32>) o_bias(%bo : tensor<64xf32>)
      ffn_norm(%g2 : tensor<64xf32>) gate(%wg : tensor<128x64xf32>) up(%wu : tensor<128x64xf32>)
      down(%wd : tensor<64x128xf32>) down_bias(%bd : tensor<64xf32>)
      {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 16 : i64, d_ff = 128 : i64, causal}
      : tensor<?x?x64xf32>
  return %y : tensor<?x?x64xf32>
}

// -----

// MQA (4 heads, one K/V head): both ranks read the one K/V head.
// CHECK-LABEL: func.func @mqa(
// CHECK-SAME:    %arg{{[0-9]+}}: tensor<16x64xf32> {transformer.shard_slice = #transformer.shard_slice<axis = 0, ranks = [array<i64: 0, 16>, array<i64: 0, 16>]>}
// CHECK:         num_heads = 2 : i64, num_kv_heads = 1 : i64
func.func @mqa(%x: tensor<?x?x64xf32>, %g1: tensor<64xf32>, %wq: tensor<64x64xf32>,
    %wk: tensor<16x64xf32>, %wv: tensor<16x64xf32>, %wo: tensor<64x64xf32>,
    %g2: tensor<64xf32>, %wu: tensor<128x64xf32>, %wd: tensor<64x128xf32>) -> tensor<?x?x64xf32> {
  %y = transformer.block %x attn_norm(%g1 : tensor<64xf32>) q(%wq : tensor<64x64xf32>)
      k(%wk : tensor<16x64xf32>) v(%wv : tensor<16x64xf32>) o(%wo : tensor<64x64xf32>)
      ffn_norm(%g2 : tensor<64xf32>) up(%wu : tensor<128x64xf32>) down(%wd : tensor<64x128xf32>)
      {num_heads = 4 : i64, num_kv_heads = 1 : i64, head_dim = 16 : i64, d_ff = 128 : i64,
       activation = #transformer.activation<relu>}
      : tensor<?x?x64xf32>
  return %y : tensor<?x?x64xf32>
}

// -----

// GQA 6/3 (groups of 2): rank 0's query heads 0-2 use K/V heads 0, 0, 1,
// rank 1's 3-5 use 1, 2, 2: each rank gets one K/V head per query head.
// CHECK-LABEL: func.func @gqa63(
// CHECK-SAME:    %arg{{[0-9]+}}: tensor<48x96xf32> {transformer.shard_slice = #transformer.shard_slice<axis = 0, ranks = [array<i64: 0, 16, 0, 16, 16, 32>, array<i64: 16, 32, 32, 48, 32, 48>]>}
// CHECK:         num_heads = 3 : i64, num_kv_heads = 3 : i64
func.func @gqa63(%x: tensor<?x?x96xf32>, %g1: tensor<96xf32>, %wq: tensor<96x96xf32>,
    %wk: tensor<48x96xf32>, %wv: tensor<48x96xf32>, %wo: tensor<96x96xf32>,
    %g2: tensor<96xf32>, %wu: tensor<128x96xf32>, %wd: tensor<96x128xf32>) -> tensor<?x?x96xf32> {
  %y = transformer.block %x attn_norm(%g1 : tensor<96xf32>) q(%wq : tensor<96x96xf32>)
      k(%wk : tensor<48x96xf32>) v(%wv : tensor<48x96xf32>) o(%wo : tensor<96x96xf32>)
      ffn_norm(%g2 : tensor<96xf32>) up(%wu : tensor<128x96xf32>) down(%wd : tensor<96x128xf32>)
      {num_heads = 6 : i64, num_kv_heads = 3 : i64, head_dim = 16 : i64, d_ff = 128 : i64,
       activation = #transformer.activation<relu>}
      : tensor<?x?x96xf32>
  return %y : tensor<?x?x96xf32>
}
