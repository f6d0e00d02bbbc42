//===- StridedCopiesToKernels.cpp - strided host copies as kernels --------===//
//
// See Codegen/NVPTX/Passes.td (GPUStridedCopiesToKernelsPass).
//
//===----------------------------------------------------------------------===//

#include "blockc/Codegen/NVPTX/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace blockc::nvptx {
#define GEN_PASS_DEF_GPUSTRIDEDCOPIESTOKERNELSPASS
#include "blockc/Codegen/NVPTX/Passes.h.inc"
} // namespace blockc::nvptx

using namespace mlir;

namespace {

struct GPUStridedCopiesToKernelsPass
    : blockc::nvptx::impl::GPUStridedCopiesToKernelsPassBase<
          GPUStridedCopiesToKernelsPass> {
  void runOnOperation() override {
    SmallVector<memref::CopyOp> copies;
    getOperation().walk([&](memref::CopyOp copy) {
      auto source = cast<MemRefType>(copy.getSource().getType());
      auto target = cast<MemRefType>(copy.getTarget().getType());
      // Contiguous copies stay (blockc-gpu-host-shared-allocs makes them
      // gpu.memcpy), as do copies already inside a kernel and copies of
      // memory that is not the default space.
      if (copy->getParentOfType<gpu::LaunchOp>() ||
          copy->getParentOfType<gpu::GPUFuncOp>() ||
          (source.getLayout().isIdentity() &&
           target.getLayout().isIdentity()) ||
          source.getMemorySpace() || target.getMemorySpace())
        return;
      copies.push_back(copy);
    });
    for (memref::CopyOp copy : copies) {
      OpBuilder b(copy);
      linalg::CopyOp::create(b, copy.getLoc(), copy.getSource(),
                             copy.getTarget());
      copy.erase();
    }
  }
};

} // namespace
