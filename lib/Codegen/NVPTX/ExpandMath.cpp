//===- ExpandMath.cpp - libdevice-free math inside kernels ----------------===//
//
// Polynomial approximations / expansions of f32 math ops and rsqrt as
// 1/sqrt inside gpu.launch bodies: exp, erf, erfc and tanh from
// Codegen/Common/Approximations.h, the others from upstream. See
// Codegen/NVPTX/Passes.td.
//
//===----------------------------------------------------------------------===//

#include "blockc/Codegen/Common/Approximations.h"
#include "blockc/Codegen/NVPTX/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace blockc::nvptx {
#define GEN_PASS_DEF_GPUEXPANDMATHPASS
#include "blockc/Codegen/NVPTX/Passes.h.inc"
} // namespace blockc::nvptx

using namespace mlir;

namespace {

/// A PTX instruction on f32 or f64 operands as inline assembly. Upstream's
/// convert-gpu-to-nvvm sends math ops and the matching LLVM intrinsics to
/// libdevice (__nv_sqrtf, __nv_fabsf, ...), which only links when the CUDA
/// toolkit is found; these instructions are native PTX.
Value ptxInstruction(PatternRewriter &rewriter, Location loc, StringRef opcode,
                     ValueRange operands) {
  bool isF64 = operands.front().getType().isF64();
  std::string asmString = opcode.str() + " $0";
  std::string constraints = isF64 ? "=d" : "=f";
  for (size_t i = 0; i < operands.size(); ++i) {
    asmString += ", $" + std::to_string(i + 1);
    constraints += isF64 ? ",d" : ",f";
  }
  asmString += ";";
  return LLVM::InlineAsmOp::create(
             rewriter, loc, operands.front().getType(), operands, asmString,
             constraints, /*has_side_effects=*/false,
             /*is_align_stack=*/false, LLVM::tailcallkind::TailCallKind::None,
             LLVM::AsmDialectAttr(), ArrayAttr())
      .getResult(0);
}

template <typename MathOp> struct ToPTX : OpRewritePattern<MathOp> {
  ToPTX(MLIRContext *ctx, StringRef f32Opcode, StringRef f64Opcode)
      : OpRewritePattern<MathOp>(ctx), f32Opcode(f32Opcode),
        f64Opcode(f64Opcode) {}
  LogicalResult matchAndRewrite(MathOp op,
                                PatternRewriter &rewriter) const override {
    Type type = op.getType();
    if (!type.isF32() && !type.isF64())
      return failure();
    rewriter.replaceOp(op, ptxInstruction(rewriter, op.getLoc(),
                                          type.isF32() ? f32Opcode : f64Opcode,
                                          op->getOperands()));
    return success();
  }
  std::string f32Opcode, f64Opcode;
};

/// rsqrt(x) -> 1 / sqrt.rn(x) (IEEE-rounded square root; with `portable`,
/// math.sqrt, which the host lowers to llvm.sqrt with the same rounding).
struct ExpandRsqrt : OpRewritePattern<math::RsqrtOp> {
  ExpandRsqrt(MLIRContext *ctx, bool portable)
      : OpRewritePattern<math::RsqrtOp>(ctx), portable(portable) {}
  LogicalResult matchAndRewrite(math::RsqrtOp op,
                                PatternRewriter &rewriter) const override {
    Type type = op.getType();
    if (!type.isF32() && !type.isF64())
      return failure();
    Location loc = op.getLoc();
    Value sqrt =
        portable ? math::SqrtOp::create(rewriter, loc, op.getOperand())
                 : ptxInstruction(rewriter, loc,
                                  type.isF32() ? "sqrt.rn.f32" : "sqrt.rn.f64",
                                  ValueRange{op.getOperand()});
    Value one = arith::ConstantOp::create(rewriter, loc,
                                          rewriter.getFloatAttr(type, 1.0));
    rewriter.replaceOpWithNewOp<arith::DivFOp>(op, one, sqrt);
    return success();
  }
  bool portable;
};

struct GPUExpandMathPass
    : blockc::nvptx::impl::GPUExpandMathPassBase<GPUExpandMathPass> {
  using Base::Base;
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    MLIRContext *ctx = &getContext();
    patterns.add<ExpandRsqrt>(ctx, portable);
    if (!portable) {
      patterns.add<ToPTX<math::FmaOp>>(ctx, "fma.rn.f32", "fma.rn.f64");
      patterns.add<ToPTX<math::SqrtOp>>(ctx, "sqrt.rn.f32", "sqrt.rn.f64");
      patterns.add<ToPTX<math::AbsFOp>>(ctx, "abs.f32", "abs.f64");
      patterns.add<ToPTX<math::FloorOp>>(ctx, "cvt.rmi.f32.f32",
                                         "cvt.rmi.f64.f64");
      patterns.add<ToPTX<math::CeilOp>>(ctx, "cvt.rpi.f32.f32",
                                        "cvt.rpi.f64.f64");
      patterns.add<ToPTX<math::RoundEvenOp>>(ctx, "cvt.rni.f32.f32",
                                             "cvt.rni.f64.f64");
    }
    // blockc's exp / erf / erfc / tanh (more accurate than upstream's, see
    // docs/Pipelines.md) take precedence over upstream's patterns for the
    // same ops; upstream's expansions that produce math.exp (erfc, expm1,
    // ...) then get blockc's exp too.
    blockc::populateMathApproximationPatterns(patterns, /*benefit=*/2);
    populateMathPolynomialApproximationPatterns(
        patterns, MathPolynomialApproximationOptions{});
    FrozenRewritePatternSet frozen(std::move(patterns));
    bool failedAny = false;
    getOperation().walk([&](gpu::LaunchOp launch) {
      if (failed(applyPatternsGreedily(launch.getBody(), frozen)))
        failedAny = true;
    });
    if (failedAny)
      signalPassFailure();
  }
};

} // namespace
