// An entry taking token ids must return f32 logits [B, T, vocab].
func.func @forward(%ids: tensor<?x?xi32>, %wte: tensor<32x16xbf16> {transformer.weight_name = "wte"}) -> tensor<?x?x16xbf16> {
  %x = transformer.embedding %ids, %wte : tensor<?x?xi32>, tensor<32x16xbf16> -> tensor<?x?x16xbf16>
  return %x : tensor<?x?x16xbf16>
}
