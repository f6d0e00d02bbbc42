// RUN: blockc-opt %s -split-input-file --blockc-gpu-lower-sdpa | FileCheck %s
// RUN: blockc-opt %s -split-input-file --blockc-gpu-lower-sdpa="rows-per-warp=2 warps=8" | FileCheck %s --check-prefix=OPT
// RUN: not blockc-opt %s -split-input-file --blockc-gpu-lower-sdpa="warps=33" 2>&1 | FileCheck %s --check-prefix=ERR

// Causal GQA (4 query heads, 2 kv heads, head dim 64): one gpu.launch, the
// operands read in place through read-only buffers, the result a new buffer.
// Grid (ceil(T / 16), H, B): a query tile of 4 warps x 4 rows per block for
// one (batch, head); 32 x 4 threads. kv head = h / 2 (GQA by index, no
// copy). Each lane holds 64 / 32 = 2 elements of each of its warp's 4 rows:
// 2 query loads per row scaled by 1/sqrt(64). The key loop ends at the causal
// end of the warp's last row; per key and row: a 5-step xor-shuffle sum
// across the warp, one online-softmax update (two exps), and a select that
// leaves rows past their own causal end unchanged. Rows < T are stored.
// ERR: error: blockc-gpu-lower-sdpa: rows-per-warp must be >= 1 and warps in [1, 32]
// CHECK-LABEL: func.func @gqa_causal
// CHECK-SAME:    (%[[Q:.+]]: tensor<?x?x4x64xf32>, %[[K:.+]]: tensor<?x?x2x64xf32>, %[[V:.+]]: tensor<?x?x2x64xf32>)
// CHECK:         %[[QM:.+]] = bufferization.to_buffer %[[Q]] read_only : tensor<?x?x4x64xf32> to memref<?x?x4x64xf32, strided<[?, ?, ?, ?], offset: ?>>
// CHECK:         %[[KM:.+]] = bufferization.to_buffer %[[K]] read_only
// CHECK:         %[[VM:.+]] = bufferization.to_buffer %[[V]] read_only
// CHECK:         %[[OUT:.+]] = memref.alloc(%{{.+}}, %{{.+}}) : memref<?x?x4x64xf32>
// CHECK:         %[[TILES:.+]] = arith.ceildivui %{{.+}}, %{{.+}} : index
// CHECK:         gpu.launch blocks(%{{[^ ,]+}}, %[[H:[^ ,]+]], %[[B:[^ ,]+]]) in (%{{[^ ,]+}} = %[[TILES]], %{{[^ ,]+}} = %{{[^ ,]+}}, %{{[^ ,]+}} = %{{[^ ,]+}})
// CHECK-SAME:        threads(%[[LANE:[^ ,]+]], %{{[^ ,]+}}, %{{[^ ,]+}}) in (%{{[^ ,]+}} = %c32{{[^ ,]*}}, %{{[^ ,]+}} = %c4{{[^ ,]*}}, %{{[^ ,]+}} = %c1{{[^ ,]*}})
// CHECK-NEXT:      %[[C2:.+]] = arith.constant 2 : index
// CHECK-NEXT:      %[[KVH:.+]] = arith.divui %[[H]], %[[C2]] : index
// CHECK:           %[[SCALE:.+]] = arith.constant 1.250000e-01 : f32
// CHECK-COUNT-8:   arith.mulf %{{.+}}, %[[SCALE]] : f32
// CHECK:           scf.for %[[J:.+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args({{.+}}) -> (f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32) {
// CHECK:             %[[D0:.+]] = arith.addi %[[LANE]], %{{.+}} : index
// CHECK:             memref.load %[[KM]][%[[B]], %[[J]], %[[KVH]], %[[D0]]]
// CHECK:             memref.load %[[VM]][%[[B]], %[[J]], %[[KVH]], %[[D0]]]
// CHECK-COUNT-4:     gpu.shuffle  xor %{{.+}}, %c16_i32{{.*}}, %c32_i32
// CHECK-NOT:         memref.load %[[KM]]
// CHECK:             scf.yield
// CHECK-COUNT-4:   scf.if
// CHECK:           gpu.terminator
// CHECK:         %[[R:.+]] = bufferization.to_tensor %[[OUT]] restrict writable : memref<?x?x4x64xf32> to tensor<?x?x4x64xf32>
// CHECK:         return %[[R]]
// OPT-LABEL: func.func @gqa_causal
// OPT:         arith.ceildivui %{{.+}}, %c16
// OPT:         gpu.launch
// OPT-SAME:        threads(%{{[^ ,]+}}, %{{[^ ,]+}}, %{{[^ ,]+}}) in (%{{[^ ,]+}} = %c32{{[^ ,]*}}, %{{[^ ,]+}} = %c8{{[^ ,]*}}, %{{[^ ,]+}} = %c1{{[^ ,]*}})
// OPT:           scf.for {{.+}} -> (f32, f32, f32, f32, f32, f32, f32, f32) {
// OPT-COUNT-2:     gpu.shuffle  xor %{{.+}}, %c16_i32
// OPT-NOT:         gpu.shuffle  xor %{{.+}}, %c16_i32
// OPT:             scf.yield
func.func @gqa_causal(%q: tensor<?x?x4x64xf32>, %k: tensor<?x?x2x64xf32>, %v: tensor<?x?x2x64xf32>) -> tensor<?x?x4x64xf32> {
  %o = transformer.sdpa %q, %k, %v {causal} : tensor<?x?x4x64xf32>, tensor<?x?x2x64xf32>, tensor<?x?x2x64xf32> -> tensor<?x?x4x64xf32>
  return %o : tensor<?x?x4x64xf32>
}

// -----

// Not causal, MHA, explicit scale: keys run to S for every warp, no
// per-row causal select.
// CHECK-LABEL: func.func @mha_full
// CHECK:         bufferization.to_buffer %{{.+}} read_only
// CHECK-NEXT:    %[[KM:.+]] = bufferization.to_buffer %{{.+}} read_only
// CHECK:         %[[S:.+]] = memref.dim %[[KM]], %c1{{.*}} : memref<1x?x2x32xf32, strided<[?, ?, ?, ?], offset: ?>>
// CHECK:         gpu.launch
// CHECK:           arith.constant 5.000000e-01 : f32
// CHECK:           scf.for %{{.+}} = %{{.+}} to %[[S]] step
// CHECK-NOT:         arith.cmpi sge
// CHECK:             scf.yield
func.func @mha_full(%q: tensor<1x?x2x32xf32>, %k: tensor<1x?x2x32xf32>, %v: tensor<1x?x2x32xf32>) -> tensor<1x?x2x32xf32> {
  %o = transformer.sdpa %q, %k, %v {scale = 0.5 : f64} : tensor<1x?x2x32xf32>, tensor<1x?x2x32xf32>, tensor<1x?x2x32xf32> -> tensor<1x?x2x32xf32>
  return %o : tensor<1x?x2x32xf32>
}

// -----

// A head dim that is not a multiple of 32 keeps transformer.sdpa for the
// generic linalg lowering.
// CHECK-LABEL: func.func @small_head
// CHECK-NOT:     gpu.launch
// CHECK:         transformer.sdpa
func.func @small_head(%q: tensor<1x4x2x8xf32>, %k: tensor<1x4x2x8xf32>, %v: tensor<1x4x2x8xf32>) -> tensor<1x4x2x8xf32> {
  %o = transformer.sdpa %q, %k, %v {causal} : tensor<1x4x2x8xf32>, tensor<1x4x2x8xf32>, tensor<1x4x2x8xf32> -> tensor<1x4x2x8xf32>
  return %o : tensor<1x4x2x8xf32>
}
