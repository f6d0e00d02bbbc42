// RUN: blockc-opt %s -split-input-file --blockc-gpu-lower-sdpa -verify-diagnostics | FileCheck %s

// The tensor-core attention (gpu_mma_attention) of a causal GQA sdpa whose
// operands are widened from bf16: the kernel reads the bf16 tensors.
// 2 warps = 32 query rows per block, 32-key tiles, head dim 32: dynamic
// shared memory for a 2-stage K/V ring [2][K | V][32 x 40] bf16 (10240
// bytes; rows padded by 16 bytes) with Q [32 x 40] over its last stage.
// K and V go by 16-byte cp.async when their run-time layout allows it (unit
// d stride, offset and strides multiples of 8 elements, 16-byte aligned
// base), else by scalar loads. Tile 0 is in flight while Q is loaded (a
// loop of scalar copies: unrolled, they cost registers) and read as
// fragments (2 ldmatrix.x4); per key tile: one barrier that commits
// and waits for the tile's copies, the copies of the next tile (2 + 2
// chunks of 16 bytes a thread), Q K^T with 2 x 2 ldmatrix.x4 and 8 mma, the
// online softmax (quad max and sum: 4 xor shuffles per row), then P V with
// 2 x 2 ldmatrix.x4.trans and 16 mma (P in two bf16 parts, its rounding and
// the rounding of the rest: two mma per n8 tile and k16 step); barriers
// declare their effects until buffers are freed.
// CHECK-LABEL: func.func @gqa
// CHECK-DAG:     %[[Q16:.+]] = bufferization.to_buffer %arg0 read_only : tensor<1x?x4x32xbf16>
// CHECK-DAG:     %[[K16:.+]] = bufferization.to_buffer %arg1 read_only : tensor<1x?x2x32xbf16>
// CHECK-DAG:     %[[V16:.+]] = bufferization.to_buffer %arg2 read_only : tensor<1x?x2x32xbf16>
// CHECK:         gpu.launch
// CHECK-SAME:      dynamic_shared_memory_size %c10240_i32
// CHECK:           gpu.dynamic_shared_memory
// CHECK:           %[[RING:.+]] = memref.view %{{.+}}[%c0{{.*}}][] : {{.+}} to memref<2x2x32x40xbf16, #gpu.address_space<workgroup>>
// CHECK:           %[[QS:.+]] = memref.view %{{.+}}[%c5120{{.*}}][] : {{.+}} to memref<32x40xbf16, #gpu.address_space<workgroup>>
// CHECK:           %{{.+}}, %[[KOFF:.+]], %{{.+}}:4, %[[KST:.+]]:4 = memref.extract_strided_metadata %[[K16]]
// CHECK:           arith.cmpi eq, %[[KST]]#3, %c1
// CHECK:           %[[KPTR:.+]] = memref.extract_aligned_pointer_as_index %[[K16]]
// CHECK:           arith.remui %[[KPTR]], %c16
// CHECK:           %[[KV:.+]] = memref.reinterpret_cast %[[K16]] to offset: [%[[KOFF]]], sizes: [1, %{{.+}}, 2, 32], strides: [%[[KST]]#0, %[[KST]]#1, %[[KST]]#2, 1] {{.+}} to memref<1x?x2x32xbf16, strided<[?, ?, ?, 1], offset: ?>>
// CHECK:           memref.extract_strided_metadata %[[V16]]
// CHECK:           %[[VV:.+]] = memref.reinterpret_cast %[[V16]]
// CHECK:           %[[ALIGNED:.+]] = arith.andi
// CHECK:           scf.if
// CHECK-NEXT:        arith.constant 2
// CHECK-NEXT:        %[[STAGE0:.+]] = arith.remui %c0
// CHECK:             scf.if %[[ALIGNED]] {
// CHECK-COUNT-2:       nvgpu.device_async_copy %[[KV]][%{{.+}}], %[[RING]][%[[STAGE0]], %c0{{.*}}, %{{.+}}, %{{.+}}], 8, %{{.+}} {bypassL1}
// CHECK-COUNT-2:       nvgpu.device_async_copy %[[VV]][%{{.+}}], %[[RING]][%[[STAGE0]], %c1{{.*}}, %{{.+}}, %{{.+}}], 8, %{{.+}} {bypassL1}
// CHECK-NOT:           nvgpu.device_async_create_group
// CHECK:             } else {
// CHECK:               memref.load %[[K16]]
// CHECK:               memref.store %{{.+}}, %[[RING]][%[[STAGE0]], %c0
// CHECK:               memref.load %[[V16]]
// CHECK:               memref.store %{{.+}}, %[[RING]][%[[STAGE0]], %c1
// CHECK:           scf.for %{{.+}} = %{{.+}} to %c1024{{.*}} step %c64
// CHECK:             memref.load %[[Q16]]
// CHECK:             memref.store %{{.+}}, %[[QS]]
// CHECK:           }
// CHECK-NEXT:      blockc_codegen.workgroup_barrier{{$}}
// CHECK-COUNT-2:   nvgpu.ldmatrix %[[QS]]{{.+}} {numTiles = 4 : i32, transpose = false}
// CHECK:           scf.for %[[JT:.+]] = %c0
// CHECK:             blockc_codegen.workgroup_barrier {cp_async_wait = 0 : i32}
// CHECK:             %[[NEXT:.+]] = arith.addi %[[JT]], %c1
// CHECK:             scf.if
// CHECK:               scf.if %[[ALIGNED]] {
// CHECK-COUNT-4:         nvgpu.device_async_copy
// CHECK:               } else {
// CHECK:             %[[STAGE:.+]] = arith.remui %[[JT]], %c2
// CHECK-NOT:         memref.load
// CHECK:             nvgpu.ldmatrix %[[RING]][%[[STAGE]], %c0{{.*}}, %{{.+}}, %{{.+}}] {numTiles = 4 : i32, transpose = false}
// CHECK-COUNT-8:     nvgpu.mma.sync
// CHECK-COUNT-4:     gpu.shuffle xor
// CHECK-COUNT-4:     gpu.shuffle xor
// CHECK:             %[[HI:.+]] = arith.truncf %{{.+}} : f32 to bf16
// CHECK-NEXT:        %[[HIF:.+]] = arith.extf %[[HI]] : bf16 to f32
// CHECK-NEXT:        %[[REST:.+]] = arith.subf %{{.+}}, %[[HIF]] : f32
// CHECK-NEXT:        arith.truncf %[[REST]] : f32 to bf16
// CHECK:             nvgpu.ldmatrix %[[RING]][%[[STAGE]], %c1{{.*}}, %{{.+}}, %{{.+}}] {numTiles = 4 : i32, transpose = true}
// CHECK-COUNT-4:     nvgpu.mma.sync
// CHECK-NEXT:        arith.constant
// CHECK:             nvgpu.ldmatrix {{.+}} {numTiles = 4 : i32, transpose = true}
// CHECK-COUNT-4:     nvgpu.mma.sync
// CHECK:             nvgpu.ldmatrix {{.+}} {numTiles = 4 : i32, transpose = true}
// CHECK-COUNT-4:     nvgpu.mma.sync
// CHECK:             nvgpu.ldmatrix {{.+}} {numTiles = 4 : i32, transpose = true}
// CHECK-COUNT-4:     nvgpu.mma.sync
// CHECK-NOT:         nvgpu.mma.sync
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

// -----

// The warpgroup variant (sm_90a): on the host, the three 16-bit buffers'
// layouts are checked for TMA; where they allow it the kernel is
// blockc_codegen.warpgroup_attention (built after deallocation by
// blockc-gpu-lower-warpgroup-attention), else the mma.sync kernel.
// CHECK-LABEL: func.func @warpgroup
// CHECK-COUNT-3: memref.extract_aligned_pointer_as_index
// CHECK:         %[[OK:.+]] = arith.andi
// CHECK-NEXT:    memref.reinterpret_cast
// CHECK-NEXT:    scf.if %[[OK]] {
// CHECK-NEXT:      blockc_codegen.warpgroup_attention %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} {causal, group = 2 : i64, scale = 1.250000e-01 : f64} : memref<1x?x4x64xbf16, strided<[?, ?, ?, 1], offset: ?>>, memref<1x?x2x64xbf16, strided<[?, ?, ?, 1], offset: ?>>, memref<1x?x2x64xbf16, strided<[?, ?, ?, 1], offset: ?>>, memref<1x?x4x64xf32>
// CHECK:         } else {
// CHECK:           gpu.launch
// CHECK:           } {blockc_codegen.kernel = #blockc_codegen.kernel<mma_attention>}
func.func @warpgroup(%q: tensor<1x?x4x64xbf16>, %k: tensor<1x?x2x64xbf16>, %v: tensor<1x?x2x64xbf16>) -> tensor<1x?x4x64xf32> {
  %qf = arith.extf %q : tensor<1x?x4x64xbf16> to tensor<1x?x4x64xf32>
  %kf = arith.extf %k : tensor<1x?x2x64xbf16> to tensor<1x?x2x64xf32>
  %vf = arith.extf %v : tensor<1x?x2x64xbf16> to tensor<1x?x2x64xf32>
  %o = transformer.sdpa %qf, %kf, %vf {causal, blockc_codegen.gpu_mma_attention = #blockc_codegen.gpu_mma_attention<warps = 4, kv_tile = 64, warpgroup = true>}
      : tensor<1x?x4x64xf32>, tensor<1x?x2x64xf32>, tensor<1x?x2x64xf32> -> tensor<1x?x4x64xf32>
  return %o : tensor<1x?x4x64xf32>
}

// -----

// fallback_kv_tile: the mma.sync kernel that runs where TMA cannot read the
// operands walks the keys 32 at a time (a ring [2][K | V][32 x 72]: 18432
// bytes; 36864 with kv_tile's 64 keys).
// CHECK-LABEL: func.func @warpgroup_fallback_tile
// CHECK:         scf.if %{{.+}} {
// CHECK-NEXT:      blockc_codegen.warpgroup_attention
// CHECK:         } else {
// CHECK:           gpu.launch {{.+}} dynamic_shared_memory_size %c18432_i32
// CHECK:             memref.view %{{.+}}[%c0{{.*}}][] : {{.+}} to memref<2x2x32x72xbf16, #gpu.address_space<workgroup>>
// CHECK:           } {blockc_codegen.kernel = #blockc_codegen.kernel<mma_attention>}
func.func @warpgroup_fallback_tile(%q: tensor<1x?x4x64xbf16>, %k: tensor<1x?x2x64xbf16>, %v: tensor<1x?x2x64xbf16>) -> tensor<1x?x4x64xf32> {
  %qf = arith.extf %q : tensor<1x?x4x64xbf16> to tensor<1x?x4x64xf32>
  %kf = arith.extf %k : tensor<1x?x2x64xbf16> to tensor<1x?x2x64xf32>
  %vf = arith.extf %v : tensor<1x?x2x64xbf16> to tensor<1x?x2x64xf32>
  %o = transformer.sdpa %qf, %kf, %vf {causal, blockc_codegen.gpu_mma_attention = #blockc_codegen.gpu_mma_attention<warps = 4, kv_tile = 64, warpgroup = true, fallback_kv_tile = 32>}
      : tensor<1x?x4x64xf32>, tensor<1x?x2x64xf32>, tensor<1x?x2x64xf32> -> tensor<1x?x4x64xf32>
  return %o : tensor<1x?x4x64xf32>
}

// -----

func.func @warpgroup_head_dim(%q: tensor<1x?x4x32xbf16>, %k: tensor<1x?x2x32xbf16>, %v: tensor<1x?x2x32xbf16>) -> tensor<1x?x4x32xf32> {
  %qf = arith.extf %q : tensor<1x?x4x32xbf16> to tensor<1x?x4x32xf32>
  %kf = arith.extf %k : tensor<1x?x2x32xbf16> to tensor<1x?x2x32xf32>
  %vf = arith.extf %v : tensor<1x?x2x32xbf16> to tensor<1x?x2x32xf32>
  // expected-error @+1 {{'transformer.sdpa' op has a warpgroup 'blockc_codegen.gpu_mma_attention' but a head dim of 32 (the warpgroup kernel needs a multiple of 64 up to 256)}}
  %o = transformer.sdpa %qf, %kf, %vf {causal, blockc_codegen.gpu_mma_attention = #blockc_codegen.gpu_mma_attention<warps = 4, kv_tile = 64, warpgroup = true>}
      : tensor<1x?x4x32xf32>, tensor<1x?x2x32xf32>, tensor<1x?x2x32xf32> -> tensor<1x?x4x32xf32>
  return %o : tensor<1x?x4x32xf32>
}
