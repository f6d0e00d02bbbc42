// RUN: blockc-opt %s -split-input-file --convert-transformer-to-linalg --cse --mlir-print-local-scope \
// RUN:   | FileCheck %s --implicit-check-not=transformer.

// transformer.embedding becomes one all-parallel generic over [B, T, d]
// that reads the id of (b, t), clamps it into the table and extracts the
// table element.

// CHECK-LABEL: func.func @embedding
// CHECK-SAME: (%[[IDS:.+]]: tensor<?x?xi32>, %[[WTE:.+]]: tensor<300x64xf32>)
// CHECK: %[[INIT:.+]] = tensor.empty(%{{.+}}, %{{.+}}) : tensor<?x?x64xf32>
// CHECK: linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]}
// CHECK-SAME: ins(%[[IDS]] : tensor<?x?xi32>) outs(%[[INIT]] : tensor<?x?x64xf32>)
// CHECK: ^bb0(%[[ID:.+]]: i32, %{{.+}}: f32):
// CHECK: %[[I:.+]] = arith.index_cast %[[ID]] : i32 to index
// CHECK: %[[C:.+]] = linalg.index 2 : index
// CHECK: %[[LAST:.+]] = arith.constant 299 : index
// CHECK: %[[LO:.+]] = arith.maxsi %[[I]], %{{.+}} : index
// CHECK: %[[ROW:.+]] = arith.minsi %[[LO]], %[[LAST]] : index
// CHECK: %[[E:.+]] = tensor.extract %[[WTE]][%[[ROW]], %[[C]]] : tensor<300x64xf32>
// CHECK: linalg.yield %[[E]] : f32
func.func @embedding(%ids: tensor<?x?xi32>, %wte: tensor<300x64xf32>) -> tensor<?x?x64xf32> {
  %0 = transformer.embedding %ids, %wte : tensor<?x?xi32>, tensor<300x64xf32> -> tensor<?x?x64xf32>
  return %0 : tensor<?x?x64xf32>
}

// -----

// With a position table: row t + offset (clamped) is added; in bf16 the sum
// is computed in f32 and rounded once.
// CHECK-LABEL: func.func @embedding_positions
// CHECK-SAME: (%[[IDS:.+]]: tensor<2x?xi32>, %[[WTE:.+]]: tensor<300x64xbf16>, %[[WPE:.+]]: tensor<128x64xbf16>, %[[POS:.+]]: index)
// CHECK: linalg.generic
// CHECK-SAME: ins(%[[IDS]] : tensor<2x?xi32>) outs(%{{.+}} : tensor<2x?x64xbf16>)
// CHECK: %[[C:.+]] = linalg.index 2 : index
// CHECK: %[[E:.+]] = tensor.extract %[[WTE]][%{{.+}}, %[[C]]] : tensor<300x64xbf16>
// CHECK: %[[T:.+]] = linalg.index 1 : index
// CHECK: %[[P:.+]] = arith.addi %[[T]], %[[POS]] : index
// CHECK: %[[PLAST:.+]] = arith.constant 127 : index
// CHECK: %[[PLO:.+]] = arith.maxsi %[[P]], %{{.+}} : index
// CHECK: %[[PROW:.+]] = arith.minsi %[[PLO]], %[[PLAST]] : index
// CHECK: %[[PE:.+]] = tensor.extract %[[WPE]][%[[PROW]], %[[C]]] : tensor<128x64xbf16>
// CHECK: %[[A:.+]] = arith.extf %[[E]] : bf16 to f32
// CHECK: %[[B:.+]] = arith.extf %[[PE]] : bf16 to f32
// CHECK: %[[S:.+]] = arith.addf %[[A]], %[[B]] : f32
// CHECK: %[[R:.+]] = arith.truncf %[[S]] : f32 to bf16
// CHECK: linalg.yield %[[R]] : bf16
func.func @embedding_positions(%ids: tensor<2x?xi32>, %wte: tensor<300x64xbf16>, %wpe: tensor<128x64xbf16>, %pos: index) -> tensor<2x?x64xbf16> {
  %0 = transformer.embedding %ids, %wte positions(%wpe : tensor<128x64xbf16>) offset %pos : tensor<2x?xi32>, tensor<300x64xbf16> -> tensor<2x?x64xbf16>
  return %0 : tensor<2x?x64xbf16>
}
