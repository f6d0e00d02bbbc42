// RUN: blockc-opt %s -split-input-file --blockc-gpu-separate-head-buffers | FileCheck %s

// v's rounding starts from the empty tensor the norm also starts from (CSE
// merged them): it gets an allocation of its own; the norm keeps the empty.

#id = affine_map<(d0, d1) -> (d0, d1)>
#a = affine_map<(m, n, k) -> (m, k)>
#w = affine_map<(m, n, k) -> (n, k)>
#o = affine_map<(m, n, k) -> (m, n)>
// CHECK-LABEL: func.func @shared_empty
// CHECK-SAME:    %[[X:.+]]: tensor<?x128xbf16>
// CHECK:         %[[M:.+]] = tensor.dim %[[X]]
// CHECK:         %[[E:.+]] = tensor.empty(%[[M]]) : tensor<?x128xbf16>
// CHECK:         %[[N:.+]] = linalg.generic {{.+}} outs(%[[E]] : tensor<?x128xbf16>)
// CHECK:         %[[S:.+]] = linalg.generic {{.+}} ins(%[[N]], %{{.+}} :
// CHECK:         %[[OWN:.+]] = bufferization.alloc_tensor(%[[M]]) : tensor<?x128xbf16>
// CHECK:         %[[V:.+]] = linalg.generic {{.+}} ins(%[[S]] : tensor<?x128xf32>) outs(%[[OWN]] : tensor<?x128xbf16>)
// CHECK:         tensor.expand_shape %[[V]] {{\[\[}}0], [1, 2]]
func.func @shared_empty(%x: tensor<?x128xbf16>, %w: tensor<128x128xbf16>)
    -> (tensor<?x2x64xbf16>, tensor<?x128xbf16>) {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %m = tensor.dim %x, %c0 : tensor<?x128xbf16>
  %e = tensor.empty(%m) : tensor<?x128xbf16>
  %norm = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<?x128xbf16>) outs(%e : tensor<?x128xbf16>) {
  ^bb0(%in: bf16, %out: bf16):
    linalg.yield %in : bf16
  } -> tensor<?x128xbf16>
  %acc0 = tensor.empty(%m) : tensor<?x128xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%acc0 : tensor<?x128xf32>) -> tensor<?x128xf32>
  %sum = linalg.generic {indexing_maps = [#a, #w, #o], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%norm, %w : tensor<?x128xbf16>, tensor<128x128xbf16>) outs(%acc : tensor<?x128xf32>) {
  ^bb0(%in: bf16, %wv: bf16, %out: f32):
    %0 = arith.extf %in : bf16 to f32
    %1 = arith.extf %wv : bf16 to f32
    %2 = arith.mulf %0, %1 : f32
    %3 = arith.addf %out, %2 : f32
    linalg.yield %3 : f32
  } -> tensor<?x128xf32>
  %v = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%sum : tensor<?x128xf32>) outs(%e : tensor<?x128xbf16>) {
  ^bb0(%in: f32, %out: bf16):
    %0 = arith.truncf %in : f32 to bf16
    linalg.yield %0 : bf16
  } -> tensor<?x128xbf16>
  %heads = tensor.expand_shape %v [[0], [1, 2]] output_shape [%m, 2, 64]
      : tensor<?x128xbf16> into tensor<?x2x64xbf16>
  return %heads, %norm : tensor<?x2x64xbf16>, tensor<?x128xbf16>
}

// -----

// Left alone: a rounding whose empty tensor has no other use, one whose
// result is not split into heads, and a generic that reads no contraction.

#id = affine_map<(d0, d1) -> (d0, d1)>
#a = affine_map<(m, n, k) -> (m, k)>
#w = affine_map<(m, n, k) -> (n, k)>
#o = affine_map<(m, n, k) -> (m, n)>
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT:     bufferization.alloc_tensor
// CHECK:         return
func.func @left_alone(%x: tensor<4x128xbf16>, %w: tensor<128x128xbf16>)
    -> (tensor<4x2x64xbf16>, tensor<4x128xbf16>, tensor<4x2x64xbf16>) {
  %zero = arith.constant 0.0 : f32
  %acc0 = tensor.empty() : tensor<4x128xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%acc0 : tensor<4x128xf32>) -> tensor<4x128xf32>
  %sum = linalg.generic {indexing_maps = [#a, #w, #o], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<4x128xbf16>, tensor<128x128xbf16>) outs(%acc : tensor<4x128xf32>) {
  ^bb0(%in: bf16, %wv: bf16, %out: f32):
    %0 = arith.extf %in : bf16 to f32
    %1 = arith.extf %wv : bf16 to f32
    %2 = arith.mulf %0, %1 : f32
    %3 = arith.addf %out, %2 : f32
    linalg.yield %3 : f32
  } -> tensor<4x128xf32>
  %own = tensor.empty() : tensor<4x128xbf16>
  %q = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%sum : tensor<4x128xf32>) outs(%own : tensor<4x128xbf16>) {
  ^bb0(%in: f32, %out: bf16):
    %0 = arith.truncf %in : f32 to bf16
    linalg.yield %0 : bf16
  } -> tensor<4x128xbf16>
  %qh = tensor.expand_shape %q [[0], [1, 2]] output_shape [4, 2, 64]
      : tensor<4x128xbf16> into tensor<4x2x64xbf16>
  %e = tensor.empty() : tensor<4x128xbf16>
  %r = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%sum, %x : tensor<4x128xf32>, tensor<4x128xbf16>) outs(%e : tensor<4x128xbf16>) {
  ^bb0(%in: f32, %xv: bf16, %out: bf16):
    %0 = arith.extf %xv : bf16 to f32
    %1 = arith.addf %in, %0 : f32
    %2 = arith.truncf %1 : f32 to bf16
    linalg.yield %2 : bf16
  } -> tensor<4x128xbf16>
  %c = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x128xbf16>) outs(%e : tensor<4x128xbf16>) {
  ^bb0(%in: bf16, %out: bf16):
    linalg.yield %in : bf16
  } -> tensor<4x128xbf16>
  %ch = tensor.expand_shape %c [[0], [1, 2]] output_shape [4, 2, 64]
      : tensor<4x128xbf16> into tensor<4x2x64xbf16>
  return %qh, %r, %ch : tensor<4x2x64xbf16>, tensor<4x128xbf16>, tensor<4x2x64xbf16>
}
