// RUN: blockc-opt %s -split-input-file --blockc-gpu-tile-reductions="chain-statistics=true fuse-apply=true" --canonicalize --cse | FileCheck %s
// RUN: blockc-opt %s -split-input-file --blockc-gpu-tile-reductions --canonicalize --cse | FileCheck %s --check-prefix=DEFAULT

// Row reductions (norm statistics) become one warp per output element:
// with a 32 x 4 gpu_map, 4 warps (128 threads) per block, grid
// ceil(B * T / 4). Where the row is contiguous (checked on the host: here
// only the base's 16-byte alignment is not known at compile time) lane l
// reads 16-byte vectors 4 l, 4 l + 128, ... (f32: 4 elements), combines
// them pairwise and folds them into its partial value; otherwise it folds
// elements l, l + 32, ... from the combiner's identity. Five xor shuffles
// combine the lanes; lane 0 folds the total into the output.

#x = affine_map<(b, t, k) -> (b, t, k)>
#r = affine_map<(b, t, k) -> (b, t)>

// CHECK-LABEL: func.func @sum_of_squares
// CHECK-DAG:     %[[ZERO:.+]] = arith.constant -0.000000e+00 : f32
// CHECK-DAG:     %[[B:.+]] = memref.dim %arg0, %c0
// CHECK-DAG:     %[[T:.+]] = memref.dim %arg0, %c1
// CHECK:         %[[ROWS:.+]] = arith.muli %[[B]], %[[T]]
// CHECK:         %[[BASE:.+]] = memref.extract_aligned_pointer_as_index %arg0
// CHECK:         %[[MIS:.+]] = arith.remui %[[BASE]], %c16
// CHECK:         %[[ALIGNED:.+]] = arith.cmpi eq, %[[MIS]], %c0
// CHECK:         %[[VOK:.+]] = arith.andi %{{.+}}, %[[ALIGNED]]
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
// CHECK:             %[[PART:.+]] = scf.if %[[VOK]] -> (f32) {
// CHECK:               %[[K0:.+]] = arith.muli %[[LANE]], %c4
// CHECK:               scf.for %[[K:.+]] = %[[K0]] to %c4096 step %c128 iter_args(%[[ACC:.+]] = %[[ZERO]]) -> (f32) {
// CHECK-NEXT:            %[[V:.+]] = vector.load %arg0[%[[BI]], %[[TI]], %[[K]]] {alignment = 16 : i64} : memref<?x?x4096xf32>, vector<4xf32>
// CHECK-NEXT:            %[[E0:.+]] = vector.extract %[[V]][0]
// CHECK-NEXT:            %[[E1:.+]] = vector.extract %[[V]][1]
// CHECK-NEXT:            %[[E2:.+]] = vector.extract %[[V]][2]
// CHECK-NEXT:            %[[E3:.+]] = vector.extract %[[V]][3]
// CHECK-NEXT:            %[[S0:.+]] = arith.mulf %[[E0]], %[[E0]]
// CHECK-NEXT:            %[[S1:.+]] = arith.mulf %[[E1]], %[[E1]]
// CHECK-NEXT:            %[[S2:.+]] = arith.mulf %[[E2]], %[[E2]]
// CHECK-NEXT:            %[[S3:.+]] = arith.mulf %[[E3]], %[[E3]]
// CHECK-NEXT:            %[[P01:.+]] = arith.addf %[[S0]], %[[S1]]
// CHECK-NEXT:            %[[P23:.+]] = arith.addf %[[S2]], %[[S3]]
// CHECK-NEXT:            %[[P:.+]] = arith.addf %[[P01]], %[[P23]]
// CHECK-NEXT:            %[[NEXT:.+]] = arith.addf %[[ACC]], %[[P]]
// CHECK-NEXT:            scf.yield %[[NEXT]]
// CHECK:             } else {
// CHECK:               scf.for %[[K:.+]] = %[[LANE]] to %c4096 step %c32 iter_args(%[[ACC:.+]] = %[[ZERO]]) -> (f32) {
// CHECK-NEXT:            %[[V:.+]] = memref.load %arg0[%[[BI]], %[[TI]], %[[K]]]
// CHECK-NEXT:            %[[SQ:.+]] = arith.mulf %[[V]], %[[V]]
// CHECK-NEXT:            %[[S:.+]] = arith.addf %[[ACC]], %[[SQ]]
// CHECK-NEXT:            scf.yield %[[S]]
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

// -----

#x = affine_map<(b, k) -> (b, k)>
#r = affine_map<(b, k) -> (b)>
#xt = affine_map<(b, k) -> (k, b)>

// 16-bit rows: vectors of 8 (16 bytes). A strided input is checked at run
// time (unit innermost stride, offset and strides multiples of 8, length a
// multiple of 8, aligned base) and read through a view with a static unit
// stride; a static length that is not a multiple of 8 and a row that is
// not the innermost dimension keep the scalar loop alone.
// CHECK-LABEL: func.func @vectors
// CHECK:         gpu.launch
// CHECK:           scf.if %{{.+}} -> (f32) {
// CHECK:             scf.for %{{.+}} = %{{.+}} to %c64 step %c256
// CHECK-NEXT:          vector.load %arg0[%{{.+}}, %{{.+}}] {alignment = 16 : i64} : memref<?x64xbf16>, vector<8xbf16>
// CHECK-COUNT-8:       vector.extract
// CHECK:           } else {
// CHECK:             scf.for %{{.+}} = %{{.+}} to %c64 step %c32
// CHECK-NEXT:          memref.load %arg0
// CHECK:         kernel<row_reduction>
// CHECK:         %[[LEN:.+]] = memref.dim %arg2, %c1
// CHECK:         %[[LREM:.+]] = arith.remui %[[LEN]], %c8
// CHECK:         %[[LOK:.+]] = arith.cmpi eq, %[[LREM]], %c0
// CHECK:         %{{.+}}, %[[OFF:.+]], %[[SIZES:.+]]:2, %[[STRIDES:.+]]:2 = memref.extract_strided_metadata %arg2
// CHECK:         %[[BITS:.+]] = arith.ori %[[OFF]], %[[STRIDES]]#0
// CHECK:         %[[UNIT:.+]] = arith.cmpi eq, %[[STRIDES]]#1, %c1
// CHECK:         %[[OK1:.+]] = arith.andi %[[LOK]], %[[UNIT]]
// CHECK:         %[[BREM:.+]] = arith.remui %[[BITS]], %c8
// CHECK:         %[[BOK:.+]] = arith.cmpi eq, %[[BREM]], %c0
// CHECK:         %[[OK2:.+]] = arith.andi %[[OK1]], %[[BOK]]
// CHECK:         %[[PTR:.+]] = memref.extract_aligned_pointer_as_index %arg2
// CHECK:         %[[PREM:.+]] = arith.remui %[[PTR]], %c16
// CHECK:         %[[POK:.+]] = arith.cmpi eq, %[[PREM]], %c0
// CHECK:         %[[OK:.+]] = arith.andi %[[OK2]], %[[POK]]
// CHECK:         %[[VIEW:.+]] = memref.reinterpret_cast %arg2 to offset: [%[[OFF]]], sizes: [%[[SIZES]]#0, %[[SIZES]]#1], strides: [%[[STRIDES]]#0, 1]
// CHECK:         gpu.launch
// CHECK:           scf.if %[[OK]] -> (f32) {
// CHECK:             scf.for %{{.+}} = %{{.+}} to %[[LEN]] step %c256
// CHECK-NEXT:          vector.load %[[VIEW]][%{{.+}}, %{{.+}}] {alignment = 16 : i64} : memref<?x?xf16, strided<[?, 1], offset: ?>>, vector<8xf16>
// CHECK:           } else {
// CHECK:             memref.load %arg2
// CHECK:         kernel<row_reduction>
// CHECK:         gpu.launch
// CHECK-NOT:       vector.load
// CHECK:           scf.for %{{.+}} = %{{.+}} to %c36 step %c32
// CHECK-NEXT:        memref.load %arg4
// CHECK:         kernel<row_reduction>
// CHECK:         gpu.launch
// CHECK-NOT:       vector.load
// CHECK:           scf.for %{{.+}} = %{{.+}} to %c64 step %c32
// CHECK-NEXT:        memref.load %arg6
// CHECK:         kernel<row_reduction>
func.func @vectors(%x: memref<?x64xbf16>, %s: memref<?xf32>,
                   %v: memref<?x?xf16, strided<[?, ?], offset: ?>>,
                   %t: memref<?xf32>, %odd: memref<?x36xbf16>,
                   %u: memref<?xf32>, %tr: memref<64x?xbf16>,
                   %w: memref<?xf32>)
    attributes {blockc_codegen.gpu_map = #blockc_codegen.gpu_map<threads_x = 32, threads_y = 8>} {
  linalg.generic {indexing_maps = [#x, #r],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<?x64xbf16>) outs(%s : memref<?xf32>) {
  ^bb0(%in: bf16, %out: f32):
    %e = arith.extf %in : bf16 to f32
    %a = arith.addf %out, %e : f32
    linalg.yield %a : f32
  }
  linalg.generic {indexing_maps = [#x, #r],
                  iterator_types = ["parallel", "reduction"]}
      ins(%v : memref<?x?xf16, strided<[?, ?], offset: ?>>)
      outs(%t : memref<?xf32>) {
  ^bb0(%in: f16, %out: f32):
    %e = arith.extf %in : f16 to f32
    %a = arith.addf %out, %e : f32
    linalg.yield %a : f32
  }
  linalg.generic {indexing_maps = [#x, #r],
                  iterator_types = ["parallel", "reduction"]}
      ins(%odd : memref<?x36xbf16>) outs(%u : memref<?xf32>) {
  ^bb0(%in: bf16, %out: f32):
    %e = arith.extf %in : bf16 to f32
    %a = arith.addf %out, %e : f32
    linalg.yield %a : f32
  }
  linalg.generic {indexing_maps = [#xt, #r],
                  iterator_types = ["parallel", "reduction"]}
      ins(%tr : memref<64x?xbf16>) outs(%w : memref<?xf32>) {
  ^bb0(%in: bf16, %out: f32):
    %e = arith.extf %in : bf16 to f32
    %a = arith.addf %out, %e : f32
    linalg.yield %a : f32
  }
  return
}

// -----

#x = affine_map<(b, t, k) -> (b, t, k)>
#r = affine_map<(b, t, k) -> (b, t)>

// A norm's two statistics, the second reading the first at its row: one
// kernel. Each warp computes max |x| of its row; every lane folds the
// total into the output (read here: its init is not known) and uses it as
// the second body's `%mx`, loaded nowhere; lane 0 stores both results.
// Without chain-statistics (the default): two kernels.
// DEFAULT-LABEL: func.func @norm_statistics
// DEFAULT-COUNT-2: kernel<row_reduction>
// DEFAULT-NOT:     kernel<row_reduction>
// DEFAULT:         return
// CHECK-LABEL: func.func @norm_statistics
// CHECK:         gpu.launch
// CHECK:           scf.if %{{.+}} -> (f32) {
// CHECK:             vector.load %arg0{{.+}} vector<8xbf16>
// CHECK:             arith.maximumf
// CHECK:           } else {
// CHECK-COUNT-5:   gpu.shuffle  xor
// CHECK:           %[[OLD:.+]] = memref.load %arg1[%[[BI:.+]], %[[TI:.+]]]
// CHECK-NEXT:      %[[MAX:.+]] = arith.maximumf %[[OLD]], %{{.+}}
// CHECK-NEXT:      %[[FIRST:.+]] = arith.cmpi eq, %{{.+}}, %c0
// CHECK-NEXT:      scf.if %[[FIRST]] {
// CHECK-NEXT:        memref.store %[[MAX]], %arg1[%[[BI]], %[[TI]]]
// CHECK:           scf.if %{{.+}} -> (f32) {
// CHECK:             scf.for
// CHECK:               vector.load %arg0{{.+}} vector<8xbf16>
// CHECK:               arith.cmpf ogt, %[[MAX]]
// CHECK:           } else {
// CHECK:             scf.for
// CHECK:               memref.load %arg0
// CHECK-NOT:           memref.load
// CHECK:               arith.cmpf ogt, %[[MAX]]
// CHECK-COUNT-5:   gpu.shuffle  xor
// CHECK:           scf.if %[[FIRST]] {
// CHECK-NEXT:        memref.load %arg2
// CHECK-NEXT:        arith.addf
// CHECK-NEXT:        memref.store %{{.+}}, %arg2[%[[BI]], %[[TI]]]
// CHECK:         kernel<row_reduction>
// CHECK-NOT:     gpu.launch
// CHECK-NOT:     linalg.generic
// CHECK:         return
func.func @norm_statistics(%x: memref<?x?x4096xbf16>, %m: memref<?x?xf32>,
                           %ss: memref<?x?xf32>)
    attributes {blockc_codegen.gpu_map = #blockc_codegen.gpu_map<threads_x = 32, threads_y = 8>} {
  %one = arith.constant 1.0 : f32
  %tiny = arith.constant 1.0e-30 : f32
  %huge = arith.constant 1.0e30 : f32
  linalg.generic {indexing_maps = [#x, #r],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x : memref<?x?x4096xbf16>) outs(%m : memref<?x?xf32>) {
  ^bb0(%in: bf16, %out: f32):
    %e = arith.extf %in : bf16 to f32
    %a = math.absf %e : f32
    %mx = arith.maximumf %out, %a : f32
    linalg.yield %mx : f32
  }
  linalg.generic {indexing_maps = [#x, #r, #r],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %m : memref<?x?x4096xbf16>, memref<?x?xf32>)
      outs(%ss : memref<?x?xf32>) {
  ^bb0(%in: bf16, %mx: f32, %out: f32):
    %e = arith.extf %in : bf16 to f32
    %gt = arith.cmpf ogt, %mx, %tiny : f32
    %lt = arith.cmpf olt, %mx, %huge : f32
    %ok = arith.andi %gt, %lt : i1
    %s = arith.select %ok, %mx, %one : f32
    %inv = arith.divf %one, %s : f32
    %y = arith.mulf %e, %inv : f32
    %sq = arith.mulf %y, %y : f32
    %acc = arith.addf %out, %sq : f32
    linalg.yield %acc : f32
  }
  return
}

// -----

#x = affine_map<(b, k) -> (b, k)>
#r = affine_map<(b, k) -> (b)>

// Two kernels: a copy into the first reduction's input between them (the
// first cannot move past it), and a reduction that does not read the other
// one's result.
// CHECK-LABEL: func.func @not_chained
// CHECK-COUNT-3: kernel<row_reduction>
// CHECK-NOT:     kernel<row_reduction>
func.func @not_chained(%x: memref<?x64xf32>, %y: memref<?x64xf32>,
                       %m: memref<?xf32>, %s: memref<?xf32>,
                       %t: memref<?xf32>)
    attributes {blockc_codegen.gpu_map = #blockc_codegen.gpu_map<threads_x = 32, threads_y = 8>} {
  linalg.generic {indexing_maps = [#x, #r],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<?x64xf32>) outs(%m : memref<?xf32>) {
  ^bb0(%in: f32, %out: f32):
    %mx = arith.maximumf %out, %in : f32
    linalg.yield %mx : f32
  }
  memref.copy %y, %x : memref<?x64xf32> to memref<?x64xf32>
  linalg.generic {indexing_maps = [#x, #r, #r],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x, %m : memref<?x64xf32>, memref<?xf32>) outs(%s : memref<?xf32>) {
  ^bb0(%in: f32, %mx: f32, %out: f32):
    %d = arith.subf %in, %mx : f32
    %a = arith.addf %out, %d : f32
    linalg.yield %a : f32
  }
  linalg.generic {indexing_maps = [#x, #r],
                  iterator_types = ["parallel", "reduction"]}
      ins(%y : memref<?x64xf32>) outs(%t : memref<?xf32>) {
  ^bb0(%in: f32, %out: f32):
    %a = arith.addf %out, %in : f32
    linalg.yield %a : f32
  }
  return
}

// -----

#x = affine_map<(b, t, k) -> (b, t, k)>
#r = affine_map<(b, t, k) -> (b, t)>
#g = affine_map<(b, t, k) -> (k)>

// A norm's apply after its statistic (fuse-apply): the same warps write
// the row once every lane holds the statistic, on the 16-byte path (x, the
// gain and the output pass the check) one 16-byte load of x and of the
// gain, the body per element and one 16-byte store per vector; the
// statistic is still stored.
// DEFAULT-LABEL: func.func @norm_apply
// DEFAULT:         kernel<row_reduction>
// DEFAULT:         linalg.generic
// CHECK-LABEL: func.func @norm_apply
// CHECK:         %[[GAINPTR:.+]] = memref.extract_aligned_pointer_as_index %arg1
// CHECK:         %[[OUTPTR:.+]] = memref.extract_aligned_pointer_as_index %arg3
// CHECK:         %[[OUTREM:.+]] = arith.remui %[[OUTPTR]], %c16
// CHECK:         %[[OUTOK:.+]] = arith.cmpi eq, %[[OUTREM]], %c0
// CHECK:         %[[OK:.+]] = arith.andi %{{.+}}, %[[OUTOK]]
// CHECK:         gpu.launch
// CHECK-COUNT-5:   gpu.shuffle  xor
// CHECK:           %[[OLD:.+]] = memref.load %arg2
// CHECK-NEXT:      %[[SS:.+]] = arith.addf %[[OLD]], %{{.+}} : f32
// CHECK:           scf.if %{{.+}} {
// CHECK-NEXT:        memref.store %[[SS]], %arg2
// CHECK:           scf.if %[[OK]] {
// CHECK:             scf.for %[[K:.+]] = %{{.+}} to %c4096 step %c256 {
// CHECK-NEXT:          vector.load %arg0[%{{.+}}, %{{.+}}, %[[K]]] {alignment = 16 : i64} : memref<?x?x4096xbf16>, vector<8xbf16>
// CHECK:               vector.load %arg1[%[[K]]] {alignment = 16 : i64} : memref<4096xbf16>, vector<8xbf16>
// CHECK:               arith.mulf %[[SS]]
// CHECK:               math.rsqrt
// CHECK:               %[[Y:.+]] = vector.from_elements {{.+}} : vector<8xbf16>
// CHECK-NEXT:          vector.store %[[Y]], %arg3[%{{.+}}, %{{.+}}, %[[K]]] {alignment = 16 : i64} : memref<?x?x4096xbf16>, vector<8xbf16>
// CHECK:           } else {
// CHECK:             scf.for
// CHECK:               memref.store %{{.+}}, %arg3
// CHECK:         kernel<row_reduction>
// CHECK-NOT:     gpu.launch
// CHECK-NOT:     linalg.generic
// CHECK:         return
func.func @norm_apply(%x: memref<?x?x4096xbf16>, %gain: memref<4096xbf16>,
                      %ss: memref<?x?xf32>, %y: memref<?x?x4096xbf16>)
    attributes {blockc_codegen.gpu_map = #blockc_codegen.gpu_map<threads_x = 32, threads_y = 8>} {
  %eps = arith.constant 1.0e-5 : f32
  %inv_d = arith.constant 2.44140625e-4 : f32
  linalg.generic {indexing_maps = [#x, #r],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x : memref<?x?x4096xbf16>) outs(%ss : memref<?x?xf32>) {
  ^bb0(%in: bf16, %out: f32):
    %e = arith.extf %in : bf16 to f32
    %sq = arith.mulf %e, %e : f32
    %acc = arith.addf %out, %sq : f32
    linalg.yield %acc : f32
  }
  linalg.generic {indexing_maps = [#x, #r, #g, #x],
                  iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x, %ss, %gain : memref<?x?x4096xbf16>, memref<?x?xf32>,
                           memref<4096xbf16>)
      outs(%y : memref<?x?x4096xbf16>) {
  ^bb0(%in: bf16, %s: f32, %gn: bf16, %out: bf16):
    %e = arith.extf %in : bf16 to f32
    %m = arith.mulf %s, %inv_d : f32
    %v = arith.addf %m, %eps : f32
    %r = math.rsqrt %v : f32
    %n = arith.mulf %e, %r : f32
    %g = arith.extf %gn : bf16 to f32
    %o = arith.mulf %n, %g : f32
    %t = arith.truncf %o : f32 to bf16
    linalg.yield %t : bf16
  }
  return
}

// -----

#x = affine_map<(b, k) -> (b, k)>
#r = affine_map<(b, k) -> (b)>

// Not fused: an apply that writes the buffer it reads (in place: not
// taken), and one that does not read the reduction's result.
// CHECK-LABEL: func.func @apply_not_fused
// CHECK:         kernel<row_reduction>
// CHECK:         linalg.generic
// CHECK:         kernel<row_reduction>
// CHECK:         linalg.generic
func.func @apply_not_fused(%x: memref<?x64xf32>, %s: memref<?xf32>,
                           %y: memref<?x64xf32>, %t: memref<?xf32>)
    attributes {blockc_codegen.gpu_map = #blockc_codegen.gpu_map<threads_x = 32, threads_y = 8>} {
  linalg.generic {indexing_maps = [#x, #r],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<?x64xf32>) outs(%s : memref<?xf32>) {
  ^bb0(%in: f32, %out: f32):
    %a = arith.addf %out, %in : f32
    linalg.yield %a : f32
  }
  linalg.generic {indexing_maps = [#x, #r, #x],
                  iterator_types = ["parallel", "parallel"]}
      ins(%x, %s : memref<?x64xf32>, memref<?xf32>) outs(%x : memref<?x64xf32>) {
  ^bb0(%in: f32, %sum: f32, %out: f32):
    %d = arith.subf %in, %sum : f32
    linalg.yield %d : f32
  }
  linalg.generic {indexing_maps = [#x, #r],
                  iterator_types = ["parallel", "reduction"]}
      ins(%y : memref<?x64xf32>) outs(%t : memref<?xf32>) {
  ^bb0(%in: f32, %out: f32):
    %a = arith.addf %out, %in : f32
    linalg.yield %a : f32
  }
  linalg.generic {indexing_maps = [#x, #x],
                  iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<?x64xf32>) outs(%y : memref<?x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %n = arith.negf %in : f32
    linalg.yield %n : f32
  }
  return
}
