//===- CPUISATest.cpp - the CPU ISA and extension tables ------------------===//

#include "blockc/Target/CPUISA.h"

#include "blockc/Dialect/Codegen/IR/CodegenDialect.h"
#include "blockc/Pipelines/Pipelines.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Location.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/StringSet.h"

#include <gtest/gtest.h>

using namespace blockc;

namespace {

TEST(CPUISATest, PinnedISAsNameAFixedCPUModel) {
  llvm::StringSet<> names;
  for (const CPUISAInfo &info : getCPUISAs()) {
    EXPECT_TRUE(names.insert(info.name).second) << info.name.str();
    EXPECT_EQ(&getCPUISAInfo(info.isa), &info);
    EXPECT_EQ(stringifyCPUISA(info.isa), info.name);
    EXPECT_FALSE(info.pipelineHelp.empty());
    EXPECT_FALSE(info.commandLineHelp.empty());
    if (info.isa == CPUISA::Host) {
      // Only isa=host compiles for the compiling machine's CPU.
      EXPECT_EQ(info.llvmCPU, "");
      EXPECT_EQ(info.llvmTuneCPU, "");
      EXPECT_TRUE(info.llvmFeatures.empty());
      EXPECT_EQ(info.vectorWidth, 0);
      EXPECT_EQ(info.registers, 0);
      continue;
    }
    EXPECT_TRUE(info.llvmCPU.starts_with("x86-64")) << info.name.str();
    EXPECT_FALSE(info.llvmTuneCPU.empty()) << info.name.str();
    EXPECT_FALSE(info.llvmFeatures.empty()) << info.name.str();
    EXPECT_TRUE(llvm::isPowerOf2_64(info.vectorWidth)) << info.name.str();
    EXPECT_GE(info.registers, 16) << info.name.str();
    // The codegen dialect's spelling names the same row.
    EXPECT_EQ(&getCPUISAInfo(getCodegenISA(info.isa)), &info);
  }
  EXPECT_EQ(getCPUISAs().front().isa, CPUISA::Host);
}

TEST(CPUISATest, ShapesAndModels) {
  const CPUISAInfo &avx512 = getCPUISAInfo(CPUISA::AVX512);
  EXPECT_EQ(avx512.vectorWidth, 16);
  EXPECT_EQ(avx512.registers, 32);
  EXPECT_EQ(avx512.llvmCPU, "x86-64-v4");
  EXPECT_EQ(avx512.llvmTuneCPU, "znver3");
  const CPUISAInfo &avx2 = getCPUISAInfo(CPUISA::AVX2);
  EXPECT_EQ(avx2.vectorWidth, 8);
  EXPECT_EQ(avx2.registers, 16);
  EXPECT_EQ(avx2.llvmCPU, "x86-64-v3");
  const CPUISAInfo &sse = getCPUISAInfo(CPUISA::SSE);
  EXPECT_EQ(sse.vectorWidth, 4);
  EXPECT_EQ(sse.llvmCPU, "x86-64");
  EXPECT_EQ(sse.llvmTuneCPU, "generic");
  EXPECT_EQ(getCodegenISA(CPUISA::AVX2), codegen::ISA::avx2);
}

TEST(CPUISATest, ResolvedConfigsReadTheTable) {
  for (CPUISA isa : {CPUISA::AVX512, CPUISA::AVX2, CPUISA::SSE}) {
    CPUTargetConfig config;
    config.isa = isa;
    CPUTargetConfig c = config.resolved();
    EXPECT_EQ(c.vectorWidth, getCPUISAInfo(isa).vectorWidth);
    EXPECT_EQ(c.registers, getCPUISAInfo(isa).registers);
    // A pinned ISA uses no extension unless asked.
    EXPECT_EQ(c.features, llvm::SmallVector<CPUFeature>{CPUFeature::None});
  }
  CPUTargetConfig amx;
  amx.isa = CPUISA::AVX512;
  amx.features = {CPUFeature::AMXBF16, CPUFeature::AVX512BF16};
  amx = amx.resolved();
  // Listed in the table's order.
  EXPECT_EQ(amx.features, (llvm::SmallVector<CPUFeature>{CPUFeature::AVX512BF16,
                                                         CPUFeature::AMXBF16}));
  EXPECT_EQ(amx.llvmTargetFeatures(),
            (llvm::SmallVector<std::string>{
                "+avx512f", "+avx512vl", "+avx512bw", "+avx512dq", "+f16c",
                "+avx512bf16", "+amx-tile", "+amx-bf16"}));
  CPUTargetConfig vnni;
  vnni.isa = CPUISA::SSE;
  vnni.features = {CPUFeature::AVXVNNI};
  EXPECT_EQ(vnni.resolved().checkFeatures(),
            "avxvnni needs isa=avx2 or avx512, not isa=sse");
}

TEST(CPUISATest, OptionHelp) {
  EXPECT_EQ(getCPUFeatureOptionHelp(CPUFeature::AVXVNNI, true),
            "vpdpbusd on ymm registers (-isa=avx2 or avx512)");
  EXPECT_EQ(getCPUFeatureOptionHelp(CPUFeature::AMXBF16, false),
            "AMX tiles for bf16 prefill (isa=avx512)");
  EXPECT_EQ(stringifyCPUFeature(CPUFeature::None), "none");
  EXPECT_EQ(stringifyCPUFeature(CPUFeature::AMXBF16), "amx-bf16");
}

// The codegen dialect (MLIR only) checks the extensions of a
// #blockc_codegen.cpu_target itself: its rule must be the table's.
TEST(CPUISATest, DialectVerifierAgreesWithTheTable) {
  mlir::MLIRContext ctx;
  ctx.loadDialect<codegen::CodegenDialect>();
  mlir::ScopedDiagnosticHandler quiet(
      &ctx, [](mlir::Diagnostic &) { return mlir::success(); });
  auto emitError = [&] { return mlir::emitError(mlir::UnknownLoc::get(&ctx)); };
  for (CPUISA isa : {CPUISA::AVX512, CPUISA::AVX2, CPUISA::SSE}) {
    for (const CPUFeatureInfo &f : getCPUFeatures()) {
      bool has[4] = {};
      has[static_cast<int>(f.feature) - 1] = true;
      bool valid = mlir::succeeded(codegen::CPUTargetAttr::verify(
          emitError, getCodegenISA(isa), 16, 32, 1, 1, has[0], has[1], has[2],
          has[3], codegen::CPUVendor::generic));
      EXPECT_EQ(valid, cpuISAIncludes(isa, f.needs))
          << stringifyCPUISA(isa).str() << " " << f.name.str();
    }
  }
}

TEST(CPUISATest, Host) {
  CPUISA host = getHostISA();
  EXPECT_NE(host, CPUISA::Host);
  EXPECT_EQ(missingHostFeature(host), "");
  for (CPUFeature f : getHostFeatures(host))
    EXPECT_TRUE(hostHasFeature(f)) << stringifyCPUFeature(f).str();
  CPUTargetConfig config;
  CPUTargetConfig resolved = config.resolved();
  EXPECT_EQ(resolved.isa, host);
  EXPECT_EQ(missingHostFeature(resolved), "");
  // isa=host tunes for the host's cores.
  EXPECT_EQ(resolved.vendor, getHostCPUVendor());
}

// The vendor (and with it the prefetch distance) is the host's only with
// isa=host: a pinned ISA is generic unless given.
TEST(CPUISATest, Vendor) {
  for (CPUISA isa : {CPUISA::AVX512, CPUISA::AVX2, CPUISA::SSE}) {
    CPUTargetConfig config;
    config.isa = isa;
    EXPECT_EQ(config.resolved().vendor, CPUVendor::Generic);
    config.vendor = CPUVendor::AMD;
    EXPECT_EQ(config.resolved().vendor, CPUVendor::AMD);
  }
  CPUTargetConfig host;
  host.vendor = CPUVendor::Intel;
  EXPECT_EQ(host.resolved().vendor, CPUVendor::Intel);
  EXPECT_EQ(getCodegenCPUVendor(CPUVendor::AMD), codegen::CPUVendor::amd);
  EXPECT_EQ(getCodegenCPUVendor(CPUVendor::Generic),
            codegen::CPUVendor::generic);
  EXPECT_EQ(stringifyCPUVendor(CPUVendor::Auto), "auto");
  for (int64_t ok : {-1, 0, 64, 1024, 65536}) {
    host.prefetchBytes = ok;
    EXPECT_EQ(host.checkPrefetchBytes(), "") << ok;
  }
  for (int64_t bad : {-2, 1, 100, 65600}) {
    host.prefetchBytes = bad;
    EXPECT_NE(host.checkPrefetchBytes(), "") << bad;
  }
}

} // namespace
