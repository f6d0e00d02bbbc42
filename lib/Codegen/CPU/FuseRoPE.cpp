//===- FuseRoPE.cpp - RoPE into the epilogue of Q/K projection kernels ----===//
//
// See Codegen/CPU/Passes.td (CPUFuseRoPEPass).
//
//===----------------------------------------------------------------------===//

#include "TileEpilogue.h"
#include "blockc/Codegen/CPU/Passes.h"
#include "blockc/Codegen/Common/KernelToolkit.h"
#include "blockc/Codegen/Common/RoPE.h"
#include "blockc/Dialect/Codegen/IR/CodegenDialect.h"
#include "blockc/Dialect/Transformer/IR/TransformerOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Dominance.h"

#include <tuple>

namespace blockc::cpu {
#define GEN_PASS_DEF_CPUFUSEROPEPASS
#include "blockc/Codegen/CPU/Passes.h.inc"
} // namespace blockc::cpu

using namespace mlir;
using namespace blockc::transformer;
using blockc::codegen::CodegenDialect;

namespace {

struct RotationBuilder : blockc::KernelToolkit {
  VectorType vec;
  blockc::RoPEShape shape;
  Value cosTable, sinTable; // [T, D]

  Value read(Value source, ValueRange at) {
    Value pad = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0.0f));
    return vector::TransferReadOp::create(b, loc, vec, source, at, pad,
                                          ArrayRef<bool>{true});
  }
  Value write(Value v, Value dest, ValueRange at) {
    return vector::TransferWriteOp::create(b, loc, v, dest, at,
                                           ArrayRef<bool>{true})
        .getResult();
  }

  /// x * c + p * s, as the linalg lowering of transformer.rope computes it.
  Value rotate(Value x, Value p, Value c, Value s) {
    return arith::AddFOp::create(b, loc, arith::MulFOp::create(b, loc, x, c),
                                 arith::MulFOp::create(b, loc, p, s));
  }

  /// Rotates every head of `tile` ([B, T, w], w a multiple of D, the block's
  /// first column a multiple of D).
  Value build(Value tile) {
    int64_t d = shape.headDim, r = shape.rotary, v = vec.getNumElements();
    Value c0 = idx(0);
    Value bDim = tensor::DimOp::create(b, loc, tile, 0);
    Value tDim = tensor::DimOp::create(b, loc, tile, 1);
    Value wDim = tensor::DimOp::create(b, loc, tile, 2);
    return forOne(c0, bDim, 1, tile, [&](Value bi, Value t1) {
      return forOne(c0, tDim, 1, t1, [&](Value ti, Value t2) {
        return forOne(c0, wDim, d, t2, [&](Value h0, Value t3) {
          if (shape.interleaved) {
            // Pairs (2i, 2i + 1) lie in one vector: the partner vector is
            // the vector with each pair swapped.
            SmallVector<int64_t> swap;
            for (int64_t l = 0; l < v; ++l)
              swap.push_back(l ^ 1);
            return forOne(c0, idx(r), v, t3, [&](Value j0, Value t4) {
              SmallVector<Value> at = {bi, ti, add(h0, j0)};
              Value x = read(t4, at);
              Value p = vector::ShuffleOp::create(b, loc, x, x, swap);
              Value c = read(cosTable, {ti, j0});
              Value s = read(sinTable, {ti, j0});
              return write(rotate(x, p, c, s), t4, at);
            });
          }
          // Half layout: the vector at j0 < R/2 and its partner at j0 + R/2.
          int64_t half = r / 2;
          return forOne(c0, idx(half), v, t3, [&](Value j0, Value t4) {
            Value jHi = add(j0, idx(half));
            SmallVector<Value> atLo = {bi, ti, add(h0, j0)};
            SmallVector<Value> atHi = {bi, ti, add(h0, jHi)};
            Value lo = read(t4, atLo), hi = read(t4, atHi);
            Value newLo = rotate(lo, hi, read(cosTable, {ti, j0}),
                                 read(sinTable, {ti, j0}));
            Value newHi = rotate(hi, lo, read(cosTable, {ti, jHi}),
                                 read(sinTable, {ti, jHi}));
            return write(newHi, write(newLo, t4, atLo), atHi);
          });
        });
      });
    });
  }
};

struct CPUFuseRoPEPass
    : blockc::cpu::impl::CPUFuseRoPEPassBase<CPUFuseRoPEPass> {
  using Base::Base;

  /// The kernel and the expand_shape whose rope `rope` can become the
  /// kernel's epilogue, for vectors of `width` lanes.
  static std::pair<scf::ForallOp, tensor::ExpandShapeOp>
  match(RoPEOp rope, int64_t width, DominanceInfo &dom) {
    auto expand = rope.getInput().getDefiningOp<tensor::ExpandShapeOp>();
    if (!expand || !expand->hasOneUse() || expand.getSrcType().getRank() != 3)
      return {};
    SmallVector<ReassociationIndices> groups = expand.getReassociationIndices();
    if (groups.size() != 3 || groups[0] != ReassociationIndices{0} ||
        groups[1] != ReassociationIndices{1} ||
        groups[2] != ReassociationIndices{2, 3})
      return {};
    Value u = expand.getSrc();
    auto forall = u.getDefiningOp<scf::ForallOp>();
    // u's other uses may only read its shape (the rotation keeps it).
    if (!forall || !blockc::cpu::isLinearKernel(forall) ||
        !llvm::all_of(u.getUsers(),
                      [&](Operation *user) {
                        return user == expand.getOperation() ||
                               isa<tensor::DimOp>(user);
                      }) ||
        !rope.getType().getElementType().isF32())
      return {};
    auto tiles = forall->getAttrOfType<blockc::codegen::LinearTilesAttr>(
        CodegenDialect::kLinearTilesAttrName);
    int64_t d = rope.getType().getDimSize(3);
    int64_t r = rope.getRotaryDimOrHeadDim();
    if (!tiles || ShapedType::isDynamic(d) || tiles.getBlockAlign() % d != 0)
      return {};
    bool interleaved = rope.getLayout() == RoPELayout::interleaved;
    if (interleaved ? (r % width != 0 || width % 2 != 0)
                    : ((r / 2) % width != 0))
      return {};
    Value offset = rope.getPositionOffset();
    if (offset && !dom.properlyDominates(offset, forall))
      return {};
    Value positions = rope.getPositions();
    if (positions && !dom.properlyDominates(positions, forall))
      return {};
    return {forall, expand};
  }

  void runOnOperation() override {
    SmallVector<RoPEOp> ropes;
    getOperation().walk([&](RoPEOp op) { ropes.push_back(op); });
    if (ropes.empty())
      return;
    DominanceInfo &dom = getAnalysis<DominanceInfo>();
    blockc::cpu::LazyVectorWidth targetWidth(getOperation(),
                                             "blockc-cpu-fuse-rope");
    // Tables already built for a kernel (Q and K of one group share them):
    // keyed by the kernel, the position offset and the rope's geometry.
    using TableKey =
        std::tuple<Operation *, Value, int64_t, int64_t, bool, double>;
    SmallVector<std::pair<TableKey, std::pair<Value, Value>>> tables;
    for (RoPEOp rope : ropes) {
      // Only a rope whose input comes from a kernel needs the target.
      auto expand = rope.getInput().getDefiningOp<tensor::ExpandShapeOp>();
      if (!expand ||
          !blockc::cpu::isLinearKernel(expand.getSrc().getDefiningOp()))
        continue;
      FailureOr<int64_t> width = targetWidth.get();
      if (failed(width))
        return signalPassFailure();
      auto [forall, matched] = match(rope, *width, dom);
      if (!forall)
        continue;
      auto result = cast<OpResult>(matched.getSrc());
      auto yielding = forall.getTerminator().getYieldingOps();
      if (static_cast<size_t>(llvm::range_size(yielding)) !=
          forall.getNumResults())
        continue;
      auto insert = dyn_cast<tensor::ParallelInsertSliceOp>(
          *std::next(yielding.begin(), result.getResultNumber()));
      if (!insert)
        continue;

      blockc::RoPEShape shape{rope.getType().getDimSize(3),
                              rope.getRotaryDimOrHeadDim(),
                              rope.getLayout() == RoPELayout::interleaved,
                              rope.getTheta().convertToDouble()};
      // The tables, once per kernel, before it (T from the kernel's
      // output: every output of a projection kernel is [B, T, N]).
      OpBuilder b(forall);
      Location loc = rope.getLoc();
      // The offset and the per-token positions are exclusive: either
      // keys the tables.
      Value positionSource = rope.getPositionOffset();
      if (!positionSource)
        positionSource = rope.getPositions();
      TableKey key{forall.getOperation(), positionSource,    shape.headDim,
                   shape.rotary,          shape.interleaved, shape.theta};
      auto it =
          llvm::find_if(tables, [&](const auto &t) { return t.first == key; });
      if (it == tables.end()) {
        tables.push_back(
            {key, blockc::buildRoPETables(b, loc, shape, forall.getOutputs()[0],
                                          /*tDim=*/1, rope.getPositionOffset(),
                                          rope.getPositions())});
        it = std::prev(tables.end());
      }
      auto [cosTable, sinTable] = it->second;
      b.setInsertionPoint(forall.getTerminator());
      RotationBuilder rb{{b, loc},
                         VectorType::get({*width}, b.getF32Type()),
                         shape,
                         cosTable,
                         sinTable};
      insert.getSourceMutable().assign(rb.build(insert.getSource()));
      rope.getResult().replaceAllUsesWith(matched.getResult());
      rope->erase();
      ++numFused;
    }
  }
};

} // namespace
