// RUN: blockc-opt %s -split-input-file -verify-diagnostics --blockc-cpu-lower-linear | FileCheck %s
// RUN: blockc-opt %s -split-input-file -verify-diagnostics --blockc-cpu-select-tiles="isa=avx2" --blockc-cpu-lower-linear | FileCheck %s --check-prefix=AVX2

// The mechanism reads the op's blockc.cpu_tiles instead of its options: a
// pinned 2 x 3 tile of vector<8xf32> (AVX2 width) with 8-row cache blocks
// gives 6 accumulators and, for T < 32 (the dot-product kernel),
// ceil(24 / 8) = 3 parallel blocks; the packed kernel's keys are absent, so
// its options apply (panels of 32 columns, 8 x 2 vectors).
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
// Without the attribute, the pass options (default 4 x 4 of 16 lanes).
// CHECK-LABEL: func.func @heuristic_tiles
// CHECK:       vector<16xf32>
// The heuristic then the mechanism: isa=avx2 gives a 2 x 4 tile of 8 lanes.
// AVX2-LABEL: func.func @pinned_tiles
// AVX2:       arith.select %{{.+}}, %c32{{.*}}, %c8 : index
// AVX2-LABEL: func.func @heuristic_tiles
// Packed: 6 x 2 vectors of 8 lanes (12 accumulators), panels of 16 columns.
// AVX2:       arith.select %{{.+}}, %c16, %c{{[0-9]+}} : index
// AVX2:       tensor.empty() : tensor<40x16xf32>
// AVX2:       scf.for {{.*}} -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>)
// AVX2-COUNT-12: vector.fma
// AVX2:       } else {
// AVX2:       scf.for {{.*}} -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>)
// AVX2-COUNT-8: vector.fma
func.func @pinned_tiles(%x: tensor<?x?x40xf32>, %w: tensor<24x40xf32>) -> tensor<?x?x24xf32> {
  %a = transformer.linear %x, %w {blockc.cpu_tiles = {rows = 2 : i64, cols = 3 : i64, vector_width = 8 : i64, block_n = 8 : i64, block_k = 40 : i64}} : tensor<?x?x40xf32>, tensor<24x40xf32> -> tensor<?x?x24xf32>
  return %a : tensor<?x?x24xf32>
}
func.func @heuristic_tiles(%x: tensor<?x?x40xf32>, %w: tensor<24x40xf32>) -> tensor<?x?x24xf32> {
  %a = transformer.linear %x, %w : tensor<?x?x40xf32>, tensor<24x40xf32> -> tensor<?x?x24xf32>
  return %a : tensor<?x?x24xf32>
}

// -----

// A malformed tile attribute is an error at the op.
func.func @bad_tiles(%x: tensor<?x?x40xf32>, %w: tensor<24x40xf32>) -> tensor<?x?x24xf32> {
  // expected-error @+1 {{'transformer.linear' op has a malformed 'blockc.cpu_tiles': expected a dictionary of positive integers rows, cols, vector_width, block_n, block_k (and optionally pack_rows, pack_cols, panel_k, panel_n, pack_min_rows)}}
  %a = transformer.linear %x, %w {blockc.cpu_tiles = {rows = 0 : i64, cols = 3 : i64, vector_width = 8 : i64, block_n = 8 : i64, block_k = 40 : i64}} : tensor<?x?x40xf32>, tensor<24x40xf32> -> tensor<?x?x24xf32>
  return %a : tensor<?x?x24xf32>
}

// -----

// The packed kernel's keys are checked too.
func.func @bad_pack_tiles(%x: tensor<?x?x40xf32>, %w: tensor<24x40xf32>) -> tensor<?x?x24xf32> {
  // expected-error @+1 {{'transformer.linear' op has a malformed 'blockc.cpu_tiles'}}
  %a = transformer.linear %x, %w {blockc.cpu_tiles = {rows = 2 : i64, cols = 3 : i64, vector_width = 8 : i64, block_n = 8 : i64, block_k = 40 : i64, pack_rows = 0 : i64}} : tensor<?x?x40xf32>, tensor<24x40xf32> -> tensor<?x?x24xf32>
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
// CHECK-COUNT-24: vector.shuffle
// CHECK:       scf.for {{.*}} -> (vector<8xf32>, vector<8xf32>, vector<8xf32>)
// CHECK-COUNT-3: vector.fma
// CHECK:       scf.for {{.*}} -> (vector<8xf32>, vector<8xf32>)
// CHECK-COUNT-2: vector.fma
// CHECK:       scf.for {{.*}} -> (vector<8xf32>)
// CHECK-COUNT-1: vector.fma
// CHECK-NOT:   vector.reduction
// CHECK:       return
func.func @pinned_packed(%x: tensor<2x11x40xf32>, %w: tensor<24x40xf32>) -> tensor<2x11x24xf32> {
  %a = transformer.linear %x, %w {blockc.cpu_tiles = {rows = 2 : i64, cols = 3 : i64, vector_width = 8 : i64, block_n = 8 : i64, block_k = 40 : i64, pack_rows = 3 : i64, pack_cols = 1 : i64, panel_k = 16 : i64, panel_n = 16 : i64, pack_min_rows = 4 : i64}} : tensor<2x11x40xf32>, tensor<24x40xf32> -> tensor<2x11x24xf32>
  return %a : tensor<2x11x24xf32>
}
