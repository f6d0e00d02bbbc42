//===- CodegenAttrs.td - blockc_codegen attributes ---------*- tablegen -*-===//
//
// The enums and attributes of the `blockc_codegen` dialect: the CPU target,
// the tiles of the CPU projection kernel, horizontal groups and kernel kinds.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKC_DIALECT_CODEGEN_IR_CODEGENATTRS_TD
#define BLOCKC_DIALECT_CODEGEN_IR_CODEGENATTRS_TD

include "blockc/Dialect/Codegen/IR/CodegenBase.td"
include "mlir/IR/EnumAttr.td"

class Codegen_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<Codegen_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

//===----------------------------------------------------------------------===//
// Kernel configurations
//===----------------------------------------------------------------------===//

def Codegen_KernelConfigAttrInterface
    : AttrInterface<"KernelConfigAttrInterface"> {
  let cppNamespace = "::blockc::codegen";
  let description = [{
    A kernel's configuration: the choices a heuristic (a select-tiles
    pass) wrote on an op for the pass that builds its kernel (the
    mechanism), which reads them and decides nothing itself. Every such
    attribute implements this interface, so that tools find them all
    without knowing each (`blockc --print-kernel-configs`), and an op that
    already carries its configuration keeps it: the heuristics skip it, so
    a configuration written by hand pins the kernel's choices.
  }];
  let methods = [
    InterfaceMethod<"The pass that builds the kernel from this "
                    "configuration.",
                    "::llvm::StringRef", "getKernelPass">,
  ];
}

/// An attribute that configures one kernel (KernelConfigAttrInterface).
class Codegen_ConfigAttr<string name, string attrMnemonic>
    : Codegen_Attr<name, attrMnemonic,
                   [DeclareAttrInterfaceMethods<
                       Codegen_KernelConfigAttrInterface>]>;

//===----------------------------------------------------------------------===//
// Enums
//===----------------------------------------------------------------------===//

def Codegen_ISA : I32EnumAttr<"ISA", "x86 vector instruction set", [
    I32EnumAttrCase<"avx512", 0>,
    I32EnumAttrCase<"avx2", 1>,
    I32EnumAttrCase<"sse", 2>
  ]> {
  let cppNamespace = "::blockc::codegen";
  let genSpecializedAttr = 0;
}
def Codegen_ISAAttr : EnumAttr<Codegen_Dialect, Codegen_ISA, "isa"> {
  let summary = "An x86 vector instruction set";
  let description = [{
    `avx512` (32 zmm registers of 16 f32 lanes), `avx2` (16 ymm registers
    of 8 lanes, with FMA) or `sse` (16 xmm registers of 4 lanes).

    ```mlir
    #blockc_codegen.isa<avx2>
    ```
  }];
  let assemblyFormat = "`<` $value `>`";
}

def Codegen_CPUVendor : I32EnumAttr<"CPUVendor",
    "the maker of the CPU the kernels are tuned for", [
    I32EnumAttrCase<"generic", 0>,
    I32EnumAttrCase<"intel", 1>,
    I32EnumAttrCase<"amd", 2>
  ]> {
  let cppNamespace = "::blockc::codegen";
  let genSpecializedAttr = 0;
}
/// cpu_target's `vendor`: `generic` unless given (not printed then).
def Codegen_CPUVendorParameter : EnumParameter<Codegen_CPUVendor> {
  let defaultValue = "::blockc::codegen::CPUVendor::generic";
}

def Codegen_KernelKind : I32EnumAttr<"KernelKind",
    "what a generated kernel computes", [
    // CPU: the projection kernel of blockc-cpu-lower-linear.
    I32EnumAttrCase<"linear", 0>,
    // CPU: the attention kernel of blockc-cpu-lower-sdpa.
    I32EnumAttrCase<"attention", 1>,
    // NVPTX: the shared-memory tiled matmul of blockc-gpu-tile-matmul.
    I32EnumAttrCase<"tiled_matmul", 2>,
    // NVPTX: the fused attention launch of blockc-gpu-lower-sdpa.
    I32EnumAttrCase<"fused_attention", 3>,
    // CPU: the row-parallel norm kernel of blockc-cpu-lower-norms.
    I32EnumAttrCase<"norm", 4>,
    // CPU: the projection kernel on quantised weights of
    // blockc-cpu-lower-quantized-linear.
    I32EnumAttrCase<"quantized_linear", 5>,
    // NVPTX: the tensor-core matmul of blockc-gpu-tile-matmul.
    I32EnumAttrCase<"tensor_core_matmul", 6>,
    // NVPTX: the tensor-core attention of blockc-gpu-lower-sdpa.
    I32EnumAttrCase<"mma_attention", 7>,
    // NVPTX: the warpgroup-MMA (sm_90a) matmul of blockc-gpu-tile-matmul.
    I32EnumAttrCase<"warpgroup_matmul", 8>,
    // NVPTX: the warp-per-row reduction of blockc-gpu-tile-reductions.
    I32EnumAttrCase<"row_reduction", 9>,
    // NVPTX: the weight-streaming small-M contraction of
    // blockc-gpu-tile-gemv.
    I32EnumAttrCase<"gemv", 10>,
    // NVPTX: the warpgroup-MMA (sm_90a) attention of blockc-gpu-lower-sdpa.
    I32EnumAttrCase<"warpgroup_attention", 11>,
    // NVPTX: the paged attention of blockc-gpu-lower-paged (K/V read in
    // place through a block table).
    I32EnumAttrCase<"paged_attention", 12>,
    // NVPTX: a ragged batch's token positions or K/V page writes
    // (blockc-gpu-lower-paged).
    I32EnumAttrCase<"paged_cache", 13>
  ]> {
  let cppNamespace = "::blockc::codegen";
  let genSpecializedAttr = 0;
}
def Codegen_KernelKindAttr
    : EnumAttr<Codegen_Dialect, Codegen_KernelKind, "kernel"> {
  let summary = "What a generated kernel computes";
  let description = [{
    Marks the loop (CPU) or launch (NVPTX) of a generated kernel, under the
    name `blockc_codegen.kernel`, so that later passes can find it:

    * `linear`: the `scf.forall` of a projection kernel built by
      `blockc-cpu-lower-linear`, whose shared outputs start as the kernel's
      init (zero, the bias); the norm, residual and activation fusions
      rewrite it;
    * `attention`: the fused attention kernel of `blockc-cpu-lower-sdpa`;
    * `norm`: the row-parallel LayerNorm / RMSNorm kernel of
      `blockc-cpu-lower-norms`;
    * `quantized_linear`: the projection kernel on quantised weights of
      `blockc-cpu-lower-quantized-linear` (no fusion rewrites it);
    * `tiled_matmul`, `tensor_core_matmul`, `warpgroup_matmul`,
      `fused_attention`, `mma_attention`, `warpgroup_attention`: the
      `gpu.launch` of `blockc-gpu-tile-matmul` (f32 FMA, `mma.sync` and
      warpgroup-MMA kernels) and `blockc-gpu-lower-sdpa` (f32, `mma.sync`
      and warpgroup-MMA kernels);
    * `row_reduction`: the warp-per-row reduction of
      `blockc-gpu-tile-reductions`.

    ```mlir
    scf.forall ... {blockc_codegen.kernel = #blockc_codegen.kernel<linear>}
    ```
  }];
  let assemblyFormat = "`<` $value `>`";
}

//===----------------------------------------------------------------------===//
// CPU attributes
//===----------------------------------------------------------------------===//

def Codegen_CPUTargetAttr : Codegen_Attr<"CPUTarget", "cpu_target"> {
  let summary = "The CPU that a function's kernels are generated for";
  let description = [{
    Attached to a `func.func` as `blockc_codegen.cpu_target` by
    `blockc-cpu-select-tiles`. Every CPU kernel pass reads its vector width
    (f32 lanes per vector) from here; the register count and the cache
    sizes are what the tile heuristic assumed.

    ```mlir
    func.func @f(...) attributes {blockc_codegen.cpu_target =
        #blockc_codegen.cpu_target<isa = avx512, vector_width = 16,
                                   registers = 32, l1_bytes = 32768,
                                   l2_bytes = 2097152>}
    ```

    `vector_width` is a power of two, `registers` at least 8 and the cache
    sizes positive.

    `vendor` (default `generic`, not printed): whose cores the kernels are
    tuned for, `intel` or `amd`, where a choice was measured to differ
    between them (the software prefetch distance of the projections'
    weight stream, `linear_tiles`' `prefetch_bytes`). The pipelines write
    the compiling machine's with `isa=host` and `generic` with a pinned
    ISA (unless `vendor=` is given), so that code for a pinned ISA does not
    depend on the machine that compiled it.

    The ISA extensions the kernels may use beyond `isa` (each false, and
    not printed, by default):

    * `avx512_bf16`: `vdpbf16ps`, the dot product of bf16 pairs into f32
      lanes (needs `isa = avx512`);
    * `avx512_vnni`: `vpdpbusd` on zmm registers, the dot product of four
      unsigned x signed int8 values into i32 lanes (needs `isa = avx512`);
    * `avx_vnni`: the VEX-encoded `vpdpbusd` on ymm and xmm registers (needs
      `isa = avx512` or `avx2`);
    * `amx_bf16`: AMX tiles and `tdpbf16ps`, a 16 x 16 x 32 bf16 product
      per instruction (needs `isa = avx512`).

    ```mlir
    #blockc_codegen.cpu_target<isa = avx512, vector_width = 16,
        registers = 32, l1_bytes = 49152, l2_bytes = 2097152,
        avx512_bf16 = true, avx512_vnni = true>
    ```
  }];
  let parameters = (ins EnumParameter<Codegen_ISA>:$isa,
                        "int64_t":$vector_width,
                        "int64_t":$registers,
                        "int64_t":$l1_bytes,
                        "int64_t":$l2_bytes,
                        DefaultValuedParameter<"bool", "false">:$avx512_bf16,
                        DefaultValuedParameter<"bool", "false">:$avx512_vnni,
                        DefaultValuedParameter<"bool", "false">:$avx_vnni,
                        DefaultValuedParameter<"bool", "false">:$amx_bf16,
                        Codegen_CPUVendorParameter:$vendor);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def Codegen_LinearTilesAttr : Codegen_ConfigAttr<"LinearTiles", "linear_tiles"> {
  let summary = "The tiles of one CPU projection kernel";
  let description = [{
    Attached to a `transformer.linear` as `blockc_codegen.linear_tiles` by
    `blockc-cpu-select-tiles` (or by hand); `blockc-cpu-lower-linear` builds
    the projection's kernel with these sizes, in vectors of the function's
    `cpu_target` width V:

    * dot-product kernel (short T): `rows` x `cols` register tile (input
      rows x weight rows), cache blocks of `block_n` weight rows and
      `block_k` reduction elements;
    * packed outer-product kernel (T >= `pack_min_rows`): `pack_rows` x
      `pack_cols` vectors of accumulators, weight panels of `panel_k` x
      `panel_n` elements (rounded up to whole V x V blocks and micro-kernel
      widths, capped at the weight, by the lowering);
    * with prepared weights (`weight_layout<packed_panels>`), the blocking
      of a GEMM: `panel_group` panels per parallel block (the input rows
      of a cache block are reused across them from L2), and cache blocks
      of at most `row_block` input rows (rounded down to whole
      `pack_rows`; 0: all rows in one block). Both may be omitted (1 and
      0).
    * `block_align` (default 1): every parallel block of the prepared
      kernel covers a multiple of `block_align` output columns, at every T
      (the panel count per block is rounded up to it), so that an epilogue
      that mixes the columns of one attention head (RoPE) sees whole heads.
      `blockc-cpu-select-tiles` sets it to the head dim of a projection
      whose output feeds a `transformer.rope`; the lowering keeps it only
      when `panel_n` (as rounded) divides it, and records on the kernel the
      tiles it used (with `block_align` 1 when it could not align).

    ```mlir
    transformer.linear %x, %w {blockc_codegen.linear_tiles =
        #blockc_codegen.linear_tiles<rows = 4, cols = 4, block_n = 32,
            block_k = 2048, pack_rows = 8, pack_cols = 2, panel_k = 256,
            panel_n = 32, pack_min_rows = 32>} : ...
    ```

    * `bf16_dot` (default false): the kernels multiply bf16 pairs with
      `vdpbf16ps` (the function's `cpu_target` must have `avx512_bf16`).
      The projection's input must be the `arith.extf` of a bf16 tensor and
      its weight bf16: the kernel reads that bf16 tensor itself (exact:
      the f32 input holds bf16 values) and the weight's consecutive k
      pairs. The dot-product kernel streams the weight rows as stored; the
      packed kernel packs panels of k pairs (one 32-bit word per pair and
      column), so `panel_k` is rounded up to 2V. On a projection with int4
      weights (`weight_quant`, weight-only), `blockc-cpu-lower-quantized-
      linear` reads it instead: its decode tiles look the int4 values up
      as exact bf16 pairs for `vdpbf16ps` (other quantised projections
      ignore it).
    * `amx` (default false, needs `bf16_dot`, a `cpu_target` with
      `amx_bf16` and K a multiple of 32): the packed kernel multiplies
      blocks of 32 (then 16) input rows by each 32-column panel on AMX
      tiles (`tdpbf16ps`, 32 k per step); fewer rows take the
      `vdpbf16ps` micro-kernel.

    * `prefetch_bytes` (default 1024; 0: none): how far ahead of its
      reads a few-row kernel prefetches the weight stream (into L1, one
      prefetch per 64-byte line): the dot-product kernel's single-row
      tiles each weight row, the packed micro-kernels of at most 4 rows on
      prepared panels their panel row (whole rows ahead, at least one).
      `blockc-cpu-select-tiles` writes it from the target's `vendor`.

    Every size is at least 1, except `row_block` (at least 0);
    `prefetch_bytes` is 0 or a positive multiple of 64 (a cache line), at
    most 65536.
  }];
  let parameters = (ins "int64_t":$rows,
                        "int64_t":$cols,
                        "int64_t":$block_n,
                        "int64_t":$block_k,
                        "int64_t":$pack_rows,
                        "int64_t":$pack_cols,
                        "int64_t":$panel_k,
                        "int64_t":$panel_n,
                        "int64_t":$pack_min_rows,
                        DefaultValuedParameter<"int64_t", "1">:$panel_group,
                        DefaultValuedParameter<"int64_t", "0">:$row_block,
                        DefaultValuedParameter<"int64_t", "1">:$block_align,
                        DefaultValuedParameter<"bool", "false">:$bf16_dot,
                        DefaultValuedParameter<"bool", "false">:$amx,
                        DefaultValuedParameter<"int64_t", "1024">:$prefetch_bytes);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def Codegen_AttentionTilesAttr
    : Codegen_ConfigAttr<"AttentionTiles", "attention_tiles"> {
  let summary = "The schedule of one CPU attention kernel";
  let description = [{
    Attached to a `transformer.sdpa` as `blockc_codegen.attention_tiles` by
    `blockc-cpu-select-tiles` (or by hand); `blockc-cpu-lower-sdpa` builds
    the attention kernel with it:

    * `width`: f32 lanes per vector (4, 8 or 16; it must divide the head
      dim rounded up to a multiple of 4);
    * `multi_row`: full blocks of `row_vectors` x `width` query rows use
      the rows-in-lanes kernel (false: every row the single-row kernel);
    * `row_vectors`, `key_group`, `value_group`: the multi-row kernel's
      register tiles: `row_vectors` x `key_group` score accumulators per
      step of the q.k micro-kernel, `value_group` head dims x `row_vectors`
      accumulators per P.V step;
    * `key_tile`: keys per online-softmax tile of the multi-row kernel (a
      multiple of `key_group`);
    * `qk_unroll`: head dims per step of the multi-row q.k loop;
    * `prefetch_distance` (0: none) and `prefetch_locality` (0 to 3, LLVM's
      hint: 3 L1, 2 L2, 1 L3 on x86): the single-row kernel prefetches the
      key and value rows of the tile that many tiles ahead.

    ```mlir
    %o = transformer.sdpa %q, %k, %v {blockc_codegen.attention_tiles =
        #blockc_codegen.attention_tiles<width = 16, multi_row = true,
            row_vectors = 4, key_group = 4, value_group = 4, key_tile = 32,
            qk_unroll = 1, prefetch_distance = 1, prefetch_locality = 2>}
        : ...
    ```
  }];
  let parameters = (ins "int64_t":$width,
                        "bool":$multi_row,
                        "int64_t":$row_vectors,
                        "int64_t":$key_group,
                        "int64_t":$value_group,
                        "int64_t":$key_tile,
                        "int64_t":$qk_unroll,
                        "int64_t":$prefetch_distance,
                        "int64_t":$prefetch_locality);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def Codegen_ElementwiseTilesAttr
    : Codegen_ConfigAttr<"ElementwiseTiles", "elementwise_tiles"> {
  let summary = "The schedule of one CPU elementwise loop nest";
  let description = [{
    Attached to an all-parallel `linalg.generic` or a `linalg.fill` on
    tensors that no kernel absorbed (the conversions, roundings and
    activations of a 16-bit block between its kernels) as
    `blockc_codegen.elementwise_tiles` by `blockc-cpu-select-tiles` (or by
    hand); `blockc-cpu-tile-elementwise` builds its loops with it:

    * `rows`: the work item of the parallel loop (`scf.forall`) takes this
      many indices of the second-innermost loop (and one of each outer
      loop); a one-loop op has no parallel loop;
    * `width`: the innermost loop runs in vectors of `width` elements (a
      power of two up to 64; the loop's size must be a multiple of it), or
      element by element with 0.

    ```mlir
    %y = linalg.generic {...} ins(%x : tensor<?x?x4096xf32>)
        outs(%e : tensor<?x?x4096xbf16>)
        attrs = {blockc_codegen.elementwise_tiles =
          #blockc_codegen.elementwise_tiles<rows = 4, width = 16>} {...}
    ```
  }];
  let parameters = (ins "int64_t":$rows, "int64_t":$width);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def Codegen_QuantizedTilesAttr
    : Codegen_ConfigAttr<"QuantizedTiles", "quantized_tiles"> {
  let summary = "The schedule of one CPU quantised projection kernel";
  let description = [{
    Attached to a `transformer.linear` with a `weight_quant` as
    `blockc_codegen.quantized_tiles` by `blockc-cpu-select-tiles` (or by
    hand); `blockc-cpu-lower-quantized-linear` builds the projection's
    kernel with it:

    * `rows` x `cols`: the register tile of the dot-product tiles (input
      rows x weight rows; int4 on AVX2 halves `cols` for its group
      accumulators, int4 on AVX-512 takes at most 2 rows);
    * `block_n`: weight rows (output columns) per parallel work item, a
      multiple of 32 (two vectors of every width);
    * `panel_min_rows`: from this many input rows (B x T) on, each work
      item widens its weights once per `panel_k` reduction elements into
      an f32 panel [`panel_k`, `block_n`] (at most 1 MiB, on the stack)
      that every row reads, in outer-product tiles of `panel_rows` rows x
      two vectors; `panel_k` is a multiple of 32 (int4 chunks);
    * `prefetch_tiles` (0: none): how many tiles of weight rows ahead the
      dot-product tiles prefetch their rows (the kernels that prefetch:
      int8 activations, and AVX-512);
    * `interleave` (default 1): int4 weights are prepared with this many
      rows interleaved (`#blockc_codegen.quantized_weight`'s `interleave`),
      so that a dot-product tile of that many weight rows reads one
      sequential stream; 1, 2, 4, 8 or 16, ignored for int8 without
      `row_lanes`;
    * `row_lanes` (default false; needs `interleave` = 8 or 16): the
      weight is prepared with a tile's rows in the vector lanes
      (`#blockc_codegen.quantized_weight`'s `row_lanes`), and the kernels
      read that layout: int4 weight-only with 16 lanes (decode: 16 rows
      per vector, x broadcast per k, a constant table of q; prefill: the
      panel rows stored without a transpose) or 8 (each nibble masked in
      place and converted); int8 weight-only on 8 lanes with K a multiple
      of 32 (each byte masked in place and converted); int4 and int8 with
      `activations = int8` on 8 lanes without VNNI (`vpmaddubsw` on 8 rows
      per vector against a broadcast word of `q_x`; int8 only with
      `act_panel_min_rows` = 0). Ignored (the layout of `interleave` alone)
      where those kernels do not apply: other lane counts, VNNI targets
      with int8 activations, bf16 pairs on vdpbf16ps, int8 weight-only
      with 16 lanes or a K that is no multiple of 32;
    * `act_panel_min_rows` (default 0: never): with `activations = int8`,
      from this many input rows (B x T) on the kernel takes the f32 panels
      above on the quantised input's values `q_x s_x` instead of the
      integer dot-product tiles; the row count is tested once, outside the
      parallel loop, which holds one kernel or the other. Ignored without
      `activations = int8`.

    ```mlir
    %y = transformer.linear %x, %w {blockc_codegen.quantized_tiles =
        #blockc_codegen.quantized_tiles<rows = 4, cols = 4, block_n = 32,
            panel_k = 1024, panel_rows = 8, panel_min_rows = 16,
            prefetch_tiles = 4>,
        weight_quant = #transformer.weight_quant<int8>} : ...
    ```
  }];
  let parameters = (ins "int64_t":$rows,
                        "int64_t":$cols,
                        "int64_t":$block_n,
                        "int64_t":$panel_k,
                        "int64_t":$panel_rows,
                        "int64_t":$panel_min_rows,
                        "int64_t":$prefetch_tiles,
                        DefaultValuedParameter<"int64_t", "1">:$interleave,
                        DefaultValuedParameter<"int64_t", "0">:$act_panel_min_rows,
                        DefaultValuedParameter<"bool", "false">:$row_lanes);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def Codegen_HorizontalGroupAttr
    : Codegen_ConfigAttr<"HorizontalGroup", "horizontal_group"> {
  let summary = "Projections lowered together as one kernel";
  let description = [{
    Attached to `transformer.linear` ops as
    `blockc_codegen.horizontal_group` by `blockc-cpu-group-projections` (or
    by hand): `blockc-cpu-lower-linear` lowers the projections of one block
    with the same group (and the same input, weight type, bias presence,
    result type and tiles) as one `scf.forall`. The id is non-negative.

    ```mlir
    %q = transformer.linear %n, %wq {blockc_codegen.horizontal_group =
        #blockc_codegen.horizontal_group<0>} : ...
    ```
  }];
  let parameters = (ins "int64_t":$id);
  let assemblyFormat = "`<` $id `>`";
  let genVerifyDecl = 1;
}

def Codegen_WeightLayout : I32EnumAttr<"WeightLayout",
    "how a projection's kernel reads its weight", [
    // The checkpoint's [N, K] rows, as stored (packing, if any, per call).
    I32EnumAttrCase<"stored", 0>,
    // Packed panels made once by the entry's prepare function.
    I32EnumAttrCase<"packed_panels", 1>
  ]> {
  let cppNamespace = "::blockc::codegen";
  let genSpecializedAttr = 0;
}
def Codegen_WeightLayoutAttr
    : EnumAttr<Codegen_Dialect, Codegen_WeightLayout, "weight_layout"> {
  let summary = "How a projection's kernel reads its weight";
  let description = [{
    Attached to a `transformer.linear` as `blockc_codegen.weight_layout` by
    `blockc-cpu-select-tiles` (heuristic; or by hand). `packed_panels`: the
    kernel reads the weight as packed panels (a `linalg.pack` of the weight
    that `blockc-cpu-lower-linear` emits once per call and
    `blockc-cpu-prepare-weights` moves into the entry's prepare function);
    `stored` (or no attribute): the kernel reads the `[N, K]` rows and packs
    per call.

    ```mlir
    transformer.linear %x, %w {blockc_codegen.weight_layout =
        #blockc_codegen.weight_layout<packed_panels>} : ...
    ```
  }];
  let assemblyFormat = "`<` $value `>`";
}

def Codegen_PackedWeightAttr
    : Codegen_Attr<"PackedWeight", "packed_weight"> {
  let summary = "The packed-panel layout of a prepared projection weight";
  let description = [{
    The layout of a weight `W[rows, cols]` (`[N, K]`, Hugging Face's
    `[out, in]`) packed for the CPU projection kernel: a tensor
    `P[ceil(rows / panel_n), ceil(cols / panel_k), panel_k, panel_n]` with
    `P[i, j, k, n] = W[i * panel_n + n, j * panel_k + k]`, zero past the
    weight (exactly `linalg.pack %W padding_value(0.0) inner_dims_pos =
    [1, 0] inner_tiles = [panel_k, panel_n]`). Recorded as
    `blockc_codegen.prepared` on that `linalg.pack`, on the entry argument
    that receives the prepared weight and on the prepare function's result
    that produces it.

    With `pairs = true` (bf16 weights for `vdpbf16ps` and AMX, `linear_tiles
    bf16_dot`) each panel holds k pairs: a tensor `P[ceil(rows / panel_n),
    ceil(cols / panel_k), 1, panel_k / 2, panel_n, 2]` with `P[i, j, 0, p,
    n, e] = W[i * panel_n + n, j * panel_k + 2 p + e]`, zero past the
    weight: `linalg.pack` of `W` expanded to `[rows, cols / 2, 2]` with
    `inner_dims_pos = [1, 0, 2] inner_tiles = [panel_k / 2, panel_n, 2]`.
    A panel is then the `[panel_k / 2, 2 panel_n]` operand the kernel
    reads (AMX's layout of a tile product's second operand); `panel_k` and
    `cols` are even.

    ```mlir
    #blockc_codegen.packed_weight<rows = 688, cols = 256, panel_k = 256,
                                  panel_n = 32>
    #blockc_codegen.packed_weight<rows = 40, cols = 1024, panel_k = 256,
                                  panel_n = 32, pairs = true>
    ```

    Every size is at least 1.
  }];
  let parameters = (ins "int64_t":$rows,
                        "int64_t":$cols,
                        "int64_t":$panel_k,
                        "int64_t":$panel_n,
                        DefaultValuedParameter<"bool", "false">:$pairs);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// The prepared tensor's shape.
    ::llvm::SmallVector<int64_t, 6> getPackedShape() const {
      int64_t nb = (getRows() + getPanelN() - 1) / getPanelN(),
              kb = (getCols() + getPanelK() - 1) / getPanelK();
      if (getPairs())
        return {nb, kb, 1, getPanelK() / 2, getPanelN(), 2};
      return {nb, kb, getPanelK(), getPanelN()};
    }
  }];
}

def Codegen_QuantizedWeightAttr
    : Codegen_Attr<"QuantizedWeight", "quantized_weight"> {
  let summary = "The prepared layout of a quantised projection weight";
  let description = [{
    The layout `blockc-cpu-lower-quantized-linear` reads a weight `W[rows,
    cols]` (`[N, K]`) with a `#transformer.weight_quant` in: a tensor of
    i32 words `P[rows, words]`, one row per output row, little-endian bytes:

    * `bits = 8` (`group_size` = cols): the bytes `q[n, k]` (two's
      complement, -127..127) at byte k of the row, zero up to the next
      multiple of 16 bytes, then one word holding the f32 scale `s[n]`
      (its bits);
    * `bits = 4` (`group_size` G dividing cols): per chunk of 32
      consecutive k, 16 bytes; byte i holds `q[32 c + i] + 8` in its low
      nibble and `q[32 c + 16 + i] + 8` in its high one (q in -7..7); then
      cols / G words of f32 scales, one per group.

    With `interleave` = I > 1 (int4, or int8 with `row_lanes`; a power of
    two up to 16) the rows are stored I at a time: `P[ceil(rows / I), I *
    words]`, where row r of tile `r / I` holds, per group g in order, the
    chunks of the group one after the other, each as the 16 bytes of the
    I rows in turn (row
    `r % I` at word `4 (r % I)` of the chunk's `4 I`), then the I rows'
    scales of g. A dot-product tile of I rows thus reads one sequential
    stream: per chunk `16 I` contiguous bytes, per group `4 I` bytes of
    scales. The rows past `rows` in the last tile are zero.

    With `row_lanes = true` (int4 with `interleave` I = 8 or 16, int8
    with I = 8) a tile's I rows sit in the I lanes of a vector: per group
    g, for each run c of 8 consecutive k (G / 8 runs), I words, word `r %
    I` holding `q[r, g G + 8 c + j] + 8` in its nibble j (bits 4j .. 4j +
    3), then the I rows' scales of g. A 4 I-byte load thus holds 8 k of I
    rows; with 16 lanes the kernel looks each nibble up in a constant
    table of q (one shift, one vpermps and one FMA with x[k] broadcast per
    16 weights), with 8 it masks each nibble in place and converts it,
    scaling the group's I sums at once. int8 (one group, the row): for
    each run c of 4 consecutive k, I words, word `r % I` holding `q[r, 4 c
    + j]` in its byte j (zero past cols, up to the row's value words),
    then the I rows' scales: a 4 I-byte load holds 4 k of I rows. Same
    shape and size as `interleave` I.

    The values are those of `#transformer.weight_quant` (`W' = q * s`).
    Recorded as `blockc_codegen.prepared` on the `linalg.generic` that
    makes it (moved into the entry's prepare function by
    `blockc-cpu-prepare-weights`), on the entry argument that receives it
    and on the prepare function's result.

    ```mlir
    #blockc_codegen.quantized_weight<rows = 512, cols = 1408, bits = 4,
                                     group_size = 32>
    ```
  }];
  let parameters = (ins "int64_t":$rows, "int64_t":$cols, "int64_t":$bits,
                        "int64_t":$group_size,
                        DefaultValuedParameter<"int64_t", "1">:$interleave,
                        DefaultValuedParameter<"bool", "false">:$row_lanes);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Words of quantised values per row (before the scales).
    int64_t getValueWords() const {
      return getBits() == 8 ? (getCols() + 15) / 16 * 4 : getCols() / 8;
    }
    /// Scales per row.
    int64_t getNumScales() const { return getCols() / getGroupSize(); }
    /// Words per row: values and scales.
    int64_t getRowWords() const { return getValueWords() + getNumScales(); }
    /// The prepared tensor's shape: [rows, value words + scales], or with
    /// an interleave I, [ceil(rows / I), I x (value words + scales)].
    ::llvm::SmallVector<int64_t, 2> getPreparedShape() const {
      int64_t i = getInterleave();
      return {(getRows() + i - 1) / i, i * getRowWords()};
    }
  }];
}

//===----------------------------------------------------------------------===//
// NVPTX attributes
//===----------------------------------------------------------------------===//

// The limits every CUDA chip blockc targets shares: 1024 threads per block
// and 48 KiB of static shared memory per block (the kernels use static
// workgroup attributions; more would need the dynamic opt-in).

def Codegen_GPUMatmulTilesAttr
    : Codegen_ConfigAttr<"GPUMatmulTiles", "gpu_matmul_tiles"> {
  let summary = "The tiles of one shared-memory tiled GPU contraction";
  let description = [{
    Attached to a linalg contraction on buffers as
    `blockc_codegen.gpu_matmul_tiles` by `blockc-gpu-select-tiles` (or by
    hand); `blockc-gpu-tile-matmul` builds the contraction's `gpu.launch`
    with these sizes:

    * a thread block computes a `tile_m` x `tile_n` tile of the output with
      `threads_x` (along N) x `threads_y` (along M) threads, each holding a
      `(tile_m / threads_y) x (tile_n / threads_x)` register tile;
    * each step of the reduction stages `tile_k` x `tile_m` and `tile_k` x
      `tile_n` operand tiles (padded by one column) in shared memory, every
      thread copying the same number of elements.

    ```mlir
    linalg.matmul {blockc_codegen.gpu_matmul_tiles =
        #blockc_codegen.gpu_matmul_tiles<tile_m = 64, tile_n = 64, tile_k = 16,
                                         threads_x = 16, threads_y = 16>}
        ins(...) outs(...)
    ```

    Every size is at least 1; `threads_y` divides `tile_m` and `threads_x`
    divides `tile_n`; a block has at most 1024 threads, which divide
    `tile_m * tile_k` and `tile_n * tile_k`; the two shared tiles,
    `(tile_m + 1 + tile_n + 1) * tile_k` f32, fit in 48 KiB.
  }];
  let parameters = (ins "int64_t":$tile_m,
                        "int64_t":$tile_n,
                        "int64_t":$tile_k,
                        "int64_t":$threads_x,
                        "int64_t":$threads_y);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Threads per block.
    int64_t getThreads() const { return getThreadsX() * getThreadsY(); }
    /// Bytes of static shared memory of the two padded f32 tiles.
    int64_t getSharedBytes() const {
      return (getTileM() + 1 + getTileN() + 1) * getTileK() * 4;
    }
  }];
}

def Codegen_GPUMmaTilesAttr : Codegen_ConfigAttr<"GPUMmaTiles", "gpu_mma_tiles"> {
  let summary = "The tiles of one tensor-core GPU contraction";
  let description = [{
    Attached to a linalg contraction of two 16-bit (bf16 or f16) operands
    into f32 as `blockc_codegen.gpu_mma_tiles` by `blockc-gpu-select-tiles`
    on chips with `mma.sync` (sm_80 and newer), or by hand;
    `blockc-gpu-tile-matmul` builds the contraction's tensor-core
    `gpu.launch` with these sizes:

    * a thread block of `warps_m * warps_n` warps computes a `tile_m` x
      `tile_n` tile of the output; warp (i, j) owns the
      `(tile_m / warps_m) x (tile_n / warps_n)` sub-tile at row block i and
      column block j, as m16n8k16 `mma.sync` accumulators in registers;
    * the reduction advances `tile_k` at a time through a ring of `stages`
      shared-memory buffers filled by `cp.async` (16-byte copies, `stages -
      1` tiles in flight while one is consumed); each buffer holds the
      `tile_m x tile_k` and `tile_n x tile_k` operand tiles, rows padded by
      8 elements so that `ldmatrix` reads them without bank conflicts. The
      ring is dynamic shared memory (the driver opts the kernel in beyond
      48 KiB).

    ```mlir
    linalg.generic {blockc_codegen.gpu_mma_tiles =
        #blockc_codegen.gpu_mma_tiles<tile_m = 128, tile_n = 128, tile_k = 32,
                                      warps_m = 2, warps_n = 2, stages = 4>}
        ins(%a, %w : memref<?x4096xbf16>, memref<4096x4096xbf16>) ...
    ```

    Every size is at least 1 and `stages` at least 2; `16 * warps_m`
    divides `tile_m`, `16 *
    warps_n` divides `tile_n` (B fragments are loaded two n8 tiles at a
    time) and 16 divides `tile_k`; a block has at most 1024 threads, which
    divide the number of 16-byte chunks of each operand tile
    (`tile_m * tile_k / 8` and `tile_n * tile_k / 8`); the ring,
    `stages * (tile_m + tile_n) * (tile_k + 8) * 2` bytes, fits in 227 KiB
    (the largest opt-in of any chip; the target chip's own limit, e.g.
    163 KiB on sm_80, is checked at launch).

    On a contraction of two f32 buffers the attribute asks for TF32 tensor
    cores (`blockc-gpu-select-tiles` writes it there only with
    `allow-tf32`): m16n8k8 `mma.sync` with tf32 multiplicands, each operand
    rounded to tf32 in registers. The sizes mean the same in f32 elements:
    16-byte copies of 4 elements, rows padded by 4, a ring of
    `stages * (tile_m + tile_n) * (tile_k + 4) * 4` bytes, which
    `blockc-gpu-tile-matmul` checks against the same 227 KiB (the threads
    divide the f32 chunks whenever they divide the 16-bit ones).

    With `rope_head_dim = D` (an even `D` dividing `tile_n`, which
    `blockc-gpu-select-tiles` writes) the epilogue also applies the rotary
    position embedding that reads the fused 16-bit result: the only reader
    of the epilogue's output is a rotate-half RoPE `linalg.generic` over
    that output viewed as `[..., H, D]` (reading it at `d` and at
    `(d + D / 2) mod D`). A thread's accumulators hold columns `2t, 2t + 1`
    of each n8 tile but not their partners `D / 2` away, so once the ring
    is drained the block writes its rounded results into a 16-bit staging
    tile of `tile_m x (tile_n + 8)` elements over the ring (rows padded by
    16 bytes so that the fragments' rows hit distinct banks); after a
    barrier each thread takes pairs of columns `d`, `d + D / 2` of one head
    in one row, evaluates the RoPE body for both and stores both to the
    RoPE's output. Each block covers whole heads, so every partner is in
    its tile. The block's shared memory is the larger of the ring and the
    staging tile, which must fit in the same 227 KiB.
  }];
  let parameters = (ins "int64_t":$tile_m,
                        "int64_t":$tile_n,
                        "int64_t":$tile_k,
                        "int64_t":$warps_m,
                        "int64_t":$warps_n,
                        "int64_t":$stages,
                        DefaultValuedParameter<"int64_t", "0">:$rope_head_dim);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
  let builders = [
    AttrBuilder<(ins "int64_t":$tile_m, "int64_t":$tile_n, "int64_t":$tile_k,
                     "int64_t":$warps_m, "int64_t":$warps_n,
                     "int64_t":$stages), [{
      return $_get($_ctxt, tile_m, tile_n, tile_k, warps_m, warps_n, stages,
                   0);
    }]>
  ];
  let extraClassDeclaration = [{
    /// Threads per block.
    int64_t getThreads() const { return 32 * getWarpsM() * getWarpsN(); }
    /// Elements per shared row of an operand tile of `elementBytes`-byte
    /// elements (tile_k plus 16 bytes of padding).
    int64_t getSharedRow(int64_t elementBytes = 2) const {
      return getTileK() + 16 / elementBytes;
    }
    /// Bytes of the ring of tiles of `elementBytes`-byte elements.
    int64_t getRingBytes(int64_t elementBytes = 2) const {
      return getStages() * (getTileM() + getTileN()) *
             getSharedRow(elementBytes) * elementBytes;
    }
    /// Elements per row of the RoPE epilogue's 16-bit staging tile
    /// (tile_n plus 16 bytes of padding).
    int64_t getStagingRow() const { return getTileN() + 8; }
    /// Bytes of the RoPE epilogue's staging tile (0 without rope_head_dim).
    int64_t getStagingBytes() const {
      return getRopeHeadDim() ? getTileM() * getStagingRow() * 2 : 0;
    }
    /// Bytes of (dynamic) shared memory: the ring, and with rope_head_dim
    /// the staging tile over it.
    int64_t getSharedBytes(int64_t elementBytes = 2) const {
      return std::max(getRingBytes(elementBytes), getStagingBytes());
    }
  }];
}

def Codegen_GPUMapAttr : Codegen_ConfigAttr<"GPUMap", "gpu_map"> {
  let summary = "The thread block of a function's parallel-loop kernels";
  let description = [{
    Attached to a `func.func` as `blockc_codegen.gpu_map` by
    `blockc-gpu-select-tiles` (or by hand); `blockc-gpu-tile-and-map` tiles
    each outermost `scf.parallel` of the function into blocks of
    `threads_x` threads along its innermost dimension and `threads_y` along
    the next one (`threads_x * threads_y` threads for a one-dimensional
    loop).

    ```mlir
    func.func @f(...) attributes {blockc_codegen.gpu_map =
        #blockc_codegen.gpu_map<threads_x = 32, threads_y = 8>}
    ```

    Both are at least 1 and a block has at most 1024 threads.
  }];
  let parameters = (ins "int64_t":$threads_x, "int64_t":$threads_y);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def Codegen_GPUAttentionAttr : Codegen_ConfigAttr<"GPUAttention", "gpu_attention"> {
  let summary = "The thread block of one fused GPU attention kernel";
  let description = [{
    Attached to a `transformer.sdpa` as `blockc_codegen.gpu_attention` by
    `blockc-gpu-select-tiles` (or by hand); `blockc-gpu-lower-sdpa` builds
    its `gpu.launch` with blocks of `warps` warps (32 x `warps` threads),
    each warp owning `rows_per_warp` consecutive query rows, so that a block
    covers `rows_per_warp * warps` query rows of one (batch, head).

    A single query row (a decode step) splits its keys instead
    (flash-decoding): `min(ceil(S / keys_per_split), max_splits)` warps per
    (batch, head), at least one, each over a contiguous chunk of the keys,
    then one warp merges them (the scratch buffer holds `max_splits`
    states per (batch, head)). Defaults: 64 keys per split, at most 32
    splits.

    `split_mma_warps` picks the kernel of the splits: 0 (the default) the
    FMA kernel (one warp per split for up to 4 query heads of a GQA group,
    each lane a 16-byte run of the K and V rows); n >= 1 the tensor-core
    kernel, for 16-bit (widened) operands, head dims 64 and 128 and GQA
    groups of 2 to 8 query heads: a block of n warps, each warp one split
    for all the heads of one group, its scores and P V as mma.sync m16n8k16
    with the group's heads as the (padded) M rows. `blockc-gpu-select-tiles`
    writes 4 where it applies on sm_80 and newer; `blockc-gpu-lower-sdpa`
    rejects it elsewhere.

    ```mlir
    transformer.sdpa %q, %k, %v {blockc_codegen.gpu_attention =
        #blockc_codegen.gpu_attention<rows_per_warp = 4, warps = 4,
                                      split_mma_warps = 4>} : ...
    ```

    ```mlir
    transformer.sdpa %q, %k, %v {causal, blockc_codegen.gpu_attention =
        #blockc_codegen.gpu_attention<rows_per_warp = 4, warps = 4>} : ...
    ```

    All but `split_mma_warps` are at least 1, `split_mma_warps` at least 0,
    and a block has at most 1024 threads (32 warps).
  }];
  let parameters = (ins "int64_t":$rows_per_warp, "int64_t":$warps,
                        DefaultValuedParameter<"int64_t", "64">:$keys_per_split,
                        DefaultValuedParameter<"int64_t", "32">:$max_splits,
                        DefaultValuedParameter<"int64_t", "0">:$split_mma_warps);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def Codegen_GPUPagedAttentionAttr
    : Codegen_ConfigAttr<"GPUPagedAttention", "gpu_paged_attention"> {
  let summary = "The thread block of one paged GPU attention kernel";
  let description = [{
    Attached to a `transformer.paged_sdpa` as
    `blockc_codegen.gpu_paged_attention` by `blockc-gpu-select-tiles` (or by
    hand); `blockc-gpu-lower-paged` builds its `gpu.launch` with blocks of
    `warps` warps (32 x `warps` threads), one warp per (query token, head):
    grid `(ceil(total / warps), H)`.

    ```mlir
    transformer.paged_sdpa %q, %kp, %vp, %table, %cu, %pos
        {blockc_codegen.gpu_paged_attention =
           #blockc_codegen.gpu_paged_attention<warps = 4>} : ...
    ```

    `warps` is at least 1 and a block has at most 1024 threads (32 warps).
  }];
  let parameters = (ins "int64_t":$warps);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def Codegen_GPUWarpgroupTilesAttr
    : Codegen_ConfigAttr<"GPUWarpgroupTiles", "gpu_warpgroup_tiles"> {
  let summary = "The tiles of one warpgroup-MMA (sm_90a) GPU contraction";
  let description = [{
    Attached to a linalg contraction of two 16-bit (bf16 or f16) operands
    into f32 as `blockc_codegen.gpu_warpgroup_tiles` by
    `blockc-gpu-select-tiles` on sm_90a (Hopper with its arch-specific
    features), or by hand; `blockc-gpu-tile-matmul` then builds the Hopper
    kernel instead of the `mma.sync` one:

    * a thread block of `tile_m / 64` warpgroups (128 threads each)
      computes a `tile_m` x `tile_n` output tile; warpgroup w owns rows
      [64 w, 64 w + 64) as one `nvgpu.warpgroup.mma` accumulator
      (m64 n`tile_n`, `tile_n / 2` f32 registers per thread);
    * the reduction advances 64 elements (128 bytes of a 16-bit row, the
      width of the 128-byte swizzle) at a time through a ring of `stages`
      shared-memory buffers, each filled by two TMA loads
      (`nvgpu.tma.async.load`, a `tile_m x 64` box of A and a
      `tile_n x 64` box of B, 128-byte swizzled, zero-filled past the
      tensor's edges) that complete on the stage's mbarrier; `stages - 1`
      steps are in flight while one is consumed by four m64n`tile_n`k16
      warpgroup MMAs reading both operands through shared-memory matrix
      descriptors;
    * the epilogue stores the accumulators to shared memory (reusing the
      ring) and adds the tile to the output with coalesced accesses.

    With `producer = true` the kernel is warp-specialised: one more
    warpgroup (the first) is the producer; its first thread issues the TMA
    loads of every stage as soon as the consumers have released it (a
    second, "empty" mbarrier per stage, on which each consumer warp
    arrives once its MMAs of the stage completed), and it gives its
    registers to the consumers (`setmaxnreg`: 40 for the producer, what it
    frees shared by the consumer warpgroups, at most 240 each), which only
    wait for full stages and never synchronise the block inside the loop. With
    `persistent = true` (which needs `producer`), the grid has one block per
    streaming multiprocessor of the module's chip (or fewer when there are
    fewer tiles), and each block walks the output tiles in a grouped order
    (8 row tiles at a time, for L2 reuse of the weight's columns); the
    epilogue then has a shared-memory buffer of its own beside the ring, so
    that the producer fills the ring with the next tile while the consumers
    finish this one.

    With `tma_store = true` the epilogue ends in a TMA store: the threads
    write each output tile, its fused epilogue applied (init, bias,
    residual, rounding, the gated pair's activation), into a staging tile
    of the output's 16-bit type after the f32 tile in shared memory
    (`tile_m * tile_n * 2` bytes, rows unpadded), fence it for the async
    proxy (`fence.proxy.async.shared::cta`), and the consumers' first thread
    stores it with one `nvgpu.tma.async.store` (a `tile_m` x `tile_n` box,
    `tile_n / 2` columns for a gated pair; TMA clips the rows and columns
    outside the output), committed as a bulk group whose reads it waits for
    (`cp.async.bulk.wait_group.read 0`) before the staging tile is written
    again and before the kernel exits. The kernel keeps the per-element
    stores for an output TMA cannot store: not bf16 or f16, not row-major
    contiguous, or rows that are not a static multiple of 16 bytes.

    With `rope_head_dim = D` (an even `D` dividing `tile_n`) the epilogue
    also applies the rotary position embedding that
    reads the fused result: the only reader of the epilogue's 16-bit output
    is a rotate-half RoPE `linalg.generic` over that output viewed as
    `[..., H, D]` (reading it at `d` and at `(d + D / 2) mod D`). Once the
    staging tile is written, the consumers rotate each row's heads in place
    (each thread a pair of columns `d`, `d + D / 2` of one head: both
    values read, the RoPE body evaluated for both, both written, so no
    other thread's value is needed), and the TMA store writes the RoPE's
    output instead; the RoPE kernel and the unrotated buffer are gone.
    Without `tma_store` (the per-element epilogue) the threads take the same
    pairs of columns of the f32 output tile, compute the consumer's value of
    both and store the RoPE's two values to its output.
    Each output tile covers whole heads, so the partner of every column is
    in the tile.

    ```mlir
    linalg.generic {blockc_codegen.gpu_warpgroup_tiles =
        #blockc_codegen.gpu_warpgroup_tiles<tile_m = 128, tile_n = 128,
                                            stages = 4>}
        ins(%a, %w : memref<?x4096xbf16>, memref<4096x4096xbf16>) ...
    ```

    `tile_m` is a multiple of 64 up to 256 (1 to 4 warpgroups), `tile_n` a
    multiple of 8 up to 256 (the shapes of wgmma and of a TMA box),
    `stages` at least 2; the ring plus 1 KiB of alignment slack,
    `stages * (tile_m + tile_n) * 128 + 1024` bytes, fits in sm_90's
    227 KiB, and the f32 output tile (`tile_m * (tile_n + 4) * 4` bytes: its
    rows padded by 16 bytes) fits in the ring, or, for a persistent kernel,
    beside it within the 227 KiB. With `tma_store`, the ring, the f32 tile,
    the staging tile and the mbarriers (8 bytes per stage, twice with a
    producer) fit in the 227 KiB (`getTmaStoreSharedBytes`).
  }];
  let parameters = (ins "int64_t":$tile_m,
                        "int64_t":$tile_n,
                        "int64_t":$stages,
                        DefaultValuedParameter<"bool", "false">:$producer,
                        DefaultValuedParameter<"bool", "false">:$persistent,
                        DefaultValuedParameter<"bool", "false">:$tma_store,
                        DefaultValuedParameter<"int64_t", "0">:$rope_head_dim);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
  let builders = [
    AttrBuilder<(ins "int64_t":$tile_m, "int64_t":$tile_n,
                     "int64_t":$stages), [{
      return $_get($_ctxt, tile_m, tile_n, stages, false, false, false, 0);
    }]>
  ];
  let extraClassDeclaration = [{
    /// Elements of the reduction per stage (128 bytes of 16-bit values).
    static constexpr int64_t kTileK = 64;
    /// Row tiles of a group in the persistent kernel's tile order.
    static constexpr int64_t kGroupM = 8;
    /// Registers per thread of a warp-specialised kernel's producer.
    static constexpr int64_t kProducerRegisters = 40;
    /// Warpgroups that multiply (one per 64 rows).
    int64_t getConsumers() const { return getTileM() / 64; }
    /// Threads per block (one warpgroup per 64 rows, and the producer's).
    int64_t getThreads() const {
      return (getConsumers() + (getProducer() ? 1 : 0)) * 128;
    }
    /// Registers per thread at launch: the block's share of the 64K
    /// register file (ptxas allocates them all to a kernel that uses
    /// `setmaxnreg`), a multiple of 8, at most 248.
    int64_t getLaunchRegisters() const {
      return std::min<int64_t>(65536 / getThreads() / 8 * 8, 248);
    }
    /// Registers per thread of a warp-specialised kernel's consumers after
    /// `setmaxnreg`: their launch share plus what the producer frees
    /// (`setmaxnreg.inc` waits for registers the block does not have), a
    /// multiple of 8, at most 240: 232 for two consumer warpgroups.
    int64_t getConsumerRegisters() const {
      int64_t launch = getLaunchRegisters();
      int64_t freed = (launch - kProducerRegisters) / getConsumers();
      return std::min<int64_t>((launch + freed) / 8 * 8, 240);
    }
    /// Bytes of the ring's stages.
    int64_t getRingBytes() const { return getStages() * getStageBytes(); }
    /// Bytes of the f32 output tile in shared memory.
    int64_t getOutputBytes() const {
      return getTileM() * getOutputRowFloats(getTileN()) * 4;
    }
    /// Bytes of one stage (the A and B tiles, 128 bytes per row).
    int64_t getStageBytes() const {
      return (getTileM() + getTileN()) * kTileK * 2;
    }
    /// Bytes of dynamic shared memory: the ring (and a persistent
    /// kernel's output tile after it) and 1 KiB to align the ring.
    int64_t getSharedBytes() const {
      if (getTmaStore())
        return getTmaStoreDynamicBytes(getTileM(), getTileN(), getStages(),
                                       getPersistent());
      return getRingBytes() + (getPersistent() ? getOutputBytes() : 0) + 1024;
    }
    /// Shared-memory offset of the 16-bit staging tile of `tma_store` from
    /// the f32 output tile's (right after it: a multiple of 1024 bytes).
    int64_t getStagingOffset() const { return getOutputBytes(); }
    /// Bytes of dynamic shared memory with a TMA-store epilogue: the ring,
    /// the f32 output tile (in the ring, or beside it when persistent) and
    /// the staging tile after it (`tile_m * tile_n` 16-bit elements), and
    /// 1 KiB to align the ring.
    static int64_t getTmaStoreDynamicBytes(int64_t tileM, int64_t tileN,
                                           int64_t stages, bool persistent) {
      int64_t ring = stages * (tileM + tileN) * kTileK * 2;
      int64_t tiles = tileM * getOutputRowFloats(tileN) * 4 + tileM * tileN * 2;
      return (persistent ? ring + tiles : std::max(ring, tiles)) + 1024;
    }
    /// All the shared memory of a kernel with a TMA-store epilogue: the
    /// dynamic bytes and the mbarriers (8 bytes per stage, twice with a
    /// producer), which must fit in a block's.
    static int64_t getTmaStoreSharedBytes(int64_t tileM, int64_t tileN,
                                          int64_t stages, bool producer,
                                          bool persistent) {
      return getTmaStoreDynamicBytes(tileM, tileN, stages, persistent) +
             stages * 8 * (producer ? 2 : 1);
    }
    /// f32 elements per row of the output tile in shared memory: tile_n
    /// and 16 bytes of padding, so that the accumulator fragment's rows
    /// fall in different banks.
    static int64_t getOutputRowFloats(int64_t tileN) { return tileN + 4; }
  }];
}

def Codegen_GPUMmaAttentionAttr
    : Codegen_ConfigAttr<"GPUMmaAttention", "gpu_mma_attention"> {
  let summary = "The blocks of one tensor-core GPU attention kernel";
  let description = [{
    Attached to a `transformer.sdpa` whose query, key and value are widened
    from bf16 or f16 as `blockc_codegen.gpu_mma_attention` by
    `blockc-gpu-select-tiles` on sm_80 and newer (or by hand);
    `blockc-gpu-lower-sdpa` builds a FlashAttention-2-style kernel: a block
    of `warps` warps owns `16 * warps` query rows of one (batch, head),
    each warp 16 rows as mma.sync m16n8k16 fragments, and walks the keys
    `kv_tile` at a time through shared memory (QK^T and PV on tensor cores,
    online softmax in registers, tiles past the causal diagonal skipped).

    ```mlir
    transformer.sdpa %q, %k, %v {causal, blockc_codegen.gpu_mma_attention =
        #blockc_codegen.gpu_mma_attention<warps = 4, kv_tile = 64>} : ...
    ```

    `warps` is at least 1 (at most 32 warps a block), `kv_tile` a positive
    multiple of 16 (the heuristic: 64, and 32 at head dims of 128 and more,
    where the kernel spills with 64-key tiles).

    With `warpgroup = true` (sm_90a: the heuristic writes it for head dims
    64 and 128) the pass builds the FlashAttention-3-style kernel instead:
    one warpgroup (`warps = 4`) owns 64 query rows, Q and a ring of K and V
    tiles of `kv_tile = 64` keys come by TMA (128-byte swizzle, mbarriers),
    and both S = Q K^T and P V run on warpgroup MMA (`wgmma.mma_async`)
    with P written to shared memory in between.

    ```mlir
    transformer.sdpa %q, %k, %v {blockc_codegen.gpu_mma_attention =
        #blockc_codegen.gpu_mma_attention<warps = 4, kv_tile = 64,
                                          warpgroup = true>} : ...
    ```

    With `consumers = 2` (which needs `warpgroup = true`; the heuristic
    writes it for head dims 64 and 128 when the shared memory fits) the
    kernel is warp-specialised: a block of three warpgroups covers 128
    query rows; the first (the producer, its registers lowered with
    `setmaxnreg`) loads Q and a ring of K and V tiles by TMA on full and
    empty mbarriers, the other two (the consumers, 64 query rows each)
    compute as above, taking turns to issue their wgmmas (ping-pong: one
    consumer's softmax runs while the other's GEMMs do). `consumers = 1`
    (the default) is the one-warpgroup kernel.

    `stages` is the number of K/V stages in the warp-specialised kernel's
    ring: 2 (the default) or 3 (which needs `consumers = 2`; the heuristic
    writes it where the shared memory of three stages fits), so that the
    producer can load up to two key tiles ahead of the tile the consumers
    compute on. The one-warpgroup kernel keeps 2.

    With `overlap = true` (which needs `consumers = 2`; the heuristic
    writes it wherever it writes `consumers = 2`) each consumer runs
    FlashAttention-3's intra-warpgroup overlap: it issues S = Q K^T of key
    tile j together with P V of tile j - 1 and runs the softmax of tile j
    while P V is in flight. `overlap = false` (the default) is one key tile
    at a time: S, its softmax, then P V, each waited for.

    ```mlir
    transformer.sdpa %q, %k, %v {blockc_codegen.gpu_mma_attention =
        #blockc_codegen.gpu_mma_attention<warps = 4, kv_tile = 64,
                                          warpgroup = true, consumers = 2,
                                          stages = 3, overlap = true>}
    ```

    `fallback_kv_tile` (which needs `warpgroup = true`; a positive
    multiple of 16, or 0, the default: `kv_tile`) is the key tile of the
    mma.sync kernel that runs instead of the warpgroup kernel where TMA
    cannot read q, k or v (a layout checked on the host). The heuristic
    writes 32 at head dim 128, where that kernel spills with 64-key tiles
    (its registers, docs/GPU.md).

    ```mlir
    transformer.sdpa %q, %k, %v {blockc_codegen.gpu_mma_attention =
        #blockc_codegen.gpu_mma_attention<warps = 4, kv_tile = 64,
                                          warpgroup = true, consumers = 2,
                                          stages = 3, overlap = true,
                                          fallback_kv_tile = 32>}
    ```
  }];
  let parameters = (ins "int64_t":$warps, "int64_t":$kv_tile,
                        DefaultValuedParameter<"bool", "false">:$warpgroup,
                        DefaultValuedParameter<"int64_t", "1">:$consumers,
                        DefaultValuedParameter<"int64_t", "2">:$stages,
                        DefaultValuedParameter<"bool", "false">:$overlap,
                        DefaultValuedParameter<"int64_t", "0">:$fallback_kv_tile);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
  let builders = [
    AttrBuilder<(ins "int64_t":$warps, "int64_t":$kv_tile), [{
      return $_get($_ctxt, warps, kv_tile, false, 1, 2, false, 0);
    }]>
  ];
  let extraClassDeclaration = [{
    /// The warp-specialised kernel (consumers = 2): registers per thread of
    /// the producer and of the consumers after `setmaxnreg` (128 x 24 +
    /// 256 x 240 <= 64K).
    static constexpr int64_t kProducerRegisters = 24;
    static constexpr int64_t kConsumerRegisters = 240;
    /// Bytes of dynamic shared memory of the warp-specialised kernel at
    /// head dim `headDim` with a ring of `stages` stages: Q (128 rows), the
    /// ring of K and V tiles (64 keys), P's two 16-bit parts twice
    /// (double-buffered) per consumer (64 x 64 each), and 1 KiB to align
    /// to the 128-byte swizzle's period.
    static int64_t getSpecializedSharedBytes(int64_t headDim,
                                             int64_t stages) {
      return 128 * headDim * 2 + stages * 2 * 64 * headDim * 2 +
             2 * 2 * 2 * 64 * 64 * 2 + 1024;
    }
  }];
}

def Codegen_GPUGemvAttr : Codegen_ConfigAttr<"GPUGemv", "gpu_gemv"> {
  let summary = "The weight-streaming GPU kernel of one small-M contraction";
  let description = [{
    Attached to a linalg contraction of a bf16 or f16 `[M..., K]` buffer and
    an `[N, K]` weight of that type into f32 (a projection of a decode step,
    M = B * T with T = 1) as `blockc_codegen.gpu_gemv` by
    `blockc-gpu-select-tiles`, or by hand; `blockc-gpu-tile-gemv` then builds
    a kernel that streams the weight once (memory-bound on it by design)
    instead of the tensor-core tile kernels:

    * a thread block of `warps` warps; each warp owns `columns` consecutive
      output columns n (rows of the weight, both weights of a gate/up
      pair);
    * the rows of the activation go `rows` at a time (the last M % `rows`
      one at a time); for each chunk the lanes stride over K in 16-byte
      vectors (8 bf16 / f16), `unroll` vectors of each weight row per lane
      per step (32 * 8 * `unroll` elements of K per warp and step; a
      partial last step is guarded), with the matching activation vectors
      read from global memory (L1), and accumulate one `vector<8xf32>` per
      row, column and weight;
    * five `gpu.shuffle xor` steps reduce the sums over the warp, and the
      lanes write the results, each through the fused epilogue (init,
      consumer, pair) of the tensor-core kernels.

    When M is not static, the kernel runs when M <= `max_m` at run time and
    the op's tensor-core kernel otherwise (`blockc-gpu-tile-matmul`); a
    static M larger than `max_m` is an error of the kernel passes.

    With `rope_head_dim = D` (0: none) the kernel also applies the
    rotate-half RoPE of head dim D that reads its rounded result: a warp's
    `columns` are `columns / 2` pairs of a column and its partner D / 2
    away in the same head, and the writing lane evaluates the RoPE for both
    and writes the RoPE's output. With `kv_append` the kernel writes its
    result (with `rope_head_dim`, the rotated one) straight into the KV
    cache rows that a copy after it would have written (a decode step's
    append), at the rows' position. Both are chosen by
    `blockc-gpu-select-tiles` where those ops read the result (option
    `gemv-rope-append`); the kernel passes reject them elsewhere.

    ```mlir
    linalg.generic {blockc_codegen.gpu_gemv =
        #blockc_codegen.gpu_gemv<warps = 4, columns = 1, rows = 2,
                                 unroll = 4, max_m = 16>}
        ins(%x, %w : memref<?x?x4096xbf16>, memref<4096x4096xbf16>) ...
    ```

    All parameters are at least 1; `32 * warps` threads fit a block (1024);
    `columns * rows` is at most 8 (`vector<8xf32>` sums per lane, doubled
    for a pair) and `unroll * columns` at most 16 (16-byte weight vectors
    in flight per lane, 4 registers each); `rope_head_dim` is 0 or even
    and positive, and with it `columns` is even.
  }];
  let parameters = (ins "int64_t":$warps,
                        "int64_t":$columns,
                        "int64_t":$rows,
                        "int64_t":$unroll,
                        "int64_t":$max_m,
                        DefaultValuedParameter<"int64_t", "0">:$rope_head_dim,
                        DefaultValuedParameter<"bool", "false">:$kv_append);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def Codegen_GPUTargetAttr : Codegen_Attr<"GPUTarget", "gpu_target"> {
  let summary = "The NVIDIA GPU that a module's kernels are generated for";
  let description = [{
    Attached to the top-level `builtin.module` as `blockc_codegen.gpu_target`
    by `blockc-gpu-set-target` (the first pass of every NVPTX pipeline), from
    blockc's table of known chips (`GPUTargetAttr::getKnown`,
    docs/GPU.md#chips). The tile heuristic (`blockc-gpu-select-tiles`), the
    emulator's limit checks (`blockc-gpu-emulate-kernels`) and the profile's
    speed-of-light bound read it; nothing else holds chip facts.

    * `name`: the chip (`t4`, `a100`, `a10`, `l4`, `h100`, `h200`, `b200`); `arch`: the
      architecture code is generated for (`sm_90a`); `sm`: its number (90);
      `arch_specific`: the `a` features (wgmma, setmaxnreg); `ptx`: the PTX
      ISA version the arch needs (80 = PTX 8.0);
    * `sms`, `clock_mhz`: streaming multiprocessors and boost clock;
    * peaks in GFLOP/s, dense: `bf16_gflops` (bf16 and f16 tensor cores),
      `tf32_gflops` (TF32 tensor cores, 0 where there are none), `fp32_gflops` (CUDA cores, an FMA
      counting 2); `memory_gbps`: DRAM bandwidth in GB/s;
    * limits: `shared_per_sm`, `shared_per_block` (the opt-in maximum of
      static plus dynamic shared memory), `static_shared_per_block`, in
      bytes; `registers_per_sm`, `max_registers_per_thread`,
      `max_threads_per_sm`, `max_blocks_per_sm`.

    ```mlir
    module attributes {blockc_codegen.gpu_target = #blockc_codegen.gpu_target<
        name = "h100", arch = "sm_90a", sm = 90, arch_specific = true,
        ptx = 80, sms = 132, clock_mhz = 1980, bf16_gflops = 989400,
        tf32_gflops = 494700, fp32_gflops = 66900, memory_gbps = 3350,
        shared_per_sm = 233472, shared_per_block = 232448,
        static_shared_per_block = 49152, registers_per_sm = 65536,
        max_registers_per_thread = 255, max_threads_per_sm = 2048,
        max_blocks_per_sm = 32>} { ... }
    ```

    Names are not empty, every number is positive (`tf32_gflops` may be
    0), a block's shared memory
    fits the SM's, and the static part fits the block's.
  }];
  let parameters = (ins StringRefParameter<>:$name,
                        StringRefParameter<>:$arch,
                        "int64_t":$sm,
                        "bool":$arch_specific,
                        "int64_t":$ptx,
                        "int64_t":$sms,
                        "int64_t":$clock_mhz,
                        "int64_t":$bf16_gflops,
                        "int64_t":$tf32_gflops,
                        "int64_t":$fp32_gflops,
                        "int64_t":$memory_gbps,
                        "int64_t":$shared_per_sm,
                        "int64_t":$shared_per_block,
                        "int64_t":$static_shared_per_block,
                        "int64_t":$registers_per_sm,
                        "int64_t":$max_registers_per_thread,
                        "int64_t":$max_threads_per_sm,
                        "int64_t":$max_blocks_per_sm);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// The known chip `name` (t4, a100, a10, l4, h100, h200, b200) or, given an
    /// architecture (sm_75, sm_80, sm_86, sm_89, sm_90, sm_90a, sm_100, sm_100a), its
    /// default chip, compiled for that architecture; null if unknown.
    static GPUTargetAttr getKnown(::mlir::MLIRContext *ctx,
                                  ::llvm::StringRef nameOrArch);
    /// The chip `name` compiled for `arch` (empty: the chip's own arch);
    /// null, with `error` saying why, if either is unknown or the chip
    /// cannot run that arch.
    static GPUTargetAttr lookup(::mlir::MLIRContext *ctx,
                                ::llvm::StringRef arch,
                                ::llvm::StringRef name, std::string &error);
    /// The largest shared memory a block may opt in to on any known chip.
    static int64_t maxKnownSharedPerBlock();
    /// The known architectures and chips, comma-separated (for messages).
    static std::string knownArchs();
    static std::string knownChips();
    /// Tensor cores through mma.sync (sm_80+), wgmma and TMA (sm_90a).
    bool hasMmaSync() const { return getSm() >= 80; }
    bool hasWarpgroupMma() const { return getSm() == 90 && getArchSpecific(); }
    /// "+ptxNN", the PTX ISA feature of the arch.
    std::string ptxFeature() const {
      return "+ptx" + std::to_string(getPtx());
    }
  }];
}

def Codegen_EmulatedKernelAttr
    : Codegen_Attr<"EmulatedKernel", "emulated_kernel"> {
  let summary = "A GPU kernel compiled into host code for the emulator";
  let description = [{
    Attached as `blockc_codegen.emulated_kernel` by
    `blockc-gpu-emulate-kernels` to the host function that runs one thread
    of a kernel of the emulated `gpu.module` `module`; read by
    `blockc-gpu-register-emulated-kernels`, which registers the function
    with the emulator runtime under (`module`, `kernel`) when the program
    starts.

    * `static_shared`: bytes of the kernel's workgroup attributions (static
      shared memory); `max_shared`: the target chip's limit for static plus
      dynamic shared memory of a block, checked at every launch;
    * `synchronizes`: the kernel has a barrier or a warp shuffle, so its
      threads run as fibers (otherwise as a loop);
    * `block_x/y/z`: the kernel's `known_block_size` (0: unknown), checked
      against the launch.

    ```mlir
    func.func @__blockc_emu_k(...) attributes {
        blockc_codegen.emulated_kernel = #blockc_codegen.emulated_kernel<
          module = "blockc_kernels#5d0c", kernel = "k", static_shared = 8320,
          max_shared = 166912, synchronizes = true, block_x = 16,
          block_y = 16, block_z = 1>}
    ```

    Names are not empty and sizes are at least 0 (the limits are checked by
    the pass and at launch).
  }];
  let parameters = (ins StringRefParameter<>:$module,
                        StringRefParameter<>:$kernel,
                        "int64_t":$static_shared,
                        "int64_t":$max_shared,
                        "bool":$synchronizes,
                        "int64_t":$block_x,
                        "int64_t":$block_y,
                        "int64_t":$block_z);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

#endif // BLOCKC_DIALECT_CODEGEN_IR_CODEGENATTRS_TD
