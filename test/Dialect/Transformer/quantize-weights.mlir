// RUN: blockc-opt %s --split-input-file --transformer-quantize-weights | FileCheck %s --check-prefix=INT8
// RUN: blockc-opt %s --split-input-file --transformer-quantize-weights="type=int4 group-size=64" | FileCheck %s --check-prefix=INT4
// RUN: not blockc-opt %s --split-input-file --transformer-quantize-weights="type=int4 group-size=128" 2>&1 | FileCheck %s --check-prefix=K
// RUN: not blockc-opt %s --transformer-quantize-weights="type=int2" 2>&1 | FileCheck %s --check-prefix=TYPE
// RUN: not blockc-opt %s --transformer-quantize-weights="type=int4 group-size=48" 2>&1 | FileCheck %s --check-prefix=GROUP
// RUN: blockc-opt %s --split-input-file --transformer-quantize-weights="type=int4 group-size=64 quantize-activations=int8" | FileCheck %s --check-prefix=ACT
// RUN: not blockc-opt %s --transformer-quantize-weights="quantize-activations=int4" 2>&1 | FileCheck %s --check-prefix=ACTTYPE

// Every block, attention, ffn and linear without a weight_quant gets one;
// one that has its own keeps it.

// INT8-LABEL: func.func @ops
// INT8: transformer.linear {{.*}} {weight_quant = #transformer.weight_quant<int8>}
// INT8: transformer.linear {{.*}} {weight_quant = #transformer.weight_quant<int4, group_size = 32>}
// INT8: transformer.ffn {{.*}}weight_quant = #transformer.weight_quant<int8>
// INT4-LABEL: func.func @ops
// INT4: transformer.linear {{.*}} {weight_quant = #transformer.weight_quant<int4, group_size = 64>}
// INT4: transformer.linear {{.*}} {weight_quant = #transformer.weight_quant<int4, group_size = 32>}
// INT4: transformer.ffn {{.*}}weight_quant = #transformer.weight_quant<int4, group_size = 64>
// ACT-LABEL: func.func @ops
// ACT: transformer.linear {{.*}} {weight_quant = #transformer.weight_quant<int4, group_size = 64, activations = int8>}
// ACT: transformer.linear {{.*}} {weight_quant = #transformer.weight_quant<int4, group_size = 32>}
// ACT: transformer.ffn {{.*}}weight_quant = #transformer.weight_quant<int4, group_size = 64, activations = int8>
func.func @ops(%x: tensor<2x3x64xf32>, %w: tensor<64x64xf32>, %wd: tensor<64x128xf32>, %wu: tensor<128x64xf32>) -> (tensor<2x3x64xf32>, tensor<2x3x64xf32>, tensor<2x3x64xf32>) {
  %0 = transformer.linear %x, %w : tensor<2x3x64xf32>, tensor<64x64xf32> -> tensor<2x3x64xf32>
  %1 = transformer.linear %x, %w {weight_quant = #transformer.weight_quant<int4, group_size = 32>} : tensor<2x3x64xf32>, tensor<64x64xf32> -> tensor<2x3x64xf32>
  %2 = transformer.ffn %x up(%wu : tensor<128x64xf32>) down(%wd : tensor<64x128xf32>) {activation = #transformer.activation<relu>} : tensor<2x3x64xf32>
  return %0, %1, %2 : tensor<2x3x64xf32>, tensor<2x3x64xf32>, tensor<2x3x64xf32>
}

// -----

// K = 64 is no multiple of 128: an error at the op.
// K: error: 'transformer.linear' op weight_quant group_size 128 does not divide the input dimension 64 of weight
// INT8-LABEL: func.func @small_k
// INT4-LABEL: func.func @small_k
// ACT-LABEL: func.func @small_k
func.func @small_k(%x: tensor<2x3x64xf32>, %w: tensor<8x64xf32>) -> tensor<2x3x8xf32> {
  %0 = transformer.linear %x, %w : tensor<2x3x64xf32>, tensor<8x64xf32> -> tensor<2x3x8xf32>
  return %0 : tensor<2x3x8xf32>
}

// TYPE: error: transformer-quantize-weights: type must be int8 or int4, got 'int2'
// GROUP: error: int4 weights need group_size = 32, 64 or 128, got 48
// ACTTYPE: error: transformer-quantize-weights: quantize-activations must be none or int8, got 'int4'
