func.func @f(%x: tensor<2x4x8xf32>, %g: tensor<8xf32>, %w: tensor<8x8xf32>) -> tensor<2x4x8xf32> {
  %n = transformer.rms_norm %x, %g {epsilon = 1.0e-5 : f64} : tensor<2x4x8xf32>, tensor<8xf32>
  %l = transformer.linear %n, %w : tensor<2x4x8xf32>, tensor<8x8xf32> -> tensor<2x4x8xf32>
  %a = transformer.activation <silu> %l : tensor<2x4x8xf32>
  %r = transformer.residual_add %x, %a : tensor<2x4x8xf32>
  return %r : tensor<2x4x8xf32>
}
