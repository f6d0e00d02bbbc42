// RUN: blockc-opt %s -split-input-file --blockc-gpu-select-tiles --blockc-gpu-tile-matmul --canonicalize --cse | FileCheck %s

// A projection y[b, t, n] += x[b, t, k] * W[n, k] on buffers: M is (b, t)
// flattened, N = 48, K = 40. With the tiles blockc-gpu-select-tiles chooses
// (64 x 64 x 16 on 16 x 16 threads): grid (ceil(48/64), ceil(B*T/64), 1), 16 x 16
// threads, two padded 16 x 65 shared tiles; the K loop steps by 16 with a
// barrier after the copies and after the 16 x 16-element register tile
// update (4 x 4 fma per thread and k); the epilogue adds 16 bounds-checked
// results into y.
// CHECK-LABEL: func.func @projection
// CHECK-SAME:    (%[[X:.+]]: memref<?x?x40xf32>, %[[W:.+]]: memref<48x40xf32>, %[[Y:.+]]: memref<?x?x48xf32>)
// CHECK-DAG:     %[[C0:.+]] = arith.constant 0 : index
// CHECK-DAG:     %[[C1:.+]] = arith.constant 1 : index
// CHECK-DAG:     %[[C16:.+]] = arith.constant 16 : index
// CHECK-DAG:     %[[C40:.+]] = arith.constant 40 : index
// CHECK-DAG:     %[[C64:.+]] = arith.constant 64 : index
// CHECK-DAG:     %[[B:.+]] = memref.dim %[[X]], %[[C0]]
// CHECK-DAG:     %[[T:.+]] = memref.dim %[[X]], %[[C1]]
// CHECK:         %[[BT:.+]] = arith.muli %[[B]], %[[T]] : index
// CHECK:         %[[GY:.+]] = arith.ceildivui %[[BT]], %[[C64]] : index
// CHECK:         gpu.launch blocks(%{{[^ ,]+}}, %{{[^ ,]+}}, %{{[^ ,]+}}) in (%{{[^ ,]+}} = %[[C1]], %{{[^ ,]+}} = %[[GY]], %{{[^ ,]+}} = %[[C1]])
// CHECK-SAME:        threads(%[[TX:[^ ,]+]], %[[TY:[^ ,]+]], %{{[^ ,]+}}) in (%{{[^ ,]+}} = %[[C16]], %{{[^ ,]+}} = %[[C16]], %{{[^ ,]+}} = %[[C1]])
// CHECK-SAME:        workgroup(%[[AS:[^ ,]+]] : memref<16x65xf32, #gpu.address_space<workgroup>>, %[[BS:[^ ,]+]] : memref<16x65xf32, #gpu.address_space<workgroup>>)
// CHECK:           scf.for %{{.+}} = %[[C0]] to %[[C40]] step %[[C16]] iter_args(
// CHECK:             memref.load %[[X]]
// CHECK:             memref.store %{{.+}}, %[[AS]]
// CHECK-COUNT-3:     memref.load %[[X]]
// CHECK:             memref.load %[[W]]
// CHECK:             memref.store %{{.+}}, %[[BS]]
// CHECK-COUNT-3:     memref.load %[[W]]
// CHECK:             gpu.barrier
// CHECK:             scf.for %[[KK:.+]] = %[[C0]] to %[[C16]] step %[[C1]] iter_args(
// CHECK:               memref.load %[[AS]][%[[KK]], %[[TY]]]
// CHECK:               memref.load %[[BS]][%[[KK]], %[[TX]]]
// CHECK-COUNT-16:      math.fma
// CHECK:               scf.yield
// CHECK:             gpu.barrier
// CHECK-COUNT-16:  memref.store %{{.+}}, %[[Y]]
// CHECK:           gpu.terminator
// CHECK-NEXT:    } {blockc_codegen.kernel = #blockc_codegen.kernel<tiled_matmul>}
// CHECK-NOT:     linalg.generic
// CHECK:         return
func.func @projection(%x: memref<?x?x40xf32>, %w: memref<48x40xf32>, %y: memref<?x?x48xf32>) {
  linalg.generic {
      indexing_maps = [affine_map<(b, t, n, k) -> (b, t, k)>,
                       affine_map<(b, t, n, k) -> (n, k)>,
                       affine_map<(b, t, n, k) -> (b, t, n)>],
      iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<?x?x40xf32>, memref<48x40xf32>) outs(%y : memref<?x?x48xf32>) {
  ^bb0(%a: f32, %bb: f32, %acc: f32):
    %p = arith.mulf %a, %bb : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Pinned tiles (kept by blockc-gpu-select-tiles): 32 x 128 tiles, k steps
// of 8, 32 x 8 threads: 4 x 4 registers per thread, shared tiles 8 x 33 and
// 8 x 129, grid (ceil(48/128), ceil(B*T/32), 1).
// CHECK-LABEL: func.func @projection_pinned
// CHECK-DAG:     %[[C8:.+]] = arith.constant 8 : index
// CHECK-DAG:     %[[C32:.+]] = arith.constant 32 : index
// CHECK:         %[[GY:.+]] = arith.ceildivui %{{.+}}, %[[C32]] : index
// CHECK:         gpu.launch blocks(%{{[^ ,]+}}, %{{[^ ,]+}}, %{{[^ ,]+}}) in (%{{[^ ,]+}} = %{{[^ ,]+}}, %{{[^ ,]+}} = %[[GY]], %{{[^ ,]+}} = %{{[^ ,]+}})
// CHECK-SAME:        threads(%{{[^ ,]+}}, %{{[^ ,]+}}, %{{[^ ,]+}}) in (%{{[^ ,]+}} = %[[C32]], %{{[^ ,]+}} = %[[C8]], %{{[^ ,]+}} = %{{[^ ,]+}})
// CHECK-SAME:        workgroup(%{{.+}} : memref<8x33xf32, #gpu.address_space<workgroup>>, %{{.+}} : memref<8x129xf32, #gpu.address_space<workgroup>>)
// CHECK:           scf.for
// CHECK:             scf.for
// CHECK-COUNT-16:      math.fma
// CHECK:         return
func.func @projection_pinned(%x: memref<?x?x40xf32>, %w: memref<48x40xf32>, %y: memref<?x?x48xf32>) {
  linalg.generic {
      indexing_maps = [affine_map<(b, t, n, k) -> (b, t, k)>,
                       affine_map<(b, t, n, k) -> (n, k)>,
                       affine_map<(b, t, n, k) -> (b, t, n)>],
      iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<?x?x40xf32>, memref<48x40xf32>) outs(%y : memref<?x?x48xf32>)
      attrs = {blockc_codegen.gpu_matmul_tiles = #blockc_codegen.gpu_matmul_tiles<tile_m = 32, tile_n = 128, tile_k = 8, threads_x = 32, threads_y = 8>} {
  ^bb0(%a: f32, %bb: f32, %acc: f32):
    %p = arith.mulf %a, %bb : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A named batch matmul (batch on the grid's z, B[k, n] operand: copied with
// consecutive threads along n) is tiled as well.
// CHECK-LABEL: func.func @batch_matmul
// CHECK-DAG:     %[[C1:.+]] = arith.constant 1 : index
// CHECK-DAG:     %[[C3:.+]] = arith.constant 3 : index
// CHECK:         gpu.launch blocks(%{{[^ ,]+}}, %{{[^ ,]+}}, %[[BZ:[^ ,]+]]) in (%{{[^ ,]+}} = %[[C1]], %{{[^ ,]+}} = %[[C1]], %{{[^ ,]+}} = %[[C3]])
// CHECK:           %[[BATCH:.+]] = arith.remui %[[BZ]], %[[C3]] : index
// CHECK:           memref.load %{{.+}}[%[[BATCH]], 
// CHECK:         return
func.func @batch_matmul(%a: memref<3x8x16xf32>, %b: memref<3x16x8xf32>, %c: memref<3x8x8xf32>) {
  linalg.batch_matmul ins(%a, %b : memref<3x8x16xf32>, memref<3x16x8xf32>) outs(%c : memref<3x8x8xf32>)
  return
}

// -----

// Not contractions of the kernel's form: left alone. A max-reduction body,
// ops on tensors, and an index map that is not a projected permutation
// (the GQA score contraction reads kv head h floordiv 2).
// (The third body starts with an addf: found by blockc-fuzz-pipeline, the
// matcher used to dyn_cast a null operation there.)
// CHECK-LABEL: func.func @not_matched
// CHECK-NOT:     gpu.launch
// CHECK-COUNT-3: linalg.generic
// CHECK:         linalg.matmul
// CHECK-NOT:     gpu.launch
func.func @not_matched(%x: memref<4x8xf32>, %w: memref<6x8xf32>, %y: memref<4x6xf32>,
                       %q: memref<4x8xf32>, %k: memref<2x8xf32>, %s: memref<4x4xf32>,
                       %ta: tensor<4x8xf32>, %tb: tensor<8x4xf32>, %tc: tensor<4x4xf32>) -> tensor<4x4xf32> {
  linalg.generic {
      indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>,
                       affine_map<(m, n, k) -> (m, n)>],
      iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<4x8xf32>, memref<6x8xf32>) outs(%y : memref<4x6xf32>) {
  ^bb0(%a: f32, %bb: f32, %acc: f32):
    %p = arith.mulf %a, %bb : f32
    %m = arith.maximumf %acc, %p : f32
    linalg.yield %m : f32
  }
  linalg.generic {
      indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n floordiv 2, k)>,
                       affine_map<(m, n, k) -> (m, n)>],
      iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%q, %k : memref<4x8xf32>, memref<2x8xf32>) outs(%s : memref<4x4xf32>) {
  ^bb0(%a: f32, %bb: f32, %acc: f32):
    %p = arith.mulf %a, %bb : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  }
  linalg.generic {
      indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>,
                       affine_map<(m, n, k) -> (m, n)>],
      iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<4x8xf32>, memref<6x8xf32>) outs(%y : memref<4x6xf32>) {
  ^bb0(%a: f32, %bb: f32, %acc: f32):
    %p = arith.addf %a, %bb : f32
    %sum = arith.addf %acc, %p : f32
    linalg.yield %sum : f32
  }
  %r = linalg.matmul ins(%ta, %tb : tensor<4x8xf32>, tensor<8x4xf32>) outs(%tc : tensor<4x4xf32>) -> tensor<4x4xf32>
  return %r : tensor<4x4xf32>
}
