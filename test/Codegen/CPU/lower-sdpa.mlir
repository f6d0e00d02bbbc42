// RUN: blockc-opt %s -split-input-file --blockc-cpu-select-tiles="isa=avx512" --blockc-cpu-lower-sdpa | FileCheck %s --implicit-check-not=transformer.sdpa
// RUN: blockc-opt %s -split-input-file --blockc-cpu-select-tiles="isa=avx2" --blockc-cpu-lower-sdpa | FileCheck %s --check-prefix=AVX2 --implicit-check-not="vector<16xf32>"
// RUN: blockc-opt %s -split-input-file --blockc-cpu-select-tiles="isa=avx512" --blockc-cpu-lower-sdpa="multi-row=false" | FileCheck %s --check-prefix=ROW
// RUN: blockc-opt %s -split-input-file --blockc-cpu-select-tiles="isa=avx512" --blockc-cpu-lower-sdpa="qk-unroll=2 pv-chunk=4" | FileCheck %s --check-prefix=OPT
// RUN: blockc-opt %s -split-input-file --blockc-cpu-select-tiles="isa=avx512" --blockc-cpu-lower-sdpa | FileCheck %s --check-prefix=PF
// RUN: blockc-opt %s -split-input-file --blockc-cpu-select-tiles="isa=avx512" --blockc-cpu-lower-sdpa="prefetch=false" | FileCheck %s --check-prefix=NOPF
// RUN: blockc-opt %s -split-input-file --blockc-cpu-select-tiles="isa=avx512" --blockc-cpu-lower-sdpa="prefetch-distance=3 prefetch-locality=3" | FileCheck %s --check-prefix=FAR

// transformer.sdpa becomes one fused loop nest per head with an online
// softmax over key tiles: no [T, S] score tensor, the kv head is h / group
// (no copy of K or V), causal rows stop at t + S - T + 1. Full blocks of V
// query rows use the multi-row kernel (rows in lanes: no horizontal
// reduction); the remaining rows (all of them when T < V, e.g. decode) the
// single-row kernel (keys in lanes, one transpose-add tree per key tile).
// V is the vector width of the function's cpu_target: 16 with AVX-512 (the
// CHECK lines), 8 with AVX2 (no 16-lane vector anywhere).

// GQA (4 query heads, 2 kv heads), causal, D = 32 (two vectors of 16).
// CHECK-LABEL: func.func @gqa_causal
// CHECK-SAME: (%[[Q:.+]]: tensor<?x?x4x32xf32>, %[[K:.+]]: tensor<?x?x2x32xf32>, %[[V:.+]]: tensor<?x?x2x32xf32>)
// CHECK-NOT: tensor.empty() : tensor<{{.*}}x?x?xf32>
// Scratch of the multi-row kernel: the transposed query block and
// accumulator, [D, 16] per head.
// CHECK: %[[QT:.+]] = memref.alloc() {alignment = 64 : i64} : memref<4x32x16xf32>
// CHECK: %[[OT:.+]] = memref.alloc() {alignment = 64 : i64} : memref<4x32x16xf32>
// Heads in parallel, each writing its own [B, T, 1, D] slice.
// CHECK: scf.forall (%[[H:.+]]) in (4) shared_outs(%[[OUT:.+]] = %{{.+}})
// CHECK: %[[SLICE:.+]] = tensor.extract_slice %[[OUT]][0, 0, %[[H]], 0]
// CHECK: %[[C2:.+]] = arith.constant 2 : index
// CHECK: %[[KVH:.+]] = arith.divui %[[H]], %[[C2]] : index
// CHECK: %[[HQT:.+]] = memref.subview %[[QT]][%[[H]], 0, 0] [1, 32, 16] [1, 1, 1] : memref<4x32x16xf32> to memref<32x16xf32, strided<[16, 1], offset: ?>>
// CHECK: %[[HOT:.+]] = memref.subview %[[OT]][%[[H]], 0, 0] [1, 32, 16] [1, 1, 1]
// CHECK: scf.for %[[B:.+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%{{.+}} = %[[SLICE]])
// Multi-row kernel over blocks of 16 rows: qt[d, :] = scale * q[b, t0:t0+16, h, d].
// CHECK: scf.for %[[T0:.+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args
// CHECK: vector.transfer_read %[[Q]][%[[B]], %[[T0]], %[[H]], %{{.+}}], %{{.+}} {in_bounds = [true], permutation_map = #[[ROWS:.+]]} : tensor<?x?x4x32xf32>, vector<16xf32>
// CHECK: vector.store %{{.+}}, %[[HQT]]
// Causal: the visible keys end at min(t + S - T + 1, S), per block row.
// CHECK: arith.minsi
// Unmasked key tiles carry the per-row max and sum.
// CHECK: scf.for {{.*}} -> (vector<16xf32>, vector<16xf32>) {
// The scores of 16 keys for the 16 rows: a broadcast key element times a
// row of qt, accumulated over d (4 dims per step).
// CHECK: scf.for {{.*}} step %c4{{.*}} -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>) {
// CHECK: vector.load %[[HQT]]
// CHECK: tensor.extract %[[K]][%[[B]], %{{.+}}, %[[KVH]], %{{.+}}]
// CHECK: vector.broadcast
// CHECK: math.fma
// CHECK-NOT: vector.reduction
// CHECK: arith.maxnumf {{.*}} : vector<16xf32>
// exp is a polynomial on vectors.
// CHECK: math.floor {{.*}} : vector<16xf32>
// ot[d, :] = ot[d, :] * c + sum_j value[s0 + j, d] * p_j, 8 dims per step.
// CHECK: scf.for %{{.+}} = %{{.+}} to %c32{{.*}} step %c8
// CHECK: vector.load %[[HOT]]
// CHECK: tensor.extract %[[V]][%[[B]], %{{.+}}, %[[KVH]], %{{.+}}]
// CHECK: vector.store %{{.+}}, %[[HOT]]
// Masked tiles (the causal diagonal, a partial last tile): scores of
// invisible keys are -inf and their values add nothing.
// CHECK: scf.for {{.*}} -> (vector<16xf32>, vector<16xf32>) {
// CHECK: arith.cmpi sge
// CHECK: arith.select
// CHECK: vector.load %[[HOT]]
// CHECK: arith.select
// CHECK: vector.store %{{.+}}, %[[HOT]]
// Rows without a visible key give 0, not NaN; row r of the block is column r of ot.
// CHECK: arith.cmpf ogt, {{.*}} : vector<16xf32>
// CHECK: vector.transfer_read %[[HOT]][%{{.+}}, %{{.+}}], %{{.+}} {in_bounds = [true], permutation_map = #[[COL:.+]]}
// CHECK: vector.transfer_write
// The remaining rows, one at a time: key tiles carry m (the running max in
// every lane), l (per lane) and the two accumulator vectors.
// CHECK: scf.for %[[T:.+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args
// CHECK: scf.for {{.*}} -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>)
// CHECK: vector.transfer_read %[[K]][%{{.+}}, %{{.+}}, %[[KVH]], %{{.+}}]
// The 16 dot products of a tile: a transpose-add tree, 4 halving steps
// (built depth first: each dot product is folded in once complete).
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
// p_j is broadcast from lane j.
// CHECK: vector.shuffle %[[P:.+]], %[[P]] [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]
// CHECK: vector.transfer_read %[[V]][%{{.+}}, %{{.+}}, %[[KVH]], %{{.+}}]
// The last partial tile, masked (lanes at or beyond the row's end).
// CHECK: scf.for {{.*}} -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>)
// CHECK: arith.minsi
// CHECK: arith.cmpi slt
// CHECK: vector.reduction <add>
// CHECK: arith.cmpf ogt
// CHECK: arith.select
// CHECK: vector.transfer_write
// CHECK: tensor.parallel_insert_slice %{{.+}} into %[[OUT]][0, 0, %[[H]], 0]
// CHECK: } {blockc_codegen.kernel = #blockc_codegen.kernel<attention>}
// CHECK-DAG: #[[ROWS]] = affine_map<(d0, d1, d2, d3) -> (d1)>
// CHECK-DAG: #[[COL]] = affine_map<(d0, d1) -> (d0)>

// With AVX2 (8 lanes): blocks of 8 rows, tiles of 8 keys, 4 vectors per
// head row. The prefetches stay one per 64-byte line (16 floats: offsets 0
// and 16 of the head dim), 8 keys x 2 lines per buffer and tile, starting
// 8 keys ahead.
// AVX2-LABEL: func.func @gqa_causal
// AVX2: %[[KB:.+]] = bufferization.to_buffer
// AVX2: %[[VB:.+]] = bufferization.to_buffer
// AVX2: memref.alloc() {alignment = 64 : i64} : memref<4x32x8xf32>
// AVX2: scf.for {{.*}} -> (vector<8xf32>, vector<8xf32>) {
// AVX2: scf.for {{.*}} -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>) {
// AVX2: math.floor {{.*}} : vector<8xf32>
// AVX2: scf.for {{.*}} -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>)
// AVX2: arith.addi %{{.+}}, %c8{{.*}} : index
// AVX2: memref.prefetch %[[KB]][%{{.+}}, %{{.+}}, %{{.+}}, %c0{{.*}}], read, locality<2>, data
// AVX2: memref.prefetch %[[KB]][%{{.+}}, %{{.+}}, %{{.+}}, %c16{{.*}}], read, locality<2>, data
// AVX2-COUNT-14: memref.prefetch %[[KB]]
// AVX2-COUNT-16: memref.prefetch %[[VB]]
// AVX2-NOT: memref.prefetch
// AVX2: vector.shuffle {{.*}} [0, 1, 2, 3, 8, 9, 10, 11]
// AVX2: } {blockc_codegen.kernel = #blockc_codegen.kernel<attention>}

// multi-row=false: every row uses the single-row kernel.
// ROW-LABEL: func.func @gqa_causal
// ROW-NOT: memref.alloc
// ROW: scf.forall
// ROW-NOT: memref.subview
// ROW: scf.for {{.*}} -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>)
// ROW: vector.shuffle

// The single-row kernel prefetches, at the start of each full key tile,
// the key and value rows of the next tile (start min(s0 + 16, S - 16)) into
// L2 (locality 2), one memref.prefetch per 64-byte line (head dim 32 = 2
// lines), through read-only views of K and V (no copy); prefetch=false
// leaves them out, prefetch-distance / prefetch-locality move them.
// PF-LABEL: func.func @gqa_causal
// PF-SAME: (%{{.+}}: tensor<?x?x4x32xf32>, %[[K:.+]]: tensor<?x?x2x32xf32>, %[[V:.+]]: tensor<?x?x2x32xf32>)
// PF: %[[KB:.+]] = bufferization.to_buffer %[[K]] read_only
// PF: %[[VB:.+]] = bufferization.to_buffer %[[V]] read_only
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

// OPT-LABEL: func.func @gqa_causal
// OPT: scf.for {{.*}} step %c2{{.*}} -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>) {
// OPT: scf.for %{{.+}} = %{{.+}} to %c32{{.*}} step %c4
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
