//===- GPUChipsTest.cpp - the GPU chip table and CUDA's limits ------------===//

#include "blockc/Dialect/Codegen/IR/CodegenDialect.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <gtest/gtest.h>

#include <algorithm>

using namespace blockc::codegen;

namespace {

TEST(GPUChipsTest, EveryKnownChipWithinCUDALimits) {
  mlir::MLIRContext ctx;
  ctx.loadDialect<CodegenDialect>();
  llvm::SmallVector<llvm::StringRef> chips;
  std::string names = GPUTargetAttr::knownChips();
  llvm::StringRef(names).split(chips, ", ");
  ASSERT_EQ(chips.size(), 7u);
  int64_t mostShared = 0;
  for (llvm::StringRef name : chips) {
    GPUTargetAttr chip = GPUTargetAttr::getKnown(&ctx, name);
    ASSERT_TRUE(chip) << name.str();
    EXPECT_EQ(checkKnownGPU("", name), "");
    EXPECT_EQ(chip.getStaticSharedPerBlock(), kMaxStaticSharedBytes);
    EXPECT_GE(chip.getSharedPerBlock(), kMaxStaticSharedBytes);
    EXPECT_EQ(chip.getRegistersPerSm(), kRegistersPerSM);
    EXPECT_EQ(chip.getMaxRegistersPerThread(), kMaxRegistersPerThread);
    EXPECT_EQ(chip.getMaxThreadsPerSm() % kWarpSize, 0);
    EXPECT_GE(chip.getMaxThreadsPerSm(), kMaxThreadsPerBlock);
    EXPECT_EQ(chip.getPtx(), getKnownArchPtxVersion(chip.getArch()));
    auto [sm, specific] = parseGPUArch(chip.getArch());
    EXPECT_EQ(sm, chip.getSm());
    EXPECT_EQ(specific, chip.getArchSpecific());
    mostShared = std::max(mostShared, chip.getSharedPerBlock());
  }
  EXPECT_EQ(GPUTargetAttr::maxKnownSharedPerBlock(), mostShared);
}

} // namespace
