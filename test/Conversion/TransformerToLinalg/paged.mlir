// RUN: blockc-opt %s -split-input-file --convert-transformer-to-linalg --cse --mlir-print-local-scope \
// RUN:   | FileCheck %s --implicit-check-not=transformer.

// transformer.token_positions: total = cu[B], then for every sequence b and
// new row t in cu[b] .. cu[b+1] - 1, result[t] = seq_pos[b] + t - cu[b].
// CHECK-LABEL: func.func @token_positions
// CHECK-SAME: (%[[CU:[a-z0-9_]+]]: tensor<?xi32>, %[[SP:[a-z0-9_]+]]: tensor<?xi32>)
// CHECK: %[[B:[a-z0-9_]+]] = tensor.dim %[[SP]], %{{.+}} : tensor<?xi32>
// CHECK: %[[TOTAL:[a-z0-9_]+]] = tensor.extract %[[CU]][%[[B]]]
// CHECK: scf.for %[[S:[a-z0-9_]+]] = %{{.+}} to %[[B]] step
// CHECK: %[[START:[a-z0-9_]+]] = arith.index_cast %{{.+}} : i32 to index
// CHECK: %[[END:[a-z0-9_]+]] = arith.index_cast %{{.+}} : i32 to index
// CHECK: %[[CACHED:[a-z0-9_]+]] = arith.index_cast %{{.+}} : i32 to index
// CHECK: scf.for %[[T:[a-z0-9_]+]] = %[[START]] to %[[END]] step
// CHECK: %[[I:[a-z0-9_]+]] = arith.subi %[[T]], %[[START]] : index
// CHECK: %[[P:[a-z0-9_]+]] = arith.addi %[[CACHED]], %[[I]] : index
// CHECK: %[[P32:[a-z0-9_]+]] = arith.index_cast %[[P]] : index to i32
// CHECK: tensor.insert %[[P32]] into %{{.+}}[%[[T]]] : tensor<?xi32>
func.func @token_positions(%cu: tensor<?xi32>, %sp: tensor<?xi32>) -> tensor<?xi32> {
  %0 = transformer.token_positions %cu, %sp : tensor<?xi32>, tensor<?xi32> -> tensor<?xi32>
  return %0 : tensor<?xi32>
}

// -----

// transformer.paged_kv_write: per sequence and new row, the position's
// logical page and slot, two bound checks, and one insert_slice of the row
// [1, 1, H_kv, D] into its page's slot.
// CHECK-LABEL: func.func @paged_kv_write
// CHECK-SAME: (%[[K:[^:]+]]: tensor<1x?x2x8xbf16>, %[[KP:[^:]+]]: tensor<?x4x2x8xbf16>, %[[BT:[^:]+]]: tensor<?x?xi32>
// CHECK-DAG: %[[C4:[a-z0-9_]+]] = arith.constant 4 : index
// CHECK-DAG: %[[PAGES:[a-z0-9_]+]] = tensor.dim %[[KP]], %{{.+}} : tensor<?x4x2x8xbf16>
// CHECK-DAG: %[[MAXP:[a-z0-9_]+]] = tensor.dim %[[BT]], %{{.+}} : tensor<?x?xi32>
// CHECK: scf.for %[[S:[a-z0-9_]+]] = {{.+}} iter_args(%{{.+}} = %[[KP]]) -> (tensor<?x4x2x8xbf16>)
// CHECK: scf.for %[[T:[a-z0-9_]+]] = {{.+}} -> (tensor<?x4x2x8xbf16>)
// CHECK: %[[J:[a-z0-9_]+]] = arith.addi
// CHECK: %[[LOGICAL:[a-z0-9_]+]] = arith.divui %[[J]], %[[C4]] : index
// CHECK: %[[SLOT:[a-z0-9_]+]] = arith.remui %[[J]], %[[C4]] : index
// CHECK: arith.cmpi slt, %[[LOGICAL]], %[[MAXP]] : index
// CHECK: cf.assert %{{.+}}, "blockc: paged KV write past the block table (position / page size >= max_pages)"
// CHECK: %[[PID:[a-z0-9_]+]] = tensor.extract %[[BT]][%[[S]], %[[LOGICAL]]] : tensor<?x?xi32>
// CHECK: %[[PAGE:[a-z0-9_]+]] = arith.index_cast %[[PID]] : i32 to index
// CHECK: arith.cmpi slt, %[[PAGE]], %[[PAGES]] : index
// CHECK: cf.assert %{{.+}}, "blockc: block table names a page outside the pool"
// CHECK: %[[ROW:[a-z0-9_]+]] = tensor.extract_slice %[[K]][0, %[[T]], 0, 0] [1, 1, 2, 8] [1, 1, 1, 1] : tensor<1x?x2x8xbf16> to tensor<1x1x2x8xbf16>
// CHECK: tensor.insert_slice %[[ROW]] into %{{.+}}[%[[PAGE]], %[[SLOT]], 0, 0] [1, 1, 2, 8] [1, 1, 1, 1] : tensor<1x1x2x8xbf16> into tensor<?x4x2x8xbf16>
func.func @paged_kv_write(%k: tensor<1x?x2x8xbf16>, %kp: tensor<?x4x2x8xbf16>, %bt: tensor<?x?xi32>, %cu: tensor<?xi32>, %sp: tensor<?xi32>) -> tensor<?x4x2x8xbf16> {
  %0 = transformer.paged_kv_write %k into %kp, %bt, %cu, %sp : tensor<1x?x2x8xbf16> into tensor<?x4x2x8xbf16>, tensor<?x?xi32>, tensor<?xi32>, tensor<?xi32>
  return %0 : tensor<?x4x2x8xbf16>
}

// -----

// Per-token positions: the rope's cos/sin tables and the embedding's
// position rows read positions[t].
// CHECK-LABEL: func.func @per_token_positions
// CHECK-SAME: (%{{[^:]+}}: tensor<1x?x2x8xf32>, %[[P:[^:]+]]: tensor<?xi32>
// CHECK: linalg.generic
// CHECK: %[[T:[a-z0-9_]+]] = linalg.index 0 : index
// CHECK: %[[PT:[a-z0-9_]+]] = tensor.extract %[[P]][%[[T]]] : tensor<?xi32>
// CHECK: arith.index_cast %[[PT]] : i32 to index
// CHECK: math.cos
// CHECK: linalg.generic
// CHECK: linalg.generic
// CHECK: %[[T2:[a-z0-9_]+]] = linalg.index 1 : index
// CHECK: %[[PT2:[a-z0-9_]+]] = tensor.extract %[[P]][%[[T2]]] : tensor<?xi32>
// CHECK: arith.index_cast %[[PT2]] : i32 to index
// CHECK: tensor.extract %{{.+}} : tensor<16x8xf32>
func.func @per_token_positions(%x: tensor<1x?x2x8xf32>, %p: tensor<?xi32>, %ids: tensor<1x?xi32>, %wte: tensor<30x8xf32>, %wpe: tensor<16x8xf32>) -> (tensor<1x?x2x8xf32>, tensor<1x?x8xf32>) {
  %0 = transformer.rope %x positions(%p : tensor<?xi32>) : tensor<1x?x2x8xf32>
  %1 = transformer.embedding %ids, %wte positions(%wpe : tensor<16x8xf32>) token_positions(%p : tensor<?xi32>) : tensor<1x?xi32>, tensor<30x8xf32> -> tensor<1x?x8xf32>
  return %0, %1 : tensor<1x?x2x8xf32>, tensor<1x?x8xf32>
}
