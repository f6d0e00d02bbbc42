//===- TileEpilogue.cpp - shared helpers of the CPU kernel passes ---------===//

#include "TileEpilogue.h"
#include "blockc/Codegen/Common/KernelToolkit.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;
namespace codegen = blockc::codegen;

namespace {
/// memref.prefetch declares no memory effects: a read of its memref.
struct PrefetchEffects
    : MemoryEffectOpInterface::ExternalModel<PrefetchEffects,
                                             memref::PrefetchOp> {
  void
  getEffects(Operation *op,
             SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
                 &effects) const {
    effects.emplace_back(MemoryEffects::Read::get(),
                         &cast<memref::PrefetchOp>(op).getMemrefMutable());
  }
};
} // namespace

void blockc::cpu::registerPrefetchEffects(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, memref::MemRefDialect *) {
    std::optional<RegisteredOperationName> name =
        RegisteredOperationName::lookup(memref::PrefetchOp::getOperationName(),
                                        ctx);
    if (name && !name->hasInterface<MemoryEffectOpInterface>())
      memref::PrefetchOp::attachInterface<PrefetchEffects>(*ctx);
  });
}

FailureOr<int64_t> blockc::cpu::getTargetVectorWidth(func::FuncOp func,
                                                     StringRef pass) {
  auto target = func->getAttrOfType<codegen::CPUTargetAttr>(
      codegen::CodegenDialect::kCpuTargetAttrName);
  if (!target)
    return func.emitError() << pass << ": the function has no '"
                            << codegen::CodegenDialect::kCpuTargetAttrName
                            << "' (run blockc-cpu-select-tiles first)";
  return target.getVectorWidth();
}

void blockc::cpu::setKernelKind(Operation *op, codegen::KernelKind kind) {
  op->setAttr(codegen::CodegenDialect::kKernelAttrName,
              codegen::KernelKindAttr::get(op->getContext(), kind));
}

bool blockc::cpu::isLinearKernel(Operation *op) {
  if (!op)
    return false;
  auto kind = op->getAttrOfType<codegen::KernelKindAttr>(
      codegen::CodegenDialect::kKernelAttrName);
  return isa<scf::ForallOp>(op) && kind &&
         kind.getValue() == codegen::KernelKind::linear;
}

bool blockc::cpu::isZeroFill(Value init) {
  auto fill = init.getDefiningOp<linalg::FillOp>();
  return fill && matchPattern(fill.getInputs()[0], m_AnyZeroFloat());
}

Value blockc::cpu::buildTileEpilogue(
    OpBuilder &b, Location loc, Value tile, VectorType vec,
    function_ref<Value(Value, ValueRange, bool)> body) {
  int64_t width = vec.getNumElements();
  blockc::KernelToolkit kt{b, loc};
  Value c0 = kt.idx(0);
  Value pad = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0.0f));
  Value bDim = tensor::DimOp::create(b, loc, tile, 0);
  Value tDim = tensor::DimOp::create(b, loc, tile, 1);
  Value nDim = tensor::DimOp::create(b, loc, tile, 2);
  Value nFull = kt.mul(arith::DivUIOp::create(b, loc, nDim, kt.idx(width)),
                       kt.idx(width));
  auto step = [&](Value acc, Value bi, Value ti, Value n, bool inBounds) {
    SmallVector<Value> at = {bi, ti, n};
    Value x = vector::TransferReadOp::create(b, loc, vec, acc, at, pad,
                                             ArrayRef<bool>{inBounds});
    return vector::TransferWriteOp::create(b, loc, body(x, at, inBounds), acc,
                                           at, ArrayRef<bool>{inBounds})
        .getResult();
  };
  return kt.forOne(c0, bDim, 1, tile, [&](Value bi, Value t1) {
    return kt.forOne(c0, tDim, 1, t1, [&](Value ti, Value t2) {
      t2 = kt.forOne(c0, nFull, width, t2, [&](Value n, Value t3) {
        return step(t3, bi, ti, n, /*inBounds=*/true);
      });
      // The remainder columns: at most one masked vector.
      return kt.forOne(nFull, nDim, width, t2, [&](Value n, Value t3) {
        return step(t3, bi, ti, n, /*inBounds=*/false);
      });
    });
  });
}
