// RUN: blockc-opt %s -split-input-file --blockc-gpu-select-tiles=chip=sm_80 | FileCheck %s --check-prefix=SELECT
// RUN: blockc-opt %s -split-input-file --blockc-gpu-select-tiles=chip=sm_80 --blockc-gpu-lower-sdpa -verify-diagnostics | FileCheck %s

// The split-KV attention of a decode step on tensor cores
// (#blockc_codegen.gpu_attention<split_mma_warps = n>): a GQA group of 2 to
// 8 query heads widened from bf16 / f16 at head dim 64 or 128.
// blockc-gpu-select-tiles writes split_mma_warps = 4 on sm_80+ there, and
// leaves the FMA kernel (split_mma_warps = 0, not printed) to f32 blocks,
// MHA (a group of 1) and groups of more than 8.

// GQA 8/2 (a group of 4), head dim 128, bf16. Kernel 1: grid
// (ceil(splits / 4), H_kv, B) of 4 warps, warp y of block x the split
// 4 x + y (a whole warp past the last split does nothing). Lane (g, t4) =
// (lane / 4, lane % 4) loads 4 16-byte runs of its query row (head g of the
// group), then per step of 16 keys: 8 runs of its two key rows (S = Q K^T:
// 2 n8 tiles x 8 k16 steps = 16 mma.sync), the online softmax of its row
// over the quad (2 xor shuffles for the max, 2 for the sum), 8 runs of its
// 4 value rows and 2 x 16 mma.sync for P V (P as its bf16 rounding and that
// of the rest). No shared memory, no barrier. The lanes of the group's
// rows store m, l and their accumulators as 16-byte runs; the merge kernel
// is the FMA path's.
// SELECT-LABEL: func.func @gqa4_hd128
// SELECT:         transformer.sdpa {{.+}}blockc_codegen.gpu_attention = #blockc_codegen.gpu_attention<rows_per_warp = 4, warps = 4, split_mma_warps = 4>
// CHECK-LABEL: func.func @gqa4_hd128
// CHECK:         %[[KM:.+]] = bufferization.to_buffer %{{.+}} read_only : tensor<1x?x2x128xbf16>
// CHECK:         %[[STATS:.+]] = memref.alloc(%{{.+}}, %{{.+}}) {alignment = 64 : i64} : memref<?x?x32x2xf32>
// CHECK:         %[[ACCS:.+]] = memref.alloc(%{{.+}}, %{{.+}}) {alignment = 64 : i64} : memref<?x?x32x128xf32>
// CHECK:         %[[KV:.+]] = memref.reinterpret_cast %[[KM]]
// CHECK:         scf.if %{{.+}} {
// CHECK:           %[[BLOCKS:.+]] = arith.ceildivui %{{.+}}, %c4
// CHECK:           gpu.launch blocks(%[[BX:[^ ,]+]], %[[KVH:[^ ,]+]], %[[B:[^ ,]+]]) in (%{{[^ ,]+}} = %[[BLOCKS]], %{{[^ ,]+}} = %{{[^ ,]+}}, %{{[^ ,]+}} = %{{[^ ,]+}})
// CHECK-SAME:        threads(%[[LANE:[^ ,]+]], %[[WARP:[^ ,]+]], %{{[^ ,]+}}) in (%{{[^ ,]+}} = %c32{{[^ ,]*}}, %{{[^ ,]+}} = %c4{{[^ ,]*}}, %{{[^ ,]+}} = %c1{{[^ ,]*}})
// CHECK:             %[[X4:.+]] = arith.muli %[[BX]], %c4
// CHECK:             %[[SPLIT:.+]] = arith.addi %[[X4]], %[[WARP]]
// CHECK:             scf.if
// CHECK-COUNT-4:       vector.load {{.+}} : memref<1x1x8x128xbf16, strided<[?, ?, ?, 1], offset: ?>>, vector<8xbf16>
// CHECK:               scf.for %{{.+}} step %c16{{.*}} -> (f32, f32, vector<2x2xf32>,
// CHECK:                 vector.load %[[KV]]{{.+}} : memref<1x?x2x128xbf16, strided<[?, ?, ?, 1], offset: ?>>, vector<8xbf16>
// CHECK-COUNT-16:        nvgpu.mma.sync
// CHECK-NOT:             nvgpu.mma.sync
// CHECK-COUNT-4:         gpu.shuffle  xor
// CHECK-COUNT-4:         vector.load {{.+}} : memref<1x?x2x128xbf16, strided<[?, ?, ?, 1], offset: ?>>, vector<8xbf16>
// CHECK-COUNT-16:        nvgpu.mma.sync{{.+}} : (vector<4x2xbf16>, vector<2x2xbf16>, vector<2x2xf32>) -> vector<2x2xf32>
// CHECK-COUNT-4:         vector.load {{.+}} : memref<1x?x2x128xbf16, strided<[?, ?, ?, 1], offset: ?>>, vector<8xbf16>
// CHECK-COUNT-16:        nvgpu.mma.sync
// CHECK-NOT:             nvgpu.mma.sync
// CHECK:                 scf.yield
// CHECK:               scf.if
// CHECK:                 memref.store %{{.+}}, %[[STATS]][%[[B]], %{{.+}}, %[[SPLIT]], %c0{{[^ ,]*}}]
// CHECK:                 memref.store %{{.+}}, %[[STATS]][%[[B]], %{{.+}}, %[[SPLIT]], %c1{{[^ ,]*}}]
// CHECK-COUNT-8:         vector.store %{{.+}}, %[[ACCS]]{{.+}} : memref<?x?x32x128xf32>, vector<4xf32>
// CHECK-NOT:         gpu.barrier
// CHECK-NOT:         workgroup
// CHECK:             gpu.terminator
// CHECK-NEXT:      } {blockc_codegen.kernel = #blockc_codegen.kernel<fused_attention>}
// CHECK:         } else {
// CHECK:           gpu.launch
// CHECK-NOT:         vector.load
// CHECK:             memref.load %[[KM]]
// CHECK:             nvgpu.mma.sync
// CHECK:             gpu.terminator
// CHECK:         }
// CHECK:         gpu.launch blocks
// CHECK:           memref.load %[[STATS]]
// CHECK:           arith.truncf %{{.+}} : f32 to bf16
// CHECK:           gpu.terminator
// CHECK-NOT:     gpu.launch
// CHECK:         return
func.func @gqa4_hd128(%q: tensor<1x1x8x128xbf16>, %k: tensor<1x?x2x128xbf16>, %v: tensor<1x?x2x128xbf16>) -> tensor<1x1x8x128xbf16> {
  %qf = arith.extf %q : tensor<1x1x8x128xbf16> to tensor<1x1x8x128xf32>
  %kf = arith.extf %k : tensor<1x?x2x128xbf16> to tensor<1x?x2x128xf32>
  %vf = arith.extf %v : tensor<1x?x2x128xbf16> to tensor<1x?x2x128xf32>
  %o = transformer.sdpa %qf, %kf, %vf {causal} : tensor<1x1x8x128xf32>, tensor<1x?x2x128xf32>, tensor<1x?x2x128xf32> -> tensor<1x1x8x128xf32>
  %r = arith.truncf %o : tensor<1x1x8x128xf32> to tensor<1x1x8x128xbf16>
  return %r : tensor<1x1x8x128xbf16>
}

// -----

// f16 at head dim 64 (a group of 8): the same kernel, 2 runs of Q and K and
// one 64-element block of V per key.
// SELECT-LABEL: func.func @gqa8_hd64_f16
// SELECT:         split_mma_warps = 4
// CHECK-LABEL: func.func @gqa8_hd64_f16
// CHECK:         gpu.launch
// CHECK-COUNT-2:   vector.load {{.+}} : memref<1x1x8x64xf16, strided<[?, ?, ?, 1], offset: ?>>, vector<8xf16>
// CHECK:           scf.for
// CHECK-COUNT-4:     nvgpu.mma.sync{{.+}} : (vector<4x2xf16>, vector<2x2xf16>, vector<2x2xf32>) -> vector<2x2xf32>
// CHECK-COUNT-4:     gpu.shuffle  xor
// CHECK-COUNT-16:    nvgpu.mma.sync
// CHECK-NOT:         nvgpu.mma.sync
// CHECK:             scf.yield
func.func @gqa8_hd64_f16(%q: tensor<1x1x8x64xf16>, %k: tensor<1x?x1x64xf16>, %v: tensor<1x?x1x64xf16>) -> tensor<1x1x8x64xf32> {
  %qf = arith.extf %q : tensor<1x1x8x64xf16> to tensor<1x1x8x64xf32>
  %kf = arith.extf %k : tensor<1x?x1x64xf16> to tensor<1x?x1x64xf32>
  %vf = arith.extf %v : tensor<1x?x1x64xf16> to tensor<1x?x1x64xf32>
  %o = transformer.sdpa %qf, %kf, %vf : tensor<1x1x8x64xf32>, tensor<1x?x1x64xf32>, tensor<1x?x1x64xf32> -> tensor<1x1x8x64xf32>
  return %o : tensor<1x1x8x64xf32>
}

// -----

// Where the tensor-core form does not apply, the FMA kernel: MHA (a group
// of 1) in bf16, f32 caches, head dim 96.
// SELECT-LABEL: func.func @fma_kept
// SELECT-COUNT-3: blockc_codegen.gpu_attention = #blockc_codegen.gpu_attention<rows_per_warp = 4, warps = 4>
// CHECK-LABEL: func.func @fma_kept
// CHECK-NOT:     nvgpu.mma.sync
// CHECK:         return
func.func @fma_kept(%q: tensor<1x1x4x64xbf16>, %k: tensor<1x?x4x64xbf16>, %v: tensor<1x?x4x64xbf16>,
                    %qs: tensor<1x1x4x64xf32>, %ks: tensor<1x?x2x64xf32>, %vs: tensor<1x?x2x64xf32>,
                    %qw: tensor<1x1x4x96xbf16>, %kw: tensor<1x?x2x96xbf16>, %vw: tensor<1x?x2x96xbf16>)
    -> (tensor<1x1x4x64xf32>, tensor<1x1x4x64xf32>, tensor<1x1x4x96xf32>) {
  %qf = arith.extf %q : tensor<1x1x4x64xbf16> to tensor<1x1x4x64xf32>
  %kf = arith.extf %k : tensor<1x?x4x64xbf16> to tensor<1x?x4x64xf32>
  %vf = arith.extf %v : tensor<1x?x4x64xbf16> to tensor<1x?x4x64xf32>
  %o = transformer.sdpa %qf, %kf, %vf : tensor<1x1x4x64xf32>, tensor<1x?x4x64xf32>, tensor<1x?x4x64xf32> -> tensor<1x1x4x64xf32>
  %os = transformer.sdpa %qs, %ks, %vs : tensor<1x1x4x64xf32>, tensor<1x?x2x64xf32>, tensor<1x?x2x64xf32> -> tensor<1x1x4x64xf32>
  %qwf = arith.extf %qw : tensor<1x1x4x96xbf16> to tensor<1x1x4x96xf32>
  %kwf = arith.extf %kw : tensor<1x?x2x96xbf16> to tensor<1x?x2x96xf32>
  %vwf = arith.extf %vw : tensor<1x?x2x96xbf16> to tensor<1x?x2x96xf32>
  %ow = transformer.sdpa %qwf, %kwf, %vwf : tensor<1x1x4x96xf32>, tensor<1x?x2x96xf32>, tensor<1x?x2x96xf32> -> tensor<1x1x4x96xf32>
  return %o, %os, %ow : tensor<1x1x4x64xf32>, tensor<1x1x4x64xf32>, tensor<1x1x4x96xf32>
}

// -----

// split_mma_warps pinned by hand where the kernel does not apply (f32
// operands) is an error.
// SELECT-LABEL: func.func @pinned_f32
func.func @pinned_f32(%q: tensor<1x1x4x64xf32>, %k: tensor<1x?x2x64xf32>, %v: tensor<1x?x2x64xf32>) -> tensor<1x1x4x64xf32> {
  // expected-error @+1 {{'transformer.sdpa' op has a 'blockc_codegen.gpu_attention' with split_mma_warps = 2 but is not a GQA group of 2 to 8 query heads widened from one 16-bit type with a head dim of 64 or 128 (use split_mma_warps = 0)}}
  %o = transformer.sdpa %q, %k, %v {blockc_codegen.gpu_attention = #blockc_codegen.gpu_attention<rows_per_warp = 4, warps = 4, split_mma_warps = 2>}
      : tensor<1x1x4x64xf32>, tensor<1x?x2x64xf32>, tensor<1x?x2x64xf32> -> tensor<1x1x4x64xf32>
  return %o : tensor<1x1x4x64xf32>
}
