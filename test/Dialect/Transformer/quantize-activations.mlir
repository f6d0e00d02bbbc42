// RUN: not blockc-opt %s --split-input-file --transformer-quantize-weights="quantize-activations=int8" 2>&1 | FileCheck %s

// transformer-quantize-weights with quantize-activations=int8: every
// projection's input dimension must hold whole runs of 32 columns; an op
// with one that does not is an error naming the projection, and the pass
// fails.

// CHECK: error: 'transformer.ffn' op weight_quant activations = int8 quantises the input in runs of 32 columns: the input dimension 80 of w_down is not a multiple of 32
func.func @ffn_down(%x: tensor<2x3x64xf32>, %w: tensor<64x64xf32>, %wu: tensor<80x64xf32>, %wd: tensor<64x80xf32>) -> (tensor<2x3x64xf32>, tensor<2x3x64xf32>) {
  %0 = transformer.linear %x, %w : tensor<2x3x64xf32>, tensor<64x64xf32> -> tensor<2x3x64xf32>
  %1 = transformer.ffn %x up(%wu : tensor<80x64xf32>) down(%wd : tensor<64x80xf32>) {activation = #transformer.activation<relu>} : tensor<2x3x64xf32>
  return %0, %1 : tensor<2x3x64xf32>, tensor<2x3x64xf32>
}
