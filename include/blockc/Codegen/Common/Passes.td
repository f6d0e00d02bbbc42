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
           "broadcast (recomputed per element)">
  ];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

#endif // BLOCKC_CODEGEN_COMMON_PASSES_TD
