// RUN: blockc-opt %s -split-input-file --blockc-cpu-select-tiles="isa=avx512" --blockc-cpu-lower-linear --blockc-cpu-fuse-activation | FileCheck %s
// RUN: blockc-opt %s -split-input-file --blockc-cpu-select-tiles="isa=avx2" --blockc-cpu-lower-linear --blockc-cpu-fuse-activation | FileCheck %s --check-prefix=AVX2 --implicit-check-not="vector<16xf32>"

// SwiGLU: silu(g) * u becomes the epilogue of u's kernel. Each block of
// columns ends with a loop over its rows: full vectors of the tile and of
// the gate's matching slice, silu (x sigmoid(x), see
// Codegen/Common/Approximations.h) with a polynomial exp (no math.exp left
// for LLVM to scalarise), the product written back; then one masked vector
// for the remainder columns (one block of 40 = 2 x 16 + 8). The vectors
// have the width of the function's cpu_target: 16 lanes with AVX-512, 8
// with AVX2 (and no 16-lane vector anywhere in the AVX2 output).
// CHECK-LABEL: func.func @swiglu
// CHECK-NOT:   transformer.activation
// CHECK:       %[[G:.+]] = scf.forall
// CHECK:       } {blockc_codegen.kernel = #blockc_codegen.kernel<linear>{{.*}}}
// CHECK:       %[[U:.+]] = scf.forall
// CHECK:       %[[GT:.+]] = tensor.extract_slice %[[G]][0, 0, %{{.+}}] [%{{.+}}, %{{.+}}, %{{.+}}] [1, 1, 1] : tensor<2x3x40xf32> to tensor<?x?x?xf32>
// CHECK:       scf.for
// CHECK:       scf.for
// CHECK:       scf.for
// CHECK:       %[[ACC:.+]] = vector.transfer_read %{{.+}} {in_bounds = [true]} : tensor<?x?x?xf32>, vector<16xf32>
// CHECK:       %[[GV:.+]] = vector.transfer_read %[[GT]][{{.+}}], %{{.+}} {in_bounds = [true]} : tensor<?x?x?xf32>, vector<16xf32>
// CHECK-NOT:   math.exp
// CHECK:       math.floor
// CHECK:       %[[NUM:.+]] = arith.select %{{.+}}, %{{.+}}, %[[GV]] : vector<16xi1>, vector<16xf32>
// CHECK:       %[[Q:.+]] = arith.divf %[[NUM]], %{{.+}} : vector<16xf32>
// CHECK:       %[[S:.+]] = arith.select %{{.+}}, %{{.+}}, %[[Q]] : vector<16xi1>, vector<16xf32>
// CHECK:       %[[P:.+]] = arith.mulf %[[S]], %[[ACC]] : vector<16xf32>
// CHECK:       vector.transfer_write %[[P]], %{{.+}} {in_bounds = [true]} : vector<16xf32>, tensor<?x?x?xf32>
// CHECK:       vector.transfer_read %{{.+}}, %{{[^ ]+}} : tensor<?x?x?xf32>, vector<16xf32>
// CHECK:       vector.transfer_write %{{[^ ]+}}, %{{[^ ]+}}[{{.+}}] : vector<16xf32>, tensor<?x?x?xf32>
// CHECK:       tensor.parallel_insert_slice
// CHECK:       } {blockc_codegen.kernel = #blockc_codegen.kernel<linear>{{.*}}}
// CHECK-NOT:   arith.mulf
// CHECK:       return %[[U]]
// AVX2-LABEL:  func.func @swiglu
// AVX2:        } {blockc_codegen.kernel = #blockc_codegen.kernel<linear>{{.*}}}
// AVX2:        vector.transfer_read %{{.+}} {in_bounds = [true]} : tensor<?x?x?xf32>, vector<8xf32>
// AVX2:        math.floor %{{.+}} : vector<8xf32>
// AVX2:        arith.divf %{{.+}}, %{{.+}} : vector<8xf32>
// AVX2:        vector.transfer_write %{{.+}} {in_bounds = [true]} : vector<8xf32>, tensor<?x?x?xf32>
func.func @swiglu(%x: tensor<2x3x16xf32>, %wg: tensor<40x16xf32>, %wu: tensor<40x16xf32>) -> tensor<2x3x40xf32> {
  %g = transformer.linear %x, %wg : tensor<2x3x16xf32>, tensor<40x16xf32> -> tensor<2x3x40xf32>
  %u = transformer.linear %x, %wu : tensor<2x3x16xf32>, tensor<40x16xf32> -> tensor<2x3x40xf32>
  %a = transformer.activation <silu> %g : tensor<2x3x40xf32>
  %m = arith.mulf %a, %u : tensor<2x3x40xf32>
  return %m : tensor<2x3x40xf32>
}

// -----

// u's kernel comes first: it moves after g's so that g's tiles can be read
// in its epilogue; the operands of the mulf may come in either order.
// CHECK-LABEL: func.func @swiglu_order
// CHECK-SAME:  (%[[X:.+]]: tensor<2x3x16xf32>, %[[WU:.+]]: tensor<40x16xf32>, %[[WG:.+]]: tensor<40x16xf32>)
// CHECK:       %[[G:.+]] = scf.forall
// CHECK:       vector.transfer_read %[[WG]]
// CHECK:       } {blockc_codegen.kernel = #blockc_codegen.kernel<linear>{{.*}}}
// CHECK:       %[[U:.+]] = scf.forall
// CHECK:       vector.transfer_read %[[WU]]
// CHECK:       tensor.extract_slice %[[G]]
// CHECK:       } {blockc_codegen.kernel = #blockc_codegen.kernel<linear>{{.*}}}
// CHECK-NEXT:  return %[[U]]
func.func @swiglu_order(%x: tensor<2x3x16xf32>, %wu: tensor<40x16xf32>, %wg: tensor<40x16xf32>) -> tensor<2x3x40xf32> {
  %u = transformer.linear %x, %wu : tensor<2x3x16xf32>, tensor<40x16xf32> -> tensor<2x3x40xf32>
  %g = transformer.linear %x, %wg : tensor<2x3x16xf32>, tensor<40x16xf32> -> tensor<2x3x40xf32>
  %a = transformer.activation <silu> %g : tensor<2x3x40xf32>
  %m = arith.mulf %u, %a : tensor<2x3x40xf32>
  return %m : tensor<2x3x40xf32>
}

// -----

// Plain activation (the 2017 post-norm FFN: ReLU after a biased
// projection): the kernel starts from the bias and its epilogue applies
// max(x, 0) to the finished tile.
// CHECK-LABEL: func.func @relu_bias
// CHECK:       %[[INIT:.+]] = linalg.generic
// CHECK:       %[[Y:.+]] = scf.forall {{.*}} shared_outs(%{{.+}} = %[[INIT]])
// CHECK:       arith.maximumf %{{.+}}, %{{.+}} : vector<16xf32>
// CHECK:       } {blockc_codegen.kernel = #blockc_codegen.kernel<linear>{{.*}}}
// CHECK-NOT:   transformer.activation
// CHECK:       return %[[Y]]
func.func @relu_bias(%x: tensor<2x3x16xf32>, %w: tensor<40x16xf32>, %b: tensor<40xf32>) -> tensor<2x3x40xf32> {
  %y = transformer.linear %x, %w bias %b : tensor<2x3x16xf32>, tensor<40x16xf32>, tensor<40xf32> -> tensor<2x3x40xf32>
  %r = transformer.activation <relu> %y : tensor<2x3x40xf32>
  return %r : tensor<2x3x40xf32>
}

// -----

// GeLU (erf) plain and GeGLU with the tanh form: erf and tanh become
// polynomials too.
// CHECK-LABEL: func.func @gelu
// CHECK-NOT:   math.erf
// CHECK:       } {blockc_codegen.kernel = #blockc_codegen.kernel<linear>{{.*}}}
// CHECK-NOT:   transformer.activation
// CHECK-LABEL: func.func @geglu_tanh
// CHECK-NOT:   math.tanh
// CHECK:       } {blockc_codegen.kernel = #blockc_codegen.kernel<linear>{{.*}}}
// CHECK:       } {blockc_codegen.kernel = #blockc_codegen.kernel<linear>{{.*}}}
// CHECK-NOT:   transformer.activation
func.func @gelu(%x: tensor<2x3x16xf32>, %w: tensor<40x16xf32>) -> tensor<2x3x40xf32> {
  %y = transformer.linear %x, %w : tensor<2x3x16xf32>, tensor<40x16xf32> -> tensor<2x3x40xf32>
  %r = transformer.activation <gelu> %y : tensor<2x3x40xf32>
  return %r : tensor<2x3x40xf32>
}
func.func @geglu_tanh(%x: tensor<2x3x16xf32>, %wg: tensor<40x16xf32>, %wu: tensor<40x16xf32>) -> tensor<2x3x40xf32> {
  %g = transformer.linear %x, %wg : tensor<2x3x16xf32>, tensor<40x16xf32> -> tensor<2x3x40xf32>
  %u = transformer.linear %x, %wu : tensor<2x3x16xf32>, tensor<40x16xf32> -> tensor<2x3x40xf32>
  %a = transformer.activation <gelu_tanh> %g : tensor<2x3x40xf32>
  %m = arith.mulf %a, %u : tensor<2x3x40xf32>
  return %m : tensor<2x3x40xf32>
}

// -----

// An activation with another use is not fused as a gate (its tensor is
// needed), but still as a plain epilogue of its own input's kernel; the
// mulf stays. Not fused at all: the kernel's result has another use, or
// the activation's input is not a projection kernel.
// CHECK-LABEL: func.func @act_used_twice
// CHECK-NOT:   transformer.activation
// CHECK:       arith.divf %{{.+}}, %{{.+}} : vector<16xf32>
// CHECK:       } {blockc_codegen.kernel = #blockc_codegen.kernel<linear>{{.*}}}
// CHECK:       arith.mulf %{{.+}}, %{{.+}} : tensor<2x3x40xf32>
// CHECK-LABEL: func.func @kernel_used_twice
// CHECK:       transformer.activation <relu>
// CHECK-LABEL: func.func @not_a_kernel
// CHECK:       transformer.activation <silu>
func.func @act_used_twice(%x: tensor<2x3x16xf32>, %wg: tensor<40x16xf32>, %wu: tensor<40x16xf32>) -> (tensor<2x3x40xf32>, tensor<2x3x40xf32>) {
  %g = transformer.linear %x, %wg : tensor<2x3x16xf32>, tensor<40x16xf32> -> tensor<2x3x40xf32>
  %u = transformer.linear %x, %wu : tensor<2x3x16xf32>, tensor<40x16xf32> -> tensor<2x3x40xf32>
  %a = transformer.activation <silu> %g : tensor<2x3x40xf32>
  %m = arith.mulf %a, %u : tensor<2x3x40xf32>
  return %m, %a : tensor<2x3x40xf32>, tensor<2x3x40xf32>
}
func.func @kernel_used_twice(%x: tensor<2x3x16xf32>, %w: tensor<40x16xf32>) -> (tensor<2x3x40xf32>, tensor<2x3x40xf32>) {
  %y = transformer.linear %x, %w : tensor<2x3x16xf32>, tensor<40x16xf32> -> tensor<2x3x40xf32>
  %r = transformer.activation <relu> %y : tensor<2x3x40xf32>
  return %r, %y : tensor<2x3x40xf32>, tensor<2x3x40xf32>
}
func.func @not_a_kernel(%a: tensor<2x3x40xf32>) -> tensor<2x3x40xf32> {
  %r = transformer.activation <silu> %a : tensor<2x3x40xf32>
  return %r : tensor<2x3x40xf32>
}

// -----

// Gate and up as one horizontal group (blockc-cpu-group-projections): the
// iteration that computes gate block i also computes up block i, so the
// epilogue reads the gate's tile straight from the same iteration (no slice
// of a kernel result) and the product is up's result. The gate's result is
// then dead: its tile starts from a zero fill of the iteration's own, not
// from a slice of the shared output (which bufferization would copy).
// CHECK-LABEL: func.func @swiglu_group
// Pinned tiles with blocks of 32 columns: two iterations.
// CHECK:       %[[R:.+]]:2 = scf.forall (%{{.+}}) in (2) shared_outs(%[[OG:.+]] = %{{[^,]+}}, %[[OU:.+]] = %{{[^)]+}})
// CHECK-NOT:   tensor.extract_slice %[[OG]]
// CHECK:       %[[E:.+]] = tensor.empty(%{{.+}}, %{{.+}}, %{{.+}}) : tensor<?x?x?xf32>
// CHECK:       linalg.fill ins(%{{.+}} : f32) outs(%[[E]] : tensor<?x?x?xf32>)
// CHECK-NOT:   tensor.extract_slice %[[OG]]
// CHECK:       tensor.extract_slice %[[OU]]
// CHECK-NOT:   tensor.extract_slice %[[R]]
// CHECK:       arith.divf %{{.+}}, %{{.+}} : vector<16xf32>
// CHECK:       scf.forall.in_parallel
// CHECK-NEXT:  tensor.parallel_insert_slice %{{.+}} into %[[OG]]
// CHECK-NEXT:  tensor.parallel_insert_slice %{{.+}} into %[[OU]]
// CHECK-NOT:   arith.mulf %{{.+}} : tensor
// CHECK:       return %[[R]]#1
func.func @swiglu_group(%x: tensor<2x3x16xf32>, %wg: tensor<40x16xf32>, %wu: tensor<40x16xf32>) -> tensor<2x3x40xf32> {
  %g = transformer.linear %x, %wg {blockc_codegen.horizontal_group = #blockc_codegen.horizontal_group<0>, blockc_codegen.linear_tiles = #blockc_codegen.linear_tiles<rows = 4, cols = 4, block_n = 32, block_k = 16, pack_rows = 8, pack_cols = 2, panel_k = 16, panel_n = 32, pack_min_rows = 32>} : tensor<2x3x16xf32>, tensor<40x16xf32> -> tensor<2x3x40xf32>
  %u = transformer.linear %x, %wu {blockc_codegen.horizontal_group = #blockc_codegen.horizontal_group<0>, blockc_codegen.linear_tiles = #blockc_codegen.linear_tiles<rows = 4, cols = 4, block_n = 32, block_k = 16, pack_rows = 8, pack_cols = 2, panel_k = 16, panel_n = 32, pack_min_rows = 32>} : tensor<2x3x16xf32>, tensor<40x16xf32> -> tensor<2x3x40xf32>
  %a = transformer.activation <silu> %g : tensor<2x3x40xf32>
  %m = arith.mulf %a, %u : tensor<2x3x40xf32>
  return %m : tensor<2x3x40xf32>
}

// -----

// The gate is defined in a block that dominates u's kernel (the entry
// block of a function with a branch): available, fused. (Before
// DominanceInfo, only the same block or an enclosing region counted.)
// CHECK-LABEL: func.func @gate_in_dominating_block
// CHECK:       %[[G:.+]] = scf.forall
// CHECK:       ^bb1:
// CHECK:       %[[U:.+]] = scf.forall
// CHECK:       tensor.extract_slice %[[G]]
// CHECK:       arith.divf %{{.+}}, %{{.+}} : vector<16xf32>
// CHECK:       } {blockc_codegen.kernel = #blockc_codegen.kernel<linear>{{.*}}}
// CHECK-NOT:   transformer.activation
// CHECK-NOT:   arith.mulf %{{.+}} : tensor
// CHECK:       return %[[U]]
func.func @gate_in_dominating_block(%x: tensor<2x3x16xf32>, %wg: tensor<40x16xf32>, %wu: tensor<40x16xf32>) -> tensor<2x3x40xf32> {
  %g = transformer.linear %x, %wg : tensor<2x3x16xf32>, tensor<40x16xf32> -> tensor<2x3x40xf32>
  cf.br ^bb1
^bb1:
  %u = transformer.linear %x, %wu : tensor<2x3x16xf32>, tensor<40x16xf32> -> tensor<2x3x40xf32>
  %a = transformer.activation <silu> %g : tensor<2x3x40xf32>
  %m = arith.mulf %a, %u : tensor<2x3x40xf32>
  return %m : tensor<2x3x40xf32>
}
