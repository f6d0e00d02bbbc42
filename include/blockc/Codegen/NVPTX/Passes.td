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
    rewrites f32 `math` ops with MLIR's polynomial approximations and
    expansions (`exp`, `tanh`, `erf`, `sin`, `cos`, ...), ops with a native
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

#endif // BLOCKC_CODEGEN_NVPTX_PASSES_TD
