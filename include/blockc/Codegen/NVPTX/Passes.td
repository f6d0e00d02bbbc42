//===- Passes.td - NVPTX code generation passes ------------*- tablegen -*-===//
//
// Passes of the NVPTX code generation path (see docs/Pipelines.md).
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKC_CODEGEN_NVPTX_PASSES_TD
#define BLOCKC_CODEGEN_NVPTX_PASSES_TD

include "mlir/Pass/PassBase.td"

def GPUSetTargetPass : Pass<"blockc-gpu-set-target", "::mlir::ModuleOp"> {
  let summary = "Attach the target GPU's facts to the module";
  let description = [{
    The first pass of every NVPTX pipeline: looks up the architecture
    `chip` (sm_75, sm_80, sm_86, sm_89, sm_90, sm_90a, sm_100, sm_100a) and the GPU
    `gpu` (t4, a100, a10, l4, h100, h200, b200; empty: the architecture's default
    chip) in
    blockc's table of known chips and attaches the result as
    `blockc_codegen.gpu_target = #blockc_codegen.gpu_target<...>` to the
    module. `blockc-gpu-select-tiles`, `blockc-gpu-emulate-kernels` and the
    profile read the chip's limits and peaks from there.

    ```mlir
    module attributes {blockc_codegen.gpu_target =
        #blockc_codegen.gpu_target<name = "h100", arch = "sm_90a", ...>}
    ```

    Errors: an unknown architecture or GPU (the message lists the known
    ones), or a GPU that cannot run code for the architecture (sm_90a code
    on an A100). A module that has a `gpu_target` already keeps it if it is
    the same chip and architecture, and is an error otherwise.
  }];
  let options = [
    Option<"chip", "chip", "std::string", /*default=*/"\"sm_90\"",
           "GPU architecture (sm_XX)">,
    Option<"gpu", "gpu", "std::string", /*default=*/"\"\"",
           "GPU chip (empty: the architecture's default)">
  ];
  let dependentDialects = ["::blockc::codegen::CodegenDialect"];
}

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

    A `memref.copy` on the host between contiguous (identity-layout)
    buffers becomes an asynchronous `gpu.memcpy` followed by a `gpu.wait`:
    a host copy of managed buffers would move their pages to the host and
    back, and the next kernel would fault them in (bufferization copies,
    e.g. of a zero fill shared by several projections' outputs, were the
    slowest part of the bf16 7B block on an H200). Strided copies stay host
    loops.

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

    With `portable` (the GPU emulator's pipeline), the ops with a native
    PTX instruction stay `math` ops (and `rsqrt(x)` becomes
    `1 / math.sqrt(x)`), which the host lowers to the LLVM intrinsics with
    the same IEEE rounding (`llvm.fma`, `llvm.sqrt`, ...); the polynomials
    are the same in both modes.

    ```mlir
    %r = math.rsqrt %x : f32                                  // before
    %s = llvm.inline_asm "sqrt.rn.f32 $0, $1;", "=f,f" %x : (f32) -> f32
    %r = arith.divf %one, %s : f32                            // after
    ```
  }];
  let options = [
    Option<"portable", "portable", "bool", /*default=*/"false",
           "Keep sqrt, fma, abs, floor, ceil and roundeven as math ops "
           "instead of PTX inline assembly (for the GPU emulator)">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::LLVM::LLVMDialect",
    "::mlir::math::MathDialect",
    "::mlir::vector::VectorDialect"
  ];
}

def GPUSelectTilesPass
    : Pass<"blockc-gpu-select-tiles", "::mlir::func::FuncOp"> {
  let summary = "Choose the tiles and thread blocks of the NVPTX kernels";
  let description = [{
    The heuristic half of the NVPTX kernels: the kernel passes are the
    mechanism and only read what this pass writes. On a function with a
    body it sets, unless already present (so that a test or a user can pin
    any choice by writing the attribute by hand):

    * `blockc_codegen.gpu_map = #blockc_codegen.gpu_map<threads_x, threads_y>`
      on the function, read by `blockc-gpu-tile-and-map`;
    * `blockc_codegen.gpu_attention = #blockc_codegen.gpu_attention<
      rows_per_warp, warps>` on each `transformer.sdpa` that
      `blockc-gpu-lower-sdpa` turns into the fused kernel, with
      `split_mma_warps = 4` (decode steps on tensor cores) on sm_80 and
      newer where the operands are widened from bf16 / f16, the head dim
      is 64 or 128 and a GQA group has 2 to 8 query heads;
    * `blockc_codegen.gpu_paged_attention =
      #blockc_codegen.gpu_paged_attention<warps>` on each
      `transformer.paged_sdpa` (`blockc-gpu-lower-paged`; 4 warps, one per
      query token and head, on every chip);
    * `blockc_codegen.gpu_matmul_tiles = #blockc_codegen.gpu_matmul_tiles<
      tile_m, tile_n, tile_k, threads_x, threads_y>` on each f32 contraction
      on buffers that `blockc-gpu-tile-matmul` tiles;
    * on sm_80 and newer, `blockc_codegen.gpu_mma_tiles =
      #blockc_codegen.gpu_mma_tiles<tile_m, tile_n, tile_k, warps_m,
      warps_n, stages>` on each contraction of two bf16 / f16 buffers into
      f32 (the tensor-core kernel of `blockc-gpu-tile-matmul`) and, on
      tensors, on each contraction of an f32 input that holds 16-bit values
      with a 16-bit weight (which `blockc-gpu-narrow-mma-operands` then
      narrows): 128 x 128 tiles on 2 x 2 warps, k steps of 32 (16 when 32
      does not divide K) in 4 stages (80 KiB / 48 KiB of dynamic shared
      memory); with `mma-rope` (the default), on buffers, those tiles also
      get `rope_head_dim = D` where the only reader of the rounded 16-bit
      result is a rotate-half RoPE of head dim `D` dividing `tile_n`
      (`planRotation`, as for the warpgroup tiles below), the RoPE's
      staging tile fits in the chip's shared memory per block and the op
      gets no warpgroup tiles: the kernel then applies the RoPE on a
      staging tile over its ring (an attribute that differs from these
      tiles, e.g. written by hand, is kept as it is);
    * on `sm_90a` (wgmma and TMA are arch-specific features of Hopper), on
      buffers, also `blockc_codegen.gpu_warpgroup_tiles` on each
      tensor-core contraction that the warpgroup kernel takes (no batch
      dimension, a 2-D `[N, K]` weight; `isWarpgroupMatmulCandidate`), by
      `warpgroup-schedule`: `specialized` (the default) `<tile_m = 128,
      tile_n = 256, stages = 4, producer = true>` (a producer warpgroup and
      two consumer warpgroups, a 192 KiB ring) when N >= 256, `tile_n =
      128` below; `persistent` `<tile_m = 128, tile_n = 128, stages = 4,
      producer = true, persistent = true>` (one block per multiprocessor);
      `cooperative` `<tile_m = 128, tile_n = 128, stages = 4>` (no
      producer); with `warpgroup-epilogue` `tma` (the default) each also
      gets `tma_store = true` where its ring, f32 output tile, 16-bit
      staging tile and mbarriers fit in the chip's shared memory per block
      (the specialized and cooperative schedules, not beside the persistent
      ring): the kernel's epilogue then ends in a TMA store; with
      `warpgroup-rope` (the default) such tiles also get `rope_head_dim =
      D` where the only reader of the rounded result is a rotate-half RoPE
      of head dim `D` dividing `tile_n` (`planRotation`, with the
      epilogue's consumer as `blockc-gpu-tile-matmul` plans it): the kernel
      then applies the RoPE on the staging tile;
    * on sm_80 and newer, on buffers, `blockc_codegen.gpu_gemv =
      #blockc_codegen.gpu_gemv<warps = 4, columns = 1, rows = 1, unroll = 2,
      max_m>` on each bf16 / f16 projection (`[M..., K]` by `[N, K]`) whose
      M is static and at most 64 (`max_m = 64`: `blockc-gpu-tile-gemv`
      builds the weight-streaming kernel) or dynamic (`max_m = 16`: the
      entries that decode, whose T is dynamic; it keeps its tile attributes
      and `blockc-gpu-tile-matmul` chooses by M at run time); with
      `gemv-rope-append` (the default) also `columns = 2, rope_head_dim =
      D` where the only reader of the rounded result is a rotate-half RoPE
      of head dim `D` (`planRotation`: q and k), and `kv_append = true`
      where the only reader of that result (or of the RoPE's output) is a
      copy into a subview of a function argument (`planAppend`: the KV
      cache append of k and v in a decode entry);
    * with `allow-tf32` on sm_80 and newer, `gpu_mma_tiles` also on each
      contraction of two f32 inputs into f32 (tensors or buffers;
      `isTF32MatmulCandidate`), which `blockc-gpu-tile-matmul` then builds
      on TF32 tensor cores (m16n8k8 `mma.sync`): 128 x 128 tiles on 2 x 2
      warps, k steps of 16 f32 in 4 stages (80 KiB, the bytes of the bf16
      tiles). TF32 changes the numerics of an f32 model (10-bit mantissa
      products), so it is off unless asked for (`-gpu-allow-tf32`). On
      sm_90a, on buffers, such a contraction with the warpgroup kernel's
      layout (`isWarpgroupTF32Candidate`) also gets
      `gpu_warpgroup_tiles` (by `warpgroup-schedule`, as above: the
      warpgroup kernel with tf32 operands), unless its M-side input is
      written by a pointwise producer that the `mma.sync` kernel applies
      in its prologue (`planPrologue`: an f32 block's norm), which keeps
      `gpu_mma_tiles` only.

    * on sm_80 and newer, `blockc_codegen.gpu_mma_attention =
      #blockc_codegen.gpu_mma_attention<warps = 4, kv_tile = 64>` on each
      `transformer.sdpa` whose operands are widened from bf16 / f16
      (`kv_tile = 32` at head dims of 128 and more, where the `mma.sync`
      kernel spills with 64-key tiles); on sm_90a at head dims 64 and 128
      with `warpgroup = true` (the warpgroup-MMA kernel; at head dim 128
      `fallback_kv_tile = 32`, the key tile of the `mma.sync` kernel that
      runs where TMA cannot read the operands), `consumers = 2`
      (warp-specialised) where its
      shared memory fits and `attention-consumers` is 2, and then
      `stages = 3` (a 3-stage K/V ring: 129 / 193 KiB at D = 64 / 128)
      where that fits and `attention-stages` is 3 (the default;
      `attention-stages=2` keeps the 2-stage ring), and `overlap = true`
      (the consumers' intra-warpgroup overlap) with `consumers = 2` unless
      `attention-overlap` is false (one key tile at a time).

    The attention ops exist before bufferization and the contractions on
    buffers only after it, so the NVPTX pipeline runs this pass before
    `blockc-gpu-lower-sdpa` and again before `blockc-gpu-tile-matmul`; the
    second run keeps what the first wrote.

    The rule per chip (`sm_<N>`, optionally with a feature suffix as in
    `sm_90a`): sm_80 and sm_90 get 64 x 64 contraction tiles on 16 x 16
    threads (4 x 4 accumulators per thread) with k steps of 16 (8.1 KiB of
    shared memory), 32 x 8 threads for the other loops and attention
    blocks of 4 warps x 4 query rows (a decode step's keys in splits of
    64, at most 32). Every other chip gets the same
    values: they need at most 256 threads and 8.1 KiB of static shared
    memory per block, within the limits of every chip since sm_50 (1024
    threads, 48 KiB), but have been chosen for sm_80 / sm_90 only. A chip
    name that is not `sm_<N>` is an error.

    ```mlir
    func.func @f(...) {                                       // before
      %o = transformer.sdpa %q, %k, %v {causal} : ...
    func.func @f(...) attributes {blockc_codegen.gpu_map =   // after
        #blockc_codegen.gpu_map<threads_x = 32, threads_y = 8>} {
      %o = transformer.sdpa %q, %k, %v {causal, blockc_codegen.gpu_attention =
          #blockc_codegen.gpu_attention<rows_per_warp = 4, warps = 4>} : ...
    ```
  }];
  let options = [
    Option<"chip", "chip", "std::string", /*default=*/"\"sm_90\"",
           "The GPU the kernels are for (sm_<N>)">,
    Option<"allowTf32", "allow-tf32", "bool", /*default=*/"false",
           "Run f32 contractions on TF32 tensor cores (sm_80+; rounds their "
           "operands to 10-bit mantissas)">,
    Option<"warpgroupSchedule", "warpgroup-schedule", "std::string",
           /*default=*/"\"specialized\"",
           "The sm_90a warpgroup-MMA projections: specialized (a producer "
           "warpgroup), persistent (and one block per multiprocessor) or "
           "cooperative (no producer)">,
    Option<"warpgroupEpilogue", "warpgroup-epilogue", "std::string",
           /*default=*/"\"tma\"",
           "The sm_90a warpgroup-MMA projections' epilogue: tma (a TMA "
           "store of each output tile from shared memory, where the "
           "shared memory fits) or elements (per-element stores)">,
    Option<"mmaRope", "mma-rope", "bool", /*default=*/"true",
           "The mma.sync projections (sm_80 and newer, where no warpgroup "
           "tiles are chosen) apply the RoPE that reads their rounded "
           "result on a shared-memory staging tile where their tiles cover "
           "whole heads">,
    Option<"warpgroupRope", "warpgroup-rope", "bool", /*default=*/"true",
           "The sm_90a warpgroup-MMA projections with a TMA store apply the "
           "RoPE that reads their result where their tiles cover whole "
           "heads">,
    Option<"attentionConsumers", "attention-consumers", "int64_t",
           /*default=*/"2",
           "The sm_90a warpgroup attention: 2 consumer warpgroups "
           "(warp-specialised) where the shared memory fits, or 1">,
    Option<"attentionStages", "attention-stages", "int64_t",
           /*default=*/"3",
           "The sm_90a warp-specialised attention's K/V ring: 3 stages "
           "where the shared memory fits (else 2), or 2">,
    Option<"attentionOverlap", "attention-overlap", "bool",
           /*default=*/"true",
           "The sm_90a warp-specialised attention's consumers: the "
           "intra-warpgroup overlap (S of key tile j with P V of tile "
           "j - 1), or one key tile at a time">,
    Option<"gemvRopeAppend", "gemv-rope-append", "bool", /*default=*/"true",
           "Decode projections: the weight-streaming kernel also applies "
           "the RoPE of its result and appends K and V to the KV cache "
           "(rope_head_dim, kv_append on gpu_gemv), or separate kernels">
  ];
  let statistics = [
    Statistic<"numConfigured", "num-configured",
              "Configuration attributes written">
  ];
  let dependentDialects = ["::blockc::codegen::CodegenDialect"];
}

def GPUSeparateHeadBuffersPass
    : Pass<"blockc-gpu-separate-head-buffers", "::mlir::func::FuncOp"> {
  let summary = "Give the projections' per-head results buffers of their own";
  let description = [{
    CSE merges the `tensor.empty` ops of one shape, so the epilogue
    generics of the q, k and v projections (their bf16 rounding), the
    norms and the residual adds of every layer start from the same empty
    tensor, and one-shot bufferization writes each of them in place into
    that one allocation wherever its last value is dead: v's rounded
    result into the norm's output buffer, q's and v's of every layer into
    the first layer's. The weight-streaming and tensor-core epilogues fuse
    the RoPE and the KV-cache append only where they are the sole readers
    of the result's buffer (`planRotation`, `planAppend`), which that
    sharing defeats.

    This pass, run right before bufferization, replaces the init of each
    all-parallel generic on tensors that reads a contraction's result and
    whose result is split into heads (a `tensor.expand_shape` of its last
    dimension into two: the `[M..., H, D]` view a RoPE or a cache append
    reads) by a `bufferization.alloc_tensor` of its own, where that init is
    a `tensor.empty` with other uses and the body does not read it. The
    result then bufferizes to an allocation whose only readers are the
    head view's (the deallocation pipeline frees it after them).

    ```mlir
    %e = tensor.empty(%m) : tensor<?x256xbf16>     // also the norm's init
    %v = linalg.generic ins(%acc : tensor<?x256xf32>) outs(%e ...)  // before
    %own = bufferization.alloc_tensor(%m) : tensor<?x256xbf16>
    %v = linalg.generic ins(%acc : tensor<?x256xf32>) outs(%own ...) // after
    %h = tensor.expand_shape %v [[0], [1, 2]] ... into tensor<?x4x64xbf16>
    ```
  }];
  let statistics = [
    Statistic<"numSeparated", "num-separated",
              "Per-head results given an allocation of their own">
  ];
  let dependentDialects = ["::mlir::bufferization::BufferizationDialect"];
}

def GPUNarrowMmaOperandsPass
    : Pass<"blockc-gpu-narrow-mma-operands", "::mlir::func::FuncOp"> {
  let summary = "Give tensor-core contractions 16-bit inputs";
  let description = [{
    In a bf16 / f16 block every op computes in f32
    (`transformer-compute-in-f32`), so a projection reads an f32 activation
    and a 16-bit weight: `out + a * extf(w)`. Tensor cores multiply two
    16-bit operands. For each linalg contraction on tensors that carries
    `blockc_codegen.gpu_mma_tiles` (written by `blockc-gpu-select-tiles`),
    this pass replaces the f32 input by its `arith.truncf` to the weight's
    type, read through `arith.extf` in the body. The heuristic only
    configures contractions whose f32 input is produced by a linalg op that
    yields `arith.extf` from that type, so the narrowing is exact; the
    elementwise fusion that follows folds the `truncf` into that producer
    (`truncf(extf(x)) = x`), which then writes 16-bit values.

    ```mlir
    %a = linalg.generic ... { ... %r = arith.extf %x : bf16 to f32; linalg.yield %r }
    %y = linalg.generic {..., blockc_codegen.gpu_mma_tiles = ...}
        ins(%a, %w : tensor<?x?x64xf32>, tensor<32x64xbf16>) ...   // before
    %a16 = linalg.generic ins(%a) outs(...) { arith.truncf : f32 to bf16 }
    %y = linalg.generic {..., blockc_codegen.gpu_mma_tiles = ...}
        ins(%a16, %w : tensor<?x?x64xbf16>, tensor<32x64xbf16>)
        { ^bb0(%x: bf16, %w: bf16, %o: f32): extf; extf; mulf; addf }  // after
    ```

    A configured contraction whose f32 input is not known to hold 16-bit
    values is an error (the narrowing would round it).
  }];
  let statistics = [
    Statistic<"numNarrowed", "num-narrowed", "Operands narrowed to 16 bits">
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
}

def GPULowerMmaToNVVMPass
    : Pass<"blockc-gpu-lower-bf16-mma", "::mlir::gpu::GPUModuleOp"> {
  let summary = "Lower bf16 nvgpu.mma.sync to nvvm.mma.sync";
  let description = [{
    Upstream's `convert-nvgpu-to-nvvm` lowers `nvgpu.mma.sync` for f16,
    tf32, f64 and integers but not bf16 ("failed to deduce operand PTX
    types"). This pass lowers the bf16 m16n8k16 form with f32 accumulators
    to `nvvm.mma.sync` (PTX `mma.sync.aligned.m16n8k16.row.col.f32.bf16.
    bf16.f32`), packing each row of 2 bf16 of the A and B fragments into a
    32-bit register, and leaves every other `nvgpu` op to upstream. It runs
    in the NVPTX pipeline's stage 3 before `convert-nvgpu-to-nvvm`; the
    emulator pipeline models `nvgpu.mma.sync` itself.

    ```mlir
    %d = nvgpu.mma.sync (%a, %b, %c) {mmaShape = [16, 8, 16]}
        : (vector<4x2xbf16>, vector<2x2xbf16>, vector<2x2xf32>)
        -> vector<2x2xf32>                                          // before
    %s = nvvm.mma.sync A[%a0, %a1, %a2, %a3] B[%b0, %b1] C[%c0, ...]
        {multiplicandAPtxType = #nvvm.mma_type<bf16>, ...,
         shape = #nvvm.shape<m = 16, n = 8, k = 16>} ...            // after
    ```

    Any other bf16 `nvgpu.mma.sync` shape is an error.
  }];
  let dependentDialects = ["::mlir::NVVM::NVVMDialect",
                           "::mlir::LLVM::LLVMDialect",
                           "::mlir::vector::VectorDialect"];
}

def GPULowerAccumulatorFragmentsPass
    : Pass<"blockc-gpu-lower-accumulator-fragments",
           "::mlir::gpu::GPUModuleOp"> {
  let summary = "Warpgroup accumulator fragment ops to LLVM struct accesses";
  let description = [{
    Lowers `blockc_codegen.accumulator_to_fragment` and
    `blockc_codegen.fragment_to_accumulator` for NVVM. Upstream's
    `convert-nvgpu-to-nvvm` turns a 64 x N f32
    `!nvgpu.warpgroup.accumulator` into an LLVM struct holding one struct
    of the thread's N / 2 f32 registers (the operands and results of
    `nvvm.wgmma.mma_async`, in the PTX ISA's fragment order); its type
    converter is local to that pass, so this pass runs right before it in
    the NVPTX pipeline's stage 3 with a converter that gives the
    accumulator the same struct type: reading is one `llvm.extractvalue`
    `[0, i]` per element into a `vector.from_elements`, writing one
    `llvm.insertvalue` per element into a poison struct. The accumulators
    stay `nvgpu` values elsewhere, behind `unrealized_conversion_cast`s
    that meet those of `convert-nvgpu-to-nvvm` and fold in
    `reconcile-unrealized-casts`. The emulator pipeline lowers the two ops
    itself (`blockc-gpu-emulate-kernels`).

    ```mlir
    %f = blockc_codegen.accumulator_to_fragment %acc
        : !nvgpu.warpgroup.accumulator<fragmented = vector<64x16xf32>>
        -> vector<8xf32>                                           // before
    %s = builtin.unrealized_conversion_cast %acc : ... to
        !llvm.struct<(struct<(f32, f32, f32, f32, f32, f32, f32, f32)>)>
    %e0 = llvm.extractvalue %s[0, 0] : !llvm.struct<...>
    ...
    %f = vector.from_elements %e0, ..., %e7 : vector<8xf32>        // after
    ```
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect",
                           "::mlir::vector::VectorDialect"];
}

def GPUSetMinBlocksPass
    : Pass<"blockc-gpu-set-min-blocks", "::mlir::gpu::GPUModuleOp"> {
  let summary = "One block per SM as the launch bound of setmaxnreg kernels";
  let description = [{
    Gives every kernel of the module that reallocates registers
    (`nvvm.setmaxregister`, the warp-specialised Hopper kernels) the
    attribute `nvvm.minctasm = 1` (PTX `.minnctapersm 1`) unless it has
    one. With only `.maxntid`, ptxas may not know a kernel's register
    count at entry; it then ignores every `setmaxnreg` (info C7508,
    "'setmaxnreg' ignored; unable to determine register count at entry")
    and compiles all warpgroups to the launch share (168 registers at
    384 threads). Runs after kernel outlining in the NVPTX pipeline's
    stage 3.

    ```mlir
    gpu.func @k() kernel { ... nvvm.setmaxregister increase 240 ... }
    // after:
    gpu.func @k() kernel attributes {nvvm.minctasm = 1 : i32} { ... }
    ```
  }];
  let dependentDialects = ["::mlir::NVVM::NVVMDialect"];
}

def GPULowerTensorMapArgsPass
    : Pass<"blockc-gpu-lower-tensor-map-args", "::mlir::ModuleOp"> {
  let summary = "Pass TMA tensor maps to kernels as pointers";
  let description = [{
    `nvgpu.tma.create.descriptor` makes a TMA tensor map on the host (a
    pointer to it, `mgpuTensorMapEncodeTiledMemref`) that kernels read as an
    `!nvgpu.tensormap.descriptor` argument. Upstream's `convert-gpu-to-nvvm`
    and `gpu-to-llvm` have no conversion for that type in a kernel's
    signature or a `gpu.launch_func` operand. After outlining, this pass
    gives every such kernel argument the type `!llvm.ptr` (the body reads it
    back through `builtin.unrealized_conversion_cast`) and casts the
    matching launch operands to `!llvm.ptr`; `convert-nvgpu-to-nvvm` turns
    the maps into pointers on both sides and `reconcile-unrealized-casts`
    removes the casts. Both NVPTX stage-3 pipelines (PTX and the emulator)
    run it.

    ```mlir
    gpu.func @k(%map: !nvgpu.tensormap.descriptor<...>) kernel    // before
    gpu.func @k(%p: !llvm.ptr) kernel {                           // after
      %map = builtin.unrealized_conversion_cast %p : !llvm.ptr to
          !nvgpu.tensormap.descriptor<...>
    ```
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

def GPULowerWorkgroupBarriersPass
    : Pass<"blockc-gpu-lower-workgroup-barriers", "::mlir::func::FuncOp"> {
  let summary = "blockc_codegen.workgroup_barrier to gpu.barrier";
  let description = [{
    Kernels built on tensors (the tensor-core attention of
    `blockc-gpu-lower-sdpa`) synchronise with
    `blockc_codegen.workgroup_barrier`, which declares memory effects so
    that the ownership-based buffer deallocation accepts it; once buffers
    are deallocated, this pass replaces each one by `gpu.barrier`, preceded
    for `cp_async_wait = N` by the thread's `cp.async` commit and a wait
    until at most N groups are pending (`nvgpu.device_async_create_group`,
    `nvgpu.device_async_wait`, which declare no memory effects either). A
    workgroup barrier outside a `gpu.launch` or `gpu.func` is an error.

    ```mlir
    blockc_codegen.workgroup_barrier   // before
    gpu.barrier                        // after
    blockc_codegen.workgroup_barrier {cp_async_wait = 0 : i32}   // before
    %t = nvgpu.device_async_create_group                          // after
    nvgpu.device_async_wait %t {numGroups = 0 : i32}
    gpu.barrier
    ```
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect"];
}

def GPULowerWarpgroupAttentionPass
    : Pass<"blockc-gpu-lower-warpgroup-attention", "::mlir::func::FuncOp"> {
  let summary = "blockc_codegen.warpgroup_attention to its sm_90a kernel";
  let description = [{
    Runs after the buffer deallocation and replaces each
    `blockc_codegen.warpgroup_attention` (written by `blockc-gpu-lower-sdpa`
    for a `gpu_mma_attention` with `warpgroup = true`) by the
    FlashAttention-3-style kernel (`#blockc_codegen.kernel<
    warpgroup_attention>`, docs/GPU.md):

    * host: a TMA tensor map per operand (4-D over `[B, L, H, D]`, boxes of
      1 x 64 x 1 x 64 elements, 128-byte swizzle, zero fill);
    * grid `(ceil(T / 64), H, B)` of one warpgroup (128 threads); dynamic
      shared memory aligned to 1024 bytes at run time: Q (`D / 64` swizzled
      panels of 64 rows), a 2-stage ring of K and V tiles and P's two
      16-bit parts;
    * O is one 64 x 64 wgmma accumulator per 64 columns of the head dim,
      carried by the loop over key tiles;
    * thread 0 initialises 3 mbarriers (one per stage, one for Q) and issues
      the TMA loads; per key tile up to the causal end of the block: wait on
      the stage's mbarrier, `S = Q K^T` (m64n64k16 `nvgpu.warpgroup.mma` per
      k16), S read in registers (`blockc_codegen.accumulator_to_fragment`),
      scale, mask and online softmax (quad shuffles), P written to shared
      memory, `nvvm.fence.proxy` (async shared), a barrier, O read, scaled
      by alpha and written back (`blockc_codegen.fragment_to_accumulator`),
      `O += P V` (`transposeB`: V is N-major as TMA wrote it), a barrier,
      thread 0 refills the stage with tile `j + 2`;
    * `O / l` stored from O's registers (rounded to `out`'s type), rows
      past T skipped.

    With `consumers = 2` on the op (the attribute's `consumers = 2`; head
    dims 64 and 128 only) the kernel is warp-specialised: grid
    `(ceil(T / 128) * B, H, 1)` of three warpgroups (384 threads; 113 /
    161 KiB of shared memory at D = 64 / 128 with 2 stages, 129 / 193 KiB
    with 3); warpgroup 0 (`setmaxnreg` 24) loads each consumer's Q and a
    ring of `stages` (the op's, 2 or 3) K and V tiles by TMA on full and
    empty mbarriers; warpgroups 1 and 2 (`setmaxnreg` 240) own
    64 query rows each and run the steps above on their own
    double-buffered P (a named barrier per warpgroup instead of the block's
    barrier); with `overlap` on the op (the attribute's `overlap = true`)
    overlapped within the warpgroup: step j issues S of key tile j and P V
    of tile j - 1, waits for S alone (`wgmma.wait_group N`, N > 0), and
    runs the softmax of tile j while P V is in flight; without it one key
    tile at a time (S, then P V, each waited for). They take turns on two
    mbarriers to issue each step or each tile's S and P V (ping-pong), each
    up to its own causal end. `overlap` with `consumers = 1` is an error.

    ```mlir
    blockc_codegen.warpgroup_attention %q, %k, %v, %o {...}  // before
    %map = nvgpu.tma.create.descriptor ...                    // after
    gpu.launch ... { ... nvgpu.warpgroup.mma ... }
    ```
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::NVVM::NVVMDialect",
                           "::mlir::nvgpu::NVGPUDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::vector::VectorDialect"];
}

def GPUStridedCopiesToKernelsPass
    : Pass<"blockc-gpu-strided-copies-to-kernels", "::mlir::func::FuncOp"> {
  let summary = "Strided memref.copy outside kernels as linalg.copy, so "
                "that the GPU copies them";
  let description = [{
    Bufferization writes a decode entry's new K/V rows into its caches with
    `memref.copy` into a strided subview of the cache. Outside a kernel
    such a copy runs on the host (`memrefCopy`, an element loop), where the
    caches are GPU memory: a driver's device buffers would not even be
    readable there, and managed ones would move to the host and back each
    step. This pass rewrites every `memref.copy` outside a `gpu.launch` /
    `gpu.func` whose source or target has a non-identity layout (both in
    the default memory space) into a `linalg.copy` of the same operands,
    which `convert-linalg-to-parallel-loops`, `blockc-gpu-tile-and-map`
    and `convert-parallel-loops-to-gpu` then turn into a kernel like any
    other elementwise loop. Contiguous copies are left to
    `blockc-gpu-host-shared-allocs` (`gpu.memcpy`).

    ```mlir
    memref.copy %k, %sv : memref<?x?x2x32xf32> to
        memref<?x?x2x32xf32, strided<[?, 32, ?, 1], offset: ?>>   // before
    linalg.copy ins(%k : memref<?x?x2x32xf32>) outs(%sv : memref<?x?x2x32xf32,
        strided<[?, 32, ?, 1], offset: ?>>)                         // after
    ```
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def GPUTileElementwisePass
    : Pass<"blockc-gpu-tile-elementwise", "::mlir::func::FuncOp"> {
  let summary = "Elementwise kernels with 16-byte vector accesses";
  let description = [{
    Rewrites every all-parallel `linalg.generic` (and `linalg.copy`,
    generalized first) on buffers outside kernels, with one output and a
    body without memory effects, into a `gpu.launch` of
    `threads_x * threads_y` threads per block (the function's
    `blockc_codegen.gpu_map`; a function with such an op and no attribute
    is an error) in which each thread computes `w` consecutive elements of
    the innermost loop, `w` being 16 bytes of the narrowest operand
    accessed by vectors (8 for bf16 / f16, 4 for f32). The output must be a
    strided buffer of 16-, 32- or 64-bit elements whose last index is the
    innermost loop and whose other indices do not read it; a static
    innermost size must be a multiple of `w`. Other ops are left to
    `convert-linalg-to-parallel-loops` and `blockc-gpu-tile-and-map`.

    * Vector operands: the output, and every input of such a buffer whose
      last index reads the innermost loop `d` as `d` or as `(d + c) mod m`
      with `c` and `m` multiples of `w` (RoPE's rotate-half partner
      `x[(i + D/2) mod D]`: a run of `w` elements starting at a multiple of
      `w` stays a run), its other indices not. Other inputs that read `d`
      are read element by element, inputs that do not read it once per
      thread.
    * A check on the host, uniform over the grid, takes the 16-byte path
      when the innermost size is a multiple of `w` and every vector operand
      has a unit innermost stride, an offset and other strides that are
      multiples of `w` and a 16-byte aligned base (the check of
      `blockc-gpu-tile-reductions`, `KernelBuilder::contiguousView`).
      Thread `t` of block `b` then takes chunk `c = 256 b + t` (with 256
      threads): row `c / (D / w)`, elements `w (c mod D / w)` on; one
      `vector.load` of `vector<w x T>` per vector input (`ld.global.v4`),
      the body per element, one `vector.store` of the output.
    * Otherwise the same threads compute the block's `256 w` elements one
      at a time, consecutive threads on consecutive elements (coalesced
      2-byte accesses for bf16), `w` steps each.

    The values are those of the scalar kernel (the same body per element).

    ```mlir
    linalg.generic {indexing_maps = [#id, #rot, #id],
                    iterator_types = ["parallel", "parallel", "parallel"]}
        ins(%x, %x : memref<?x32x128xbf16>, memref<?x32x128xbf16>)
        outs(%y : memref<?x32x128xbf16>) { ... }  // #rot: (d2 + 64) mod 128
    // becomes
    %ok = ...        // strides, offsets, alignment (host)
    gpu.launch blocks(ceil(T * 32 * 16 / 256), 1, 1) threads(256, 1, 1) {
      scf.if %ok {
        vector.load %x[%t, %h, %k] : ..., vector<8xbf16>
        vector.load %x[%t, %h, (%k + 64) mod 128] : ..., vector<8xbf16>
        ...                                         // the body, 8 times
        vector.store %v, %y[%t, %h, %k] : ..., vector<8xbf16>
      } else {
        scf.for %j = %c0 to %c8 step %c1 { ... memref.store ... }
      }
    }
    ```
  }];
  let statistics = [
    Statistic<"numTiled", "num-tiled",
              "Elementwise ops turned into 16-byte kernels">
  ];
  let dependentDialects = ["::blockc::codegen::CodegenDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::gpu::GPUDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::vector::VectorDialect"];
}

def GPUTileAndMapPass
    : Pass<"blockc-gpu-tile-and-map", "::mlir::func::FuncOp"> {
  let summary = "Tile parallel loops into thread blocks with coalesced access";
  let description = [{
    Tiles every outermost `scf.parallel` (the parallel dimensions of a
    linalg op) so that the innermost dimension gets `threads_x` threads and
    the one before it `threads_y` (other dimensions tile by 1), as the
    function's `blockc_codegen.gpu_map = #blockc_codegen.gpu_map<threads_x,
    threads_y>` says (written by `blockc-gpu-select-tiles`; a function with
    a loop to map and no such attribute is an error), then maps
    the loops for `convert-parallel-loops-to-gpu`: the innermost dimension
    to `block_x` / `thread_x` (consecutive threads touch consecutive
    elements: coalesced loads and stores), the next to `y`, the next to the
    grid's `z`, and any further outer dimension to a sequential loop inside
    the kernel. A one-dimensional loop gets `threads_x * threads_y` threads.
    Unlike upstream's `gpu-map-parallel-loops`, which maps the outermost
    dimension to `x`, this keeps the fastest-varying index on `x`.

    ```mlir
    // in a function with blockc_codegen.gpu_map =
    //     #blockc_codegen.gpu_map<threads_x = 32, threads_y = 8>
    scf.parallel (%t, %j) = (%c0, %c0) to (%T, %c4096) step (%c1, %c1)
    // becomes a grid (4096/32, T/8) of blocks of (32, 8) threads
    ```
  }];
  let dependentDialects = ["::blockc::codegen::CodegenDialect",
                           "::mlir::gpu::GPUDialect",
                           "::mlir::scf::SCFDialect"];
}

def GPUTileReductionsPass
    : Pass<"blockc-gpu-tile-reductions", "::mlir::func::FuncOp"> {
  let summary = "One warp per row for reductions over the innermost "
                "dimension";
  let description = [{
    Rewrites every `linalg.generic` on buffers that reduces its innermost
    loop into an f32 output read at the other loops in order (the
    statistics of RMSNorm and LayerNorm: `[B, T, d] -> [B, T]`), whose
    inputs are read at loop indices and constants, and whose body has no
    memory effects and yields `combiner(out, v)` with `out` used only there
    and `combiner` one of `arith.addf`, `mulf`, `maximumf`, `maxnumf`,
    `minimumf`, `minnumf`, into a `gpu.launch`
    (`#blockc_codegen.kernel<row_reduction>`) with one warp per output
    element, `threads_x * threads_y / 32` warps per block (the function's
    `blockc_codegen.gpu_map`; a function with a reduction to rewrite and no
    such attribute is an error):

    * lane `l` folds elements `l, l + 32, ...` of its row through the body,
      starting from the combiner's identity (consecutive lanes read
      consecutive elements: coalesced);
    * 16-byte loads instead, when every input that depends on the reduced
      loop reads it as its innermost index only, from a bf16, f16 or f32
      buffer with a strided layout: a check on the host, uniform over the
      grid, takes this path when the reduced length is a multiple of `w`
      (8 when one of those inputs is 16-bit, else 4) and each such input
      has a unit innermost stride, an offset and other strides that are
      multiples of `w` and a 16-byte aligned base. Lane `l` then reads
      `vector<w x T>` at elements `w l, w (l + 32), ...` (`vector.load`,
      `ld.global.v4`; a dynamic innermost stride is read through a
      `memref.reinterpret_cast` with a static unit stride), evaluates the
      body on each element from the identity, combines the `w` values
      pairwise and folds them into its partial value; the inputs read at
      the row only are loaded once;
    * five `gpu.shuffle xor` steps (16, 8, 4, 2, 1) combine the lanes'
      partial values (every lane ends with the total);
    * lane 0 stores `combiner(out, total)`.

    With `chain-statistics`, a row reduction that reads the results of the
    reductions before it at its own output's indices (a norm's sum of squares of `x / max |x|`
    after the `max |x|`) joins their kernel, built where it was: each warp
    computes the first result of its row, every lane folds the total into
    the output's initial value and uses that in the next body in place of
    the load (its pass over the row re-reads it from L1 / L2), and lane 0
    stores each result. Only when the ops between them touch none of the
    earlier reductions' buffers (those now run later) and the later one
    writes none of them, with as many loops (linalg's shapes then make
    the rows the same).

    With `fuse-apply`, the first `linalg.generic` after a kernel's
    reductions, when it is all-parallel on buffers, reads their results at
    the row (under the conditions of a joining reduction), writes one output at
    the loop indices in order without reading it and reads none of its
    inputs from that output's buffer (a norm's apply: `x`, the statistics,
    the gain), is computed by the same warps after the results (which every
    lane then holds): lane `l` writes elements `l, l + 32, ...` of the row,
    or, when the row's inputs and the output pass the 16-byte check above,
    `vector<w x T>` at `w l, w (l + 32), ...` (one 16-byte load per input,
    the body per element, `vector.from_elements` and one 16-byte
    `vector.store`). The statistics are still stored.

    Without it `convert-linalg-to-parallel-loops` gives each row to one
    thread that walks it alone, consecutive threads `d` elements apart. The
    sum is associated differently from the sequential loop (f32 rounding
    only; a max or min is exact).

    ```mlir
    linalg.generic {iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%x : memref<?x?x4096xf32>) outs(%ss : memref<?x?xf32>) {
      ^bb0(%in: f32, %out: f32):
        %sq = arith.mulf %in, %in : f32
        %s = arith.addf %out, %sq : f32
        linalg.yield %s : f32
    }                                                   // before
    gpu.launch blocks(ceil(B * T / 8), 1, 1) threads(256, 1, 1) {
      scf.for %k = %lane to %c4096 step %c32 ...        // lane partials
      gpu.shuffle xor ... ; arith.addf                   // x 5
      scf.if %lane_is_0 { memref.store ... }
    } {blockc_codegen.kernel = #blockc_codegen.kernel<row_reduction>}
    ```
  }];
  let options = [
    Option<"chainStatistics", "chain-statistics", "bool",
           /*default=*/"false",
           "One kernel for row reductions that read earlier ones' results at "
           "their row (a norm's two statistics)">,
    Option<"fuseApply", "fuse-apply", "bool", /*default=*/"false",
           "The elementwise op after a kernel's reductions that reads their "
           "results at its row (a norm's apply) in the same kernel">
  ];
  let statistics = [
    Statistic<"numTiled", "num-tiled", "Reductions turned into warp kernels">,
    Statistic<"numApplied", "num-applied",
              "Elementwise ops computed in a reduction kernel">
  ];
  let dependentDialects = ["::blockc::codegen::CodegenDialect",
                           "::mlir::gpu::GPUDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::vector::VectorDialect"];
}

def GPUTileMatmulPass
    : Pass<"blockc-gpu-tile-matmul", "::mlir::func::FuncOp"> {
  let summary = "Shared-memory tiled kernels for contractions on buffers";
  let description = [{
    Rewrites every linalg op on f32 buffers whose body is `out + a * b` and
    whose indexing maps are projected permutations with one N and one K
    dimension (batch and M may be several dimensions; e.g. a projection
    `y[b, t, n] += x[b, t, k] * W[n, k]`) into one `gpu.launch`, with the
    sizes of the op's `blockc_codegen.gpu_matmul_tiles =
    #blockc_codegen.gpu_matmul_tiles<tile_m, tile_n, tile_k, threads_x,
    threads_y>` (written by `blockc-gpu-select-tiles`; a contraction without
    it is an error):

    * the grid is `(ceil(N / tile_n), ceil(M / tile_m), batch)` with blocks
      of `threads_x x threads_y` threads;
    * each step of the K loop copies a `tile_k x tile_m` tile of the M-side
      operand and a `tile_k x tile_n` tile of the N-side operand into
      workgroup (shared) memory (`#gpu.address_space<workgroup>`
      attributions of the launch, padded by one column against bank
      conflicts), with consecutive threads reading consecutive elements of
      the operand's fastest-varying dimension (coalesced), then
      `gpu.barrier`;
    * each thread accumulates a `(tile_m / threads_y) x (tile_n / threads_x)`
      register tile (rows `thread_y + threads_y * i`, columns
      `thread_x + threads_x * j`) with `math.fma`, then adds it to the
      output (which holds the bias or zero) under a bounds check.

    Out-of-range tile elements read a clamped address and contribute zero,
    so any M, N and K work. The launch carries `blockc_codegen.kernel =
    #blockc_codegen.kernel<tiled_matmul>`. Runs after bufferization and
    buffer deallocation (the barrier has no declared memory effects, which
    the ownership-based deallocation rejects).

    ```mlir
    linalg.generic ... ins(%x, %w : memref<?x?x64xf32>, memref<32x64xf32>)
        outs(%y : memref<?x?x32xf32>) { mulf; addf }
        {blockc_codegen.gpu_matmul_tiles = #blockc_codegen.gpu_matmul_tiles<
           tile_m = 64, tile_n = 64, tile_k = 16, threads_x = 16,
           threads_y = 16>}                                      // before
    gpu.launch blocks(...) in (%gx = ceil(32/64), %gy = ceil(B*T/64), %gz = 1)
        threads(...) in (16, 16, 1)
        workgroup(%a : memref<16x65xf32, #gpu.address_space<workgroup>>,
                  %b : memref<16x65xf32, #gpu.address_space<workgroup>>)  // after
    ```

    **Tensor cores.** A contraction of two bf16 / f16 buffers into f32
    (body `out + extf(a) * extf(b)`, K the innermost index of both inputs,
    a static K that `tile_k` divides, identity layouts) that carries
    `blockc_codegen.gpu_mma_tiles = #blockc_codegen.gpu_mma_tiles<tile_m,
    tile_n, tile_k, warps_m, warps_n, stages>` becomes a tensor-core
    `gpu.launch` (`#blockc_codegen.kernel<tensor_core_matmul>`) built from
    `nvgpu` ops:

    * grid `(ceil(N / tile_n), ceil(M / tile_m), batch)`, blocks of
      `32 * warps_m * warps_n` threads; warp (i, j) owns a
      `(tile_m / warps_m) x (tile_n / warps_n)` sub-tile as m16n8
      accumulators (`vector<2x2xf32>` each);
    * a ring of `stages` shared buffers per operand
      (`memref<stages x rows x (tile_k + 8)>` views of the launch's dynamic
      shared memory, rows padded by 16 bytes against ldmatrix bank
      conflicts): the prologue queues `stages - 1`
      reduction steps with `nvgpu.device_async_copy` (16-byte `cp.async.cg`
      chunks, zero-filled past M, N or the last step) and
      `nvgpu.device_async_create_group`; step `kt` waits until at most
      `stages - 2` groups are pending (`nvgpu.device_async_wait`),
      synchronises once, queues step `kt + stages - 1` into the stage of
      step `kt - 1`, and for each k16 loads A fragments and pairs of B
      fragments with `nvgpu.ldmatrix` (x4) and issues `nvgpu.mma.sync`
      m16n8k16;
    * the epilogue adds each accumulator to the output under a bounds check
      (rows `g`, `g + 8`, columns `2t`, `2t + 1` of lane `4g + t`).

    A configured op that is not such a contraction, or whose K `tile_k`
    does not divide, is an error.

    **Warpgroup MMA (sm_90a).** A tensor-core contraction that also carries
    `blockc_codegen.gpu_warpgroup_tiles = #blockc_codegen.gpu_warpgroup_tiles<
    tile_m, tile_n, stages>` becomes the Hopper kernel
    (`#blockc_codegen.kernel<warpgroup_matmul>`) instead:

    * on the host, the M input collapsed to `[M, K]` and the `[N, K]` weight
      get TMA tensor maps (`nvgpu.tma.create.descriptor`, boxes of
      `tile_m x 64` and `tile_n x 64`, 128-byte swizzle, zero fill);
    * grid `(ceil(N / tile_n), ceil(M / tile_m))`, blocks of `tile_m / 64`
      warpgroups; one mbarrier per stage (`nvgpu.mbarrier.create`); thread
      0 initialises them and issues, per reduction step of 64, an
      `nvgpu.mbarrier.arrive.expect_tx` of the stage's bytes and the two
      `nvgpu.tma.async.load`s; the ring (dynamic shared memory, aligned to
      1024 bytes at run time for the swizzle) keeps `stages - 1` steps in
      flight;
    * step `kt` waits on its stage's mbarrier (`nvgpu.mbarrier.try_wait.
      parity`, parity `(kt / stages) % 2`), issues four
      `nvgpu.warpgroup.mma` (m64 n`tile_n` k16, both operands K-major
      through `nvgpu.warpgroup.generate.descriptor`, 32 bytes further along
      the swizzled rows for each k16; each waits for all but the newest
      group), synchronises the block (every warpgroup is then done with
      step `kt - 1`) and thread 0 refills the stage of step `kt - 1` with
      step `kt + stages - 1`;
    * after `nvvm.wgmma.wait.group.sync.aligned 0` and a barrier, each
      warpgroup stores its accumulator into shared memory
      (`nvgpu.warpgroup.mma.store`) and the block adds the tile to the
      output under bounds checks, consecutive threads on consecutive
      columns.

    For two f32 inputs (a TF32 contraction, `isWarpgroupTF32Candidate`)
    the same kernel has tf32 operands: f32 TMA boxes of 32 values per
    128-byte row, each stage rounded to tf32 in place by the consumer
    threads (16 bytes at a time, to nearest with ties away, as the
    `mma.sync` TF32 kernel rounds its fragments), `nvvm.fence.proxy`
    (async shared) and a barrier of the consumers (of the block without a
    producer), then 4 m64nNk8 tf32 wgmmas per stage (descriptor tensors
    typed `tf32`). A warpgroup-configured op that both
    `isWarpgroupMatmulCandidate` and `isWarpgroupTF32Candidate` reject is
    an error.

    **Small M at run time.** A tensor-core contraction with a dynamic M
    that also carries `blockc_codegen.gpu_gemv` (a decode entry's
    projections; `blockc-gpu-tile-gemv` leaves it here) becomes `scf.if M <=
    max_m` with blockc-gpu-tile-gemv's weight-streaming kernel in the then
    branch and this pass's kernel in the else branch, both computing the
    same epilogue plan. With `rope_head_dim` on either kernel's attribute
    the RoPE is planned for both; a kernel without it writes the unrotated
    result and a copy of the RoPE follows it in its branch. With
    `kv_append` on `gpu_gemv`, the weight-streaming kernel writes the KV
    cache and the append's copy (left for the tensor-core kernel's result)
    moves into an `scf.if` on the same test, run when M > `max_m`.

    **Epilogues** (both tensor-core kernels; docs/GPU.md). The kernel
    evaluates the value its output buffer starts from when the buffer is a
    local allocation whose last writer is a `linalg.fill`, a `memref.copy`
    of such a buffer, or a pointwise `linalg.generic` over arguments nothing
    writes (a bias broadcast), and adds the f32 sum to it; otherwise it
    reads the buffer. With `fuse-epilogues` (the default), when the only
    later reader of the result is a pointwise `linalg.generic` (identity
    map on it, point reads of its other inputs, a body without memory
    effects) with only allocations and pure ops in between, and its output
    overlaps neither contraction input, the kernel is built in its place,
    evaluates its body per element and stores into its output; the f32
    buffer is not written. When that consumer also reads a second
    contraction of the same M-side input with the same maps, operand types
    and tiles (gate and up), one kernel computes both: `tile_n / 2` output
    columns per block, B rows split per warp (`mma.sync`) or warpgroup
    (two 64-row TMA boxes) between the two weights so that each thread
    holds both values of its output elements. Init writers no longer read,
    and allocations only written and freed, are erased.

    **RoPE** (the warpgroup kernel with `tma_store` and `rope_head_dim = D`
    on its tiles, which `blockc-gpu-select-tiles` writes; with
    `fuse-epilogues`). The consumer's 16-bit output is read by nothing but
    a rotate-half RoPE generic over its `[M..., H, D]` view (`planRotation`:
    reads at `d` and `(d + D / 2) mod D`, other inputs read-only buffers at
    loop indices, a pure body, a fresh output). The RoPE's output is
    allocated before the kernel instead; once the staging tile is written
    and the consumers met, each consumer thread takes pairs of columns `d`,
    `d + D / 2` of a head of the tile, evaluates the RoPE's body for both
    from the two staged values (rows and heads outside the output at
    clamped indices) and writes both back; the TMA store then writes the
    rotated tile to the RoPE's output and the RoPE is erased. The
    `mma.sync` kernel with `rope_head_dim = D` on its tiles does the same
    on a 16-bit staging tile over its ring: once the ring is drained (a
    barrier), each thread writes its rounded results there instead of to
    memory; after a barrier each thread takes pairs of columns `d`,
    `d + D / 2` of a head of the tile and stores the RoPE's two values to
    its output (rows past M and heads past the output skipped). In both
    kernels a thread whose pairs are in the same columns of every row (its
    stride a multiple of half a tile row) computes their indices and loads
    the RoPE's inputs indexed by head and d only (the frequency table) once,
    before its pair loop. In the
    small-M branch of a run-time dispatch (above) the weight-streaming
    kernel writes the unrotated result and a copy of the RoPE follows it.
    Tiles with `rope_head_dim` whose result is not read that way are an
    error.

    **Prologues** (TF32 kernels, with `fuse-epilogues`). When the M-side f32
    input of a TF32 contraction is a local allocation whose last writer is
    a pointwise `linalg.generic` with one input of the buffer's type at the
    identity map and its other inputs indexed by the buffer's leading (M)
    dimensions only or by its last (K) dimension only (an f32 block's
    normalisation `x * r[b, t] * gain[k]`), and nothing between the two
    writes the buffer or those inputs, the kernel copies that input instead
    and evaluates the producer's body on each A fragment element in
    registers before rounding it to tf32: the per-row inputs read once per
    thread row, the per-k inputs once per k8 step. The producer is erased
    when nothing reads its buffer any more.

    **Norm prologues of the run-time choice** (`norm-prologue`). Where the
    M-side input of contractions that choose at run time (above) is the
    output of a norm (the elementwise op that applies a chain of row
    reductions over one input `x`, the chain as
    `blockc-gpu-tile-reductions` fuses it) and those contractions are all
    that read it, the weight-streaming kernels evaluate the norm
    themselves: each warp computes a row's statistics from `x` with the
    norm kernel's own code (the same lanes, order and butterfly, so the
    values are the same bits) and applies the norm to each 16-byte vector
    of `x` it would have read from the output. The choice becomes
    `M <= max_m` and the 16-byte paths of `x` and the norm's other inputs
    (checked on the host), and the norm runs, in an `scf.if` on the
    opposite condition, only for the tensor-core kernels. Nothing may
    write `x` or those inputs between the norm and its last reader.

    ```mlir
    linalg.fill ins(%zero) outs(%acc)                      // before
    linalg.generic ins(%x, %w) outs(%acc) {mulf; addf} {gpu_mma_tiles = ...}
    linalg.generic ins(%acc) outs(%y : memref<?x?x64xbf16>) {truncf}
    gpu.launch ... {                                      // after
      ... %v = arith.addf %zero, %sum; %r = arith.truncf %v
      memref.store %r, %y[...]
    }
    ```
  }];
  let statistics = [
    Statistic<"numTiled", "num-tiled", "Contractions turned into tiled kernels">,
    Statistic<"numTensorCore", "num-tensor-core",
              "Contractions turned into tensor-core kernels">,
    Statistic<"numWarpgroup", "num-warpgroup",
              "Contractions turned into warpgroup-MMA kernels">,
    Statistic<"numEpilogues", "num-epilogues",
              "Elementwise consumers computed in tensor-core epilogues">,
    Statistic<"numPairs", "num-pairs",
              "Pairs of contractions run as one tensor-core kernel">,
    Statistic<"numPrologues", "num-prologues",
              "TF32 kernels evaluating their input's producer in registers">,
    Statistic<"numRotations", "num-rotations",
              "RoPEs applied in tensor-core epilogues">,
    Statistic<"numAppends", "num-appends",
              "KV-cache appends written by the weight-streaming kernels of "
              "the run-time choice">,
    Statistic<"numNormPrologues", "num-norm-prologues",
              "Weight-streaming kernels that evaluate their input's norm">
  ];
  let options = [
    Option<"fuseEpilogues", "fuse-epilogues", "bool", /*default=*/"true",
           "Compute each tensor-core contraction's elementwise consumer in "
           "its epilogue, pair contractions of one input that it reads, and "
           "(TF32) its input's elementwise producer in its prologue">,
    Option<"normPrologue", "norm-prologue", "bool", /*default=*/"false",
           "Weight-streaming kernels of the run-time choice evaluate the "
           "norm that writes their M-side input (its statistics and its "
           "apply) themselves; the norm runs for the tensor-core kernels "
           "only (docs/GPU.md)">
  ];
  let dependentDialects = ["::blockc::codegen::CodegenDialect",
                           "::mlir::gpu::GPUDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::nvgpu::NVGPUDialect",
                           "::mlir::LLVM::LLVMDialect",
                           "::mlir::NVVM::NVVMDialect",
                           "::mlir::vector::VectorDialect"];
}

def GPUTileGemvPass
    : Pass<"blockc-gpu-tile-gemv", "::mlir::func::FuncOp"> {
  let summary = "Weight-streaming kernels for small-M contractions";
  let description = [{
    Rewrites each contraction of a bf16 / f16 `[M..., K]` buffer and an
    `[N, K]` weight buffer of that type into f32
    (`isWarpgroupMatmulCandidate`: no batch dimension, K static, a multiple
    of 16, innermost in both) that carries `blockc_codegen.gpu_gemv =
    #blockc_codegen.gpu_gemv<warps, columns, rows, unroll, max_m>` into one
    `gpu.launch` (`#blockc_codegen.kernel<gemv>`) that reads the weight
    once, with 16-byte vector loads (docs/GPU.md#decoding):

    * grid `ceil(N / (warps * columns))` blocks of `32 * warps` threads;
      warp w of block x owns columns `(x * warps + w) * columns + c`;
    * M goes `rows` rows at a time, then the last `M % rows` one at a time;
      lane l reads 8 elements of K at `8 * (32 * (s * unroll + u) + l)` of
      each weight row and of each activation row (`vector.load` of
      `vector<8xbf16>`, 16-byte aligned: a warp reads 512 contiguous
      bytes), `unroll` steps u unrolled per iteration s; the partial last
      iteration (K not a multiple of `256 * unroll`) is unrolled with a
      per-lane guard; sums are `vector<8xf32>` FMAs of the widened
      operands;
    * each sum is reduced over its 8 elements and over the warp (five
      `gpu.shuffle xor`), then lane `i` writes the i-th (row, column)
      result through the epilogue of the tensor-core kernels
      (`planEpilogue`, `writeEpilogueResults`: the init evaluated, the
      elementwise consumer computed, gate and up paired, each lane reading
      both weights' rows);
    * with `rope_head_dim = D`, warp w's columns are the pairs `q = (x *
      warps + w) * columns / 2 + p` of column `h D + j` (q = h D / 2 + j)
      and its partner `h D + j + D / 2`; lane `i` takes the i-th (row,
      pair), computes both rounded results and evaluates the RoPE that reads
      them (planRotation, as blockc-gpu-tile-matmul's `rope_head_dim`) for
      both, writing the RoPE's output, which goes;
    * with `kv_append`, the final result (the RoPE's, or the consumer's
      `[M..., N]` as `[M..., H, D]`) is stored straight into the KV-cache
      argument that a `memref.copy` after the kernel wrote it to (at that
      copy's subview offsets, guarded by the argument's sizes), and the
      copy goes (`planAppend`). With the run-time choice of
      blockc-gpu-tile-matmul the copy stays for the tensor-core branch, in
      an `scf.if` on the same M test.

    A `rope_head_dim` or `kv_append` whose RoPE or copy is not there is an
    error. Ops whose M is not static and that also carry tensor-core tiles are
    left to `blockc-gpu-tile-matmul`, which builds both kernels and chooses
    by M at run time. A configured op that is not a candidate, or whose
    static M exceeds `max_m`, is an error.
  }];
  let statistics = [
    Statistic<"numGemv", "num-gemv",
              "Contractions turned into weight-streaming kernels">,
    Statistic<"numEpilogues", "num-epilogues",
              "Elementwise consumers computed in their epilogues">,
    Statistic<"numPairs", "num-pairs",
              "Pairs of contractions run as one weight-streaming kernel">,
    Statistic<"numRotations", "num-rotations",
              "RoPEs applied in weight-streaming kernels">,
    Statistic<"numAppends", "num-appends",
              "KV-cache appends written by weight-streaming kernels">
  ];
  let options = [
    Option<"fuseEpilogues", "fuse-epilogues", "bool", /*default=*/"true",
           "Compute each contraction's elementwise consumer in its "
           "epilogue and pair contractions of one input that it reads">
  ];
  let dependentDialects = ["::blockc::codegen::CodegenDialect",
                           "::mlir::gpu::GPUDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::vector::VectorDialect"];
}

def GPULowerSDPAPass
    : Pass<"blockc-gpu-lower-sdpa", "::mlir::func::FuncOp"> {
  let summary = "Fused online-softmax attention kernel for transformer.sdpa";
  let description = [{
    Replaces each f32 `transformer.sdpa` whose head dim is a multiple of 32
    with one `gpu.launch` (attribute `blockc_codegen.kernel =
    #blockc_codegen.kernel<fused_attention>`); other head sizes keep the
    generic linalg lowering. The block shape comes from the op's
    `blockc_codegen.gpu_attention = #blockc_codegen.gpu_attention<
    rows_per_warp, warps>` (written by `blockc-gpu-select-tiles`; an sdpa
    that the kernel handles without it is an error). The operands enter
    through `bufferization.to_buffer ... read_only`, the result is a new
    buffer returned through `bufferization.to_tensor ... restrict writable`.

    * Grid `(ceil(T / (rows_per_warp * warps)), H, B)`: one query tile per
      (batch, head) block; blocks of `32 x warps` threads.
    * Each warp owns `rows_per_warp` consecutive query rows. Lane `l` keeps
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
    * Split-KV (flash-decoding) for a single query row (T = 1, a decode
      step reading the KV cache): `splits = clamp(ceil(S / 64), 1, 32)`;
      kernel 1, grid `(splits, H / n, B)` of one warp each, runs the online
      softmax over a contiguous chunk of the keys for the `n` query heads
      of one GQA group that it attends for (`n`: the largest divisor of
      `H / H_kv` up to 4), each K and V row read once for all of them. A
      row is read by `D / w` lanes (at most 32), `w` elements of 16 bytes
      each (one `vector.load`), so the warp reads `32 / (D / w)` rows per
      step, each group of lanes with its own softmax state, merged by xor
      shuffles at the end; `w` is 1 (element loads, 32 lanes per row)
      when `D / w` is not a power of two. The vector loads need unit
      innermost strides, offsets and strides that are multiples of `w`
      and 16-byte aligned bases, checked on the host; otherwise the same
      kernel with element loads runs. It writes `(m, l)` and the
      accumulators to scratch buffers `[B, H, 32, 2]` and `[B, H, 32, D]`;
      kernel 2, grid `(1, H, B)`, merges the splits (`M = max m_s`,
      `L = sum l_s exp(m_s - M)`, likewise the accumulators). No barrier:
      the kernel boundary synchronises (and barriers could not exist before
      the buffer deallocation pipeline). A static T of 1 gets these kernels
      alone; a dynamic T both paths, chosen at run time
      (`scf.if T != 1`), since the decode entry also prefills. (Causal with
      T = 1 sees every key.)
    * When query, key and value are all `arith.extf` from one 16-bit type
      (a bf16 / f16 block), these kernels read the 16-bit tensors and widen
      in registers: the widenings are left unused, so no f32 copy of q, k,
      v (or of the KV caches) is made.
    * With `split_mma_warps = W` (>= 1; 16-bit operands, head dims 64 and
      128, GQA groups of 2 to 8 query heads) kernel 1 runs on tensor cores
      instead: grid `(ceil(splits / W), H_kv, B)` of W warps, warp w of
      block x the split `x W + w` for all the query heads of one group,
      which are the M rows of `mma.sync` m16n8k16 tiles (padded to 16).
      Per 16 keys: S = Q K^T (two n8 tiles), the online softmax of each
      row over its quad of lanes, then O += P V with P taken from the S
      accumulators (its 16-bit rounding and that of the rest, two MMAs per
      tile). Every fragment comes from global memory, 16 bytes per lane:
      the head dim of Q and K is permuted within runs of 32 (a dot product
      does not depend on the order of its terms) and the output columns of
      P V within runs of 64, so that a lane's fragment elements are 8
      consecutive elements of one row. No shared memory, no barrier; the
      merge kernel is the same.

    **Tensor cores.** An sdpa whose query, key and value are `arith.extf`
    from one 16-bit type (bf16 / f16 blocks), with a head dim that is a
    multiple of 16, and that carries `blockc_codegen.gpu_mma_attention =
    #blockc_codegen.gpu_mma_attention<warps, kv_tile>` becomes a
    FlashAttention-2-style kernel (`#blockc_codegen.kernel<mma_attention>`)
    reading the 16-bit tensors (exact):

    * grid `(ceil(T / (16 * warps)), H, B)`, `32 * warps` threads; the
      block's query rows go to shared memory once and each warp keeps its
      16 rows as m16n8k16 A fragments (ldmatrix.x4) in registers;
    * the keys up to the causal end of the block's last row, `kv_tile` at a
      time: K and V tiles in (dynamic) shared memory, rows padded by 16
      bytes; `S = Q K^T` with mma.sync (K fragments by ldmatrix), scale,
      mask (past S, above the bottom-right causal diagonal), the online
      softmax of each thread's two rows (max and sum over the 4 lanes of a
      quad with `gpu.shuffle xor 1, 2`), then `O += P V` with P taken from
      the S accumulators as A fragments (no shared round trip) and V
      fragments by `ldmatrix.trans`. P is split into its 16-bit rounding
      and the 16-bit rounding of the rest (two MMAs), so that the
      probabilities keep f32 precision as in the other kernels;
    * `O / l` is written in f32 (a row without a visible key: zeros), or,
      when the sdpa's only use is an `arith.truncf` (a bf16 / f16 block),
      rounded to that type by every kernel (tensor-core, f32 and split-KV
      alike), which replaces the rounding.

    Decode steps (T = 1) keep the split-KV kernels when the head dim allows
    them (a dynamic T chooses at run time); otherwise the tensor-core kernel
    runs for every T. A `gpu_mma_attention` on an sdpa that does not read
    16-bit operands is an error.

    **Warpgroup MMA (sm_90a).** With `gpu_mma_attention<warps = 4,
    kv_tile = 64, warpgroup = true>` (head dims that are multiples of 64,
    up to 256; another head dim is an error) the pass checks on the host
    that the three 16-bit tensors' layouts allow TMA (unit innermost
    stride, strides and offset multiples of 8 elements, 16-byte aligned
    base) and writes `blockc_codegen.warpgroup_attention` on their buffers
    where they do, the `mma.sync` kernel in the other branch;
    `blockc-gpu-lower-warpgroup-attention` builds the FlashAttention-3-style
    kernel after the buffer deallocation.

    ```mlir
    %o = transformer.sdpa %q, %k, %v {causal, blockc_codegen.gpu_attention =
        #blockc_codegen.gpu_attention<rows_per_warp = 4, warps = 4>}
        : ...                                                  // before
    %qm = bufferization.to_buffer %q read_only : ...           // after
    gpu.launch blocks(...) in (%x = ceil(T/16), %y = 32, %z = B)
               threads(...) in (32, 4, 1) { ... gpu.shuffle xor ... }
    %o = bufferization.to_tensor %out restrict writable : ...
    ```
  }];
  let statistics = [
    Statistic<"numLowered", "num-lowered", "sdpa ops turned into kernels">
  ];
  let dependentDialects = ["::blockc::codegen::CodegenDialect",
                           "::mlir::bufferization::BufferizationDialect",
                           "::mlir::gpu::GPUDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::nvgpu::NVGPUDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::vector::VectorDialect"];
}

def GPULowerPagedPass
    : Pass<"blockc-gpu-lower-paged", "::mlir::func::FuncOp"> {
  let summary = "GPU kernels for the ragged paged-KV ops of a paged entry";
  let description = [{
    Replaces `transformer.token_positions`, `transformer.paged_kv_write` and
    `transformer.paged_sdpa` (the ops of `transformer-derive-paged-decode`)
    on tensors by `gpu.launch` ops on buffers, so that nothing of a paged
    call runs on the host: the operands enter through
    `bufferization.to_buffer` (read-only, but the pool a page write writes
    in place), the results leave through `bufferization.to_tensor ...
    restrict writable`. Every kernel finds the sequence of token `t` as the
    number of `b` in `1 .. B` with `cu_seqlens[b] <= t` (a loop over the B
    + 1 offsets; B is small) and its position as `seq_pos[b] + t -
    cu_seqlens[b]`.

    * `token_positions` (`#blockc_codegen.kernel<paged_cache>`): one thread
      per token, 256 per block. Its result has `total` elements, read on the
      host as the first dimension of the entry's packed input (the
      function's first argument; another form is an error).
    * `paged_kv_write` (`paged_cache`): grid `(total, ceil(H_kv * D / w /
      128))` of 128 threads, each storing `w` consecutive elements of the
      token's row into slot `p % S` of page `block_table[b, p / S]`; a row
      whose logical page is past the block table or whose page is outside
      the pool is skipped (the host checks the batch first: `runPaged`).
      `w` is 16 bytes of the pool's type where D is a multiple of it and
      the pool is 16-byte aligned with strides that are multiples of `w`
      (checked on the host), otherwise 1.
    * `paged_sdpa` (`paged_attention`), with
      `blockc_codegen.gpu_paged_attention = #blockc_codegen.gpu_paged_attention<warps>`
      (written by `blockc-gpu-select-tiles`; a paged_sdpa without it is an
      error): one warp per (query token, head), grid `(ceil(total /
      warps), H)`, `32 x warps` threads. Lane `l` holds `w` consecutive
      elements `(32 c + l) w ..` of the pre-scaled query and of the
      accumulator (lanes past D hold zeros); the warp walks the token's
      keys `0 .. p_t` page by page through the block table, reading each K
      and V row in place from the pools (16-byte `vector.load` of the
      pool's type where the check above holds, element loads otherwise;
      bf16 / f16 widened in registers), the dot product summed with
      `gpu.shuffle xor`, the online softmax in f32 (no score in memory, no
      gathered page). GQA: head `h` reads KV head `h / (H / H_kv)`. The
      output has the query's shape and type.

    ```mlir
    %o = transformer.paged_sdpa %q, %kp, %vp, %bt, %cu, %pos
        {blockc_codegen.gpu_paged_attention =
           #blockc_codegen.gpu_paged_attention<warps = 4>} : ...  // before
    gpu.launch blocks(...) in (%x = ceil(total / 4), %y = H, %z = 1)
               threads(...) in (32, 4, 1) { ... gpu.shuffle xor ... }
    %o = bufferization.to_tensor %out restrict writable : ...   // after
    ```
  }];
  let statistics = [
    Statistic<"numLowered", "num-lowered", "paged ops turned into kernels">
  ];
  let dependentDialects = ["::blockc::codegen::CodegenDialect",
                           "::mlir::bufferization::BufferizationDialect",
                           "::mlir::gpu::GPUDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::vector::VectorDialect"];
}

def GPUEmulateKernelsPass
    : Pass<"blockc-gpu-emulate-kernels", "::mlir::ModuleOp"> {
  let summary = "Move the kernels of every gpu.module into host functions "
                "for the GPU emulator";
  let description = [{
    The GPU emulator's half of stage 3 (`blockc-nvptx-pipeline` with
    `emulate`), run after `gpu-kernel-outlining`: the host code keeps its
    `gpu.launch_func`, `gpu.alloc` and `gpu.wait` ops (lowered by upstream's
    `gpu-to-llvm` to the same `mgpu*` calls as for a GPU), while each kernel
    `@k` of a `gpu.module @m` becomes a host function
    `@__blockc_emu_m_k(%params: !llvm.ptr, %thread: !llvm.ptr,
    %shared: !llvm.ptr, %shared_bytes: i64)` that runs one GPU thread:

    * the kernel parameters are read from `%params` (one pointer per
      parameter, memrefs as their unpacked descriptor fields, as
      `gpu-to-llvm` passes them to `mgpuLaunchKernel`);
    * `gpu.thread_id`, `block_id`, `block_dim`, `grid_dim`, `global_id` and
      `lane_id` load the fields of the runtime's `BlockcEmuThread` at
      `%thread` (include/blockc/Runtime/EmulatorRuntime.h);
    * workgroup attributions become `memref.view`s of `%shared` (16-byte
      aligned offsets, in order), `gpu.dynamic_shared_memory` the view of
      the rest of `%shared` after them, private attributions
      `memref.alloca`s;
      `#gpu.address_space` memory spaces are dropped;
    * `gpu.barrier` calls `blockcEmuBarrier` and a 32-bit `gpu.shuffle`
      calls `blockcEmuShuffle32`, with a string naming the kernel and the
      op's location for the runtime's divergence messages;
    * tensor-core ops: `nvgpu.ldmatrix` calls `blockcEmuLdMatrix` and
      `nvgpu.mma.sync` (m16n8k16, bf16 or f16 with f32 accumulators)
      `blockcEmuMma`, warp collectives whose fragments travel through stack
      buffers of the entry block; `nvgpu.device_async_copy`,
      `device_async_create_group` and `device_async_wait` call
      `blockcEmuCpAsync`, `blockcEmuCpAsyncCommit` and
      `blockcEmuCpAsyncWait` (the thread's cp.async queue);
    * with `check-bounds`, every `memref.load` and `memref.store` checks its
      indices against the memref's sizes and calls `blockcEmuOutOfBounds`
      instead of an access out of bounds (a load then yields 0).

    The function carries a `#blockc_codegen.emulated_kernel` attribute (the
    module token, static shared memory, the chip's shared-memory limit,
    whether it synchronizes, the known block size), which
    `blockc-gpu-register-emulated-kernels` reads after the lowering to LLVM.
    Each `gpu.module` becomes a `gpu.binary` whose object is the text
    `blockc-emulator:<m>#<hash of the module>`, which the emulator
    runtime's `mgpuModuleLoad` accepts.

    Errors: a kernel op the emulator does not model (PTX inline assembly,
    NVVM ops, `gpu.printf`, other GPU ops, other `nvgpu` ops or forms), a
    cp.async token used other than by a group (or a group's by a wait), a
    shuffle of a type that is not 32 bits wide, a non-kernel `gpu.func`, a
    workgroup attribution of dynamic shape, or more static shared memory
    than the chip allows (`static_shared_per_block` of the module's
    `#blockc_codegen.gpu_target`, else of `chip`'s default chip).
  }];
  let options = [
    Option<"chip", "chip", "std::string", /*default=*/"\"sm_90\"",
           "The emulated architecture, when the module has no "
           "blockc_codegen.gpu_target (its default chip's limits)">,
    Option<"checkBounds", "check-bounds", "bool", /*default=*/"false",
           "Check the indices of every memref access inside kernels">,
    Option<"profile", "profile", "bool", /*default=*/"false",
           "Count FLOPs and memory accesses for the profile">
  ];
  let dependentDialects = [
    "::blockc::codegen::CodegenDialect",
    "::mlir::arith::ArithDialect",
    "::mlir::cf::ControlFlowDialect",
    "::mlir::func::FuncDialect",
    "::mlir::gpu::GPUDialect",
    "::mlir::LLVM::LLVMDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::NVVM::NVVMDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::vector::VectorDialect"
  ];
}

def GPURegisterEmulatedKernelsPass
    : Pass<"blockc-gpu-register-emulated-kernels", "::mlir::ModuleOp"> {
  let summary = "Register the emulated kernels with the emulator runtime at "
                "program start";
  let description = [{
    After the lowering to the LLVM dialect: for every `llvm.func` with a
    `#blockc_codegen.emulated_kernel` attribute, a global constructor
    (`@__blockc_emu_register`, priority 101, before the module loads of
    `gpu.binary`) calls `blockcEmuRegisterKernel` with the attribute's
    values and the function's address, and a global destructor
    (`@__blockc_emu_unregister`) calls `blockcEmuUnregisterKernel`, so that
    `mgpuModuleGetFunction` of the emulator runtime finds the kernels by
    name, in a JIT as in an object file.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

def GPUAsyncLaunchesPass
    : Pass<"blockc-gpu-async-launches", "::mlir::ModuleOp"> {
  let summary = "Queue a host function's kernels on one stream; the host "
                "waits only before it touches memory and before it returns";
  let description = [{
    After the lowering to the LLVM dialect (`gpu-to-llvm`), a
    `gpu.launch_func` without a stream is launched synchronously: at
    translation each one becomes `mgpuStreamCreate`, `mgpuLaunchKernel`,
    `mgpuStreamSynchronize` and `mgpuStreamDestroy`, and each copy and free
    gets a stream of its own that the host waits for too. The bf16 7B
    block's forward entry for sm_90a (19 kernels, 15 frees, a copy) paid a
    stream creation, a host wait and a stream destruction for each, and the
    GPU idled between kernels while the host prepared the next launch.

    For every `llvm.func` with such launches this pass creates one stream
    at entry (`mgpuStreamCreate`) and:

    - gives every stream-less `gpu.launch_func` that stream, so kernels
      queue behind one another in program order;
    - passes it to `mgpuMemAlloc` (the managed buffer's prefetch),
      `mgpuMemcpy`, `mgpuMemset32` / `mgpuMemset16` and `mgpuMemFree`
      (a free ordered after the kernels queued before it: the CUDA runtime
      returns the buffer to its pool once the stream has passed it), and
      erases the per-call streams that those calls then no longer use;
    - waits for it (`mgpuStreamSynchronize`) before every operation that
      may touch memory the kernels use: a load or store that is not of a
      stack slot (`llvm.alloca`), a call of anything but the runtime's
      allocation, copy, stream, event and tensor-map functions and
      `malloc` / `aligned_alloc`, any other operation with memory effects;
      the CUDA runtime's wait returns at once when nothing was queued on
      the stream since the last one, so a wait inside a host loop costs a
      wait once;
    - waits for it and destroys it before every `llvm.return`.

    A function with a launch that has a stream already is left alone. The
    emulator runtime runs every launch when it is made, so under the
    emulator the order and the results are those of the synchronous form.

    ```mlir
    gpu.launch_func @kernels::@k blocks in (...) threads in (...) : i64
    // after:
    %s = llvm.call @mgpuStreamCreate() : () -> !llvm.ptr
    gpu.launch_func <%s : !llvm.ptr> @kernels::@k blocks in (...) ...
    llvm.call @mgpuStreamSynchronize(%s) : (!llvm.ptr) -> ()
    llvm.call @mgpuStreamDestroy(%s) : (!llvm.ptr) -> ()
    llvm.return
    ```
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

def GPUMergeLaunchesPass
    : Pass<"blockc-gpu-merge-launches", "::mlir::func::FuncOp"> {
  let summary = "Run independent neighbouring kernels with the same thread "
                "blocks as one launch";
  let description = [{
    A decode step's q, k and v projections are three weight-streaming
    kernels (`blockc-gpu-tile-gemv`) that read the same normalised row and
    write three different buffers; each is short (a few microseconds on a
    GPU at 7B sizes), so the launch gaps between them are a visible part of
    the step. This pass merges two `gpu.launch` ops of one block when:

    - both carry the same `blockc_codegen.kernel` kind and that kind is in
      `kinds` (empty: any kind, or none on both);
    - their thread blocks are the same (equal values or equal constants),
      as are their grids' y and z extents; neither has dynamic shared
      memory, attributions, a cluster, async tokens or more than one block
      in its body, nor uses `gpu.global_id` or cluster ids;
    - they are independent: neither writes memory that the other reads or
      writes. Accesses are traced through views to their base buffer;
      distinct allocations are disjoint, as are an allocation and a
      function argument, and two distinct function arguments (an entry's
      buffers must not overlap: docs/RuntimeABI.md). An access whose base
      is anything else, or an operation that may touch memory without
      saying which, makes the launches dependent;
    - only operations without memory effects or that only allocate (a
      `gpu.alloc`, a `memref.dim`, a view) lie between them; those move
      above the first launch.

    The merged launch covers the grid of the first along x and then the
    grid of the second: its blocks with `block_id x < gx1` run the first
    body, the others the second with `block_id x - gx1`; each body sees its
    own `gx` as its grid's x extent. The condition is uniform over a block,
    so barriers and shuffles keep their meaning. Merged launches merge
    again with the next one (q, k, v: one launch).

    Where the kernels are alternatives behind the same condition (a decode
    entry's `scf.if %m_small { gemv } else { tensor cores }` per
    projection), neighbouring `scf.if` ops on the same condition without
    results are merged first when their branches would then hold a pair of
    launches that merge (the ops between them moved above as above).

    ```mlir
    gpu.launch blocks(%bx, ...) in (%gx = %c32, ...) threads(...) in (%c128, ...) { A }
    gpu.launch blocks(%bx, ...) in (%gx = %c16, ...) threads(...) in (%c128, ...) { B }
    // after:
    gpu.launch blocks(%bx, ...) in (%gx = %c48, ...) threads(...) in (%c128, ...) {
      %first = arith.cmpi ult, %bx, %c32 : index
      scf.if %first { A (gx = 32) } else { B (bx - 32, gx = 16) }
    }
    ```
  }];
  let options = [
    ListOption<"kinds", "kinds", "std::string",
               "Kernel kinds (#blockc_codegen.kernel) whose launches merge; "
               "empty: any">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::scf::SCFDialect"];
  let statistics = [
    Statistic<"numMerged", "merged-launches", "Launches merged into another">,
  ];
}

def GPULegalizeGridPass
    : Pass<"blockc-gpu-legalize-grid", "::mlir::func::FuncOp"> {
  let summary = "Keep launches within CUDA's grid limits: grid y and z at "
                "most 65535, no empty launch";
  let description = [{
    `convert-parallel-loops-to-gpu` makes the second and third innermost
    loop dimensions the grid's y and z extents, so a RoPE over
    `[B, T, H, D]` launches T blocks along z, which a GPU refuses beyond
    65535. For every `gpu.launch` whose y or z extent is not a constant of
    at most 65535, this pass launches `min(extent, 65535)` blocks along it
    and wraps the body in a grid-stride loop over the extent, starting at
    the block's index:

    ```mlir
    gpu.launch blocks(%bx, %by, %bz) in (%gx = %n, ...) { body(%bz) }   // before
    %g = arith.minui %n, %c65535 : index
    gpu.launch blocks(%bx, %by, %bz) in (%gx = %g, ...) {                // after
      scf.for %z = %bz to %n step %gz { body(%z) }
    }
    ```

    Inside the body, the grid size and `gpu.grid_dim` along the dimension
    keep the full extent and `gpu.block_id` is the loop's index. Every
    block runs the same number of iterations, so barriers in the body stay
    uniform.

    A launch with a grid or block size that is not a positive constant
    runs under `scf.if` all such sizes are positive: B or T = 0 (possible
    through the C interface of `-emit=obj`) launches nothing instead of an
    empty grid, which CUDA refuses with an error that poisons the context.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::scf::SCFDialect"
  ];
}

#endif // BLOCKC_CODEGEN_NVPTX_PASSES_TD
