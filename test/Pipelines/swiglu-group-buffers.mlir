// RUN: blockc-opt %s --blockc-cpu-lower-to-linalg-pipeline="isa=avx2" \
// RUN:   --blockc-cpu-bufferize-pipeline="isa=avx2" | FileCheck %s \
// RUN:   --implicit-check-not=memref.copy --implicit-check-not=memref.alloc

// A grouped SwiGLU after bufferization: one [B, T, d_ff] buffer (the
// product, in up's output); the gate's tile is a buffer of each parallel
// iteration, freed there. No copy of a zero-filled gate buffer per block
// (blockc-cpu-fuse-activation gives the dead gate member a tile of the
// iteration's own).
// CHECK-LABEL: func.func @forward
// CHECK:       memref.alloc(%{{.+}}, %{{.+}}) {alignment = 64 : i64} : memref<?x?x48xf32>
// CHECK:       omp.parallel
// CHECK:       omp.wsloop
// CHECK:       %[[T:.+]] = memref.alloc(%{{.+}}, %{{.+}}, %{{.+}}) {alignment = 64 : i64} : memref<?x?x?xf32>
// CHECK:       memref.dealloc %[[T]]
// CHECK-LABEL: func.func @forward_prepare
func.func @forward(%x: tensor<?x?x32xf32>, %wg: tensor<48x32xf32>, %wu: tensor<48x32xf32>) -> tensor<?x?x48xf32> {
  %g = transformer.linear %x, %wg : tensor<?x?x32xf32>, tensor<48x32xf32> -> tensor<?x?x48xf32>
  %u = transformer.linear %x, %wu : tensor<?x?x32xf32>, tensor<48x32xf32> -> tensor<?x?x48xf32>
  %a = transformer.activation <silu> %g : tensor<?x?x48xf32>
  %m = arith.mulf %a, %u : tensor<?x?x48xf32>
  return %m : tensor<?x?x48xf32>
}
