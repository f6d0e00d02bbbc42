// RUN: blockc-opt %s -split-input-file --blockc-gpu-tile-reductions --canonicalize --cse | FileCheck %s

// Row reductions (norm statistics) become one warp per output element:
// with a 32 x 4 gpu_map, 4 warps (128 threads) per block, grid
// ceil(B * T / 4). Lane l folds elements l, l + 32, ... from the
// combiner's identity; five xor shuffles combine the lanes; lane 0 folds
// the total into the output.

#x = affine_map<(b, t, k) -> (b, t, k)>
#r = affine_map<(b, t, k) -> (b, t)>

// CHECK-LABEL: func.func @sum_of_squares
// CHECK-DAG:     %[[ZERO:.+]] = arith.constant -0.000000e+00 : f32
// CHECK-DAG:     %[[B:.+]] = memref.dim %arg0, %c0
// CHECK-DAG:     %[[T:.+]] = memref.dim %arg0, %c1
// CHECK:         %[[ROWS:.+]] = arith.muli %[[B]], %[[T]]
// CHECK:         %[[GRID:.+]] = arith.ceildivui %[[ROWS]], %c4
// CHECK:         gpu.launch blocks(%[[BX:.+]], %{{.+}}, %{{.+}}) in (%{{.+}} = %[[GRID]], %{{.+}} = %c1, %{{.+}} = %c1) threads(%[[TX:.+]], %{{.+}}, %{{.+}}) in (%{{.+}} = %c128, %{{.+}} = %c1, %{{.+}} = %c1)
// CHECK:           %[[LANE:.+]] = arith.remui %[[TX]], %c32
// CHECK:           %[[WB:.+]] = arith.muli %[[BX]], %c4
// CHECK:           %[[W:.+]] = arith.divui %[[TX]], %c32
// CHECK:           %[[ROW:.+]] = arith.addi %[[WB]], %[[W]]
// CHECK:           %[[IN:.+]] = arith.cmpi ult, %[[ROW]], %[[ROWS]]
// CHECK:           scf.if %[[IN]] {
// CHECK:             %[[TI:.+]] = arith.remui %[[ROW]], %[[T]]
// CHECK:             %[[BI:.+]] = arith.divui %[[ROW]], %[[T]]
// CHECK:             %[[PART:.+]] = scf.for %[[K:.+]] = %[[LANE]] to %c4096 step %c32 iter_args(%[[ACC:.+]] = %[[ZERO]]) -> (f32) {
// CHECK-NEXT:          %[[V:.+]] = memref.load %arg0[%[[BI]], %[[TI]], %[[K]]]
// CHECK-NEXT:          %[[SQ:.+]] = arith.mulf %[[V]], %[[V]]
// CHECK-NEXT:          %[[S:.+]] = arith.addf %[[ACC]], %[[SQ]]
// CHECK-NEXT:          scf.yield %[[S]]
// CHECK:             %[[O16:.+]], %{{.+}} = gpu.shuffle  xor %[[PART]], %c16_i32, %c32_i32
// CHECK-NEXT:        %[[A16:.+]] = arith.addf %[[PART]], %[[O16]]
// CHECK-NEXT:        %[[O8:.+]], %{{.+}} = gpu.shuffle  xor %[[A16]], %c8_i32, %c32_i32
// CHECK-NEXT:        %[[A8:.+]] = arith.addf %[[A16]], %[[O8]]
// CHECK-COUNT-3:     gpu.shuffle  xor
// CHECK:             %[[FIRST:.+]] = arith.cmpi eq, %[[LANE]], %c0
// CHECK:             scf.if %[[FIRST]] {
// CHECK-NEXT:          %[[OLD:.+]] = memref.load %arg1[%[[BI]], %[[TI]]]
// CHECK-NEXT:          %[[NEW:.+]] = arith.addf %[[OLD]], %{{.+}}
// CHECK-NEXT:          memref.store %[[NEW]], %arg1[%[[BI]], %[[TI]]]
// CHECK:         } {blockc_codegen.kernel = #blockc_codegen.kernel<row_reduction>}
// CHECK-NOT:     linalg.generic
func.func @sum_of_squares(%x: memref<?x?x4096xf32>, %ss: memref<?x?xf32>)
    attributes {blockc_codegen.gpu_map = #blockc_codegen.gpu_map<threads_x = 32, threads_y = 4>} {
  linalg.generic {indexing_maps = [#x, #r],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x : memref<?x?x4096xf32>) outs(%ss : memref<?x?xf32>) {
  ^bb0(%in: f32, %out: f32):
    %sq = arith.mulf %in, %in : f32
    %s = arith.addf %out, %sq : f32
    linalg.yield %s : f32
  }
  return
}

// -----

#x = affine_map<(b, t, k) -> (b, t, k)>
#r = affine_map<(b, t, k) -> (b, t)>

// max |x| (the overflow guard of the RMSNorm lowering): identity -inf, the
// combiner maximumf in the shuffle steps and the final fold.
// CHECK-LABEL: func.func @max_abs
// CHECK:         arith.constant 0xFF800000 : f32
// CHECK:         gpu.launch
// CHECK:           scf.for
// CHECK:             math.absf
// CHECK:             arith.maximumf
// CHECK-COUNT-5:   gpu.shuffle  xor
// CHECK:           memref.load %arg1
// CHECK-NEXT:      arith.maximumf
// CHECK-NEXT:      memref.store
// CHECK:         kernel<row_reduction>
func.func @max_abs(%x: memref<?x?x64xf32>, %m: memref<?x?xf32>)
    attributes {blockc_codegen.gpu_map = #blockc_codegen.gpu_map<threads_x = 32, threads_y = 8>} {
  linalg.generic {indexing_maps = [#x, #r],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x : memref<?x?x64xf32>) outs(%m : memref<?x?xf32>) {
  ^bb0(%in: f32, %out: f32):
    %a = math.absf %in : f32
    %mx = arith.maximumf %out, %a : f32
    linalg.yield %mx : f32
  }
  return
}

// -----

#x = affine_map<(b, t, k) -> (b, t, k)>
#r = affine_map<(b, t, k) -> (b, t)>
#rk = affine_map<(b, t, k) -> (b, k)>

// Not rewritten: a reduction that is not the innermost loop, a body that
// reads the output twice (not a combiner), an f64 output.
// CHECK-LABEL: func.func @not_row_reductions
// CHECK-NOT:     gpu.launch
// CHECK-COUNT-3: linalg.generic
func.func @not_row_reductions(%x: memref<?x?x64xf32>, %o: memref<?x64xf32>,
                              %m: memref<?x?xf32>, %d: memref<?x?xf64>)
    attributes {blockc_codegen.gpu_map = #blockc_codegen.gpu_map<threads_x = 32, threads_y = 8>} {
  linalg.generic {indexing_maps = [#x, #rk],
                  iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%x : memref<?x?x64xf32>) outs(%o : memref<?x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %out, %in : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#x, #r],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x : memref<?x?x64xf32>) outs(%m : memref<?x?xf32>) {
  ^bb0(%in: f32, %out: f32):
    %p = arith.mulf %out, %in : f32
    %s = arith.addf %out, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#x, #r],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x : memref<?x?x64xf32>) outs(%d : memref<?x?xf64>) {
  ^bb0(%in: f32, %out: f64):
    %e = arith.extf %in : f32 to f64
    %s = arith.addf %out, %e : f64
    linalg.yield %s : f64
  }
  return
}

// -----

#x = affine_map<(b, k) -> (b, k)>
#r = affine_map<(b, k) -> (b)>

// An output that a zero fill initialised (through a copy, as bufferization
// leaves the statistics of a norm): lane 0 folds the total into the
// evaluated zero, and the fill, the copy and the filled buffer are gone.
// CHECK-LABEL: func.func @zero_init
// CHECK-NOT:     linalg.fill
// CHECK-NOT:     memref.copy
// CHECK:         %[[S:.+]] = memref.alloc
// CHECK-NOT:     memref.alloc
// CHECK:         gpu.launch
// CHECK-COUNT-5:   gpu.shuffle
// CHECK:           scf.if
// CHECK-NEXT:        %[[NEW:.+]] = arith.addf %{{.+}}, %cst
// CHECK-NEXT:        memref.store %[[NEW]], %[[S]][
// CHECK:         memref.copy %[[S]], %arg1
func.func @zero_init(%x: memref<?x64xf32>, %res: memref<?xf32>)
    attributes {blockc_codegen.gpu_map = #blockc_codegen.gpu_map<threads_x = 32, threads_y = 8>} {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %n = memref.dim %x, %c0 : memref<?x64xf32>
  %zeros = memref.alloc(%n) : memref<?xf32>
  linalg.fill ins(%zero : f32) outs(%zeros : memref<?xf32>)
  %s = memref.alloc(%n) : memref<?xf32>
  memref.copy %zeros, %s : memref<?xf32> to memref<?xf32>
  linalg.generic {indexing_maps = [#x, #r],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<?x64xf32>) outs(%s : memref<?xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.addf %out, %in : f32
    linalg.yield %v : f32
  }
  memref.copy %s, %res : memref<?xf32> to memref<?xf32>
  memref.dealloc %zeros : memref<?xf32>
  memref.dealloc %s : memref<?xf32>
  return
}
