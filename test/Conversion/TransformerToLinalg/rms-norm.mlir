// RUN: blockc-opt %s -split-input-file --convert-transformer-to-linalg --mlir-print-local-scope \
// RUN:   | FileCheck %s --implicit-check-not=transformer.

// transformer.rms_norm becomes a max|x| row reduction, a sum-of-squares
// row reduction of the scaled row x * inv, and one elementwise generic
// computing x * inv * rsqrt(sum * (1/d) + eps * inv^2) * weight, where inv =
// 1 / max|x| for rows above 2^50 (whose f32 sum of squares could overflow)
// and finite, else 1 (docs/Robustness.md).

// Static shape: 1/d (1/16) and epsilon (1e-5) are f32 constants.
// CHECK-LABEL: func.func @rms_norm_static
// CHECK-SAME: (%[[X:.+]]: tensor<2x4x16xf32>, %[[G:.+]]: tensor<16xf32>)
// CHECK-DAG: %[[INV_D:.+]] = arith.constant 6.250000e-02 : f32
// CHECK-DAG: %[[EPS:.+]] = arith.constant 9.99999974E-6 : f32
// CHECK: %[[MAX:.+]] = linalg.generic
// CHECK-SAME: indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>]
// CHECK-SAME: iterator_types = ["parallel", "parallel", "reduction"]
// CHECK-SAME: ins(%[[X]] : tensor<2x4x16xf32>)
// CHECK: math.absf
// CHECK: arith.maximumf
// CHECK: %[[SUMSQ:.+]] = linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "parallel", "reduction"]
// CHECK-SAME: ins(%[[X]], %[[MAX]] : tensor<2x4x16xf32>, tensor<2x4xf32>)
// CHECK: ^bb0(%[[IN:.+]]: f32, %[[M:.+]]: f32, %[[OUT:.+]]: f32):
// CHECK: %[[BIG:.+]] = arith.cmpf ogt, %[[M]], %{{.+}} : f32
// CHECK: %[[FIN:.+]] = arith.cmpf olt, %[[M]], %{{.+}} : f32
// CHECK: %[[SCALE:.+]] = arith.select %{{.+}}, %[[M]], %{{.+}} : f32
// CHECK: %[[INV:.+]] = arith.divf %{{.+}}, %[[SCALE]] : f32
// CHECK: %[[XS:.+]] = arith.mulf %[[IN]], %[[INV]] : f32
// CHECK: %[[SQ:.+]] = arith.mulf %[[XS]], %[[XS]] : f32
// CHECK: arith.addf %[[OUT]], %[[SQ]] : f32
// CHECK: %[[R:.+]] = linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "parallel", "parallel"]
// CHECK-SAME: ins(%[[X]], %[[SUMSQ]], %[[G]], %[[MAX]] : tensor<2x4x16xf32>, tensor<2x4xf32>, tensor<16xf32>, tensor<2x4xf32>)
// CHECK: ^bb0(%[[XI:.+]]: f32, %[[SS:.+]]: f32, %[[GI:.+]]: f32, %[[MI:.+]]: f32, %{{.+}}: f32):
// CHECK: %[[INV2:.+]] = arith.divf
// CHECK: %[[MEAN_SQ:.+]] = arith.mulf %[[SS]], %[[INV_D]] : f32
// CHECK: %[[II:.+]] = arith.mulf %[[INV2]], %[[INV2]] : f32
// CHECK: %[[EPS_S:.+]] = arith.mulf %[[EPS]], %[[II]] : f32
// CHECK: %[[SHIFTED:.+]] = arith.addf %[[MEAN_SQ]], %[[EPS_S]] : f32
// CHECK: %[[RSQRT:.+]] = math.rsqrt %[[SHIFTED]] : f32
// CHECK: %[[XS2:.+]] = arith.mulf %[[XI]], %[[INV2]] : f32
// CHECK: %[[NORMED:.+]] = arith.mulf %[[XS2]], %[[RSQRT]] : f32
// CHECK: %[[Y:.+]] = arith.mulf %[[NORMED]], %[[GI]] : f32
// CHECK: linalg.yield %[[Y]] : f32
// CHECK: return %[[R]]
func.func @rms_norm_static(%x: tensor<2x4x16xf32>, %g: tensor<16xf32>) -> tensor<2x4x16xf32> {
  %0 = transformer.rms_norm %x, %g {epsilon = 1.0e-5 : f64} : tensor<2x4x16xf32>, tensor<16xf32>
  return %0 : tensor<2x4x16xf32>
}

// -----

// Dynamic B and T: the accumulator and the result are sized from tensor.dim
// of the input; the default epsilon (1e-6) is used.
// CHECK-LABEL: func.func @rms_norm_dynamic
// CHECK-SAME: (%[[X:.+]]: tensor<?x?x16xf32>, %[[G:.+]]: tensor<16xf32>)
// CHECK-DAG: arith.constant 6.250000e-02 : f32
// CHECK-DAG: arith.constant 9.99999997E-7 : f32
// CHECK: %[[B:.+]] = tensor.dim %[[X]], %{{[^ ]+}} : tensor<?x?x16xf32>
// CHECK: %[[T:.+]] = tensor.dim %[[X]], %{{[^ ]+}} : tensor<?x?x16xf32>
// CHECK: %[[ACC_INIT:.+]] = tensor.empty(%[[B]], %[[T]]) : tensor<?x?xf32>
// CHECK: %[[ACC:.+]] = linalg.fill ins(%{{[^ ]+}} : f32) outs(%[[ACC_INIT]] : tensor<?x?xf32>)
// CHECK: %[[MAX:.+]] = linalg.generic
// CHECK-SAME: ins(%[[X]] : tensor<?x?x16xf32>) outs(%[[ACC]] : tensor<?x?xf32>)
// CHECK: %[[SUMSQ:.+]] = linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "parallel", "reduction"]
// CHECK-SAME: ins(%[[X]], %[[MAX]] : tensor<?x?x16xf32>, tensor<?x?xf32>)
// CHECK: %[[INIT:.+]] = tensor.empty(%{{[^ ]+}}, %{{[^ ]+}}) : tensor<?x?x16xf32>
// CHECK: %[[R:.+]] = linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "parallel", "parallel"]
// CHECK-SAME: ins(%[[X]], %[[SUMSQ]], %[[G]], %[[MAX]] : tensor<?x?x16xf32>, tensor<?x?xf32>, tensor<16xf32>, tensor<?x?xf32>) outs(%[[INIT]] : tensor<?x?x16xf32>)
// CHECK: math.rsqrt
// CHECK: return %[[R]]
func.func @rms_norm_dynamic(%x: tensor<?x?x16xf32>, %g: tensor<16xf32>) -> tensor<?x?x16xf32> {
  %0 = transformer.rms_norm %x, %g : tensor<?x?x16xf32>, tensor<16xf32>
  return %0 : tensor<?x?x16xf32>
}

// -----

// A dynamic normalised dimension: 1/d is computed at run time from
// tensor.dim of the last dimension (index -> i64 -> f32, then 1.0 / d).
// CHECK-LABEL: func.func @rms_norm_dynamic_row
// CHECK-SAME: (%[[X:.+]]: tensor<4x?xf32>, %[[G:.+]]: tensor<16xf32>)
// CHECK-DAG: %[[C1:.+]] = arith.constant 1 : index
// CHECK-DAG: %[[ONE:.+]] = arith.constant 1.000000e+00 : f32
// CHECK-DAG: %[[D:.+]] = tensor.dim %[[X]], %[[C1]] : tensor<4x?xf32>
// CHECK-DAG: %[[D_I64:.+]] = arith.index_cast %[[D]] : index to i64
// CHECK-DAG: %[[D_F32:.+]] = arith.sitofp %[[D_I64]] : i64 to f32
// CHECK: %[[INV_D:.+]] = arith.divf %[[ONE]], %[[D_F32]] : f32
// CHECK: %[[MAX:.+]] = linalg.generic
// CHECK-SAME: indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>]
// CHECK-SAME: iterator_types = ["parallel", "reduction"]
// CHECK: %[[SUMSQ:.+]] = linalg.generic
// CHECK-SAME: indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0)>]
// CHECK-SAME: iterator_types = ["parallel", "reduction"]
// CHECK: linalg.generic
// CHECK-SAME: indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>]
// CHECK-SAME: ins(%[[X]], %[[SUMSQ]], %[[G]], %[[MAX]] :
// CHECK: ^bb0(%{{.+}}: f32, %[[SS:.+]]: f32, %{{.+}}: f32, %{{.+}}: f32, %{{.+}}: f32):
// CHECK: arith.mulf %[[SS]], %[[INV_D]] : f32
func.func @rms_norm_dynamic_row(%x: tensor<4x?xf32>, %g: tensor<16xf32>) -> tensor<4x?xf32> {
  %0 = transformer.rms_norm %x, %g : tensor<4x?xf32>, tensor<16xf32>
  return %0 : tensor<4x?xf32>
}
