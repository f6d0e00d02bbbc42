// RUN: blockc-opt %s -split-input-file --blockc-gpu-lower-sdpa -verify-diagnostics | FileCheck %s

// The tensor-core attention (gpu_mma_attention) of a causal GQA sdpa whose
// operands are widened from bf16: the kernel reads the bf16 tensors.
// 2 warps = 32 query rows per block, 32-key tiles, head dim 32: dynamic
// shared memory for Q [32 x 40], K and V [32 x 40] bf16 (7680 bytes). Q
// fragments once (2 ldmatrix.x4), per key tile: Q K^T with 2 x 2
// ldmatrix.x4 and 8 mma, the online softmax (quad max and sum: 4 xor
// shuffles per row), P V with 2 x 2 ldmatrix.x4.trans and 16 mma (P in two
// bf16 parts); barriers declare their effects until buffers are freed.
// CHECK-LABEL: func.func @gqa
// CHECK-DAG:     %[[Q16:.+]] = bufferization.to_buffer %arg0 read_only : tensor<1x?x4x32xbf16>
// CHECK-DAG:     %[[K16:.+]] = bufferization.to_buffer %arg1 read_only : tensor<1x?x2x32xbf16>
// CHECK:         gpu.launch
// CHECK-SAME:      dynamic_shared_memory_size %{{.+}}
// CHECK:           gpu.dynamic_shared_memory
// CHECK:           memref.view {{.+}} to memref<32x40xbf16, #gpu.address_space<workgroup>>
// CHECK:           blockc_codegen.workgroup_barrier
// CHECK-COUNT-2:   nvgpu.ldmatrix {{.+}} {numTiles = 4 : i32, transpose = false}
// CHECK:           scf.for
// CHECK:             blockc_codegen.workgroup_barrier
// CHECK:             memref.load %[[K16]]
// CHECK:             blockc_codegen.workgroup_barrier
// CHECK-COUNT-8:     nvgpu.mma.sync
// CHECK-COUNT-4:     gpu.shuffle xor
// CHECK-COUNT-4:     gpu.shuffle xor
// CHECK:             nvgpu.ldmatrix {{.+}} {numTiles = 4 : i32, transpose = true}
// CHECK-COUNT-4:     nvgpu.mma.sync
// CHECK:             scf.yield
// CHECK:         } {blockc_codegen.kernel = #blockc_codegen.kernel<mma_attention>}
func.func @gqa(%q: tensor<1x?x4x32xbf16>, %k: tensor<1x?x2x32xbf16>, %v: tensor<1x?x2x32xbf16>) -> tensor<1x?x4x32xf32> {
  %qf = arith.extf %q : tensor<1x?x4x32xbf16> to tensor<1x?x4x32xf32>
  %kf = arith.extf %k : tensor<1x?x2x32xbf16> to tensor<1x?x2x32xf32>
  %vf = arith.extf %v : tensor<1x?x2x32xbf16> to tensor<1x?x2x32xf32>
  %o = transformer.sdpa %qf, %kf, %vf {causal, blockc_codegen.gpu_mma_attention = #blockc_codegen.gpu_mma_attention<warps = 2, kv_tile = 32>}
      : tensor<1x?x4x32xf32>, tensor<1x?x2x32xf32>, tensor<1x?x2x32xf32> -> tensor<1x?x4x32xf32>
  return %o : tensor<1x?x4x32xf32>
}

// -----

func.func @not_sixteen_bit(%q: tensor<1x?x4x32xf32>, %k: tensor<1x?x2x32xf32>, %v: tensor<1x?x2x32xf32>) -> tensor<1x?x4x32xf32> {
  // expected-error @+1 {{'transformer.sdpa' op has 'blockc_codegen.gpu_mma_attention' but its query, key and value are not widened from one 16-bit type with a head dim that is a multiple of 16}}
  %o = transformer.sdpa %q, %k, %v {causal, blockc_codegen.gpu_mma_attention = #blockc_codegen.gpu_mma_attention<warps = 2, kv_tile = 32>}
      : tensor<1x?x4x32xf32>, tensor<1x?x2x32xf32>, tensor<1x?x2x32xf32> -> tensor<1x?x4x32xf32>
  return %o : tensor<1x?x4x32xf32>
}

// -----

// A bf16 block rounds the attention output: the kernel stores the rounded
// values into a bf16 buffer and the rounding op goes.
// CHECK-LABEL: func.func @rounded
// CHECK:         %[[OUT:.+]] = memref.alloc(%{{.+}}) : memref<1x?x4x32xbf16>
// CHECK:         gpu.launch
// CHECK:           %[[O:.+]] = vector.extract %{{.+}}#4[0, 0] : f32 from vector<2x2xf32>
// CHECK-NEXT:      %[[S:.+]] = arith.mulf %[[O]], %{{.+}} : f32
// CHECK-NEXT:      %[[R:.+]] = arith.truncf %[[S]] : f32 to bf16
// CHECK-NEXT:      memref.store %[[R]], %[[OUT]]
// CHECK:         %[[T:.+]] = bufferization.to_tensor %[[OUT]]
// CHECK-NOT:     arith.truncf
// CHECK:         return %[[T]] : tensor<1x?x4x32xbf16>
func.func @rounded(%q: tensor<1x?x4x32xbf16>, %k: tensor<1x?x2x32xbf16>, %v: tensor<1x?x2x32xbf16>) -> tensor<1x?x4x32xbf16> {
  %qf = arith.extf %q : tensor<1x?x4x32xbf16> to tensor<1x?x4x32xf32>
  %kf = arith.extf %k : tensor<1x?x2x32xbf16> to tensor<1x?x2x32xf32>
  %vf = arith.extf %v : tensor<1x?x2x32xbf16> to tensor<1x?x2x32xf32>
  %o = transformer.sdpa %qf, %kf, %vf {causal, blockc_codegen.gpu_mma_attention = #blockc_codegen.gpu_mma_attention<warps = 2, kv_tile = 32>}
      : tensor<1x?x4x32xf32>, tensor<1x?x2x32xf32>, tensor<1x?x2x32xf32> -> tensor<1x?x4x32xf32>
  %r = arith.truncf %o : tensor<1x?x4x32xf32> to tensor<1x?x4x32xbf16>
  return %r : tensor<1x?x4x32xbf16>
}
