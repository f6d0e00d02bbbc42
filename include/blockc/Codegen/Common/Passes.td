//===- Passes.td - code generation passes of every target --*- tablegen -*-===//
//
// Passes that the CPU and NVPTX pipelines share (see docs/Pipelines.md).
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKC_CODEGEN_COMMON_PASSES_TD
#define BLOCKC_CODEGEN_COMMON_PASSES_TD

include "mlir/Pass/PassBase.td"

def FuseElementwisePass
    : Pass<"blockc-fuse-elementwise", "::mlir::func::FuncOp"> {
  let summary = "Fuse chains of elementwise linalg ops into one op";
  let description = [{
    Runs upstream's elementwise fusion
    (`linalg::populateElementwiseOpsFusionPatterns`) on linalg ops on
    tensors, with a control function that fuses a producer into a consumer
    only when

    * both are all-parallel (contractions and reductions are never fused:
      a producer inside a reduction would be recomputed at every reduction
      step, and the projections must stay plain contractions for the
      kernels of both targets), and
    * the consumer reads the producer's result through a permutation map:
      a broadcast read (e.g. a per-row `rsqrt(mean + eps)` over `[B, T]`
      read by a `[B, T, d]` op) would recompute the producer once per
      broadcast element; unless `fuse-broadcast` is set (NVPTX: a kernel
      launch and a round trip through global memory cost more than
      recomputing a few flops per element).

    With `fuse-into-reductions` (NVPTX), a producer is also fused into a
    reduction that reads it through a permutation of all its loops (each
    producer element is then used once, at its own reduction step: nothing
    is recomputed), e.g. the widening of a bf16 input that the two
    statistics of an RMSNorm read; contractions, whose operands miss a
    loop, stay plain.

    With `keep-shared-tensor-core-results` (NVPTX), a producer read by
    several ops is not fused into them when it is computed, through
    all-parallel ops, from the result of a contraction that carries
    `blockc_codegen.gpu_mma_tiles` (unless it only widens its input, which
    costs nothing to recompute): e.g. the residual stream after the O
    projection of a bf16 block, which the projection's epilogue then
    computes and writes once, in bf16, for the norm, its statistics and the
    final residual add to read.

    Chains such as `silu(gate) * up`, RoPE followed by nothing but reshapes,
    or a residual add after a bias become one `linalg.generic` that reads
    its inputs once (one GPU kernel, one CPU loop nest) instead of one op per
    step with the intermediate in memory. Both the CPU and the NVPTX stage 1
    run it after `convert-elementwise-to-linalg`.

    ```mlir
    %s = linalg.generic ... ins(%g) { silu }            // before
    %p = linalg.generic ... ins(%s, %u) { mulf }
    %p = linalg.generic ... ins(%g, %u) { silu; mulf }  // after
    ```
  }];
  let options = [
    Option<"fuseBroadcast", "fuse-broadcast", "bool", /*default=*/"false",
           "Also fuse producers that the consumer reads through a "
           "broadcast (recomputed per element)">,
    Option<"fuseIntoReductions", "fuse-into-reductions", "bool",
           /*default=*/"false",
           "Also fuse producers into reductions that read every producer "
           "element once (a permutation of all their loops)">,
    Option<"keepSharedTensorCoreResults", "keep-shared-tensor-core-results",
           "bool", /*default=*/"false",
           "Do not fuse a producer with several readers that is computed "
           "from a tensor-core contraction's result (unless it only widens "
           "its input): the contraction's epilogue computes it once">
  ];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def ShardAllReduceToMPIPass
    : Pass<"blockc-shard-all-reduce-to-mpi", "::mlir::ModuleOp"> {
  let summary = "Lower the all-reduces of a tensor-parallel module to MPI on "
                "MPI_COMM_WORLD";
  let description = [{
    In a module that `transformer-tensor-parallel` partitioned over N ranks
    (`transformer.tensor_parallel = N`, `shard.grid @blockc_tp(shape = N)`),
    each `shard.all_reduce` (a sum of a tensor over the grid's only axis)
    becomes a copy of the tensor into a new buffer, an in-place
    `mpi.allreduce` of that buffer on `MPI_COMM_WORLD`, and the buffer as a
    tensor again (`bufferization.to_tensor restrict`).

    Upstream's `convert-shard-to-mpi` does the same in MLIR 22, with two
    problems for these modules: a tensor with dynamic dimensions (the
    activations `[B, T, d]`) gets a buffer sized with `tensor.dim` of index
    `ShapedType::kDynamic` for every dynamic dimension (a wrong size: heap
    corruption), and each call splits `MPI_COMM_WORLD` into a new
    communicator (a collective, and a communicator never freed, per
    all-reduce). The grid is the whole world (`blockc-run` checks that the
    MPI world has exactly N ranks, an object's header requires it), so the
    world's communicator is the grid's. `convert-shard-to-mpi` still runs
    after this pass for any other `shard` op.

    ```mlir
    %r = shard.all_reduce %t on @blockc_tp grid_axes = [0]
        : tensor<?x?x64xf32> -> tensor<?x?x64xf32>            // before
    %b = bufferization.to_buffer %t : tensor<?x?x64xf32> to memref<?x?x64xf32>
    %buf = memref.alloc(%d0, %d1) : memref<?x?x64xf32>        // after
    memref.copy %b, %buf : memref<?x?x64xf32> to memref<?x?x64xf32>
    %flat = memref.collapse_shape %buf [[0, 1, 2]] : ... into memref<?xf32>
    %w = mpi.comm_world : !mpi.comm
    mpi.allreduce(%flat, %flat, MPI_SUM, %w) : memref<?xf32>, memref<?xf32>
    %r = bufferization.to_tensor %buf restrict : ... to tensor<?x?x64xf32>
    ```

    An all-reduce over another grid or axis, with another reduction, of an
    element type other than f32 (the activations of every block, bf16 and
    f16 ones included, are f32 there), or over a grid whose size is not the
    module's rank count, in a tensor-parallel module is an error.
  }];
  let dependentDialects = ["::mlir::bufferization::BufferizationDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::mpi::MPIDialect",
                           "::mlir::tensor::TensorDialect"];
}

def OpenMPIABIPass : Pass<"blockc-openmpi-abi", "::mlir::ModuleOp"> {
  let summary = "Fix two gaps of upstream's MPI lowering for Open MPI";
  let description = [{
    MLIR 22's MPI-to-LLVM lowering for Open MPI (`convert-to-llvm` on the
    `mpi` dialect, with `"MPI:Implementation" = "OpenMPI"`) has two gaps
    that this pass closes after it ran:

    * **Reduction op symbols.** It refers to the predefined reduction
      operations as `ompi_mpi_sum`, `ompi_mpi_max`, ..., but Open MPI's
      `mpi.h` defines `MPI_SUM` as `&ompi_mpi_op_sum` (and so on), the
      symbols `libmpi.so` exports (Debian's Open MPI 4.1.4): a JIT cannot
      resolve `ompi_mpi_sum` and an object does not link. The external
      globals (and their `llvm.mlir.addressof` uses) are renamed to
      `ompi_mpi_op_<name>`.
    * **In-place all-reduce.** The `mpi` dialect has no in-place form:
      `convert-shard-to-mpi` and `blockc-shard-all-reduce-to-mpi` all-reduce
      a buffer into itself, `mpi.allreduce(%b, %b, ...)`, which lowers to
      `MPI_Allreduce(p, p, ...)`; MPI forbids aliased send and receive
      buffers (the sum comes out wrong), the in-place form passes
      `MPI_IN_PLACE` (`(void *) 1` in Open MPI) as the send buffer. A call
      whose two buffers are the same value gets that.

    ```mlir
    llvm.mlir.global external @ompi_mpi_sum() ...                  // before
    llvm.call @MPI_Allreduce(%p, %p, %n, %f32, %sum, %comm)
    llvm.mlir.global external @ompi_mpi_op_sum() ...               // after
    %in_place = llvm.inttoptr %c1 : i64 to !llvm.ptr
    llvm.call @MPI_Allreduce(%in_place, %p, %n, %f32, %sum, %comm)
    ```

    The pipeline runs `cse` first, so that the two buffers' address
    computations are one value.
  }];
}

def MergeIdenticalFunctionsPass
    : Pass<"blockc-merge-identical-functions", "::mlir::ModuleOp"> {
  let summary = "Keep one of each set of identical private functions";
  let description = [{
    Private `func.func` definitions with the same type, the same argument,
    result and function attributes and structurally equal bodies
    (`OperationEquivalence::isRegionEquivalentTo`, locations ignored) are
    one function: the first in module order is kept, every symbol use of
    the others is redirected to it and they are erased. Public functions
    (entries, prepare functions) are never merged. A hash of each body
    (op names, attributes and types, not the values) sorts the candidates,
    so a module with many distinct functions costs one walk.

    The CPU pipeline runs it after `blockc-cpu-outline-parallel-kernels`:
    a stack of N layers with the same shapes has N copies of each kernel,
    and after this pass translation to LLVM IR, LLVM's optimiser and code
    generation see one.

    ```mlir
    func.func private @k(%a: memref<4xf32>) { ... }
    func.func private @k_0(%a: memref<4xf32>) { ... }  // same body
    func.call @k_0(%x) : (memref<4xf32>) -> ()
    // becomes
    func.func private @k(%a: memref<4xf32>) { ... }
    func.call @k(%x) : (memref<4xf32>) -> ()
    ```
  }];
  let statistics = [
    Statistic<"numMerged", "num-merged", "functions merged into an equal one">
  ];
}

#endif // BLOCKC_CODEGEN_COMMON_PASSES_TD
