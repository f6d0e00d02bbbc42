//===- TransformerAttrs.td - transformer enum attributes ---*- tablegen -*-===//
//
// Enumerations that configure transformer ops (the norm kind and placement,
// the activation function, the RoPE layout) and that mark the KV-cache
// arguments of decode entries (the cache kind and its memory order).
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKC_DIALECT_TRANSFORMER_IR_TRANSFORMERATTRS_TD
#define BLOCKC_DIALECT_TRANSFORMER_IR_TRANSFORMERATTRS_TD

include "blockc/Dialect/Transformer/IR/TransformerBase.td"
include "mlir/IR/EnumAttr.td"

def Transformer_NormKind : I32EnumAttr<"NormKind", "normalisation kind", [
    I32EnumAttrCase<"rms", 0>,
    I32EnumAttrCase<"layer", 1>
  ]> {
  let cppNamespace = "::blockc::transformer";
  let genSpecializedAttr = 0;
}
def Transformer_NormKindAttr
    : EnumAttr<Transformer_Dialect, Transformer_NormKind, "norm"> {
  let assemblyFormat = "`<` $value `>`";
}

def Transformer_NormPlacement : I32EnumAttr<"NormPlacement",
    "where the norms sit relative to the residual adds", [
    I32EnumAttrCase<"pre", 0>,
    I32EnumAttrCase<"post", 1>
  ]> {
  let cppNamespace = "::blockc::transformer";
  let genSpecializedAttr = 0;
}
def Transformer_NormPlacementAttr
    : EnumAttr<Transformer_Dialect, Transformer_NormPlacement, "placement"> {
  let assemblyFormat = "`<` $value `>`";
}

def Transformer_ActivationKind : I32EnumAttr<"ActivationKind",
    "pointwise activation function", [
    I32EnumAttrCase<"silu", 0>,
    I32EnumAttrCase<"gelu", 1>,
    I32EnumAttrCase<"gelu_tanh", 2>,
    I32EnumAttrCase<"relu", 3>
  ]> {
  let cppNamespace = "::blockc::transformer";
  let genSpecializedAttr = 0;
}
def Transformer_ActivationKindAttr
    : EnumAttr<Transformer_Dialect, Transformer_ActivationKind, "activation"> {
  let assemblyFormat = "`<` $value `>`";
}

def Transformer_RoPELayout : I32EnumAttr<"RoPELayout",
    "how rotary pairs are laid out in a head vector", [
    I32EnumAttrCase<"rotate_half", 0>,
    I32EnumAttrCase<"interleaved", 1>
  ]> {
  let cppNamespace = "::blockc::transformer";
  let genSpecializedAttr = 0;
}
def Transformer_RoPELayoutAttr
    : EnumAttr<Transformer_Dialect, Transformer_RoPELayout, "rope"> {
  let assemblyFormat = "`<` $value `>`";
}

//===----------------------------------------------------------------------===//
// Weight-only quantisation of the projections
//===----------------------------------------------------------------------===//

def Transformer_WeightQuantType : I32EnumAttr<"WeightQuantType",
    "integer type of quantised projection weights", [
    I32EnumAttrCase<"int8", 0>,
    I32EnumAttrCase<"int4", 1>
  ]> {
  let cppNamespace = "::blockc::transformer";
  let genSpecializedAttr = 0;
}

def Transformer_ActivationQuantType : I32EnumAttr<"ActivationQuantType",
    "run-time quantisation of the inputs of quantised projections", [
    I32EnumAttrCase<"none", 0>,
    I32EnumAttrCase<"int8", 1>
  ]> {
  let cppNamespace = "::blockc::transformer";
  let genSpecializedAttr = 0;
}

def Transformer_WeightQuantAttr
    : AttrDef<Transformer_Dialect, "WeightQuant"> {
  let mnemonic = "weight_quant";
  let summary = "weight-only round-to-nearest quantisation of projections";
  let description = [{
    Held by `weight_quant` on `transformer.linear` and on the composites
    (`attention`, `ffn`, `block`: it applies to all their projections,
    never to norms or biases). The projection computes with the dequantised
    weight `W'`, made from the stored weight `W[N, K]` (in f32) by:

    * `int8`: one scale per output row, `s[n] = max_k |W[n, k]| / 127`,
      `q = clamp(rint(W[n, k] / s[n]), -127, 127)`;
    * `int4` (`group_size` G = 32, 64 or 128, dividing K): one scale per
      group of G consecutive k, `s = max |W| over the group / 7`,
      `q = clamp(rint(W / s), -7, 7)`;

    `rint` rounds half to even; a zero row or group has `s = 0` and
    `q = 0`; `W' = q * s`.

    `activations` says what happens to the projection's input x:

    * `none` (the default, not printed): x keeps its type and products
      accumulate in f32 (weight-only quantisation);
    * `int8`: x is quantised at run time, per token row and run of 32
      consecutive input columns: `s_x = max |x| / 127`,
      `q_x = clamp(rint(x / s_x), -127, 127)` (0 where `s_x = 0`), and the
      projection computes `sum over runs of s_x * s_w * sum(q_x * q_w)`,
      the integer sums exact in int32, `s_w` the row's (int8) or the
      group's (int4) weight scale. Every projection's input dimension K
      must be a multiple of 32.

    ```mlir
    #transformer.weight_quant<int8>
    #transformer.weight_quant<int4, group_size = 32>
    #transformer.weight_quant<int8, activations = int8>
    #transformer.weight_quant<int4, group_size = 64, activations = int8>
    ```
  }];
  let parameters = (ins EnumParameter<Transformer_WeightQuantType>:$type,
                        DefaultValuedParameter<"int64_t", "0">:$group_size,
                        DefaultValuedParameter<
                            "::blockc::transformer::ActivationQuantType",
                            "::blockc::transformer::ActivationQuantType::none",
                            "activation quantisation">:$activations);
  // `<` type (`,` `group_size` `=` G)? (`,` `activations` `=` A)? `>`,
  // each optional part printed only when it is not the default.
  let hasCustomAssemblyFormat = 1;
  let builders = [
    AttrBuilder<(ins "::blockc::transformer::WeightQuantType":$type,
                     "int64_t":$group_size), [{
      return $_get($_ctxt, type, group_size,
                   ::blockc::transformer::ActivationQuantType::none);
    }]>
  ];
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// The largest |q|: 127 (int8) or 7 (int4).
    int64_t getMaxLevel() const {
      return getType() == ::blockc::transformer::WeightQuantType::int8 ? 127
                                                                       : 7;
    }
    /// Whether the projection's input is quantised to int8 at run time.
    bool quantizesActivations() const {
      return getActivations() != ::blockc::transformer::ActivationQuantType::none;
    }
    /// The k-extent of one activation scale (activations = int8).
    static constexpr int64_t kActivationRun = 32;
    /// The k-extent of one scale for a weight with `k` columns.
    int64_t getGroupSizeFor(int64_t k) const {
      return getGroupSize() == 0 ? k : getGroupSize();
    }
  }];
}

//===----------------------------------------------------------------------===//
// Tensor parallelism (transformer-tensor-parallel)
//===----------------------------------------------------------------------===//

def Transformer_ShardSliceAttr
    : AttrDef<Transformer_Dialect, "ShardSlice"> {
  let mnemonic = "shard_slice";
  let summary = "which part of a stored weight each rank of a tensor-parallel "
                "grid reads";
  let description = [{
    Held by `transformer.shard_slice` on a weight argument of a function
    that `transformer-tensor-parallel` partitioned: the argument is this
    rank's part of the stored weight (after the argument's
    `transformer.weight_slice` and `transformer.weight_transpose`). Element
    `r` of `ranks` lists the `[begin, end)` ranges, along `axis` of the
    argument's full (unpartitioned) tensor, that rank `r` reads, in order;
    the argument is their concatenation. A rank with no range reads nothing
    and gets zeros (a bias of a row-parallel projection: rank 0 adds it, the
    all-reduce sums it once). Every rank that reads something reads the
    same number of rows.

    ```mlir
    // q rows of heads 0-3 on rank 0 and 4-7 on rank 1 (head dim 16)
    #transformer.shard_slice<axis = 0, ranks = [array<i64: 0, 64>, array<i64: 64, 128>]>
    // the bias of o: rank 0 only
    #transformer.shard_slice<axis = 0, ranks = [array<i64: 0, 64>, array<i64>]>
    ```
  }];
  let parameters = (ins "int64_t":$axis, "::mlir::ArrayAttr":$ranks);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// The [begin, end) pairs of rank `rank`, flattened.
    ::llvm::ArrayRef<int64_t> getRanges(unsigned rank) const;
    /// The number of elements along `axis` that a reading rank gets.
    int64_t getLocalSize() const;
  }];
}

//===----------------------------------------------------------------------===//
// KV caches of decode entries (transformer-derive-decode)
//===----------------------------------------------------------------------===//

def Transformer_KVCacheKind : I32EnumAttr<"KVCacheKind",
    "which of an attention's inputs a KV-cache argument holds", [
    I32EnumAttrCase<"key", 0>,
    I32EnumAttrCase<"value", 1>
  ]> {
  let cppNamespace = "::blockc::transformer";
  let genSpecializedAttr = 0;
}
def Transformer_KVCacheKindAttr
    : EnumAttr<Transformer_Dialect, Transformer_KVCacheKind, "kv_cache"> {
  let summary = "the kind of a KV-cache argument: keys or values";
  let description = [{
    Held by the discardable argument attribute `transformer.kv_cache` on the
    cache arguments of a decode entry; `transformer.layer` on the same
    argument names the attention (in program order) the cache belongs to.

    ```mlir
    %k_0: tensor<?x?x8x64xf32> {transformer.kv_cache = #transformer.kv_cache<key>,
                                transformer.layer = 0 : i64}
    ```
  }];
  let assemblyFormat = "`<` $value `>`";
}

def Transformer_KVLayout : I32EnumAttr<"KVLayout",
    "memory order of a KV cache [B, L_max, H_kv, D]", [
    // Head-major: [B][H_kv][L_max][D] in memory, one head's rows contiguous.
    I32EnumAttrCase<"bhsd", 0>,
    // Token-major: the tensor's own row-major order, one token's heads
    // contiguous.
    I32EnumAttrCase<"bshd", 1>
  ]> {
  let cppNamespace = "::blockc::transformer";
  let genSpecializedAttr = 0;
}
def Transformer_KVLayoutAttr
    : EnumAttr<Transformer_Dialect, Transformer_KVLayout, "kv_layout"> {
  let summary = "the memory order of a KV-cache argument";
  let description = [{
    Held by the discardable argument attribute `transformer.kv_layout` next
    to `transformer.kv_cache`. The cache tensor is `[B, L_max, H_kv, D]` in
    both layouts; the letters name the memory order (B, H_kv, S = L_max, D):

    * `bhsd` (head-major, the default of `transformer-derive-decode`): one
      head's keys or values are contiguous; the argument also carries the
      strided `bufferization.buffer_layout` that realises this order;
    * `bshd` (token-major): the tensor's own row-major order.

    ```mlir
    %k_0: tensor<?x?x8x64xf32> {transformer.kv_cache = #transformer.kv_cache<key>,
                                transformer.kv_layout = #transformer.kv_layout<bshd>}
    ```
  }];
  let assemblyFormat = "`<` $value `>`";
}

#endif // BLOCKC_DIALECT_TRANSFORMER_IR_TRANSFORMERATTRS_TD
