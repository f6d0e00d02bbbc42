// RUN: blockc-opt %s -split-input-file -verify-diagnostics --blockc-cpu-lower-linear | FileCheck %s
// RUN: blockc-opt %s -split-input-file -verify-diagnostics --blockc-cpu-select-tiles="isa=avx2" --blockc-cpu-lower-linear | FileCheck %s --check-prefix=AVX2

// The mechanism reads the op's blockc.cpu_tiles instead of its options: a
// pinned 2 x 3 tile of vector<8xf32> (AVX2 width) with 8-row cache blocks
// gives 6 accumulators and ceil(24 / 8) = 3 parallel blocks.
// CHECK-LABEL: func.func @pinned_tiles
// CHECK:       scf.forall (%{{.+}}) in (3)
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
// AVX2:       scf.forall (%{{.+}}) in (3)
// AVX2-LABEL: func.func @heuristic_tiles
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
  // expected-error @+1 {{'transformer.linear' op has a malformed 'blockc.cpu_tiles': expected a dictionary of positive integers rows, cols, vector_width, block_n, block_k}}
  %a = transformer.linear %x, %w {blockc.cpu_tiles = {rows = 0 : i64, cols = 3 : i64, vector_width = 8 : i64, block_n = 8 : i64, block_k = 40 : i64}} : tensor<?x?x40xf32>, tensor<24x40xf32> -> tensor<?x?x24xf32>
  return %a : tensor<?x?x24xf32>
}
