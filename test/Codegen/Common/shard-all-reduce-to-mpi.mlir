// RUN: blockc-opt %s -split-input-file -verify-diagnostics --blockc-shard-all-reduce-to-mpi | FileCheck %s

// In a tensor-parallel module each all-reduce over the grid becomes a copy
// into a buffer sized from the tensor's own dimensions, an in-place
// mpi.allreduce on MPI_COMM_WORLD, and the buffer as a tensor.

// CHECK-LABEL: func.func @dynamic(
// CHECK-SAME:    %[[T:.+]]: tensor<?x?x64xf32>)
// CHECK:         %[[D0:.+]] = tensor.dim %[[T]], %c0
// CHECK:         %[[D1:.+]] = tensor.dim %[[T]], %c1
// CHECK:         %[[SRC:.+]] = bufferization.to_buffer %[[T]] : tensor<?x?x64xf32> to memref<?x?x64xf32>
// CHECK:         %[[BUF:.+]] = memref.alloc(%[[D0]], %[[D1]]) : memref<?x?x64xf32>
// CHECK:         memref.copy %[[SRC]], %[[BUF]]
// CHECK:         %[[FLAT:.+]] = memref.collapse_shape %[[BUF]] {{\[\[}}0, 1, 2]] : memref<?x?x64xf32> into memref<?xf32>
// CHECK:         %[[W:.+]] = mpi.comm_world : !mpi.comm
// CHECK:         mpi.allreduce(%[[FLAT]], %[[FLAT]], MPI_SUM, %[[W]]) : memref<?xf32>, memref<?xf32>
// CHECK:         %[[R:.+]] = bufferization.to_tensor %[[BUF]] restrict : memref<?x?x64xf32> to tensor<?x?x64xf32>
// CHECK:         return %[[R]]
// CHECK-NOT:     shard.all_reduce
module attributes {transformer.tensor_parallel = 2 : i64} {
  shard.grid @blockc_tp(shape = 2)
  func.func @dynamic(%t: tensor<?x?x64xf32>) -> tensor<?x?x64xf32> {
    %r = shard.all_reduce %t on @blockc_tp grid_axes = [0] : tensor<?x?x64xf32> -> tensor<?x?x64xf32>
    return %r : tensor<?x?x64xf32>
  }
}

// -----

// A module that is not tensor-parallel is left to convert-shard-to-mpi.
// CHECK-LABEL: func.func @other
// CHECK:         shard.all_reduce
module {
  shard.grid @g(shape = 2)
  func.func @other(%t: tensor<4xf32>) -> tensor<4xf32> {
    %r = shard.all_reduce %t on @g grid_axes = [0] : tensor<4xf32> -> tensor<4xf32>
    return %r : tensor<4xf32>
  }
}

// -----

module attributes {transformer.tensor_parallel = 4 : i64} {
  shard.grid @g2(shape = 2x2)
  func.func @two_axes(%t: tensor<4xf32>) -> tensor<4xf32> {
    // expected-error @+1 {{'shard.all_reduce' op in a tensor-parallel module must sum an f32 tensor over the one axis of a 1-D grid}}
    %r = shard.all_reduce %t on @g2 grid_axes = [1] : tensor<4xf32> -> tensor<4xf32>
    return %r : tensor<4xf32>
  }
}

// -----

module attributes {transformer.tensor_parallel = 2 : i64} {
  shard.grid @g(shape = 2)
  func.func @f16(%t: tensor<4xf16>) -> tensor<4xf16> {
    // expected-error @+1 {{'shard.all_reduce' op in a tensor-parallel module must sum an f32 tensor over the one axis of a 1-D grid}}
    %r = shard.all_reduce %t on @g grid_axes = [0] : tensor<4xf16> -> tensor<4xf16>
    return %r : tensor<4xf16>
  }
}

// -----

module attributes {transformer.tensor_parallel = 2 : i64} {
  shard.grid @g4(shape = 4)
  func.func @size(%t: tensor<4xf32>) -> tensor<4xf32> {
    // expected-error @+1 {{'shard.all_reduce' op reduces over a grid of 4 ranks in a module partitioned over 2}}
    %r = shard.all_reduce %t on @g4 grid_axes = [0] : tensor<4xf32> -> tensor<4xf32>
    return %r : tensor<4xf32>
  }
}
