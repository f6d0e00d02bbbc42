// RUN: blockc-opt %s -split-input-file --blockc-cpu-select-tiles="isa=avx512" --blockc-cpu-lower-sdpa | FileCheck %s --implicit-check-not=transformer.sdpa
// RUN: blockc-opt %s -split-input-file --blockc-cpu-select-tiles="isa=avx2" --blockc-cpu-lower-sdpa | FileCheck %s --check-prefix=AVX2 --implicit-check-not="vector<16xf32>"
// RUN: blockc-opt %s -split-input-file --blockc-cpu-select-tiles="isa=avx512" | sed 's/multi_row = true/multi_row = false/' | blockc-opt -split-input-file --blockc-cpu-lower-sdpa | FileCheck %s --check-prefix=ROW
// RUN: blockc-opt %s -split-input-file --blockc-cpu-select-tiles="isa=avx512" | sed 's/value_group = [0-9]*/value_group = 2/; s/key_tile = [0-9]*/key_tile = 16/; s/qk_unroll = 1/qk_unroll = 2/' | blockc-opt -split-input-file --blockc-cpu-lower-sdpa | FileCheck %s --check-prefix=OPT
// RUN: blockc-opt %s -split-input-file --blockc-cpu-select-tiles="isa=avx512" --blockc-cpu-lower-sdpa | FileCheck %s --check-prefix=PF
// RUN: blockc-opt %s -split-input-file --blockc-cpu-select-tiles="isa=avx512" | sed 's/prefetch_distance = 1/prefetch_distance = 0/' | blockc-opt -split-input-file --blockc-cpu-lower-sdpa | FileCheck %s --check-prefix=NOPF
// RUN: blockc-opt %s -split-input-file --blockc-cpu-select-tiles="isa=avx512" | sed 's/prefetch_distance = 1/prefetch_distance = 3/; s/prefetch_locality = 2/prefetch_locality = 3/' | blockc-opt -split-input-file --blockc-cpu-lower-sdpa | FileCheck %s --check-prefix=FAR

// transformer.sdpa becomes one fused loop nest per (head, block of query
// rows) with an online softmax over key tiles: no [T, S] score tensor, the
// kv head is h / group (no copy of K or V), causal rows stop at
// t + S - T + 1. Full blocks of rowVectors x V query rows use the
// register-tiled multi-row kernel (rows in lanes: no horizontal
// reduction); the other rows (a short last block; all of them when T is
// below a block, e.g. decode) the single-row kernel (keys in lanes, one
// transpose-add tree per key tile). V is the vector width of the function's
// cpu_target: 16 with AVX-512 (the CHECK lines: blocks of 4 x 16 rows,
// 4 x 4 score and 4 x 4 P.V accumulators), 8 with AVX2 (blocks of 2 x 8
// rows, 2 x 4 accumulators; no 16-lane vector anywhere).

// GQA (4 query heads, 2 kv heads), causal, D = 32 (two vectors of 16).
// CHECK-LABEL: func.func @gqa_causal
// CHECK-SAME: (%[[Q:.+]]: tensor<?x?x4x32xf32>, %[[K:.+]]: tensor<?x?x2x32xf32>, %[[V:.+]]: tensor<?x?x2x32xf32>)
// CHECK-NOT: tensor.empty() : tensor<{{.*}}x?x?xf32>
// Work items (head, block of 64 rows) in parallel, each writing its own
// [B, rows, 1, D] slice.
// CHECK: %[[NB:.+]] = arith.ceildivui %{{.+}}, %c64 : index
// CHECK: scf.forall (%[[H:.+]], %[[QB:.+]]) in (4, %[[NB]]) shared_outs(%[[OUT:.+]] = %{{.+}})
// CHECK: %[[T0:.+]] = arith.muli %[[QB]], %c64
// CHECK: %[[N:.+]] = arith.minsi %c64, %{{.+}} : index
// CHECK: %[[SLICE:.+]] = tensor.extract_slice %[[OUT]][0, %[[T0]], %[[H]], 0] [%{{.+}}, %[[N]], 1, 32]
// CHECK: %[[KVH:.+]] = arith.divui %[[H]], %c2{{.*}} : index
// Scratch per work item, on the stack: the transposed query block, the
// transposed accumulator ([D, 64]) and the scores of a 32-key tile.
// CHECK: %[[QT:.+]] = memref.alloca() {alignment = 64 : i64} : memref<32x64xf32>
// CHECK: %[[OT:.+]] = memref.alloca() {alignment = 64 : i64} : memref<32x64xf32>
// CHECK: %[[SB:.+]] = memref.alloca() {alignment = 64 : i64} : memref<32x64xf32>
// The single-row kernel's row buffer: the scaled query (row 0) and the
// accumulator (row 1) of one row, so that neither takes D / V registers.
// CHECK: %[[RB:.+]] = memref.alloca() {alignment = 64 : i64} : memref<2x32xf32>
// CHECK: scf.for %[[B:.+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%{{.+}} = %[[SLICE]])
// A full block: qt[d, :] = scale * q[b, t0:t0+64, h, d], four row vectors.
// CHECK: %[[FULL:.+]] = arith.cmpi eq, %[[N]], %c64
// CHECK: scf.if %[[FULL]]
// CHECK-COUNT-4: vector.transfer_read %[[Q]][%[[B]], %{{.+}}, %[[H]], %{{.+}}], %{{.+}} {in_bounds = [true], permutation_map = #[[ROWS:.+]]} : tensor<?x?x4x32xf32>, vector<16xf32>
// Key tiles of 32 up to the last row's end; m and l per row vector.
// CHECK: scf.for {{.*}} step %c32{{.*}} -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>) {
// Scores, 4 keys at a time: 4 x 4 accumulators over d, a broadcast key
// element times each row vector of qt.
// CHECK: scf.for {{.*}} step %c4
// CHECK: scf.for {{.*}} -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>) {
// CHECK-COUNT-4: vector.load %[[QT]]
// CHECK: tensor.extract %[[K]][%[[B]], %{{.+}}, %[[KVH]], %{{.+}}]
// CHECK: vector.broadcast
// CHECK-COUNT-4: math.fma
// CHECK-NOT: vector.reduction
// CHECK: vector.store %{{.+}}, %[[SB]]
// The tile max: keys every row sees, then the diagonal, where keys a row
// does not see score -inf.
// CHECK: scf.for
// CHECK: arith.maxnumf {{.*}} : vector<16xf32>
// CHECK: scf.for
// CHECK: arith.cmpi sge, %{{.+}}, %{{.+}} : vector<16xi32>
// CHECK: arith.select
// CHECK: arith.maxnumf {{.*}} : vector<16xf32>
// exp is a polynomial on vectors; p = exp(s - m') in place.
// CHECK: math.floor {{.*}} : vector<16xf32>
// CHECK: vector.store %{{.+}}, %[[SB]]
// ot[d, :] = ot[d, :] * c + sum_j value[s0 + j, d] * p_j, 4 dims x 4 row
// vectors per step; on the diagonal a masked FMA (a key a row does not see
// adds nothing, even a NaN).
// CHECK: scf.for %{{.+}} = %{{.+}} to %c32{{.*}} step %c4
// CHECK: vector.load %[[OT]]
// CHECK: tensor.extract %[[V]][%[[B]], %{{.+}}, %[[KVH]], %{{.+}}]
// CHECK: math.fma
// CHECK: arith.cmpi sge
// CHECK: tensor.extract %[[V]]
// CHECK: math.fma
// CHECK: arith.select
// CHECK: vector.store %{{.+}}, %[[OT]]
// Rows without a visible key give 0, not NaN; row r of the block is column r of ot.
// CHECK: arith.cmpf ogt, {{.*}} : vector<16xf32>
// CHECK: vector.transfer_read %[[OT]][%{{.+}}, %{{.+}}], %{{.+}} {in_bounds = [true], permutation_map = #[[COL:.+]]}
// CHECK: vector.transfer_write
// CHECK: } else {
// A short block's rows, one at a time: the row's scaled query and a zero
// accumulator go to the row buffer; key tiles carry m (the running max in
// every lane) and l (per lane). The 16 dot products of a tile are one loop
// over the head dim: a query vector from the buffer, 16 key vectors, 16
// accumulators.
// CHECK: scf.for %[[T:.+]] = %{{.+}} to %[[N]] step %{{.+}} iter_args
// CHECK: vector.store %{{.+}}, %[[RB]][%c0{{.*}}, %c0{{.*}}]
// CHECK: vector.store %{{.+}}, %[[RB]][%c1{{.*}}, %c0{{.*}}]
// CHECK: scf.for {{.*}} -> (vector<16xf32>, vector<16xf32>) {
// CHECK: scf.for %[[DD:.+]] = %{{.+}} to %c32{{.*}} step %c16{{.*}} -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>) {
// CHECK: vector.load %[[RB]][%c0{{.*}}, %[[DD]]]
// CHECK-COUNT-16: vector.transfer_read %[[K]][%{{.+}}, %{{.+}}, %[[KVH]], %[[DD]]]
// The 16 dot products: a transpose-add tree, 4 halving steps (built depth
// first: each dot product is folded in once complete).
// CHECK: vector.shuffle {{.*}} [0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23]
// CHECK: vector.shuffle {{.*}} [0, 1, 2, 3, 16, 17, 18, 19, 8, 9, 10, 11, 24, 25, 26, 27]
// CHECK: vector.shuffle {{.*}} [0, 1, 16, 17, 4, 5, 20, 21, 8, 9, 24, 25, 12, 13, 28, 29]
// CHECK: vector.shuffle {{.*}} [0, 16, 2, 18, 4, 20, 6, 22, 8, 24, 10, 26, 12, 28, 14, 30]
// The tile max in every lane: a butterfly of 4 shuffle + max steps (max as
// compare and select, one vmaxps), no scalar reduction chain.
// CHECK-NOT: vector.reduction <maxnumf>
// CHECK: %[[S8:.+]] = vector.shuffle %[[SC:.+]], %[[SC]] [8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7]
// CHECK: %[[GT:.+]] = arith.cmpf ogt, %[[SC]], %[[S8]] : vector<16xf32>
// CHECK: arith.select %[[GT]], %[[SC]], %[[S8]]
// CHECK: vector.shuffle {{.*}} [4, 5, 6, 7, 0, 1, 2, 3, 12, 13, 14, 15, 8, 9, 10, 11]
// CHECK: vector.shuffle {{.*}} [2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13]
// CHECK: vector.shuffle {{.*}} [1, 0, 3, 2, 5, 4, 7, 6, 9, 8, 11, 10, 13, 12, 15, 14]
// CHECK-NOT: vector.reduction <maxnumf>
// acc = acc c + sum_j p_j value[j], the accumulator read from and written
// back to the buffer in chunks of the head dim (here all of it); p_j is
// broadcast from lane j.
// CHECK: vector.load %[[RB]][%c1{{.*}}, %{{.+}}]
// CHECK: vector.shuffle %[[P:.+]], %[[P]] [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]
// CHECK: vector.transfer_read %[[V]][%{{.+}}, %{{.+}}, %[[KVH]], %{{.+}}]
// CHECK: vector.store %{{.+}}, %[[RB]][%c1{{.*}}, %{{.+}}]
// The last partial tile, masked (lanes at or beyond the row's end).
// CHECK: scf.for {{.*}} -> (vector<16xf32>, vector<16xf32>) {
// CHECK: arith.minsi
// CHECK: arith.cmpi slt
// CHECK: vector.reduction <add>
// CHECK: arith.cmpf ogt
// CHECK: arith.select
// CHECK: vector.load %[[RB]][%c1{{.*}}, %c0{{.*}}]
// CHECK: vector.transfer_write
// CHECK: tensor.parallel_insert_slice %{{.+}} into %[[OUT]][0, %[[T0]], %[[H]], 0] [%{{.+}}, %[[N]], 1, 32]
// CHECK: } {blockc_codegen.kernel = #blockc_codegen.kernel<attention>}
// CHECK-DAG: #[[ROWS]] = affine_map<(d0, d1, d2, d3) -> (d1)>
// CHECK-DAG: #[[COL]] = affine_map<(d0, d1) -> (d0)>

// With AVX2 (8 lanes, 16 registers): blocks of 2 x 8 rows, 6 keys x 2 row
// vectors of score accumulators (12), key tiles of 30 keys (32 rounded
// down to whole groups of 6), P.V in groups of 6 head dims x 2 row vectors
// (12 accumulators) and one group of the 2 left of D = 32; 8 keys (8
// accumulators) per tile in the single-row kernel. The prefetches stay one per 64-byte
// line (16 floats: offsets 0 and 16 of the head dim), 8 keys x 2 lines per
// buffer and tile, starting 8 keys ahead.
// AVX2-LABEL: func.func @gqa_causal
// AVX2: %[[KB:.+]] = bufferization.to_buffer
// AVX2: %[[VB:.+]] = bufferization.to_buffer
// AVX2: arith.ceildivui %{{.+}}, %c16 : index
// AVX2: memref.alloca() {alignment = 64 : i64} : memref<32x16xf32>
// AVX2: memref.alloca() {alignment = 64 : i64} : memref<30x16xf32>
// AVX2: scf.for {{.*}} step %c30{{.*}} -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>) {
// AVX2: scf.for {{.*}} -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>) {
// AVX2: math.floor {{.*}} : vector<8xf32>
// AVX2: scf.for %{{.+}} = %c0{{.*}} to %c30{{.*}} step %c6
// AVX2: scf.for {{.*}} -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>) {
// AVX2: scf.for %{{.+}} = %c30{{.*}} to %c32{{.*}} step %c2
// AVX2: scf.for {{.*}} -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>) {
// AVX2: scf.for {{.*}} -> (vector<8xf32>, vector<8xf32>) {
// AVX2: arith.addi %{{.+}}, %c8{{.*}} : index
// AVX2: memref.prefetch %[[KB]][%{{.+}}, %{{.+}}, %{{.+}}, %c0{{.*}}], read, locality<2>, data
// AVX2: memref.prefetch %[[KB]][%{{.+}}, %{{.+}}, %{{.+}}, %c16{{.*}}], read, locality<2>, data
// AVX2-COUNT-14: memref.prefetch %[[KB]]
// AVX2-COUNT-16: memref.prefetch %[[VB]]
// AVX2-NOT: memref.prefetch
// AVX2: scf.for {{.*}} step %c8{{.*}} -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>) {
// AVX2: vector.shuffle {{.*}} [0, 1, 2, 3, 8, 9, 10, 11]
// AVX2: } {blockc_codegen.kernel = #blockc_codegen.kernel<attention>}

// multi_row = false (attention_tiles, pinned by hand): every row uses the
// single-row kernel, one work item per head.
// ROW-LABEL: func.func @gqa_causal
// ROW-NOT: memref.alloca
// ROW: scf.forall (%{{.+}}, %{{.+}}) in (4, 1)
// ROW: memref.alloca() {alignment = 64 : i64} : memref<2x32xf32>
// ROW-NOT: memref.alloca
// ROW: scf.for {{.*}} -> (vector<16xf32>, vector<16xf32>) {
// ROW: vector.shuffle

// The single-row kernel prefetches, at the start of each full key tile,
// the key and value rows of the next tile (start min(s0 + 16, S - 16)) into
// L2 (locality 2), one memref.prefetch per 64-byte line (head dim 32 = 2
// lines), through read-only views of K and V (no copy); prefetch_distance
// = 0 leaves them out, prefetch_distance / prefetch_locality move them.
// PF-LABEL: func.func @gqa_causal
// PF-SAME: (%{{.+}}: tensor<?x?x4x32xf32>, %[[K:.+]]: tensor<?x?x2x32xf32>, %[[V:.+]]: tensor<?x?x2x32xf32>)
// PF: %[[KB:.+]] = bufferization.to_buffer %[[K]] read_only
// PF: %[[VB:.+]] = bufferization.to_buffer %[[V]] read_only
// PF: } else {
// PF: %[[NEXT:.+]] = arith.addi %[[S0:.+]], %c16{{.*}} : index
// PF: %[[AHEAD:.+]] = arith.minsi %[[NEXT]], %{{.+}} : index
// PF: memref.prefetch %[[KB]][%{{.+}}, %[[AHEAD]], %{{.+}}, %c0{{.*}}], read, locality<2>, data
// PF: memref.prefetch %[[KB]][%{{.+}}, %[[AHEAD]], %{{.+}}, %c16{{.*}}], read, locality<2>, data
// PF-COUNT-30: memref.prefetch %[[KB]]
// PF: memref.prefetch %[[VB]][%{{.+}}, %[[AHEAD]], %{{.+}}, %c0{{.*}}], read, locality<2>, data
// PF-COUNT-31: memref.prefetch %[[VB]]
// PF-NOT: memref.prefetch
// PF: vector.transfer_read %[[K]]
// FAR-LABEL: func.func @gqa_causal
// FAR: arith.addi %{{.+}}, %c48{{.*}} : index
// FAR: memref.prefetch {{.*}} locality<3>, data
// NOPF-LABEL: func.func @gqa_causal
// NOPF-NOT: memref.prefetch
// NOPF-NOT: bufferization.to_buffer

// qk_unroll: head dims per step of the score loop; value_group: the P.V
// head dims per step (2 x 4 row vectors); key_tile: keys per tile.
// OPT-LABEL: func.func @gqa_causal
// OPT: scf.for {{.*}} step %c16{{.*}} -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>) {
// OPT: scf.for {{.*}} step %c2{{.*}} -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>) {
// OPT: scf.for %{{.+}} = %{{.+}} to %c32{{.*}} step %c2
func.func @gqa_causal(%q: tensor<?x?x4x32xf32>, %k: tensor<?x?x2x32xf32>, %v: tensor<?x?x2x32xf32>) -> tensor<?x?x4x32xf32> {
  %o = transformer.sdpa %q, %k, %v {causal} : tensor<?x?x4x32xf32>, tensor<?x?x2x32xf32>, tensor<?x?x2x32xf32> -> tensor<?x?x4x32xf32>
  return %o : tensor<?x?x4x32xf32>
}

// -----

// Not causal: every key is visited (no min on the key range); only the
// partial last tile is masked, by key index alone (no causal compare).
// CHECK-LABEL: func.func @full
// CHECK-NOT: arith.cmpi sge
// CHECK: math.floor
// CHECK-NOT: arith.cmpi sge
// CHECK: return
func.func @full(%q: tensor<1x8x2x16xf32>, %k: tensor<1x8x2x16xf32>) -> tensor<1x8x2x16xf32> {
  %o = transformer.sdpa %q, %k, %k : tensor<1x8x2x16xf32>, tensor<1x8x2x16xf32>, tensor<1x8x2x16xf32> -> tensor<1x8x2x16xf32>
  return %o : tensor<1x8x2x16xf32>
}
