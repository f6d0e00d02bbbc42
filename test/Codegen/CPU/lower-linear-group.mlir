// RUN: blockc-opt %s -split-input-file --blockc-cpu-select-tiles="isa=avx512" --blockc-cpu-lower-linear | FileCheck %s
// After CSE the two members keep two outputs.
// RUN: blockc-opt %s -split-input-file --blockc-cpu-select-tiles="isa=avx512" --blockc-cpu-lower-linear --cse | FileCheck %s --check-prefix=CSE

// A horizontal group becomes one kernel: one scf.forall with a shared
// output per member, whose iteration computes column block i of each
// member in turn (K's weight, then V's), and one parallel_insert_slice per
// member at the same offsets. Each member's zero output starts from an
// allocation of its own (bufferization.alloc_tensor, which CSE never
// merges: two equal tensor.empty + fill pairs would become one buffer that
// bufferization copies per member).
// CHECK-LABEL: func.func @kv
// CHECK-SAME:  (%[[X:.+]]: tensor<2x3x16xf32>, %[[WK:.+]]: tensor<8x16xf32>, %[[WV:.+]]: tensor<8x16xf32>)
// CHECK:       %[[AK:.+]] = bufferization.alloc_tensor() : tensor<2x3x8xf32>
// CHECK:       %[[IK:.+]] = linalg.fill ins(%{{.+}} : f32) outs(%[[AK]]
// CHECK:       %[[AV:.+]] = bufferization.alloc_tensor() : tensor<2x3x8xf32>
// CHECK:       %[[IV:.+]] = linalg.fill ins(%{{.+}} : f32) outs(%[[AV]]
// CHECK:       %[[R:.+]]:2 = scf.forall (%{{.+}}) in (1) shared_outs(%[[OK:.+]] = %[[IK]], %[[OV:.+]] = %[[IV]])
// CHECK:       tensor.extract_slice %[[OK]][0, 0, %[[NC:.+]]] [
// CHECK:       vector.transfer_read %[[WK]]
// CHECK:       tensor.extract_slice %[[OV]][0, 0, %[[NC]]] [
// CHECK:       vector.transfer_read %[[WV]]
// CHECK:       scf.forall.in_parallel
// CHECK-NEXT:  tensor.parallel_insert_slice %{{.+}} into %[[OK]][0, 0, %[[NC]]]
// CHECK-NEXT:  tensor.parallel_insert_slice %{{.+}} into %[[OV]][0, 0, %[[NC]]]
// CHECK:       } {blockc_codegen.kernel = #blockc_codegen.kernel<linear>{{.*}}}
// CHECK:       return %[[R]]#0, %[[R]]#1
// CSE-LABEL: func.func @kv
// CSE-COUNT-2: bufferization.alloc_tensor()
// CSE-COUNT-2: linalg.fill
func.func @kv(%x: tensor<2x3x16xf32>, %wk: tensor<8x16xf32>, %wv: tensor<8x16xf32>) -> (tensor<2x3x8xf32>, tensor<2x3x8xf32>) {
  %k = transformer.linear %x, %wk {blockc_codegen.horizontal_group = #blockc_codegen.horizontal_group<0>} : tensor<2x3x16xf32>, tensor<8x16xf32> -> tensor<2x3x8xf32>
  %v = transformer.linear %x, %wv {blockc_codegen.horizontal_group = #blockc_codegen.horizontal_group<0>} : tensor<2x3x16xf32>, tensor<8x16xf32> -> tensor<2x3x8xf32>
  return %k, %v : tensor<2x3x8xf32>, tensor<2x3x8xf32>
}

// -----

// Members that cannot share a kernel (here: different weight shapes, or a
// different input) are lowered on their own despite the common id.
// CHECK-LABEL: func.func @incompatible
// CHECK-COUNT-3: scf.forall (%{{.+}}) in (1) shared_outs(%{{[^ ]+}} = %{{[^ ]+}}) ->
// CHECK-NOT:   scf.forall (
func.func @incompatible(%x: tensor<2x3x16xf32>, %y: tensor<2x3x16xf32>, %wk: tensor<8x16xf32>, %wq: tensor<24x16xf32>) -> (tensor<2x3x8xf32>, tensor<2x3x24xf32>, tensor<2x3x8xf32>) {
  %k = transformer.linear %x, %wk {blockc_codegen.horizontal_group = #blockc_codegen.horizontal_group<0>} : tensor<2x3x16xf32>, tensor<8x16xf32> -> tensor<2x3x8xf32>
  %q = transformer.linear %x, %wq {blockc_codegen.horizontal_group = #blockc_codegen.horizontal_group<0>} : tensor<2x3x16xf32>, tensor<24x16xf32> -> tensor<2x3x24xf32>
  %v = transformer.linear %y, %wk {blockc_codegen.horizontal_group = #blockc_codegen.horizontal_group<0>} : tensor<2x3x16xf32>, tensor<8x16xf32> -> tensor<2x3x8xf32>
  return %k, %q, %v : tensor<2x3x8xf32>, tensor<2x3x24xf32>, tensor<2x3x8xf32>
}

// -----

// A member whose weight is defined after the first member does not
// dominate the group's kernel (built at the first member): lowered alone.
// CHECK-LABEL: func.func @weight_after_first
// CHECK:       scf.forall (%{{.+}}) in (1) shared_outs(%{{[^ ]+}} = %{{[^ ]+}}) ->
// CHECK:       arith.negf
// CHECK:       scf.forall (%{{.+}}) in (1) shared_outs(%{{[^ ]+}} = %{{[^ ]+}}) ->
func.func @weight_after_first(%x: tensor<2x3x16xf32>, %wk: tensor<8x16xf32>, %w: tensor<8x16xf32>) -> (tensor<2x3x8xf32>, tensor<2x3x8xf32>) {
  %k = transformer.linear %x, %wk {blockc_codegen.horizontal_group = #blockc_codegen.horizontal_group<0>} : tensor<2x3x16xf32>, tensor<8x16xf32> -> tensor<2x3x8xf32>
  %wv = arith.negf %w : tensor<8x16xf32>
  %v = transformer.linear %x, %wv {blockc_codegen.horizontal_group = #blockc_codegen.horizontal_group<0>} : tensor<2x3x16xf32>, tensor<8x16xf32> -> tensor<2x3x8xf32>
  return %k, %v : tensor<2x3x8xf32>, tensor<2x3x8xf32>
}

// -----

// A weight defined in a block that dominates the members' block (here the
// entry block of a function with a branch) is available: one kernel.
// CHECK-LABEL: func.func @weight_in_dominating_block
// CHECK:       arith.negf
// CHECK:       ^bb1:
// CHECK:       scf.forall (%{{.+}}) in (1) shared_outs(%{{[^ ]+}} = %{{[^ ]+}}, %{{[^ ]+}} = %{{[^ ]+}}) ->
// CHECK-NOT:   scf.forall (
func.func @weight_in_dominating_block(%x: tensor<2x3x16xf32>, %wk: tensor<8x16xf32>, %w: tensor<8x16xf32>) -> (tensor<2x3x8xf32>, tensor<2x3x8xf32>) {
  %wv = arith.negf %w : tensor<8x16xf32>
  cf.br ^bb1
^bb1:
  %k = transformer.linear %x, %wk {blockc_codegen.horizontal_group = #blockc_codegen.horizontal_group<0>} : tensor<2x3x16xf32>, tensor<8x16xf32> -> tensor<2x3x8xf32>
  %v = transformer.linear %x, %wv {blockc_codegen.horizontal_group = #blockc_codegen.horizontal_group<0>} : tensor<2x3x16xf32>, tensor<8x16xf32> -> tensor<2x3x8xf32>
  return %k, %v : tensor<2x3x8xf32>, tensor<2x3x8xf32>
}
