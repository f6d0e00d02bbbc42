// RUN: blockc-opt %s -split-input-file --blockc-cpu-lower-sdpa | FileCheck %s --implicit-check-not=transformer.sdpa
// RUN: blockc-opt %s -split-input-file --blockc-cpu-lower-sdpa="vector-width=8" | FileCheck %s --check-prefix=W8

// transformer.sdpa becomes one fused loop nest (b, h, t) with an online
// softmax over key tiles: no [T, S] score tensor, the kv head is h / group
// (no copy of K or V), causal rows stop at t + S - T + 1.

// GQA (4 query heads, 2 kv heads), causal, D = 32 (two vectors of 16).
// CHECK-LABEL: func.func @gqa_causal
// CHECK-SAME: (%[[Q:.+]]: tensor<?x?x4x32xf32>, %[[K:.+]]: tensor<?x?x2x32xf32>, %[[V:.+]]: tensor<?x?x2x32xf32>)
// CHECK-NOT: tensor.empty() : tensor<{{.*}}x?x?xf32>
// Heads in parallel, each writing its own [B, T, 1, D] slice.
// CHECK: scf.forall (%[[H:.+]]) in (4) shared_outs(%[[OUT:.+]] = %{{.+}})
// CHECK: %[[SLICE:.+]] = tensor.extract_slice %[[OUT]][0, 0, %[[H]], 0]
// CHECK: %[[C2:.+]] = arith.constant 2 : index
// CHECK: %[[KVH:.+]] = arith.divui %[[H]], %[[C2]] : index
// CHECK: scf.for %{{.+}} = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%{{.+}} = %[[SLICE]])
// CHECK: scf.for %[[T:.+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args
// Causal: the visible keys end at min(t + S - T + 1, S).
// CHECK: arith.minsi
// The key-tile loop carries m, l and the two accumulator vectors.
// CHECK: scf.for {{.*}} -> (f32, f32, vector<16xf32>, vector<16xf32>)
// CHECK: vector.transfer_read %[[K]][%{{.+}}, %{{.+}}, %[[KVH]], %{{.+}}]
// CHECK: vector.reduction <maxnumf>
// CHECK: math.exp {{.*}} : vector<16xf32>
// CHECK: vector.transfer_read %[[V]][%{{.+}}, %{{.+}}, %[[KVH]], %{{.+}}]
// The single-key tail loop.
// CHECK: scf.for {{.*}} -> (f32, f32, vector<16xf32>, vector<16xf32>)
// Rows without a visible key give 0, not NaN.
// CHECK: arith.cmpf ogt
// CHECK: arith.select
// CHECK: vector.transfer_write
// CHECK: tensor.parallel_insert_slice %{{.+}} into %[[OUT]][0, 0, %[[H]], 0]
// W8-LABEL: func.func @gqa_causal
// W8: scf.for {{.*}} -> (f32, f32, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>)
func.func @gqa_causal(%q: tensor<?x?x4x32xf32>, %k: tensor<?x?x2x32xf32>, %v: tensor<?x?x2x32xf32>) -> tensor<?x?x4x32xf32> {
  %o = transformer.sdpa %q, %k, %v {causal} : tensor<?x?x4x32xf32>, tensor<?x?x2x32xf32>, tensor<?x?x2x32xf32> -> tensor<?x?x4x32xf32>
  return %o : tensor<?x?x4x32xf32>
}

// -----

// Not causal: every key is visited (no min on the key range).
// CHECK-LABEL: func.func @full
// CHECK-NOT: arith.minsi
// CHECK: math.exp
func.func @full(%q: tensor<1x8x2x16xf32>, %k: tensor<1x8x2x16xf32>) -> tensor<1x8x2x16xf32> {
  %o = transformer.sdpa %q, %k, %k : tensor<1x8x2x16xf32>, tensor<1x8x2x16xf32>, tensor<1x8x2x16xf32> -> tensor<1x8x2x16xf32>
  return %o : tensor<1x8x2x16xf32>
}
