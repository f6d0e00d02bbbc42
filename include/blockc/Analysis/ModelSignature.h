//===- ModelSignature.h - entry point and weight binding --------*- C++ -*-===//
//
// A blockc model is a func.func whose first argument is the activation
// [B, T, d], whose other arguments are weights, and whose single result is
// the output [B, T, d]; or, for a causal language model, whose first
// argument is token ids [B, T] (i32) and whose result is f32 logits
// [B, T, vocab]. This analysis finds the entry function, binds every
// weight argument to a tensor name, and collects the block configuration
// needed to count FLOPs; and reads the K/V cache arguments of a decode
// entry derived by transformer-derive-decode.
//
// Weight names: an argument attribute `transformer.weight_name = "..."`
// wins; otherwise an argument used as an operand of a transformer.block gets
// the Hugging Face Llama name of that operand under the prefix
// "model.layers.<L>." (L from the block's `transformer.layer` attribute,
// default 0).
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKC_ANALYSIS_MODELSIGNATURE_H
#define BLOCKC_ANALYSIS_MODELSIGNATURE_H

#include "blockc/Support/TensorFiles.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/SmallVector.h"

#include <string>
#include <vector>

namespace blockc {

struct ModelArgument {
  unsigned index = 0;
  /// "input" for the activation, else the block operand role ("w_q", ...)
  /// or "weight" for an argument bound only by its attribute.
  std::string role;
  /// The safetensors tensor name (weights only).
  std::string weightName;
  mlir::RankedTensorType type;
  /// How the stored tensor becomes the argument: an optional slice
  /// [begin, end) along `sliceAxis` (-1: none), then an optional 2-D
  /// transpose (GPT-2's fused, [in, out] Conv1D weights).
  int64_t sliceAxis = -1, sliceBegin = 0, sliceEnd = 0;
  bool transpose = false;
  /// Tensor parallelism (`transformer.shard_slice`): the argument is rank
  /// r's part of that view, the concatenation of shardRanges[r] ([begin,
  /// end) pairs along shardAxis; none: zeros). -1: not split.
  int64_t shardAxis = -1;
  std::vector<std::vector<int64_t>> shardRanges;
  /// The shape of the whole view (the argument's shape, but along
  /// shardAxis the end of the last range any rank reads).
  std::vector<int64_t> fullShape() const;
};

struct BlockConfig {
  int64_t modelDim = 0, numHeads = 0, numKVHeads = 0, headDim = 0, dff = 0;
  bool gated = false;
};

struct ModelSignature {
  std::string funcName;
  /// args[0] is the input: the activation [B, T, d], or for a causal
  /// language model the token ids [B, T] (i32).
  std::vector<ModelArgument> args;
  /// The activation [B, T, d], or a causal language model's f32 logits
  /// [B, T, vocab].
  mlir::RankedTensorType resultType;
  std::vector<BlockConfig> blocks;
  /// The model dimension d (of the activation, or of the embedding).
  int64_t modelDim = 0;
  /// A causal language model's vocabulary (0 for a stack).
  int64_t vocabSize = 0;
  /// The rows of its learned position table (GPT-2's wpe): positions
  /// 0 .. maxPositions - 1 exist. 0: no position table.
  int64_t maxPositions = 0;
  /// Weights of the projections outside the blocks (the LM head).
  int64_t headParams = 0;
  /// See getModelElementType().
  mlir::Type elementType;

  /// Whether the entry takes token ids [B, T] and returns logits (a causal
  /// language model).
  bool takesTokenIds() const { return vocabSize > 0; }

  /// The model's element type (f32, bf16 or f16): the activation's, or a
  /// causal language model's embedding's (`elementType`, else the input's
  /// for a signature built by hand).
  mlir::Type getModelElementType() const {
    return elementType ? elementType : args.front().type.getElementType();
  }
  /// The model dimension d (`modelDim`, else the activation input's).
  int64_t getModelDim() const {
    return modelDim ? modelDim : args.front().type.getDimSize(2);
  }

  /// The output's shape for an input of `batch` x `seqLen` tokens:
  /// [B, T, vocab] or [B, T, d].
  std::vector<int64_t> getOutputShape(int64_t batch, int64_t seqLen) const;

  /// FLOPs of one forward pass over [batch, seqLen]: 2 per weight per token
  /// for every projection (the LM head included), plus 4 T^2 H D per batch
  /// for attention (the full square, as executed); elementwise work and the
  /// embedding gather are not counted.
  double flops(int64_t batch, int64_t seqLen) const;
};

/// The part of a checkpoint tensor that argument `arg` binds: its name, then
/// "[axis:begin:end]" for a slice and "^T" for a transpose (unique among an
/// entry's arguments; the tensor names of a file of prepared weights).
std::string getBindingKey(const ModelArgument &arg);

/// The host element type of a model tensor's element type (f32, bf16 or
/// f16; analyzeModel accepts no other).
ElementType getHostElementType(mlir::Type elementType);

/// Analyzes `module` (transformer-level IR). `entry` names the function;
/// when empty, "forward" or else the only function is used. Errors are
/// emitted as diagnostics at the offending location.
mlir::FailureOr<ModelSignature> analyzeModel(mlir::ModuleOp module,
                                             llvm::StringRef entry);

/// One K or V cache argument of a decode entry (transformer-derive-decode).
struct KVCacheArgument {
  unsigned argNumber = 0;
  /// The tensor type the entry sees, [B, L_max, H_kv, D].
  mlir::RankedTensorType type;
  /// The memory order is [B, H_kv, L_max, D] (`bhsd`), else the tensor's
  /// own [B, L_max, H_kv, D] (`bshd`).
  bool headMajor = false;
};

/// The cache arguments of decode entry `func`, in argument order (k_0, v_0,
/// k_1, ...), with their layout: the one place that reads the
/// `transformer.kv_cache` and `transformer.kv_layout` argument attributes.
llvm::SmallVector<KVCacheArgument> getKVCacheArguments(mlir::func::FuncOp func);

/// One K or V page pool of a paged entry (transformer-derive-paged-decode).
struct PagedPoolArgument {
  unsigned argNumber = 0;
  /// The pool [num_pages, S, H_kv, D] (num_pages dynamic).
  mlir::RankedTensorType type;
  int64_t layer = 0;
  bool isKey = true;
};

/// The ragged-batch arguments of a paged entry: the argument numbers of
/// cu_seqlens [B + 1], the cached lengths [B] and the block table
/// [B, max_pages] (-1: absent), the pools in argument order (k_0, v_0, k_1,
/// ...) and their page size S (0 without pools).
struct PagedArguments {
  int cuSeqlens = -1, seqPositions = -1, blockTable = -1;
  llvm::SmallVector<PagedPoolArgument> pools;
  int64_t pageSize = 0;
  /// Whether `func` is a paged entry (all three batch arguments present).
  bool isPaged() const {
    return cuSeqlens >= 0 && seqPositions >= 0 && blockTable >= 0;
  }
};

/// The paged arguments of `func`: the one place that reads the
/// `transformer.seq_offsets`, `transformer.seq_positions`,
/// `transformer.block_table` and `transformer.page_size` argument
/// attributes.
PagedArguments getPagedArguments(mlir::func::FuncOp func);

/// The default Hugging Face name suffix of a block operand role, e.g.
/// "w_q" -> "self_attn.q_proj.weight"; empty for an unknown role.
llvm::StringRef getDefaultWeightSuffix(llvm::StringRef role);

} // namespace blockc

#endif // BLOCKC_ANALYSIS_MODELSIGNATURE_H
