// RUN: blockc-opt %s -split-input-file --blockc-cpu-select-tiles="isa=avx2" --blockc-cpu-lower-linear | FileCheck %s
// RUN: blockc-opt %s -split-input-file --blockc-cpu-select-tiles="isa=avx512" --blockc-cpu-lower-linear | FileCheck %s --check-prefix=AVX512

// The mechanism builds what the op's linear_tiles say, in vectors of the
// function's cpu_target width: a pinned 2 x 3 tile of vector<8xf32> (AVX2)
// with 8-row cache blocks gives 6 accumulators and, for T < 32 (the
// dot-product kernel), ceil(24 / 8) = 3 parallel blocks; the packed kernel
// has panels of 32 columns and 8 x 2 vectors.
// CHECK-LABEL: func.func @pinned_tiles
// CHECK:       %[[PACKED:.+]] = arith.cmpi uge, %{{.+}}, %c32
// CHECK:       %[[BS:.+]] = arith.select %[[PACKED]], %c32{{.*}}, %c8 : index
// CHECK:       scf.forall (%{{.+}}) in (%{{.+}})
// CHECK:       scf.if %[[PACKED]]
// CHECK:       scf.for {{.*}} -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>)
// CHECK:       } else {
// CHECK:       scf.for {{.*}} -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>)
// CHECK-COUNT-2: vector.transfer_read %{{.+}} : tensor<?x?x40xf32>, vector<8xf32>
// CHECK-COUNT-3: vector.transfer_read %{{.+}} : tensor<24x40xf32>, vector<8xf32>
// CHECK-COUNT-6: vector.fma
// CHECK-NOT:   vector<16xf32>
// The same pinned tiles under an AVX-512 target: 16 lanes.
// AVX512-LABEL: func.func @pinned_tiles
// AVX512:       arith.select %{{.+}}, %c32{{.*}}, %c8 : index
// AVX512:       scf.for {{.*}} -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>)
// AVX512:       } else {
// AVX512:       scf.for {{.*}} -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>)
// AVX512-COUNT-6: vector.fma
// AVX512-NOT:   vector<8xf32>
// Without the attribute, the heuristic's tiles: isa=avx2 gives a 2 x 4
// tile of 8 lanes; packed: 6 x 2 vectors of 8 lanes (12 accumulators),
// panels of 16 columns.
// CHECK-LABEL: func.func @heuristic_tiles
// CHECK:       arith.select %{{.+}}, %c16, %c{{[0-9]+}} : index
// CHECK:       tensor.empty() : tensor<40x16xf32>
// CHECK:       scf.for {{.*}} -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>)
// CHECK-COUNT-12: vector.fma
// CHECK:       } else {
// CHECK:       scf.for {{.*}} -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>)
// CHECK-COUNT-8: vector.fma
// isa=avx512: 4 x 4 of 16 lanes; packed 8 x 2 vectors, panels of 32.
// AVX512-LABEL: func.func @heuristic_tiles
// AVX512:       arith.select %{{.+}}, %c32{{.*}}, %c{{[0-9]+}} : index
// AVX512:       tensor.empty() : tensor<48x32xf32>
// AVX512:       } else {
// AVX512:       scf.for {{.*}} -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>)
// AVX512-COUNT-16: vector.fma
func.func @pinned_tiles(%x: tensor<?x?x40xf32>, %w: tensor<24x40xf32>) -> tensor<?x?x24xf32> {
  %a = transformer.linear %x, %w {blockc_codegen.linear_tiles = #blockc_codegen.linear_tiles<rows = 2, cols = 3, block_n = 8, block_k = 40, pack_rows = 8, pack_cols = 2, panel_k = 256, panel_n = 32, pack_min_rows = 32>} : tensor<?x?x40xf32>, tensor<24x40xf32> -> tensor<?x?x24xf32>
  return %a : tensor<?x?x24xf32>
}
func.func @heuristic_tiles(%x: tensor<?x?x40xf32>, %w: tensor<24x40xf32>) -> tensor<?x?x24xf32> {
  %a = transformer.linear %x, %w : tensor<?x?x40xf32>, tensor<24x40xf32> -> tensor<?x?x24xf32>
  return %a : tensor<?x?x24xf32>
}

// -----

// Pinned packed tiles: 3 rows x 1 vector of 8 lanes, panels of 16 columns
// by 16 of k, packing from T = 4. A static T = 11 builds only the packed
// kernel: ceil(24 / 16) = 2 blocks, k-blocks of 16 over K = 40, rows
// 3 at a time, then the remainder (11 = 3 x 3 + 2) with 2-row and 1-row
// kernels over the same panel.
// CHECK-LABEL: func.func @pinned_packed
// CHECK-NOT:   scf.if
// CHECK:       scf.forall (%{{.+}}) in (2)
// CHECK:       scf.for {{.*}} step %c16
// CHECK:       tensor.empty() : tensor<16x16xf32>
// CHECK-COUNT-8: vector.transfer_read %{{.+}} : tensor<24x40xf32>, vector<8xf32>
// The 8 rows form one 8x8 block, transposed in registers.
// CHECK-COUNT-8: vector.insert %{{.+}}, %{{.+}} [{{[0-7]}}] : vector<8xf32> into vector<8x8xf32>
// CHECK-NEXT:  %[[T:.+]] = vector.transpose %{{.+}}, [1, 0] : vector<8x8xf32> to vector<8x8xf32>
// CHECK-COUNT-8: vector.extract %[[T]][{{[0-7]}}] : vector<8xf32> from vector<8x8xf32>
// CHECK:       scf.for {{.*}} -> (vector<8xf32>, vector<8xf32>, vector<8xf32>)
// CHECK-COUNT-3: vector.fma
// CHECK:       scf.for {{.*}} -> (vector<8xf32>, vector<8xf32>)
// CHECK-COUNT-2: vector.fma
// CHECK:       scf.for {{.*}} -> (vector<8xf32>)
// CHECK-COUNT-1: vector.fma
// CHECK-NOT:   vector.reduction
// CHECK:       return
func.func @pinned_packed(%x: tensor<2x11x40xf32>, %w: tensor<24x40xf32>) -> tensor<2x11x24xf32> {
  %a = transformer.linear %x, %w {blockc_codegen.linear_tiles = #blockc_codegen.linear_tiles<rows = 2, cols = 3, block_n = 8, block_k = 40, pack_rows = 3, pack_cols = 1, panel_k = 16, panel_n = 16, pack_min_rows = 4>} : tensor<2x11x40xf32>, tensor<24x40xf32> -> tensor<2x11x24xf32>
  return %a : tensor<2x11x24xf32>
}
