// RUN: blockc-opt %s -split-input-file --blockc-cpu-select-tiles="isa=avx512" --blockc-cpu-lower-linear --blockc-cpu-fuse-residual | FileCheck %s
// The pass builds no vectors (it only changes where a kernel starts), so it
// reads no target; the ISA only changes the kernel it starts.

// The projection kernel starts from the residual r instead of a zero fill,
// and the residual add disappears (its users read the kernel's result).
// CHECK-LABEL: func.func @fused
// CHECK:         %[[R:.+]] = transformer.activation <silu>
// CHECK-NOT:     linalg.fill
// CHECK:         %[[Y:.+]] = scf.forall (%{{.+}}) in (%{{.+}}) shared_outs(%{{.+}} = %[[R]])
// CHECK:         } {blockc_codegen.kernel = #blockc_codegen.kernel<linear>{{.*}}}
// CHECK-NOT:     transformer.residual_add
// CHECK:         return %[[Y]]
func.func @fused(%a: tensor<?x?x32xf32>, %x: tensor<?x?x16xf32>, %w: tensor<32x16xf32>) -> tensor<?x?x32xf32> {
  %r = transformer.activation <silu> %a : tensor<?x?x32xf32>
  %y = transformer.linear %x, %w : tensor<?x?x16xf32>, tensor<32x16xf32> -> tensor<?x?x32xf32>
  %h = transformer.residual_add %r, %y : tensor<?x?x32xf32>
  return %h : tensor<?x?x32xf32>
}

// -----

// With a bias: the kernel starts from r + bias (one generic reading both),
// whichever operand of the add the projection is.
// CHECK-LABEL: func.func @fused_bias
// CHECK-SAME:    (%{{.+}}: tensor<2x4x32xf32>, %{{.+}}: tensor<2x4x16xf32>, %{{.+}}: tensor<32x16xf32>, %[[B:.+]]: tensor<32xf32>)
// CHECK:         %[[R:.+]] = transformer.activation <relu>
// CHECK:         %[[INIT:.+]] = linalg.generic
// CHECK-SAME:        ins(%[[B]], %[[R]] : tensor<32xf32>, tensor<2x4x32xf32>)
// CHECK:           arith.addf
// CHECK:         scf.forall (%{{.+}}) in (1) shared_outs(%{{.+}} = %[[INIT]])
// CHECK-NOT:     transformer.residual_add
func.func @fused_bias(%a: tensor<2x4x32xf32>, %x: tensor<2x4x16xf32>, %w: tensor<32x16xf32>, %b: tensor<32xf32>) -> tensor<2x4x32xf32> {
  %r = transformer.activation <relu> %a : tensor<2x4x32xf32>
  %y = transformer.linear %x, %w bias %b : tensor<2x4x16xf32>, tensor<32x16xf32>, tensor<32xf32> -> tensor<2x4x32xf32>
  %h = transformer.residual_add %y, %r : tensor<2x4x32xf32>
  return %h : tensor<2x4x32xf32>
}

// -----

// Not fused: the residual is a function argument (the caller's buffer must
// not be updated in place), or the projection has another use.
// CHECK-LABEL: func.func @not_fused
// CHECK:         linalg.fill
// CHECK:         transformer.residual_add
// CHECK:         linalg.fill
// CHECK:         transformer.residual_add
func.func @not_fused(%r: tensor<?x?x32xf32>, %x: tensor<?x?x16xf32>, %w: tensor<32x16xf32>) -> (tensor<?x?x32xf32>, tensor<?x?x32xf32>) {
  %y = transformer.linear %x, %w : tensor<?x?x16xf32>, tensor<32x16xf32> -> tensor<?x?x32xf32>
  %h = transformer.residual_add %r, %y : tensor<?x?x32xf32>
  %s = transformer.activation <silu> %h : tensor<?x?x32xf32>
  %y2 = transformer.linear %x, %w : tensor<?x?x16xf32>, tensor<32x16xf32> -> tensor<?x?x32xf32>
  %h2 = transformer.residual_add %s, %y2 : tensor<?x?x32xf32>
  %twice = transformer.residual_add %h2, %y2 : tensor<?x?x32xf32>
  return %h2, %twice : tensor<?x?x32xf32>, tensor<?x?x32xf32>
}

// -----

// The residual must dominate the kernel. Defined after it in the same
// block: not fused.
// CHECK-LABEL: func.func @residual_after_kernel
// CHECK:         linalg.fill
// CHECK:         scf.forall
// CHECK:         transformer.activation
// CHECK:         transformer.residual_add
func.func @residual_after_kernel(%a: tensor<2x4x32xf32>, %x: tensor<2x4x16xf32>, %w: tensor<32x16xf32>) -> tensor<2x4x32xf32> {
  %y = transformer.linear %x, %w : tensor<2x4x16xf32>, tensor<32x16xf32> -> tensor<2x4x32xf32>
  %r = transformer.activation <silu> %a : tensor<2x4x32xf32>
  %h = transformer.residual_add %r, %y : tensor<2x4x32xf32>
  return %h : tensor<2x4x32xf32>
}

// -----

// Defined in a later block than the kernel (before, the pass compared the
// order of ops in different blocks and fused this one into invalid IR):
// not fused.
// CHECK-LABEL: func.func @residual_in_later_block
// CHECK:         linalg.fill
// CHECK:         scf.forall
// CHECK:       ^bb1:
// CHECK:         transformer.activation
// CHECK:         transformer.residual_add
func.func @residual_in_later_block(%a: tensor<2x4x32xf32>, %x: tensor<2x4x16xf32>, %w: tensor<32x16xf32>) -> tensor<2x4x32xf32> {
  %y = transformer.linear %x, %w : tensor<2x4x16xf32>, tensor<32x16xf32> -> tensor<2x4x32xf32>
  cf.br ^bb1
^bb1:
  %r = transformer.activation <silu> %a : tensor<2x4x32xf32>
  %h = transformer.residual_add %r, %y : tensor<2x4x32xf32>
  return %h : tensor<2x4x32xf32>
}

// -----

// Defined in a block that dominates the kernel's: fused.
// CHECK-LABEL: func.func @residual_in_earlier_block
// CHECK:         %[[R:.+]] = transformer.activation <silu>
// CHECK:       ^bb1:
// CHECK-NOT:     linalg.fill
// CHECK:         %[[Y:.+]] = scf.forall (%{{.+}}) in (1) shared_outs(%{{.+}} = %[[R]])
// CHECK-NOT:     transformer.residual_add
// CHECK:         return %[[Y]]
func.func @residual_in_earlier_block(%a: tensor<2x4x32xf32>, %x: tensor<2x4x16xf32>, %w: tensor<32x16xf32>) -> tensor<2x4x32xf32> {
  %r = transformer.activation <silu> %a : tensor<2x4x32xf32>
  cf.br ^bb1
^bb1:
  %y = transformer.linear %x, %w : tensor<2x4x16xf32>, tensor<32x16xf32> -> tensor<2x4x32xf32>
  %h = transformer.residual_add %r, %y : tensor<2x4x32xf32>
  return %h : tensor<2x4x32xf32>
}
