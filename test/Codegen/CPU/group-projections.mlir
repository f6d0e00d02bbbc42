// RUN: blockc-opt %s -split-input-file --blockc-cpu-group-projections | FileCheck %s

// GQA: K and V (same input, same weight shape) form a group; Q (another
// shape) stays alone. A second block reading another input is not mixed in.
// CHECK-LABEL: func.func @gqa
// CHECK:       transformer.linear %[[X:[^,]+]], %{{[^ ]+}} :
// CHECK-NOT:   blockc_codegen.horizontal_group
// CHECK-SAME:  tensor<24x16xf32>
// CHECK:       transformer.linear %[[X]], %{{[^ ]+}} {blockc_codegen.horizontal_group = #blockc_codegen.horizontal_group<0>} : {{.*}}tensor<8x16xf32>
// CHECK:       transformer.linear %[[X]], %{{[^ ]+}} {blockc_codegen.horizontal_group = #blockc_codegen.horizontal_group<0>} : {{.*}}tensor<8x16xf32>
// CHECK:       transformer.linear %{{[^ ]+}}, %{{[^ ]+}} : tensor<2x3x8xf32>
func.func @gqa(%x: tensor<2x3x16xf32>, %wq: tensor<24x16xf32>, %wk: tensor<8x16xf32>, %wv: tensor<8x16xf32>, %wo: tensor<8x8xf32>) -> (tensor<2x3x24xf32>, tensor<2x3x8xf32>, tensor<2x3x8xf32>) {
  %q = transformer.linear %x, %wq : tensor<2x3x16xf32>, tensor<24x16xf32> -> tensor<2x3x24xf32>
  %k = transformer.linear %x, %wk : tensor<2x3x16xf32>, tensor<8x16xf32> -> tensor<2x3x8xf32>
  %v = transformer.linear %x, %wv : tensor<2x3x16xf32>, tensor<8x16xf32> -> tensor<2x3x8xf32>
  %o = transformer.linear %k, %wo : tensor<2x3x8xf32>, tensor<8x8xf32> -> tensor<2x3x8xf32>
  return %q, %o, %v : tensor<2x3x24xf32>, tensor<2x3x8xf32>, tensor<2x3x8xf32>
}

// -----

// MHA: Q, K and V form one group; gate and up another (a fresh id). A
// projection with a bias is not grouped with bias-free ones, and different
// tile attributes keep ops apart.
// CHECK-LABEL: func.func @mha_ffn
// CHECK-COUNT-3: {blockc_codegen.horizontal_group = #blockc_codegen.horizontal_group<0>}
// CHECK-COUNT-2: {blockc_codegen.horizontal_group = #blockc_codegen.horizontal_group<1>}
// CHECK:       transformer.linear %{{[^ ]+}}, %{{[^ ]+}} bias
// CHECK-NOT:   blockc_codegen.horizontal_group
// CHECK:       return
func.func @mha_ffn(%x: tensor<2x3x16xf32>, %wq: tensor<16x16xf32>, %wk: tensor<16x16xf32>, %wv: tensor<16x16xf32>, %wg: tensor<40x16xf32>, %wu: tensor<40x16xf32>, %wb: tensor<40x16xf32>, %b: tensor<40xf32>, %wt: tensor<40x16xf32>) -> (tensor<2x3x16xf32>, tensor<2x3x16xf32>, tensor<2x3x16xf32>, tensor<2x3x40xf32>, tensor<2x3x40xf32>, tensor<2x3x40xf32>, tensor<2x3x40xf32>) {
  %q = transformer.linear %x, %wq : tensor<2x3x16xf32>, tensor<16x16xf32> -> tensor<2x3x16xf32>
  %k = transformer.linear %x, %wk : tensor<2x3x16xf32>, tensor<16x16xf32> -> tensor<2x3x16xf32>
  %v = transformer.linear %x, %wv : tensor<2x3x16xf32>, tensor<16x16xf32> -> tensor<2x3x16xf32>
  %g = transformer.linear %x, %wg : tensor<2x3x16xf32>, tensor<40x16xf32> -> tensor<2x3x40xf32>
  %u = transformer.linear %x, %wu : tensor<2x3x16xf32>, tensor<40x16xf32> -> tensor<2x3x40xf32>
  %y = transformer.linear %x, %wb bias %b : tensor<2x3x16xf32>, tensor<40x16xf32>, tensor<40xf32> -> tensor<2x3x40xf32>
  %t = transformer.linear %x, %wt {blockc_codegen.linear_tiles = #blockc_codegen.linear_tiles<rows = 2, cols = 2, block_n = 8, block_k = 16, pack_rows = 8, pack_cols = 2, panel_k = 256, panel_n = 32, pack_min_rows = 32>} : tensor<2x3x16xf32>, tensor<40x16xf32> -> tensor<2x3x40xf32>
  return %q, %k, %v, %g, %u, %y, %t : tensor<2x3x16xf32>, tensor<2x3x16xf32>, tensor<2x3x16xf32>, tensor<2x3x40xf32>, tensor<2x3x40xf32>, tensor<2x3x40xf32>, tensor<2x3x40xf32>
}

// -----

// A group pinned by hand is kept (a group of one forbids grouping); new
// ids start after the largest pinned one.
// CHECK-LABEL: func.func @pinned
// CHECK:       {blockc_codegen.horizontal_group = #blockc_codegen.horizontal_group<7>}
// CHECK:       {blockc_codegen.horizontal_group = #blockc_codegen.horizontal_group<8>}
// CHECK:       {blockc_codegen.horizontal_group = #blockc_codegen.horizontal_group<8>}
func.func @pinned(%x: tensor<2x3x16xf32>, %w0: tensor<16x16xf32>, %w1: tensor<16x16xf32>, %w2: tensor<16x16xf32>) -> (tensor<2x3x16xf32>, tensor<2x3x16xf32>, tensor<2x3x16xf32>) {
  %a = transformer.linear %x, %w0 {blockc_codegen.horizontal_group = #blockc_codegen.horizontal_group<7>} : tensor<2x3x16xf32>, tensor<16x16xf32> -> tensor<2x3x16xf32>
  %b = transformer.linear %x, %w1 : tensor<2x3x16xf32>, tensor<16x16xf32> -> tensor<2x3x16xf32>
  %c = transformer.linear %x, %w2 : tensor<2x3x16xf32>, tensor<16x16xf32> -> tensor<2x3x16xf32>
  return %a, %b, %c : tensor<2x3x16xf32>, tensor<2x3x16xf32>, tensor<2x3x16xf32>
}
