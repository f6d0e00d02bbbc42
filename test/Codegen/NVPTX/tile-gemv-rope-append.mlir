// RUN: blockc-opt %s --blockc-gpu-tile-gemv --canonicalize --cse | FileCheck %s
// RUN: blockc-opt %s --blockc-gpu-tile-gemv="fuse-epilogues=false" | FileCheck %s --check-prefix=NOFUSE
// RUN: blockc-opt %s --blockc-gpu-select-tiles=chip=sm_80 --blockc-gpu-tile-gemv --blockc-gpu-tile-matmul --canonicalize --cse \
// RUN:   | FileCheck %s --check-prefix=DISPATCH

// The weight-streaming kernel's RoPE and KV-cache append
// (docs/GPU.md#decoding) on the q, k and v projections of a decode entry
// (head dim 32, 2 heads, K = 256), with the attributes written by hand:
// * q (rope_head_dim = 32, columns = 2): warp w of block x takes pair
//   q = 4x + w, column c0 = (q / 16) * 32 + q % 16 and c1 = c0 + 16 (grid
//   64 / 8 = 8 blocks); lane 0 rounds both sums and evaluates the RoPE's
//   body for both (its table at d and d + 16, cos and sin of the angle at
//   the row's position t + %pos), storing them to the RoPE's output at
//   [b, t, head, d]; the RoPE generic is gone, its output's copy stays;
// * k (also kv_append): the two rotated values go straight into the K
//   cache at [b, %pos + t, head, d], guarded by the cache's length; the
//   RoPE and the copy into the cache are gone;
// * v (kv_append, columns = 1): the rounded value goes into the V cache at
//   [b, %pos + t, n / 32, n % 32]; the copy is gone.

// CHECK-LABEL: func.func @decode_kv
// CHECK-NOT:     linalg.generic
// CHECK:         %[[QR:.+]] = memref.alloc(%{{.+}}, %{{.+}}) : memref<?x?x2x32xbf16>
// CHECK:         gpu.launch blocks({{.*}}) in ({{.*}} = %c8, {{.*}} = %c1, {{.*}} = %c1) threads(%[[TID:[^,]+]], {{.*}}) in ({{.*}} = %c128,
// CHECK:           %[[LANE:.+]] = arith.remui %[[TID]], %c32
// CHECK:           %[[Q:.+]] = arith.divui %{{.+}}, %c2 : index
// CHECK:           %[[H:.+]] = arith.divui %[[Q]], %c16 : index
// CHECK:           %[[HD:.+]] = arith.muli %[[H]], %c32 : index
// CHECK:           %[[J:.+]] = arith.remui %[[Q]], %c16 : index
// CHECK:           %[[C0:.+]] = arith.addi %[[HD]], %[[J]] : index
// CHECK:           %[[VALID:.+]] = arith.cmpi ult, %[[C0]], %c64 : index
// CHECK:           %[[C1:.+]] = arith.addi %[[C0]], %c16 : index
// CHECK:           %[[N0:.+]] = arith.minui %[[C0]], %c63 : index
// CHECK:           %[[N1:.+]] = arith.minui %[[C1]], %c63 : index
// CHECK:           scf.for
// CHECK:             vector.load %arg1[%[[N0]], %{{.+}}]
// CHECK:             vector.load %arg1[%[[N1]], %{{.+}}]
// CHECK-COUNT-10:    gpu.shuffle xor
// CHECK:             %[[LANE0:.+]] = arith.cmpi eq, %[[LANE]], %c0
// CHECK:             %[[W:.+]] = arith.andi %[[LANE0]], %[[VALID]]
// CHECK:             scf.if %[[W]] {
// CHECK:               %[[X0:.+]] = arith.truncf %{{.+}} : f32 to bf16
// CHECK:               %[[X1:.+]] = arith.truncf %{{.+}} : f32 to bf16
// CHECK:               %[[HEAD:.+]] = arith.divui %[[N0]], %c32
// CHECK:               %[[D0:.+]] = arith.remui %[[N0]], %c32
// CHECK:               %[[D1:.+]] = arith.addi %[[D0]], %c16
// CHECK:               memref.load %arg4[%[[D0]]] : memref<32xf32>
// CHECK:               arith.addi %{{.+}}, %arg5 : index
// CHECK:               math.cos
// CHECK:               math.sin
// CHECK:               %[[E0:.+]] = arith.extf %[[X0]] : bf16 to f32
// CHECK:               %[[E1:.+]] = arith.extf %[[X1]] : bf16 to f32
// CHECK:               %[[Y0:.+]] = arith.truncf %{{.+}} : f32 to bf16
// CHECK:               memref.load %arg4[%[[D1]]] : memref<32xf32>
// CHECK:               %[[Y1:.+]] = arith.truncf %{{.+}} : f32 to bf16
// CHECK:               memref.store %[[Y0]], %[[QR]][%{{.+}}, %{{.+}}, %[[HEAD]], %[[D0]]] : memref<?x?x2x32xbf16>
// CHECK:               memref.store %[[Y1]], %[[QR]][%{{.+}}, %{{.+}}, %[[HEAD]], %[[D1]]] : memref<?x?x2x32xbf16>
// CHECK:         } {blockc_codegen.kernel = #blockc_codegen.kernel<gemv>}
// CHECK:         memref.copy %[[QR]], %arg8
// CHECK:         gpu.launch blocks({{.*}}) in ({{.*}} = %c8,
// CHECK:               %[[T:.+]] = arith.addi %{{.+}}, %arg5 : index
// CHECK:               math.cos
// CHECK:               %[[LEN:.+]] = memref.dim %arg6, %c1
// CHECK:               %[[IN:.+]] = arith.cmpi ult, %[[T]], %[[LEN]]
// CHECK:               scf.if %[[IN]] {
// CHECK:                 memref.store %{{.+}}, %arg6[%{{.+}}, %[[T]], %{{.+}}, %{{.+}}] : memref<?x?x2x32xbf16, strided<[?, 32, ?, 1], offset: ?>>
// CHECK:               scf.if %[[IN]] {
// CHECK:                 memref.store %{{.+}}, %arg6[%{{.+}}, %[[T]], %{{.+}}, %{{.+}}] : memref<?x?x2x32xbf16, strided<[?, 32, ?, 1], offset: ?>>
// CHECK:         } {blockc_codegen.kernel = #blockc_codegen.kernel<gemv>}
// CHECK-NOT:     memref.copy
// CHECK:         gpu.launch blocks({{.*}}) in ({{.*}} = %c16,
// CHECK-NOT:       math.cos
// CHECK:             scf.if
// CHECK:               %[[VH:.+]] = arith.divui %[[VN:.+]], %c32
// CHECK:               %[[VD:.+]] = arith.remui %[[VN]], %c32
// CHECK:               %[[VT:.+]] = arith.addi %arg5, %{{.+}} : index
// CHECK:               memref.dim %arg7, %c1
// CHECK:               scf.if
// CHECK:                 memref.store %{{.+}}, %arg7[%{{.+}}, %[[VT]], %[[VH]], %[[VD]]]
// CHECK:         } {blockc_codegen.kernel = #blockc_codegen.kernel<gemv>}
// CHECK-NOT:     memref.copy
// CHECK:         return

// Without epilogue fusion the attributes do nothing: each kernel writes
// its f32 result, the roundings, RoPEs and copies stay.
// NOFUSE-LABEL: func.func @decode_kv
// NOFUSE-COUNT-2: linalg.generic
// NOFUSE:         memref.copy %{{.+}}, %arg8
// NOFUSE-COUNT-2: linalg.generic
// NOFUSE:         memref.copy %{{.+}}, %subview
// NOFUSE:         linalg.generic
// NOFUSE:         memref.copy %{{.+}}, %subview

// With the tensor-core tiles (the heuristic's; a dynamic M): scf.if M <= 16
// chooses the weight-streaming kernel (RoPE and append as above) or the
// mma.sync kernel (RoPE in its epilogue, into the RoPE's output); the k and
// v copies into the caches run only in the latter case.
// DISPATCH-LABEL: func.func @decode_kv
// DISPATCH:         %[[SMALL:.+]] = arith.cmpi ule, %{{.+}}, %c16 : index
// DISPATCH:         scf.if %[[SMALL]] {
// DISPATCH:           kernel<gemv>
// DISPATCH:         } else {
// DISPATCH:           kernel<tensor_core_matmul>
// DISPATCH:         memref.copy %{{.+}}, %arg8
// DISPATCH:         scf.if %[[SMALL]] {
// DISPATCH:           memref.store %{{.+}}, %arg6
// DISPATCH:           kernel<gemv>
// DISPATCH:         } else {
// DISPATCH:           kernel<tensor_core_matmul>
// DISPATCH:         scf.if %[[SMALL]] {
// DISPATCH-NEXT:    } else {
// DISPATCH-NEXT:      memref.copy %{{.+}}, %{{.+}} : memref<?x?x2x32xbf16> to memref<?x?x2x32xbf16, strided<[?, 32, ?, 1], offset: ?>>
// DISPATCH-NEXT:    }
// DISPATCH:         scf.if %[[SMALL]] {
// DISPATCH:           memref.store %{{.+}}, %arg7
// DISPATCH:           kernel<gemv>
// DISPATCH:         } else {
// DISPATCH:           kernel<tensor_core_matmul>
// DISPATCH:         scf.if %[[SMALL]] {
// DISPATCH-NEXT:    } else {
// DISPATCH-NEXT:      memref.copy %{{.+}}, %{{.+}} : memref<?x?x2x32xbf16> to memref<?x?x2x32xbf16, strided<[?, 32, ?, 1], offset: ?>>
// DISPATCH-NEXT:    }
// DISPATCH:         return

#a = affine_map<(b, t, n, k) -> (b, t, k)>
#w = affine_map<(b, t, n, k) -> (n, k)>
#o = affine_map<(b, t, n, k) -> (b, t, n)>
#id3 = affine_map<(b, t, n) -> (b, t, n)>
#id4 = affine_map<(b, t, h, d) -> (b, t, h, d)>
#rot = affine_map<(b, t, h, d) -> (b, t, h, (d + 16) mod 32)>
#tab = affine_map<(b, t, h, d) -> (d)>
func.func @decode_kv(%x: memref<?x?x256xbf16>, %wq: memref<64x256xbf16>,
                     %wk: memref<64x256xbf16>, %wv: memref<64x256xbf16>,
                     %theta: memref<32xf32>, %pos: index,
                     %kc: memref<?x?x2x32xbf16, strided<[?, 32, ?, 1], offset: ?>>,
                     %vc: memref<?x?x2x32xbf16, strided<[?, 32, ?, 1], offset: ?>>,
                     %qout: memref<?x?x2x32xbf16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %b = memref.dim %x, %c0 : memref<?x?x256xbf16>
  %t = memref.dim %x, %c1 : memref<?x?x256xbf16>
  // q: projection, rounding, RoPE (its output copied to a plain argument).
  %qacc = memref.alloc(%b, %t) : memref<?x?x64xf32>
  linalg.fill ins(%zero : f32) outs(%qacc : memref<?x?x64xf32>)
  linalg.generic {indexing_maps = [#a, #w, #o], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %wq : memref<?x?x256xbf16>, memref<64x256xbf16>) outs(%qacc : memref<?x?x64xf32>)
      attrs = {blockc_codegen.gpu_gemv = #blockc_codegen.gpu_gemv<warps = 4, columns = 2, rows = 1, unroll = 2, max_m = 16, rope_head_dim = 32>} {
  ^bb0(%in: bf16, %wt: bf16, %acc: f32):
    %xf = arith.extf %in : bf16 to f32
    %wf = arith.extf %wt : bf16 to f32
    %p = arith.mulf %xf, %wf : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  %q = memref.alloc(%b, %t) : memref<?x?x64xbf16>
  linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%qacc : memref<?x?x64xf32>) outs(%q : memref<?x?x64xbf16>) {
  ^bb0(%in: f32, %out: bf16):
    %r = arith.truncf %in : f32 to bf16
    linalg.yield %r : bf16
  }
  %qv = memref.expand_shape %q [[0], [1], [2, 3]] output_shape [%b, %t, 2, 32] : memref<?x?x64xbf16> into memref<?x?x2x32xbf16>
  %qr = memref.alloc(%b, %t) : memref<?x?x2x32xbf16>
  linalg.generic {indexing_maps = [#id4, #rot, #tab, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%qv, %qv, %theta : memref<?x?x2x32xbf16>, memref<?x?x2x32xbf16>, memref<32xf32>) outs(%qr : memref<?x?x2x32xbf16>) {
  ^bb0(%in: bf16, %pt: bf16, %th: f32, %out: bf16):
    %c16 = arith.constant 16 : index
    %tt = linalg.index 1 : index
    %d = linalg.index 3 : index
    %tp = arith.addi %tt, %pos : index
    %ti = arith.index_cast %tp : index to i64
    %tf = arith.sitofp %ti : i64 to f32
    %ang = arith.mulf %tf, %th : f32
    %co = math.cos %ang : f32
    %si = math.sin %ang : f32
    %lo = arith.cmpi ult, %d, %c16 : index
    %ns = arith.negf %si : f32
    %ss = arith.select %lo, %ns, %si : f32
    %xf = arith.extf %in : bf16 to f32
    %pf = arith.extf %pt : bf16 to f32
    %u = arith.mulf %xf, %co : f32
    %v = arith.mulf %pf, %ss : f32
    %y = arith.addf %u, %v : f32
    %yb = arith.truncf %y : f32 to bf16
    linalg.yield %yb : bf16
  }
  memref.copy %qr, %qout : memref<?x?x2x32xbf16> to memref<?x?x2x32xbf16>
  // k: the same, its RoPE's output copied into the cache at %pos.
  %kacc = memref.alloc(%b, %t) : memref<?x?x64xf32>
  linalg.fill ins(%zero : f32) outs(%kacc : memref<?x?x64xf32>)
  linalg.generic {indexing_maps = [#a, #w, #o], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %wk : memref<?x?x256xbf16>, memref<64x256xbf16>) outs(%kacc : memref<?x?x64xf32>)
      attrs = {blockc_codegen.gpu_gemv = #blockc_codegen.gpu_gemv<warps = 4, columns = 2, rows = 1, unroll = 2, max_m = 16, rope_head_dim = 32, kv_append = true>} {
  ^bb0(%in: bf16, %wt: bf16, %acc: f32):
    %xf = arith.extf %in : bf16 to f32
    %wf = arith.extf %wt : bf16 to f32
    %p = arith.mulf %xf, %wf : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  %k = memref.alloc(%b, %t) : memref<?x?x64xbf16>
  linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%kacc : memref<?x?x64xf32>) outs(%k : memref<?x?x64xbf16>) {
  ^bb0(%in: f32, %out: bf16):
    %r = arith.truncf %in : f32 to bf16
    linalg.yield %r : bf16
  }
  %kv = memref.expand_shape %k [[0], [1], [2, 3]] output_shape [%b, %t, 2, 32] : memref<?x?x64xbf16> into memref<?x?x2x32xbf16>
  %kr = memref.alloc(%b, %t) : memref<?x?x2x32xbf16>
  linalg.generic {indexing_maps = [#id4, #rot, #tab, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%kv, %kv, %theta : memref<?x?x2x32xbf16>, memref<?x?x2x32xbf16>, memref<32xf32>) outs(%kr : memref<?x?x2x32xbf16>) {
  ^bb0(%in: bf16, %pt: bf16, %th: f32, %out: bf16):
    %c16 = arith.constant 16 : index
    %tt = linalg.index 1 : index
    %d = linalg.index 3 : index
    %tp = arith.addi %tt, %pos : index
    %ti = arith.index_cast %tp : index to i64
    %tf = arith.sitofp %ti : i64 to f32
    %ang = arith.mulf %tf, %th : f32
    %co = math.cos %ang : f32
    %si = math.sin %ang : f32
    %lo = arith.cmpi ult, %d, %c16 : index
    %ns = arith.negf %si : f32
    %ss = arith.select %lo, %ns, %si : f32
    %xf = arith.extf %in : bf16 to f32
    %pf = arith.extf %pt : bf16 to f32
    %u = arith.mulf %xf, %co : f32
    %v = arith.mulf %pf, %ss : f32
    %y = arith.addf %u, %v : f32
    %yb = arith.truncf %y : f32 to bf16
    linalg.yield %yb : bf16
  }
  %ks = memref.subview %kc[0, %pos, 0, 0] [%b, %t, 2, 32] [1, 1, 1, 1] : memref<?x?x2x32xbf16, strided<[?, 32, ?, 1], offset: ?>> to memref<?x?x2x32xbf16, strided<[?, 32, ?, 1], offset: ?>>
  memref.copy %kr, %ks : memref<?x?x2x32xbf16> to memref<?x?x2x32xbf16, strided<[?, 32, ?, 1], offset: ?>>
  // v: projection, rounding, its view copied into the cache at %pos.
  %vacc = memref.alloc(%b, %t) : memref<?x?x64xf32>
  linalg.fill ins(%zero : f32) outs(%vacc : memref<?x?x64xf32>)
  linalg.generic {indexing_maps = [#a, #w, #o], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %wv : memref<?x?x256xbf16>, memref<64x256xbf16>) outs(%vacc : memref<?x?x64xf32>)
      attrs = {blockc_codegen.gpu_gemv = #blockc_codegen.gpu_gemv<warps = 4, columns = 1, rows = 1, unroll = 2, max_m = 16, kv_append = true>} {
  ^bb0(%in: bf16, %wt: bf16, %acc: f32):
    %xf = arith.extf %in : bf16 to f32
    %wf = arith.extf %wt : bf16 to f32
    %p = arith.mulf %xf, %wf : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  %v = memref.alloc(%b, %t) : memref<?x?x64xbf16>
  linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%vacc : memref<?x?x64xf32>) outs(%v : memref<?x?x64xbf16>) {
  ^bb0(%in: f32, %out: bf16):
    %r = arith.truncf %in : f32 to bf16
    linalg.yield %r : bf16
  }
  %vv = memref.expand_shape %v [[0], [1], [2, 3]] output_shape [%b, %t, 2, 32] : memref<?x?x64xbf16> into memref<?x?x2x32xbf16>
  %vs = memref.subview %vc[0, %pos, 0, 0] [%b, %t, 2, 32] [1, 1, 1, 1] : memref<?x?x2x32xbf16, strided<[?, 32, ?, 1], offset: ?>> to memref<?x?x2x32xbf16, strided<[?, 32, ?, 1], offset: ?>>
  memref.copy %vv, %vs : memref<?x?x2x32xbf16> to memref<?x?x2x32xbf16, strided<[?, 32, ?, 1], offset: ?>>
  return
}
