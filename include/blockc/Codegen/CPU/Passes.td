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
    rows of the input pass over it. Rows that do not fill a tile (and a
    single token, T = 1) use a 1-row kernel over `2 x cols` weight rows,
    which streams more of W at once (decode is bandwidth-bound); columns
    that do not fill a tile use a 1-column kernel, and a k remainder uses
    one masked (zero-padded) vector step. The output starts as the broadcast
    bias or zero. Inputs of other ranks are left to
    `convert-transformer-to-linalg`.

    A `blockc.cpu_tiles` dictionary on the op (from
    `blockc-cpu-select-tiles`, or written by hand) overrides the options
    below for that op; a malformed one is an error at the op.
  }];
  let options = [
    Option<"rows", "rows", "int64_t", /*default=*/"4",
           "Register tile: input rows (tokens) per kernel">,
    Option<"cols", "cols", "int64_t", /*default=*/"4",
           "Register tile: weight rows (output features) per kernel">,
    Option<"vectorWidth", "vector-width", "int64_t", /*default=*/"16",
           "f32 lanes per vector (16 for AVX-512, 8 for AVX2)">,
    Option<"blockN", "block-n", "int64_t", /*default=*/"32",
           "Cache block: weight rows">,
    Option<"blockK", "block-k", "int64_t", /*default=*/"2048",
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

def CPUSelectTilesPass
    : Pass<"blockc-cpu-select-tiles", "::mlir::func::FuncOp"> {
  let summary = "Choose the CPU kernel's tile sizes per projection";
  let description = [{
    The heuristic half of the CPU projection kernel: attaches to every
    `transformer.linear` without one a `blockc.cpu_tiles` dictionary
    `{rows, cols, vector_width, block_n, block_k}` that
    `blockc-cpu-lower-linear` (the mechanism) then uses instead of its pass
    options. A tile attribute already present (written by a user, or by an
    earlier run) is kept, so tests and users can pin any choice.

    * ISA (`isa=auto` reads the host's features): `avx512` (32 zmm): 16
      lanes, a 4 x 4 register tile (16 accumulators + 8 operand registers);
      `avx2` (16 ymm): 8 lanes, 2 x 4 (8 accumulators + 6 operands);
      `generic` (SSE, 16 xmm): 4 lanes, 2 x 4.
    * Cache blocking: `block_k` is the reduction length rounded up to the
      vector width, at most 2048; `block_n` keeps the weight block
      (`block_n x block_k x 4` bytes) within `l2-bytes / 8` (256 KiB of a
      2 MiB L2: the block measured best for the 7B projections), at least
      `cols` and a multiple of it.

    ```mlir
    %y = transformer.linear %x, %w : ...          // before
    %y = transformer.linear %x, %w {blockc.cpu_tiles = {block_k = 2048 : i64,
        block_n = 32 : i64, cols = 4 : i64, rows = 4 : i64,
        vector_width = 16 : i64}} : ...           // after, isa=avx512
    ```
  }];
  let options = [
    Option<"isa", "isa", "std::string", /*default=*/"\"auto\"",
           "auto (host), avx512, avx2 or generic">,
    Option<"l2Bytes", "l2-bytes", "int64_t", /*default=*/"2097152",
           "L2 cache size used for the cache blocks">
  ];
  let statistics = [
    Statistic<"numAnnotated", "num-annotated", "Projections given tiles">
  ];
}

def CPUFuseResidualPass
    : Pass<"blockc-cpu-fuse-residual", "::mlir::func::FuncOp"> {
  let summary = "Fuse residual adds into the epilogue of projection kernels";
  let description = [{
    A projection kernel of `blockc-cpu-lower-linear` (an `scf.forall`
    marked `blockc.linear_kernel`) accumulates `x W^T` into its shared output,
    which starts as zero (a `linalg.fill`) or as the broadcast bias. When
    that result's only use is a `transformer.residual_add` with a residual
    `r` of the same type, the kernel starts from `r` instead (or from
    `r + bias`), and the add disappears: the residual stream is updated in
    the projection's own stores (the O projection and the down projection of
    a pre-norm block) instead of by a separate pass over `[B, T, d]`. The sum
    is the same up to the order of the f32 additions.

    ```mlir
    %z = linalg.fill ins(%c0) outs(%e)                      // before
    %y = scf.forall ... shared_outs(%o = %z) {...} {blockc.linear_kernel}
    %h = transformer.residual_add %r, %y : tensor<?x?x64xf32>
    %y = scf.forall ... shared_outs(%o = %r) {...} {blockc.linear_kernel}  // after
    ```
  }];
  let statistics = [
    Statistic<"numFused", "num-fused", "Residual adds fused">
  ];
}

def CPULowerSDPAPass
    : Pass<"blockc-cpu-lower-sdpa", "::mlir::func::FuncOp"> {
  let summary = "Lower transformer.sdpa to a fused, online-softmax vector kernel";
  let description = [{
    Rewrites every f32 `transformer.sdpa` whose head dimension D is a
    multiple of `vector-width` (V) into one fused loop nest on tensors
    (flash-attention style, no `[T, S]` score matrix in memory). Heads run
    in parallel (`scf.forall`); kv head = h / (H / H_kv), read in place (no
    K/V copy). Full blocks of V query rows use the multi-row kernel, whose
    vectors hold the V rows of the block (no horizontal reduction at all):

    ```
    qt[d, :] = scale * query[b, t0:t0+V, h, d]       // [D, V] scratch per head
    m = -inf, l = 0, ot[d, :] = 0                    // per row (lane)
    for s0 in [0, S_end(last row)) step V:           // fully masked tiles never run
      st_j = sum_d key[b, s0+j, kvh, d] * qt[d, :]   // broadcast x vector FMAs
      (tiles not visible to every row: st_j = -inf where s0+j is masked)
      m' = max(m, max_j st_j); c = exp(m - m'); p_j = exp(st_j - m')
      l = l c + sum_j p_j
      ot[d, :] = ot[d, :] c + sum_j value[b, s0+j, kvh, d] * p_j
    out[b, t0+r, h, :] = l_r > 0 ? ot[:, r] / l_r : 0
    ```

    The remaining rows (T mod V of them; every row of a decode step) use the
    single-row kernel, whose vectors hold the V keys of a tile: V partial dot
    products (D / V FMAs each) summed across lanes by one transpose-add tree
    (log2 V shuffle steps), then the same update with m scalar; the partial
    last tile is masked.

    The row max is subtracted before every exp (a vector polynomial, exact 0
    for -inf, NaN-propagating), masked keys contribute exactly zero (their
    values are selected away, so a NaN in a future value row does not leak
    into earlier rows) and a row without any visible key yields zeros.
    Other head dimensions are left to `convert-transformer-to-linalg`.
  }];
  let options = [
    Option<"vectorWidth", "vector-width", "int64_t", /*default=*/"16",
           "f32 lanes per vector; also the key tile and the query row block">,
    Option<"multiRow", "multi-row", "bool", /*default=*/"true",
           "Full blocks of vector-width query rows use the rows-in-lanes "
           "kernel (off: every row uses the single-row kernel)">,
    Option<"qkUnroll", "qk-unroll", "int64_t", /*default=*/"4",
           "Multi-row kernel: head dims per step of the q.k loop">,
    Option<"pvChunk", "pv-chunk", "int64_t", /*default=*/"8",
           "Multi-row kernel: head dims accumulated in registers per P.V "
           "step (rounded down to a divisor of the head dim)">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::math::MathDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect",
    "::mlir::vector::VectorDialect"
  ];
  let statistics = [
    Statistic<"numLowered", "num-lowered", "transformer.sdpa ops lowered">
  ];
}

def DropInPlaceResultsPass
    : Pass<"blockc-drop-inplace-results", "::mlir::ModuleOp"> {
  let summary = "Drop function results that are the function's own buffer arguments";
  let description = [{
    After one-shot bufferization, a value-semantic result that was computed
    in place in an argument's buffer (the KV caches of a decode entry, see
    `transformer-derive-decode`) is returned as that very block argument.
    This pass removes such results from functions that have no callers in
    the module (entry points), so the caller simply sees its buffer updated
    and the entry keeps the one-result C interface. It must run before the
    deallocation pipeline, which would otherwise return a clone (a full copy
    of the cache per call). Upstream's `drop-equivalent-buffer-results` only
    handles private functions.

    Before:
    ```mlir
    func.func @f(%x: memref<?xf32>, %c: memref<?xf32>) -> (memref<?xf32>, memref<?xf32>) {
      ...
      return %y, %c : memref<?xf32>, memref<?xf32>
    }
    ```
    After:
    ```mlir
    func.func @f(%x: memref<?xf32>, %c: memref<?xf32>) -> memref<?xf32> {
      ...
      return %y : memref<?xf32>
    }
    ```
  }];
  let statistics = [
    Statistic<"numDropped", "num-dropped", "Number of results dropped">
  ];
}

#endif // BLOCKC_CODEGEN_CPU_PASSES_TD
