// RUN: blockc-opt %s -split-input-file --blockc-cpu-lower-linear | FileCheck %s

// A horizontal group becomes one kernel: one scf.forall with a shared
// output per member, whose iteration computes column block i of each
// member in turn (K's weight, then V's), and one parallel_insert_slice per
// member at the same offsets.
// CHECK-LABEL: func.func @kv
// CHECK-SAME:  (%[[X:.+]]: tensor<2x3x16xf32>, %[[WK:.+]]: tensor<8x16xf32>, %[[WV:.+]]: tensor<8x16xf32>)
// CHECK:       %[[IK:.+]] = linalg.fill
// CHECK:       %[[IV:.+]] = linalg.fill
// CHECK:       %[[R:.+]]:2 = scf.forall (%{{.+}}) in (1) shared_outs(%[[OK:.+]] = %[[IK]], %[[OV:.+]] = %[[IV]])
// CHECK:       tensor.extract_slice %[[OK]][0, 0, %[[NC:.+]]] [
// CHECK:       vector.transfer_read %[[WK]]
// CHECK:       tensor.extract_slice %[[OV]][0, 0, %[[NC]]] [
// CHECK:       vector.transfer_read %[[WV]]
// CHECK:       scf.forall.in_parallel
// CHECK-NEXT:  tensor.parallel_insert_slice %{{.+}} into %[[OK]][0, 0, %[[NC]]]
// CHECK-NEXT:  tensor.parallel_insert_slice %{{.+}} into %[[OV]][0, 0, %[[NC]]]
// CHECK:       } {blockc.linear_kernel}
// CHECK:       return %[[R]]#0, %[[R]]#1
func.func @kv(%x: tensor<2x3x16xf32>, %wk: tensor<8x16xf32>, %wv: tensor<8x16xf32>) -> (tensor<2x3x8xf32>, tensor<2x3x8xf32>) {
  %k = transformer.linear %x, %wk {blockc.horizontal_group = 0 : i64} : tensor<2x3x16xf32>, tensor<8x16xf32> -> tensor<2x3x8xf32>
  %v = transformer.linear %x, %wv {blockc.horizontal_group = 0 : i64} : tensor<2x3x16xf32>, tensor<8x16xf32> -> tensor<2x3x8xf32>
  return %k, %v : tensor<2x3x8xf32>, tensor<2x3x8xf32>
}

// -----

// Members that cannot share a kernel (here: different weight shapes, or a
// different input) are lowered on their own despite the common id.
// CHECK-LABEL: func.func @incompatible
// CHECK-COUNT-3: scf.forall (%{{.+}}) in (1) shared_outs(%{{[^ ]+}} = %{{[^ ]+}}) ->
// CHECK-NOT:   scf.forall (
func.func @incompatible(%x: tensor<2x3x16xf32>, %y: tensor<2x3x16xf32>, %wk: tensor<8x16xf32>, %wq: tensor<24x16xf32>) -> (tensor<2x3x8xf32>, tensor<2x3x24xf32>, tensor<2x3x8xf32>) {
  %k = transformer.linear %x, %wk {blockc.horizontal_group = 0 : i64} : tensor<2x3x16xf32>, tensor<8x16xf32> -> tensor<2x3x8xf32>
  %q = transformer.linear %x, %wq {blockc.horizontal_group = 0 : i64} : tensor<2x3x16xf32>, tensor<24x16xf32> -> tensor<2x3x24xf32>
  %v = transformer.linear %y, %wk {blockc.horizontal_group = 0 : i64} : tensor<2x3x16xf32>, tensor<8x16xf32> -> tensor<2x3x8xf32>
  return %k, %q, %v : tensor<2x3x8xf32>, tensor<2x3x24xf32>, tensor<2x3x8xf32>
}
