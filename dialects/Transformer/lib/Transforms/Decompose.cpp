//===- Decompose.cpp - decompose composite transformer ops ----------------===//
//
// Rewrites transformer.block into norms, sub-layers and residual adds, and
// the attention and FFN sub-layers into primitive ops (linear, rope, sdpa,
// activation) plus head reshapes. The result is still value-semantic
// tensor IR in the `transformer`, `tensor` and `arith` dialects.
//
//===----------------------------------------------------------------------===//

#include "blockc/Dialect/Transformer/IR/TransformerOps.h"
#include "blockc/Dialect/Transformer/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace blockc::transformer {
#define GEN_PASS_DEF_TRANSFORMERDECOMPOSEPASS
#include "blockc/Dialect/Transformer/Transforms/Passes.h.inc"
} // namespace blockc::transformer

using namespace mlir;
using namespace blockc::transformer;

namespace {

/// Builds the block's norm (RMSNorm or LayerNorm) of `x`.
Value buildNorm(PatternRewriter &rewriter, Location loc, BlockOp op, Value x,
                Value weight, Value bias) {
  if (op.getNorm() == NormKind::layer)
    return LayerNormOp::create(rewriter, loc, x.getType(), x, weight, bias,
                               op.getEpsilonAttr());
  return RMSNormOp::create(rewriter, loc, x.getType(), x, weight,
                           op.getEpsilonAttr());
}

struct DecomposeBlock : OpRewritePattern<BlockOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(BlockOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Type type = op.getType();
    auto attention = [&](Value in) -> Value {
      return AttentionOp::create(
          rewriter, loc, type, in, op.getWQ(), op.getBQ(), op.getWK(),
          op.getBK(), op.getWV(), op.getBV(), op.getWO(), op.getBO(),
          op.getNumHeadsAttr(), op.getNumKvHeadsAttr(), op.getHeadDimAttr(),
          op.getCausalAttr(), op.getRopeAttr(), op.getRopeThetaAttr(),
          /*scale=*/FloatAttr(), op.getWeightQuantAttr());
    };
    auto ffn = [&](Value in) -> Value {
      return FFNOp::create(rewriter, loc, type, in, op.getWGate(),
                           op.getBGate(), op.getWUp(), op.getBUp(),
                           op.getWDown(), op.getBDown(), op.getActivationAttr(),
                           op.getWeightQuantAttr());
    };
    auto add = [&](Value a, Value b) -> Value {
      return ResidualAddOp::create(rewriter, loc, a, b);
    };
    // A tensor-parallel block (transformer-tensor-parallel) sums each rank's
    // partial attention and FFN outputs over the grid before the residual.
    auto grid = op->getAttrOfType<FlatSymbolRefAttr>(
        TransformerDialect::kAllReduceOverAttr);
    auto reduced = [&](Value partial) -> Value {
      if (!grid)
        return partial;
      return shard::AllReduceOp::create(rewriter, loc, partial.getType(),
                                        grid.getValue(), ArrayRef<int16_t>{0},
                                        partial);
    };
    Value x = op.getInput();
    Value result;
    if (op.isPreNorm()) {
      Value h = add(x, reduced(attention(buildNorm(rewriter, loc, op, x,
                                                   op.getAttnNormWeight(),
                                                   op.getAttnNormBias()))));
      result = add(
          h, reduced(ffn(buildNorm(rewriter, loc, op, h, op.getFfnNormWeight(),
                                   op.getFfnNormBias()))));
    } else {
      Value h = buildNorm(rewriter, loc, op, add(x, reduced(attention(x))),
                          op.getAttnNormWeight(), op.getAttnNormBias());
      result = buildNorm(rewriter, loc, op, add(h, reduced(ffn(h))),
                         op.getFfnNormWeight(), op.getFfnNormBias());
    }
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// [B, T, N*D] -> [B, T, N, D].
Value splitHeads(PatternRewriter &rewriter, Location loc, Value v,
                 int64_t numHeads, int64_t headDim) {
  auto type = cast<RankedTensorType>(v.getType());
  auto headType = RankedTensorType::get(
      {type.getDimSize(0), type.getDimSize(1), numHeads, headDim},
      type.getElementType());
  SmallVector<ReassociationIndices> reassoc = {{0}, {1}, {2, 3}};
  return tensor::ExpandShapeOp::create(rewriter, loc, headType, v, reassoc);
}

/// [B, T, N, D] -> [B, T, N*D].
Value mergeHeads(PatternRewriter &rewriter, Location loc, Value v) {
  SmallVector<ReassociationIndices> reassoc = {{0}, {1}, {2, 3}};
  return tensor::CollapseShapeOp::create(rewriter, loc, v, reassoc);
}

/// A projection of a composite, with the composite's weight quantisation.
Value buildLinear(PatternRewriter &rewriter, Location loc, Value x, Value w,
                  Value b, WeightQuantAttr quant) {
  auto linear = LinearOp::create(rewriter, loc, x, w, b);
  if (quant)
    linear.setWeightQuantAttr(quant);
  return linear;
}

struct DecomposeAttention : OpRewritePattern<AttentionOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(AttentionOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    int64_t h = op.getNumHeads(), hkv = op.getNumKvHeads(), d = op.getHeadDim();
    Value x = op.getInput();
    Value q = buildLinear(rewriter, loc, x, op.getWQ(), op.getBQ(),
                          op.getWeightQuantAttr());
    Value k = buildLinear(rewriter, loc, x, op.getWK(), op.getBK(),
                          op.getWeightQuantAttr());
    Value v = buildLinear(rewriter, loc, x, op.getWV(), op.getBV(),
                          op.getWeightQuantAttr());
    q = splitHeads(rewriter, loc, q, h, d);
    k = splitHeads(rewriter, loc, k, hkv, d);
    v = splitHeads(rewriter, loc, v, hkv, d);
    if (std::optional<RoPELayout> layout = op.getRope()) {
      auto layoutAttr = RoPELayoutAttr::get(op.getContext(), *layout);
      q = RoPEOp::create(rewriter, loc, q.getType(), q,
                         /*position_offset=*/Value(),
                         /*positions=*/Value(), op.getRopeThetaAttr(),
                         layoutAttr, /*rotary_dim=*/IntegerAttr());
      k = RoPEOp::create(rewriter, loc, k.getType(), k,
                         /*position_offset=*/Value(),
                         /*positions=*/Value(), op.getRopeThetaAttr(),
                         layoutAttr, /*rotary_dim=*/IntegerAttr());
    }
    Value o = SDPAOp::create(rewriter, loc, q.getType(), q, k, v,
                             op.getCausalAttr(), op.getScaleAttr());
    o = mergeHeads(rewriter, loc, o);
    Value result = buildLinear(rewriter, loc, o, op.getWO(), op.getBO(),
                               op.getWeightQuantAttr());
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct DecomposeFFN : OpRewritePattern<FFNOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(FFNOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = op.getInput();
    Value up = buildLinear(rewriter, loc, x, op.getWUp(), op.getBUp(),
                           op.getWeightQuantAttr());
    Value hidden;
    if (op.isGated()) {
      Value gate = buildLinear(rewriter, loc, x, op.getWGate(), op.getBGate(),
                               op.getWeightQuantAttr());
      Value act = ActivationOp::create(rewriter, loc, gate.getType(),
                                       op.getActivationAttr(), gate);
      hidden = arith::MulFOp::create(rewriter, loc, act, up);
    } else {
      hidden = ActivationOp::create(rewriter, loc, up.getType(),
                                    op.getActivationAttr(), up);
    }
    Value result = buildLinear(rewriter, loc, hidden, op.getWDown(),
                               op.getBDown(), op.getWeightQuantAttr());
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct TransformerDecomposePass
    : blockc::transformer::impl::TransformerDecomposePassBase<
          TransformerDecomposePass> {
  using Base::Base;

  void runOnOperation() override {
    bool all = composites == DecomposeComposites::all;
    RewritePatternSet patterns(&getContext());
    populateDecomposeBlockPatterns(patterns);
    if (all)
      populateDecomposeSubLayerPatterns(patterns);
    FrozenRewritePatternSet frozen(std::move(patterns));

    // Count up front; with composites=all, every block also yields one
    // attention and one FFN sub-layer that are decomposed in turn.
    getOperation()->walk([&](Operation *op) {
      if (isa<BlockOp>(op))
        numDecomposed += all ? 3 : 1;
      else if (all && isa<AttentionOp, FFNOp>(op))
        ++numDecomposed;
    });
    GreedyRewriteConfig config;
    config.setUseTopDownTraversal(true);
    if (failed(applyPatternsGreedily(getOperation(), frozen, config)))
      return signalPassFailure();
  }
};

} // namespace

void blockc::transformer::populateDecomposeBlockPatterns(
    RewritePatternSet &patterns) {
  patterns.add<DecomposeBlock>(patterns.getContext());
}

void blockc::transformer::populateDecomposeSubLayerPatterns(
    RewritePatternSet &patterns) {
  patterns.add<DecomposeAttention, DecomposeFFN>(patterns.getContext());
}
