// RUN: blockc-opt %s -split-input-file --blockc-gpu-tile-matmul --canonicalize --cse | FileCheck %s
// RUN: blockc-opt %s -split-input-file --blockc-gpu-tile-matmul="fuse-epilogues=false" --canonicalize --cse | FileCheck %s --check-prefix=NOFUSE

// The epilogues of the tensor-core kernels (docs/GPU.md): the kernel
// evaluates where its output starts (a zero fill, a copy of one, a bias
// broadcast) instead of reading a buffer a fill kernel wrote, computes its
// elementwise consumer per element and writes the consumer's output; gate
// and up of one input run as one kernel whose epilogue computes the
// activation. Small hand-set tiles: 32 x 64 tiles on 1 x 2 warps, k steps
// of 32 in 3 stages.

#a = affine_map<(b, t, n, k) -> (b, t, k)>
#w = affine_map<(b, t, n, k) -> (n, k)>
#o = affine_map<(b, t, n, k) -> (b, t, n)>
#id = affine_map<(b, t, n) -> (b, t, n)>
#bias = affine_map<(b, t, n) -> (n)>

// The q projection of a bf16 block: zero init (a copy of a zero-filled
// buffer), rounded to bf16 by its consumer. One kernel stores the rounded
// sum into %y; the f32 buffer, its copy and the fill are gone.
// CHECK-LABEL: func.func @round_to_bf16
// CHECK-NOT:     memref.alloc
// CHECK-NOT:     linalg.fill
// CHECK-NOT:     memref.copy
// CHECK:         gpu.launch
// CHECK:           nvgpu.mma.sync
// CHECK:           scf.if
// CHECK:             scf.if
// CHECK-NEXT:          %[[S:.+]] = vector.extract %{{.+}}[0, 0] : f32 from vector<2x2xf32>
// CHECK-NEXT:          %[[V:.+]] = arith.addf %[[S]], %cst
// CHECK-NEXT:          %[[R:.+]] = arith.truncf %[[V]] : f32 to bf16
// CHECK-NEXT:          memref.store %[[R]], %arg2[
// CHECK:         } {blockc_codegen.kernel = #blockc_codegen.kernel<tensor_core_matmul>}
// CHECK-NOT:     linalg.generic
// CHECK-NOT:     memref.dealloc
// CHECK:         return
// Without fusion the consumer stays a linalg op; the kernel still starts
// from the evaluated zero and stores into the f32 buffer.
// NOFUSE-LABEL: func.func @round_to_bf16
// NOFUSE-NOT:     linalg.fill
// NOFUSE-NOT:     memref.copy
// NOFUSE:         %[[ACC:.+]] = memref.alloc
// NOFUSE:         gpu.launch
// NOFUSE:           %[[S:.+]] = vector.extract %{{.+}}[0, 0] : f32 from vector<2x2xf32>
// NOFUSE-NEXT:      %[[V:.+]] = arith.addf %[[S]], %cst
// NOFUSE-NEXT:      memref.store %[[V]], %[[ACC]][
// NOFUSE:         linalg.generic {{.+}} ins(%[[ACC]] : memref<?x?x64xf32>) outs(%arg2 : memref<?x?x64xbf16>)
func.func @round_to_bf16(%x: memref<?x?x64xbf16>, %w: memref<64x64xbf16>,
                         %y: memref<?x?x64xbf16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %b = memref.dim %x, %c0 : memref<?x?x64xbf16>
  %t = memref.dim %x, %c1 : memref<?x?x64xbf16>
  %zeros = memref.alloc(%b, %t) : memref<?x?x64xf32>
  linalg.fill ins(%zero : f32) outs(%zeros : memref<?x?x64xf32>)
  %acc = memref.alloc(%b, %t) : memref<?x?x64xf32>
  memref.copy %zeros, %acc : memref<?x?x64xf32> to memref<?x?x64xf32>
  linalg.generic {indexing_maps = [#a, #w, #o],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<?x?x64xbf16>, memref<64x64xbf16>)
      outs(%acc : memref<?x?x64xf32>)
      attrs = {blockc_codegen.gpu_mma_tiles = #blockc_codegen.gpu_mma_tiles<tile_m = 32, tile_n = 64, tile_k = 32, warps_m = 1, warps_n = 2, stages = 3>} {
  ^bb0(%in: bf16, %wn: bf16, %out: f32):
    %e0 = arith.extf %in : bf16 to f32
    %e1 = arith.extf %wn : bf16 to f32
    %p = arith.mulf %e0, %e1 : f32
    %s = arith.addf %out, %p : f32
    linalg.yield %s : f32
  }
  %r = memref.alloc(%b, %t) : memref<?x?x64xbf16>
  linalg.generic {indexing_maps = [#id, #id],
                  iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%acc : memref<?x?x64xf32>) outs(%y : memref<?x?x64xbf16>) {
  ^bb0(%in: f32, %out: bf16):
    %v = arith.truncf %in : f32 to bf16
    linalg.yield %v : bf16
  }
  memref.dealloc %zeros : memref<?x?x64xf32>
  memref.dealloc %acc : memref<?x?x64xf32>
  memref.dealloc %r : memref<?x?x64xbf16>
  return
}

// -----

#a = affine_map<(b, t, n, k) -> (b, t, k)>
#w = affine_map<(b, t, n, k) -> (n, k)>
#o = affine_map<(b, t, n, k) -> (b, t, n)>
#id = affine_map<(b, t, n) -> (b, t, n)>
#bias = affine_map<(b, t, n) -> (n)>

// A bias (Qwen2's q/k/v): the broadcast is evaluated per element, bias[n]
// read and widened in the epilogue; the residual consumer reads the
// block's input at the same element.
// CHECK-LABEL: func.func @bias_and_residual
// CHECK-NOT:     linalg.generic
// CHECK:         gpu.launch
// CHECK:           %[[S:.+]] = vector.extract %{{.+}}[0, 0] : f32 from vector<2x2xf32>
// CHECK-NEXT:      %[[B:.+]] = memref.load %arg2[%[[N:.+]]] : memref<64xbf16>
// CHECK-NEXT:      %[[BF:.+]] = arith.extf %[[B]] : bf16 to f32
// CHECK-NEXT:      %[[V:.+]] = arith.addf %[[BF]], %[[S]]
// CHECK-NEXT:      %[[X:.+]] = memref.load %arg3[%{{.+}}, %{{.+}}, %[[N]]] : memref<?x?x64xbf16>
// CHECK-NEXT:      %[[R:.+]] = arith.truncf %[[V]] : f32 to bf16
// CHECK-NEXT:      %[[RF:.+]] = arith.extf %[[R]] : bf16 to f32
// CHECK-NEXT:      %[[XF:.+]] = arith.extf %[[X]] : bf16 to f32
// CHECK-NEXT:      %[[SUM:.+]] = arith.addf %[[XF]], %[[RF]]
// CHECK-NEXT:      %[[OUT:.+]] = arith.truncf %[[SUM]] : f32 to bf16
// CHECK-NEXT:      memref.store %[[OUT]], %arg4[%{{.+}}, %{{.+}}, %[[N]]]
// CHECK-NOT:     linalg.generic
// CHECK:         return
func.func @bias_and_residual(%x: memref<?x?x64xbf16>, %w: memref<64x64xbf16>,
                             %bias: memref<64xbf16>,
                             %res: memref<?x?x64xbf16>,
                             %y: memref<?x?x64xbf16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %b = memref.dim %x, %c0 : memref<?x?x64xbf16>
  %t = memref.dim %x, %c1 : memref<?x?x64xbf16>
  %acc = memref.alloc(%b, %t) : memref<?x?x64xf32>
  linalg.generic {indexing_maps = [#bias, #id],
                  iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%bias : memref<64xbf16>) outs(%acc : memref<?x?x64xf32>) {
  ^bb0(%in: bf16, %out: f32):
    %v = arith.extf %in : bf16 to f32
    linalg.yield %v : f32
  }
  linalg.generic {indexing_maps = [#a, #w, #o],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<?x?x64xbf16>, memref<64x64xbf16>)
      outs(%acc : memref<?x?x64xf32>)
      attrs = {blockc_codegen.gpu_mma_tiles = #blockc_codegen.gpu_mma_tiles<tile_m = 32, tile_n = 64, tile_k = 32, warps_m = 1, warps_n = 2, stages = 3>} {
  ^bb0(%in: bf16, %wn: bf16, %out: f32):
    %e0 = arith.extf %in : bf16 to f32
    %e1 = arith.extf %wn : bf16 to f32
    %p = arith.mulf %e0, %e1 : f32
    %s = arith.addf %out, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id, #id, #id],
                  iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%res, %acc : memref<?x?x64xbf16>, memref<?x?x64xf32>)
      outs(%y : memref<?x?x64xbf16>) {
  ^bb0(%r: bf16, %in: f32, %out: bf16):
    %q = arith.truncf %in : f32 to bf16
    %qf = arith.extf %q : bf16 to f32
    %rf = arith.extf %r : bf16 to f32
    %sum = arith.addf %rf, %qf : f32
    %v = arith.truncf %sum : f32 to bf16
    linalg.yield %v : bf16
  }
  memref.dealloc %acc : memref<?x?x64xf32>
  return
}

// -----

#a = affine_map<(b, t, n, k) -> (b, t, k)>
#w = affine_map<(b, t, n, k) -> (n, k)>
#o = affine_map<(b, t, n, k) -> (b, t, n)>
#id = affine_map<(b, t, n) -> (b, t, n)>

// Gate and up (d_ff = 96) of one input, read by a SwiGLU consumer: one
// kernel. Its 64 B rows per stage are, per warp (32 columns), 16 gate rows
// then the same 16 up rows: chunk run c (16 rows of 64 threads' chunks)
// copies gate for even c, up for odd c. Each block computes 32 columns of
// h: grid x = ceil(96 / 32) = 3. In the epilogue each gate fragment j
// meets up fragment j + 2 of the same lane.
// CHECK-LABEL: func.func @swiglu_pair
// CHECK:         gpu.launch blocks({{[^)]+}}) in (%{{[^ ]+}} = %c3,
// CHECK-COUNT-2: nvgpu.device_async_copy %arg0[
// CHECK:         nvgpu.device_async_copy %arg1[
// CHECK:         nvgpu.device_async_copy %arg2[
// CHECK:         nvgpu.device_async_copy %arg1[
// CHECK:         nvgpu.device_async_copy %arg2[
// CHECK-NEXT:    nvgpu.device_async_create_group
// CHECK:         %[[ACC:.+]]:8 = scf.for
// CHECK:           %[[G:.+]] = vector.extract %[[ACC]]#0[0, 0] : f32 from vector<2x2xf32>
// CHECK-NEXT:      %[[U:.+]] = vector.extract %[[ACC]]#2[0, 0] : f32 from vector<2x2xf32>
// CHECK-NEXT:      %[[GV:.+]] = arith.addf %[[G]], %cst
// CHECK-NEXT:      %[[UV:.+]] = arith.addf %[[U]], %cst
// CHECK:           math.exp
// CHECK:           memref.store %{{.+}}, %arg3[
// CHECK:         } {blockc_codegen.kernel = #blockc_codegen.kernel<tensor_core_matmul>}
// CHECK-NOT:     gpu.launch
// CHECK-NOT:     linalg.generic
// CHECK:         return
// Without fusion: two kernels and the consumer.
// NOFUSE-LABEL: func.func @swiglu_pair
// NOFUSE-COUNT-2: kernel<tensor_core_matmul>
// NOFUSE:         linalg.generic
func.func @swiglu_pair(%x: memref<?x?x64xbf16>, %wg: memref<96x64xbf16>,
                       %wu: memref<96x64xbf16>, %h: memref<?x?x96xbf16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %b = memref.dim %x, %c0 : memref<?x?x64xbf16>
  %t = memref.dim %x, %c1 : memref<?x?x64xbf16>
  %gate = memref.alloc(%b, %t) : memref<?x?x96xf32>
  linalg.fill ins(%zero : f32) outs(%gate : memref<?x?x96xf32>)
  linalg.generic {indexing_maps = [#a, #w, #o],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %wg : memref<?x?x64xbf16>, memref<96x64xbf16>)
      outs(%gate : memref<?x?x96xf32>)
      attrs = {blockc_codegen.gpu_mma_tiles = #blockc_codegen.gpu_mma_tiles<tile_m = 32, tile_n = 64, tile_k = 32, warps_m = 1, warps_n = 2, stages = 3>} {
  ^bb0(%in: bf16, %wn: bf16, %out: f32):
    %e0 = arith.extf %in : bf16 to f32
    %e1 = arith.extf %wn : bf16 to f32
    %p = arith.mulf %e0, %e1 : f32
    %s = arith.addf %out, %p : f32
    linalg.yield %s : f32
  }
  %up = memref.alloc(%b, %t) : memref<?x?x96xf32>
  linalg.fill ins(%zero : f32) outs(%up : memref<?x?x96xf32>)
  linalg.generic {indexing_maps = [#a, #w, #o],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %wu : memref<?x?x64xbf16>, memref<96x64xbf16>)
      outs(%up : memref<?x?x96xf32>)
      attrs = {blockc_codegen.gpu_mma_tiles = #blockc_codegen.gpu_mma_tiles<tile_m = 32, tile_n = 64, tile_k = 32, warps_m = 1, warps_n = 2, stages = 3>} {
  ^bb0(%in: bf16, %wn: bf16, %out: f32):
    %e0 = arith.extf %in : bf16 to f32
    %e1 = arith.extf %wn : bf16 to f32
    %p = arith.mulf %e0, %e1 : f32
    %s = arith.addf %out, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id, #id, #id],
                  iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%gate, %up : memref<?x?x96xf32>, memref<?x?x96xf32>)
      outs(%h : memref<?x?x96xbf16>) {
  ^bb0(%g: f32, %u: f32, %out: bf16):
    %n = arith.negf %g : f32
    %e = math.exp %n : f32
    %d = arith.addf %e, %one : f32
    %silu = arith.divf %g, %d : f32
    %v = arith.mulf %silu, %u : f32
    %r = arith.truncf %v : f32 to bf16
    linalg.yield %r : bf16
  }
  memref.dealloc %gate : memref<?x?x96xf32>
  memref.dealloc %up : memref<?x?x96xf32>
  return
}

// -----

#a = affine_map<(m, n, k) -> (m, k)>
#w = affine_map<(m, n, k) -> (n, k)>
#o = affine_map<(m, n, k) -> (m, n)>
#id = affine_map<(m, n) -> (m, n)>

// The pair on the Hopper kernel: the weights' tensor maps have 64-row
// boxes, each stage loads A, then 64 gate rows, then 64 up rows 8192 bytes
// further (accumulator columns 0-63 gate, 64-127 up); grid x = ceil(96 /
// 64) = 2; the epilogue reads column c and c + 64 of the f32 tile.
// CHECK-LABEL: func.func @swiglu_pair_warpgroup
// CHECK:         %[[AMAP:.+]] = nvgpu.tma.create.descriptor %{{.+}} box[%c128, %c64]
// CHECK:         %[[GMAP:.+]] = nvgpu.tma.create.descriptor %{{.+}} box[%c64, %c64]
// CHECK:         %[[UMAP:.+]] = nvgpu.tma.create.descriptor %{{.+}} box[%c64, %c64]
// CHECK:         gpu.launch blocks({{[^)]+}}) in (%{{[^ ]+}} = %c2,
// CHECK:           nvgpu.mbarrier.arrive.expect_tx %{{.+}}[%c0], %c32768
// CHECK-NEXT:      memref.view
// CHECK-NEXT:      nvgpu.tma.async.load %[[AMAP]][%c0,
// CHECK-NEXT:      arith.addi %{{.+}}, %c16384
// CHECK-NEXT:      memref.view
// CHECK-NEXT:      nvgpu.tma.async.load %[[GMAP]][%c0,
// CHECK-NEXT:      arith.addi %{{.+}}, %c24576
// CHECK-NEXT:      memref.view
// CHECK-NEXT:      nvgpu.tma.async.load %[[UMAP]][%c0,
// Each of the 256 threads turns 32 of the 8192 elements into results, 4 at
// a time: the indices of all 4 (clamped into the output for the loads of
// memory inputs, none here) first, then each element inside the output.
// CHECK:           scf.for %{{.+}} = %c0 to %c32 step %c4
// CHECK-COUNT-4:     arith.minui %{{.+}}, %c95
// CHECK:             scf.if
// CHECK-NEXT:          %[[G:.+]] = memref.load %[[TILE:.+]][%[[R:.+]], %[[C:.+]]] : memref<128x132xf32, #gpu.address_space<workgroup>>
// CHECK-NEXT:        %[[C2:.+]] = arith.addi %[[C]], %c64
// CHECK-NEXT:        %[[U:.+]] = memref.load %[[TILE]][%[[R]], %[[C2]]]
// CHECK:             math.exp
// CHECK:             memref.store %{{.+}}, %arg3[
// CHECK:         } {blockc_codegen.kernel = #blockc_codegen.kernel<warpgroup_matmul>}
// CHECK-NOT:     gpu.launch
// CHECK:         return
func.func @swiglu_pair_warpgroup(%x: memref<?x64xbf16>, %wg: memref<96x64xbf16>,
                                 %wu: memref<96x64xbf16>, %h: memref<?x96xbf16>) {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %m = memref.dim %x, %c0 : memref<?x64xbf16>
  %gate = memref.alloc(%m) : memref<?x96xf32>
  linalg.fill ins(%zero : f32) outs(%gate : memref<?x96xf32>)
  linalg.generic {indexing_maps = [#a, #w, #o],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %wg : memref<?x64xbf16>, memref<96x64xbf16>)
      outs(%gate : memref<?x96xf32>)
      attrs = {blockc_codegen.gpu_mma_tiles = #blockc_codegen.gpu_mma_tiles<tile_m = 128, tile_n = 128, tile_k = 32, warps_m = 2, warps_n = 2, stages = 4>,
               blockc_codegen.gpu_warpgroup_tiles = #blockc_codegen.gpu_warpgroup_tiles<tile_m = 128, tile_n = 128, stages = 4>} {
  ^bb0(%in: bf16, %wn: bf16, %out: f32):
    %e0 = arith.extf %in : bf16 to f32
    %e1 = arith.extf %wn : bf16 to f32
    %p = arith.mulf %e0, %e1 : f32
    %s = arith.addf %out, %p : f32
    linalg.yield %s : f32
  }
  %up = memref.alloc(%m) : memref<?x96xf32>
  linalg.fill ins(%zero : f32) outs(%up : memref<?x96xf32>)
  linalg.generic {indexing_maps = [#a, #w, #o],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %wu : memref<?x64xbf16>, memref<96x64xbf16>)
      outs(%up : memref<?x96xf32>)
      attrs = {blockc_codegen.gpu_mma_tiles = #blockc_codegen.gpu_mma_tiles<tile_m = 128, tile_n = 128, tile_k = 32, warps_m = 2, warps_n = 2, stages = 4>,
               blockc_codegen.gpu_warpgroup_tiles = #blockc_codegen.gpu_warpgroup_tiles<tile_m = 128, tile_n = 128, stages = 4>} {
  ^bb0(%in: bf16, %wn: bf16, %out: f32):
    %e0 = arith.extf %in : bf16 to f32
    %e1 = arith.extf %wn : bf16 to f32
    %p = arith.mulf %e0, %e1 : f32
    %s = arith.addf %out, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id, #id, #id],
                  iterator_types = ["parallel", "parallel"]}
      ins(%gate, %up : memref<?x96xf32>, memref<?x96xf32>)
      outs(%h : memref<?x96xbf16>) {
  ^bb0(%g: f32, %u: f32, %out: bf16):
    %n = arith.negf %g : f32
    %e = math.exp %n : f32
    %d = arith.addf %e, %one : f32
    %silu = arith.divf %g, %d : f32
    %v = arith.mulf %silu, %u : f32
    %r = arith.truncf %v : f32 to bf16
    linalg.yield %r : bf16
  }
  memref.dealloc %gate : memref<?x96xf32>
  memref.dealloc %up : memref<?x96xf32>
  return
}

// -----

#a = affine_map<(b, t, n, k) -> (b, t, k)>
#w = affine_map<(b, t, n, k) -> (n, k)>
#o = affine_map<(b, t, n, k) -> (b, t, n)>
#id = affine_map<(b, t, n) -> (b, t, n)>

// Not fused: the consumer writes the contraction's own input (other
// blocks still read it), and a result read twice. The kernels still start
// from the evaluated zero and store their sums.
// CHECK-LABEL: func.func @not_fused
// CHECK:         %[[ACC:.+]] = memref.alloc
// CHECK-NOT:     linalg.fill
// CHECK:         gpu.launch
// CHECK:           memref.store %{{.+}}, %[[ACC]][
// CHECK:         linalg.generic {{.+}} ins(%[[ACC]] : memref<?x?x64xf32>) outs(%arg0 : memref<?x?x64xbf16>)
// CHECK:         %[[ACC2:.+]] = memref.alloc
// CHECK:         gpu.launch
// CHECK:           memref.store %{{.+}}, %[[ACC2]][
// CHECK:         linalg.generic {{.+}} ins(%[[ACC2]] : memref<?x?x64xf32>) outs(%arg2 : memref<?x?x64xbf16>)
// CHECK:         linalg.generic {{.+}} ins(%[[ACC2]] : memref<?x?x64xf32>) outs(%arg3 : memref<?x?x64xbf16>)
func.func @not_fused(%x: memref<?x?x64xbf16>, %w: memref<64x64xbf16>,
                     %y: memref<?x?x64xbf16>, %z: memref<?x?x64xbf16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %b = memref.dim %x, %c0 : memref<?x?x64xbf16>
  %t = memref.dim %x, %c1 : memref<?x?x64xbf16>
  %acc = memref.alloc(%b, %t) : memref<?x?x64xf32>
  linalg.fill ins(%zero : f32) outs(%acc : memref<?x?x64xf32>)
  linalg.generic {indexing_maps = [#a, #w, #o],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<?x?x64xbf16>, memref<64x64xbf16>)
      outs(%acc : memref<?x?x64xf32>)
      attrs = {blockc_codegen.gpu_mma_tiles = #blockc_codegen.gpu_mma_tiles<tile_m = 32, tile_n = 64, tile_k = 32, warps_m = 1, warps_n = 2, stages = 3>} {
  ^bb0(%in: bf16, %wn: bf16, %out: f32):
    %e0 = arith.extf %in : bf16 to f32
    %e1 = arith.extf %wn : bf16 to f32
    %p = arith.mulf %e0, %e1 : f32
    %s = arith.addf %out, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id, #id],
                  iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%acc : memref<?x?x64xf32>) outs(%x : memref<?x?x64xbf16>) {
  ^bb0(%in: f32, %out: bf16):
    %v = arith.truncf %in : f32 to bf16
    linalg.yield %v : bf16
  }
  %acc2 = memref.alloc(%b, %t) : memref<?x?x64xf32>
  linalg.fill ins(%zero : f32) outs(%acc2 : memref<?x?x64xf32>)
  linalg.generic {indexing_maps = [#a, #w, #o],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<?x?x64xbf16>, memref<64x64xbf16>)
      outs(%acc2 : memref<?x?x64xf32>)
      attrs = {blockc_codegen.gpu_mma_tiles = #blockc_codegen.gpu_mma_tiles<tile_m = 32, tile_n = 64, tile_k = 32, warps_m = 1, warps_n = 2, stages = 3>} {
  ^bb0(%in: bf16, %wn: bf16, %out: f32):
    %e0 = arith.extf %in : bf16 to f32
    %e1 = arith.extf %wn : bf16 to f32
    %p = arith.mulf %e0, %e1 : f32
    %s = arith.addf %out, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id, #id],
                  iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%acc2 : memref<?x?x64xf32>) outs(%y : memref<?x?x64xbf16>) {
  ^bb0(%in: f32, %out: bf16):
    %v = arith.truncf %in : f32 to bf16
    linalg.yield %v : bf16
  }
  linalg.generic {indexing_maps = [#id, #id],
                  iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%acc2 : memref<?x?x64xf32>) outs(%z : memref<?x?x64xbf16>) {
  ^bb0(%in: f32, %out: bf16):
    %v = arith.truncf %in : f32 to bf16
    linalg.yield %v : bf16
  }
  memref.dealloc %acc : memref<?x?x64xf32>
  memref.dealloc %acc2 : memref<?x?x64xf32>
  return
}

// -----

#a = affine_map<(b, t, n, k) -> (b, t, k)>
#w = affine_map<(b, t, n, k) -> (n, k)>
#o = affine_map<(b, t, n, k) -> (b, t, n)>
#id = affine_map<(b, t, n) -> (b, t, n)>

// Not fused: a view of the result (made before the contraction) is read
// after the consumer, so the result must be written; and the init is not
// evaluated (a view may write the buffer), so the fill stays.
// CHECK-LABEL: func.func @viewed_result
// CHECK:         %[[ACC:.+]] = memref.alloc
// CHECK:         %[[VIEW:.+]] = memref.collapse_shape %[[ACC]]
// CHECK:         linalg.fill {{.+}} outs(%[[ACC]]
// CHECK:         gpu.launch
// CHECK:           %[[OLD:.+]] = memref.load %[[ACC]][
// CHECK:           %[[SUM:.+]] = arith.addf %[[OLD]], %{{.+}}
// CHECK:           memref.store %[[SUM]], %[[ACC]][
// CHECK:         linalg.generic {{.+}} ins(%[[ACC]] : memref<?x?x64xf32>) outs(%arg2 : memref<?x?x64xbf16>)
// CHECK:         memref.load %[[VIEW]]
func.func @viewed_result(%x: memref<?x?x64xbf16>, %w: memref<64x64xbf16>,
                         %y: memref<?x?x64xbf16>) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %b = memref.dim %x, %c0 : memref<?x?x64xbf16>
  %t = memref.dim %x, %c1 : memref<?x?x64xbf16>
  %acc = memref.alloc(%b, %t) : memref<?x?x64xf32>
  %flat = memref.collapse_shape %acc [[0, 1], [2]] : memref<?x?x64xf32> into memref<?x64xf32>
  linalg.fill ins(%zero : f32) outs(%acc : memref<?x?x64xf32>)
  linalg.generic {indexing_maps = [#a, #w, #o],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<?x?x64xbf16>, memref<64x64xbf16>)
      outs(%acc : memref<?x?x64xf32>)
      attrs = {blockc_codegen.gpu_mma_tiles = #blockc_codegen.gpu_mma_tiles<tile_m = 32, tile_n = 64, tile_k = 32, warps_m = 1, warps_n = 2, stages = 3>} {
  ^bb0(%in: bf16, %wn: bf16, %out: f32):
    %e0 = arith.extf %in : bf16 to f32
    %e1 = arith.extf %wn : bf16 to f32
    %p = arith.mulf %e0, %e1 : f32
    %s = arith.addf %out, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id, #id],
                  iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%acc : memref<?x?x64xf32>) outs(%y : memref<?x?x64xbf16>) {
  ^bb0(%in: f32, %out: bf16):
    %v = arith.truncf %in : f32 to bf16
    linalg.yield %v : bf16
  }
  %first = memref.load %flat[%c0, %c0] : memref<?x64xf32>
  memref.dealloc %acc : memref<?x?x64xf32>
  return %first : f32
}
