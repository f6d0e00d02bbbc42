//===- TransformerBase.td - transformer dialect definition -*- tablegen -*-===//
//
// The `transformer` dialect says *what* a transformer block computes. Its ops
// follow the Hugging Face / PyTorch conventions of the seed reference: weights
// are stored [out, in] and projections compute y = x W^T (+ b).
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKC_DIALECT_TRANSFORMER_IR_TRANSFORMERBASE_TD
#define BLOCKC_DIALECT_TRANSFORMER_IR_TRANSFORMERBASE_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"

def Transformer_Dialect : Dialect {
  let name = "transformer";
  let cppNamespace = "::blockc::transformer";
  let summary = "Transformer blocks and their primitive operations";
  let description = [{
    The `transformer` dialect expresses transformer blocks (pre-norm Llama /
    Mistral / Qwen blocks and post-norm 2017 blocks) at two levels:

    * composites: `transformer.block`, `transformer.attention` (the attention
      sub-layer with its four projections) and `transformer.ffn` (the
      feed-forward sub-layer, gated or plain);
    * primitives: `rms_norm`, `layer_norm`, `linear`, `rope`, `sdpa`,
      `activation` and `residual_add`;
    * whole models: `embedding` (token ids `[B, T]` to rows of an
      embedding table, with an optional learned position table); the LM
      head is a `linear`;
    * KV caches: `kv_cache_append` (the decode entry derived by
      `transformer-derive-decode` writes each layer's new keys and values
      into caches `[B, L_max, H_kv, D]` with it).

    All ops are value-semantic on ranked tensors. Activations are shaped
    `[B, T, d]` (B and T may be dynamic); weights are static tensors stored
    `[out, in]`. The element type is f32, f16 or bf16, and all operands of
    one op share it.
  }];
  let useDefaultAttributePrinterParser = 1;
  // `transformer.weight_name` on function arguments and `transformer.layer`
  // on blocks bind weights to tensor names (see ModelSignature.h).
  let hasRegionArgAttrVerify = 1;
  let hasOperationAttrVerify = 1;
  let extraClassDeclaration = [{
    static constexpr ::llvm::StringLiteral kWeightNameAttr = "transformer.weight_name";
    static constexpr ::llvm::StringLiteral kLayerAttr = "transformer.layer";
    static constexpr ::llvm::StringLiteral kWeightTransposeAttr =
        "transformer.weight_transpose";
    static constexpr ::llvm::StringLiteral kWeightSliceAttr =
        "transformer.weight_slice";
    // Decode entry functions (transformer-derive-decode): the argument that
    // holds the number of cached tokens, and the K/V cache arguments
    // (a #transformer.kv_cache<key|value>, with the layer in
    // `transformer.layer`).
    static constexpr ::llvm::StringLiteral kKVPositionAttr =
        "transformer.kv_position";
    static constexpr ::llvm::StringLiteral kKVCacheAttr = "transformer.kv_cache";
    // The memory order of a cache argument, a #transformer.kv_layout<bhsd>
    // (head-major, the default) or <bshd> (token-major); the tensor is
    // [B, L_max, H_kv, D] in both.
    static constexpr ::llvm::StringLiteral kKVLayoutAttr =
        "transformer.kv_layout";
    // Paged entries (transformer-derive-paged-decode): the ragged batch's
    // cu_seqlens [B + 1], cached lengths [B] and block table [B, max_pages]
    // (unit attributes on i32 tensors), and on each K/V page pool
    // [P, S, H_kv, D] (which also has transformer.kv_cache and
    // transformer.layer) its page size S.
    static constexpr ::llvm::StringLiteral kSeqOffsetsAttr =
        "transformer.seq_offsets";
    static constexpr ::llvm::StringLiteral kSeqPositionsAttr =
        "transformer.seq_positions";
    static constexpr ::llvm::StringLiteral kBlockTableAttr =
        "transformer.block_table";
    static constexpr ::llvm::StringLiteral kPageSizeAttr =
        "transformer.page_size";
    // Tensor parallelism (transformer-tensor-parallel): on the module, the
    // number of ranks (an i64); on a weight argument, a
    // #transformer.shard_slice; on a block, the shard.grid (a flat symbol
    // reference) over which its attention and FFN outputs are all-reduced.
    static constexpr ::llvm::StringLiteral kTensorParallelAttr =
        "transformer.tensor_parallel";
    static constexpr ::llvm::StringLiteral kShardSliceAttr =
        "transformer.shard_slice";
    static constexpr ::llvm::StringLiteral kAllReduceOverAttr =
        "transformer.all_reduce_over";
  }];
}

class Transformer_Op<string mnemonic, list<Trait> traits = []>
    : Op<Transformer_Dialect, mnemonic, traits>;

//===----------------------------------------------------------------------===//
// Type constraints
//===----------------------------------------------------------------------===//

def Transformer_FloatType : AnyTypeOf<[F32, F16, BF16]>;

// Any ranked tensor of a supported float type (activations of primitives).
def Transformer_Tensor : RankedTensorOf<[F32, F16, BF16]>;

// A statically shaped tensor of a supported float type (weights, biases).
def Transformer_Weight : StaticShapeTensorOf<[F32, F16, BF16]>;

// Activations of composite ops: [B, T, d].
def Transformer_Activation : 3DTensorOf<[F32, F16, BF16]>;

// Per-head activations of rope and sdpa: [B, T, H, D].
def Transformer_HeadTensor : 4DTensorOf<[F32, F16, BF16]>;

#endif // BLOCKC_DIALECT_TRANSFORMER_IR_TRANSFORMERBASE_TD
