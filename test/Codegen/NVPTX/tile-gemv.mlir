// RUN: blockc-opt %s -split-input-file --blockc-gpu-tile-gemv --canonicalize --cse | FileCheck %s
// RUN: blockc-opt %s -split-input-file --blockc-gpu-tile-gemv="fuse-epilogues=false" --canonicalize --cse | FileCheck %s --check-prefix=NOFUSE
// RUN: blockc-opt %s -split-input-file --blockc-gpu-tile-gemv --blockc-gpu-tile-matmul --canonicalize --cse | FileCheck %s --check-prefix=DISPATCH

// The weight-streaming kernel of small-M contractions (decode steps;
// docs/GPU.md#decoding): a warp per output column reads the weight row and
// the activation rows in 16-byte vectors (vector<8xbf16>), accumulates
// vector<8xf32> FMAs, reduces over the vector and the warp (five
// gpu.shuffle xor) and one lane per result writes it through the fused
// epilogue of the tensor-core kernels.

#a = affine_map<(b, t, n, k) -> (b, t, k)>
#w = affine_map<(b, t, n, k) -> (n, k)>
#o = affine_map<(b, t, n, k) -> (b, t, n)>
#id = affine_map<(b, t, n) -> (b, t, n)>

// K = 688 (86 vectors of 8): with unroll = 2 a warp step covers 64
// vectors, so one full step (canonicalised into straight-line code) and a
// guarded tail of 22 vectors (lanes >= 22 read the last vector and keep
// their sums). The zero fill and the f32 buffer are gone; lane 0 rounds
// the sum to bf16 and stores it.
// CHECK-LABEL: func.func @round_to_bf16
// CHECK-NOT:     linalg.fill
// CHECK:         %[[B:.+]] = memref.dim %arg0, %c0
// CHECK:         gpu.launch blocks({{.*}}) in ({{.*}} = %c20, {{.*}} = %c1, {{.*}} = %c1) threads(%[[TID:[^,]+]], {{.*}}) in ({{.*}} = %c64, {{.*}} = %c1, {{.*}} = %c1)
// CHECK:           %[[LANE:.+]] = arith.remui %[[TID]], %c32
// CHECK:           %[[N:.+]] = arith.minui %{{.+}}, %c39
// CHECK:           scf.for %[[M:.+]] = %c0 to %[[B]] step %c1 {
// CHECK:             %[[K0:.+]] = arith.muli %[[LANE]], %c8
// CHECK:             vector.load %arg1[%[[N]], %[[K0]]] {alignment = 16 : i64} : memref<40x688xbf16>, vector<8xbf16>
// CHECK:             vector.load %arg0[%{{.+}}, %c0, %[[K0]]] {alignment = 16 : i64} : memref<?x1x688xbf16>, vector<8xbf16>
// CHECK:             vector.load %arg1
// CHECK:             vector.load %arg0
// CHECK:             math.fma {{.*}} : vector<8xf32>
// CHECK:             math.fma {{.*}} : vector<8xf32>
// CHECK:             %[[GUARD:.+]] = arith.cmpi ult, %[[LANE]], %c22
// CHECK:             %[[LAST:.+]] = arith.minui %[[LANE]], %c21
// CHECK:             %[[KT:.+]] = arith.muli %[[LAST]], %c8
// CHECK:             %[[K:.+]] = arith.addi %[[KT]], %c512
// CHECK:             vector.load %arg1[%[[N]], %[[K]]]
// CHECK:             vector.load %arg0[%{{.+}}, %c0, %[[K]]]
// CHECK:             %[[FMA:.+]] = math.fma
// CHECK:             %[[ACC:.+]] = arith.select %[[GUARD]], %[[FMA]], %{{.+}} : vector<8xf32>
// CHECK:             %[[S:.+]] = vector.reduction <add>, %[[ACC]] : vector<8xf32> into f32
// CHECK:             gpu.shuffle  xor %[[S]], %c16_i32, %c32_i32 : f32
// CHECK:             gpu.shuffle  xor %{{.+}}, %c8_i32, %c32_i32 : f32
// CHECK:             gpu.shuffle  xor %{{.+}}, %c4_i32, %c32_i32 : f32
// CHECK:             gpu.shuffle  xor %{{.+}}, %c2_i32, %c32_i32 : f32
// CHECK:             gpu.shuffle  xor %{{.+}}, %c1_i32, %c32_i32 : f32
// CHECK-NEXT:        %[[SUM:.+]] = arith.addf
// CHECK-NEXT:        %[[MINE:.+]] = arith.cmpi eq, %[[LANE]], %c0
// CHECK-NEXT:        %[[W:.+]] = arith.andi %[[MINE]]
// CHECK-NEXT:        scf.if %[[W]] {
// CHECK-NEXT:          %[[V:.+]] = arith.addf %[[SUM]], %cst
// CHECK-NEXT:          %[[R:.+]] = arith.truncf %[[V]] : f32 to bf16
// CHECK-NEXT:          memref.store %[[R]], %arg2[%{{.+}}, %c0, %[[N]]] : memref<?x1x40xbf16>
// CHECK:         } {blockc_codegen.kernel = #blockc_codegen.kernel<gemv>}
// CHECK-NOT:     linalg.generic
// CHECK-NOT:     memref.alloc
// CHECK:         return
// Without fusion the kernel stores the f32 sum (from the evaluated zero)
// and the rounding stays a linalg op.
// NOFUSE-LABEL: func.func @round_to_bf16
// NOFUSE-NOT:     linalg.fill
// NOFUSE:         %[[ACC:.+]] = memref.alloc
// NOFUSE:         gpu.launch
// NOFUSE:             scf.if
// NOFUSE-NEXT:          %[[V:.+]] = arith.addf %{{.+}}, %cst
// NOFUSE-NEXT:          memref.store %[[V]], %[[ACC]][
// NOFUSE:         kernel<gemv>
// NOFUSE:         linalg.generic {{.+}} ins(%[[ACC]] : memref<?x1x40xf32>) outs(%arg2 : memref<?x1x40xbf16>)
// A dynamic M that also has tensor-core tiles is left to
// blockc-gpu-tile-matmul, which builds both kernels and picks the
// weight-streaming one when M <= max_m at run time.
// Without tensor-core tiles, blockc-gpu-tile-matmul finds nothing left.
// DISPATCH-LABEL: func.func @round_to_bf16
// DISPATCH-NOT:     arith.cmpi ule
// DISPATCH:         kernel<gemv>
// DISPATCH-NOT:     tensor_core_matmul
func.func @round_to_bf16(%x: memref<?x1x688xbf16>, %w: memref<40x688xbf16>,
                         %y: memref<?x1x40xbf16>) {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %b = memref.dim %x, %c0 : memref<?x1x688xbf16>
  %acc = memref.alloc(%b) : memref<?x1x40xf32>
  linalg.fill ins(%zero : f32) outs(%acc : memref<?x1x40xf32>)
  linalg.generic {indexing_maps = [#a, #w, #o],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<?x1x688xbf16>, memref<40x688xbf16>)
      outs(%acc : memref<?x1x40xf32>)
      attrs = {blockc_codegen.gpu_gemv = #blockc_codegen.gpu_gemv<warps = 2, columns = 1, rows = 1, unroll = 2, max_m = 64>} {
  ^bb0(%in: bf16, %wn: bf16, %out: f32):
    %e0 = arith.extf %in : bf16 to f32
    %e1 = arith.extf %wn : bf16 to f32
    %p = arith.mulf %e0, %e1 : f32
    %s = arith.addf %out, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id, #id],
                  iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%acc : memref<?x1x40xf32>) outs(%y : memref<?x1x40xbf16>) {
  ^bb0(%in: f32, %out: bf16):
    %v = arith.truncf %in : f32 to bf16
    linalg.yield %v : bf16
  }
  memref.dealloc %acc : memref<?x1x40xf32>
  return
}

// -----

#a = affine_map<(b, t, n, k) -> (b, t, k)>
#w = affine_map<(b, t, n, k) -> (n, k)>
#o = affine_map<(b, t, n, k) -> (b, t, n)>
#id = affine_map<(b, t, n) -> (b, t, n)>

// A gate/up pair with its SwiGLU consumer: one kernel, each lane reads
// both weights' rows (two columns per warp, two rows per chunk: 2 x 2 x 2
// vector<8xf32> sums), lane 2 r + c evaluates silu(gate) * up of row r,
// column c; the last M % 2 rows go one at a time.
// CHECK-LABEL: func.func @gate_up
// CHECK-NOT:     linalg.fill
// CHECK:         gpu.launch blocks({{.*}}) in ({{.*}} = %c6, {{.*}} = %c1, {{.*}} = %c1) threads({{.*}}) in ({{.*}} = %c128,
// CHECK:           %[[HALF:.+]] = arith.divui %{{.+}}, %c2
// CHECK-NEXT:      %[[FULL:.+]] = arith.muli %[[HALF]], %c2
// CHECK:           scf.for %{{.+}} = %c0 to %[[FULL]] step %c2 {
// CHECK-COUNT-4:     vector.load %arg{{[12]}}[
// CHECK-COUNT-2:     vector.load %arg0[
// CHECK-COUNT-8:     math.fma
// CHECK-COUNT-40:    gpu.shuffle  xor
// CHECK:             scf.if
// CHECK:               %[[G:.+]] = arith.addf
// CHECK-NEXT:          %[[U:.+]] = arith.addf
// CHECK-NEXT:          %[[NEG:.+]] = arith.negf %[[G]]
// CHECK-NEXT:          math.exp %[[NEG]]
// CHECK:               arith.mulf %{{.+}}, %[[U]]
// CHECK:               memref.store {{.+}} : memref<?x1x48xbf16>
// CHECK-COUNT-3:     scf.if
// CHECK:           scf.for %{{.+}} = %[[FULL]] to %{{.+}} step %c1 {
// CHECK-COUNT-4:     vector.load %arg{{[12]}}[
// CHECK-COUNT-1:     vector.load %arg0[
// CHECK-COUNT-4:     math.fma
// CHECK-COUNT-20:    gpu.shuffle  xor
// CHECK:         kernel<gemv>
// CHECK-NOT:     linalg.generic
// CHECK:         return
// NOFUSE-LABEL: func.func @gate_up
// NOFUSE-COUNT-2: kernel<gemv>
// NOFUSE:         linalg.generic
func.func @gate_up(%x: memref<?x1x256xbf16>, %wg: memref<48x256xbf16>,
                   %wu: memref<48x256xbf16>, %y: memref<?x1x48xbf16>) {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %b = memref.dim %x, %c0 : memref<?x1x256xbf16>
  %g = memref.alloc(%b) : memref<?x1x48xf32>
  linalg.fill ins(%zero : f32) outs(%g : memref<?x1x48xf32>)
  %u = memref.alloc(%b) : memref<?x1x48xf32>
  linalg.fill ins(%zero : f32) outs(%u : memref<?x1x48xf32>)
  linalg.generic {indexing_maps = [#a, #w, #o],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %wg : memref<?x1x256xbf16>, memref<48x256xbf16>)
      outs(%g : memref<?x1x48xf32>)
      attrs = {blockc_codegen.gpu_gemv = #blockc_codegen.gpu_gemv<warps = 4, columns = 2, rows = 2, unroll = 1, max_m = 64>} {
  ^bb0(%in: bf16, %wn: bf16, %out: f32):
    %e0 = arith.extf %in : bf16 to f32
    %e1 = arith.extf %wn : bf16 to f32
    %p = arith.mulf %e0, %e1 : f32
    %s = arith.addf %out, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#a, #w, #o],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %wu : memref<?x1x256xbf16>, memref<48x256xbf16>)
      outs(%u : memref<?x1x48xf32>)
      attrs = {blockc_codegen.gpu_gemv = #blockc_codegen.gpu_gemv<warps = 4, columns = 2, rows = 2, unroll = 1, max_m = 64>} {
  ^bb0(%in: bf16, %wn: bf16, %out: f32):
    %e0 = arith.extf %in : bf16 to f32
    %e1 = arith.extf %wn : bf16 to f32
    %p = arith.mulf %e0, %e1 : f32
    %s = arith.addf %out, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id, #id, #id],
                  iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%g, %u : memref<?x1x48xf32>, memref<?x1x48xf32>) outs(%y : memref<?x1x48xbf16>) {
  ^bb0(%a: f32, %c: f32, %out: bf16):
    %n = arith.negf %a : f32
    %e = math.exp %n : f32
    %one = arith.constant 1.0 : f32
    %d = arith.addf %one, %e : f32
    %s = arith.divf %a, %d : f32
    %m = arith.mulf %s, %c : f32
    %v = arith.truncf %m : f32 to bf16
    linalg.yield %v : bf16
  }
  memref.dealloc %g : memref<?x1x48xf32>
  memref.dealloc %u : memref<?x1x48xf32>
  return
}

// -----

#a = affine_map<(b, t, n, k) -> (b, t, k)>
#w = affine_map<(b, t, n, k) -> (n, k)>
#o = affine_map<(b, t, n, k) -> (b, t, n)>
#id = affine_map<(b, t, n) -> (b, t, n)>

// The run-time choice: blockc-gpu-tile-gemv leaves an op with a dynamic M
// and tensor-core tiles alone; blockc-gpu-tile-matmul builds the
// weight-streaming kernel for M <= max_m and its tensor-core kernel
// otherwise, both with the fused epilogue (the fill is gone).
// CHECK-LABEL: func.func @dispatch
// CHECK-NOT:     gpu.launch
// CHECK:         linalg.fill
// CHECK:         linalg.generic
// DISPATCH-LABEL: func.func @dispatch
// DISPATCH-NOT:     linalg.fill
// DISPATCH:         %[[B:.+]] = memref.dim %arg0, %c0
// DISPATCH:         %[[SMALL:.+]] = arith.cmpi ule, %[[B]], %c8
// DISPATCH-NEXT:    scf.if %[[SMALL]] {
// DISPATCH-NEXT:      gpu.launch
// DISPATCH:             vector.load
// DISPATCH:             gpu.shuffle
// DISPATCH:             arith.truncf
// DISPATCH:           } {blockc_codegen.kernel = #blockc_codegen.kernel<gemv>}
// DISPATCH-NEXT:    } else {
// DISPATCH:           gpu.launch
// DISPATCH:             nvgpu.mma.sync
// DISPATCH:             arith.truncf
// DISPATCH:           } {blockc_codegen.kernel = #blockc_codegen.kernel<tensor_core_matmul>}
// DISPATCH-NEXT:    }
// DISPATCH-NOT:     linalg.generic
func.func @dispatch(%x: memref<?x1x688xbf16>, %w: memref<40x688xbf16>,
                         %y: memref<?x1x40xbf16>) {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %b = memref.dim %x, %c0 : memref<?x1x688xbf16>
  %acc = memref.alloc(%b) : memref<?x1x40xf32>
  linalg.fill ins(%zero : f32) outs(%acc : memref<?x1x40xf32>)
  linalg.generic {indexing_maps = [#a, #w, #o],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<?x1x688xbf16>, memref<40x688xbf16>)
      outs(%acc : memref<?x1x40xf32>)
      attrs = {blockc_codegen.gpu_gemv = #blockc_codegen.gpu_gemv<warps = 2, columns = 1, rows = 1, unroll = 2, max_m = 8>, blockc_codegen.gpu_mma_tiles = #blockc_codegen.gpu_mma_tiles<tile_m = 32, tile_n = 64, tile_k = 16, warps_m = 1, warps_n = 2, stages = 3>} {
  ^bb0(%in: bf16, %wn: bf16, %out: f32):
    %e0 = arith.extf %in : bf16 to f32
    %e1 = arith.extf %wn : bf16 to f32
    %p = arith.mulf %e0, %e1 : f32
    %s = arith.addf %out, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id, #id],
                  iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%acc : memref<?x1x40xf32>) outs(%y : memref<?x1x40xbf16>) {
  ^bb0(%in: f32, %out: bf16):
    %v = arith.truncf %in : f32 to bf16
    linalg.yield %v : bf16
  }
  memref.dealloc %acc : memref<?x1x40xf32>
  return
}

// -----

#a = affine_map<(b, t, n, k) -> (b, t, k)>
#w = affine_map<(b, t, n, k) -> (n, k)>
#o = affine_map<(b, t, n, k) -> (b, t, n)>
#id = affine_map<(b, t, n) -> (b, t, n)>

// A static M <= max_m (3 rows: one chunk of 2, then one row; both loops
// fold to straight-line code): only the weight-streaming kernel, whatever
// tiles the op also carries.
// CHECK-LABEL: func.func @static_rows
// CHECK:         gpu.launch
// CHECK-NOT:       scf.for
// CHECK:           vector.load %arg1[
// CHECK-NEXT:      arith.extf
// CHECK-NEXT:      vector.load %arg0[%c0, %c0,
// CHECK-NEXT:      arith.extf
// CHECK-NEXT:      vector.load %arg0[%c1, %c0,
// CHECK:           vector.load %arg0[%c2, %c0,
// CHECK:         kernel<gemv>
// DISPATCH-LABEL: func.func @static_rows
// DISPATCH-NOT:     tensor_core_matmul
// DISPATCH:         kernel<gemv>
// DISPATCH-NOT:     tensor_core_matmul
func.func @static_rows(%x: memref<3x1x688xbf16>, %w: memref<40x688xbf16>,
                         %y: memref<3x1x40xbf16>) {
  %zero = arith.constant 0.0 : f32
  %acc = memref.alloc() : memref<3x1x40xf32>
  linalg.fill ins(%zero : f32) outs(%acc : memref<3x1x40xf32>)
  linalg.generic {indexing_maps = [#a, #w, #o],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<3x1x688xbf16>, memref<40x688xbf16>)
      outs(%acc : memref<3x1x40xf32>)
      attrs = {blockc_codegen.gpu_gemv = #blockc_codegen.gpu_gemv<warps = 2, columns = 1, rows = 2, unroll = 2, max_m = 64>, blockc_codegen.gpu_mma_tiles = #blockc_codegen.gpu_mma_tiles<tile_m = 32, tile_n = 64, tile_k = 16, warps_m = 1, warps_n = 2, stages = 3>} {
  ^bb0(%in: bf16, %wn: bf16, %out: f32):
    %e0 = arith.extf %in : bf16 to f32
    %e1 = arith.extf %wn : bf16 to f32
    %p = arith.mulf %e0, %e1 : f32
    %s = arith.addf %out, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id, #id],
                  iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%acc : memref<3x1x40xf32>) outs(%y : memref<3x1x40xbf16>) {
  ^bb0(%in: f32, %out: bf16):
    %v = arith.truncf %in : f32 to bf16
    linalg.yield %v : bf16
  }
  memref.dealloc %acc : memref<3x1x40xf32>
  return
}
