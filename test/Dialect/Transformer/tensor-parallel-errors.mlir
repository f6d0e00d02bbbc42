// RUN: blockc-opt %s -split-input-file -verify-diagnostics --transformer-tensor-parallel=ranks=2
// RUN: not blockc-opt %s -split-input-file --transformer-tensor-parallel=ranks=1 2>&1 | FileCheck %s --check-prefix=RANKS

// RANKS: error: transformer-tensor-parallel: ranks must be >= 2, got 1

// What transformer-tensor-parallel cannot split, one case per message.

func.func @heads(%x: tensor<?x?x48xf32>, %g1: tensor<48xf32>, %wq: tensor<48x48xf32>,
    %wk: tensor<48x48xf32>, %wv: tensor<48x48xf32>, %wo: tensor<48x48xf32>,
    %g2: tensor<48xf32>, %wu: tensor<64x48xf32>, %wd: tensor<48x64xf32>) -> tensor<?x?x48xf32> {
  // expected-error @+1 {{'transformer.block' op cannot be split over 2 ranks: num_heads (3) is not a multiple of 2}}
  %y = transformer.block %x attn_norm(%g1 : tensor<48xf32>) q(%wq : tensor<48x48xf32>)
      k(%wk : tensor<48x48xf32>) v(%wv : tensor<48x48xf32>) o(%wo : tensor<48x48xf32>)
      ffn_norm(%g2 : tensor<48xf32>) up(%wu : tensor<64x48xf32>) down(%wd : tensor<48x64xf32>)
      {num_heads = 3 : i64, num_kv_heads = 3 : i64, head_dim = 16 : i64, d_ff = 64 : i64,
       activation = #transformer.activation<relu>} : tensor<?x?x48xf32>
  return %y : tensor<?x?x48xf32>
}

// -----

func.func @dff(%x: tensor<?x?x32xf32>, %g1: tensor<32xf32>, %wq: tensor<32x32xf32>,
    %wk: tensor<32x32xf32>, %wv: tensor<32x32xf32>, %wo: tensor<32x32xf32>,
    %g2: tensor<32xf32>, %wu: tensor<33x32xf32>, %wd: tensor<32x33xf32>) -> tensor<?x?x32xf32> {
  // expected-error @+1 {{'transformer.block' op cannot be split over 2 ranks: d_ff (33) is not a multiple of 2}}
  %y = transformer.block %x attn_norm(%g1 : tensor<32xf32>) q(%wq : tensor<32x32xf32>)
      k(%wk : tensor<32x32xf32>) v(%wv : tensor<32x32xf32>) o(%wo : tensor<32x32xf32>)
      ffn_norm(%g2 : tensor<32xf32>) up(%wu : tensor<33x32xf32>) down(%wd : tensor<32x33xf32>)
      {num_heads = 2 : i64, num_kv_heads = 2 : i64, head_dim = 16 : i64, d_ff = 33 : i64,
       activation = #transformer.activation<relu>} : tensor<?x?x32xf32>
  return %y : tensor<?x?x32xf32>
}

// -----

func.func @int4_groups(%x: tensor<?x?x32xf32>, %g1: tensor<32xf32>, %wq: tensor<32x32xf32>,
    %wk: tensor<32x32xf32>, %wv: tensor<32x32xf32>, %wo: tensor<32x32xf32>,
    %g2: tensor<32xf32>, %wu: tensor<64x32xf32>, %wd: tensor<32x64xf32>) -> tensor<?x?x32xf32> {
  // Each rank would hold 16 of w_o's 32 input columns: half a group.
  // expected-error @+1 {{'transformer.block' op cannot be split over 2 ranks: weight_quant group_size 32 does not divide the 16 input columns each rank holds of w_o}}
  %y = transformer.block %x attn_norm(%g1 : tensor<32xf32>) q(%wq : tensor<32x32xf32>)
      k(%wk : tensor<32x32xf32>) v(%wv : tensor<32x32xf32>) o(%wo : tensor<32x32xf32>)
      ffn_norm(%g2 : tensor<32xf32>) up(%wu : tensor<64x32xf32>) down(%wd : tensor<32x64xf32>)
      {num_heads = 2 : i64, num_kv_heads = 2 : i64, head_dim = 16 : i64, d_ff = 64 : i64,
       activation = #transformer.activation<relu>,
       weight_quant = #transformer.weight_quant<int4, group_size = 32>} : tensor<?x?x32xf32>
  return %y : tensor<?x?x32xf32>
}

// -----

func.func @activation_runs(%x: tensor<?x?x64xf32>, %g1: tensor<64xf32>, %wq: tensor<64x64xf32>,
    %wk: tensor<64x64xf32>, %wv: tensor<64x64xf32>, %wo: tensor<64x64xf32>,
    %g2: tensor<64xf32>, %wu: tensor<32x64xf32>, %wd: tensor<64x32xf32>) -> tensor<?x?x64xf32> {
  // w_o splits into 32 columns per rank, w_down into 16: not a run of 32.
  // expected-error @+1 {{'transformer.block' op cannot be split over 2 ranks: weight_quant activations = int8 quantises runs of 32 columns, and each rank holds 16 input columns of w_down}}
  %y = transformer.block %x attn_norm(%g1 : tensor<64xf32>) q(%wq : tensor<64x64xf32>)
      k(%wk : tensor<64x64xf32>) v(%wv : tensor<64x64xf32>) o(%wo : tensor<64x64xf32>)
      ffn_norm(%g2 : tensor<64xf32>) up(%wu : tensor<32x64xf32>) down(%wd : tensor<64x32xf32>)
      {num_heads = 4 : i64, num_kv_heads = 4 : i64, head_dim = 16 : i64, d_ff = 32 : i64,
       activation = #transformer.activation<relu>,
       weight_quant = #transformer.weight_quant<int8, activations = int8>} : tensor<?x?x64xf32>
  return %y : tensor<?x?x64xf32>
}

// -----

// The same weight feeds two ops: its parts would differ per use.
func.func @shared(%x: tensor<?x?x32xf32>, %g1: tensor<32xf32>, %wq: tensor<32x32xf32>,
    %wk: tensor<32x32xf32>, %wv: tensor<32x32xf32>, %wo: tensor<32x32xf32>,
    %g2: tensor<32xf32>, %wu: tensor<64x32xf32>, %wd: tensor<32x64xf32>) -> tensor<?x?x32xf32> {
  // expected-error @+1 {{'transformer.block' op cannot be split over 2 ranks: its w_q weight must be an argument of the function used by this block only}}
  %y = transformer.block %x attn_norm(%g1 : tensor<32xf32>) q(%wq : tensor<32x32xf32>)
      k(%wk : tensor<32x32xf32>) v(%wv : tensor<32x32xf32>) o(%wo : tensor<32x32xf32>)
      ffn_norm(%g2 : tensor<32xf32>) up(%wu : tensor<64x32xf32>) down(%wd : tensor<32x64xf32>)
      {num_heads = 2 : i64, num_kv_heads = 2 : i64, head_dim = 16 : i64, d_ff = 64 : i64,
       activation = #transformer.activation<relu>} : tensor<?x?x32xf32>
  %z = transformer.linear %y, %wq : tensor<?x?x32xf32>, tensor<32x32xf32> -> tensor<?x?x32xf32>
  return %z : tensor<?x?x32xf32>
}

// -----

// expected-error @+1 {{transformer-tensor-parallel: the module is partitioned already (over 2 ranks)}}
module attributes {transformer.tensor_parallel = 2 : i64} {
}

// -----

// expected-error @+1 {{transformer-tensor-parallel: no transformer.block to partition}}
module {
  func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
    return %x : tensor<4xf32>
  }
}
