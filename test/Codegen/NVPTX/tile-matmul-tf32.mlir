// RUN: blockc-opt %s -split-input-file --blockc-gpu-tile-matmul --canonicalize --cse | FileCheck %s
// RUN: blockc-opt %s -split-input-file --blockc-gpu-tile-matmul="fuse-epilogues=false" --canonicalize --cse | FileCheck %s --check-prefix=NOFUSE

// TF32 tensor-core kernels (docs/GPU.md#tf32): gpu_mma_tiles on a
// contraction of two f32 buffers (what blockc-gpu-select-tiles writes with
// allow-tf32) builds the mma.sync kernel with f32 tiles: 16-byte copies of
// 4 f32, rows padded by 4 f32, ldmatrix.x4 into one f32 per register, each
// fragment rounded to tf32 (half a tf32 ulp added to the bits of finite
// values, NaNs made quiet, the low 13 bits cleared) and m16n8k8 mma.sync
// with tf32Enabled.

#a = affine_map<(b, t, n, k) -> (b, t, k)>
#w = affine_map<(b, t, n, k) -> (n, k)>
#o = affine_map<(b, t, n, k) -> (b, t, n)>

// 32 x 32 tiles on 1 x 2 warps (warp tile 32 x 16: 2 m16 A fragments, 2 n8
// B fragments from one ldmatrix.x4), k steps of 16 f32 (2 k8 MMA steps) in
// 3 stages; K = 64: 4 reduction steps. The ring: 3 stages x (32 + 32) rows
// x 20 f32 = 15360 bytes, A's stages then B's (7680 bytes in).
// CHECK-LABEL: func.func @projection
// The rounding constants (hoisted out of the launch): the bits of +inf, the
// magnitude mask, half a tf32 ulp (bit 12), the quiet-NaN bit and the mask
// that clears the low 13 bits.
// CHECK-DAG:     %[[INF:.+]] = arith.constant dense<2139095040> : vector<4x1xi32>
// CHECK-DAG:     %[[ABS:.+]] = arith.constant dense<2147483647> : vector<4x1xi32>
// CHECK-DAG:     %[[HALF:.+]] = arith.constant dense<4096> : vector<4x1xi32>
// CHECK-DAG:     %[[QUIET:.+]] = arith.constant dense<4194304> : vector<4x1xi32>
// CHECK-DAG:     %[[CLEAR:.+]] = arith.constant dense<-8192> : vector<4x1xi32>
// CHECK:         gpu.launch blocks({{[^)]+}}) in (%{{[^ ]+}} = %c2, %{{[^ ]+}} = %{{[^,]+}}, %{{[^ ]+}} = %c1)
// CHECK-SAME:      threads({{[^)]+}}) in (%{{[^ ]+}} = %c64, %{{[^ ]+}} = %c1, %{{[^ ]+}} = %c1)
// CHECK-SAME:      dynamic_shared_memory_size %c15360_i32
// CHECK:         %[[AS:.+]] = memref.view %{{.+}}[%c0][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<3x32x20xf32, #gpu.address_space<workgroup>>
// CHECK:         %[[BS:.+]] = memref.view %{{.+}}[%c7680][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<3x32x20xf32, #gpu.address_space<workgroup>>
// 32 x 16 f32 per operand and stage = 128 chunks of 4 f32, 2 per thread.
// CHECK:         nvgpu.device_async_copy %arg0[{{.+}}], %[[AS]][%c0, {{.+}}], 4, %{{.+}} {bypassL1} : memref<?x?x64xf32> to memref<3x32x20xf32, #gpu.address_space<workgroup>>
// CHECK:         nvgpu.device_async_copy %arg1[{{.+}}], %[[BS]][%c0, {{.+}}], 4, %{{.+}} {bypassL1} : memref<48x64xf32> to memref<3x32x20xf32, #gpu.address_space<workgroup>>
// CHECK:         scf.for %{{.+}} = %c0 to %c4 step %c1 iter_args({{.+}}) -> (vector<2x2xf32>, vector<2x2xf32>, vector<2x2xf32>, vector<2x2xf32>)
// CHECK:           %[[A0:.+]] = nvgpu.ldmatrix %[[AS]][{{.+}}] {numTiles = 4 : i32, transpose = false} : memref<3x32x20xf32, #gpu.address_space<workgroup>> -> vector<4x1xf32>
// CHECK-NEXT:      %[[BITS:.+]] = arith.bitcast %[[A0]] : vector<4x1xf32> to vector<4x1xi32>
// CHECK-NEXT:      %[[MAG:.+]] = arith.andi %[[BITS]], %[[ABS]] : vector<4x1xi32>
// CHECK-NEXT:      %[[FIN:.+]] = arith.cmpi ult, %[[MAG]], %[[INF]] : vector<4x1xi32>
// CHECK-NEXT:      %[[NAN:.+]] = arith.cmpi ugt, %[[MAG]], %[[INF]] : vector<4x1xi32>
// CHECK-NEXT:      %[[UP:.+]] = arith.addi %[[BITS]], %[[HALF]] : vector<4x1xi32>
// CHECK-NEXT:      %[[Q:.+]] = arith.ori %[[BITS]], %[[QUIET]] : vector<4x1xi32>
// CHECK-NEXT:      %[[SPECIAL:.+]] = arith.select %[[NAN]], %[[Q]], %[[BITS]] : vector<4x1xi1>, vector<4x1xi32>
// CHECK-NEXT:      %[[SEL:.+]] = arith.select %[[FIN]], %[[UP]], %[[SPECIAL]] : vector<4x1xi1>, vector<4x1xi32>
// CHECK-NEXT:      %[[CLR:.+]] = arith.andi %[[SEL]], %[[CLEAR]] : vector<4x1xi32>
// CHECK-NEXT:      %[[A:.+]] = arith.bitcast %[[CLR]] : vector<4x1xi32> to vector<4x1xf32>
// CHECK:           nvgpu.ldmatrix %[[AS]]
// CHECK:           %[[B:.+]] = nvgpu.ldmatrix %[[BS]][{{.+}}] {numTiles = 4 : i32, transpose = false} : memref<3x32x20xf32, #gpu.address_space<workgroup>> -> vector<4x1xf32>
// CHECK:           arith.bitcast %[[B]]
// CHECK:           nvgpu.mma.sync(%[[A]], %{{.+}}, %{{.+}}) {mmaShape = [16, 8, 8], tf32Enabled} : (vector<4x1xf32>, vector<2x1xf32>, vector<2x2xf32>) -> vector<2x2xf32>
// 2 k8 steps x 2 x 2 fragments per stage.
// CHECK-COUNT-7:   nvgpu.mma.sync({{.+}}) {mmaShape = [16, 8, 8], tf32Enabled}
// CHECK-NOT:       nvgpu.mma.sync
// CHECK:           scf.yield
// CHECK:         } {blockc_codegen.kernel = #blockc_codegen.kernel<tensor_core_matmul>}
// CHECK-NOT:     linalg.generic
func.func @projection(%x: memref<?x?x64xf32>, %w: memref<48x64xf32>, %y: memref<?x?x48xf32>) {
  linalg.generic {indexing_maps = [#a, #w, #o], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<?x?x64xf32>, memref<48x64xf32>) outs(%y : memref<?x?x48xf32>)
      attrs = {blockc_codegen.gpu_mma_tiles = #blockc_codegen.gpu_mma_tiles<tile_m = 32, tile_n = 32, tile_k = 16, warps_m = 1, warps_n = 2, stages = 3>} {
  ^bb0(%in: f32, %wn: f32, %out: f32):
    %p = arith.mulf %in, %wn : f32
    %s = arith.addf %out, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

#a = affine_map<(b, t, n, k) -> (b, t, k)>
#w = affine_map<(b, t, n, k) -> (n, k)>
#o = affine_map<(b, t, n, k) -> (b, t, n)>
#id = affine_map<(b, t, n) -> (b, t, n)>

// An f32 block's gate and up: bufferization writes silu(gate) * up in place
// into gate's buffer, which the down projection reads afterwards. That read
// sees the consumer's values, so gate and up still run as one kernel whose
// epilogue stores silu(g) * u into that buffer (each element by the thread
// that computed it; the kernel does not read it: its zero init is
// evaluated). Per warp, 16 gate rows then 16 up rows of B: chunk runs of 16
// rows (64 threads x 4 chunks of a 16-f32 row = 16 rows).
// CHECK-LABEL: func.func @swiglu_in_place
// CHECK:         %[[GATE:.+]] = memref.alloc
// CHECK-NOT:     linalg.fill
// CHECK:         gpu.launch blocks({{[^)]+}}) in (%{{[^ ]+}} = %c3,
// CHECK:         nvgpu.device_async_copy %arg1[
// CHECK:         nvgpu.device_async_copy %arg2[
// CHECK:         %[[ACC:.+]]:8 = scf.for
// CHECK:           %[[G:.+]] = vector.extract %[[ACC]]#0[0, 0] : f32 from vector<2x2xf32>
// CHECK-NEXT:      %[[U:.+]] = vector.extract %[[ACC]]#2[0, 0] : f32 from vector<2x2xf32>
// CHECK:           math.exp
// CHECK:           memref.store %{{.+}}, %[[GATE]][
// CHECK:         } {blockc_codegen.kernel = #blockc_codegen.kernel<tensor_core_matmul>}
// CHECK-NOT:     linalg.generic
// The down projection (an FMA kernel here) then reads the buffer.
// CHECK:         gpu.launch
// CHECK:           memref.load %[[GATE]]
// CHECK:         } {blockc_codegen.kernel = #blockc_codegen.kernel<tiled_matmul>}
// CHECK-NOT:     linalg.generic
func.func @swiglu_in_place(%x: memref<?x?x64xf32>, %wg: memref<96x64xf32>,
                           %wu: memref<96x64xf32>, %wd: memref<64x96xf32>,
                           %y: memref<?x?x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %b = memref.dim %x, %c0 : memref<?x?x64xf32>
  %t = memref.dim %x, %c1 : memref<?x?x64xf32>
  %gate = memref.alloc(%b, %t) : memref<?x?x96xf32>
  linalg.fill ins(%zero : f32) outs(%gate : memref<?x?x96xf32>)
  linalg.generic {indexing_maps = [#a, #w, #o],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %wg : memref<?x?x64xf32>, memref<96x64xf32>)
      outs(%gate : memref<?x?x96xf32>)
      attrs = {blockc_codegen.gpu_mma_tiles = #blockc_codegen.gpu_mma_tiles<tile_m = 32, tile_n = 64, tile_k = 16, warps_m = 1, warps_n = 2, stages = 3>} {
  ^bb0(%in: f32, %wn: f32, %out: f32):
    %p = arith.mulf %in, %wn : f32
    %s = arith.addf %out, %p : f32
    linalg.yield %s : f32
  }
  %up = memref.alloc(%b, %t) : memref<?x?x96xf32>
  linalg.fill ins(%zero : f32) outs(%up : memref<?x?x96xf32>)
  linalg.generic {indexing_maps = [#a, #w, #o],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %wu : memref<?x?x64xf32>, memref<96x64xf32>)
      outs(%up : memref<?x?x96xf32>)
      attrs = {blockc_codegen.gpu_mma_tiles = #blockc_codegen.gpu_mma_tiles<tile_m = 32, tile_n = 64, tile_k = 16, warps_m = 1, warps_n = 2, stages = 3>} {
  ^bb0(%in: f32, %wn: f32, %out: f32):
    %p = arith.mulf %in, %wn : f32
    %s = arith.addf %out, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id, #id, #id],
                  iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%gate, %up : memref<?x?x96xf32>, memref<?x?x96xf32>)
      outs(%gate : memref<?x?x96xf32>) {
  ^bb0(%g: f32, %u: f32, %out: f32):
    %n = arith.negf %g : f32
    %e = math.exp %n : f32
    %d = arith.addf %e, %one : f32
    %silu = arith.divf %g, %d : f32
    %v = arith.mulf %silu, %u : f32
    linalg.yield %v : f32
  }
  linalg.generic {indexing_maps = [#a, #w, #o],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%gate, %wd : memref<?x?x96xf32>, memref<64x96xf32>)
      outs(%y : memref<?x?x64xf32>)
      attrs = {blockc_codegen.gpu_matmul_tiles = #blockc_codegen.gpu_matmul_tiles<tile_m = 64, tile_n = 64, tile_k = 16, threads_x = 16, threads_y = 16>} {
  ^bb0(%in: f32, %wn: f32, %out: f32):
    %p = arith.mulf %in, %wn : f32
    %s = arith.addf %out, %p : f32
    linalg.yield %s : f32
  }
  memref.dealloc %gate : memref<?x?x96xf32>
  memref.dealloc %up : memref<?x?x96xf32>
  return
}

// -----

#a = affine_map<(b, t, n, k) -> (b, t, k)>
#w = affine_map<(b, t, n, k) -> (n, k)>
#o = affine_map<(b, t, n, k) -> (b, t, n)>
#id = affine_map<(b, t, n) -> (b, t, n)>

// Not fused: the projection's buffer is overwritten (not read) by a
// generic before the next generic reads it; that reader sees the
// overwritten values, not the projection's.
// CHECK-LABEL: func.func @overwritten_first
// CHECK:         gpu.launch
// CHECK:         } {blockc_codegen.kernel = #blockc_codegen.kernel<tensor_core_matmul>}
// CHECK:         linalg.generic {{.+}} ins(%arg3 : memref<?x?x32xf32>) outs(%[[BUF:.+]] : memref<?x?x32xf32>)
// CHECK:         linalg.generic {{.+}} ins(%[[BUF]] : memref<?x?x32xf32>) outs(%arg2 : memref<?x?x32xf32>)
func.func @overwritten_first(%x: memref<?x?x64xf32>, %w: memref<32x64xf32>,
                             %y: memref<?x?x32xf32>, %z: memref<?x?x32xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %b = memref.dim %x, %c0 : memref<?x?x64xf32>
  %t = memref.dim %x, %c1 : memref<?x?x64xf32>
  %buf = memref.alloc(%b, %t) : memref<?x?x32xf32>
  linalg.fill ins(%zero : f32) outs(%buf : memref<?x?x32xf32>)
  linalg.generic {indexing_maps = [#a, #w, #o],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<?x?x64xf32>, memref<32x64xf32>)
      outs(%buf : memref<?x?x32xf32>)
      attrs = {blockc_codegen.gpu_mma_tiles = #blockc_codegen.gpu_mma_tiles<tile_m = 32, tile_n = 32, tile_k = 16, warps_m = 1, warps_n = 2, stages = 3>} {
  ^bb0(%in: f32, %wn: f32, %out: f32):
    %p = arith.mulf %in, %wn : f32
    %s = arith.addf %out, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%z : memref<?x?x32xf32>) outs(%buf : memref<?x?x32xf32>) {
  ^bb0(%v: f32, %out: f32):
    linalg.yield %v : f32
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%buf : memref<?x?x32xf32>) outs(%y : memref<?x?x32xf32>) {
  ^bb0(%v: f32, %out: f32):
    %d = arith.addf %v, %v : f32
    linalg.yield %d : f32
  }
  memref.dealloc %buf : memref<?x?x32xf32>
  return
}

// -----

#a = affine_map<(b, t, n, k) -> (b, t, k)>
#w = affine_map<(b, t, n, k) -> (n, k)>
#o = affine_map<(b, t, n, k) -> (b, t, n)>
#id = affine_map<(b, t, k) -> (b, t, k)>
#row = affine_map<(b, t, k) -> (b, t)>
#gain = affine_map<(b, t, k) -> (k)>

// Prologue: the normalisation x * r[b, t] * gain[k] that writes the
// projections' input. Both projections (q and k) copy %x instead and
// evaluate the product on each A fragment element before the tf32
// rounding: r at the thread's rows g and g + 8 of its 2 m16 fragments (4
// loads) before the reduction loop, the gain at columns t and t + 4 of
// each k8 step inside it. The normalised buffer and its producer are gone.
// CHECK-LABEL: func.func @norm_prologue
// CHECK-NOT:     linalg.generic
// CHECK:         gpu.launch
// CHECK:           nvgpu.device_async_copy %arg0[
// CHECK:           nvgpu.device_async_copy %arg3[
// CHECK:           %[[R0:.+]] = memref.load %arg1[
// CHECK:           %[[R8:.+]] = memref.load %arg1[
// CHECK-COUNT-2:   memref.load %arg1[
// CHECK:           scf.for
// CHECK:             %[[G0:.+]] = memref.load %arg2[
// CHECK:             %[[G4:.+]] = memref.load %arg2[
// CHECK-NEXT:        %[[F:.+]] = nvgpu.ldmatrix
// Registers: (g, t), (g + 8, t), (g, t + 4), (g + 8, t + 4).
// CHECK-NEXT:        %[[X0:.+]] = vector.extract %[[F]][0, 0] : f32 from vector<4x1xf32>
// CHECK-NEXT:        %[[P0:.+]] = arith.mulf %[[X0]], %[[R0]] : f32
// CHECK-NEXT:        %[[N0:.+]] = arith.mulf %[[P0]], %[[G0]] : f32
// CHECK-NEXT:        %[[X1:.+]] = vector.extract %[[F]][1, 0] : f32 from vector<4x1xf32>
// CHECK-NEXT:        %[[P1:.+]] = arith.mulf %[[X1]], %[[R8]] : f32
// CHECK-NEXT:        %[[N1:.+]] = arith.mulf %[[P1]], %[[G0]] : f32
// CHECK-NEXT:        %[[X2:.+]] = vector.extract %[[F]][2, 0] : f32 from vector<4x1xf32>
// CHECK-NEXT:        %[[P2:.+]] = arith.mulf %[[X2]], %[[R0]] : f32
// CHECK-NEXT:        %[[N2:.+]] = arith.mulf %[[P2]], %[[G4]] : f32
// CHECK-NEXT:        %[[X3:.+]] = vector.extract %[[F]][3, 0] : f32 from vector<4x1xf32>
// CHECK-NEXT:        %[[P3:.+]] = arith.mulf %[[X3]], %[[R8]] : f32
// CHECK-NEXT:        %[[N3:.+]] = arith.mulf %[[P3]], %[[G4]] : f32
// CHECK-NEXT:        %[[NF:.+]] = vector.from_elements %[[N0]], %[[N1]], %[[N2]], %[[N3]] : vector<4x1xf32>
// CHECK-NEXT:        arith.bitcast %[[NF]] : vector<4x1xf32> to vector<4x1xi32>
// CHECK:             nvgpu.mma.sync
// CHECK:         } {blockc_codegen.kernel = #blockc_codegen.kernel<tensor_core_matmul>}
// CHECK:         gpu.launch
// CHECK:           nvgpu.device_async_copy %arg0[
// CHECK:         } {blockc_codegen.kernel = #blockc_codegen.kernel<tensor_core_matmul>}
// CHECK-NOT:     linalg.generic
// CHECK-NOT:     memref.alloc(
// CHECK:         return
// Without fusion the producer stays and the kernels copy its buffer.
// NOFUSE-LABEL: func.func @norm_prologue
// NOFUSE:         %[[XN:.+]] = memref.alloc
// NOFUSE:         linalg.generic {{.+}} outs(%[[XN]] :
// NOFUSE:         gpu.launch
// NOFUSE:           nvgpu.device_async_copy %[[XN]][
func.func @norm_prologue(%x: memref<?x?x64xf32>, %r: memref<?x?xf32>, %g: memref<64xf32>,
                         %wq: memref<32x64xf32>, %wk: memref<32x64xf32>,
                         %q: memref<?x?x32xf32>, %k: memref<?x?x32xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %b = memref.dim %x, %c0 : memref<?x?x64xf32>
  %t = memref.dim %x, %c1 : memref<?x?x64xf32>
  %xn = memref.alloc(%b, %t) : memref<?x?x64xf32>
  linalg.generic {indexing_maps = [#id, #row, #gain, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x, %r, %g : memref<?x?x64xf32>, memref<?x?xf32>, memref<64xf32>) outs(%xn : memref<?x?x64xf32>) {
  ^bb0(%v: f32, %rv: f32, %gv: f32, %out: f32):
    %s = arith.mulf %v, %rv : f32
    %n = arith.mulf %s, %gv : f32
    linalg.yield %n : f32
  }
  linalg.generic {indexing_maps = [#a, #w, #o], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%xn, %wq : memref<?x?x64xf32>, memref<32x64xf32>) outs(%q : memref<?x?x32xf32>)
      attrs = {blockc_codegen.gpu_mma_tiles = #blockc_codegen.gpu_mma_tiles<tile_m = 32, tile_n = 32, tile_k = 16, warps_m = 1, warps_n = 2, stages = 3>} {
  ^bb0(%in: f32, %wn: f32, %out: f32):
    %p = arith.mulf %in, %wn : f32
    %s = arith.addf %out, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#a, #w, #o], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%xn, %wk : memref<?x?x64xf32>, memref<32x64xf32>) outs(%k : memref<?x?x32xf32>)
      attrs = {blockc_codegen.gpu_mma_tiles = #blockc_codegen.gpu_mma_tiles<tile_m = 32, tile_n = 32, tile_k = 16, warps_m = 1, warps_n = 2, stages = 3>} {
  ^bb0(%in: f32, %wn: f32, %out: f32):
    %p = arith.mulf %in, %wn : f32
    %s = arith.addf %out, %p : f32
    linalg.yield %s : f32
  }
  memref.dealloc %xn : memref<?x?x64xf32>
  return
}

// -----

#a = affine_map<(b, t, n, k) -> (b, t, k)>
#w = affine_map<(b, t, n, k) -> (n, k)>
#o = affine_map<(b, t, n, k) -> (b, t, n)>
#id = affine_map<(b, t, k) -> (b, t, k)>
#row = affine_map<(b, t, k) -> (b, t)>
#gain = affine_map<(b, t, k) -> (k)>

// No prologue: the row statistics are written between the producer and
// the projection (the kernel would read the new values), so the kernel
// copies the normalised buffer, which stays. A second projection reads it
// too: still one producer.
// CHECK-LABEL: func.func @input_written_between
// CHECK:         %[[XN:.+]] = memref.alloc
// CHECK:         linalg.generic {{.+}} outs(%[[XN]] :
// CHECK:         linalg.fill
// CHECK:         gpu.launch
// CHECK:           nvgpu.device_async_copy %[[XN]][
// CHECK:         } {blockc_codegen.kernel = #blockc_codegen.kernel<tensor_core_matmul>}
func.func @input_written_between(%x: memref<?x?x64xf32>, %r: memref<?x?xf32>, %g: memref<64xf32>,
                                 %wq: memref<32x64xf32>, %q: memref<?x?x32xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %one = arith.constant 1.0 : f32
  %b = memref.dim %x, %c0 : memref<?x?x64xf32>
  %t = memref.dim %x, %c1 : memref<?x?x64xf32>
  %xn = memref.alloc(%b, %t) : memref<?x?x64xf32>
  linalg.generic {indexing_maps = [#id, #row, #gain, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x, %r, %g : memref<?x?x64xf32>, memref<?x?xf32>, memref<64xf32>) outs(%xn : memref<?x?x64xf32>) {
  ^bb0(%v: f32, %rv: f32, %gv: f32, %out: f32):
    %s = arith.mulf %v, %rv : f32
    %n = arith.mulf %s, %gv : f32
    linalg.yield %n : f32
  }
  linalg.fill ins(%one : f32) outs(%r : memref<?x?xf32>)
  linalg.generic {indexing_maps = [#a, #w, #o], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%xn, %wq : memref<?x?x64xf32>, memref<32x64xf32>) outs(%q : memref<?x?x32xf32>)
      attrs = {blockc_codegen.gpu_mma_tiles = #blockc_codegen.gpu_mma_tiles<tile_m = 32, tile_n = 32, tile_k = 16, warps_m = 1, warps_n = 2, stages = 3>} {
  ^bb0(%in: f32, %wn: f32, %out: f32):
    %p = arith.mulf %in, %wn : f32
    %s = arith.addf %out, %p : f32
    linalg.yield %s : f32
  }
  memref.dealloc %xn : memref<?x?x64xf32>
  return
}

// -----

#a = affine_map<(b, t, n, k) -> (b, t, k)>
#w = affine_map<(b, t, n, k) -> (n, k)>
#o = affine_map<(b, t, n, k) -> (b, t, n)>
#id = affine_map<(b, t, k) -> (b, t, k)>
#row = affine_map<(b, t, k) -> (b, t)>

// No prologue when the kernel writes what the producer reads: the residual
// h + (norm(h) W) written in place into %h by the fused consumer, while
// other blocks would still read %h for their prologue. The kernel copies
// the normalised buffer, and the producer stays.
// CHECK-LABEL: func.func @writes_streamed_input
// CHECK:         %[[XN:.+]] = memref.alloc
// CHECK:         linalg.generic {{.+}} outs(%[[XN]] :
// CHECK:         gpu.launch
// CHECK:           nvgpu.device_async_copy %[[XN]][
// CHECK:           memref.store %{{.+}}, %arg0[
// CHECK:         } {blockc_codegen.kernel = #blockc_codegen.kernel<tensor_core_matmul>}
func.func @writes_streamed_input(%h: memref<?x?x64xf32>, %r: memref<?x?xf32>, %w: memref<64x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %b = memref.dim %h, %c0 : memref<?x?x64xf32>
  %t = memref.dim %h, %c1 : memref<?x?x64xf32>
  %xn = memref.alloc(%b, %t) : memref<?x?x64xf32>
  linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%h, %r : memref<?x?x64xf32>, memref<?x?xf32>) outs(%xn : memref<?x?x64xf32>) {
  ^bb0(%v: f32, %rv: f32, %out: f32):
    %n = arith.mulf %v, %rv : f32
    linalg.yield %n : f32
  }
  %y = memref.alloc(%b, %t) : memref<?x?x64xf32>
  linalg.fill ins(%zero : f32) outs(%y : memref<?x?x64xf32>)
  linalg.generic {indexing_maps = [#a, #w, #o], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%xn, %w : memref<?x?x64xf32>, memref<64x64xf32>) outs(%y : memref<?x?x64xf32>)
      attrs = {blockc_codegen.gpu_mma_tiles = #blockc_codegen.gpu_mma_tiles<tile_m = 32, tile_n = 32, tile_k = 16, warps_m = 1, warps_n = 2, stages = 3>} {
  ^bb0(%in: f32, %wn: f32, %out: f32):
    %p = arith.mulf %in, %wn : f32
    %s = arith.addf %out, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%y, %h : memref<?x?x64xf32>, memref<?x?x64xf32>) outs(%h : memref<?x?x64xf32>) {
  ^bb0(%yv: f32, %hv: f32, %out: f32):
    %s = arith.addf %hv, %yv : f32
    linalg.yield %s : f32
  }
  memref.dealloc %xn : memref<?x?x64xf32>
  memref.dealloc %y : memref<?x?x64xf32>
  return
}

// -----

#a = affine_map<(b, t, n, k) -> (b, t, k)>
#w = affine_map<(b, t, n, k) -> (n, k)>
#o = affine_map<(b, t, n, k) -> (b, t, n)>
#id = affine_map<(b, t, k) -> (b, t, k)>

// The generic between two projections is both the first one's consumer and
// the second one's producer: the first kernel computes it in its epilogue
// (the f32 buffer %f is never written), so the second kernel copies its
// output %act rather than evaluating it on %f.
// CHECK-LABEL: func.func @consumer_then_producer
// CHECK:         %[[ACT:.+]] = memref.alloc
// CHECK:         gpu.launch
// CHECK:           math.tanh
// CHECK:           memref.store %{{.+}}, %[[ACT]][
// CHECK:         } {blockc_codegen.kernel = #blockc_codegen.kernel<tensor_core_matmul>}
// CHECK:         gpu.launch
// CHECK:           nvgpu.device_async_copy %[[ACT]][
// CHECK-NOT:       math.tanh
// CHECK:         } {blockc_codegen.kernel = #blockc_codegen.kernel<tensor_core_matmul>}
func.func @consumer_then_producer(%x: memref<?x?x64xf32>, %w1: memref<64x64xf32>,
                                  %w2: memref<32x64xf32>, %y: memref<?x?x32xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %b = memref.dim %x, %c0 : memref<?x?x64xf32>
  %t = memref.dim %x, %c1 : memref<?x?x64xf32>
  %f = memref.alloc(%b, %t) : memref<?x?x64xf32>
  linalg.fill ins(%zero : f32) outs(%f : memref<?x?x64xf32>)
  linalg.generic {indexing_maps = [#a, #w, #o], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w1 : memref<?x?x64xf32>, memref<64x64xf32>) outs(%f : memref<?x?x64xf32>)
      attrs = {blockc_codegen.gpu_mma_tiles = #blockc_codegen.gpu_mma_tiles<tile_m = 32, tile_n = 32, tile_k = 16, warps_m = 1, warps_n = 2, stages = 3>} {
  ^bb0(%in: f32, %wn: f32, %out: f32):
    %p = arith.mulf %in, %wn : f32
    %s = arith.addf %out, %p : f32
    linalg.yield %s : f32
  }
  %act = memref.alloc(%b, %t) : memref<?x?x64xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%f : memref<?x?x64xf32>) outs(%act : memref<?x?x64xf32>) {
  ^bb0(%v: f32, %out: f32):
    %g = math.tanh %v : f32
    linalg.yield %g : f32
  }
  linalg.generic {indexing_maps = [#a, #w, #o], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%act, %w2 : memref<?x?x64xf32>, memref<32x64xf32>) outs(%y : memref<?x?x32xf32>)
      attrs = {blockc_codegen.gpu_mma_tiles = #blockc_codegen.gpu_mma_tiles<tile_m = 32, tile_n = 32, tile_k = 16, warps_m = 1, warps_n = 2, stages = 3>} {
  ^bb0(%in: f32, %wn: f32, %out: f32):
    %p = arith.mulf %in, %wn : f32
    %s = arith.addf %out, %p : f32
    linalg.yield %s : f32
  }
  memref.dealloc %f : memref<?x?x64xf32>
  memref.dealloc %act : memref<?x?x64xf32>
  return
}
