func.func @forward(%x: tensor<?x?x64xf32>, %g: tensor<64xf32> {transformer.weight_name = "g"}) -> tensor<?x?x64xf32> {
  %y = transformer.rms_norm %x, %g {epsilon = 1.0e-6 : f64} : tensor<?x?x64xf32>, tensor<64xf32>
  return %y : tensor<?x?x64xf32>
}
