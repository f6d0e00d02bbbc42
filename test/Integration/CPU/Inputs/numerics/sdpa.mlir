func.func @forward(%x: tensor<?x?x64xf32>, %s: tensor<64xf32> {transformer.weight_name = "qscale"}) -> tensor<?x?x64xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %b = tensor.dim %x, %c0 : tensor<?x?x64xf32>
  %t = tensor.dim %x, %c1 : tensor<?x?x64xf32>
  %e = tensor.empty(%b, %t) : tensor<?x?x64xf32>
  %q2 = linalg.generic {indexing_maps = [affine_map<(i,j,k)->(i,j,k)>, affine_map<(i,j,k)->(k)>, affine_map<(i,j,k)->(i,j,k)>], iterator_types = ["parallel","parallel","parallel"]} ins(%x, %s : tensor<?x?x64xf32>, tensor<64xf32>) outs(%e : tensor<?x?x64xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %m = arith.mulf %a, %c : f32
    linalg.yield %m : f32
  } -> tensor<?x?x64xf32>
  %q = tensor.expand_shape %q2 [[0], [1], [2, 3]] output_shape [%b, %t, 4, 16] : tensor<?x?x64xf32> into tensor<?x?x4x16xf32>
  %k = tensor.expand_shape %x [[0], [1], [2, 3]] output_shape [%b, %t, 4, 16] : tensor<?x?x64xf32> into tensor<?x?x4x16xf32>
  %o = transformer.sdpa %q, %k, %k {causal} : tensor<?x?x4x16xf32>, tensor<?x?x4x16xf32>, tensor<?x?x4x16xf32> -> tensor<?x?x4x16xf32>
  %r = tensor.collapse_shape %o [[0], [1], [2, 3]] : tensor<?x?x4x16xf32> into tensor<?x?x64xf32>
  return %r : tensor<?x?x64xf32>
}
