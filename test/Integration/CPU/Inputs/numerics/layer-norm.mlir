func.func @forward(%x: tensor<?x?x64xf32>, %g: tensor<64xf32> {transformer.weight_name = "g"}, %b: tensor<64xf32> {transformer.weight_name = "b"}) -> tensor<?x?x64xf32> {
  %y = transformer.layer_norm %x, %g, %b {epsilon = 1.0e-5 : f64} : tensor<?x?x64xf32>, tensor<64xf32>, tensor<64xf32>
  return %y : tensor<?x?x64xf32>
}
