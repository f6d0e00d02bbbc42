// RUN: blockc-opt %s -split-input-file --blockc-gpu-lower-warpgroup-attention -verify-diagnostics | FileCheck %s

// The sm_90a attention of a causal GQA sdpa (group 2) at head dim 64, bf16
// result: three 4-D TMA maps on the host (boxes 1 x 64 x 1 x 64, 128-byte
// swizzle); one warpgroup per 64 query rows; dynamic shared memory of
// 58368 bytes (Q 8 KiB, a ring of 2 x (K 8 KiB + V 8 KiB), P's two parts
// 16 KiB, 1 KiB of alignment slack: no accumulator tile); thread 0
// initialises 3 mbarriers and loads Q and the first two key tiles; O is a
// 64 x 64 wgmma accumulator carried by the loop over key tiles; per key
// tile: the stage's parity wait, S = Q K^T as 4 m64n64k16 wgmmas (the last
// waits for all), S read in registers (32 f32 per thread), the online
// softmax (quad max and sum: 4 xor shuffles per row), P's two parts stored
// swizzled, the async-proxy fence and a barrier, O read, scaled by alpha
// and written back as an accumulator, P V as 8 wgmmas with V N-major
// (transposeB) accumulating onto it, a barrier and the refill of the stage
// with tile j + 2. No accumulator goes through shared memory; the result
// is stored from O's registers after the loop.
// CHECK-LABEL: func.func @gqa
// CHECK-COUNT-3: nvgpu.tma.create.descriptor {{.+}} box[%c1{{.*}}, %c64{{.*}}, %c1{{.*}}, %c64{{.*}}] : memref<*xbf16> -> <tensor = memref<1x64x1x64xbf16, #gpu.address_space<workgroup>>, swizzle = swizzle_128b, l2promo = none, oob = zero, interleave = none>
// CHECK:         gpu.launch
// CHECK-SAME:      threads(%{{.+}}, %{{.+}}, %{{.+}}) in (%{{.+}} = %c128{{.*}}, %{{.+}} = %c1{{.*}}, %{{.+}} = %c1{{.*}})
// CHECK-SAME:      dynamic_shared_memory_size %c58368_i32
// CHECK:           %[[BARS:.+]] = nvgpu.mbarrier.create -> <memorySpace = #gpu.address_space<workgroup>, num_barriers = 3>
// CHECK-COUNT-3:     nvgpu.mbarrier.init %[[BARS]]
// CHECK:           gpu.barrier
// CHECK:             nvgpu.mbarrier.arrive.expect_tx %[[BARS]][%c2{{.*}}], %c8192
// CHECK:             nvgpu.tma.async.load
// CHECK:               nvgpu.mbarrier.arrive.expect_tx %[[BARS]][%{{.+}}], %c16384
// CHECK-COUNT-2:       nvgpu.tma.async.load
// CHECK:           nvgpu.mbarrier.try_wait.parity %[[BARS]][%c2
// CHECK:           %[[O0:.+]] = nvgpu.warpgroup.mma.init.accumulator -> <fragmented = vector<64x64xf32>>
// CHECK:           %[[LOOP:.+]]:5 = scf.for {{.+}} iter_args({{.+}}, %[[O:.+]] = %[[O0]]) -> (f32, f32, f32, f32, !nvgpu.warpgroup.accumulator<fragmented = vector<64x64xf32>>)
// CHECK-NOT:         nvgpu.warpgroup.mma.store
// CHECK:             nvgpu.mbarrier.try_wait.parity %[[BARS]]
// CHECK-COUNT-3:     nvgpu.warpgroup.mma %{{[^ ]+}}, %{{[^ ]+}}, %{{[^ ]+}} : <tensor = memref<64x16xbf16, {{.+}}>>, <tensor = memref<16x64xbf16, {{.+}}>>
// CHECK:             %[[S:.+]] = nvgpu.warpgroup.mma {{.+}} {waitGroup = 0 : i64}
// CHECK-NOT:         nvgpu.warpgroup.mma.store
// CHECK:             blockc_codegen.accumulator_to_fragment %[[S]] : !nvgpu.warpgroup.accumulator<fragmented = vector<64x64xf32>> -> vector<32xf32>
// CHECK-NOT:         memref<64x72xf32
// CHECK-COUNT-4:     gpu.shuffle xor
// CHECK-COUNT-4:     gpu.shuffle xor
// CHECK-COUNT-32:    vector.store {{.+}} : memref<64x64xbf16, #gpu.address_space<workgroup>>, vector<2xbf16>
// CHECK:             nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK-NEXT:        gpu.barrier
// CHECK:             %[[OF:.+]] = blockc_codegen.accumulator_to_fragment %[[O]] : !nvgpu.warpgroup.accumulator<fragmented = vector<64x64xf32>> -> vector<32xf32>
// CHECK:             %[[OS:.+]] = arith.mulf %[[OF]], %{{.+}} : vector<32xf32>
// CHECK:             %[[OA:.+]] = blockc_codegen.fragment_to_accumulator %[[OS]] : vector<32xf32> -> !nvgpu.warpgroup.accumulator<fragmented = vector<64x64xf32>>
// CHECK:             %[[PV0:.+]] = nvgpu.warpgroup.mma %{{[^ ]+}}, %{{[^ ]+}}, %[[OA]] {transposeB} :
// CHECK-COUNT-6:     nvgpu.warpgroup.mma {{.+}} {transposeB} :
// CHECK:             %[[PV:.+]] = nvgpu.warpgroup.mma {{.+}} {transposeB, waitGroup = 0 : i64}
// CHECK-NOT:         nvgpu.warpgroup.mma.store
// CHECK:             gpu.barrier
// CHECK:             scf.if
// CHECK:               nvgpu.mbarrier.arrive.expect_tx %[[BARS]][%{{.+}}], %c16384
// CHECK-COUNT-2:       nvgpu.tma.async.load
// CHECK:             scf.yield {{.+}}, %[[PV]] :
// CHECK:           blockc_codegen.accumulator_to_fragment %[[LOOP]]#4
// CHECK:           memref.store {{.+}} : memref<1x?x4x64xbf16>
// CHECK:         } {blockc_codegen.kernel = #blockc_codegen.kernel<warpgroup_attention>}
// CHECK-NOT:     blockc_codegen.warpgroup_attention
// CHECK-NOT:     nvgpu.warpgroup.mma.store
func.func @gqa(%q: memref<1x?x4x64xbf16>, %k: memref<1x?x2x64xbf16>, %v: memref<1x?x2x64xbf16>, %o: memref<1x?x4x64xbf16>) {
  blockc_codegen.warpgroup_attention %q, %k, %v, %o {causal, group = 2 : i64, scale = 1.250000e-01 : f64}
      : memref<1x?x4x64xbf16>, memref<1x?x2x64xbf16>, memref<1x?x2x64xbf16>, memref<1x?x4x64xbf16>
  return
}

// -----

// Head dim 128: two 64-column panels (8 S wgmmas; O as two accumulators,
// both rescaled before the 2 x 8 P V wgmmas, which accumulate onto them).
// CHECK-LABEL: func.func @hd128
// CHECK:         dynamic_shared_memory_size %c99328_i32
// CHECK:           scf.for {{.+}} -> (f32, f32, f32, f32, !nvgpu.warpgroup.accumulator<fragmented = vector<64x64xf32>>, !nvgpu.warpgroup.accumulator<fragmented = vector<64x64xf32>>)
// CHECK-COUNT-8:     nvgpu.warpgroup.mma {{.+}} : <tensor = memref<64x16xbf16, #gpu.address_space<workgroup>>>, <tensor = memref<16x64xbf16, #gpu.address_space<workgroup>>>
// CHECK:             blockc_codegen.accumulator_to_fragment
// CHECK-COUNT-2:     blockc_codegen.fragment_to_accumulator
// CHECK-COUNT-16:    nvgpu.warpgroup.mma {{.+}} {transposeB
// CHECK:           scf.yield
// CHECK-COUNT-2:   blockc_codegen.accumulator_to_fragment
func.func @hd128(%q: memref<2x?x2x128xbf16>, %k: memref<2x?x1x128xbf16>, %v: memref<2x?x1x128xbf16>, %o: memref<2x?x2x128xf32>) {
  blockc_codegen.warpgroup_attention %q, %k, %v, %o {group = 2 : i64, scale = 8.838835e-02 : f64}
      : memref<2x?x2x128xbf16>, memref<2x?x1x128xbf16>, memref<2x?x1x128xbf16>, memref<2x?x2x128xf32>
  return
}

// -----

func.func @head_dim_32(%q: memref<1x?x4x32xbf16>, %k: memref<1x?x2x32xbf16>, %v: memref<1x?x2x32xbf16>, %o: memref<1x?x4x32xbf16>) {
  // expected-error @+1 {{'blockc_codegen.warpgroup_attention' op needs bf16 or f16 [B, T, H, D] operands of one type with D a multiple of 64 up to 256}}
  blockc_codegen.warpgroup_attention %q, %k, %v, %o {group = 2 : i64, scale = 1.250000e-01 : f64}
      : memref<1x?x4x32xbf16>, memref<1x?x2x32xbf16>, memref<1x?x2x32xbf16>, memref<1x?x4x32xbf16>
  return
}
