//===- KernelMatchers.cpp - what the NVPTX kernel passes rewrite ----------===//
//
// The matchers shared by the kernel passes and blockc-gpu-select-tiles. See
// KernelMatchers.h.
//
//===----------------------------------------------------------------------===//

#include "blockc/Codegen/NVPTX/KernelMatchers.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"

using namespace mlir;

namespace {

/// True if the body of `op` is `yield out + in0 * in1` (either order).
bool isMulAddBody(linalg::LinalgOp op) {
  Block *body = op.getBlock();
  if (body->getOperations().size() != 3)
    return false;
  auto mul = dyn_cast<arith::MulFOp>(&body->front());
  auto add =
      dyn_cast_or_null<arith::AddFOp>(mul ? mul->getNextNode() : nullptr);
  auto yield = dyn_cast<linalg::YieldOp>(body->getTerminator());
  if (!mul || !add || !yield || yield.getValues().size() != 1 ||
      yield.getValues()[0] != add.getResult())
    return false;
  Value a0 = body->getArgument(0), a1 = body->getArgument(1),
        acc = body->getArgument(2);
  bool mulOk = (mul.getLhs() == a0 && mul.getRhs() == a1) ||
               (mul.getLhs() == a1 && mul.getRhs() == a0);
  bool addOk = (add.getLhs() == acc && add.getRhs() == mul.getResult()) ||
               (add.getRhs() == acc && add.getLhs() == mul.getResult());
  return mulOk && addOk;
}

/// The inputs of a body `out + x * y` where x and y are the block's two
/// input arguments, each read directly or through one arith.extf, in
/// operand order; null values if the body is anything else.
std::pair<Value, Value> mulAddOperands(linalg::LinalgOp op) {
  Block *body = op.getBlock();
  auto yield = dyn_cast<linalg::YieldOp>(body->getTerminator());
  if (!yield || yield.getValues().size() != 1)
    return {};
  auto add = yield.getValues()[0].getDefiningOp<arith::AddFOp>();
  Value acc = body->getArgument(2);
  if (!add || add->getBlock() != body)
    return {};
  Value product = add.getLhs() == acc   ? add.getRhs()
                  : add.getRhs() == acc ? add.getLhs()
                                        : Value();
  auto mul = product ? product.getDefiningOp<arith::MulFOp>() : nullptr;
  if (!mul || mul->getBlock() != body)
    return {};
  int64_t extensions = 0;
  auto strip = [&](Value v) {
    if (auto ext = v.getDefiningOp<arith::ExtFOp>()) {
      ++extensions;
      return ext.getIn();
    }
    return v;
  };
  Value x = strip(mul.getLhs()), y = strip(mul.getRhs());
  Value a0 = body->getArgument(0), a1 = body->getArgument(1);
  // Nothing else in the body: add, mul, the extensions and the yield.
  if (static_cast<int64_t>(body->getOperations().size()) != 3 + extensions)
    return {};
  if (x == a0 && y == a1)
    return {mul.getLhs(), mul.getRhs()};
  if (x == a1 && y == a0)
    return {mul.getRhs(), mul.getLhs()};
  return {};
}

bool isSixteenBitFloat(Type type) { return type.isBF16() || type.isF16(); }

/// The contraction shape both tensor-core matchers need: one N and one K
/// dimension, M non-empty, projected-permutation maps, K the fastest index
/// of both inputs with a static size that is a multiple of 16, and a
/// ranked (buffer or tensor) f32 output. On buffers, identity layouts.
bool hasTensorCoreShape(linalg::LinalgOp op) {
  if (op->getParentOfType<gpu::LaunchOp>() || op.getNumDpsInputs() != 2 ||
      op.getNumDpsInits() != 1)
    return false;
  FailureOr<linalg::ContractionDimensions> dims =
      linalg::inferContractionDims(op);
  if (failed(dims) || dims->n.size() != 1 || dims->k.size() != 1 ||
      dims->m.empty() ||
      dims->batch.size() + dims->m.size() + 2 != op.getNumLoops())
    return false;
  for (OpOperand &operand : op->getOpOperands()) {
    auto type = dyn_cast<ShapedType>(operand.get().getType());
    AffineMap map = op.getMatchingIndexingMap(&operand);
    if (!type || !type.hasRank() || !map.isProjectedPermutation())
      return false;
    if (auto memref = dyn_cast<MemRefType>(type);
        memref && !memref.getLayout().isIdentity())
      return false;
    if (op.isDpsInit(&operand)) {
      if (!type.getElementType().isF32())
        return false;
      continue;
    }
    if (map.getNumResults() == 0 ||
        cast<AffineDimExpr>(map.getResults().back()).getPosition() !=
            dims->k.front())
      return false;
    int64_t k = type.getShape().back();
    if (ShapedType::isDynamic(k) || k % 16 != 0)
      return false;
  }
  return true;
}

/// Whether `v` holds f32 values read from `type`: the result of a linalg op
/// that yields `arith.extf` from `type` for it.
bool isWidenedFrom(Value v, Type type) {
  auto result = dyn_cast<OpResult>(v);
  auto producer =
      result ? dyn_cast<linalg::LinalgOp>(result.getOwner()) : nullptr;
  if (!producer || producer->getNumRegions() != 1 ||
      producer->getRegion(0).empty())
    return false;
  auto yield = dyn_cast<linalg::YieldOp>(producer.getBlock()->getTerminator());
  if (!yield)
    return false;
  auto ext = yield.getValues()[result.getResultNumber()]
                 .getDefiningOp<arith::ExtFOp>();
  return ext && ext.getIn().getType() == type;
}

} // namespace

Type blockc::nvptx::getTensorCoreMatmulType(linalg::LinalgOp op) {
  if (!op.hasPureBufferSemantics() || !hasTensorCoreShape(op))
    return {};
  auto [x, y] = mulAddOperands(op);
  if (!x)
    return {};
  Type a = op.getDpsInputOperand(0)->get().getType();
  Type b = op.getDpsInputOperand(1)->get().getType();
  Type type = cast<MemRefType>(a).getElementType();
  if (!isSixteenBitFloat(type) || cast<MemRefType>(b).getElementType() != type)
    return {};
  // Both are widened in the body (a 16-bit mulf would round the product).
  if (!x.getDefiningOp<arith::ExtFOp>() || !y.getDefiningOp<arith::ExtFOp>())
    return {};
  return type;
}

bool blockc::nvptx::isTF32MatmulCandidate(linalg::LinalgOp op) {
  // Projections only: a batched contraction is attention's (Q K^T per
  // batch and head), which keeps f32.
  if (!hasTensorCoreShape(op) ||
      !linalg::inferContractionDims(op)->batch.empty())
    return false;
  auto [x, y] = mulAddOperands(op);
  if (!x)
    return false;
  // The body multiplies the block arguments themselves (no widening).
  Block *body = op.getBlock();
  if (x != body->getArgument(0) && x != body->getArgument(1))
    return false;
  return llvm::all_of(op.getDpsInputs(), [](Value v) {
    return getElementTypeOrSelf(v.getType()).isF32();
  });
}

Type blockc::nvptx::getMmaMultiplicandType(linalg::LinalgOp op) {
  if (Type type = getTensorCoreMatmulType(op))
    return type;
  if (op.hasPureBufferSemantics() && isTF32MatmulCandidate(op))
    return Float32Type::get(op.getContext());
  return {};
}

/// Whether the contraction `op` reads its inputs as the warpgroup-MMA
/// kernel's TMA maps do (isWarpgroupMatmulCandidate).
static bool readsWarpgroupMatrices(linalg::LinalgOp op) {
  linalg::ContractionDimensions dims = *linalg::inferContractionDims(op);
  if (!dims.batch.empty())
    return false;
  // The M input reads (m..., k), the N input (n, k), both in loop order.
  auto readsExactly = [&](OpOperand *operand, ArrayRef<unsigned> rows) {
    AffineMap map = op.getMatchingIndexingMap(operand);
    if (map.getNumResults() != rows.size() + 1)
      return false;
    for (auto [i, d] : llvm::enumerate(rows))
      if (cast<AffineDimExpr>(map.getResult(i)).getPosition() != d)
        return false;
    return true;
  };
  OpOperand *in0 = op.getDpsInputOperand(0), *in1 = op.getDpsInputOperand(1);
  bool mFirst = readsExactly(in0, dims.m) && readsExactly(in1, dims.n);
  bool nFirst = readsExactly(in1, dims.m) && readsExactly(in0, dims.n);
  // K is a static multiple of 16 (hasTensorCoreShape): rows are multiples
  // of 16 bytes, as TMA's strides must be.
  return mFirst || nFirst;
}

bool blockc::nvptx::isWarpgroupMatmulCandidate(linalg::LinalgOp op) {
  return getTensorCoreMatmulType(op) && readsWarpgroupMatrices(op);
}

bool blockc::nvptx::isWarpgroupTF32Candidate(linalg::LinalgOp op) {
  return op.hasPureBufferSemantics() && isTF32MatmulCandidate(op) &&
         readsWarpgroupMatrices(op);
}

OpOperand *blockc::nvptx::getNarrowableMatmulOperand(linalg::LinalgOp op) {
  if (!op.hasPureTensorSemantics() || !hasTensorCoreShape(op))
    return nullptr;
  auto [x, y] = mulAddOperands(op);
  if (!x)
    return nullptr;
  OpOperand *in0 = op.getDpsInputOperand(0), *in1 = op.getDpsInputOperand(1);
  Type t0 = getElementTypeOrSelf(in0->get().getType());
  Type t1 = getElementTypeOrSelf(in1->get().getType());
  // The 16-bit side must be widened in the body; the f32 side must hold
  // values of that type.
  auto widenedInBody = [](Value v) {
    return static_cast<bool>(v.getDefiningOp<arith::ExtFOp>());
  };
  if (isSixteenBitFloat(t1) && t0.isF32() && widenedInBody(y) &&
      isWidenedFrom(in0->get(), t1))
    return in0;
  if (isSixteenBitFloat(t0) && t1.isF32() && widenedInBody(x) &&
      isWidenedFrom(in1->get(), t0))
    return in1;
  return nullptr;
}

bool blockc::nvptx::isTiledMatmulCandidate(linalg::LinalgOp op) {
  if (op->getParentOfType<gpu::LaunchOp>())
    return false;
  if (!op.hasPureBufferSemantics() || op.getNumDpsInputs() != 2 ||
      op.getNumDpsInits() != 1 || !isMulAddBody(op))
    return false;
  for (OpOperand &operand : op->getOpOperands()) {
    auto type = dyn_cast<MemRefType>(operand.get().getType());
    if (!type || !type.getElementType().isF32() ||
        !op.getMatchingIndexingMap(&operand).isProjectedPermutation())
      return false;
  }
  FailureOr<linalg::ContractionDimensions> dims =
      linalg::inferContractionDims(op);
  return succeeded(dims) && dims->n.size() == 1 && dims->k.size() == 1 &&
         !dims->m.empty() &&
         dims->batch.size() + dims->m.size() + 2 == op.getNumLoops();
}

bool blockc::nvptx::isFusedAttentionCandidate(transformer::SDPAOp op) {
  RankedTensorType qType = op.getQuery().getType();
  int64_t d = qType.getDimSize(3);
  return qType.getElementType().isF32() && !ShapedType::isDynamic(d) &&
         d % kWarpSize == 0 && op.getValue().getType().getDimSize(3) == d &&
         !ShapedType::isDynamic(qType.getDimSize(2)) &&
         !ShapedType::isDynamic(op.getKey().getType().getDimSize(2));
}

Type blockc::nvptx::getWidenedAttentionType(transformer::SDPAOp op) {
  Type type;
  for (Value operand : {op.getQuery(), op.getKey(), op.getValue()}) {
    auto ext = operand.getDefiningOp<arith::ExtFOp>();
    if (!ext)
      return {};
    Type from = getElementTypeOrSelf(ext.getIn().getType());
    if (!isSixteenBitFloat(from) || (type && from != type))
      return {};
    type = from;
  }
  return type;
}

Type blockc::nvptx::getTensorCoreAttentionType(transformer::SDPAOp op) {
  Type type = getWidenedAttentionType(op);
  if (!type)
    return {};
  RankedTensorType qType = op.getQuery().getType();
  int64_t d = qType.getDimSize(3);
  if (ShapedType::isDynamic(d) || d % 16 != 0 || d > 256 ||
      op.getValue().getType().getDimSize(3) != d ||
      op.getKey().getType().getDimSize(3) != d ||
      ShapedType::isDynamic(qType.getDimSize(2)) ||
      ShapedType::isDynamic(op.getKey().getType().getDimSize(2)))
    return {};
  return type;
}

bool blockc::nvptx::isSplitKVMmaCandidate(transformer::SDPAOp op) {
  if (!isFusedAttentionCandidate(op) || !getWidenedAttentionType(op))
    return false;
  int64_t d = op.getQuery().getType().getDimSize(3);
  int64_t group = op.getQuery().getType().getDimSize(2) /
                  op.getKey().getType().getDimSize(2);
  return (d == 64 || d == 128) && op.getKey().getType().getDimSize(3) == d &&
         group >= 2 && group <= 8;
}
