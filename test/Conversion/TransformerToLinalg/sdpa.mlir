// RUN: blockc-opt %s -split-input-file --convert-transformer-to-linalg --mlir-print-local-scope \
// RUN:   | FileCheck %s --implicit-check-not=transformer.

// transformer.sdpa becomes five generics over scores [B, H, T, S]:
//   1. scores = Q K^T, with GQA in the key map (h floordiv (H / H_kv));
//   2. the row max of scale * scores (masked to -inf when causal);
//   3. p = exp(scale * scores - max) (masked to exactly 0 when causal);
//   4. the row sum of p;
//   5. p / sum, guarded so that a zero sum gives 0 rather than NaN;
// then the P V contraction into [B, T, H, D_v], GQA again in the value map
// (when causal, masked keys are skipped by a select, so a NaN or Inf in a
// later value row cannot reach earlier rows).

// GQA (H = 4 over H_kv = 2), causal, default scale 1/sqrt(8).
// CHECK-LABEL: func.func @sdpa_gqa_causal
// CHECK-SAME: (%[[Q:.+]]: tensor<2x4x4x8xf32>, %[[K:.+]]: tensor<2x6x2x8xf32>, %[[V:.+]]: tensor<2x6x2x8xf32>)
// CHECK-DAG: %[[SCALE:.+]] = arith.constant 0.353553385 : f32
// CHECK-DAG: %[[T_C:.+]] = arith.constant 4 : index
// CHECK-DAG: %[[S_C:.+]] = arith.constant 6 : index
// Bottom-right causal alignment: row t sees s <= t + (S - T).
// CHECK: %[[OFFSET:.+]] = arith.subi %[[S_C]], %[[T_C]] : index
// CHECK: %[[SCORES_INIT:.+]] = linalg.fill ins(%{{[^ ]+}} : f32) outs(%{{[^ ]+}} : tensor<2x4x4x6xf32>)
// CHECK: %[[SCORES:.+]] = linalg.generic
// CHECK-SAME: indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d2, d1, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d3, d1 floordiv 2, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>]
// CHECK-SAME: iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]
// CHECK-SAME: ins(%[[Q]], %[[K]] : tensor<2x4x4x8xf32>, tensor<2x6x2x8xf32>) outs(%[[SCORES_INIT]] : tensor<2x4x4x6xf32>)
// CHECK: arith.mulf
// CHECK: arith.addf
// Row max, seeded with -inf.
// CHECK-DAG: %[[NEG_INF:.+]] = arith.constant 0xFF800000 : f32
// CHECK: %[[MAX_INIT:.+]] = linalg.fill ins(%[[NEG_INF]] : f32) outs(%{{[^ ]+}} : tensor<2x4x4xf32>)
// CHECK: %[[MAX:.+]] = linalg.generic
// CHECK-SAME: indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>]
// CHECK-SAME: iterator_types = ["parallel", "parallel", "parallel", "reduction"]
// CHECK-SAME: ins(%[[SCORES]] : tensor<2x4x4x6xf32>) outs(%[[MAX_INIT]] : tensor<2x4x4xf32>)
// CHECK: ^bb0(%[[S_IN:.+]]: f32, %[[M_OUT:.+]]: f32):
// CHECK: %[[SCALED:.+]] = arith.mulf %[[S_IN]], %[[SCALE]] : f32
// CHECK: %[[T:.+]] = linalg.index 2 : index
// CHECK: %[[S:.+]] = linalg.index 3 : index
// CHECK: %[[LIMIT:.+]] = arith.addi %[[T]], %[[OFFSET]] : index
// CHECK: %[[MASKED:.+]] = arith.cmpi sgt, %[[S]], %[[LIMIT]] : index
// CHECK: %[[SEL:.+]] = arith.select %[[MASKED]], %[[NEG_INF]], %[[SCALED]] : f32
// CHECK: %[[NEW_MAX:.+]] = arith.maximumf %[[M_OUT]], %[[SEL]] : f32
// CHECK: linalg.yield %[[NEW_MAX]] : f32
// Shifted exponentials; masked entries are exactly 0.
// CHECK: %[[P:.+]] = linalg.generic
// CHECK-SAME: indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>]
// CHECK-SAME: iterator_types = ["parallel", "parallel", "parallel", "parallel"]
// CHECK-SAME: ins(%[[SCORES]], %[[MAX]] : tensor<2x4x4x6xf32>, tensor<2x4x4xf32>)
// CHECK: ^bb0(%[[S_IN2:.+]]: f32, %[[M_IN:.+]]: f32, %{{.+}}: f32):
// CHECK: %[[SCALED2:.+]] = arith.mulf %[[S_IN2]], %[[SCALE]] : f32
// CHECK: %[[SHIFTED:.+]] = arith.subf %[[SCALED2]], %[[M_IN]] : f32
// CHECK: %[[E:.+]] = math.exp %[[SHIFTED]] : f32
// CHECK: %[[MASKED2:.+]] = arith.cmpi sgt
// CHECK: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[PE:.+]] = arith.select %[[MASKED2]], %[[ZERO]], %[[E]] : f32
// CHECK: linalg.yield %[[PE]] : f32
// Row sum.
// CHECK: %[[SUM:.+]] = linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "parallel", "parallel", "reduction"]
// CHECK-SAME: ins(%[[P]] : tensor<2x4x4x6xf32>)
// Guarded normalisation.
// CHECK: %[[PN:.+]] = linalg.generic
// CHECK-SAME: ins(%[[P]], %[[SUM]] : tensor<2x4x4x6xf32>, tensor<2x4x4xf32>)
// CHECK: ^bb0(%[[P_IN:.+]]: f32, %[[SUM_IN:.+]]: f32, %{{.+}}: f32):
// CHECK: %[[Z:.+]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[IS_ZERO:.+]] = arith.cmpf oeq, %[[SUM_IN]], %[[Z]] : f32
// CHECK: %[[RATIO:.+]] = arith.divf %[[P_IN]], %[[SUM_IN]] : f32
// CHECK: %[[NORM:.+]] = arith.select %[[IS_ZERO]], %[[Z]], %[[RATIO]] : f32
// CHECK: linalg.yield %[[NORM]] : f32
// P V, with GQA on the value's head index.
// CHECK: %[[OUT_INIT:.+]] = linalg.fill ins(%{{[^ ]+}} : f32) outs(%{{[^ ]+}} : tensor<2x4x4x8xf32>)
// CHECK: %[[R:.+]] = linalg.generic
// CHECK-SAME: indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d2, d1, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d4, d2 floordiv 2, d3)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>]
// CHECK-SAME: iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]
// CHECK-SAME: ins(%[[PN]], %[[V]] : tensor<2x4x4x6xf32>, tensor<2x6x2x8xf32>) outs(%[[OUT_INIT]] : tensor<2x4x4x8xf32>)
// A masked key adds nothing (not 0 x v, which is NaN for a NaN or Inf value
// row): row t = d1, key s = d4.
// CHECK: ^bb0(%[[PV_P:.+]]: f32, %[[PV_V:.+]]: f32, %[[PV_ACC:.+]]: f32):
// CHECK: %[[PV:.+]] = arith.mulf %[[PV_P]], %[[PV_V]] : f32
// CHECK: %[[PV_SUM:.+]] = arith.addf %[[PV_ACC]], %[[PV]] : f32
// CHECK: %[[PV_T:.+]] = linalg.index 1 : index
// CHECK: %[[PV_S:.+]] = linalg.index 4 : index
// CHECK: %[[PV_LIMIT:.+]] = arith.addi %[[PV_T]], %[[OFFSET]] : index
// CHECK: %[[PV_MASKED:.+]] = arith.cmpi sgt, %[[PV_S]], %[[PV_LIMIT]] : index
// CHECK: %[[PV_SEL:.+]] = arith.select %[[PV_MASKED]], %[[PV_ACC]], %[[PV_SUM]] : f32
// CHECK: linalg.yield %[[PV_SEL]] : f32
// CHECK: return %[[R]]
func.func @sdpa_gqa_causal(%q: tensor<2x4x4x8xf32>, %k: tensor<2x6x2x8xf32>, %v: tensor<2x6x2x8xf32>) -> tensor<2x4x4x8xf32> {
  %0 = transformer.sdpa %q, %k, %v {causal} : tensor<2x4x4x8xf32>, tensor<2x6x2x8xf32>, tensor<2x6x2x8xf32> -> tensor<2x4x4x8xf32>
  return %0 : tensor<2x4x4x8xf32>
}

// -----

// MHA, not causal, explicit scale, dynamic B, T and S: no mask at all
// (no linalg.index, no cmpi sgt), no floordiv in the maps (group of 1), and
// the scores are sized from the query (B, T) and the key (S).
// CHECK-LABEL: func.func @sdpa_mha_dynamic
// CHECK-SAME: (%[[Q:.+]]: tensor<?x?x2x8xf32>, %[[K:.+]]: tensor<?x?x2x8xf32>, %[[V:.+]]: tensor<?x?x2x8xf32>)
// CHECK-DAG: %[[SCALE:.+]] = arith.constant 1.250000e-01 : f32
// CHECK-DAG: %[[B:.+]] = tensor.dim %[[Q]], %{{[^ ]+}} : tensor<?x?x2x8xf32>
// CHECK-DAG: %[[T:.+]] = tensor.dim %[[Q]], %{{[^ ]+}} : tensor<?x?x2x8xf32>
// CHECK-DAG: %[[S:.+]] = tensor.dim %[[K]], %{{[^ ]+}} : tensor<?x?x2x8xf32>
// CHECK-NOT: arith.subi
// CHECK: tensor.empty(%[[B]], %[[T]], %[[S]]) : tensor<?x2x?x?xf32>
// CHECK: %[[SCORES:.+]] = linalg.generic
// CHECK-SAME: indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d2, d1, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d3, d1, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>]
// CHECK-SAME: ins(%[[Q]], %[[K]] :
// CHECK: %[[MAX:.+]] = linalg.generic
// CHECK: arith.mulf %{{[^ ]+}}, %[[SCALE]] : f32
// CHECK-NEXT: arith.maximumf
// CHECK-NOT: linalg.index
// CHECK-NOT: arith.cmpi sgt
// CHECK: math.exp
// CHECK-NOT: linalg.index
// CHECK-NOT: arith.cmpi sgt
// CHECK: arith.cmpf oeq
// CHECK: %[[R:.+]] = linalg.generic
// CHECK-SAME: indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d2, d1, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d4, d2, d3)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>]
// CHECK-SAME: outs(%{{[^ ]+}} : tensor<?x?x2x8xf32>)
// CHECK: return %[[R]]
func.func @sdpa_mha_dynamic(%q: tensor<?x?x2x8xf32>, %k: tensor<?x?x2x8xf32>, %v: tensor<?x?x2x8xf32>) -> tensor<?x?x2x8xf32> {
  %0 = transformer.sdpa %q, %k, %v {scale = 0.125 : f64} : tensor<?x?x2x8xf32>, tensor<?x?x2x8xf32>, tensor<?x?x2x8xf32> -> tensor<?x?x2x8xf32>
  return %0 : tensor<?x?x2x8xf32>
}

// -----

// MQA (H_kv = 1): every query head reads kv head h floordiv 4.
// CHECK-LABEL: func.func @sdpa_mqa
// CHECK: linalg.generic
// CHECK-SAME: affine_map<(d0, d1, d2, d3, d4) -> (d0, d3, d1 floordiv 4, d4)>
// CHECK: affine_map<(d0, d1, d2, d3, d4) -> (d0, d4, d2 floordiv 4, d3)>
func.func @sdpa_mqa(%q: tensor<1x4x4x8xf32>, %k: tensor<1x4x1x8xf32>, %v: tensor<1x4x1x8xf32>) -> tensor<1x4x4x8xf32> {
  %0 = transformer.sdpa %q, %k, %v : tensor<1x4x4x8xf32>, tensor<1x4x1x8xf32>, tensor<1x4x1x8xf32> -> tensor<1x4x4x8xf32>
  return %0 : tensor<1x4x4x8xf32>
}

// -----

// Causal with a KV cache of dynamic length S after dynamic T new tokens: the
// mask offset S - T is computed from tensor.dim at run time.
// CHECK-LABEL: func.func @sdpa_causal_dynamic
// CHECK-SAME: (%[[Q:.+]]: tensor<1x?x2x8xf32>, %[[K:.+]]: tensor<1x?x2x8xf32>, %[[V:.+]]: tensor<1x?x2x8xf32>)
// CHECK-DAG: %[[T:.+]] = tensor.dim %[[Q]], %{{[^ ]+}} : tensor<1x?x2x8xf32>
// CHECK-DAG: %[[S:.+]] = tensor.dim %[[K]], %{{[^ ]+}} : tensor<1x?x2x8xf32>
// CHECK: %[[OFFSET:.+]] = arith.subi %[[S]], %[[T]] : index
// CHECK: linalg.generic
// CHECK: linalg.generic
// CHECK: %[[TI:.+]] = linalg.index 2 : index
// CHECK: %[[SI:.+]] = linalg.index 3 : index
// CHECK: %[[LIMIT:.+]] = arith.addi %[[TI]], %[[OFFSET]] : index
// CHECK: arith.cmpi sgt, %[[SI]], %[[LIMIT]] : index
func.func @sdpa_causal_dynamic(%q: tensor<1x?x2x8xf32>, %k: tensor<1x?x2x8xf32>, %v: tensor<1x?x2x8xf32>) -> tensor<1x?x2x8xf32> {
  %0 = transformer.sdpa %q, %k, %v {causal} : tensor<1x?x2x8xf32>, tensor<1x?x2x8xf32>, tensor<1x?x2x8xf32> -> tensor<1x?x2x8xf32>
  return %0 : tensor<1x?x2x8xf32>
}
