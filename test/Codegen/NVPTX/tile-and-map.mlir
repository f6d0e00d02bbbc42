// RUN: blockc-opt %s -split-input-file -verify-diagnostics --blockc-gpu-select-tiles --blockc-gpu-tile-and-map | FileCheck %s

// Outermost scf.parallel loops are tiled (innermost dim by threads_x, the
// next by threads_y, the rest by 1, from the function's
// blockc_codegen.gpu_map: 32 x 8 as blockc-gpu-select-tiles chooses, or
// pinned in the input) and mapped innermost-first: the last dimension to
// block_x / thread_x (coalesced), then y, then z, and further outer
// dimensions to sequential loops.

// CHECK-LABEL: func.func @three_dims
// CHECK-DAG: %[[C8:.+]] = arith.constant 8 : index
// CHECK-DAG: %[[C32:.+]] = arith.constant 32 : index
// CHECK: %[[SY:.+]] = arith.muli %{{.+}}, %[[C8]] : index
// CHECK: %[[SX:.+]] = arith.muli %{{.+}}, %[[C32]] : index
// CHECK: scf.parallel (%{{.+}}, %{{.+}}, %{{.+}}) = {{.*}} step (%{{[^,]+}}, %[[SY]], %[[SX]])
// CHECK: scf.parallel
// CHECK: memref.store
// CHECK: } {mapping = [#gpu.loop_dim_map<processor = thread_z, map = (d0) -> (d0), bound = (d0) -> (d0)>, #gpu.loop_dim_map<processor = thread_y, map = (d0) -> (d0), bound = (d0) -> (d0)>, #gpu.loop_dim_map<processor = thread_x, map = (d0) -> (d0), bound = (d0) -> (d0)>]}
// CHECK: } {mapping = [#gpu.loop_dim_map<processor = block_z, map = (d0) -> (d0), bound = (d0) -> (d0)>, #gpu.loop_dim_map<processor = block_y, map = (d0) -> (d0), bound = (d0) -> (d0)>, #gpu.loop_dim_map<processor = block_x, map = (d0) -> (d0), bound = (d0) -> (d0)>]}
func.func @three_dims(%m: memref<?x?x?xf32>, %a: index, %b: index, %c: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %f = arith.constant 1.0 : f32
  scf.parallel (%i, %j, %k) = (%c0, %c0, %c0) to (%a, %b, %c) step (%c1, %c1, %c1) {
    memref.store %f, %m[%i, %j, %k] : memref<?x?x?xf32>
  }
  return
}

// -----

// A pinned mapping: 64 x 4 threads.
// CHECK-LABEL: func.func @three_dims_pinned
// CHECK-DAG: %[[C4:.+]] = arith.constant 4 : index
// CHECK-DAG: %[[C64:.+]] = arith.constant 64 : index
// CHECK: %[[SY:.+]] = arith.muli %{{.+}}, %[[C4]] : index
// CHECK: %[[SX:.+]] = arith.muli %{{.+}}, %[[C64]] : index
// CHECK: step (%{{[^,]+}}, %[[SY]], %[[SX]])
func.func @three_dims_pinned(%m: memref<?x?x?xf32>, %a: index, %b: index, %c: index)
    attributes {blockc_codegen.gpu_map = #blockc_codegen.gpu_map<threads_x = 64, threads_y = 4>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %f = arith.constant 1.0 : f32
  scf.parallel (%i, %j, %k) = (%c0, %c0, %c0) to (%a, %b, %c) step (%c1, %c1, %c1) {
    memref.store %f, %m[%i, %j, %k] : memref<?x?x?xf32>
  }
  return
}

// -----

// Four dimensions: the outermost becomes a sequential loop of the kernel.
// CHECK-LABEL: func.func @four_dims
// CHECK: } {mapping = [#gpu.loop_dim_map<processor = sequential, {{.*}}>, #gpu.loop_dim_map<processor = thread_z, {{.*}}>, #gpu.loop_dim_map<processor = thread_y, {{.*}}>, #gpu.loop_dim_map<processor = thread_x, {{.*}}>]}
// CHECK: } {mapping = [#gpu.loop_dim_map<processor = sequential, {{.*}}>, #gpu.loop_dim_map<processor = block_z, {{.*}}>, #gpu.loop_dim_map<processor = block_y, {{.*}}>, #gpu.loop_dim_map<processor = block_x, {{.*}}>]}
func.func @four_dims(%m: memref<?x?x?x?xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %f = arith.constant 1.0 : f32
  scf.parallel (%i, %j, %k, %l) = (%c0, %c0, %c0, %c0) to (%n, %n, %n, %n) step (%c1, %c1, %c1, %c1) {
    memref.store %f, %m[%i, %j, %k, %l] : memref<?x?x?x?xf32>
  }
  return
}

// -----

// One dimension: threads_x * threads_y threads along it (32 * 8 here).
// CHECK-LABEL: func.func @one_dim
// CHECK: %[[C256:.+]] = arith.constant 256 : index
// CHECK: %[[S:.+]] = arith.muli %{{.+}}, %[[C256]] : index
// CHECK: scf.parallel (%{{.+}}) = {{.*}} step (%[[S]])
// CHECK: processor = thread_x
// CHECK: processor = block_x
func.func @one_dim(%m: memref<?xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %f = arith.constant 1.0 : f32
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    memref.store %f, %m[%i] : memref<?xf32>
  }
  return
}

// -----

// 64 * 2 threads along a pinned one-dimensional loop.
// CHECK-LABEL: func.func @one_dim_pinned
// CHECK: %[[C128:.+]] = arith.constant 128 : index
// CHECK: %[[S:.+]] = arith.muli %{{.+}}, %[[C128]] : index
// CHECK: scf.parallel (%{{.+}}) = {{.*}} step (%[[S]])
func.func @one_dim_pinned(%m: memref<?xf32>, %n: index)
    attributes {blockc_codegen.gpu_map = #blockc_codegen.gpu_map<threads_x = 64, threads_y = 2>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %f = arith.constant 1.0 : f32
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    memref.store %f, %m[%i] : memref<?xf32>
  }
  return
}

// -----

// A loop already inside a gpu.launch is not touched.
// CHECK-LABEL: func.func @negative_inside_launch
// CHECK: gpu.launch
// CHECK: scf.parallel
// CHECK-NOT: mapping
func.func @negative_inside_launch(%m: memref<?xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %f = arith.constant 1.0 : f32
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    scf.parallel (%i) = (%c0) to (%n) step (%c1) {
      memref.store %f, %m[%i] : memref<?xf32>
    }
    gpu.terminator
  }
  return
}
