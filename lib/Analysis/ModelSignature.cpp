//===- ModelSignature.cpp - entry point and weight binding ----------------===//
//
// See ModelSignature.h for the binding rules.
//
//===----------------------------------------------------------------------===//

#include "blockc/Analysis/ModelSignature.h"
#include "blockc/Dialect/Transformer/IR/TransformerOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

using namespace mlir;
using namespace blockc;
using namespace blockc::transformer;

StringRef blockc::getDefaultWeightSuffix(StringRef role) {
  return llvm::StringSwitch<StringRef>(role)
      .Case("attn_norm", "input_layernorm.weight")
      .Case("attn_norm_bias", "input_layernorm.bias")
      .Case("w_q", "self_attn.q_proj.weight")
      .Case("b_q", "self_attn.q_proj.bias")
      .Case("w_k", "self_attn.k_proj.weight")
      .Case("b_k", "self_attn.k_proj.bias")
      .Case("w_v", "self_attn.v_proj.weight")
      .Case("b_v", "self_attn.v_proj.bias")
      .Case("w_o", "self_attn.o_proj.weight")
      .Case("b_o", "self_attn.o_proj.bias")
      .Case("ffn_norm", "post_attention_layernorm.weight")
      .Case("ffn_norm_bias", "post_attention_layernorm.bias")
      .Case("w_gate", "mlp.gate_proj.weight")
      .Case("b_gate", "mlp.gate_proj.bias")
      .Case("w_up", "mlp.up_proj.weight")
      .Case("b_up", "mlp.up_proj.bias")
      .Case("w_down", "mlp.down_proj.weight")
      .Case("b_down", "mlp.down_proj.bias")
      .Default("");
}

std::string blockc::getBindingKey(const ModelArgument &ma) {
  std::string key = ma.weightName;
  if (ma.sliceAxis >= 0)
    key += "[" + std::to_string(ma.sliceAxis) + ":" +
           std::to_string(ma.sliceBegin) + ":" + std::to_string(ma.sliceEnd) +
           "]";
  if (ma.transpose)
    key += "^T";
  return key;
}

ElementType blockc::getHostElementType(Type elementType) {
  if (elementType.isBF16())
    return ElementType::BF16;
  if (elementType.isF16())
    return ElementType::F16;
  return ElementType::F32;
}

double ModelSignature::flops(int64_t batch, int64_t seqLen) const {
  double total = 0;
  double tokens = static_cast<double>(batch) * seqLen;
  for (const BlockConfig &b : blocks) {
    double d = b.modelDim, q = b.numHeads * b.headDim,
           kv = b.numKVHeads * b.headDim;
    double projParams =
        d * q + 2 * d * kv + q * d + (b.gated ? 3 : 2) * d * b.dff;
    total += 2 * tokens * projParams;
    total += 4.0 * batch * seqLen * seqLen * b.numHeads * b.headDim;
  }
  return total + 2 * tokens * double(headParams);
}

std::vector<int64_t> ModelSignature::getOutputShape(int64_t batch,
                                                    int64_t seqLen) const {
  return {batch, seqLen, takesTokenIds() ? vocabSize : getModelDim()};
}

FailureOr<ModelSignature> blockc::analyzeModel(ModuleOp module,
                                               StringRef entry) {
  func::FuncOp func;
  if (!entry.empty()) {
    func = module.lookupSymbol<func::FuncOp>(entry);
    if (!func)
      return module.emitError() << "no entry function @" << entry;
  } else {
    func = module.lookupSymbol<func::FuncOp>("forward");
    if (!func) {
      auto funcs = llvm::to_vector(module.getOps<func::FuncOp>());
      if (funcs.size() != 1)
        return module.emitError()
               << "cannot choose an entry function: no @forward and "
               << funcs.size() << " functions (use --entry=<name>)";
      func = funcs.front();
    }
  }
  if (func.isExternal())
    return func.emitError()
           << "entry function @" << func.getName() << " has no body";

  ModelSignature sig;
  sig.funcName = func.getName().str();
  FunctionType type = func.getFunctionType();
  if (type.getNumInputs() < 1 || type.getNumResults() != 1)
    return func.emitError()
           << "entry function must take the activation [B, T, d] (or token "
              "ids [B, T]) first and return exactly one tensor";
  auto inputType = dyn_cast<RankedTensorType>(type.getInput(0));
  auto resultType = dyn_cast<RankedTensorType>(type.getResult(0));
  auto isModelFloat = [](Type t) {
    return isa<Float32Type, BFloat16Type, Float16Type>(t);
  };
  if (inputType && inputType.getRank() == 2 &&
      inputType.getElementType().isInteger(32)) {
    // A causal language model: token ids [B, T] to f32 logits [B, T, V].
    if (!resultType || resultType.getRank() != 3 ||
        !resultType.getElementType().isF32() ||
        ShapedType::isDynamic(resultType.getDimSize(2)) ||
        resultType.getDimSize(0) != inputType.getDimSize(0) ||
        resultType.getDimSize(1) != inputType.getDimSize(1))
      return func.emitError()
             << "an entry function taking token ids " << inputType
             << " must return f32 logits [B, T, vocab] "
                "with a static vocab, got "
             << type.getResult(0);
    sig.vocabSize = resultType.getDimSize(2);
    func.walk([&](EmbeddingOp op) {
      if (!sig.modelDim) {
        sig.modelDim = op.getType().getDimSize(2);
        sig.elementType = op.getType().getElementType();
        if (mlir::Value positions = op.getPositions())
          sig.maxPositions =
              cast<RankedTensorType>(positions.getType()).getDimSize(0);
      }
    });
    if (!sig.modelDim)
      return func.emitError() << "an entry function taking token ids must "
                                 "embed them (transformer.embedding)";
  } else {
    if (!inputType || inputType.getRank() != 3 ||
        !isModelFloat(inputType.getElementType()))
      return func.emitError() << "entry function's first argument must be an "
                                 "f32, bf16 or f16 activation tensor [B, T, "
                                 "d] or i32 token ids [B, T], got "
                              << type.getInput(0);
    if (!resultType || resultType != inputType)
      return func.emitError() << "entry function must return the activation "
                                 "type "
                              << inputType << ", got " << type.getResult(0);
    if (ShapedType::isDynamic(inputType.getDimSize(2)))
      return func.emitError() << "the model dimension of the activation must "
                                 "be static";
    sig.modelDim = inputType.getDimSize(2);
    sig.elementType = inputType.getElementType();
  }
  sig.resultType = resultType;
  ModelArgument input;
  input.role = "input";
  input.type = inputType;
  sig.args.push_back(std::move(input));

  // Default names from block operand roles.
  llvm::DenseMap<Value, std::string> defaultNames;
  llvm::DenseMap<Value, std::string> roles;
  func.walk([&](BlockOp block) {
    int64_t layer = 0;
    if (auto attr =
            block->getAttrOfType<IntegerAttr>(TransformerDialect::kLayerAttr))
      layer = attr.getInt();
    std::string prefix = "model.layers." + std::to_string(layer) + ".";
    for (auto [role, value] : block.getNamedWeights()) {
      if (!value)
        continue;
      roles.try_emplace(value, role.str());
      defaultNames.try_emplace(value,
                               prefix + getDefaultWeightSuffix(role).str());
    }
    int64_t d = block.getInput().getType().getDimSize(2);
    sig.blocks.push_back({d, static_cast<int64_t>(block.getNumHeads()),
                          static_cast<int64_t>(block.getNumKvHeads()),
                          static_cast<int64_t>(block.getHeadDim()),
                          static_cast<int64_t>(block.getDFf()),
                          block.isGated()});
  });

  // Projections outside the blocks (the LM head).
  func.walk([&](LinearOp op) {
    if (!op->getParentOfType<BlockOp>())
      sig.headParams +=
          cast<RankedTensorType>(op.getWeight().getType()).getNumElements();
  });

  llvm::StringMap<unsigned> seen;
  for (unsigned i = 1; i < type.getNumInputs(); ++i) {
    BlockArgument arg = func.getArgument(i);
    auto argType = dyn_cast<RankedTensorType>(arg.getType());
    if (!argType || !argType.hasStaticShape() ||
        !isModelFloat(argType.getElementType()))
      return func.emitError()
             << "weight argument #" << i
             << " must be a static f32, bf16 or f16 tensor, got "
             << arg.getType();
    ModelArgument ma;
    ma.index = i;
    ma.type = argType;
    auto it = roles.find(arg);
    ma.role = it != roles.end() ? it->second : "weight";
    if (auto name = func.getArgAttrOfType<StringAttr>(
            i, TransformerDialect::kWeightNameAttr))
      ma.weightName = name.str();
    else if (auto dn = defaultNames.find(arg); dn != defaultNames.end())
      ma.weightName = dn->second;
    else
      return func.emitError()
             << "weight argument #" << i
             << " has no tensor name: it feeds no transformer.block operand; "
                "add {transformer.weight_name = \"...\"}";
    if (func.getArgAttr(i, TransformerDialect::kWeightTransposeAttr))
      ma.transpose = true;
    if (auto slice = func.getArgAttrOfType<DenseI64ArrayAttr>(
            i, TransformerDialect::kWeightSliceAttr)) {
      ma.sliceAxis = slice[0];
      ma.sliceBegin = slice[1];
      ma.sliceEnd = slice[2];
    }
    if (auto shard = func.getArgAttrOfType<ShardSliceAttr>(
            i, TransformerDialect::kShardSliceAttr)) {
      ma.shardAxis = shard.getAxis();
      if (ma.shardAxis >= argType.getRank())
        return func.emitError()
               << "weight argument #" << i << " is split along axis "
               << ma.shardAxis << " but has rank " << argType.getRank();
      for (unsigned r = 0; r < shard.getRanks().size(); ++r)
        ma.shardRanges.emplace_back(shard.getRanges(r).begin(),
                                    shard.getRanges(r).end());
      if (shard.getLocalSize() != argType.getDimSize(ma.shardAxis))
        return func.emitError()
               << "weight argument #" << i << " has " << argType
               << " but its ranks read " << shard.getLocalSize()
               << " elements along axis " << ma.shardAxis;
    }
    // Several arguments may read parts of one tensor; the same part twice is
    // an error.
    auto [pos, inserted] = seen.try_emplace(getBindingKey(ma), i);
    if (!inserted)
      return func.emitError()
             << "weight arguments #" << pos->second << " and #" << i
             << " are both bound to '" << ma.weightName << "'";
    sig.args.push_back(std::move(ma));
  }
  return sig;
}

std::vector<int64_t> ModelArgument::fullShape() const {
  std::vector<int64_t> shape(type.getShape().begin(), type.getShape().end());
  if (shardAxis >= 0) {
    int64_t end = 0;
    for (const std::vector<int64_t> &ranges : shardRanges)
      for (size_t i = 1; i < ranges.size(); i += 2)
        end = std::max(end, ranges[i]);
    shape[shardAxis] = end;
  }
  return shape;
}

PagedArguments blockc::getPagedArguments(func::FuncOp func) {
  PagedArguments result;
  if (!func)
    return result;
  for (BlockArgument arg : func.getArguments()) {
    unsigned i = arg.getArgNumber();
    if (func.getArgAttr(i, TransformerDialect::kSeqOffsetsAttr))
      result.cuSeqlens = i;
    if (func.getArgAttr(i, TransformerDialect::kSeqPositionsAttr))
      result.seqPositions = i;
    if (func.getArgAttr(i, TransformerDialect::kBlockTableAttr))
      result.blockTable = i;
    auto pageSize = func.getArgAttrOfType<IntegerAttr>(
        i, TransformerDialect::kPageSizeAttr);
    auto kind = func.getArgAttrOfType<transformer::KVCacheKindAttr>(
        i, TransformerDialect::kKVCacheAttr);
    if (!pageSize || !kind)
      continue;
    PagedPoolArgument pool;
    pool.argNumber = i;
    pool.type = cast<RankedTensorType>(arg.getType());
    if (auto layer = func.getArgAttrOfType<IntegerAttr>(
            i, TransformerDialect::kLayerAttr))
      pool.layer = layer.getInt();
    pool.isKey = kind.getValue() == transformer::KVCacheKind::key;
    result.pools.push_back(pool);
    result.pageSize = pageSize.getInt();
  }
  return result;
}

SmallVector<KVCacheArgument> blockc::getKVCacheArguments(func::FuncOp func) {
  SmallVector<KVCacheArgument> result;
  for (BlockArgument arg : func.getArguments()) {
    unsigned i = arg.getArgNumber();
    // Page pools (a paged entry's) are read by getPagedArguments.
    if (!func.getArgAttr(i, TransformerDialect::kKVCacheAttr) ||
        func.getArgAttr(i, TransformerDialect::kPageSizeAttr))
      continue;
    auto layout = func.getArgAttrOfType<transformer::KVLayoutAttr>(
        i, TransformerDialect::kKVLayoutAttr);
    result.push_back(
        {i, cast<RankedTensorType>(arg.getType()),
         layout && layout.getValue() == transformer::KVLayout::bhsd});
  }
  return result;
}
