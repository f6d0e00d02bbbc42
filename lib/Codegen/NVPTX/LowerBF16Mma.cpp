//===- LowerBF16Mma.cpp - bf16 nvgpu.mma.sync to nvvm.mma.sync ------------===//
//
// Fills a gap of upstream's convert-nvgpu-to-nvvm, which lowers
// nvgpu.mma.sync for f16 but not bf16. See Codegen/NVPTX/Passes.td
// (GPULowerMmaToNVVMPass).
//
//===----------------------------------------------------------------------===//

#include "blockc/Codegen/NVPTX/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

namespace blockc::nvptx {
#define GEN_PASS_DEF_GPULOWERMMATONVVMPASS
#include "blockc/Codegen/NVPTX/Passes.h.inc"
} // namespace blockc::nvptx

using namespace mlir;

namespace {

/// Whether `value` is a vector<rows x 2 x elem>.
bool isFragment(Value value, int64_t rows, Type elem) {
  auto type = dyn_cast<VectorType>(value.getType());
  return type && type.getShape() == ArrayRef<int64_t>{rows, 2} &&
         type.getElementType() == elem;
}

LogicalResult lower(nvgpu::MmaSyncOp op) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  Type bf16 = b.getBF16Type(), f32 = b.getF32Type(), i32 = b.getI32Type();
  if (op.getMmaShapeAsArray() != std::array<int64_t, 3>{16, 8, 16} ||
      !isFragment(op.getMatrixA(), 4, bf16) ||
      !isFragment(op.getMatrixB(), 2, bf16) ||
      !isFragment(op.getMatrixC(), 2, f32) || op.getTf32Enabled())
    return op.emitOpError()
           << "bf16 is lowered for mmaShape [16, 8, 16] with "
              "vector<4x2xbf16>, vector<2x2xbf16> and vector<2x2xf32> "
              "fragments only";
  // Each row of a 16-bit fragment is one 32-bit register (lower element in
  // the low half, as PTX packs .bf16x2).
  auto registers = [&](Value fragment, int64_t rows) {
    SmallVector<Value> regs;
    for (int64_t r = 0; r < rows; ++r) {
      Value row = vector::ExtractOp::create(b, loc, fragment, r);
      regs.push_back(LLVM::BitcastOp::create(b, loc, i32, row));
    }
    return regs;
  };
  SmallVector<Value> a = registers(op.getMatrixA(), 4);
  SmallVector<Value> bRegs = registers(op.getMatrixB(), 2);
  SmallVector<Value> c;
  for (int64_t r = 0; r < 2; ++r)
    for (int64_t col = 0; col < 2; ++col)
      c.push_back(vector::ExtractOp::create(b, loc, op.getMatrixC(),
                                            ArrayRef<int64_t>{r, col}));
  auto resultType = LLVM::LLVMStructType::getLiteral(b.getContext(),
                                                     SmallVector<Type>(4, f32));
  Value d = NVVM::MmaOp::create(
      b, loc, resultType, a, bRegs, c, ArrayRef<int64_t>{16, 8, 16},
      std::nullopt, std::nullopt,
      std::array<NVVM::MMATypes, 2>{NVVM::MMATypes::bf16, NVVM::MMATypes::bf16},
      std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row,
                                     NVVM::MMALayout::col});
  SmallVector<Value> elems;
  for (int64_t i = 0; i < 4; ++i)
    elems.push_back(LLVM::ExtractValueOp::create(b, loc, d, i));
  Value result = vector::FromElementsOp::create(
      b, loc, cast<VectorType>(op.getType()), elems);
  op.replaceAllUsesWith(result);
  op.erase();
  return success();
}

struct GPULowerMmaToNVVMPass
    : blockc::nvptx::impl::GPULowerMmaToNVVMPassBase<GPULowerMmaToNVVMPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<nvgpu::MmaSyncOp> ops;
    getOperation().walk([&](nvgpu::MmaSyncOp op) {
      if (getElementTypeOrSelf(op.getMatrixA().getType()).isBF16())
        ops.push_back(op);
    });
    for (nvgpu::MmaSyncOp op : ops)
      if (failed(lower(op)))
        return signalPassFailure();
  }
};

} // namespace
