// An entry taking token ids must embed them.
func.func @forward(%ids: tensor<1x1xi32>, %x: tensor<1x1x32xf32> {transformer.weight_name = "x"}) -> tensor<1x1x32xf32> {
  return %x : tensor<1x1x32xf32>
}
