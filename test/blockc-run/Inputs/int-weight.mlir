// An entry with an integer weight argument (blockc-run refuses it).
func.func @forward(%x: tensor<?x?x16xbf16>, %w: tensor<16xi32> {transformer.weight_name = "w"}) -> tensor<?x?x16xbf16> {
  return %x : tensor<?x?x16xbf16>
}
