// RUN: blockc-opt %s -split-input-file --blockc-cpu-select-tiles="isa=avx2 prepare-weights=true" --blockc-cpu-lower-linear | FileCheck %s

// The few-row kernels prefetch their weight stream linear_tiles'
// prefetch_bytes ahead (blockc-cpu-select-tiles' choice is tested in
// select-tiles-prefetch.mlir); the kernel records the distance it used.

// The dot-product kernel's single-row tiles (a weight read in place at one
// token), 2048 bytes ahead: 512 f32 elements.
// CHECK-LABEL: func.func private @dot_prefetch_2048
// CHECK-SAME:  (%{{.+}}: tensor<1x1x40xf32>, %[[W:.+]]: tensor<48x40xf32>)
// CHECK:       %[[FLAT:.+]] = tensor.collapse_shape %[[W]] {{\[\[}}0, 1]] : tensor<48x40xf32> into tensor<1920xf32>
// CHECK:       %[[BUF:.+]] = bufferization.to_buffer %[[FLAT]] read_only : tensor<1920xf32> to memref<1920xf32>
// CHECK:       arith.constant 512 : index
// CHECK:       %[[AT:.+]] = arith.minui %{{.+}}, %c1919{{.*}} : index
// CHECK-NEXT:  memref.prefetch %[[BUF]][%[[AT]]], read, locality<3>, data : memref<1920xf32>
// CHECK:       blockc_codegen.linear_tiles = #blockc_codegen.linear_tiles<{{.+}}, prefetch_bytes = 2048>
func.func private @dot_prefetch_2048(%x: tensor<1x1x40xf32>, %w: tensor<48x40xf32>) -> tensor<1x1x48xf32> {
  %y = transformer.linear %x, %w {blockc_codegen.linear_tiles = #blockc_codegen.linear_tiles<rows = 2, cols = 4, block_n = 32, block_k = 40, pack_rows = 6, pack_cols = 2, panel_k = 40, panel_n = 16, pack_min_rows = 32, prefetch_bytes = 2048>} : tensor<1x1x40xf32>, tensor<48x40xf32> -> tensor<1x1x48xf32>
  return %y : tensor<1x1x48xf32>
}

// -----

// prefetch_bytes = 0: no prefetch, and no flat view of the weight for it.
// CHECK-LABEL: func.func private @dot_no_prefetch
// CHECK-NOT:   bufferization.to_buffer
// CHECK-NOT:   memref.prefetch
// CHECK:       blockc_codegen.linear_tiles = #blockc_codegen.linear_tiles<{{.+}}, prefetch_bytes = 0>
// CHECK-NOT:   memref.prefetch
// CHECK:       return
func.func private @dot_no_prefetch(%x: tensor<1x1x40xf32>, %w: tensor<48x40xf32>) -> tensor<1x1x48xf32> {
  %y = transformer.linear %x, %w {blockc_codegen.linear_tiles = #blockc_codegen.linear_tiles<rows = 2, cols = 4, block_n = 32, block_k = 40, pack_rows = 6, pack_cols = 2, panel_k = 40, panel_n = 16, pack_min_rows = 32, prefetch_bytes = 0>} : tensor<1x1x40xf32>, tensor<48x40xf32> -> tensor<1x1x48xf32>
  return %y : tensor<1x1x48xf32>
}

// -----

// Prepared panels (an entry's weight) at one token: the micro-kernels of at
// most 4 rows prefetch whole panel rows ahead, at least one: 128 bytes are
// two rows of 16 f32 (AVX2), one prefetch per 64-byte line.
// CHECK-LABEL: func.func @panels_prefetch_128
// CHECK:       %[[PACK:.+]] = linalg.pack
// CHECK:       %[[FLAT:.+]] = tensor.collapse_shape %[[PACK]] {{\[\[}}0, 1, 2, 3]] : tensor<3x1x40x16xf32> into tensor<1920xf32>
// CHECK:       %[[BUF:.+]] = bufferization.to_buffer %[[FLAT]] read_only : tensor<1920xf32> to memref<1920xf32>
// CHECK:       scf.for %{{.+}} step %c6
// CHECK-NOT:   memref.prefetch
// CHECK:       scf.for %{{.+}} step %c4
// CHECK:       scf.for %[[KK:[a-z0-9_]+]] = %{{.+}} to %{{.+}} step %c1{{.*}} -> (vector<8xf32>
// CHECK-NEXT:  %[[ZERO:.+]] = arith.constant 0 : index
// CHECK-NEXT:  %[[K:.+]] = arith.addi %[[KK]], %[[ZERO]] : index
// CHECK-NEXT:  %[[TWO:.+]] = arith.constant 2 : index
// CHECK-NEXT:  %[[AHEAD:.+]] = arith.addi %[[K]], %[[TWO]] : index
// CHECK-NEXT:  %[[ROW:.+]] = arith.constant 16 : index
// CHECK-NEXT:  arith.muli %[[AHEAD]], %[[ROW]] : index
// CHECK:       %[[AT:.+]] = arith.minui %{{.+}}, %c1919{{.*}} : index
// CHECK-NEXT:  memref.prefetch %[[BUF]][%[[AT]]], read, locality<3>, data : memref<1920xf32>
// CHECK:       prefetch_bytes = 128>
func.func @panels_prefetch_128(%x: tensor<1x1x40xf32>, %w: tensor<48x40xf32>) -> tensor<1x1x48xf32> {
  %y = transformer.linear %x, %w {blockc_codegen.linear_tiles = #blockc_codegen.linear_tiles<rows = 2, cols = 4, block_n = 32, block_k = 40, pack_rows = 6, pack_cols = 2, panel_k = 40, panel_n = 16, pack_min_rows = 32, prefetch_bytes = 128>} : tensor<1x1x40xf32>, tensor<48x40xf32> -> tensor<1x1x48xf32>
  return %y : tensor<1x1x48xf32>
}

// -----

// Prepared panels with prefetch_bytes = 0: none.
// CHECK-LABEL: func.func @panels_no_prefetch
// CHECK:       linalg.pack
// CHECK-NOT:   memref.prefetch
// CHECK:       prefetch_bytes = 0>
// CHECK-NOT:   memref.prefetch
// CHECK:       return
func.func @panels_no_prefetch(%x: tensor<1x1x40xf32>, %w: tensor<48x40xf32>) -> tensor<1x1x48xf32> {
  %y = transformer.linear %x, %w {blockc_codegen.linear_tiles = #blockc_codegen.linear_tiles<rows = 2, cols = 4, block_n = 32, block_k = 40, pack_rows = 6, pack_cols = 2, panel_k = 40, panel_n = 16, pack_min_rows = 32, prefetch_bytes = 0>} : tensor<1x1x40xf32>, tensor<48x40xf32> -> tensor<1x1x48xf32>
  return %y : tensor<1x1x48xf32>
}
