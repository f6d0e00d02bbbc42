// GQA attention (4 query heads, 2 kv heads, D = 128, causal) for
// no-spill.test: q, k and v are slices of the input.
func.func @forward(%x: tensor<?x?x512xf32>) -> tensor<?x?x512xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %b = tensor.dim %x, %c0 : tensor<?x?x512xf32>
  %t = tensor.dim %x, %c1 : tensor<?x?x512xf32>
  %xk = tensor.extract_slice %x[0, 0, 0] [%b, %t, 256] [1, 1, 1] : tensor<?x?x512xf32> to tensor<?x?x256xf32>
  %xv = tensor.extract_slice %x[0, 0, 256] [%b, %t, 256] [1, 1, 1] : tensor<?x?x512xf32> to tensor<?x?x256xf32>
  %q = tensor.expand_shape %x [[0], [1], [2, 3]] output_shape [%b, %t, 4, 128] : tensor<?x?x512xf32> into tensor<?x?x4x128xf32>
  %k = tensor.expand_shape %xk [[0], [1], [2, 3]] output_shape [%b, %t, 2, 128] : tensor<?x?x256xf32> into tensor<?x?x2x128xf32>
  %v = tensor.expand_shape %xv [[0], [1], [2, 3]] output_shape [%b, %t, 2, 128] : tensor<?x?x256xf32> into tensor<?x?x2x128xf32>
  %o = transformer.sdpa %q, %k, %v {causal} : tensor<?x?x4x128xf32>, tensor<?x?x2x128xf32>, tensor<?x?x2x128xf32> -> tensor<?x?x4x128xf32>
  %r = tensor.collapse_shape %o [[0], [1], [2, 3]] : tensor<?x?x4x128xf32> into tensor<?x?x512xf32>
  return %r : tensor<?x?x512xf32>
}
