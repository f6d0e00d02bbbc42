//===- Passes.td - transformer dialect passes --------------*- tablegen -*-===//
//
// Passes that rewrite within the `transformer` dialect.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKC_DIALECT_TRANSFORMER_TRANSFORMS_PASSES_TD
#define BLOCKC_DIALECT_TRANSFORMER_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def TransformerDecomposePass : Pass<"transformer-decompose"> {
  let summary = "Decompose composite transformer ops into primitives";
  let description = [{
    Rewrites `transformer.block` into norms, `transformer.attention`,
    `transformer.ffn` and `transformer.residual_add` in pre- or post-norm
    order; `transformer.attention` into `linear` projections, head reshapes
    (`tensor.expand_shape` / `tensor.collapse_shape`), `rope` and `sdpa`;
    and `transformer.ffn` into `linear`, `activation` and, when gated, an
    elementwise `arith.mulf`. Locations are kept on every new op.

    Before:
    ```mlir
    %y = transformer.ffn %x gate(%wg : tensor<128x64xf32>)
        up(%wu : tensor<128x64xf32>) down(%wd : tensor<64x128xf32>)
        : tensor<?x?x64xf32>
    ```
    After:
    ```mlir
    %u = transformer.linear %x, %wu : ... -> tensor<?x?x128xf32>
    %g = transformer.linear %x, %wg : ... -> tensor<?x?x128xf32>
    %a = transformer.activation <silu> %g : tensor<?x?x128xf32>
    %h = arith.mulf %a, %u : tensor<?x?x128xf32>
    %y = transformer.linear %h, %wd : ... -> tensor<?x?x64xf32>
    ```

    With `composites=block` only blocks are rewritten (into attention and
    ffn sub-layers), which is useful to test the block structure alone.
    `composites` is an enum option: any other value is rejected when the
    pipeline is parsed.
  }];
  let options = [
    Option<"composites", "composites",
           "::blockc::transformer::DecomposeComposites",
           /*default=*/"::blockc::transformer::DecomposeComposites::all",
           "Which composites to decompose",
           [{::llvm::cl::values(
               clEnumValN(::blockc::transformer::DecomposeComposites::all,
                          "all", "blocks, attention and ffn (to primitives)"),
               clEnumValN(::blockc::transformer::DecomposeComposites::block,
                          "block", "blocks only (into sub-layers)"))}]>
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::shard::ShardDialect",
    "::mlir::tensor::TensorDialect"
  ];
  let statistics = [
    Statistic<"numDecomposed", "num-decomposed",
              "Number of composite ops decomposed">
  ];
}

def TransformerFoldEmptyPass : Pass<"transformer-fold-empty"> {
  let summary = "Replace transformer ops with statically empty results by "
                "tensor.empty";
  let description = [{
    A transformer op whose result has a static dimension of size 0 (a block
    on `tensor<0x?x64xf32>` or `tensor<2x0x64xf32>`) computes no element, so
    its result is `tensor.empty` of the same type (dynamic dimensions taken
    from the input with `tensor.dim`). The op is valid IR, and the kernels
    further down are written for non-empty tiles: folding it first is what
    makes the pipelines compile such blocks instead of failing inside a
    kernel pass. `kv_cache_append` is left alone (its result aliases the
    cache).
  }];
  let dependentDialects = ["::mlir::tensor::TensorDialect"];
  let statistics = [
    Statistic<"numFolded", "num-folded", "Number of empty ops folded">
  ];
}

def TransformerQuantizeWeightsPass : Pass<"transformer-quantize-weights"> {
  let summary = "Quantise the projections of any model (weight-only)";
  let description = [{
    Sets `weight_quant` (a `#transformer.weight_quant`) on every
    `transformer.block`, `attention`, `ffn` and `linear` that has none, so
    that any model, written by hand or imported, computes its projections
    with quantised weights (`blockc-import --quantize` writes the same
    attribute). Norms and biases are never quantised.

    ```
    blockc-opt model.mlir --transformer-quantize-weights="type=int4 group-size=64"
    ```

    With int4, an op whose projection input dimension is not a multiple of
    the group size is an error at that op, and the pass fails.

    `quantize-activations=int8` also quantises each projection's input at
    run time (`activations = int8` on the attribute: per token row and run
    of 32 input columns, integer dot products); every projection's input
    dimension must then be a multiple of 32 (an error at the op otherwise).

    ```
    blockc-opt model.mlir --transformer-quantize-weights="type=int8 quantize-activations=int8"
    ```
  }];
  let options = [
    Option<"type", "type", "std::string", /*default=*/"\"int8\"",
           "int8 (a scale per output row) or int4 (a scale per group)">,
    Option<"groupSize", "group-size", "int64_t", /*default=*/"32",
           "int4: input columns per scale (32, 64 or 128)">,
    Option<"quantizeActivations", "quantize-activations", "std::string",
           /*default=*/"\"none\"",
           "none (weight-only, default) or int8 (the projections' inputs "
           "quantised at run time per run of 32 columns)">
  ];
  let statistics = [
    Statistic<"numQuantized", "num-quantized", "Ops given a weight_quant">
  ];
}

def TransformerComputeInF32Pass : Pass<"transformer-compute-in-f32"> {
  let summary = "Compute bf16/f16 blocks in f32 between their rounding points";
  let description = [{
    A model whose tensors are bf16 or f16 (the storage type) is computed in
    f32, rounded to the storage type at the points where Hugging Face's
    modelling code rounds (docs/Precision.md):

    * every primitive op (`linear`, the norms, `rope`, `sdpa`,
      `activation`, `residual_add`) and every elementwise `arith` op on
      tensors reads its narrow operands widened to f32 (`arith.extf`),
      computes in f32 and rounds its result once (`arith.truncf`), so the
      tensors between ops hold exactly the storage type's values;
    * `rms_norm` rounds twice, as `LlamaRMSNorm`: the normalised row
      `x * rsqrt(mean(x^2) + eps)` and then its product with the gain;
    * a `linear` keeps its weight in the storage type (a weight-only narrow
      operand that the kernels widen in registers; never a widened copy of
      the weight); its bias is widened;
    * `kv_cache_append`, shape ops and the function's interface stay in the
      storage type;
    * a tensor-parallel `shard.all_reduce` (of the ranks' partial attention
      and FFN outputs) sums in f32 and rounds once: a partial that is a
      rounded f32 projection result is summed unrounded, so the sum rounds
      where the single-process projection rounds.

    Ops already in f32 are left alone, so the pass is a no-op on f32 models
    and idempotent. Run after `transformer-decompose` (composites are
    rejected).
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
  let statistics = [
    Statistic<"numWidened", "num-widened", "Ops computed in f32">
  ];
}

def TransformerDeriveDecodePass
    : Pass<"transformer-derive-decode", "::mlir::ModuleOp"> {
  let summary = "Derive a KV-cached decode entry from a model's forward function";
  let description = [{
    Adds `@<entry>_decode` next to the model function `@<entry>` (default
    `@forward`, which is left unchanged, or removed with `keep-entry=false`). The new function is the forward
    function decomposed (as by `transformer-decompose`) with every attention
    routed through a KV cache:

    ```
    @forward_decode(%x: [B, T, d], <the weights of @forward>,
                    %pos: index {transformer.kv_position},
                    %k_0 {transformer.kv_cache = #transformer.kv_cache<key>,
                          transformer.layer = 0,
                          transformer.kv_layout = #transformer.kv_layout<bhsd>,
                          bufferization.buffer_layout = strided<[?, D, ?, 1], offset: ?>},
                    %v_0 {transformer.kv_cache = #transformer.kv_cache<value>, ...},
                    ..., %k_{N-1}, %v_{N-1})
        -> ([B, T, d], k_0', v_0', ..., k_{N-1}', v_{N-1}')
    ```

    Each cache is the tensor `[B, L_max, H_kv, D]` (L_max dynamic); layer
    `i` is the `i`-th attention in program order. `kv-layout` (an enum
    option) picks its memory order, recorded as a `#transformer.kv_layout`
    in `transformer.kv_layout`: `bhsd` (default,
    head-major: `[B][H_kv][L_max][D]` in memory, so one head's keys are
    contiguous and the decode attention streams them) through the
    `bufferization.buffer_layout` argument attribute that one-shot
    bufferization reads, or `bshd` (token-major: the tensor's own row-major
    order, one token's heads contiguous). In the body every `transformer.rope`
    and every `transformer.embedding` with a position table (GPT-2's `wpe`)
    gets the absolute position offset `%pos`, and every `transformer.sdpa`
    reads its keys and values from
    `tensor.extract_slice (transformer.kv_cache_append %k into %k_i at %pos)`
    over the first `pos + T` rows; its causal mask is bottom-right aligned, so
    query `t` sees cache rows `j <= pos + t`. The updated caches are returned
    (value semantics); after one-shot bufferization they are the caller's
    buffers written in place, and `blockc-drop-inplace-results` removes them
    from the results.

    A causal language model's entry takes token ids `[B, T]` (i32) instead
    of `%x` and returns logits `[B, T, vocab]` (f32) before the caches: the
    decode entry takes the new tokens' ids and returns their logits.

    Prefill is the same function with `%pos = 0`, so prefill and decode
    cannot drift apart. Non-causal attention has no decode entry (an error).
  }];
  let options = [
    Option<"entry", "entry", "std::string", /*default=*/"\"forward\"",
           "The model function to derive the decode entry from">,
    Option<"kvLayout", "kv-layout", "::blockc::transformer::KVLayout",
           /*default=*/"::blockc::transformer::KVLayout::bhsd",
           "Memory order of the caches",
           [{::llvm::cl::values(
               clEnumValN(::blockc::transformer::KVLayout::bhsd, "bhsd",
                          "head-major: [B][H_kv][L_max][D] in memory"),
               clEnumValN(::blockc::transformer::KVLayout::bshd, "bshd",
                          "token-major: [B][L_max][H_kv][D] in memory"))}]>,
    Option<"keepEntry", "keep-entry", "bool", /*default=*/"true",
           "Keep @<entry> beside @<entry>_decode (false: the decode entry, "
           "which at position 0 is the prefill, replaces it)">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::func::FuncDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

def TransformerDerivePagedDecodePass
    : Pass<"transformer-derive-paged-decode", "::mlir::ModuleOp"> {
  let summary = "Derive a ragged, paged-KV-cache decode entry from a model's "
                "forward function";
  let description = [{
    Adds `@<entry>_paged` next to the model function `@<entry>` (default
    `@forward`, left unchanged, or removed with `keep-entry=false`): the
    forward function decomposed (the clone and decomposition are those of
    `transformer-derive-decode`) for serving engines that batch the new
    tokens of many sequences of different lengths in one call and keep the
    KV cache in fixed-size pages with a block table per sequence:

    ```
    @forward_paged(%x: [total, d], <the weights of @forward>,
                   %cu_seqlens: tensor<?xi32> {transformer.seq_offsets},
                   %seq_pos: tensor<?xi32> {transformer.seq_positions},
                   %block_table: tensor<?x?xi32> {transformer.block_table},
                   %k_0: tensor<?xSxH_kvxDxE> {transformer.kv_cache = #transformer.kv_cache<key>,
                         transformer.layer = 0, transformer.page_size = S},
                   %v_0 {transformer.kv_cache = #transformer.kv_cache<value>, ...},
                   ..., %k_{N-1}, %v_{N-1})
        -> ([total, d], k_0', v_0', ..., k_{N-1}', v_{N-1}')
    ```

    The new tokens of `B` sequences are packed without padding: sequence
    `b` owns rows `cu_seqlens[b] .. cu_seqlens[b+1] - 1` (`cu_seqlens[0] =
    0`, `cu_seqlens[B] = total`) and its `i`-th new token sits at position
    `seq_pos[b] + i`. Position `j` of sequence `b` lives in pool page
    `block_table[b, j / S]`, slot `j % S` (`S` = `page-size`, default 16).
    Each pool is `[num_pages, S, H_kv, D]` in the model's K/V element type;
    layer `i` is the `i`-th attention in program order.

    In the body the packed input is viewed as a batch of one sequence of
    `total` tokens; `%p = transformer.token_positions %cu_seqlens, %seq_pos`
    gives every token its position, which every `transformer.rope` and
    every `transformer.embedding` with a position table (GPT-2's `wpe`)
    reads as per-token positions; every causal `transformer.sdpa` becomes

    ```
    %k' = transformer.paged_kv_write %k into %k_i, %block_table, %cu_seqlens, %seq_pos
    %v' = transformer.paged_kv_write %v into %v_i, ...
    %o  = transformer.paged_sdpa %q, %k', %v', %block_table, %cu_seqlens, %seq_pos
    ```

    so that query `t` sees the keys at positions `0 .. p_t` of its own
    sequence. The updated pools are returned (value semantics); after
    one-shot bufferization they are the caller's buffers written in place,
    and `blockc-drop-inplace-results` removes them from the results.

    A causal language model's entry takes token ids `[B, T]` (i32): the
    paged entry then takes the packed ids `tensor<?xi32>` `[total]` and
    returns the logits `[total, vocab]`. Non-causal attention, an entry
    with other than one result, a batch dimension that cannot be 1 and a
    rope or position embedding that already has an offset are errors.
  }];
  let options = [
    Option<"entry", "entry", "std::string", /*default=*/"\"forward\"",
           "The model function to derive the paged entry from">,
    Option<"pageSize", "page-size", "int64_t", /*default=*/"16",
           "Token slots per page of the K/V pools">,
    Option<"keepEntry", "keep-entry", "bool", /*default=*/"true",
           "Keep @<entry> beside @<entry>_paged (false: the paged entry "
           "replaces it)">
  ];
  let dependentDialects = [
    "::mlir::func::FuncDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

def TransformerTensorParallelPass
    : Pass<"transformer-tensor-parallel", "::mlir::ModuleOp"> {
  let summary = "Partition every transformer block over the ranks of a "
                "tensor-parallel grid (Megatron-LM)";
  let description = [{
    Rewrites a module into the program that each of `ranks` processes runs
    (SPMD): every `transformer.block` of every function keeps its inputs
    and outputs whole (replicated on every rank) and computes a slice of
    its attention heads and of its FFN's hidden units:

    * Q, K, V, gate and up are column-parallel: rank r holds the rows of
      heads `[r H / N, (r + 1) H / N)` of `w_q`, of `d_ff / N` hidden units
      of `w_gate` / `w_up`, and their biases. K/V heads are split the same
      way when N divides `num_kv_heads`; otherwise they are replicated as
      the rank's query heads need them: one K/V head when all of a rank's
      query heads share it (MQA), else one per local query head.
    * O and down are row-parallel: rank r holds the matching columns of
      `w_o` / `w_down`; each rank's partial output is summed over the grid
      (`shard.all_reduce`, emitted by `transformer-decompose` where the
      block says `transformer.all_reduce_over`) before the residual add.
      Their biases are read by rank 0 only (zeros elsewhere), so the sum
      adds them once.
    * Norms and residuals are replicated.

    Every weight argument that is split gets its local type and a
    `#transformer.shard_slice` (`transformer.shard_slice`) that says which
    part of the stored tensor each rank reads; the block gets its local
    `num_heads`, `num_kv_heads`, `d_ff` and `transformer.all_reduce_over =
    @blockc_tp`; the module gets `shard.grid @blockc_tp(shape = ranks)`,
    `transformer.tensor_parallel = ranks` and, for `convert-mpi-to-llvm`,
    `dlti.map = #dlti.map<"MPI:Implementation" = "OpenMPI">`.

    ```mlir
    // before (--tensor-parallel=2): 4 heads of 16, 2 K/V heads, d_ff 128
    func.func @forward(%x: tensor<?x?x64xf32>, ..., %wq: tensor<64x64xf32>, ...)
      %y = transformer.block %x ... q(%wq : tensor<64x64xf32>) ...
          {num_heads = 4, num_kv_heads = 2, d_ff = 128, ...}
    // after
    shard.grid @blockc_tp(shape = 2)
    func.func @forward(%x: tensor<?x?x64xf32>, ...,
        %wq: tensor<32x64xf32> {transformer.shard_slice =
            #transformer.shard_slice<axis = 0,
                ranks = [array<i64: 0, 32>, array<i64: 32, 64>]>}, ...)
      %y = transformer.block %x ... q(%wq : tensor<32x64xf32>) ...
          {num_heads = 2, num_kv_heads = 1, d_ff = 64,
           transformer.all_reduce_over = @blockc_tp, ...}
    ```

    Errors (on the block, naming the value): `num_heads` or `d_ff` not a
    multiple of `ranks`, quantised weights, a weight that is not a function
    argument or that another op uses too, a module partitioned already.
  }];
  let options = [
    Option<"ranks", "ranks", "int64_t", /*default=*/"2",
           "Number of ranks of the grid (>= 2)">
  ];
  let dependentDialects = ["::mlir::shard::ShardDialect",
                           "::mlir::DLTIDialect"];
}

def TransformerStripMetadataPass
    : Pass<"transformer-strip-metadata", "::mlir::ModuleOp"> {
  let summary = "Remove transformer.* binding and blockc_codegen.* attributes before translation";
  let description = [{
    `transformer.weight_name`, `transformer.weight_transpose`,
    `transformer.weight_slice` (function arguments) and `transformer.layer`
    (ops and arguments) bind weights to tensor names for the drivers;
    `transformer.kv_position`, `transformer.kv_cache` and
    `transformer.kv_layout` mark a decode entry's arguments. They carry no
    semantics for code generation and LLVM translation warns about unknown
    argument attributes, so the CPU pipeline drops them before lowering to
    the LLVM dialect. The `blockc_codegen.*` attributes of ops (the target
    and tile configuration that stage 1's kernel passes read) go too, so
    that the LLVM dialect blockc prints parses with upstream tools
    (`mlir-translate`) that do not know blockc's dialects.
  }];
}

#endif // BLOCKC_DIALECT_TRANSFORMER_TRANSFORMS_PASSES_TD
