//===- LowerAccumulatorFragments.cpp - fragment ops to LLVM structs -------===//
//
// blockc_codegen.accumulator_to_fragment and fragment_to_accumulator as
// accesses of the LLVM struct that convert-nvgpu-to-nvvm makes of a
// warpgroup accumulator. See Codegen/NVPTX/Passes.td
// (GPULowerAccumulatorFragmentsPass).
//
//===----------------------------------------------------------------------===//

#include "blockc/Codegen/NVPTX/Passes.h"
#include "blockc/Dialect/Codegen/IR/FragmentOps.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Transforms/DialectConversion.h"

namespace blockc::nvptx {
#define GEN_PASS_DEF_GPULOWERACCUMULATORFRAGMENTSPASS
#include "blockc/Codegen/NVPTX/Passes.h.inc"
} // namespace blockc::nvptx

using namespace mlir;
using blockc::codegen::AccumulatorToFragmentOp;
using blockc::codegen::FragmentToAccumulatorOp;

namespace {

/// The LLVM type of a warpgroup accumulator after convert-nvgpu-to-nvvm:
/// per 64 rows, a struct of the thread's registers (N / 2 for f32).
Type accumulatorStruct(nvgpu::WarpgroupAccumulatorType type) {
  VectorType matrix = type.getFragmented();
  MLIRContext *ctx = type.getContext();
  auto registers = LLVM::LLVMStructType::getLiteral(
      ctx,
      SmallVector<Type>(matrix.getDimSize(1) / 2, matrix.getElementType()));
  return LLVM::LLVMStructType::getLiteral(
      ctx, SmallVector<Type>(matrix.getDimSize(0) / 64, registers));
}

struct AccumulatorToFragmentLowering
    : OpConversionPattern<AccumulatorToFragmentOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(AccumulatorToFragmentOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    VectorType type = op.getFragment().getType();
    SmallVector<Value> elements;
    for (int64_t i = 0; i < type.getNumElements(); ++i)
      elements.push_back(LLVM::ExtractValueOp::create(
          rewriter, loc, adaptor.getAccumulator(), ArrayRef<int64_t>{0, i}));
    rewriter.replaceOpWithNewOp<vector::FromElementsOp>(op, type, elements);
    return success();
  }
};

struct FragmentToAccumulatorLowering
    : OpConversionPattern<FragmentToAccumulatorOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(FragmentToAccumulatorOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Type structType = getTypeConverter()->convertType(op.getType());
    Value result = LLVM::PoisonOp::create(rewriter, loc, structType);
    int64_t n = op.getFragment().getType().getNumElements();
    for (int64_t i = 0; i < n; ++i) {
      Value element = vector::ExtractOp::create(
          rewriter, loc, adaptor.getFragment(), ArrayRef<int64_t>{i});
      result = LLVM::InsertValueOp::create(rewriter, loc, result, element,
                                           ArrayRef<int64_t>{0, i});
    }
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct GPULowerAccumulatorFragmentsPass
    : blockc::nvptx::impl::GPULowerAccumulatorFragmentsPassBase<
          GPULowerAccumulatorFragmentsPass> {
  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    TypeConverter converter;
    converter.addConversion([](Type type) { return type; });
    converter.addConversion([](nvgpu::WarpgroupAccumulatorType type) {
      return accumulatorStruct(type);
    });
    // Both directions as casts: the accumulators' other users and producers
    // are converted by convert-nvgpu-to-nvvm, whose casts meet these.
    auto cast = [](OpBuilder &b, Type type, ValueRange inputs,
                   Location loc) -> Value {
      return UnrealizedConversionCastOp::create(b, loc, type, inputs)
          .getResult(0);
    };
    converter.addSourceMaterialization(cast);
    converter.addTargetMaterialization(cast);

    ConversionTarget target(*ctx);
    target.addIllegalOp<AccumulatorToFragmentOp, FragmentToAccumulatorOp>();
    target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
    RewritePatternSet patterns(ctx);
    patterns.add<AccumulatorToFragmentLowering, FragmentToAccumulatorLowering>(
        converter, ctx);
    if (failed(applyPartialConversion(getOperation(), target,
                                      std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
