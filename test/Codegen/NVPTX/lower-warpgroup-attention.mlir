// RUN: blockc-opt %s -split-input-file --blockc-gpu-lower-warpgroup-attention -verify-diagnostics | FileCheck %s

// The sm_90a attention of a causal GQA sdpa (group 2) at head dim 64, bf16
// result: three 4-D TMA maps on the host (boxes 1 x 64 x 1 x 64, 128-byte
// swizzle); one warpgroup per 64 query rows; dynamic shared memory of
// 76800 bytes (Q 8 KiB, a ring of 2 x (K 8 KiB + V 8 KiB), P's two parts
// 16 KiB, the f32 read-back tile 64 x 72, 1 KiB of alignment slack); thread
// 0 initialises 3 mbarriers and loads Q and the first two key tiles; per
// key tile: the stage's parity wait, S = Q K^T as 4 m64n64k16 wgmmas (the
// last waits for all), S read back through shared memory, the online
// softmax (quad max and sum: 4 xor shuffles per row), P's two parts stored
// swizzled, the async-proxy fence and a barrier, P V as 8 wgmmas with V
// N-major (transposeB), O read back and accumulated, a barrier and the
// refill of the stage with tile j + 2.
// CHECK-LABEL: func.func @gqa
// CHECK-COUNT-3: nvgpu.tma.create.descriptor {{.+}} box[%c1{{.*}}, %c64{{.*}}, %c1{{.*}}, %c64{{.*}}] : memref<*xbf16> -> <tensor = memref<1x64x1x64xbf16, #gpu.address_space<workgroup>>, swizzle = swizzle_128b, l2promo = none, oob = zero, interleave = none>
// CHECK:         gpu.launch
// CHECK-SAME:      threads(%{{.+}}, %{{.+}}, %{{.+}}) in (%{{.+}} = %c128{{.*}}, %{{.+}} = %c1{{.*}}, %{{.+}} = %c1{{.*}})
// CHECK-SAME:      dynamic_shared_memory_size %c76800_i32
// CHECK:           %[[BARS:.+]] = nvgpu.mbarrier.create -> <memorySpace = #gpu.address_space<workgroup>, num_barriers = 3>
// CHECK-COUNT-3:     nvgpu.mbarrier.init %[[BARS]]
// CHECK:           gpu.barrier
// CHECK:             nvgpu.mbarrier.arrive.expect_tx %[[BARS]][%c2{{.*}}], %c8192
// CHECK:             nvgpu.tma.async.load
// CHECK:               nvgpu.mbarrier.arrive.expect_tx %[[BARS]][%{{.+}}], %c16384
// CHECK-COUNT-2:       nvgpu.tma.async.load
// CHECK:           nvgpu.mbarrier.try_wait.parity %[[BARS]][%c2
// CHECK:           scf.for
// CHECK:             nvgpu.mbarrier.try_wait.parity %[[BARS]]
// CHECK-COUNT-3:     nvgpu.warpgroup.mma %{{[^ ]+}}, %{{[^ ]+}}, %{{[^ ]+}} : <tensor = memref<64x16xbf16, {{.+}}>>, <tensor = memref<16x64xbf16, {{.+}}>>
// CHECK:             nvgpu.warpgroup.mma {{.+}} {waitGroup = 0 : i64}
// CHECK:             nvgpu.warpgroup.mma.store
// CHECK-COUNT-16:    vector.load {{.+}} : memref<64x72xf32, #gpu.address_space<workgroup>>, vector<2xf32>
// CHECK-COUNT-4:     gpu.shuffle xor
// CHECK-COUNT-4:     gpu.shuffle xor
// CHECK-COUNT-32:    vector.store {{.+}} : memref<64x64xbf16, #gpu.address_space<workgroup>>, vector<2xbf16>
// CHECK:             nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK-NEXT:        gpu.barrier
// CHECK-COUNT-7:     nvgpu.warpgroup.mma {{.+}} {transposeB} :
// CHECK:             nvgpu.warpgroup.mma {{.+}} {transposeB, waitGroup = 0 : i64}
// CHECK:             nvgpu.warpgroup.mma.store
// CHECK:             gpu.barrier
// CHECK:             scf.if
// CHECK:               nvgpu.mbarrier.arrive.expect_tx %[[BARS]][%{{.+}}], %c16384
// CHECK-COUNT-2:       nvgpu.tma.async.load
// CHECK:             scf.yield
// CHECK:           memref.store {{.+}} : memref<1x?x4x64xbf16>
// CHECK:         } {blockc_codegen.kernel = #blockc_codegen.kernel<warpgroup_attention>}
// CHECK-NOT:     blockc_codegen.warpgroup_attention
func.func @gqa(%q: memref<1x?x4x64xbf16>, %k: memref<1x?x2x64xbf16>, %v: memref<1x?x2x64xbf16>, %o: memref<1x?x4x64xbf16>) {
  blockc_codegen.warpgroup_attention %q, %k, %v, %o {causal, group = 2 : i64, scale = 1.250000e-01 : f64}
      : memref<1x?x4x64xbf16>, memref<1x?x2x64xbf16>, memref<1x?x2x64xbf16>, memref<1x?x4x64xbf16>
  return
}

// -----

// Head dim 128: two 64-column panels (8 S wgmmas, 2 x 8 for P V).
// CHECK-LABEL: func.func @hd128
// CHECK:         dynamic_shared_memory_size %c117760_i32
// CHECK:           scf.for
// CHECK-COUNT-8:     nvgpu.warpgroup.mma {{.+}} : <tensor = memref<64x16xbf16, #gpu.address_space<workgroup>>>, <tensor = memref<16x64xbf16, #gpu.address_space<workgroup>>>
// CHECK-COUNT-16:    nvgpu.warpgroup.mma {{.+}} {transposeB
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
