// RUN: blockc-opt %s --transformer-strip-metadata | FileCheck %s --implicit-check-not=transformer. --implicit-check-not=shard.grid

// A tensor-parallel module after its all-reduces became MPI calls: the grid,
// the rank count and the weights' parts go; the MPI implementation (read by
// the MPI lowering) stays.
// CHECK: module attributes {dlti.map = #dlti.map<"MPI:Implementation" = "OpenMPI">}
// CHECK: func.func @f(%{{.*}}: memref<8x4xf32>)
module attributes {dlti.map = #dlti.map<"MPI:Implementation" = "OpenMPI">, transformer.tensor_parallel = 2 : i64} {
  shard.grid @blockc_tp(shape = 2)
  func.func @f(%w: memref<8x4xf32> {transformer.shard_slice = #transformer.shard_slice<axis = 0, ranks = [array<i64: 0, 8>, array<i64: 8, 16>]>}) {
    return
  }
}
