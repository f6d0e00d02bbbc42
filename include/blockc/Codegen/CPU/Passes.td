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
  let summary = "Lower transformer.linear to register-tiled vector kernels";
  let description = [{
    Rewrites every `transformer.linear` on a `[B, T, K]` input into an
    `scf.forall` over blocks of output columns (weight rows; OpenMP threads
    after bufferization, marked `blockc_codegen.kernel =
    #blockc_codegen.kernel<linear>`) whose single shared output starts as
    the broadcast bias or zero. Vectors have the V f32 lanes of the
    function's `blockc_codegen.cpu_target` (from `blockc-cpu-select-tiles`;
    without one the pass fails at the function). Each block runs one of two
    kernels on tensors, both reading the weight from its stored `[N, K]`
    layout (no whole-weight copy per call):

    * **packed outer-product kernel** (T >= `pack_min_rows`, prefill):
      ```
      for n-block (panel_n weight rows), k-block (panel_k):
        P[k][j] = W[n0+j, k0+k]     // panel_k x panel_n, transposed;
                                    // V x V blocks: V row reads along k,
                                    // log2(V) shuffle stages, V writes
        for b, t (pack_rows at a time), n (pack_cols vectors at a time):
          acc[i][j] = out[b, t+i, n+jV : +V]     // masked past N
          for k in the k-block:
            p_j = P[k, n+jV : +V]               // pack_cols vector loads
            x_i = broadcast(x[b, t+i, k0+k])    // pack_rows scalars
            acc[i][j] = fma(x_i, p_j, acc[i][j])
          out[b, t+i, n+jV : +V] = acc[i][j]    // masked past N
      ```
      No horizontal reductions: the output tile is read and written as
      whole vectors once per k-block. Rows that do not fill a tile use
      kernels of halving row counts (e.g. 4, 2, 1 for 8). The panel is a
      `tensor.empty` (a heap buffer of panel_k x panel_n floats after
      bufferization, 32 KiB by default); weight rows past N repeat row
      N - 1 and reads past K are zero, and the columns they feed are never
      stored. Needs a power-of-two V (the in-register transpose); the
      target's verifier guarantees one.
    * **dot-product kernel** (T < `pack_min_rows`: decode, short prompts;
      bandwidth-bound, every weight element read once):
      ```
      for n-block (block_n rows of W), k-block (block_k), b, t (rows at a time):
        for n in the block (cols at a time):
          acc[rows][cols] = 0                          // vector<V x f32>
          for k in the k-block (V at a time):
            x_i = x[b, t+i, k:k+V]   w_j = W[n+j, k:k+V]
            acc[i][j] = fma(x_i, w_j, acc[i][j])       // rows*cols FMAs
          out[b, t+i, n+j] += reduce_add(acc[i][j])
      ```
      Rows that do not fill a tile (and a single token) use a 1-row kernel
      over `2 x cols` weight rows; columns that do not fill a tile a
      1-column kernel; a k remainder one masked (zero-padded) vector step.
      When B * T == 1 (checked at run time) the k-block is the whole row:
      nothing reuses a weight block then, and whole-row streams keep the
      hardware prefetchers going (a 7B block's T = 1 step went from 40 to
      34.5 ms on one Zen 4 core).

    Projections with the same `blockc_codegen.horizontal_group` (from
    `blockc-cpu-group-projections`, or pinned) that share the input, weight
    type, bias presence, result type and tiles become one `scf.forall`
    with one shared output per member: iteration i computes column block i
    of each member in turn. Members that do not fit are lowered alone.

    A static T builds only the kernel it needs; a dynamic T builds both
    behind an `scf.if` inside the forall (whose block count and size are
    then chosen at run time). Inputs of other ranks are left to
    `convert-transformer-to-linalg`.

    The pass has no options: the tiles are the op's
    `blockc_codegen.linear_tiles` (from `blockc-cpu-select-tiles`, or
    written by hand; an op without one is an error) and V the target's.
    `panel_n` is rounded up to a multiple of `pack_cols x V`, `panel_k` to
    one of V, and both are capped at the (padded) weight.
  }];
  let dependentDialects = [
    "::blockc::codegen::CodegenDialect",
    "::mlir::bufferization::BufferizationDialect",
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect",
    "::mlir::ub::UBDialect",
    "::mlir::vector::VectorDialect",
    "::mlir::x86vector::X86VectorDialect",
    "::mlir::amx::AMXDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::LLVM::LLVMDialect"
  ];
  let statistics = [
    Statistic<"numGroups", "num-groups",
              "Horizontal groups lowered as one kernel">,
    Statistic<"numLowered", "num-lowered", "transformer.linear ops lowered">
  ];
}

def CPUGroupProjectionsPass
    : Pass<"blockc-cpu-group-projections", "::mlir::func::FuncOp"> {
  let summary = "Choose the projections to lower as one horizontally fused "
                "kernel";
  let description = [{
    The decision half of horizontal fusion: `transformer.linear` ops in the
    same block that read the same input and have the same weight type, bias
    presence, result type and `blockc_codegen.linear_tiles` (Q, K and V of
    an MHA block; K and V of a GQA block; gate and up of a gated FFN) get a
    common `blockc_codegen.horizontal_group = #blockc_codegen.horizontal_group<id>`. `blockc-cpu-lower-linear` (the
    mechanism) then builds one `scf.forall` for the group whose iteration i
    computes column block i of every member (one shared output each): one
    parallel region instead of several, the input rows reused from cache
    by every member, and the gate and up tiles of one block side by side
    for the SwiGLU epilogue of `blockc-cpu-fuse-activation`. Ops that
    already carry a group keep it, so tests and users can pin or forbid
    (a group of one) a grouping.

    ```mlir
    %q = transformer.linear %n, %wq : ...          // before
    %k = transformer.linear %n, %wk : ...
    %q = transformer.linear %n, %wq {blockc_codegen.horizontal_group =
        #blockc_codegen.horizontal_group<0>} : ...
    %k = transformer.linear %n, %wk {blockc_codegen.horizontal_group =
        #blockc_codegen.horizontal_group<0>} : ...
    ```
  }];
  let dependentDialects = ["::blockc::codegen::CodegenDialect"];
  let statistics = [
    Statistic<"numGroups", "num-groups", "Groups of two or more projections">
  ];
}

def CPUSelectTilesPass
    : Pass<"blockc-cpu-select-tiles", "::mlir::func::FuncOp"> {
  let summary = "Choose the CPU target and each projection's kernel tiles";
  let description = [{
    The heuristic half of the CPU kernels: every later CPU kernel pass (the
    mechanism) only reads what this pass writes.

    * On the function, `blockc_codegen.cpu_target` from the options: the
      ISA, its f32 lanes per vector and vector registers (`avx512`: 16 and
      32, `avx2`: 8 and 16, `sse`: 4 and 16; `vector-width` and `registers`
      override them when non-zero) and the L1 / L2 sizes. The pass does not
      look at the host: the pipeline builder decides the options. A target
      already on the function is kept (and the tiles below derive from it).
    * On every `transformer.linear` without one, a
      `blockc_codegen.linear_tiles` that `blockc-cpu-lower-linear` builds
      the projection's kernel with. One already present (written by a
      user, or by an earlier run) is kept, so tests and users can pin any
      choice.
    * On every f32 `transformer.sdpa` with a static head dim and without
      one, a `blockc_codegen.attention_tiles` that `blockc-cpu-lower-sdpa`
      builds the attention kernel with (the schedule is described there):
      the widest width up to V that divides D rounded up to 4, the
      multi-row kernel with 4 row vectors and power-of-two score and P.V
      tiles (at most 8 head dims) with 32 registers, 2 row vectors and
      (R - 4) / 2 keys and head dims with 16, 32 keys per tile, one head dim
      per q.k step, and the next key tile prefetched into L2.

    The tiles, for V lanes and R registers:

    * Dot-product kernel: `cols` = 4 weight rows and `rows` the largest
      power of two whose accumulators plus the operand vectors of one k
      step fit R (4 x 4 = 16 + 8 of 32 zmm, 2 x 4 = 8 + 6 of 16 ymm/xmm).
      `block_k` is the reduction length rounded up to V, at most 2048;
      `block_n` keeps the weight block (`block_n x block_k x 4` bytes)
      within `l2-bytes / 4` (256 KiB of Zen 4's 1 MiB L2: the block measured
      best for the 7B projections), at least `cols` and a multiple of it.
    * Packed outer-product kernel: `pack_cols` = 2 vectors and `pack_rows`
      = (R - 3) / 2 rows, at most 8 (8 x 2 = 16 accumulators + 2 panel
      vectors + a broadcast with AVX-512, 6 x 2 with 16 registers);
      `panel_n` = one micro-kernel width (2V), `panel_k` = 256 (the
      reduction length if shorter, rounded up to V; at most what fits
      `l1-bytes`): a 32 KiB panel with AVX-512, within L1. `pack_min_rows`
      = 32: below, packing costs more than the reductions it saves (the two
      kernels tie at T = 32 for d = 512 on Zen 4).

    ```mlir
    func.func @f(...) {                                         // before
      %y = transformer.linear %x, %w : ...
    func.func @f(...) attributes {blockc_codegen.cpu_target =   // after
        #blockc_codegen.cpu_target<isa = avx512, vector_width = 16,
          registers = 32, l1_bytes = 32768, l2_bytes = 1048576>} {
      %y = transformer.linear %x, %w {blockc_codegen.linear_tiles =
          #blockc_codegen.linear_tiles<rows = 4, cols = 4, block_n = 32,
            block_k = 2048, pack_rows = 8, pack_cols = 2, panel_k = 256,
            panel_n = 32, pack_min_rows = 32>} : ...
    ```

    With `prepare-weights`, a projection whose weight is an argument of a
    public function (an entry: its caller can prepare the weight once, see
    `blockc-cpu-prepare-weights`) and that has no `weight_layout` yet also
    gets `blockc_codegen.weight_layout =
    #blockc_codegen.weight_layout<packed_panels>`: its kernel then reads
    packed panels at every T (packing costs nothing per call any more, so
    the dot-product kernel and `pack_min_rows` no longer apply to it).

    The ISA extensions of the options (`avx512-bf16`, `avx512-vnni`,
    `avx-vnni`) are recorded in the target. With `avx512_bf16`, a
    projection whose weight is bf16 and whose input is the `arith.extf` of
    a bf16 tensor (a bf16 block's projections after
    `transformer-compute-in-f32`) gets `bf16_dot = true` in its tiles
    (with a `weight_layout`, only for an even K: its prepared panels hold k
    pairs): its kernel multiplies bf16 pairs with `vdpbf16ps`. With
    `amx_bf16` too, and K a multiple of 32, also `amx = true`: the packed
    kernel's blocks of 16 and 32 rows run on AMX tiles; with
    `prepare-weights`, such a weight (an entry's argument) also gets
    `weight_layout<packed_panels>`, prepared as panels of k pairs
    (`#blockc_codegen.packed_weight<..., pairs = true>`), where a bf16
    weight is otherwise read in place.

    With `elementwise`, the pass configures what the kernels left instead
    (the pipeline runs it a second time, after `blockc-fuse-elementwise`
    and the weight preparation) and leaves the target as it is: in a
    function with a `cpu_target` that is not a prepare function, every
    all-parallel `linalg.generic` and `linalg.fill` on tensors directly in
    the function body whose indexing maps are projected permutations
    (upstream's tiles of an operand read as RoPE's rotate-half partner,
    `(d + D/2) mod D`, would be wrong), without one yet, gets a `blockc_codegen.elementwise_tiles`
    for `blockc-cpu-tile-elementwise`: work items of 16384 elements (`rows`
    = 16384 / the innermost loop's size, at least 1; 1 when that size is
    dynamic) and vectors of the target's `vector_width` when the innermost
    loop's size is a static multiple of it and every operand is read and
    written contiguously along it (its indexing map a projected
    permutation with that loop last, or without it) and its body has no
    `linalg.index` and no `math` op but f32 exp, erf, erfc, tanh, absf,
    sqrt and fma (those with vector code), else `width = 0`.

    The software prefetch of the few-row projection kernels' weight
    stream (`linear_tiles`' `prefetch_bytes`): `prefetch-bytes` when given
    (not -1), else by the target's `vendor`: 1024 bytes on `intel` (and
    `generic`), where the hardware prefetchers alone keep too few lines in
    flight (Xeon family 6 model 167: the 7B bf16 one-token step 48 -> 33
    ms); 0 (none) on `amd`, whose decode reached the memory's bandwidth
    without it (Zen 3, Zen 5) and where a prefetch of the int8 rows was
    slower (Zen 3).

    Options that make an invalid target (a vector width that is not a
    power of two, fewer than 8 registers, a cache size that is not
    positive, an extension the ISA cannot have) or an invalid
    `prefetch-bytes` are an error at the function.
  }];
  let options = [
    Option<"isa", "isa", "::blockc::codegen::ISA",
           /*default=*/"::blockc::codegen::ISA::avx512",
           "Vector instruction set",
           [{::llvm::cl::values(
             clEnumValN(::blockc::codegen::ISA::avx512, "avx512",
                        "AVX-512: 32 registers of 16 f32 lanes"),
             clEnumValN(::blockc::codegen::ISA::avx2, "avx2",
                        "AVX2 and FMA: 16 registers of 8 f32 lanes"),
             clEnumValN(::blockc::codegen::ISA::sse, "sse",
                        "SSE: 16 registers of 4 f32 lanes"))}]>,
    Option<"vectorWidth", "vector-width", "int64_t", /*default=*/"0",
           "f32 lanes per vector (0: the ISA's)">,
    Option<"registers", "registers", "int64_t", /*default=*/"0",
           "Vector registers (0: the ISA's)">,
    Option<"l1Bytes", "l1-bytes", "int64_t", /*default=*/"32768",
           "L1 data cache size: bounds the packed kernel's panels">,
    Option<"l2Bytes", "l2-bytes", "int64_t", /*default=*/"1048576",
           "L2 cache size used for the dot-product kernel's cache blocks">,
    Option<"prepareWeights", "prepare-weights", "bool", /*default=*/"false",
           "Mark projections whose weight is an argument of a public "
           "function weight_layout<packed_panels> (packed once by the "
           "entry's prepare function)">,
    Option<"avx512BF16", "avx512-bf16", "bool", /*default=*/"false",
           "The CPU has AVX512_BF16 (vdpbf16ps)">,
    Option<"avx512VNNI", "avx512-vnni", "bool", /*default=*/"false",
           "The CPU has AVX512_VNNI (vpdpbusd on zmm)">,
    Option<"avxVNNI", "avx-vnni", "bool", /*default=*/"false",
           "The CPU has AVX-VNNI (vpdpbusd on ymm)">,
    Option<"amxBF16", "amx-bf16", "bool", /*default=*/"false",
           "The CPU has AMX-BF16 (tdpbf16ps)">,
    Option<"vendor", "vendor", "::blockc::codegen::CPUVendor",
           /*default=*/"::blockc::codegen::CPUVendor::generic",
           "Whose cores the kernels are tuned for",
           [{::llvm::cl::values(
             clEnumValN(::blockc::codegen::CPUVendor::generic, "generic",
                        "any x86-64 CPU (Intel's measured choices)"),
             clEnumValN(::blockc::codegen::CPUVendor::intel, "intel",
                        "Intel's cores"),
             clEnumValN(::blockc::codegen::CPUVendor::amd, "amd",
                        "AMD's Zen cores"))}]>,
    Option<"prefetchBytes", "prefetch-bytes", "int64_t", /*default=*/"-1",
           "Bytes ahead the few-row projection kernels prefetch their "
           "weight stream (linear_tiles prefetch_bytes; -1: by the "
           "target's vendor, 0: none)">,
    Option<"elementwise", "elementwise", "bool", /*default=*/"false",
           "Configure the elementwise ops left between the kernels "
           "(elementwise_tiles) instead of the kernels: the pipeline's "
           "second run, after blockc-fuse-elementwise">
  ];
  let dependentDialects = ["::blockc::codegen::CodegenDialect"];
  let statistics = [
    Statistic<"numAnnotated", "num-annotated", "Projections, attentions and elementwise ops given tiles">
  ];
}

def CPUFuseResidualPass
    : Pass<"blockc-cpu-fuse-residual", "::mlir::func::FuncOp"> {
  let summary = "Fuse residual adds into the epilogue of projection kernels";
  let description = [{
    A projection kernel of `blockc-cpu-lower-linear` (an `scf.forall`
    marked `blockc_codegen.kernel = #blockc_codegen.kernel<linear>`)
    accumulates `x W^T` into its shared output,
    which starts as zero (a `linalg.fill`) or as the broadcast bias. When
    that result's only use is a `transformer.residual_add` with a residual
    `r` of the same type, the kernel starts from `r` instead (or from
    `r + bias`), and the add disappears: the residual stream is updated in
    the projection's own stores (the O projection and the down projection of
    a pre-norm block) instead of by a separate pass over `[B, T, d]`. The sum
    is the same up to the order of the f32 additions. The residual must
    dominate the kernel (`DominanceInfo`) and not be a function argument
    (the caller's buffer). No vectors are built, so the pass needs no
    target.

    ```mlir
    %z = linalg.fill ins(%c0) outs(%e)                      // before
    %y = scf.forall ... shared_outs(%o = %z) {...} {blockc_codegen.kernel = ...}
    %h = transformer.residual_add %r, %y : tensor<?x?x64xf32>
    %y = scf.forall ... shared_outs(%o = %r) {...} {blockc_codegen.kernel = ...}  // after
    ```
  }];
  let statistics = [
    Statistic<"numFused", "num-fused", "Residual adds fused">
  ];
}

def CPUFuseNormPass
    : Pass<"blockc-cpu-fuse-norm", "::mlir::func::FuncOp"> {
  let summary = "Fuse RMSNorm into the prologue of the projection kernels "
                "that read it";
  let description = [{
    `n = rms_norm(x, g)` is `x[b, t, :] * r[b, t] * g` with one scalar r per
    row. When every use of `n` is a projection kernel of
    `blockc-cpu-lower-linear` (an `scf.forall` marked `blockc_codegen.kernel
    = #blockc_codegen.kernel<linear>` that starts from zero: no bias, no
    residual) or a `tensor.dim`, the normalised tensor is never built (the
    vectors of the loops below have the width of the function's
    `blockc_codegen.cpu_target`; the pass fails at a function without one
    when it has a norm to fuse):

    * one small loop nest computes `r` (`[B, T]`) with the overflow-safe
      scaling of the RMSNorm lowering (rows whose finite max |x| exceeds
      2^50 are summed as `x / max|x|`);
    * each kernel reads `x` instead of `n` and applies the gain where it
      costs least: the packed kernel multiplies its weight vectors
      `W[i, k:k+V]` by `g[k:k+V]` while packing (once per weight element;
      its x reads are scalar broadcasts), the dot-product kernel of short T
      its x vectors `x[b, t, k:k+V]` (one multiply per row and k step);
    * each finished block of output columns is scaled row by row by `r`.

    Q, K and V (and gate and up) share the one `r`. The sums are the same
    up to the order of the f32 roundings, except that rows with |x| above
    about 1e34 could overflow in `x g W` where the normalised input would
    not.

    ```mlir
    %n = transformer.rms_norm %x, %g {epsilon = 1.0e-06 : f32}   // before
    %q = scf.forall ... (reads %n, %wq) {blockc_codegen.kernel = ...}
    %r = scf.for ... -> tensor<?x?xf32>                            // after
    %q = scf.forall ... (reads %x, %wq * %g; tile rows * %r) {blockc_codegen.kernel = ...}
    ```
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::math::MathDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect",
    "::mlir::vector::VectorDialect"
  ];
  let statistics = [
    Statistic<"numFused", "num-fused", "RMSNorms fused into projections">
  ];
}

def CPUFuseActivationPass
    : Pass<"blockc-cpu-fuse-activation", "::mlir::func::FuncOp"> {
  let summary = "Fuse activations (SiLU x up, GeLU, ReLU) into the epilogue "
                "of projection kernels";
  let description = [{
    Applies an activation to a projection's output tile inside the kernel
    (an `scf.forall` marked `blockc_codegen.kernel =
    #blockc_codegen.kernel<linear>`), right after the tile is computed and
    while it is in cache, with vector math of the width of the function's
    `blockc_codegen.cpu_target` (the pass fails at a function without one
    when it has an activation to fuse), instead of in a separate
    elementwise pass over `[B, T, d_ff]`:

    * gated (SwiGLU, GeGLU): `arith.mulf(transformer.activation(g), u)`
      where `u` is a kernel result used only there: each block of `u`'s
      kernel ends with `tile = act(g[tile]) * tile`. The activation must
      have no other use; `u`'s kernel is moved after `g`'s definition when
      needed (and fused when `g` then dominates it).
    * plain (ReLU / GeLU FFN): `transformer.activation(u)`: `tile =
      act(tile)` (after the bias, which the kernel starts from).

    The epilogue is a loop over the block's rows and full vectors plus one
    masked vector for the remainder columns. The activations are the
    vector polynomials of `Codegen/Common/Approximations.h` (SiLU
    `x sigmoid(x)`, GeLU `x/2 erfc(-x/sqrt 2)`, the tanh form as
    `x sigmoid(2u)`; see docs/Pipelines.md, "Math approximations").
    Differences from the separate elementwise lowering are rounding-level.

    When gate and up are one horizontal group and the gate's result has no
    other use, the gate's tile no longer needs a shared output: it starts
    from a zero-filled tensor of the iteration's own (`tensor.empty` +
    `linalg.fill` in the loop body), so bufferization neither keeps a
    `[B, T, d_ff]` gate buffer nor copies its slice per iteration.

    ```mlir
    %g = scf.forall ... {blockc_codegen.kernel = ...}          // before
    %u = scf.forall ... {blockc_codegen.kernel = ...}
    %a = transformer.activation <silu> %g
    %m = arith.mulf %a, %u
    %u = scf.forall ... {                                      // after
      ... %act = <vector silu of g's tile> ; %t = arith.mulf %act, %acc ...
    } {blockc_codegen.kernel = #blockc_codegen.kernel<linear>}
    ```
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect",
    "::mlir::vector::VectorDialect"
  ];
  let statistics = [
    Statistic<"numGated", "num-gated", "Gated activations fused">,
    Statistic<"numPlain", "num-plain", "Plain activations fused">,
    Statistic<"numPrivatized", "num-privatized",
              "Dead group members given a tile of the iteration's own">
  ];
}

def CPUFuseRoPEPass
    : Pass<"blockc-cpu-fuse-rope", "::mlir::func::FuncOp"> {
  let summary = "Apply RoPE in the epilogue of the Q and K projection kernels";
  let description = [{
    Rewrites `transformer.rope(tensor.expand_shape(u))`, where `u` is a
    result of a projection kernel of `blockc-cpu-lower-linear` used only by
    the expand_shape `[B, T, H * D] -> [B, T, H, D]`, so that each block of
    `u`'s kernel ends by rotating its tile while it is in cache, with
    vectors of the width V of the function's `blockc_codegen.cpu_target`
    (the pass fails at a function without one when it has a RoPE to fuse).
    The rope's users then read the expand_shape directly: the rotated
    `[B, T, H, D]` tensor is never written twice.

    The kernel must say that its blocks cover whole heads: its
    `blockc_codegen.linear_tiles` (recorded by `blockc-cpu-lower-linear`)
    has a `block_align` that is a multiple of D (`blockc-cpu-select-tiles`
    asks for D on projections that feed a RoPE; the lowering keeps it with
    prepared weights). The layout must give whole vectors: for the half
    layout, V divides R/2 (R the rotary dim), and each vector of the first
    half is rotated with its partner vector R/2 further; for the
    interleaved layout, V divides R, and a vector's pairs are swapped with
    one `vector.shuffle`. Elements beyond R are left as they are. A position
    offset (decode) must be defined before the kernel.

    The cos/sin tables `[T, D]` are built once before the kernel by the
    builder the linalg lowering of `transformer.rope` uses
    (`Codegen/Common/RoPE.h`), and the rotation is the same
    `x * cos + partner * sin` (no FMA contraction), so the results equal the
    unfused lowering's. Other ropes are left to `convert-transformer-to-linalg`.

    ```mlir
    %q = scf.forall ... {blockc_codegen.kernel = ..., linear_tiles = <... block_align = 128>}
    %e = tensor.expand_shape %q [[0], [1], [2, 3]] ...       // before
    %r = transformer.rope %e : tensor<?x?x32x128xf32>
    %q = scf.forall ... { ... <rotation of the block's heads> ... }   // after
    %e = tensor.expand_shape %q [[0], [1], [2, 3]] ...
    ```
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect",
    "::mlir::vector::VectorDialect"
  ];
  let statistics = [
    Statistic<"numFused", "num-fused", "RoPEs applied in projection epilogues">
  ];
}

def CPULowerQuantizedLinearPass
    : Pass<"blockc-cpu-lower-quantized-linear", "::mlir::func::FuncOp"> {
  let summary = "Lower projections on quantised weights to kernels that "
                "dequantise in registers";
  let description = [{
    Rewrites each f32 `transformer.linear` with a `#transformer.weight_quant`
    (input `[B, T, K]`) into:

    * the prepared weight: one `linalg.generic` that quantises W into the
      `#blockc_codegen.quantized_weight` layout (i32 words: per row the
      int8 bytes or int4 nibble pairs, then the f32 scales), with the rules
      of `Codegen/Common/WeightQuant.h`, marked `blockc_codegen.prepared`
      (`blockc-cpu-prepare-weights` moves it into the entry's prepare
      function, so the checkpoint is quantised once at load and the entry
      receives the quantised words instead of the f32 weight);
    * the kernel: an `scf.forall` over blocks of 32 output columns (marked
      `#blockc_codegen.kernel<quantized_linear>`). From 16 rows (B x T) on
      (prefill), each panel of 1024 k of the block's weights is widened
      once into an f32 stack buffer `[1024, 32]` (V x V blocks transposed
      in registers; int4 rows staged through a `[V, 32]` buffer) that an
      outer-product micro-kernel reads for every row: 6 (16 registers) or
      8 (32) rows x 2 vectors of accumulators, x broadcasts, added into the
      output block per panel. Fewer rows (decode) stream the block's rows
      of quantised words directly: register tiles of 2 x 4 (16 registers)
      or 4 x 4 (32) rows x columns of V-lane accumulators (int4 with 16
      registers: one row at a time), a single row 1 x 8 (int4 1 x 4); per
      step V bytes are read and widened in registers. int8: sign-extend,
      convert, multiply-add; the row scale multiplies the reduced sum once.
      int8 with `row_lanes` (8 lanes, K a multiple of 32): a tile's 8 rows
      in the lanes, per 4 k one 32-byte read, one xor (each byte's sign
      bit: u = q + 128), three masks and a shift leaving u 256^j in place,
      four conversions and four FMAs against x 256^-j (the input scaled
      once per call), the sums starting from -128 times the row's sum of
      x; prefill fills the panel rows from the same words.
      int4 (half the columns: each accumulator has a group accumulator
      beside it): zero-extend, mask and shift the nibbles u, convert,
      multiply-add, and per group `acc += (sum x u - 8 sum x) s`, one scale
      per group and column; on AVX-512, per group and column a table of
      `(u - 8) s` that `vpermps` indexes with each nibble. An int4
      projection marked `bf16_dot` (`linear_tiles`, written by
      `blockc-cpu-select-tiles`) whose input is widened from bf16, on a
      target with `avx512_bf16`, reads the bf16 input itself and turns
      each 16 bytes of a row into 32 exact bf16 values of q (`vpmaddwd`
      spreads the nibbles into 16-bit lanes, `vpermw` looks them up) for
      `vdpbf16ps`, with the group's scale applied to each group sum. No
      full-size f32 copy of a weight exists.
    * With `activations = int8` on AVX2 and AVX-512 targets, the input is
      quantised once per call, before the kernel. The row count B x T is
      tested once, outside any parallel loop, against `quantized_tiles`'
      `act_panel_min_rows` (0: never), and each side has its own input and
      its own `scf.forall`. From there on (prefill): the quantised values
      `q_x s_x` (f32) through the f32 panels above. Below (decode): int8
      `q_x` and the scales `s_x` of its runs of 32 columns (divided there,
      once), and register tiles of integer dot products per run of 32 k
      (`vpsignb` + `vpmaddubsw` + `vpmaddwd`, or `vpdpbusd` where the
      `cpu_target` has `avx512_vnni` / `avx_vnni`; int4 nibbles as the
      unsigned operand with an offset from `q_x`'s lane sums), the rows
      four tiles further prefetched into L2. With `row_lanes` on 8 lanes
      without VNNI the tiles hold 8 weight rows in the lanes against a
      broadcast word of `q_x` (laid out once per call): int4 masks its
      nibbles for `vpmaddubsw`, int8 (prepared with `interleave` 8 and
      `row_lanes`) runs `vpsignb` + `vpmaddubsw` + `vpmaddwd` per 4 k of
      the 8 rows; no horizontal sums.
      SSE targets leave these projections to
      `convert-weight-quant-to-linalg`.

    V is the function's `blockc_codegen.cpu_target` width (4, 8 or 16; the
    pass fails at a function without a target when it has a quantised
    projection). Other element types are left to
    `convert-weight-quant-to-linalg`. The kernel is not rewritten by the
    norm, residual, activation or RoPE fusions (they match `linear`
    kernels): those ops stay separate.
  }];
  let dependentDialects = [
    "::blockc::codegen::CodegenDialect",
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect",
    "::mlir::vector::VectorDialect",
    "::mlir::x86vector::X86VectorDialect"
  ];
  let statistics = [
    Statistic<"numLowered", "num-lowered",
              "Quantised projections lowered to kernels">
  ];
}

def CPULowerNormsPass
    : Pass<"blockc-cpu-lower-norms", "::mlir::func::FuncOp"> {
  let summary = "Lower LayerNorm and the RMSNorms left unfused to row-parallel "
                "vector kernels";
  let description = [{
    Rewrites each f32 `transformer.layer_norm` and `transformer.rms_norm`
    over `[B, T, D]` (D static and a multiple of the vector width V of the
    function's `blockc_codegen.cpu_target`; the pass fails at a function
    without one when it has a norm to lower) that is still there (RMSNorms
    whose every user is a projection are fused by `blockc-cpu-fuse-norm`,
    which runs first) into an `scf.forall` over the rows (OpenMP threads),
    marked `blockc_codegen.kernel = #blockc_codegen.kernel<norm>`. Each row
    is read in vectors of V lanes, with V-lane accumulators reduced once per
    pass: max |x| (the overflow guard of the norms' linalg lowering: rows
    whose finite max |x| exceeds 2^50 are normalised as `x / max|x|`), then
    for LayerNorm the sum and the two-pass sum of squared deviations, for
    RMSNorm the sum of squares, then the output `(x - mean) r g + b` or
    `x r g`. The formulas are those of the linalg lowering; only the order
    of the f32 additions differs (V partial sums). Other norms are left to
    `convert-transformer-to-linalg`.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::math::MathDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect",
    "::mlir::vector::VectorDialect"
  ];
  let statistics = [
    Statistic<"numLowered", "num-lowered", "Norms lowered to vector kernels">
  ];
}

def CPULowerSDPAPass
    : Pass<"blockc-cpu-lower-sdpa", "::mlir::func::FuncOp"> {
  let summary = "Lower transformer.sdpa to a fused, online-softmax vector kernel";
  let description = [{
    Rewrites every `transformer.paged_sdpa` (ragged batches over paged K/V
    pools) into its kernel: an `scf.forall` over (sequence, query head), each
    item running the online softmax of its sequence's new rows over the keys
    at positions `0 .. p_t`, page by page through the block table, K and V
    rows read in place from the pools as vectors of the head dim (bf16/f16
    pools widened in registers).

    Rewrites every f32 `transformer.sdpa` (static head dimension D) into one fused loop nest on tensors
    (flash-attention style, no `[T, S]` score matrix in memory). The work
    items (head, block of query rows) run in parallel (a 2-D `scf.forall`,
    marked `blockc_codegen.kernel = #blockc_codegen.kernel<attention>`);
    kv head = h / (H / H_kv), read in place (no K/V copy). Full blocks of
    R x V query rows use the register-tiled multi-row kernel, whose vectors
    hold rows of the block (no horizontal reduction at all). Its schedule is
    the op's `blockc_codegen.attention_tiles` (the pass fails at an sdpa
    without one; `blockc-cpu-select-tiles` writes it from the target's
    register count: 32: R = 4 and 4 x 4 accumulators; 16: R = 2 and 2 x 6
    accumulators for the scores, 6 head dims x 2 for P.V, with the head
    dims past the last group of 6 as one smaller group; a key tile of 32
    rounded down to whole groups of keys: 30 with AVX2). On Zen 3 (AVX2, one thread, mid attention H = 16 / 4, D = 128,
    T = 2048, causal) 2 x 6 instead of 2 x 4 took 380-393 ms to 336-339 ms
    (interleaved runs; the 8 accumulators of 2 x 4 left the FMA latency
    exposed), 2.0x the causal FLOP roofline at the measured 102 GFLOP/s:

    ```
    qt[d, :] = scale * query[b, t0:t0+RV, h, d]      // [D, RV] stack scratch
    m = -inf, l = 0, ot[d, :] = 0                    // per row (lane)
    for s0 in [0, S_end(last row)) step key_tile:    // fully masked tiles never run
      sb[j, :] = sum_d key[b, s0+j, kvh, d] * qt[d, :]  // R x G register tile
      (keys a row does not see: sb = -inf)
      m' = max(m, max_j sb[j]); c = exp(m - m'); sb[j] = exp(sb[j] - m')
      l = l c + sum_j sb[j]
      ot[d, :] = ot[d, :] c + sum_j value[b, s0+j, kvh, d] * sb[j, :]  // G x R tile
    out[b, t0+r, h, :] = l_r > 0 ? ot[:, r] / l_r : 0
    ```

    The scratch is `memref.alloca`s of static shape in the loop body, which
    `blockc-cpu-hoist-thread-scratch` later makes one per thread.
    The other rows (a short last block; every row of a decode step) use the
    single-row kernel, whose vectors hold the V keys of a tile: the row's
    pre-scaled query and its accumulator live in a `[2, D]` stack buffer
    (D / V vectors each would not fit beside the rest: 16 + 16 with AVX2
    and D = 128); the V partial dot products are one loop over the head dim
    (one query vector, V key vectors and V accumulators per step), summed
    across lanes by one transpose-add tree (log2 V shuffle steps); the tile
    max reaches every lane through a butterfly of log2 V shuffle + max steps
    (m is a vector, no scalar reduction chain), then the same update, the
    accumulator in chunks of the head dim (8 vectors with 32 registers, 4
    with 16, beside the V broadcast probabilities); the partial last tile is
    masked. Each full tile first prefetches the key and value rows of the
    tile `prefetch_distance` tiles ahead (`prefetch_locality`: L2), one
    prefetch per 64-byte line: a head's rows are only two streams (head-major
    KV caches, see `transformer-derive-decode`'s `kv-layout`) or rows 16 KiB
    apart (token-major), too few or too scattered for the hardware
    prefetchers to keep enough lines in flight. On the 7B decode attention
    over 4096 keys (one Zen 4 core, interleaved runs) the next tile into L2
    measured 9.6-10.3 ms per step, two tiles ahead 9.5-11.0, into L1
    instead 11.6-14.1, this tile's values plus the next tile's keys into L1
    (the previous scheme) 11.7-13.7 and no prefetch 13.6-15.9.

    The row max is subtracted before every exp (a vector polynomial, exact 0
    for -inf, NaN-propagating), masked keys contribute exactly zero (their
    values are selected away, so a NaN in a future value row does not leak
    into earlier rows) and a row without any visible key yields zeros.
    The vector width V is the attribute's `width` (select-tiles: the
    target's f32 lanes when they divide D, else the widest narrower width
    of 4 lanes or more that does: D = 24: 8 lanes with AVX-512; D = 12: 4);
    it must divide D rounded up to 4 and be at most the width of the
    function's `blockc_codegen.cpu_target` (else an error at the op; the
    pass fails at a function without a target when it has an sdpa to
    lower). A D that 4 does not divide is zero-padded to the next multiple
    of 4 (a `tensor.pad` of Q, K and V, and the output's padded columns
    dropped by a `tensor.extract_slice`). Non-f32 attention and a dynamic
    head dim are left to `convert-transformer-to-linalg`.

    Measured (mid config, H = 16 / 4, D = 128, T = S = 2048, causal, 1
    thread, Zen 5 AVX-512): 122 ms = 141 GFLOP/s, 64% of the FMA peak, 1.56x
    the FLOP roofline (the former 16-row kernel: 138 ms); 2 threads 66 ms.
  }];
  let dependentDialects = [
    "::blockc::codegen::CodegenDialect",
    "::mlir::arith::ArithDialect",
    "::mlir::bufferization::BufferizationDialect",
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

def CPUPrepareWeightsPass
    : Pass<"blockc-cpu-prepare-weights", "::mlir::ModuleOp"> {
  let summary = "Move the packing of prepared weights into a prepare "
                "function per entry";
  let description = [{
    The projection kernels of weights laid out as packed panels
    (`blockc_codegen.weight_layout<packed_panels>`) read a `linalg.pack` of
    the weight marked `blockc_codegen.prepared =
    #blockc_codegen.packed_weight<...>` (see `blockc-cpu-lower-linear`;
    `blockc-cpu-fuse-norm` may fold an RMSNorm gain into the packed weight).
    The same holds for a `linalg.generic` marked `blockc_codegen.prepared =
    #blockc_codegen.quantized_weight<...>` (`blockc-cpu-lower-quantized-
    linear`: the weight's quantised words), whose weight is the one entry
    argument its computation reads (uses inside its region included).
    For every entry `@E` (a public function that nothing in the module
    calls), this pass moves each such pack, with the weight-only
    computation feeding it, into a new public function `@E_prepare`, so the
    packing runs once, when the caller prepares its weights, instead of on
    every call:

    * `@E_prepare` (attribute `blockc_codegen.prepare_for = "E"`) takes the
      entry arguments the moved computation reads (their attributes, e.g.
      `transformer.weight_name`, are copied, plus
      `blockc_codegen.source_arg = <index in @E>`), then one destination
      per prepared weight (`blockc_codegen.source_arg`,
      `blockc_codegen.prepared` and `bufferization.writable`: the caller's
      buffer, packed in place), and returns the destinations (result
      attributes `blockc_codegen.source_arg` and `blockc_codegen.prepared`).
    * `@E_prepare`'s body is one `func.call` per prepared weight, in
      argument order, to a part `@E_prepare_<i>` (`i`: the weight's entry
      argument; attribute `blockc_codegen.prepare_part_of = "E_prepare"`)
      that holds that weight's moved computation, with the same records for
      the inputs it reads and its one destination. A caller can run the
      parts one at a time and free each original as soon as its prepared
      form exists (BlockJit does), instead of holding every original and
      every prepared weight at once.
    * In `@E`, the packed weight's argument takes the prepared type
      (`[ceil(N / panel_n), ceil(K / panel_k), panel_k, panel_n]`) and gets
      `blockc_codegen.prepared`; the caller passes `@E_prepare`'s result
      there instead of the original, which it may then free. Other
      arguments keep their types (an RMSNorm gain folded into weights stays
      an argument of `@E`).

    A pack is left in place (packing per call) when its weight is not an
    argument of `@E`, when the computation feeding it reads anything but
    `@E`'s arguments and constants or has side effects, or when the weight
    argument has another use in `@E` (e.g. a second layout). Then every
    `linalg.pack` with a `blockc_codegen.prepared` layout (in prepare
    functions and those left in place) is lowered with upstream's
    `linalg::lowerPack` (pad, expand_shape, transpose). A function named
    `@E_prepare` or like one of its parts that already exists is an error.
  }];
  let dependentDialects = [
    "::blockc::codegen::CodegenDialect",
    "::mlir::arith::ArithDialect",
    "::mlir::bufferization::BufferizationDialect",
    "::mlir::func::FuncDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect",
    "::mlir::vector::VectorDialect"
  ];
  let statistics = [
    Statistic<"numPrepared", "num-prepared",
              "Packed weights moved into prepare functions">,
    Statistic<"numLeft", "num-left", "Packed weights left packing per call">
  ];
}

def CPUHoistThreadScratchPass
    : Pass<"blockc-cpu-hoist-thread-scratch", "::mlir::func::FuncOp"> {
  let summary = "Allocate a parallel loop's static stack scratch once per "
                "thread";
  let description = [{
    A kernel that needs scratch memory per work item (the attention's
    transposed query block, accumulator and score tile) allocates it with
    `memref.alloca` of a static shape inside its `scf.forall`. After
    `convert-scf-to-openmp` those allocas sit in the `memref.alloca_scope`
    of every iteration of the `omp.wsloop`, which `convert-scf-to-cf`
    cannot lower (the scope's region must stay one block). This pass moves
    every operand-free (static) `memref.alloca` inside an `omp.wsloop` to
    the start of its `omp.parallel` region: each thread allocates the
    buffer once on its own stack and reuses it for all its iterations; a
    work item's scope left without any alloca is inlined (by this pass:
    `canonicalize` keeps a scope around any op of unknown memory effects,
    such as a micro-kernel call or inline assembly, which cannot allocate
    on the caller's stack). Legal because the
    iterations of one thread run one after the other and a fresh alloca's
    contents are undefined anyway. (Heap buffers per work item instead cost
    a page-faulting `malloc` per iteration: ~30% of the attention's time at
    T = 2048.)

    ```mlir
    omp.parallel {
      omp.wsloop { omp.loop_nest (%i) ... {
        memref.alloca_scope { %s = memref.alloca() : memref<128x64xf32> ... }
      } }
    }
    // becomes
    omp.parallel {
      %s = memref.alloca() : memref<128x64xf32>
      omp.wsloop { omp.loop_nest (%i) ... { memref.alloca_scope { ... } } }
    }
    ```
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
  let statistics = [
    Statistic<"numHoisted", "num-hoisted", "allocas hoisted to their thread">,
    Statistic<"numInlined", "num-inlined", "alloca-free scopes inlined">
  ];
}

def CPUExpandBF16Pass
    : Pass<"blockc-cpu-expand-bf16", "::mlir::func::FuncOp"> {
  let summary = "bf16 <-> f32 conversions as integer code (upstream's "
                "bf16 expansion patterns)";
  let description = [{
    `arith.truncf` to bf16 and `arith.extf` from bf16 become bitcasts,
    shifts and integer adds, using upstream's
    `arith::populateExpandBFloat16Patterns`: round to nearest even, NaN
    kept a quiet NaN. Without it, LLVM turns each truncation on a CPU that
    lacks AVX512_BF16 into a call to `__truncsfbf2` per element, which
    cannot be vectorised (27 call sites in a 3-layer bf16 stack). The
    integer form vectorises with the loop around it. In a function whose
    `cpu_target` has `avx512_bf16` the f32 -> bf16 truncations stay: LLVM
    rounds them with `vcvtneps2bf16` (round to nearest even; it flushes
    f32 denormals to zero). Upstream's
    `arith-expand{include-bf16}` would also rewrite f32 `maximumf`,
    `minimumf` and the integer divisions of the f32 kernels, so this pass
    applies the bf16 patterns alone. It runs at the start of the CPU LLVM
    stage.

    ```mlir
    %r = arith.truncf %x : vector<8xf32> to vector<8xbf16>
    // becomes bitcasts to i32, the round-to-nearest-even add, a shift,
    // a truncation to i16 and a bitcast to bf16
    ```
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
  let statistics = [
    Statistic<"numExpanded", "num-expanded", "Conversions expanded">
  ];
}

def CPUFmaToFmulAddPass
    : Pass<"blockc-cpu-fma-to-fmuladd", "::mlir::func::FuncOp"> {
  let summary = "Lower math.fma to llvm.intr.fmuladd (fused where the target "
                "has FMA)";
  let description = [{
    The CPU kernels write `math.fma` for every multiply-add they mean to
    fuse. `convert-math-to-llvm` turns it into `llvm.intr.fma`, whose
    single rounding LLVM must honour on every target: without FMA
    instructions (`isa=sse`) each lane becomes a call to libm's `fmaf`
    (the SSE attention ran 60x slower than with AVX2). The kernels only need
    a multiply-add, fused where that is fast, which is what
    `llvm.intr.fmuladd` means: on AVX2 and AVX-512 it is the same FMA
    instruction, on SSE a `mulps` and an `addps`. Scalars and vectors of
    any float type; runs at the start of the CPU LLVM stage.

    ```mlir
    %r = math.fma %a, %b, %c : vector<4xf32>
    // becomes
    %r = llvm.intr.fmuladd(%a, %b, %c) : (vector<4xf32>, vector<4xf32>, vector<4xf32>) -> vector<4xf32>
    ```
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
  let statistics = [
    Statistic<"numRewritten", "num-rewritten", "math.fma ops rewritten">
  ];
}

def CPULowerTransposesPass
    : Pass<"blockc-cpu-lower-transposes", "::mlir::func::FuncOp"> {
  let summary = "Lower 2-D vector.transpose with the target's best upstream "
                "shuffle sequence";
  let description = [{
    The CPU kernels transpose blocks of vectors in registers with
    `vector.transpose` (e.g. `blockc-cpu-lower-linear` packs V x V weight
    blocks). This pass picks, per transpose, which of upstream's lowerings
    to apply, from the function's `blockc_codegen.cpu_target` (mechanism:
    it only reads the target that `blockc-cpu-select-tiles` wrote):

    | transpose | target ISA | lowering (upstream) |
    |---|---|---|
    | 16x16 (32-bit elements) | any | `shuffle_16x16`: unpack/shuffle stages LLVM maps to 512-bit two-source permutes |
    | 8x8xf32, 4x8xf32 | `avx2` | x86vector's AVX2 sequence (`vunpck*`, `vshufps`, `vblendps`, `vperm2f128`) |
    | any other 2-D | any | `shuffle_1d`: one shuffle of the flattened vector |

    Other ranks use upstream's element-wise lowering. Measured with `llc -O3`
    on a load-transpose-store function (16 loads and stores included): 8x8
    on znver3 46 instructions (blockc's former hand-written butterfly 50,
    `shuffle_1d` 104); 16x16 on znver4 98 (butterfly 108, `shuffle_1d`
    429). A function with a transpose but no `cpu_target` is an error.
  }];
  let dependentDialects = [
    "::mlir::LLVM::LLVMDialect",
    "::mlir::vector::VectorDialect"
  ];
  let statistics = [
    Statistic<"numLowered", "num-lowered", "vector.transpose ops lowered">
  ];
}

def CPUTileElementwisePass
    : Pass<"blockc-cpu-tile-elementwise", "::mlir::func::FuncOp"> {
  let summary = "Parallel, vectorised loops for the elementwise ops left "
                "between the CPU kernels";
  let description = [{
    The mechanism for `blockc_codegen.elementwise_tiles` (written by
    `blockc-cpu-select-tiles`): every all-parallel `linalg.generic` and
    `linalg.fill` on tensors that carries one is tiled with upstream's
    `TilingInterface` into an `scf.forall` whose work items take `rows`
    indices of the second-innermost loop (one of each outer loop; a
    one-loop op gets no parallel loop), and, with `width` > 0, each work
    item's op again into an `scf.for` over vectors of `width` elements of
    the innermost loop, whose 1-D op (upstream's `dropUnitDims` with
    rank-reducing slices; a fill generalized first) upstream's linalg
    vectorizer turns into `vector` ops. `math.exp`, `erf`,
    `erfc` and `tanh` on those vectors become blockc's polynomials
    (`Codegen/Common/Approximations`, the CPU epilogues' own); scalar ones
    keep libm. With `width` = 0 the work item's op stays a scalar loop nest.

    These ops are the conversions and roundings of a 16-bit block between
    its kernels (Hugging Face's rounding points), and the activations and
    norm gains that no kernel absorbed there: without this pass they run as
    scalar loops on one thread.

    ```mlir
    %y = linalg.generic {...} ins(%x : tensor<?x?x64xf32>)           // before
        outs(%e : tensor<?x?x64xbf16>) attrs = {
        blockc_codegen.elementwise_tiles =
          #blockc_codegen.elementwise_tiles<rows = 4, width = 16>} {...}
    %y = scf.forall (%b, %t) = (0, 0) to (%B, %T) step (1, 4)        // after
        shared_outs(%o = %e) -> (tensor<?x?x64xbf16>) {
      ... scf.for %j = %c0 to %c64 step %c16 ... {
        vector.transfer_read ... : vector<16xf32>
        arith.truncf ... : vector<16xf32> to vector<16xbf16>
        vector.transfer_write ...
    ```

    An op whose attribute asks for vectors that its innermost loop cannot
    take (a size that is dynamic or not a multiple of `width`), or that
    reads an operand through a map that is not a projected permutation
    (whose tiles upstream's slices would get wrong), is an error at the op.
  }];
  let dependentDialects = [
    "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect",
    "::mlir::vector::VectorDialect",
    "::mlir::math::MathDialect"
  ];
  let statistics = [
    Statistic<"numTiled", "num-tiled", "Elementwise ops tiled">,
    Statistic<"numVectorized", "num-vectorized", "Elementwise ops vectorised">
  ];
}

def DropInPlaceResultsPass
    : Pass<"blockc-drop-inplace-results", "::mlir::ModuleOp"> {
  let summary = "Drop function results that are the function's own buffer arguments";
  let description = [{
    After one-shot bufferization, a value-semantic result that was computed
    in place in a KV cache argument's buffer (the arguments of a decode
    entry marked `transformer.kv_cache`, see `transformer-derive-decode`) is
    returned as that very block argument. This pass removes such results
    from functions that have no callers in the module (entry points), so the
    caller simply sees its cache updated and the entry keeps the one-result
    C interface. Any other returned argument (an input passed through) is a
    result the caller expects and stays. The same holds for the
    destinations of a prepare function and of its parts (arguments marked
    `blockc_codegen.prepared`, see `blockc-cpu-prepare-weights`). A
    function with callers (only `func.call` uses; anything else leaves it
    alone) loses such results too: its calls use the buffer they pass
    instead. Called functions go first, until nothing changes, so that a
    prepare function then returns its own arguments (what its parts
    filled) and loses those results in turn. It must run before the
    deallocation pipeline, which would otherwise return a clone (a full copy
    of the cache per call). Upstream's `drop-equivalent-buffer-results` only
    handles private functions. A cache threaded through `scf.for` loops that
    yield their own iter_arg buffer (a paged entry's page writes,
    `transformer-derive-paged-decode`) is returned as the outer loop's
    result, which is the argument's buffer too: it is dropped as well.

    When the cache argument has a non-identity layout (a head-major KV cache, see
    `bufferization.buffer_layout`) and the result type the identity layout,
    bufferization returns a fresh buffer filled by one `memref.copy` of the
    whole argument right before the return; that result is dropped too,
    with its allocation and copy (after the copy nothing but other such
    allocations and copies may run).

    Before:
    ```mlir
    func.func @f(%x: memref<?xf32>, %c: memref<?xf32> {transformer.kv_cache = "k"})
        -> (memref<?xf32>, memref<?xf32>) {
      ...
      return %y, %c : memref<?xf32>, memref<?xf32>
    }
    ```
    After:
    ```mlir
    func.func @f(%x: memref<?xf32>, %c: memref<?xf32> {transformer.kv_cache = "k"})
        -> memref<?xf32> {
      ...
      return %y : memref<?xf32>
    }
    ```
  }];
  let statistics = [
    Statistic<"numDropped", "num-dropped", "Number of results dropped">
  ];
}

def CPUOutlineParallelKernelsPass
    : Pass<"blockc-cpu-outline-parallel-kernels", "::mlir::ModuleOp"> {
  let summary = "Outline each parallel kernel (omp.parallel) into a private "
                "function";
  let description = [{
    Every outermost `omp.parallel` in a function body (one per kernel after
    `convert-scf-to-openmp`: a projection, an attention, a norm, a weight
    pack of a prepare function) moves into a private function
    `<function>_kernel` (uniqued) and is replaced by a `func.call`. The
    values it reads from above become the function's arguments, in the order
    the region first uses them, except constants (`ConstantLike` ops without
    operands), which are cloned into it. The function has internal linkage
    (`llvm.linkage`: no symbol in the object) and is not inlined
    (`no_inline`, and `passthrough = ["noinline"]`, which `func-to-llvm`
    carries to LLVM): a kernel runs for microseconds at least, a call costs
    nanoseconds, and LLVM then optimises and compiles each kernel once.

    On its own this changes no computation; with
    `blockc-merge-identical-functions` after it, identical kernels (every
    layer of a stack of one shape, projections of one shape within a
    block, prepare parts of one weight shape) are translated and compiled
    once. It runs at the start of the CPU LLVM stage, after
    `llvm-request-c-wrappers`, so the outlined functions get no C wrappers.

    ```mlir
    func.func @forward(%w: memref<64x64xf32>) {
      %c4 = arith.constant 4 : index
      omp.parallel { ... %w ... %c4 ... }
    }
    // becomes
    func.func @forward(%w: memref<64x64xf32>) {
      %c4 = arith.constant 4 : index
      call @forward_kernel(%w) : (memref<64x64xf32>) -> ()
    }
    func.func private @forward_kernel(%w: memref<64x64xf32>)
        attributes {llvm.linkage = #llvm.linkage<internal>, no_inline,
                    passthrough = ["noinline"]} {
      %c4 = arith.constant 4 : index
      omp.parallel { ... %w ... %c4 ... }
      return
    }
    ```
  }];
  let dependentDialects = ["::mlir::func::FuncDialect",
                           "::mlir::LLVM::LLVMDialect"];
  let statistics = [
    Statistic<"numOutlined", "num-outlined", "parallel kernels outlined">
  ];
}

def CPUOutlineMicroKernelsPass
    : Pass<"blockc-cpu-outline-micro-kernels", "::mlir::ModuleOp"> {
  let summary = "Outline register-tile micro-kernels that several kernels "
                "share into one function each";
  let description = [{
    A micro-kernel is the outermost of the result-less `scf.for` loops
    directly around a register tile (an `scf.for` that carries only vectors,
    the accumulators of a projection's or attention's reduction) that hold
    no other register tile: for a projection, the loop over one tile shape's
    rows of a panel with its column loop, the accumulator loads, the loop
    along K and the stores. Each is cloned into a private function whose
    arguments are the values it reads from above (constants are cloned in),
    with every memref in a canonical type: all sizes, the offset and every
    non-unit stride dynamic, unit strides kept (so vector accesses stay
    contiguous). Subviews inside take the types inferred from those
    sources. Micro-kernels whose functions are equal
    (`blockc-merge-identical-functions`' test: same type, structurally
    equal bodies) are replaced by calls of one of them, their memrefs cast
    to the canonical types; one without an equal stays inline with its
    static types. Loops that make memrefs other than subviews, or hold
    OpenMP ops, are left alone.

    The functions are private, internal and never inlined, as the kernels
    of `blockc-cpu-outline-parallel-kernels`: the projections of a block
    (q, k, v, o, gate, up, down: 4096 or 11008 columns, 4096 or 11008
    along K) then share one function per tile shape, which LLVM optimises
    and compiles once. A call per panel row block costs nanoseconds
    against the microseconds of the panel's multiply-adds.

    ```mlir
    // two kernels with a 2-row micro-kernel each, over 64 and 128 columns
    scf.for %i = %lo to %hi step %c2 {   // in kernel A: memref<?x64xf32>
      ... %acc:2 = scf.for %k ... iter_args(...) -> (vector<8xf32>, ...)
    }
    // becomes, in both
    %cast = memref.cast %a : memref<?x64xf32>
        to memref<?x?xf32, strided<[?, 1], offset: ?>>
    call @A_micro(%lo, %hi, %cast, ...)
    ```
  }];
  let dependentDialects = ["::mlir::func::FuncDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::LLVM::LLVMDialect"];
  let statistics = [
    Statistic<"numOutlined", "num-outlined",
              "micro-kernels replaced by a call">,
    Statistic<"numFunctions", "num-functions",
              "micro-kernel functions kept">
  ];
}

#endif // BLOCKC_CODEGEN_CPU_PASSES_TD
