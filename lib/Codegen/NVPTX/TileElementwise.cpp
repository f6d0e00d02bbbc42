//===- TileElementwise.cpp - elementwise kernels with 16-byte accesses ----===//
//
// Rewrites all-parallel linalg ops on buffers (RoPE, roundings, widenings,
// copies) whose output is written along its innermost loop into a
// gpu.launch in which each thread computes a run of elements that is 16
// bytes of the narrowest operand: one vector load per operand that reads
// that loop contiguously (also at a rotated offset, RoPE's x[i + D / 2])
// and one vector store, where a host check allows; element by element
// otherwise. See Codegen/NVPTX/Passes.td (GPUTileElementwisePass) and
// docs/GPU.md (the elementwise kernels).
//
//===----------------------------------------------------------------------===//

#include "EpilogueFusion.h"
#include "blockc/Codegen/NVPTX/KernelBuilder.h"
#include "blockc/Codegen/NVPTX/Passes.h"
#include "blockc/Dialect/Codegen/IR/CodegenDialect.h"

#include "mlir/Dialect/Affine/Utils.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/PatternMatch.h"

namespace blockc::nvptx {
#define GEN_PASS_DEF_GPUTILEELEMENTWISEPASS
#include "blockc/Codegen/NVPTX/Passes.h.inc"
} // namespace blockc::nvptx

using namespace mlir;
using namespace blockc::codegen;

namespace {

/// How an operand's last index reads loop `d` (the innermost): `(d + shift)
/// mod modulus`, or `d` itself (modulus 0).
struct InnermostRead {
  int64_t shift = 0;
  int64_t modulus = 0;
};

std::optional<InnermostRead> matchInnermostRead(AffineExpr e, unsigned d) {
  if (auto dim = dyn_cast<AffineDimExpr>(e)) {
    if (dim.getPosition() != d)
      return std::nullopt;
    return InnermostRead{};
  }
  auto mod = dyn_cast<AffineBinaryOpExpr>(e);
  if (!mod || mod.getKind() != AffineExprKind::Mod)
    return std::nullopt;
  auto modulus = dyn_cast<AffineConstantExpr>(mod.getRHS());
  if (!modulus || modulus.getValue() <= 0)
    return std::nullopt;
  AffineExpr lhs = mod.getLHS();
  int64_t shift = 0;
  if (auto add = dyn_cast<AffineBinaryOpExpr>(lhs);
      add && add.getKind() == AffineExprKind::Add) {
    auto c = dyn_cast<AffineConstantExpr>(add.getRHS());
    if (!c)
      return std::nullopt;
    shift = c.getValue();
    lhs = add.getLHS();
  }
  auto dim = dyn_cast<AffineDimExpr>(lhs);
  if (!dim || dim.getPosition() != d)
    return std::nullopt;
  return InnermostRead{shift, modulus.getValue()};
}

/// The bytes of an element of the buffer `operand` when the operand can be
/// read or written by vectors along the innermost loop of `op`: a strided
/// buffer of 16-, 32- or 64-bit integers or floats whose last index reads
/// that loop (matchInnermostRead) and whose other indices do not. 0
/// otherwise.
int64_t vectorElementBytes(linalg::GenericOp op, OpOperand &operand) {
  auto type = dyn_cast<MemRefType>(operand.get().getType());
  if (!type || type.getRank() == 0 || !type.isStrided())
    return 0;
  Type element = type.getElementType();
  if (!isa<FloatType, IntegerType>(element))
    return 0;
  unsigned bits = element.getIntOrFloatBitWidth();
  if (bits != 16 && bits != 32 && bits != 64)
    return 0;
  unsigned d = op.getNumLoops() - 1;
  AffineMap map = op.getMatchingIndexingMap(&operand);
  if (!matchInnermostRead(map.getResults().back(), d) ||
      map.dropResult(map.getNumResults() - 1).isFunctionOfDim(d))
    return 0;
  return bits / 8;
}

/// The 16-byte path of `op`: elements per thread and the operands it reads
/// or writes by vectors (the output always). `width` 0: no vector path.
struct ElementwisePlan {
  int64_t width = 0;
  SmallVector<OpOperand *> vectorOperands;
};

/// What blockc-gpu-tile-elementwise rewrites: an all-parallel generic on
/// buffers outside kernels, with one output, a body without memory
/// effects and an output that takes vectors; the width is 16 bytes of the
/// narrowest vector operand, and a static innermost size must be a
/// multiple of it. Inputs that read the innermost loop otherwise (or at a
/// rotation the width does not divide) are read element by element.
ElementwisePlan planElementwise(linalg::GenericOp op) {
  unsigned n = op.getNumLoops();
  if (!op.hasPureBufferSemantics() || n == 0 || op.getNumDpsInits() != 1 ||
      op.getNumParallelLoops() != n || !blockc::nvptx::hasPureBody(op) ||
      op->getParentOfType<gpu::LaunchOp>() ||
      op->getParentOfType<gpu::GPUFuncOp>())
    return {};
  OpOperand *out = op.getDpsInitOperand(0);
  int64_t outBytes = vectorElementBytes(op, *out);
  if (!outBytes ||
      matchInnermostRead(op.getMatchingIndexingMap(out).getResults().back(),
                         n - 1)
          ->modulus)
    return {};
  SmallVector<OpOperand *> candidates;
  int64_t minBytes = outBytes;
  for (OpOperand *input : op.getDpsInputOperands()) {
    if (op.getMatchingBlockArgument(input).use_empty())
      continue;
    if (int64_t bytes = vectorElementBytes(op, *input)) {
      candidates.push_back(input);
      minBytes = std::min(minBytes, bytes);
    }
  }
  ElementwisePlan plan;
  plan.width = 16 / minBytes;
  int64_t length = op.getStaticLoopRanges().back();
  if (!ShapedType::isDynamic(length) && length % plan.width)
    return {};
  for (OpOperand *input : candidates) {
    InnermostRead read = *matchInnermostRead(
        op.getMatchingIndexingMap(input).getResults().back(), n - 1);
    if (read.modulus && (read.modulus % plan.width || read.shift % plan.width))
      continue;
    plan.vectorOperands.push_back(input);
  }
  plan.vectorOperands.push_back(out);
  return plan;
}

/// Builds the kernel of one elementwise generic.
struct ElementwiseKernel : blockc::nvptx::KernelBuilder {
  linalg::GenericOp op;
  ElementwisePlan plan;
  int64_t threads;
  /// Set while the kernel is built (host values): the loop sizes and the
  /// vector operands' views.
  SmallVector<Value> sizes;
  DenseMap<OpOperand *, Value> views;

  ElementwiseKernel(OpBuilder &b, linalg::GenericOp op, ElementwisePlan plan,
                    int64_t threads)
      : KernelBuilder{b, op.getLoc()}, op(op), plan(std::move(plan)),
        threads(threads) {}

  /// The indices of `operand` at loop indices `iv`, through its map.
  SmallVector<Value> indicesAt(OpOperand &operand, ArrayRef<Value> iv) {
    return *affine::expandAffineMap(b, loc, op.getMatchingIndexingMap(&operand),
                                    iv);
  }

  /// The value of `operand` at loop indices `iv`: a load, or the operand
  /// itself when it is not a buffer.
  Value loadAt(OpOperand &operand, ArrayRef<Value> iv) {
    if (!isa<MemRefType>(operand.get().getType()))
      return operand.get();
    return memref::LoadOp::create(b, loc, operand.get(),
                                  indicesAt(operand, iv));
  }

  /// `linear` split into indices over `dims` (the last the fastest).
  SmallVector<Value> delinearize(Value linear, ArrayRef<Value> dims) {
    SmallVector<Value> iv(dims.size());
    for (size_t d = dims.size(); d-- > 1;) {
      iv[d] = arith::RemUIOp::create(b, loc, linear, dims[d]);
      linear = arith::DivUIOp::create(b, loc, linear, dims[d]);
    }
    iv[0] = linear;
    return iv;
  }

  /// The vector path of chunk `c` (< rows * length / width): the `width`
  /// elements of row `c / (length / width)` from `width * (c mod (length /
  /// width))` on, one vector access per vector operand.
  void vectorChunk(Value c, Value vectorsPerRow) {
    unsigned n = op.getNumLoops();
    int64_t w = plan.width;
    SmallVector<Value> iv = {};
    if (n > 1)
      iv = delinearize(arith::DivUIOp::create(b, loc, c, vectorsPerRow),
                       ArrayRef<Value>(sizes).drop_back());
    Value k = mul(arith::RemUIOp::create(b, loc, c, vectorsPerRow), idx(w));
    iv.push_back(k);
    DenseMap<OpOperand *, SmallVector<Value>> elements;
    OpOperand *out = op.getDpsInitOperand(0);
    for (OpOperand *operand : plan.vectorOperands)
      if (!op.getMatchingBlockArgument(operand).use_empty())
        elements[operand] =
            loadVector(views.lookup(operand), indicesAt(*operand, iv), w);
    // Inputs that do not depend on the innermost loop: once per chunk.
    DenseMap<OpOperand *, Value> rowValues;
    for (OpOperand *input : op.getDpsInputOperands())
      if (!elements.count(input) &&
          !op.getMatchingBlockArgument(input).use_empty() &&
          !op.getMatchingIndexingMap(input).isFunctionOfDim(n - 1))
        rowValues[input] = loadAt(*input, iv);
    SmallVector<Value> values;
    for (int64_t j = 0; j < w; ++j) {
      SmallVector<Value> at(iv);
      at[n - 1] = j ? add(k, idx(j)) : k;
      values.push_back(blockc::nvptx::evaluateGenericAt(
          b, loc, op, at, [&](OpOperand &operand) -> Value {
            auto it = elements.find(&operand);
            if (it != elements.end())
              return it->second[j];
            if (Value v = rowValues.lookup(&operand))
              return v;
            return loadAt(operand, at);
          }));
    }
    storeVector(values, views.lookup(out), indicesAt(*out, iv));
  }

  /// The scalar path of element `e` (< the product of the sizes).
  void scalarElement(Value e) {
    SmallVector<Value> iv = delinearize(e, sizes);
    Value v = blockc::nvptx::evaluateGenericAt(
        b, loc, op, iv,
        [&](OpOperand &operand) -> Value { return loadAt(operand, iv); });
    OpOperand *out = op.getDpsInitOperand(0);
    memref::StoreOp::create(b, loc, v, out->get(), indicesAt(*out, iv));
  }

  void build() {
    unsigned n = op.getNumLoops();
    int64_t w = plan.width;
    for (Range r :
         cast<linalg::LinalgOp>(op.getOperation()).createLoopRanges(b, loc))
      sizes.push_back(getValueOrCreateConstantIndexOp(b, loc, r.size));
    Value rows = idx(1);
    for (unsigned d = 0; d + 1 < n; ++d)
      rows = mul(rows, sizes[d]);
    Value length = sizes.back();
    Value total = mul(rows, length);
    Value ok = eq(rem(length, w), 0);
    // One check and view per buffer (RoPE reads x twice).
    DenseMap<Value, Value> viewOf;
    for (OpOperand *operand : plan.vectorOperands) {
      Value &view = viewOf[operand->get()];
      if (!view)
        view = contiguousView(operand->get(), w, ok);
      views[operand] = view;
    }
    Value vectorsPerRow =
        arith::CeilDivUIOp::create(b, loc, length, idx(w)).getResult();
    Value chunks = mul(rows, vectorsPerRow);
    Value one = idx(1);
    auto launch = gpu::LaunchOp::create(
        b, loc,
        arith::CeilDivUIOp::create(b, loc, chunks, idx(threads)).getResult(),
        one, one, idx(threads), one, one);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&launch.getBody().front());
    Value tid = launch.getThreadIds().x;
    Value first = mul(launch.getBlockIds().x, idx(threads));
    auto path = scf::IfOp::create(b, loc, ok, /*withElse=*/true);
    // 16 bytes: thread t of the block computes chunk first + t.
    b.setInsertionPointToStart(path.thenBlock());
    Value c = add(first, tid);
    auto inRange = scf::IfOp::create(b, loc, lt(c, chunks), false);
    b.setInsertionPointToStart(inRange.thenBlock());
    vectorChunk(c, vectorsPerRow);
    // Element by element: the block's `threads * w` elements from
    // `first * w` on, consecutive threads on consecutive elements.
    b.setInsertionPointToStart(path.elseBlock());
    scf::ForOp::create(
        b, loc, idx(0), idx(w), one, ValueRange{},
        [&](OpBuilder &nb, Location, Value j, ValueRange) {
          OpBuilder::InsertionGuard g(b);
          b.setInsertionPoint(nb.getInsertionBlock(), nb.getInsertionPoint());
          Value e = add(add(mul(first, idx(w)), mul(j, idx(threads))), tid);
          auto in = scf::IfOp::create(b, loc, lt(e, total), false);
          b.setInsertionPointToStart(in.thenBlock());
          scalarElement(e);
          b.setInsertionPointAfter(in);
          scf::YieldOp::create(b, loc);
        });
    b.setInsertionPointToEnd(&launch.getBody().front());
    gpu::TerminatorOp::create(b, loc);
  }
};

struct GPUTileElementwisePass
    : blockc::nvptx::impl::GPUTileElementwisePassBase<GPUTileElementwisePass> {
  using Base::Base;

  void runOnOperation() override {
    // Copies (a decode step's K/V rows into the caches) as generics.
    SmallVector<linalg::CopyOp> copies;
    getOperation().walk([&](linalg::CopyOp copy) {
      if (copy.hasPureBufferSemantics() &&
          !copy->getParentOfType<gpu::LaunchOp>())
        copies.push_back(copy);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::CopyOp copy : copies) {
      rewriter.setInsertionPoint(copy);
      (void)linalg::generalizeNamedOp(rewriter, copy);
    }
    SmallVector<std::pair<linalg::GenericOp, ElementwisePlan>> ops;
    getOperation().walk([&](linalg::GenericOp op) {
      ElementwisePlan plan = planElementwise(op);
      if (plan.width)
        ops.push_back({op, std::move(plan)});
    });
    if (ops.empty())
      return;
    auto map = getOperation()->getAttrOfType<GPUMapAttr>(
        CodegenDialect::kGpuMapAttrName);
    if (!map) {
      getOperation().emitError()
          << "blockc-gpu-tile-elementwise: @" << getOperation().getName()
          << " has elementwise ops and no '" << CodegenDialect::kGpuMapAttrName
          << "' (run blockc-gpu-select-tiles first)";
      return signalPassFailure();
    }
    OpBuilder b(&getContext());
    for (auto &[op, plan] : ops) {
      b.setInsertionPoint(op);
      ElementwiseKernel(b, op, std::move(plan),
                        map.getThreadsX() * map.getThreadsY())
          .build();
      op->erase();
      ++numTiled;
    }
  }
};

} // namespace
