// RUN: blockc-opt %s | FileCheck %s
// RUN: blockc-opt %s | blockc-opt | FileCheck %s
// RUN: blockc-opt %s --transformer-decompose | FileCheck %s --check-prefix=DECOMPOSE

// #transformer.weight_quant round-trips on linear and the composites.

// CHECK-LABEL: func.func @linear_int8
// CHECK: transformer.linear %{{.*}}, %{{.*}} {weight_quant = #transformer.weight_quant<int8>}
func.func @linear_int8(%x: tensor<2x3x64xf32>, %w: tensor<32x64xf32>) -> tensor<2x3x32xf32> {
  %0 = transformer.linear %x, %w {weight_quant = #transformer.weight_quant<int8>} : tensor<2x3x64xf32>, tensor<32x64xf32> -> tensor<2x3x32xf32>
  return %0 : tensor<2x3x32xf32>
}

// CHECK-LABEL: func.func @linear_int4
// CHECK: transformer.linear %{{.*}}, %{{.*}} bias %{{.*}} {weight_quant = #transformer.weight_quant<int4, group_size = 64>}
func.func @linear_int4(%x: tensor<2x3x128xf32>, %w: tensor<32x128xf32>, %b: tensor<32xf32>) -> tensor<2x3x32xf32> {
  %0 = transformer.linear %x, %w bias %b {weight_quant = #transformer.weight_quant<int4, group_size = 64>} : tensor<2x3x128xf32>, tensor<32x128xf32>, tensor<32xf32> -> tensor<2x3x32xf32>
  return %0 : tensor<2x3x32xf32>
}

// activations = int8 is printed only when set (none is the default).
// CHECK-LABEL: func.func @linear_activations
// CHECK: transformer.linear %{{.*}}, %{{.*}} {weight_quant = #transformer.weight_quant<int8, activations = int8>}
// CHECK: transformer.linear %{{.*}}, %{{.*}} {weight_quant = #transformer.weight_quant<int4, group_size = 32, activations = int8>}
// CHECK: transformer.linear %{{.*}}, %{{.*}} {weight_quant = #transformer.weight_quant<int8>}
func.func @linear_activations(%x: tensor<2x3x64xf32>, %w: tensor<32x64xf32>) -> (tensor<2x3x32xf32>, tensor<2x3x32xf32>, tensor<2x3x32xf32>) {
  %0 = transformer.linear %x, %w {weight_quant = #transformer.weight_quant<int8, activations = int8>} : tensor<2x3x64xf32>, tensor<32x64xf32> -> tensor<2x3x32xf32>
  %1 = transformer.linear %x, %w {weight_quant = #transformer.weight_quant<int4, group_size = 32, activations = int8>} : tensor<2x3x64xf32>, tensor<32x64xf32> -> tensor<2x3x32xf32>
  %2 = transformer.linear %x, %w {weight_quant = #transformer.weight_quant<int8, activations = none>} : tensor<2x3x64xf32>, tensor<32x64xf32> -> tensor<2x3x32xf32>
  return %0, %1, %2 : tensor<2x3x32xf32>, tensor<2x3x32xf32>, tensor<2x3x32xf32>
}

// Every projection of a block (never the norms) takes the block's
// weight_quant when it is decomposed.
// CHECK-LABEL: func.func @block_int4
// CHECK: transformer.block {{.*}}weight_quant = #transformer.weight_quant<int4, group_size = 32>
// DECOMPOSE-LABEL: func.func @block_int4
// DECOMPOSE: transformer.rms_norm
// DECOMPOSE-NOT: weight_quant
// DECOMPOSE-COUNT-4: transformer.linear {{.*}} {weight_quant = #transformer.weight_quant<int4, group_size = 32>}
// DECOMPOSE: transformer.rms_norm
// DECOMPOSE-NOT: weight_quant
// DECOMPOSE-COUNT-3: transformer.linear {{.*}} {weight_quant = #transformer.weight_quant<int4, group_size = 32>}
// DECOMPOSE-NOT: weight_quant
func.func @block_int4(%x: tensor<1x?x64xf32>, %g1: tensor<64xf32>, %wq: tensor<64x64xf32>, %wkv: tensor<32x64xf32>, %wo: tensor<64x64xf32>, %g2: tensor<64xf32>, %wg: tensor<96x64xf32>, %wd: tensor<64x96xf32>) -> tensor<1x?x64xf32> {
  %0 = transformer.block %x attn_norm(%g1 : tensor<64xf32>) q(%wq : tensor<64x64xf32>) k(%wkv : tensor<32x64xf32>) v(%wkv : tensor<32x64xf32>) o(%wo : tensor<64x64xf32>) ffn_norm(%g2 : tensor<64xf32>) gate(%wg : tensor<96x64xf32>) up(%wg : tensor<96x64xf32>) down(%wd : tensor<64x96xf32>) {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 16 : i64, d_ff = 96 : i64, causal, weight_quant = #transformer.weight_quant<int4, group_size = 32>} : tensor<1x?x64xf32>
  return %0 : tensor<1x?x64xf32>
}

// CHECK-LABEL: func.func @ffn_int8
// CHECK: transformer.ffn {{.*}}weight_quant = #transformer.weight_quant<int8>
// DECOMPOSE-LABEL: func.func @ffn_int8
// DECOMPOSE-COUNT-2: transformer.linear {{.*}} {weight_quant = #transformer.weight_quant<int8>}
func.func @ffn_int8(%x: tensor<2x4x16xf32>, %wu: tensor<32x16xf32>, %wd: tensor<16x32xf32>) -> tensor<2x4x16xf32> {
  %0 = transformer.ffn %x up(%wu : tensor<32x16xf32>) down(%wd : tensor<16x32xf32>) {activation = #transformer.activation<relu>, weight_quant = #transformer.weight_quant<int8>} : tensor<2x4x16xf32>
  return %0 : tensor<2x4x16xf32>
}

// CHECK-LABEL: func.func @attention_int8
// CHECK: transformer.attention {{.*}}weight_quant = #transformer.weight_quant<int8>
// DECOMPOSE-LABEL: func.func @attention_int8
// DECOMPOSE-COUNT-3: transformer.linear {{.*}} {weight_quant = #transformer.weight_quant<int8>}
// DECOMPOSE: transformer.sdpa
// DECOMPOSE: transformer.linear {{.*}} {weight_quant = #transformer.weight_quant<int8>}
func.func @attention_int8(%x: tensor<2x4x16xf32>, %w: tensor<16x16xf32>) -> tensor<2x4x16xf32> {
  %0 = transformer.attention %x q(%w : tensor<16x16xf32>) k(%w : tensor<16x16xf32>) v(%w : tensor<16x16xf32>) o(%w : tensor<16x16xf32>) {num_heads = 2 : i64, num_kv_heads = 2 : i64, head_dim = 8 : i64, causal, weight_quant = #transformer.weight_quant<int8>} : tensor<2x4x16xf32>
  return %0 : tensor<2x4x16xf32>
}
