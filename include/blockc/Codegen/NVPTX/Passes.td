//===- Passes.td - NVPTX code generation passes ------------*- tablegen -*-===//
//
// Passes of the NVPTX code generation path (see docs/Pipelines.md).
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKC_CODEGEN_NVPTX_PASSES_TD
#define BLOCKC_CODEGEN_NVPTX_PASSES_TD

include "mlir/Pass/PassBase.td"

def GPUHostSharedAllocsPass
    : Pass<"blockc-gpu-host-shared-allocs", "::mlir::func::FuncOp"> {
  let summary = "Allocate buffers in memory that both host and GPU can access";
  let description = [{
    After bufferization and mapping to `gpu.launch`, buffers are still
    `memref.alloc`s in host memory that kernels cannot read. This pass turns
    every `memref.alloc` into `gpu.alloc host_shared` (CUDA managed memory)
    and every `memref.dealloc` into an asynchronous `gpu.dealloc` followed by
    a `gpu.wait` (the only form `gpu-to-llvm` lowers). Host code between
    kernels (copies, shape queries) keeps working because managed memory is
    host-accessible and every synchronous launch waits for completion.

    ```mlir
    %m = memref.alloc(%n) : memref<?xf32>      // before
    %m = gpu.alloc host_shared (%n) : memref<?xf32>   // after
    ```

    Constant globals read by kernels (`memref.get_global`, e.g. the RoPE
    frequency table) live in host memory; each is copied once per call into
    a managed buffer that the kernels read instead, released before the
    function returns.

    An `alignment` is dropped (managed memory is at least 256-byte
    aligned); an allocation in a non-default memory space or with symbol
    operands is reported as an error.
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect"];
}

def GPUMergeModulesPass
    : Pass<"blockc-gpu-merge-modules", "::mlir::ModuleOp"> {
  let summary = "Put every outlined kernel into one gpu.module";
  let description = [{
    `gpu-kernel-outlining` creates one `gpu.module` per kernel. This pass
    moves all kernels into a single `gpu.module` (named by `module-name`) and
    rewrites every `gpu.launch_func` to it, so that a block compiles to one
    PTX / cubin / fatbin image that is loaded once.
  }];
  let options = [
    Option<"moduleName", "module-name", "std::string",
           /*default=*/"\"blockc_kernels\"",
           "Name of the merged gpu.module">
  ];
  let dependentDialects = ["::mlir::gpu::GPUDialect"];
}

def GPUExpandMathPass
    : Pass<"blockc-gpu-expand-math", "::mlir::func::FuncOp"> {
  let summary = "Expand math ops inside kernels into arithmetic";
  let description = [{
    `convert-gpu-to-nvvm` turns most `math` ops into calls to libdevice
    (`__nv_expf`, `__nv_rsqrtf`, `__nv_erff`, ...), which only link when the
    CUDA toolkit's libdevice is found. Inside `gpu.launch` bodies this pass
    rewrites f32 `exp`, `erf`, `erfc` and `tanh` (scalars or vectors) with
    blockc's polynomials (`Codegen/Common/Approximations.h`), the other f32
    `math` ops with MLIR's polynomial approximations and expansions (`sin`,
    `cos`, `log`, ...), ops with a native
    PTX instruction (`sqrt`, `fma`, `roundeven`, `absf`, `floor`, `ceil`) as
    that instruction in `llvm.inline_asm` (upstream sends both the math ops
    and the LLVM intrinsics to libdevice), and `rsqrt(x)` as
    `1 / sqrt.rn(x)`, so that the PTX blockc emits is self-contained and
    `-emit=ptx` needs no CUDA toolkit.

    ```mlir
    %r = math.rsqrt %x : f32                                  // before
    %s = llvm.inline_asm "sqrt.rn.f32 $0, $1;", "=f,f" %x : (f32) -> f32
    %r = arith.divf %one, %s : f32                            // after
    ```
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::LLVM::LLVMDialect",
    "::mlir::math::MathDialect",
    "::mlir::vector::VectorDialect"
  ];
}

def GPUTileAndMapPass
    : Pass<"blockc-gpu-tile-and-map", "::mlir::func::FuncOp"> {
  let summary = "Tile parallel loops into thread blocks with coalesced access";
  let description = [{
    Tiles every outermost `scf.parallel` (the parallel dimensions of a
    linalg op) so that the innermost dimension gets `threads-x` threads and
    the one before it `threads-y` (other dimensions tile by 1), then maps
    the loops for `convert-parallel-loops-to-gpu`: the innermost dimension
    to `block_x` / `thread_x` (consecutive threads touch consecutive
    elements: coalesced loads and stores), the next to `y`, the next to the
    grid's `z`, and any further outer dimension to a sequential loop inside
    the kernel. A one-dimensional loop gets `threads-x * threads-y` threads.
    Unlike upstream's `gpu-map-parallel-loops`, which maps the outermost
    dimension to `x`, this keeps the fastest-varying index on `x`.

    ```mlir
    scf.parallel (%t, %j) = (%c0, %c0) to (%T, %c4096) step (%c1, %c1)
    // becomes a grid (4096/32, T/8) of blocks of (32, 8) threads
    ```
  }];
  let options = [
    Option<"threadsX", "threads-x", "int64_t", /*default=*/"32",
           "Threads along the innermost dimension">,
    Option<"threadsY", "threads-y", "int64_t", /*default=*/"8",
           "Threads along the second innermost dimension">
  ];
  let dependentDialects = ["::mlir::gpu::GPUDialect",
                           "::mlir::scf::SCFDialect"];
}

def GPUFuseElementwisePass
    : Pass<"blockc-gpu-fuse-elementwise", "::mlir::func::FuncOp"> {
  let summary = "Fuse chains of elementwise linalg ops into one kernel";
  let description = [{
    Runs upstream's elementwise fusion (`linalg::populateElementwiseOpsFusionPatterns`)
    on linalg ops on tensors, restricted to an all-parallel producer feeding
    an all-parallel consumer. Chains such as `silu(gate) * up`, RoPE
    followed by nothing but reshapes, or a residual add after a bias become
    one `linalg.generic`, hence one GPU kernel that reads its inputs once
    instead of one kernel per step with the intermediate in global memory.
    Contractions and reductions are never consumers, so the projections
    stay plain contractions for `blockc-gpu-tile-matmul` and no producer is
    recomputed inside a reduction loop.

    ```mlir
    %s = linalg.generic ... ins(%g) { silu }            // before
    %p = linalg.generic ... ins(%s, %u) { mulf }
    %p = linalg.generic ... ins(%g, %u) { silu; mulf }  // after
    ```
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def GPUTileMatmulPass
    : Pass<"blockc-gpu-tile-matmul", "::mlir::func::FuncOp"> {
  let summary = "Shared-memory tiled kernels for contractions on buffers";
  let description = [{
    Rewrites every linalg op on f32 buffers whose body is `out + a * b` and
    whose indexing maps are projected permutations with one N and one K
    dimension (batch and M may be several dimensions; e.g. a projection
    `y[b, t, n] += x[b, t, k] * W[n, k]`) into one `gpu.launch`:

    * the grid is `(ceil(N / tile-n), ceil(M / tile-m), batch)` with blocks
      of `threads-x x threads-y` threads;
    * each step of the K loop copies a `tile-k x tile-m` tile of the M-side
      operand and a `tile-k x tile-n` tile of the N-side operand into
      workgroup (shared) memory (`#gpu.address_space<workgroup>`
      attributions of the launch, padded by one column against bank
      conflicts), with consecutive threads reading consecutive elements of
      the operand's fastest-varying dimension (coalesced), then
      `gpu.barrier`;
    * each thread accumulates a `(tile-m / threads-y) x (tile-n / threads-x)`
      register tile (rows `thread_y + threads-y * i`, columns
      `thread_x + threads-x * j`) with `math.fma`, then adds it to the
      output (which holds the bias or zero) under a bounds check.

    Out-of-range tile elements read a clamped address and contribute zero,
    so any M, N and K work. The launch carries `blockc.kernel =
    "tiled_matmul"`. Runs after bufferization and buffer deallocation (the
    barrier has no declared memory effects, which the ownership-based
    deallocation rejects).

    ```mlir
    linalg.generic ... ins(%x, %w : memref<?x?x64xf32>, memref<32x64xf32>)
        outs(%y : memref<?x?x32xf32>) { mulf; addf }            // before
    gpu.launch blocks(...) in (%gx = ceil(32/64), %gy = ceil(B*T/64), %gz = 1)
        threads(...) in (16, 16, 1)
        workgroup(%a : memref<16x65xf32, #gpu.address_space<workgroup>>,
                  %b : memref<16x65xf32, #gpu.address_space<workgroup>>)  // after
    ```
  }];
  let options = [
    Option<"tileM", "tile-m", "int64_t", /*default=*/"64",
           "Rows (M) of the output tile of one thread block">,
    Option<"tileN", "tile-n", "int64_t", /*default=*/"64",
           "Columns (N) of the output tile of one thread block">,
    Option<"tileK", "tile-k", "int64_t", /*default=*/"16",
           "Reduction depth staged in shared memory per step">,
    Option<"threadsX", "threads-x", "int64_t", /*default=*/"16",
           "Threads along N">,
    Option<"threadsY", "threads-y", "int64_t", /*default=*/"16",
           "Threads along M">
  ];
  let statistics = [
    Statistic<"numTiled", "num-tiled", "Contractions turned into tiled kernels">
  ];
  let dependentDialects = ["::mlir::gpu::GPUDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::memref::MemRefDialect"];
}

def GPULowerSDPAPass
    : Pass<"blockc-gpu-lower-sdpa", "::mlir::func::FuncOp"> {
  let summary = "Fused online-softmax attention kernel for transformer.sdpa";
  let description = [{
    Replaces each f32 `transformer.sdpa` whose head dim is a multiple of 32
    with one `gpu.launch` (attribute `blockc.kernel = "fused_attention"`);
    other head sizes keep the generic linalg lowering. The operands enter
    through `bufferization.to_buffer ... read_only`, the result is a new
    buffer returned through `bufferization.to_tensor ... restrict writable`.

    * Grid `(ceil(T / (rows-per-warp * warps)), H, B)`: one query tile per
      (batch, head) block; blocks of `32 x warps` threads.
    * Each warp owns `rows-per-warp` consecutive query rows. Lane `l` keeps
      elements `l, l + 32, ...` of each (pre-scaled) query row and of its
      output accumulator in registers; key and value row `j` are read once
      per warp with coalesced loads and shared by the warp's rows; the dot
      product is summed across lanes with `gpu.shuffle xor`.
    * Online softmax over the keys (running max `m`, sum `l`, rescale of the
      accumulator by `exp(m - m')`): no score matrix exists in memory.
    * Causal: a warp stops at the last key its last row can see
      (`t + S - T`), so keys above the diagonal of the warp's rows are never
      read; earlier rows of the warp ignore keys past their own end.
    * GQA/MQA: query head `h` reads kv head `h / (H / H_kv)` in place.
    * A row without a visible key yields zeros (never NaN).

    ```mlir
    %o = transformer.sdpa %q, %k, %v {causal} : ...           // before
    %qm = bufferization.to_buffer %q read_only : ...           // after
    gpu.launch blocks(...) in (%x = ceil(T/16), %y = 32, %z = B)
               threads(...) in (32, 4, 1) { ... gpu.shuffle xor ... }
    %o = bufferization.to_tensor %out restrict writable : ...
    ```
  }];
  let options = [
    Option<"rowsPerWarp", "rows-per-warp", "int64_t", /*default=*/"4",
           "Query rows handled by one warp">,
    Option<"warps", "warps", "int64_t", /*default=*/"4",
           "Warps per thread block">
  ];
  let statistics = [
    Statistic<"numLowered", "num-lowered", "sdpa ops turned into kernels">
  ];
  let dependentDialects = ["::mlir::bufferization::BufferizationDialect",
                           "::mlir::gpu::GPUDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::tensor::TensorDialect"];
}

#endif // BLOCKC_CODEGEN_NVPTX_PASSES_TD
