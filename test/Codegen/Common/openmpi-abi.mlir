// RUN: blockc-opt %s --blockc-openmpi-abi | FileCheck %s --implicit-check-not=@ompi_mpi_sum

// Open MPI exports its predefined reduction ops as ompi_mpi_op_<name>
// (mpi.h: MPI_SUM is &ompi_mpi_op_sum); an all-reduce whose send and receive
// buffers are the same pointer passes MPI_IN_PLACE ((void *) 1) instead.

// CHECK-DAG: llvm.mlir.global external @ompi_mpi_op_sum()
// CHECK-DAG: llvm.mlir.global external @ompi_mpi_op_max()
// CHECK-DAG: llvm.mlir.global external @ompi_mpi_float()
// CHECK-LABEL: llvm.func @reduce(
// CHECK-SAME:    %[[P:.+]]: !llvm.ptr, %[[Q:.+]]: !llvm.ptr, %[[N:.+]]: i32)
// CHECK-DAG:     %[[SUM:.+]] = llvm.mlir.addressof @ompi_mpi_op_sum
// CHECK-DAG:     %[[MAX:.+]] = llvm.mlir.addressof @ompi_mpi_op_max
// CHECK:         %[[ONE:.+]] = llvm.mlir.constant(1 : i64) : i64
// CHECK:         %[[IN_PLACE:.+]] = llvm.inttoptr %[[ONE]] : i64 to !llvm.ptr
// CHECK:         llvm.call @MPI_Allreduce(%[[IN_PLACE]], %[[P]], %[[N]], %{{.+}}, %[[SUM]], %{{.+}})
// A send buffer that is another pointer stays.
// CHECK:         llvm.call @MPI_Allreduce(%[[Q]], %[[P]], %[[N]], %{{.+}}, %[[MAX]], %{{.+}})
module {
  llvm.func @MPI_Allreduce(!llvm.ptr, !llvm.ptr, i32, !llvm.ptr, !llvm.ptr, !llvm.ptr) -> i32
  llvm.mlir.global external @ompi_mpi_sum() {addr_space = 0 : i32} : !llvm.struct<"ompi_predefined_op_t", opaque>
  llvm.mlir.global external @ompi_mpi_max() {addr_space = 0 : i32} : !llvm.struct<"ompi_predefined_op_t", opaque>
  llvm.mlir.global external @ompi_mpi_float() {addr_space = 0 : i32} : !llvm.struct<"ompi_predefined_datatype_t", opaque>
  llvm.mlir.global external @ompi_mpi_comm_world() {addr_space = 0 : i32} : !llvm.struct<"ompi_communicator_t", opaque>
  llvm.func @reduce(%p: !llvm.ptr, %q: !llvm.ptr, %n: i32) {
    %f = llvm.mlir.addressof @ompi_mpi_float : !llvm.ptr
    %sum = llvm.mlir.addressof @ompi_mpi_sum : !llvm.ptr
    %max = llvm.mlir.addressof @ompi_mpi_max : !llvm.ptr
    %w = llvm.mlir.addressof @ompi_mpi_comm_world : !llvm.ptr
    %0 = llvm.call @MPI_Allreduce(%p, %p, %n, %f, %sum, %w) : (!llvm.ptr, !llvm.ptr, i32, !llvm.ptr, !llvm.ptr, !llvm.ptr) -> i32
    %1 = llvm.call @MPI_Allreduce(%q, %p, %n, %f, %max, %w) : (!llvm.ptr, !llvm.ptr, i32, !llvm.ptr, !llvm.ptr, !llvm.ptr) -> i32
    llvm.return
  }
}
