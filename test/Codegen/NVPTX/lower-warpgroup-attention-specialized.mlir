// RUN: blockc-opt %s -split-input-file --blockc-gpu-lower-warpgroup-attention -verify-diagnostics | FileCheck %s

// The warp-specialised sm_90a attention (consumers = 2, overlap) of a
// causal GQA sdpa (group 2) at head dim 64: grid (ceil(T / 128) * B, H, 1)
// of three warpgroups (384 threads); 115712 bytes of dynamic shared memory
// (Q of both consumers 16 KiB, a ring of 2 x (K 8 KiB + V 8 KiB), P's two
// parts double-buffered per consumer 64 KiB, 1 KiB of alignment slack);
// four mbarrier groups, initialised by thread 0: full (count 1) and empty
// (count 8: the consumer warps) per stage, Q per consumer (1), turns per
// consumer (4: the other consumer's warps). Warpgroup 0 lowers its
// registers to 24 and its thread 0 loads each consumer's Q (when it has
// key tiles), then each key tile after the stage's empty wait. The
// consumers raise theirs to 240, wait for their Q, and run their key tiles
// as overlapped steps (FlashAttention-3's intra-warpgroup overlap), each
// in its turn (a wait on this consumer's turn mbarrier; at the end a
// warp's lane 0 arrives on the other's after bar.warp.sync). Step 0 (a
// loop of 0 or 1 iterations): tile 0's full wait, S = Q K^T (4 wgmmas,
// depth 4: none waits for another; the last waits for all, depth 0, so
// that ptxas does not serialise the kernel's wgmmas: C7515 at head dim
// 128), the end of the turn, no further wait, S read in registers, the
// online softmax (quad shuffles), P's two parts into this consumer's
// buffer, the async-proxy fence, O rescaled in registers, the consumer's
// named barrier (128 threads). Steps 1 .. n - 1: tile j's full wait, S of
// tile j (4 wgmmas, depth 4) and P V of tile j - 1 (8 wgmmas, V N-major,
// depth 12), the end of the turn, wgmma.wait_group 8 (S retired, P V in
// flight), S read, the softmax, P into the other buffer, the fence,
// wgmma.wait_group 0, the release of tile j - 1's stage (empty arrive), O
// rescaled, the named barrier. Step n (0 or 1 iterations): P V of the last
// tile (depth 8), the end of the turn, wgmma.wait_group 0, the stage's
// release. Then the stages of the other consumer's remaining tiles are
// released as they land, and O / l is stored from O's registers.
// CHECK-LABEL: func.func @gqa
// CHECK-COUNT-3: nvgpu.tma.create.descriptor {{.+}} box[%c1{{.*}}, %c64{{.*}}, %c1{{.*}}, %c64{{.*}}]
// CHECK:         gpu.launch
// CHECK-SAME:      threads(%{{.+}}, %{{.+}}, %{{.+}}) in (%{{.+}} = %c384{{.*}}, %{{.+}} = %c1{{.*}}, %{{.+}} = %c1{{.*}})
// CHECK-SAME:      dynamic_shared_memory_size %c115712_i32
// CHECK:           %[[FULL:.+]] = nvgpu.mbarrier.create -> <memorySpace = #gpu.address_space<workgroup>, num_barriers = 2>
// CHECK:           %[[EMPTY:.+]] = nvgpu.mbarrier.create
// CHECK:           %[[QB:.+]] = nvgpu.mbarrier.create
// CHECK:           %[[TURN:.+]] = nvgpu.mbarrier.create
// CHECK:             nvgpu.mbarrier.init %[[FULL]][%{{.+}}], %c1
// CHECK:             nvgpu.mbarrier.init %[[EMPTY]][%{{.+}}], %c8
// CHECK:             nvgpu.mbarrier.init %[[QB]][%{{.+}}], %c1
// CHECK:             nvgpu.mbarrier.init %[[TURN]][%{{.+}}], %c4
// CHECK:           gpu.barrier
// CHECK:           scf.if
// CHECK-NEXT:        nvvm.setmaxregister  decrease 24
// CHECK:                 nvgpu.mbarrier.arrive.expect_tx %[[QB]][%{{.+}}], %c8192
// CHECK:                 nvgpu.tma.async.load {{.+}}, %[[QB]]
// CHECK:                 nvgpu.mbarrier.arrive.expect_tx %[[QB]][%{{.+}}], %c8192
// CHECK:                 nvgpu.tma.async.load {{.+}}, %[[QB]]
// CHECK:               scf.for
// CHECK:                   nvgpu.mbarrier.try_wait.parity %[[EMPTY]]
// CHECK:                 nvgpu.mbarrier.arrive.expect_tx %[[FULL]][%{{.+}}], %c16384
// CHECK-COUNT-2:         nvgpu.tma.async.load {{.+}}, %[[FULL]]
// CHECK:           } else {
// CHECK-NEXT:        nvvm.setmaxregister  increase 240
// CHECK:               nvgpu.mbarrier.try_wait.parity %[[QB]]
// CHECK:             scf.for {{.+}} -> (f32, f32, f32, f32, !nvgpu.warpgroup.accumulator<fragmented = vector<64x64xf32>>)
// CHECK:               nvgpu.mbarrier.try_wait.parity %[[FULL]]
// CHECK:               scf.if
// CHECK:                 nvgpu.mbarrier.try_wait.parity %[[TURN]]
// CHECK-NOT:           transposeB
// CHECK-COUNT-3:       nvgpu.warpgroup.mma %{{[^ ]+}}, %{{[^ ]+}}, %{{[^ ]+}} {waitGroup = 4 : i64} : <tensor = memref<64x16xbf16, {{.+}}>>, <tensor = memref<16x64xbf16, {{.+}}>>
// CHECK:               nvgpu.warpgroup.mma %{{[^ ]+}}, %{{[^ ]+}}, %{{[^ ]+}} {waitGroup = 0 : i64} : <tensor = memref<64x16xbf16, {{.+}}>>, <tensor = memref<16x64xbf16, {{.+}}>>
// CHECK:               scf.if
// CHECK:                 nvvm.bar.warp.sync
// CHECK:                   nvgpu.mbarrier.arrive.expect_tx %[[TURN]][%{{.+}}], %c0
// CHECK-NOT:           nvvm.wgmma.wait.group.sync.aligned
// CHECK:               blockc_codegen.accumulator_to_fragment
// CHECK-COUNT-4:       gpu.shuffle xor
// CHECK-COUNT-4:       gpu.shuffle xor
// CHECK-COUNT-32:      vector.store {{.+}} : memref<64x64xbf16, #gpu.address_space<workgroup>>, vector<2xbf16>
// CHECK:               nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK:               blockc_codegen.accumulator_to_fragment
// CHECK:               arith.mulf {{.+}} : vector<32xf32>
// CHECK:               blockc_codegen.fragment_to_accumulator
// CHECK:               nvvm.barrier id = %{{.+}} number_of_threads = %c128_i32
// CHECK:               scf.yield
// CHECK:             scf.for {{.+}} -> (f32, f32, f32, f32, !nvgpu.warpgroup.accumulator<fragmented = vector<64x64xf32>>)
// CHECK:               nvgpu.mbarrier.try_wait.parity %[[FULL]]
// CHECK:               scf.if
// CHECK:                 nvgpu.mbarrier.try_wait.parity %[[TURN]]
// CHECK-COUNT-4:       nvgpu.warpgroup.mma %{{[^ ]+}}, %{{[^ ]+}}, %{{[^ ]+}} {waitGroup = 4 : i64} :
// CHECK-COUNT-8:       nvgpu.warpgroup.mma {{.+}} {transposeB, waitGroup = 12 : i64} :
// CHECK:               scf.if
// CHECK:                 nvvm.bar.warp.sync
// CHECK:                   nvgpu.mbarrier.arrive.expect_tx %[[TURN]][%{{.+}}], %c0
// CHECK:               nvvm.wgmma.wait.group.sync.aligned 8
// CHECK:               blockc_codegen.accumulator_to_fragment
// CHECK-COUNT-4:       gpu.shuffle xor
// CHECK-COUNT-4:       gpu.shuffle xor
// CHECK-COUNT-32:      vector.store {{.+}} : memref<64x64xbf16, #gpu.address_space<workgroup>>, vector<2xbf16>
// CHECK:               nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK:               nvvm.wgmma.wait.group.sync.aligned 0
// CHECK:               nvvm.bar.warp.sync
// CHECK:                 nvgpu.mbarrier.arrive.expect_tx %[[EMPTY]][%{{.+}}], %c0
// CHECK:               blockc_codegen.accumulator_to_fragment
// CHECK:               arith.mulf {{.+}} : vector<32xf32>
// CHECK:               blockc_codegen.fragment_to_accumulator
// CHECK:               nvvm.barrier id = %{{.+}} number_of_threads = %c128_i32
// CHECK:               scf.yield
// CHECK:             scf.for {{.+}} -> (f32, f32, f32, f32, !nvgpu.warpgroup.accumulator<fragmented = vector<64x64xf32>>)
// CHECK:               scf.if
// CHECK:                 nvgpu.mbarrier.try_wait.parity %[[TURN]]
// CHECK-COUNT-8:       nvgpu.warpgroup.mma {{.+}} {transposeB, waitGroup = 8 : i64} :
// CHECK:               scf.if
// CHECK:                 nvvm.bar.warp.sync
// CHECK:                   nvgpu.mbarrier.arrive.expect_tx %[[TURN]][%{{.+}}], %c0
// CHECK:               nvvm.wgmma.wait.group.sync.aligned 0
// CHECK:               nvvm.bar.warp.sync
// CHECK:                 nvgpu.mbarrier.arrive.expect_tx %[[EMPTY]][%{{.+}}], %c0
// CHECK:               scf.yield
// CHECK:             scf.for
// CHECK:               nvgpu.mbarrier.try_wait.parity %[[FULL]]
// CHECK:                 nvgpu.mbarrier.arrive.expect_tx %[[EMPTY]][%{{.+}}], %c0
// CHECK:             blockc_codegen.accumulator_to_fragment
// CHECK:             memref.store {{.+}} : memref<1x?x4x64xbf16>
// CHECK:         } {blockc_codegen.kernel = #blockc_codegen.kernel<warpgroup_attention>}
// CHECK-NOT:     gpu.barrier
// CHECK-NOT:     nvgpu.warpgroup.mma.store
func.func @gqa(%q: memref<1x?x4x64xbf16>, %k: memref<1x?x2x64xbf16>, %v: memref<1x?x2x64xbf16>, %o: memref<1x?x4x64xbf16>) {
  blockc_codegen.warpgroup_attention %q, %k, %v, %o {causal, consumers = 2 : i64, group = 2 : i64, scale = 1.250000e-01 : f64, overlap}
      : memref<1x?x4x64xbf16>, memref<1x?x2x64xbf16>, memref<1x?x2x64xbf16>, memref<1x?x4x64xbf16>
  return
}

// -----

// Head dim 128, not causal: 164864 bytes (Q 32 KiB, ring 64 KiB, P 64 KiB,
// 1 KiB); two Q panels per consumer; O as two accumulators; step 0's 8 S
// wgmmas (depth 8, the last 0); per step 8 S wgmmas (depth 8) and 2 x 8 P V wgmmas (depth 24) per step, S waited for with
// wgmma.wait_group 16; the last step's 16 P V wgmmas with depth 16.
// CHECK-LABEL: func.func @hd128
// CHECK:         dynamic_shared_memory_size %c164864_i32
// CHECK:             nvgpu.mbarrier.arrive.expect_tx %{{.+}}[%{{.+}}], %c16384
// CHECK-COUNT-2:     nvgpu.tma.async.load
// CHECK:             nvgpu.mbarrier.arrive.expect_tx %{{.+}}[%{{.+}}], %c32768
// CHECK-COUNT-4:     nvgpu.tma.async.load
// CHECK:           scf.for {{.+}} -> (f32, f32, f32, f32, !nvgpu.warpgroup.accumulator<fragmented = vector<64x64xf32>>, !nvgpu.warpgroup.accumulator<fragmented = vector<64x64xf32>>)
// CHECK-COUNT-7:     nvgpu.warpgroup.mma %{{[^ ]+}}, %{{[^ ]+}}, %{{[^ ]+}} {waitGroup = 8 : i64} :
// CHECK:             nvgpu.warpgroup.mma %{{[^ ]+}}, %{{[^ ]+}}, %{{[^ ]+}} {waitGroup = 0 : i64} :
// CHECK-NOT:         nvvm.wgmma.wait.group.sync.aligned
// CHECK:           scf.yield
// CHECK:           scf.for {{.+}} -> (f32, f32, f32, f32, !nvgpu.warpgroup.accumulator<fragmented = vector<64x64xf32>>, !nvgpu.warpgroup.accumulator<fragmented = vector<64x64xf32>>)
// CHECK-COUNT-8:     nvgpu.warpgroup.mma %{{[^ ]+}}, %{{[^ ]+}}, %{{[^ ]+}} {waitGroup = 8 : i64} :
// CHECK-COUNT-16:    nvgpu.warpgroup.mma {{.+}} {transposeB, waitGroup = 24 : i64} :
// CHECK:             nvvm.wgmma.wait.group.sync.aligned 16
// CHECK:           scf.yield
// CHECK:           scf.for
// CHECK-COUNT-16:    nvgpu.warpgroup.mma {{.+}} {transposeB, waitGroup = 16 : i64} :
// CHECK:           scf.yield
// CHECK-COUNT-2:   blockc_codegen.accumulator_to_fragment
func.func @hd128(%q: memref<2x?x2x128xbf16>, %k: memref<2x?x1x128xbf16>, %v: memref<2x?x1x128xbf16>, %o: memref<2x?x2x128xf32>) {
  blockc_codegen.warpgroup_attention %q, %k, %v, %o {consumers = 2 : i64, group = 2 : i64, scale = 8.8388347648318447e-02 : f64, overlap}
      : memref<2x?x2x128xbf16>, memref<2x?x1x128xbf16>, memref<2x?x1x128xbf16>, memref<2x?x2x128xf32>
  return
}

// -----

// A 3-stage K/V ring (stages = 3) at head dim 128: 197632 bytes (Q 32
// KiB, ring 3 x 32 KiB, P 64 KiB, 1 KiB); full and empty mbarriers per
// stage (3 each); the producer waits for a stage's release from key tile
// 3 on (j >= 3) and loads tile j into stage j % 3; each consumer's step j
// waits for tile j's stage at parity (j / 3) % 2 and releases tile j - 1's.
// CHECK-LABEL: func.func @stages3
// CHECK:         dynamic_shared_memory_size %c197632_i32
// CHECK:           %[[FULL:.+]] = nvgpu.mbarrier.create -> <memorySpace = #gpu.address_space<workgroup>, num_barriers = 3>
// CHECK:           %[[EMPTY:.+]] = nvgpu.mbarrier.create -> <memorySpace = #gpu.address_space<workgroup>, num_barriers = 3>
// CHECK:               scf.for %[[J:[^ ]+]] =
// CHECK:                 %[[STAGE:.+]] = arith.remui %[[J]], %c3{{.*}} : index
// CHECK:                 arith.cmpi uge, %[[J]], %c3{{.*}} : index
// CHECK:                   nvgpu.mbarrier.try_wait.parity %[[EMPTY]][%[[STAGE]]]
// CHECK:                 nvgpu.mbarrier.arrive.expect_tx %[[FULL]][%[[STAGE]]], %c32768
// CHECK:           } else {
// CHECK:             scf.for
// CHECK:             scf.yield
// CHECK:             scf.for %[[JT:[^ ]+]] = {{.+}} -> (f32, f32, f32, f32, !nvgpu.warpgroup.accumulator<fragmented = vector<64x64xf32>>, !nvgpu.warpgroup.accumulator<fragmented = vector<64x64xf32>>)
// CHECK:               %[[CSTAGE:.+]] = arith.remui %[[JT]], %c3{{.*}} : index
// CHECK:               %[[PREV:.+]] = arith.subi %[[JT]], %c1{{.*}} : index
// CHECK:               %[[PSTAGE:.+]] = arith.remui %[[PREV]], %c3{{.*}} : index
// CHECK:               arith.divui %[[JT]], %c3{{.*}} : index
// CHECK:               nvgpu.mbarrier.try_wait.parity %[[FULL]][%[[CSTAGE]]]
// CHECK:               nvgpu.mbarrier.arrive.expect_tx %[[EMPTY]][%[[PSTAGE]]], %c0
// CHECK:               scf.yield
func.func @stages3(%q: memref<1x?x2x128xbf16>, %k: memref<1x?x1x128xbf16>, %v: memref<1x?x1x128xbf16>, %o: memref<1x?x2x128xf32>) {
  blockc_codegen.warpgroup_attention %q, %k, %v, %o {causal, consumers = 2 : i64, group = 2 : i64, scale = 8.8388347648318447e-02 : f64, stages = 3 : i64, overlap}
      : memref<1x?x2x128xbf16>, memref<1x?x1x128xbf16>, memref<1x?x1x128xbf16>, memref<1x?x2x128xf32>
  return
}

// -----

func.func @hd256(%q: memref<1x?x2x256xbf16>, %k: memref<1x?x1x256xbf16>, %v: memref<1x?x1x256xbf16>, %o: memref<1x?x2x256xf32>) {
  // expected-error @+1 {{'blockc_codegen.warpgroup_attention' op has consumers = 2 at head dim 256 (1, or 2 at head dims 64 and 128: the warp-specialised kernel)}}
  blockc_codegen.warpgroup_attention %q, %k, %v, %o {consumers = 2 : i64, group = 2 : i64, scale = 6.250000e-02 : f64}
      : memref<1x?x2x256xbf16>, memref<1x?x1x256xbf16>, memref<1x?x1x256xbf16>, memref<1x?x2x256xf32>
  return
}

// -----

func.func @three(%q: memref<1x?x2x64xbf16>, %k: memref<1x?x1x64xbf16>, %v: memref<1x?x1x64xbf16>, %o: memref<1x?x2x64xf32>) {
  // expected-error @+1 {{'blockc_codegen.warpgroup_attention' op has consumers = 3 at head dim 64 (1, or 2 at head dims 64 and 128: the warp-specialised kernel)}}
  blockc_codegen.warpgroup_attention %q, %k, %v, %o {consumers = 3 : i64, group = 2 : i64, scale = 1.250000e-01 : f64}
      : memref<1x?x2x64xbf16>, memref<1x?x1x64xbf16>, memref<1x?x1x64xbf16>, memref<1x?x2x64xf32>
  return
}

// -----

func.func @stages4(%q: memref<1x?x2x64xbf16>, %k: memref<1x?x1x64xbf16>, %v: memref<1x?x1x64xbf16>, %o: memref<1x?x2x64xf32>) {
  // expected-error @+1 {{'blockc_codegen.warpgroup_attention' op has stages = 4 with consumers = 2 (2, or 3 with consumers = 2: the warp-specialised kernel's ring)}}
  blockc_codegen.warpgroup_attention %q, %k, %v, %o {consumers = 2 : i64, group = 2 : i64, scale = 1.250000e-01 : f64, stages = 4 : i64}
      : memref<1x?x2x64xbf16>, memref<1x?x1x64xbf16>, memref<1x?x1x64xbf16>, memref<1x?x2x64xf32>
  return
}

// -----

func.func @stages3_one_warpgroup(%q: memref<1x?x2x64xbf16>, %k: memref<1x?x1x64xbf16>, %v: memref<1x?x1x64xbf16>, %o: memref<1x?x2x64xf32>) {
  // expected-error @+1 {{'blockc_codegen.warpgroup_attention' op has stages = 3 with consumers = 1 (2, or 3 with consumers = 2: the warp-specialised kernel's ring)}}
  blockc_codegen.warpgroup_attention %q, %k, %v, %o {group = 2 : i64, scale = 1.250000e-01 : f64, stages = 3 : i64}
      : memref<1x?x2x64xbf16>, memref<1x?x1x64xbf16>, memref<1x?x1x64xbf16>, memref<1x?x2x64xf32>
  return
}

// -----

// overlap needs the warp-specialised kernel.
func.func @overlap_one_consumer(%q: memref<1x?x4x64xbf16>, %k: memref<1x?x2x64xbf16>, %v: memref<1x?x2x64xbf16>, %o: memref<1x?x4x64xbf16>) {
  // expected-error @+1 {{'blockc_codegen.warpgroup_attention' op has overlap with consumers = 1 (the intra-warpgroup overlap needs consumers = 2: the warp-specialised kernel)}}
  blockc_codegen.warpgroup_attention %q, %k, %v, %o {causal, group = 2 : i64, scale = 1.250000e-01 : f64, overlap}
      : memref<1x?x4x64xbf16>, memref<1x?x2x64xbf16>, memref<1x?x2x64xbf16>, memref<1x?x4x64xbf16>
  return
}

// -----

// Without overlap on the op (the attribute's overlap = false): each
// consumer takes one key tile at a time in one loop, in two turns per
// tile: S (4 wgmmas, depth 1), the end of the turn, wgmma.wait_group 0, S
// read, the softmax, O rescaled, P's two parts, the named barrier; then P
// V (8 wgmmas, V N-major, depth 1), the end of the turn, wgmma.wait_group
// 0 and the stage's release. No loops of step 0 or step n.
// CHECK-LABEL: func.func @tiles
// CHECK:           %[[FULL:.+]] = nvgpu.mbarrier.create
// CHECK:           %[[EMPTY:.+]] = nvgpu.mbarrier.create
// CHECK:           %[[QB:.+]] = nvgpu.mbarrier.create
// CHECK:           %[[TURN:.+]] = nvgpu.mbarrier.create
// CHECK:           } else {
// CHECK-NEXT:        nvvm.setmaxregister  increase 240
// CHECK-NOT:         nvgpu.warpgroup.mma %
// CHECK:             scf.for {{.+}} -> (f32, f32, f32, f32, !nvgpu.warpgroup.accumulator<fragmented = vector<64x64xf32>>)
// CHECK:               nvgpu.mbarrier.try_wait.parity %[[FULL]]
// CHECK:                 nvgpu.mbarrier.try_wait.parity %[[TURN]]
// CHECK-COUNT-4:       nvgpu.warpgroup.mma %{{[^ ]+}}, %{{[^ ]+}}, %{{[^ ]+}} : <tensor = memref<64x16xbf16, {{.+}}>>, <tensor = memref<16x64xbf16, {{.+}}>>
// CHECK:                 nvgpu.mbarrier.arrive.expect_tx %[[TURN]][%{{.+}}], %c0
// CHECK:               nvvm.wgmma.wait.group.sync.aligned 0
// CHECK:               blockc_codegen.accumulator_to_fragment
// CHECK:               blockc_codegen.fragment_to_accumulator
// CHECK-COUNT-32:      vector.store {{.+}} : memref<64x64xbf16, #gpu.address_space<workgroup>>, vector<2xbf16>
// CHECK:               nvvm.barrier id =
// CHECK:                 nvgpu.mbarrier.try_wait.parity %[[TURN]]
// CHECK-COUNT-8:       nvgpu.warpgroup.mma {{.+}} {transposeB} :
// CHECK:                 nvgpu.mbarrier.arrive.expect_tx %[[TURN]][%{{.+}}], %c0
// CHECK:               nvvm.wgmma.wait.group.sync.aligned 0
// CHECK:                 nvgpu.mbarrier.arrive.expect_tx %[[EMPTY]][%{{.+}}], %c0
// CHECK:               scf.yield
// CHECK-NOT:         nvgpu.warpgroup.mma %
// CHECK:             blockc_codegen.accumulator_to_fragment
func.func @tiles(%q: memref<1x?x4x64xbf16>, %k: memref<1x?x2x64xbf16>, %v: memref<1x?x2x64xbf16>, %o: memref<1x?x4x64xbf16>) {
  blockc_codegen.warpgroup_attention %q, %k, %v, %o {causal, consumers = 2 : i64, group = 2 : i64, scale = 1.250000e-01 : f64}
      : memref<1x?x4x64xbf16>, memref<1x?x2x64xbf16>, memref<1x?x2x64xbf16>, memref<1x?x4x64xbf16>
  return
}
