// RUN: blockc-opt %s -split-input-file --blockc-nvptx-map-to-gpu-pipeline | FileCheck %s --implicit-check-not=linalg. --implicit-check-not=scf.parallel --implicit-check-not=memref.alloc --implicit-check-not=memref.dealloc --implicit-check-not=math.
// RUN: blockc-opt %S/../blockc/Inputs/tiny.mlir --blockc-lower-to-linalg-pipeline --blockc-nvptx-map-to-gpu-pipeline | FileCheck %s --check-prefix=BLOCK --implicit-check-not=transformer. --implicit-check-not=linalg. --implicit-check-not=scf.parallel --implicit-check-not=memref.alloc --implicit-check-not=memref.dealloc --implicit-check-not=math.

// Stage 2 of the NVPTX path: linalg on tensors becomes gpu.launch ops on
// buffers in managed memory. Elementwise ops whose output is written along
// its innermost dimension become 256-thread kernels with 16-byte accesses
// where a host check allows (blockc-gpu-tile-elementwise); other parallel
// loops are tiled 32 x 8 threads along the two innermost dimensions (x
// innermost; sizes: 1): the inner tile is a block of threads, the outer
// loops the grid; reductions stay sequential loops inside a thread. No
// linalg, parallel loop, host-only buffer or math op (a libdevice call
// later) is left.

// Three parallel dimensions: blocks of 256 threads, each computing 4 f32
// (one 16-byte load and store) or, when the host check fails, 4 elements
// 256 apart; the result buffer is managed memory, exp is expanded inside
// the kernel.
// CHECK-LABEL: func.func @elementwise_3d
// CHECK-SAME:    (%[[X:.+]]: memref<?x?x32xf32>) -> memref<?x?x32xf32>
// CHECK-DAG:     %[[C1:.+]] = arith.constant 1 : index
// CHECK-DAG:     %[[C256:.+]] = arith.constant 256 : index
// CHECK:         %[[OUT:.+]] = gpu.alloc host_shared (%{{.+}}, %{{.+}}) : memref<?x?x32xf32>
// CHECK:         gpu.launch blocks(%{{[^ ,)]+}}, %{{[^ ,)]+}}, %{{[^ ,)]+}}) in (%{{[^ ,)]+}} = %{{[^ ,)]+}}, %{{[^ ,)]+}} = %[[C1]], %{{[^ ,)]+}} = %[[C1]])
// CHECK-SAME:        threads(%{{[^ ,)]+}}, %{{[^ ,)]+}}, %{{[^ ,)]+}}) in (%{{[^ ,)]+}} = %[[C256]], %{{[^ ,)]+}} = %[[C1]], %{{[^ ,)]+}} = %[[C1]])
// CHECK:           scf.if
// CHECK:             vector.load %[[X]]{{.+}} vector<4xf32>
// CHECK:             llvm.inline_asm "cvt.rmi.f32.f32 $0, $1;"
// CHECK:             vector.store %{{.+}}, %[[OUT]]{{.+}} vector<4xf32>
// CHECK:           } else {
// CHECK:             memref.load %[[X]]
// CHECK:             llvm.inline_asm "cvt.rmi.f32.f32 $0, $1;"
// CHECK:             memref.store %{{.+}}, %[[OUT]]
// CHECK:           gpu.terminator
// CHECK-NOT:     gpu.launch
// CHECK:         return %[[OUT]] : memref<?x?x32xf32>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func @elementwise_3d(%x: tensor<?x?x32xf32>) -> tensor<?x?x32xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %b = tensor.dim %x, %c0 : tensor<?x?x32xf32>
  %t = tensor.dim %x, %c1 : tensor<?x?x32xf32>
  %init = tensor.empty(%b, %t) : tensor<?x?x32xf32>
  %r = linalg.generic {indexing_maps = [#id3, #id3],
                       iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x : tensor<?x?x32xf32>) outs(%init : tensor<?x?x32xf32>) {
  ^bb0(%a: f32, %o: f32):
    %e = math.exp %a : f32
    linalg.yield %e : f32
  } -> tensor<?x?x32xf32>
  return %r : tensor<?x?x32xf32>
}

// -----

// A matmul: the zero fill is a 32 x 8 elementwise kernel; the contraction
// is the shared-memory tiled kernel of blockc-gpu-tile-matmul (16 x 16
// threads, two 16 x 65 workgroup tiles, K in steps of 16 between barriers,
// fma.rn register tile), adding into the filled buffer.
// CHECK-LABEL: func.func @matmul
// CHECK-SAME:    (%[[A:.+]]: memref<?x32xf32>, %[[B:.+]]: memref<32x64xf32>)
// CHECK-DAG:     %[[C1:.+]] = arith.constant 1 : index
// CHECK-DAG:     %[[C8:.+]] = arith.constant 8 : index
// CHECK-DAG:     %[[C16:.+]] = arith.constant 16 : index
// CHECK-DAG:     %[[C32:.+]] = arith.constant 32 : index
// CHECK:         %[[OUT:.+]] = gpu.alloc host_shared (%{{.+}}) : memref<?x64xf32>
// CHECK:         gpu.launch
// CHECK-SAME:        threads(%{{[^ ,)]+}}, %{{[^ ,)]+}}, %{{[^ ,)]+}}) in (%{{[^ ,)]+}} = %[[C32]], %{{[^ ,)]+}} = %[[C8]], %{{[^ ,)]+}} = %[[C1]])
// CHECK:             memref.store %{{.+}}, %[[OUT]]
// CHECK:         gpu.launch blocks(%{{[^ ,)]+}}, %{{[^ ,)]+}}, %{{[^ ,)]+}}) in (%{{[^ ,)]+}} = %[[C1]], %{{[^ ,)]+}} = %{{[^ ,)]+}}, %{{[^ ,)]+}} = %[[C1]])
// CHECK-SAME:        threads(%{{[^ ,)]+}}, %{{[^ ,)]+}}, %{{[^ ,)]+}}) in (%{{[^ ,)]+}} = %[[C16]], %{{[^ ,)]+}} = %[[C16]], %{{[^ ,)]+}} = %[[C1]])
// CHECK-SAME:        workgroup(%[[AS:.+]] : memref<16x65xf32, #gpu.address_space<workgroup>>, %[[BS:.+]] : memref<16x65xf32, #gpu.address_space<workgroup>>)
// CHECK:           scf.for %{{.+}} = %{{.+}} to %[[C32]] step %[[C16]]
// CHECK:             memref.load %[[A]]
// CHECK:             memref.store %{{.+}}, %[[AS]]
// CHECK:             memref.load %[[B]]
// CHECK:             memref.store %{{.+}}, %[[BS]]
// CHECK:             gpu.barrier
// CHECK:             scf.for %{{.+}} = %{{.+}} to %[[C16]] step %[[C1]]
// CHECK-COUNT-16:      llvm.inline_asm "fma.rn.f32 $0, $1, $2, $3;"
// CHECK:             gpu.barrier
// CHECK-COUNT-16:  memref.store %{{.+}}, %[[OUT]]
// CHECK:           gpu.terminator
// CHECK:         return %[[OUT]] : memref<?x64xf32>
func.func @matmul(%a: tensor<?x32xf32>, %b: tensor<32x64xf32>) -> tensor<?x64xf32> {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %n = tensor.dim %a, %c0 : tensor<?x32xf32>
  %e = tensor.empty(%n) : tensor<?x64xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<?x64xf32>) -> tensor<?x64xf32>
  %r = linalg.matmul ins(%a, %b : tensor<?x32xf32>, tensor<32x64xf32>)
                     outs(%init : tensor<?x64xf32>) -> tensor<?x64xf32>
  return %r : tensor<?x64xf32>
}

// The tiny transformer block (stage 1 then stage 2): the entry takes and
// returns buffers, every intermediate buffer is allocated as managed memory
// and freed with an async gpu.dealloc (copies between them are gpu.memcpy),
// each norm is one warp-per-row kernel (256 x 1 x 1: 8 warps) computing
// its two statistics and then its apply (the square root in the same
// kernel), the other kernels are blocks of 32 x 8 x 1 threads or, for
// elementwise ops, 256 x 1 x 1, and the result is a managed buffer (a
// gpu.alloc, not an argument).
// BLOCK-LABEL: func.func @forward
// BLOCK-SAME:    (%{{.+}}: memref<?x?x32xf32>, %{{.+}}: memref<32xf32>
// BLOCK-SAME:    -> memref<?x?x32xf32>
// BLOCK-DAG:     %[[C1:.+]] = arith.constant 1 : index
// BLOCK-DAG:     %[[C8:.+]] = arith.constant 8 : index
// BLOCK-DAG:     %[[C32:.+]] = arith.constant 32 : index
// BLOCK-DAG:     %[[C256:.+]] = arith.constant 256 : index
// BLOCK:         gpu.alloc host_shared
// BLOCK:         gpu.launch
// BLOCK-SAME:        threads(%{{[^ ,)]+}}, %{{[^ ,)]+}}, %{{[^ ,)]+}}) in (%{{[^ ,)]+}} = %[[C256]], %{{[^ ,)]+}} = %[[C1]], %{{[^ ,)]+}} = %[[C1]])
// BLOCK:           gpu.shuffle  xor
// BLOCK:           gpu.shuffle  xor
// BLOCK-NOT:       gpu.launch
// BLOCK:           llvm.inline_asm "sqrt.rn.f32 $0, $1;"
// BLOCK:         gpu.launch
// BLOCK-SAME:        threads(%{{[^ ,)]+}}, %{{[^ ,)]+}}, %{{[^ ,)]+}}) in (%{{[^ ,)]+}} = %[[C32]], %{{[^ ,)]+}} = %[[C8]], %{{[^ ,)]+}} = %[[C1]])
// BLOCK:         %[[T1:.+]] = gpu.dealloc async [%{{.+}}]
// BLOCK-NEXT:    gpu.wait [%[[T1]]]
// BLOCK-NOT:     gpu.launch
// (gpu.alloc results print as %memref, arguments as %arg.)
// BLOCK:         return %memref{{(_[0-9]+)?}} : memref<?x?x32xf32>
