// RUN: blockc-opt %s -split-input-file --blockc-cpu-select-tiles="isa=avx2 prepare-weights=true" --blockc-cpu-lower-linear | FileCheck %s
// RUN: blockc-opt %s -split-input-file --blockc-cpu-select-tiles="isa=avx512 prepare-weights=true" --blockc-cpu-lower-linear | FileCheck %s --check-prefix=AVX512

// With prepare-weights, blockc-cpu-select-tiles marks a projection whose
// weight is an argument of a public function weight_layout<packed_panels>;
// blockc-cpu-lower-linear then packs the whole weight with one linalg.pack
// (the layout recorded as blockc_codegen.prepared; blockc-cpu-prepare-weights
// moves it into the prepare function) and builds only the packed kernel,
// reading panel [n-block, k-block] of it: no in-kernel packing, no
// transposes, no dot-product kernel and no choice on T.

// AVX2: panels of 40 (K) x 16 (2 x 8 lanes) columns, ceil(24 / 16) = 2,
// one panel per parallel block (panel_group = 1: two panels make fewer
// than 4 blocks of more). The blocked loop order: batch, row blocks
// (row_block = 1638 rows: 1 MiB / 4 / (40 x 4 bytes), whole 6-row
// micro-kernels), k-panels, the block's panels, then the row and column
// tiles. N = 24 is not a multiple of the 16-column tile: the output tile
// is masked.
// CHECK-LABEL: func.func @linear
// CHECK-SAME:  (%[[X:.+]]: tensor<?x?x40xf32>, %[[W:.+]]: tensor<24x40xf32>)
// CHECK:       %[[PACK:.+]] = linalg.pack %[[W]] padding_value(%{{.+}} : f32) inner_dims_pos = [1, 0] inner_tiles = [40, 16] into %{{.+}} {blockc_codegen.prepared = #blockc_codegen.packed_weight<rows = 24, cols = 40, panel_k = 40, panel_n = 16>} : tensor<24x40xf32> -> tensor<2x1x40x16xf32>
// CHECK-NOT:   scf.if
// CHECK:       scf.forall (%[[NB:.+]]) in (2)
// CHECK:       arith.constant 1638 : index
// CHECK:       %[[FIRST:[a-z0-9_]+]] = arith.muli %[[NB]], %{{.+}} : index
// CHECK:       scf.for %[[B:[a-z0-9_]+]] = %{{.+}} to %{{.+}} step
// CHECK:       scf.for %[[T0:[a-z0-9_]+]] = %{{.+}} to %{{.+}} step
// CHECK:       scf.for %[[KC:[a-z0-9_]+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args
// CHECK:       %[[KB:[a-z0-9_]+]] = arith.divui %[[KC]], %{{.+}} : index
// CHECK:       scf.for %[[G:[a-z0-9_]+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args
// CHECK:       %[[P:[a-z0-9_]+]] = arith.addi %[[FIRST]], %[[G]] : index
// CHECK:       tensor.extract_slice %[[PACK]][%[[P]], %[[KB]], 0, 0] [1, 1, 40, 16] [1, 1, 1, 1] : tensor<2x1x40x16xf32> to tensor<40x16xf32>
// CHECK:       scf.for %{{.+}} = %[[T0]] to
// CHECK:       vector.transfer_read %{{.+}} : tensor<?x?x?xf32>, vector<8xf32>
// CHECK:       tensor.extract %[[X]][%[[B]],
// CHECK:       vector.fma
// CHECK-NOT:   vector.transpose
// CHECK-NOT:   vector.reduction
// CHECK:       return
// AVX512-LABEL: func.func @linear
// AVX512:       linalg.pack %{{.+}} inner_dims_pos = [1, 0] inner_tiles = [48, 32] into %{{.+}} {blockc_codegen.prepared = #blockc_codegen.packed_weight<rows = 24, cols = 40, panel_k = 48, panel_n = 32>} : tensor<24x40xf32> -> tensor<1x1x48x32xf32>
// AVX-512: one block of one 48 x 32 panel, row blocks of 1 MiB / 4 /
// (48 x 4 bytes) = 1365 rows, whole 8-row micro-kernels: 1360.
// AVX512:       scf.forall (%{{.+}}) in (1)
// AVX512:       arith.constant 1368 : index
// AVX512:       tensor.extract_slice %{{.+}} [1, 1, 48, 32] [1, 1, 1, 1] : tensor<1x1x48x32xf32> to tensor<48x32xf32>
// AVX512-NOT:   vector.transpose
// AVX512:       vector.fma {{.*}} : vector<16xf32>
func.func @linear(%x: tensor<?x?x40xf32>, %w: tensor<24x40xf32>) -> tensor<?x?x24xf32> {
  %y = transformer.linear %x, %w : tensor<?x?x40xf32>, tensor<24x40xf32> -> tensor<?x?x24xf32>
  return %y : tensor<?x?x24xf32>
}

// -----

// A private function's weight is not an entry argument: the kernels pack
// per call as before (both kernels for a dynamic T).
// CHECK-LABEL: func.func private @inner
// CHECK-NOT:   linalg.pack
// CHECK:       scf.if
// CHECK:       vector.transpose
func.func private @inner(%x: tensor<?x?x40xf32>, %w: tensor<24x40xf32>) -> tensor<?x?x24xf32> {
  %y = transformer.linear %x, %w : tensor<?x?x40xf32>, tensor<24x40xf32> -> tensor<?x?x24xf32>
  return %y : tensor<?x?x24xf32>
}

// -----

// A weight computed in the function is not marked either.
// CHECK-LABEL: func.func @computed
// CHECK-NOT:   linalg.pack
// CHECK:       scf.if
func.func @computed(%x: tensor<?x?x40xf32>, %w: tensor<24x40xf32>) -> tensor<?x?x24xf32> {
  %w2 = arith.addf %w, %w : tensor<24x40xf32>
  %y = transformer.linear %x, %w2 : tensor<?x?x40xf32>, tensor<24x40xf32> -> tensor<?x?x24xf32>
  return %y : tensor<?x?x24xf32>
}

// -----

// Tiles by hand: two panels per parallel block from pack_min_rows = 32
// rows on, one below (decode: a block streams its panels in memory order),
// chosen at run time for a dynamic T: ceil(48 / (group x 16)) blocks,
// panel = group x block + g; row blocks of 13 rows rounded down to 12 (two
// 6-row micro-kernels), whole 16-column tiles (48 = 3 x 16): the output
// tile is read and written without masks. Without row_block (0), all rows
// form one block.
// CHECK-LABEL: func.func @grouped
// CHECK:       %[[MANY:.+]] = arith.cmpi uge, %{{.+}}, %c32 : index
// CHECK:       %[[GROUP:.+]] = arith.select %[[MANY]], %c2, %c1{{.*}} : index
// CHECK:       %[[WIDTH:.+]] = arith.muli %[[GROUP]], %c16 : index
// CHECK:       %[[NUM:.+]] = arith.divui %{{.+}}, %[[WIDTH]] : index
// CHECK:       scf.forall (%[[NB:.+]]) in (%[[NUM]])
// CHECK:       arith.constant 12 : index
// CHECK:       %[[FIRST:[a-z0-9_]+]] = arith.muli %[[NB]], %[[GROUP]] : index
// CHECK:       scf.for
// CHECK:       scf.for
// CHECK:       scf.for
// CHECK:       scf.for %[[G:[a-z0-9_]+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args
// CHECK:       arith.addi %[[FIRST]], %[[G]] : index
// CHECK:       vector.transfer_read %{{.+}} {in_bounds = [true]} : tensor<?x?x?xf32>, vector<8xf32>
// CHECK:       vector.transfer_write %{{.+}} {in_bounds = [true]} : vector<8xf32>, tensor<?x?x?xf32>
// CHECK-LABEL: func.func @one_row_block
// CHECK:       scf.forall
// CHECK:       %[[STEP:[a-z0-9_]+]] = arith.maxui %[[T:dim_[0-9]+]], %c1{{.*}} : index
// CHECK:       scf.for %{{.+}} = %{{.+}} to %[[T]] step %[[STEP]]
// CHECK:       vector.fma
func.func @grouped(%x: tensor<?x?x40xf32>, %w: tensor<48x40xf32>) -> tensor<?x?x48xf32> {
  %y = transformer.linear %x, %w {blockc_codegen.linear_tiles = #blockc_codegen.linear_tiles<rows = 2, cols = 4, block_n = 32, block_k = 40, pack_rows = 6, pack_cols = 2, panel_k = 40, panel_n = 16, pack_min_rows = 32, panel_group = 2, row_block = 13>} : tensor<?x?x40xf32>, tensor<48x40xf32> -> tensor<?x?x48xf32>
  return %y : tensor<?x?x48xf32>
}
func.func @one_row_block(%x: tensor<?x?x40xf32>, %w: tensor<48x40xf32>) -> tensor<?x?x48xf32> {
  %y = transformer.linear %x, %w {blockc_codegen.linear_tiles = #blockc_codegen.linear_tiles<rows = 2, cols = 4, block_n = 32, block_k = 40, pack_rows = 6, pack_cols = 2, panel_k = 40, panel_n = 16, pack_min_rows = 32>} : tensor<?x?x40xf32>, tensor<48x40xf32> -> tensor<?x?x48xf32>
  return %y : tensor<?x?x48xf32>
}

// -----

// A static T below pack_min_rows: one panel per block, a static count.
// CHECK-LABEL: func.func @decode_rows
// CHECK:       scf.forall (%{{.+}}) in (3)
func.func @decode_rows(%x: tensor<1x1x40xf32>, %w: tensor<48x40xf32>) -> tensor<1x1x48xf32> {
  %y = transformer.linear %x, %w {blockc_codegen.linear_tiles = #blockc_codegen.linear_tiles<rows = 2, cols = 4, block_n = 32, block_k = 40, pack_rows = 6, pack_cols = 2, panel_k = 40, panel_n = 16, pack_min_rows = 32, panel_group = 2, row_block = 12>} : tensor<1x1x40xf32>, tensor<48x40xf32> -> tensor<1x1x48xf32>
  return %y : tensor<1x1x48xf32>
}

// -----

// block_align = 32 (two 16-column panels, e.g. a head dim for RoPE): both
// group sizes become multiples of 2 panels, 3 -> 4 from pack_min_rows rows
// on and 2 below, and the kernel records the group and the alignment it
// kept. When N is not a multiple of block_align (48), none is kept
// (block_align elided, group sizes as asked: 3 and 1).
// CHECK-LABEL: func.func @aligned
// CHECK:       %[[MANY:.+]] = arith.cmpi uge, %{{.+}}, %c32 : index
// CHECK:       arith.select %[[MANY]], %c4, %c2{{.*}} : index
// CHECK:       } {blockc_codegen.kernel = #blockc_codegen.kernel<linear>, blockc_codegen.linear_tiles = #blockc_codegen.linear_tiles<{{.*}}panel_group = 4, row_block = 12, block_align = 32>}
// CHECK-LABEL: func.func @cannot_align
// CHECK:       arith.select %{{.+}}, %c3, %c1{{.*}} : index
// CHECK:       } {blockc_codegen.kernel = #blockc_codegen.kernel<linear>, blockc_codegen.linear_tiles = #blockc_codegen.linear_tiles<{{.*}}panel_group = 3, row_block = 12>}
// A static T below pack_min_rows: 2 panels per block, ceil(64 / 32) = 2.
// CHECK-LABEL: func.func @aligned_decode
// CHECK:       scf.forall (%{{.+}}) in (2)
func.func @aligned(%x: tensor<?x?x40xf32>, %w: tensor<64x40xf32>) -> tensor<?x?x64xf32> {
  %y = transformer.linear %x, %w {blockc_codegen.linear_tiles = #blockc_codegen.linear_tiles<rows = 2, cols = 4, block_n = 32, block_k = 40, pack_rows = 6, pack_cols = 2, panel_k = 40, panel_n = 16, pack_min_rows = 32, panel_group = 3, row_block = 12, block_align = 32>} : tensor<?x?x40xf32>, tensor<64x40xf32> -> tensor<?x?x64xf32>
  return %y : tensor<?x?x64xf32>
}
func.func @cannot_align(%x: tensor<?x?x40xf32>, %w: tensor<48x40xf32>) -> tensor<?x?x48xf32> {
  %y = transformer.linear %x, %w {blockc_codegen.linear_tiles = #blockc_codegen.linear_tiles<rows = 2, cols = 4, block_n = 32, block_k = 40, pack_rows = 6, pack_cols = 2, panel_k = 40, panel_n = 16, pack_min_rows = 32, panel_group = 3, row_block = 12, block_align = 32>} : tensor<?x?x40xf32>, tensor<48x40xf32> -> tensor<?x?x48xf32>
  return %y : tensor<?x?x48xf32>
}
func.func @aligned_decode(%x: tensor<1x1x40xf32>, %w: tensor<64x40xf32>) -> tensor<1x1x64xf32> {
  %y = transformer.linear %x, %w {blockc_codegen.linear_tiles = #blockc_codegen.linear_tiles<rows = 2, cols = 4, block_n = 32, block_k = 40, pack_rows = 6, pack_cols = 2, panel_k = 40, panel_n = 16, pack_min_rows = 32, panel_group = 3, row_block = 12, block_align = 32>} : tensor<1x1x40xf32>, tensor<64x40xf32> -> tensor<1x1x64xf32>
  return %y : tensor<1x1x64xf32>
}

// -----

// A weight kept in bf16 (transformer-compute-in-f32) is not prepared: f32
// panels would double its memory. The kernels read it in place, 8 bf16
// lanes at a time widened exactly to f32 in registers (the dot-product
// kernel streams its rows; the packed kernel widens as it packs each panel
// per call), and accumulate in f32.
// CHECK-LABEL: func.func @bf16_weight
// CHECK-NOT: blockc_codegen.weight_layout
// CHECK-NOT: linalg.pack
// CHECK: scf.forall
// CHECK: %[[P:.+]] = vector.transfer_read %{{.+}}, %{{.+}} : tensor<64x128xbf16>, vector<8xbf16>
// CHECK-NEXT: arith.extf %[[P]] : vector<8xbf16> to vector<8xf32>
// CHECK: %[[D:.+]] = vector.transfer_read %{{.+}}, %{{.+}} : tensor<64x128xbf16>, vector<8xbf16>
// CHECK-NEXT: arith.extf %[[D]] : vector<8xbf16> to vector<8xf32>
// CHECK: vector.fma {{.+}} : vector<8xf32>
// AVX512-LABEL: func.func @bf16_weight
// AVX512: vector.transfer_read %{{.+}}, %{{.+}} : tensor<64x128xbf16>, vector<16xbf16>
// AVX512-NEXT: arith.extf %{{.+}} : vector<16xbf16> to vector<16xf32>
func.func @bf16_weight(%x: tensor<1x?x128xf32>, %w: tensor<64x128xbf16>) -> tensor<1x?x64xf32> {
  %0 = transformer.linear %x, %w : tensor<1x?x128xf32>, tensor<64x128xbf16> -> tensor<1x?x64xf32>
  return %0 : tensor<1x?x64xf32>
}

// -----

// A packed-panel layout set by hand on a bf16 weight: the panels stay bf16
// (half the memory of f32 panels) and the micro-kernel widens each panel
// row as it reads it; a single row (decode) keeps two accumulator sets
// (even and odd k) to hide the FMA latency behind the narrower loads.
// CHECK-LABEL: func.func @bf16_panels
// CHECK: %[[PACK:.+]] = linalg.pack %{{.+}} padding_value(%{{.+}} : bf16) inner_dims_pos = [1, 0] inner_tiles = [128, 16] into %{{.+}} {blockc_codegen.prepared = #blockc_codegen.packed_weight<rows = 64, cols = 128, panel_k = 128, panel_n = 16>} : tensor<64x128xbf16> -> tensor<4x1x128x16xbf16>
// CHECK: tensor.extract_slice %[[PACK]]{{.*}} : tensor<4x1x128x16xbf16> to tensor<128x16xbf16>
// CHECK: vector.transfer_read %{{.+}} : tensor<128x16xbf16>, vector<8xbf16>
// CHECK-NEXT: arith.extf %{{.+}} : vector<8xbf16> to vector<8xf32>
// The single-row kernel: k in steps of 2 over 4 accumulators, then the odd
// remainder, then the two sets added.
// CHECK: scf.for %{{.+}} = %{{.+}} to %{{.+}} step %c2{{.*}} iter_args(%{{.+}} = %{{.+}}, %{{.+}} = %{{.+}}, %{{.+}} = %cst{{.*}}, %{{.+}} = %cst{{.*}}) -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>)
// CHECK: arith.addf %{{.+}}, %{{.+}} : vector<8xf32>
func.func @bf16_panels(%x: tensor<1x?x128xf32>, %w: tensor<64x128xbf16>) -> tensor<1x?x64xf32> {
  %0 = transformer.linear %x, %w {blockc_codegen.weight_layout = #blockc_codegen.weight_layout<packed_panels>} : tensor<1x?x128xf32>, tensor<64x128xbf16> -> tensor<1x?x64xf32>
  return %0 : tensor<1x?x64xf32>
}

// -----

// A bf16 weight read in place with enough panels gets panel groups and row
// blocks too (blockc-cpu-select-tiles): the packed path (T >= 32) runs the
// prepared kernel's blocked loops over blocks of panel_group x 16 columns,
// packing each panel, widened to f32, once per row block; decode keeps the
// dot-product kernel over the weight rows.
// CHECK-LABEL: func.func @bf16_groups
// CHECK-NOT: linalg.pack
// CHECK: %[[PACKED:.+]] = arith.cmpi uge, %{{.+}}, %c32
// CHECK: arith.select %[[PACKED]], %c64, %c{{[0-9]+}}
// CHECK: scf.forall
// CHECK: scf.if %[[PACKED]]
// CHECK: tensor.empty() : tensor<128x16xf32>
// CHECK: vector.transfer_read %{{.+}} : tensor<256x128xbf16>, vector<8xbf16>
// CHECK: vector.transpose
// CHECK: } else {
// CHECK: vector.transfer_read %{{.+}} : tensor<256x128xbf16>, vector<8xbf16>
func.func @bf16_groups(%x: tensor<1x?x128xf32>, %w: tensor<256x128xbf16>) -> tensor<1x?x256xf32> {
  %0 = transformer.linear %x, %w : tensor<1x?x128xf32>, tensor<256x128xbf16> -> tensor<1x?x256xf32>
  return %0 : tensor<1x?x256xf32>
}

// -----

// Prepared panels at one token: the micro-kernels of at most 4 rows stream
// their panel once and prefetch the panel row 1024 bytes ahead (16 rows of
// 16 f32 with AVX2; past the panel, the next one in memory), one prefetch
// per 64-byte line, in the prepared weight as one flat read-only buffer,
// clamped to its last element; the 6-row tiles (prefill) do not.
// CHECK-LABEL: func.func @decode_prefetch
// CHECK:       %[[PACK:.+]] = linalg.pack
// CHECK:       %[[FLAT:.+]] = tensor.collapse_shape %[[PACK]] {{\[\[}}0, 1, 2, 3]] : tensor<3x1x40x16xf32> into tensor<1920xf32>
// CHECK:       %[[BUF:.+]] = bufferization.to_buffer %[[FLAT]] read_only : tensor<1920xf32> to memref<1920xf32>
// CHECK:       scf.for %{{.+}} step %c6
// CHECK-NOT:   memref.prefetch
// CHECK:       scf.for %{{.+}} step %c4
// CHECK:       %[[AT:.+]] = arith.minui %{{.+}}, %c1919{{.*}} : index
// CHECK-NEXT:  memref.prefetch %[[BUF]][%[[AT]]], read, locality<3>, data : memref<1920xf32>
// CHECK-NOT:   memref.prefetch
// CHECK:       vector.fma
// AVX512-LABEL: func.func @decode_prefetch
// AVX512:       tensor.collapse_shape %{{.+}} : tensor<2x1x48x32xf32> into tensor<3072xf32>
// AVX512-COUNT-2: memref.prefetch %{{.+}} : memref<3072xf32>
func.func @decode_prefetch(%x: tensor<1x1x40xf32>, %w: tensor<48x40xf32>) -> tensor<1x1x48xf32> {
  %y = transformer.linear %x, %w {blockc_codegen.linear_tiles = #blockc_codegen.linear_tiles<rows = 2, cols = 4, block_n = 32, block_k = 40, pack_rows = 6, pack_cols = 2, panel_k = 40, panel_n = 16, pack_min_rows = 32>} : tensor<1x1x40xf32>, tensor<48x40xf32> -> tensor<1x1x48xf32>
  return %y : tensor<1x1x48xf32>
}
