// RUN: blockc-opt %s -split-input-file --blockc-gpu-tile-matmul="norm-prologue=true" --canonicalize --cse | FileCheck %s
// RUN: blockc-opt %s -split-input-file --blockc-gpu-tile-matmul="norm-prologue=true" --blockc-gpu-tile-reductions="chain-statistics=true fuse-apply=true" --canonicalize --cse | FileCheck %s --check-prefix=KERNELS
// RUN: blockc-opt %s -split-input-file --blockc-gpu-tile-matmul --canonicalize --cse | FileCheck %s --check-prefix=OFF

// The norm prologue of the run-time choice (docs/GPU.md#decoding): two
// projections with a dynamic M (weight-streaming kernel for M <= 8, tensor
// cores otherwise) read the output of an RMSNorm (one row reduction, the
// sum of squares, and the apply with the bf16 block's two roundings). The
// weight-streaming kernels compute the statistic of their row from x
// (five xor shuffles before the weight loop) and apply the norm to each
// 16-byte vector of x they read; the choice is M <= 8 and the 16-byte paths
// of x and the gain (host checks); the norm runs, with a statistic buffer
// of its own, only on the opposite condition, for the tensor-core kernels.

#x = affine_map<(b, t, k) -> (b, t, k)>
#r = affine_map<(b, t, k) -> (b, t)>
#g = affine_map<(b, t, k) -> (k)>
#a = affine_map<(b, t, n, k) -> (b, t, k)>
#w = affine_map<(b, t, n, k) -> (n, k)>
#o = affine_map<(b, t, n, k) -> (b, t, n)>
#id = affine_map<(b, t, n) -> (b, t, n)>

// After canonicalisation the branch of the norm (on the opposite
// condition) and the two choices are one scf.if.
// CHECK-LABEL: func.func @prologue
// CHECK:         %[[B:.+]] = memref.dim %arg0, %c0
// CHECK:         memref.extract_aligned_pointer_as_index %arg0
// CHECK:         memref.extract_aligned_pointer_as_index %arg1
// CHECK:         %[[SMALL:.+]] = arith.cmpi ule, %[[B]], %c8
// CHECK-NEXT:    %[[BOTH:.+]] = arith.andi %[[SMALL]],
// CHECK-NEXT:    %[[COND:.+]] = arith.andi %[[BOTH]],
// CHECK-NEXT:    scf.if %[[COND]] {
// CHECK-NEXT:      gpu.launch
// Per row: the statistic (16-byte loads of x, then the butterfly), then
// the weight step (K = 64: one guarded step) with the norm applied to each
// vector of x, then the sums' butterfly.
// CHECK:             scf.for
// CHECK:               scf.for
// CHECK-NEXT:            vector.load %arg0
// CHECK-COUNT-5:       gpu.shuffle xor
// CHECK:               vector.load %arg2
// CHECK:               vector.load %arg0
// CHECK:               vector.load %arg1
// CHECK:               math.rsqrt
// CHECK:               vector.from_elements
// CHECK-COUNT-5:       gpu.shuffle xor
// CHECK:           } {blockc_codegen.kernel = #blockc_codegen.kernel<gemv>}
// CHECK-NEXT:      gpu.launch
// CHECK:             math.rsqrt
// CHECK:           } {blockc_codegen.kernel = #blockc_codegen.kernel<gemv>}
// CHECK-NEXT:    } else {
// CHECK-NEXT:      %[[S:.+]] = memref.alloc(%[[B]]) : memref<?x1xf32>
// CHECK-NEXT:      linalg.fill ins(%{{.+}} : f32) outs(%[[S]] : memref<?x1xf32>)
// CHECK-NEXT:      linalg.generic {{.*}} ins(%arg0 : memref<?x1x64xbf16>) outs(%[[S]] : memref<?x1xf32>)
// CHECK:           linalg.generic {{.*}} ins(%arg0, %[[S]], %arg1 :
// CHECK:           memref.dealloc %[[S]]
// CHECK:           gpu.launch
// CHECK:             nvgpu.mma.sync
// CHECK:           } {blockc_codegen.kernel = #blockc_codegen.kernel<tensor_core_matmul>}
// CHECK:           gpu.launch
// CHECK:             nvgpu.mma.sync
// CHECK:           } {blockc_codegen.kernel = #blockc_codegen.kernel<tensor_core_matmul>}
// CHECK-NEXT:    }
// CHECK-NOT:     linalg.generic
// CHECK:         return

// With the reductions' pass after it, the norm in the branch is one
// kernel (statistic and apply; the statistic's buffer, which nothing
// reads, goes).
// KERNELS-LABEL: func.func @prologue
// KERNELS:         } else {
// KERNELS-NOT:       linalg.generic
// KERNELS:           gpu.launch
// KERNELS:           } {blockc_codegen.kernel = #blockc_codegen.kernel<row_reduction>}
// KERNELS:           gpu.launch
// KERNELS:             nvgpu.mma.sync

// Off (the pass's default): the norm stays where it is, and the choice is
// M <= 8 alone.
// OFF-LABEL: func.func @prologue
// OFF:         linalg.generic {{.*}} ins(%arg0 : memref<?x1x64xbf16>)
// OFF:         linalg.generic {{.*}} ins(%arg0, %{{.+}}, %arg1 :
// OFF:         %[[SMALL:.+]] = arith.cmpi ule
// OFF-NEXT:    scf.if %[[SMALL]] {
// OFF-NOT:       math.rsqrt
// OFF:         } else {
func.func @prologue(%x: memref<?x1x64xbf16>, %gain: memref<64xbf16>,
                    %wq: memref<32x64xbf16>, %wk: memref<16x64xbf16>,
                    %q: memref<?x1x32xbf16>, %k: memref<?x1x16xbf16>)
    attributes {blockc_codegen.gpu_map = #blockc_codegen.gpu_map<threads_x = 32, threads_y = 4>} {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %inv = arith.constant 0.015625 : f32
  %eps = arith.constant 1.0e-5 : f32
  %b = memref.dim %x, %c0 : memref<?x1x64xbf16>
  %s = memref.alloc(%b) : memref<?x1xf32>
  linalg.fill ins(%zero : f32) outs(%s : memref<?x1xf32>)
  linalg.generic {indexing_maps = [#x, #r],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x : memref<?x1x64xbf16>) outs(%s : memref<?x1xf32>) {
  ^bb0(%in: bf16, %out: f32):
    %e = arith.extf %in : bf16 to f32
    %sq = arith.mulf %e, %e : f32
    %acc = arith.addf %out, %sq : f32
    linalg.yield %acc : f32
  }
  %n = memref.alloc(%b) : memref<?x1x64xbf16>
  linalg.generic {indexing_maps = [#x, #r, #g, #x],
                  iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x, %s, %gain : memref<?x1x64xbf16>, memref<?x1xf32>, memref<64xbf16>)
      outs(%n : memref<?x1x64xbf16>) {
  ^bb0(%in: bf16, %ss: f32, %gi: bf16, %out: bf16):
    %e = arith.extf %in : bf16 to f32
    %mean = arith.mulf %ss, %inv : f32
    %v = arith.addf %mean, %eps : f32
    %rs = math.rsqrt %v : f32
    %xn = arith.mulf %e, %rs : f32
    %t = arith.truncf %xn : f32 to bf16
    %te = arith.extf %t : bf16 to f32
    %ge = arith.extf %gi : bf16 to f32
    %p = arith.mulf %te, %ge : f32
    %o = arith.truncf %p : f32 to bf16
    linalg.yield %o : bf16
  }
  %accq = memref.alloc(%b) : memref<?x1x32xf32>
  linalg.fill ins(%zero : f32) outs(%accq : memref<?x1x32xf32>)
  linalg.generic {indexing_maps = [#a, #w, #o],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%n, %wq : memref<?x1x64xbf16>, memref<32x64xbf16>)
      outs(%accq : memref<?x1x32xf32>)
      attrs = {blockc_codegen.gpu_gemv = #blockc_codegen.gpu_gemv<warps = 2, columns = 1, rows = 1, unroll = 2, max_m = 8>, blockc_codegen.gpu_mma_tiles = #blockc_codegen.gpu_mma_tiles<tile_m = 32, tile_n = 64, tile_k = 16, warps_m = 1, warps_n = 2, stages = 3>} {
  ^bb0(%in: bf16, %wn: bf16, %out: f32):
    %e0 = arith.extf %in : bf16 to f32
    %e1 = arith.extf %wn : bf16 to f32
    %pr = arith.mulf %e0, %e1 : f32
    %sum = arith.addf %out, %pr : f32
    linalg.yield %sum : f32
  }
  linalg.generic {indexing_maps = [#id, #id],
                  iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%accq : memref<?x1x32xf32>) outs(%q : memref<?x1x32xbf16>) {
  ^bb0(%in: f32, %out: bf16):
    %v = arith.truncf %in : f32 to bf16
    linalg.yield %v : bf16
  }
  %acck = memref.alloc(%b) : memref<?x1x16xf32>
  linalg.fill ins(%zero : f32) outs(%acck : memref<?x1x16xf32>)
  linalg.generic {indexing_maps = [#a, #w, #o],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%n, %wk : memref<?x1x64xbf16>, memref<16x64xbf16>)
      outs(%acck : memref<?x1x16xf32>)
      attrs = {blockc_codegen.gpu_gemv = #blockc_codegen.gpu_gemv<warps = 2, columns = 1, rows = 1, unroll = 2, max_m = 8>, blockc_codegen.gpu_mma_tiles = #blockc_codegen.gpu_mma_tiles<tile_m = 32, tile_n = 64, tile_k = 16, warps_m = 1, warps_n = 2, stages = 3>} {
  ^bb0(%in: bf16, %wn: bf16, %out: f32):
    %e0 = arith.extf %in : bf16 to f32
    %e1 = arith.extf %wn : bf16 to f32
    %pr = arith.mulf %e0, %e1 : f32
    %sum = arith.addf %out, %pr : f32
    linalg.yield %sum : f32
  }
  linalg.generic {indexing_maps = [#id, #id],
                  iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%acck : memref<?x1x16xf32>) outs(%k : memref<?x1x16xbf16>) {
  ^bb0(%in: f32, %out: bf16):
    %v = arith.truncf %in : f32 to bf16
    linalg.yield %v : bf16
  }
  memref.dealloc %s : memref<?x1xf32>
  memref.dealloc %n : memref<?x1x64xbf16>
  memref.dealloc %accq : memref<?x1x32xf32>
  memref.dealloc %acck : memref<?x1x16xf32>
  return
}

// -----

#x = affine_map<(b, t, k) -> (b, t, k)>
#r = affine_map<(b, t, k) -> (b, t)>
#g = affine_map<(b, t, k) -> (k)>
#a = affine_map<(b, t, n, k) -> (b, t, k)>
#w = affine_map<(b, t, n, k) -> (n, k)>
#o = affine_map<(b, t, n, k) -> (b, t, n)>

// The norm stays where it is: its output is also copied out (another
// reader), or x is written between the norm and the projection (the
// kernel would read the new x).
// CHECK-LABEL: func.func @other_reader
// CHECK:         linalg.generic {{.*}} ins(%arg0 : memref<?x1x64xbf16>)
// CHECK:         linalg.generic {{.*}} ins(%arg0, %{{.+}}, %arg1 :
// CHECK:         %[[SMALL:.+]] = arith.cmpi ule
// CHECK-NEXT:    scf.if %[[SMALL]] {
// CHECK-NOT:       math.rsqrt
// CHECK:         } else {
// CHECK:         memref.copy
func.func @other_reader(%x: memref<?x1x64xbf16>, %gain: memref<64xbf16>,
                        %wq: memref<32x64xbf16>, %q: memref<?x1x32xf32>,
                        %copy: memref<?x1x64xbf16>)
    attributes {blockc_codegen.gpu_map = #blockc_codegen.gpu_map<threads_x = 32, threads_y = 4>} {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %b = memref.dim %x, %c0 : memref<?x1x64xbf16>
  %s = memref.alloc(%b) : memref<?x1xf32>
  linalg.fill ins(%zero : f32) outs(%s : memref<?x1xf32>)
  linalg.generic {indexing_maps = [#x, #r],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x : memref<?x1x64xbf16>) outs(%s : memref<?x1xf32>) {
  ^bb0(%in: bf16, %out: f32):
    %e = arith.extf %in : bf16 to f32
    %sq = arith.mulf %e, %e : f32
    %acc = arith.addf %out, %sq : f32
    linalg.yield %acc : f32
  }
  %n = memref.alloc(%b) : memref<?x1x64xbf16>
  linalg.generic {indexing_maps = [#x, #r, #g, #x],
                  iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x, %s, %gain : memref<?x1x64xbf16>, memref<?x1xf32>, memref<64xbf16>)
      outs(%n : memref<?x1x64xbf16>) {
  ^bb0(%in: bf16, %ss: f32, %gi: bf16, %out: bf16):
    %e = arith.extf %in : bf16 to f32
    %rs = math.rsqrt %ss : f32
    %xn = arith.mulf %e, %rs : f32
    %ge = arith.extf %gi : bf16 to f32
    %p = arith.mulf %xn, %ge : f32
    %o = arith.truncf %p : f32 to bf16
    linalg.yield %o : bf16
  }
  linalg.fill ins(%zero : f32) outs(%q : memref<?x1x32xf32>)
  linalg.generic {indexing_maps = [#a, #w, #o],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%n, %wq : memref<?x1x64xbf16>, memref<32x64xbf16>)
      outs(%q : memref<?x1x32xf32>)
      attrs = {blockc_codegen.gpu_gemv = #blockc_codegen.gpu_gemv<warps = 2, columns = 1, rows = 1, unroll = 2, max_m = 8>, blockc_codegen.gpu_mma_tiles = #blockc_codegen.gpu_mma_tiles<tile_m = 32, tile_n = 64, tile_k = 16, warps_m = 1, warps_n = 2, stages = 3>} {
  ^bb0(%in: bf16, %wn: bf16, %out: f32):
    %e0 = arith.extf %in : bf16 to f32
    %e1 = arith.extf %wn : bf16 to f32
    %pr = arith.mulf %e0, %e1 : f32
    %sum = arith.addf %out, %pr : f32
    linalg.yield %sum : f32
  }
  memref.copy %n, %copy : memref<?x1x64xbf16> to memref<?x1x64xbf16>
  memref.dealloc %s : memref<?x1xf32>
  memref.dealloc %n : memref<?x1x64xbf16>
  return
}

// CHECK-LABEL: func.func @input_written
// CHECK:         linalg.generic {{.*}} ins(%arg0 : memref<?x1x64xbf16>)
// CHECK:         linalg.generic {{.*}} ins(%arg0, %{{.+}}, %arg1 :
// CHECK:         linalg.fill {{.*}} outs(%arg0
// CHECK:         %[[SMALL:.+]] = arith.cmpi ule
// CHECK-NEXT:    scf.if %[[SMALL]] {
// CHECK-NOT:       math.rsqrt
// CHECK:         } else {
func.func @input_written(%x: memref<?x1x64xbf16>, %gain: memref<64xbf16>,
                         %wq: memref<32x64xbf16>, %q: memref<?x1x32xf32>)
    attributes {blockc_codegen.gpu_map = #blockc_codegen.gpu_map<threads_x = 32, threads_y = 4>} {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %zh = arith.constant 0.0 : bf16
  %b = memref.dim %x, %c0 : memref<?x1x64xbf16>
  %s = memref.alloc(%b) : memref<?x1xf32>
  linalg.fill ins(%zero : f32) outs(%s : memref<?x1xf32>)
  linalg.generic {indexing_maps = [#x, #r],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x : memref<?x1x64xbf16>) outs(%s : memref<?x1xf32>) {
  ^bb0(%in: bf16, %out: f32):
    %e = arith.extf %in : bf16 to f32
    %sq = arith.mulf %e, %e : f32
    %acc = arith.addf %out, %sq : f32
    linalg.yield %acc : f32
  }
  %n = memref.alloc(%b) : memref<?x1x64xbf16>
  linalg.generic {indexing_maps = [#x, #r, #g, #x],
                  iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x, %s, %gain : memref<?x1x64xbf16>, memref<?x1xf32>, memref<64xbf16>)
      outs(%n : memref<?x1x64xbf16>) {
  ^bb0(%in: bf16, %ss: f32, %gi: bf16, %out: bf16):
    %e = arith.extf %in : bf16 to f32
    %rs = math.rsqrt %ss : f32
    %xn = arith.mulf %e, %rs : f32
    %ge = arith.extf %gi : bf16 to f32
    %p = arith.mulf %xn, %ge : f32
    %o = arith.truncf %p : f32 to bf16
    linalg.yield %o : bf16
  }
  linalg.fill ins(%zh : bf16) outs(%x : memref<?x1x64xbf16>)
  linalg.fill ins(%zero : f32) outs(%q : memref<?x1x32xf32>)
  linalg.generic {indexing_maps = [#a, #w, #o],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%n, %wq : memref<?x1x64xbf16>, memref<32x64xbf16>)
      outs(%q : memref<?x1x32xf32>)
      attrs = {blockc_codegen.gpu_gemv = #blockc_codegen.gpu_gemv<warps = 2, columns = 1, rows = 1, unroll = 2, max_m = 8>, blockc_codegen.gpu_mma_tiles = #blockc_codegen.gpu_mma_tiles<tile_m = 32, tile_n = 64, tile_k = 16, warps_m = 1, warps_n = 2, stages = 3>} {
  ^bb0(%in: bf16, %wn: bf16, %out: f32):
    %e0 = arith.extf %in : bf16 to f32
    %e1 = arith.extf %wn : bf16 to f32
    %pr = arith.mulf %e0, %e1 : f32
    %sum = arith.addf %out, %pr : f32
    linalg.yield %sum : f32
  }
  memref.dealloc %s : memref<?x1xf32>
  memref.dealloc %n : memref<?x1x64xbf16>
  return
}
