// RUN: blockc-opt %s -split-input-file --blockc-cpu-lower-sdpa --canonicalize --cse | FileCheck %s --implicit-check-not=transformer.paged_sdpa

// transformer.paged_sdpa becomes an scf.forall over (sequence, query head)
// writing the [1, len, 1, D] slice of its sequence's rows; per row, the
// online softmax over the positions 0 .. p_t, page by page through the block
// table, K and V rows read from the bf16 pools as vector<8xbf16> and
// widened (no copy of a page, no extf of a pool).
// CHECK-LABEL: func.func @paged_sdpa
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<1x?x4x8xf32>, %[[KP:[^:]+]]: tensor<?x4x2x8xbf16>, %[[VP:[^:]+]]: tensor<?x4x2x8xbf16>, %[[BT:[^:]+]]: tensor<?x?xi32>, %[[CU:[^:]+]]: tensor<?xi32>, %[[SP:[^:]+]]: tensor<?xi32>)
// CHECK-NOT: arith.extf %[[KP]]
// CHECK: %[[B:.+]] = tensor.dim %[[SP]], %{{.+}} : tensor<?xi32>
// CHECK: %[[OUT:.+]] = scf.forall (%[[S:[a-z0-9_]+]], %[[H:[a-z0-9_]+]]) in (%[[B]], 4) shared_outs(%[[SH:[a-z0-9_]+]] = %{{.+}}) -> (tensor<1x?x4x8xf32>)
// CHECK: %[[KVH:.+]] = arith.divui %[[H]], %{{.+}} : index
// CHECK: %[[ROWS:.+]] = tensor.extract_slice %[[SH]][0, %[[START:[a-z0-9_]+]], %[[H]], 0] [1, %[[LEN:[a-z0-9_]+]], 1, 8] [1, 1, 1, 1] : tensor<1x?x4x8xf32> to tensor<1x?x1x8xf32>
// CHECK: scf.for %[[I:[a-z0-9_]+]] = %{{.+}} to %[[LEN]] step %{{.+}} iter_args(%{{.+}} = %[[ROWS]])
// CHECK: vector.transfer_read %[[Q]][%{{.+}}, %{{.+}}, %[[H]], %{{.+}}], %{{.+}} {in_bounds = [true]} : tensor<1x?x4x8xf32>, vector<8xf32>
// CHECK: arith.ceildivui
// CHECK: scf.for %[[LP:[a-z0-9_]+]] = {{.+}} -> (f32, f32, vector<8xf32>)
// CHECK: tensor.extract %[[BT]][%[[S]], %[[LP]]] : tensor<?x?xi32>
// CHECK: scf.for {{.+}} -> (f32, f32, vector<8xf32>)
// CHECK: %[[KR:.+]] = vector.transfer_read %[[KP]][%{{.+}}, %{{.+}}, %[[KVH]], %{{.+}}], %{{.+}} {in_bounds = [true]} : tensor<?x4x2x8xbf16>, vector<8xbf16>
// CHECK: arith.extf %[[KR]] : vector<8xbf16> to vector<8xf32>
// CHECK: vector.reduction <add>, %{{.+}} fastmath<reassoc> : vector<8xf32> into f32
// CHECK: %[[VR:.+]] = vector.transfer_read %[[VP]][%{{.+}}, %{{.+}}, %[[KVH]], %{{.+}}], %{{.+}} {in_bounds = [true]} : tensor<?x4x2x8xbf16>, vector<8xbf16>
// CHECK: arith.extf %[[VR]] : vector<8xbf16> to vector<8xf32>
// CHECK: arith.divf %{{.+}}, %{{.+}} : vector<8xf32>
// CHECK: vector.transfer_write %{{.+}}, %{{.+}}[%{{.+}}, %[[I]], %{{.+}}, %{{.+}}] {in_bounds = [true]} : vector<8xf32>, tensor<1x?x1x8xf32>
// CHECK: tensor.parallel_insert_slice %{{.+}} into %[[SH]][0, %[[START]], %[[H]], 0] [1, %[[LEN]], 1, 8] [1, 1, 1, 1] : tensor<1x?x1x8xf32> into tensor<1x?x4x8xf32>
// CHECK: {blockc_codegen.kernel = #blockc_codegen.kernel<attention>}
// CHECK: return %[[OUT]]
func.func @paged_sdpa(%q: tensor<1x?x4x8xf32>, %kp: tensor<?x4x2x8xbf16>, %vp: tensor<?x4x2x8xbf16>, %bt: tensor<?x?xi32>, %cu: tensor<?xi32>, %sp: tensor<?xi32>) -> tensor<1x?x4x8xf32> {
  %0 = transformer.paged_sdpa %q, %kp, %vp, %bt, %cu, %sp : tensor<1x?x4x8xf32>, tensor<?x4x2x8xbf16>, tensor<?x4x2x8xbf16>, tensor<?x?xi32>, tensor<?xi32>, tensor<?xi32> -> tensor<1x?x4x8xf32>
  return %0 : tensor<1x?x4x8xf32>
}
