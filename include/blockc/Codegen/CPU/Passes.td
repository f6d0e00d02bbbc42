//===- Passes.td - CPU code generation passes --------------*- tablegen -*-===//
//
// Passes of the CPU code generation path (see docs/Pipelines.md).
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKC_CODEGEN_CPU_PASSES_TD
#define BLOCKC_CODEGEN_CPU_PASSES_TD

include "mlir/Pass/PassBase.td"

def CPULowerLinearPass
    : Pass<"blockc-cpu-lower-linear", "::mlir::func::FuncOp"> {
  let summary = "Lower transformer.linear to a register-tiled vector kernel";
  let description = [{
    Rewrites every `transformer.linear` on a `[B, T, K]` input into a loop
    nest on tensors around a register-tiled vector micro-kernel that reads
    the weight in its stored `[N, K]` layout, so nothing is packed or
    transposed per call and a single token (T = 1) streams every weight
    element exactly once:

    ```
    for n-block (block-n rows of W), k-block (block-k), b, t (rows at a time):
      for n in the block (cols at a time):
        acc[rows][cols] = 0                          // vector<vector-width>
        for k in the k-block (vector-width at a time):
          x_i = x[b, t+i, k:k+V]   w_j = W[n+j, k:k+V]
          acc[i][j] = fma(x_i, w_j, acc[i][j])       // rows*cols FMAs
        out[b, t+i, n+j] += reduce_add(acc[i][j])
    ```

    Both operands are contiguous along k, so every load is a full vector;
    the `rows x cols` accumulators stay in registers (4 x 4 = 16 zmm with
    AVX-512). The weight block (`block-n x block-k`) stays in L2 while all
    rows of the input pass over it. Remainders: rows and columns that do not
    fill a tile use 1-row / 1-column kernels, and a k remainder uses one
    masked (zero-padded) vector step. The output starts as the broadcast
    bias or zero. Inputs of other ranks are left to
    `convert-transformer-to-linalg`.
  }];
  let options = [
    Option<"rows", "rows", "int64_t", /*default=*/"4",
           "Register tile: input rows (tokens) per kernel">,
    Option<"cols", "cols", "int64_t", /*default=*/"4",
           "Register tile: weight rows (output features) per kernel">,
    Option<"vectorWidth", "vector-width", "int64_t", /*default=*/"16",
           "f32 lanes per vector (16 for AVX-512, 8 for AVX2)">,
    Option<"blockN", "block-n", "int64_t", /*default=*/"64",
           "Cache block: weight rows">,
    Option<"blockK", "block-k", "int64_t", /*default=*/"1024",
           "Cache block: reduction length">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect",
    "::mlir::vector::VectorDialect"
  ];
  let statistics = [
    Statistic<"numLowered", "num-lowered", "transformer.linear ops lowered">
  ];
}

#endif // BLOCKC_CODEGEN_CPU_PASSES_TD
