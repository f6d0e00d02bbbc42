// RUN: blockc-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(blockc-gpu-select-tiles,blockc-gpu-lower-paged))' | FileCheck %s

// A paged entry's three ops (bf16 pools, head dim 8, GQA 4 / 2): each a
// gpu.launch on buffers. token_positions: [total] i32 (total = dim 0 of the
// function's first argument), one thread per token. paged_kv_write: the
// pool written in place through a writable to_buffer, 16-byte stores (8
// bf16) where the host check holds, element stores otherwise. paged_sdpa:
// one warp per (token, head) in blocks of 4 warps, K read by 16-byte vector
// loads from the written pool, V through its unit-stride view, a 5-step
// xor-shuffle sum per key.
// CHECK-LABEL: func.func @paged
// CHECK-SAME:    (%[[X:[^:]+]]: tensor<?x32xf32>
// CHECK:         %[[TOTAL:.+]] = tensor.dim %[[X]], %{{.+}} : tensor<?x32xf32>
// CHECK:         %[[POS:.+]] = memref.alloc(%[[TOTAL]]) : memref<?xi32>
// CHECK:         gpu.launch
// CHECK-SAME:      threads(%{{[^ ,]+}}, %{{[^ ,]+}}, %{{[^ ,]+}}) in (%{{[^ ,]+}} = %c256
// CHECK:           memref.store %{{.+}}, %[[POS]][%{{.+}}] : memref<?xi32>
// CHECK:         } {blockc_codegen.kernel = #blockc_codegen.kernel<paged_cache>}
// CHECK:         %[[POOL:.+]] = bufferization.to_buffer %{{.+}} : tensor<?x4x2x8xbf16> to memref<?x4x2x8xbf16>
// CHECK:         memref.extract_aligned_pointer_as_index %[[POOL]]
// CHECK:         gpu.launch
// CHECK:           vector.store %{{.+}}, %[[POOL]][%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}] {alignment = 16 : i64} : memref<?x4x2x8xbf16>, vector<8xbf16>
// CHECK:         } {blockc_codegen.kernel = #blockc_codegen.kernel<paged_cache>}
// CHECK:         gpu.launch
// CHECK:           memref.store %{{.+}}, %[[POOL]][%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}] : memref<?x4x2x8xbf16>
// CHECK:         } {blockc_codegen.kernel = #blockc_codegen.kernel<paged_cache>}
// CHECK:         %[[K:.+]] = bufferization.to_tensor %[[POOL]] restrict writable
// CHECK:         %[[OUT:.+]] = memref.alloc(%{{.+}}) : memref<1x?x4x8xf32>
// CHECK:         gpu.launch blocks(%{{[^ ,]+}}, %{{[^ ,]+}}, %{{[^ ,]+}}) in (%{{[^ ,]+}} = %{{[^ ,]+}}, %{{[^ ,]+}} = %c4{{[^ ,]*}}, %{{[^ ,]+}} = %c1{{[^ ,]*}})
// CHECK-SAME:      threads(%{{[^ ,]+}}, %{{[^ ,]+}}, %{{[^ ,]+}}) in (%{{[^ ,]+}} = %c32{{[^ ,]*}}, %{{[^ ,]+}} = %c4{{[^ ,]*}}, %{{[^ ,]+}} = %c1{{[^ ,]*}})
// CHECK:           vector.load %[[POOL]][%{{.+}}] {alignment = 16 : i64} : memref<?x4x2x8xbf16>, vector<8xbf16>
// CHECK-COUNT-5:   gpu.shuffle  xor
// CHECK:           math.exp
// CHECK:           vector.load %{{.+}}[%{{.+}}] {alignment = 16 : i64} : memref<?x4x2x8xbf16, strided<[?, ?, ?, 1], offset: ?>>, vector<8xbf16>
// CHECK:           memref.store %{{.+}}, %[[OUT]]
// CHECK:         } {blockc_codegen.kernel = #blockc_codegen.kernel<paged_attention>}
// CHECK:         gpu.launch
// CHECK:           vector.load %[[POOL]][%{{.+}}] : memref<?x4x2x8xbf16>, vector<1xbf16>
// CHECK:         } {blockc_codegen.kernel = #blockc_codegen.kernel<paged_attention>}
// CHECK:         %[[O:.+]] = bufferization.to_tensor %[[OUT]] restrict writable
// CHECK:         return %{{.+}}, %[[O]], %[[K]]
func.func @paged(%x: tensor<?x32xf32>, %q: tensor<1x?x4x8xf32>, %new: tensor<1x?x2x8xbf16>,
    %cu: tensor<?xi32>, %pos: tensor<?xi32>, %bt: tensor<?x?xi32>,
    %kp: tensor<?x4x2x8xbf16>, %vp: tensor<?x4x2x8xbf16>)
    -> (tensor<?xi32>, tensor<1x?x4x8xf32>, tensor<?x4x2x8xbf16>) {
  %p = transformer.token_positions %cu, %pos : tensor<?xi32>, tensor<?xi32> -> tensor<?xi32>
  %k = transformer.paged_kv_write %new into %kp, %bt, %cu, %pos : tensor<1x?x2x8xbf16> into tensor<?x4x2x8xbf16>, tensor<?x?xi32>, tensor<?xi32>, tensor<?xi32>
  %o = transformer.paged_sdpa %q, %k, %vp, %bt, %cu, %pos {blockc_codegen.gpu_paged_attention = #blockc_codegen.gpu_paged_attention<warps = 4>} : tensor<1x?x4x8xf32>, tensor<?x4x2x8xbf16>, tensor<?x4x2x8xbf16>, tensor<?x?xi32>, tensor<?xi32>, tensor<?xi32> -> tensor<1x?x4x8xf32>
  return %p, %o, %k : tensor<?xi32>, tensor<1x?x4x8xf32>, tensor<?x4x2x8xbf16>
}

// -----

// f32 pools with a head dim of 6 (not a multiple of 4): element loads only,
// no host check. blockc-gpu-select-tiles writes the 4-warp schedule.
// CHECK-LABEL: func.func @scalar_f32
// CHECK-NOT:     extract_aligned_pointer_as_index
// CHECK:         gpu.launch
// CHECK:           memref.load %{{.+}} : memref<?x2x1x6xf32, strided<[?, ?, ?, ?], offset: ?>>
// CHECK:         } {blockc_codegen.kernel = #blockc_codegen.kernel<paged_attention>}
func.func @scalar_f32(%q: tensor<1x?x2x6xf32>, %kp: tensor<?x2x1x6xf32>, %vp: tensor<?x2x1x6xf32>,
    %bt: tensor<?x?xi32>, %cu: tensor<?xi32>, %pos: tensor<?xi32>) -> tensor<1x?x2x6xf32> {
  %o = transformer.paged_sdpa %q, %kp, %vp, %bt, %cu, %pos : tensor<1x?x2x6xf32>, tensor<?x2x1x6xf32>, tensor<?x2x1x6xf32>, tensor<?x?xi32>, tensor<?xi32>, tensor<?xi32> -> tensor<1x?x2x6xf32>
  return %o : tensor<1x?x2x6xf32>
}
