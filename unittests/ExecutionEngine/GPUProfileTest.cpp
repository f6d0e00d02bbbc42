//===- GPUProfileTest.cpp - the profile's bound, occupancy and ptxas -----===//

#include "blockc/ExecutionEngine/GPUProfile.h"
#include "blockc/Dialect/Codegen/IR/CodegenDialect.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

using namespace blockc;
using blockc::codegen::GPUTargetAttr;

namespace {

class GPUProfileTest : public ::testing::Test {
protected:
  GPUProfileTest() { ctx.loadDialect<codegen::CodegenDialect>(); }
  mlir::MLIRContext ctx;
};

TEST_F(GPUProfileTest, KnownChipsAndArchitectures) {
  GPUTargetAttr h100 = GPUTargetAttr::getKnown(&ctx, "sm_90a");
  ASSERT_TRUE(h100);
  EXPECT_EQ(h100.getName(), "h100");
  EXPECT_EQ(h100.getSms(), 132);
  EXPECT_TRUE(h100.hasWarpgroupMma());
  EXPECT_EQ(h100.ptxFeature(), "+ptx80");
  GPUTargetAttr h200 = GPUTargetAttr::getKnown(&ctx, "h200");
  ASSERT_TRUE(h200);
  EXPECT_EQ(h200.getMemoryGbps(), 4800);
  EXPECT_EQ(h200.getBf16Gflops(), h100.getBf16Gflops());
  // sm_90 code (no "a" features) on an H100: mma.sync, no wgmma.
  EXPECT_FALSE(GPUTargetAttr::getKnown(&ctx, "sm_90").hasWarpgroupMma());
  EXPECT_TRUE(GPUTargetAttr::getKnown(&ctx, "sm_90").hasMmaSync());
  EXPECT_FALSE(GPUTargetAttr::getKnown(&ctx, "sm_75").hasMmaSync());
  // sm_80 code runs on an H200, with its limits.
  std::string error;
  GPUTargetAttr h200sm80 = GPUTargetAttr::lookup(&ctx, "sm_80", "h200", error);
  ASSERT_TRUE(h200sm80) << error;
  EXPECT_EQ(h200sm80.getArch(), "sm_80");
  EXPECT_EQ(h200sm80.getSharedPerBlock(), 227 * 1024);
  // Unknown names and impossible pairs name what is known.
  EXPECT_FALSE(GPUTargetAttr::lookup(&ctx, "sm_999", "", error));
  EXPECT_EQ(error, "unknown GPU architecture 'sm_999' (known: sm_75, sm_80, "
                   "sm_86, sm_89, sm_90, sm_90a, sm_100, sm_100a)");
  EXPECT_FALSE(GPUTargetAttr::lookup(&ctx, "sm_90", "v100", error));
  EXPECT_EQ(error,
            "unknown GPU chip 'v100' (known: t4, a100, a10, l4, h100, h200, "
            "b200)");
  EXPECT_FALSE(GPUTargetAttr::lookup(&ctx, "sm_90a", "a100", error));
  EXPECT_EQ(error, "GPU chip 'a100' (sm_80) cannot run code for sm_90a");
  EXPECT_EQ(codegen::checkKnownGPU("sm_100", ""), "");
  EXPECT_EQ(codegen::getKnownArchPtxVersion("sm_100a"), 86);
}

TEST_F(GPUProfileTest, Occupancy) {
  GPUTargetAttr h100 = GPUTargetAttr::getKnown(&ctx, "h100");
  // 256 threads, no shared memory, 32 registers: 8 blocks of 8 warps.
  EXPECT_DOUBLE_EQ(occupancyOf(h100, 256, 0, 32), 1.0);
  // 128 registers per thread: 65536 / (128 * 32 * 8) = 2 blocks, 16 warps.
  EXPECT_DOUBLE_EQ(occupancyOf(h100, 256, 0, 128), 0.25);
  // 80 KiB of shared memory: 228 / 81 = 2 blocks of 4 warps.
  EXPECT_DOUBLE_EQ(occupancyOf(h100, 128, 80 * 1024, 0), 8.0 / 64);
  // Registers unknown: threads and blocks only (32 blocks of 1 warp).
  EXPECT_DOUBLE_EQ(occupancyOf(h100, 32, 0, 0), 0.5);
}

TEST_F(GPUProfileTest, BoundAndLimiter) {
  GPUTargetAttr h100 = GPUTargetAttr::getKnown(&ctx, "h100");
  // A GEMM of 1e12 tensor FLOPs: 1e12 / 989.4e12 s = 1010.7 us (+ 2 us).
  GPULaunchCounters gemm;
  gemm.kernel = "gemm";
  gemm.flops = gemm.tensorFlops16 = 1e12;
  gemm.uniqueBytes = 100e6; // 29.9 us of DRAM at 3.35 TB/s
  // A copy of 335 MB: 100 us of DRAM.
  GPULaunchCounters copy;
  copy.kernel = "copy";
  copy.uniqueBytes = 335e6;
  copy.flops = 1e6;
  // A tiny kernel: the launch dominates.
  GPULaunchCounters tiny;
  tiny.kernel = "tiny";
  tiny.flops = 1000;
  GPUProfile p =
      buildGPUProfile({gemm, copy, copy, tiny}, h100, {{"gemm", {168, 0}}}, 0);
  ASSERT_EQ(p.kernels.size(), 3u);
  EXPECT_EQ(p.chip, "h100");
  EXPECT_EQ(p.arch, "sm_90a");
  EXPECT_EQ(p.kernels[0].limiter, "tensor");
  EXPECT_NEAR(p.kernels[0].boundUs, 1e12 / 989.4e6 + kLaunchOverheadUs, 1e-6);
  EXPECT_EQ(p.kernels[0].registers, 168);
  EXPECT_EQ(p.kernels[1].launches, 2);
  EXPECT_EQ(p.kernels[1].limiter, "dram");
  EXPECT_NEAR(p.kernels[1].boundUs, 2 * (100.0 + kLaunchOverheadUs), 1e-6);
  EXPECT_FALSE(p.kernels[1].registers);
  EXPECT_EQ(p.kernels[2].limiter, "launch");
  EXPECT_NEAR(
      p.totalBoundUs,
      p.kernels[0].boundUs + p.kernels[1].boundUs + p.kernels[2].boundUs, 1e-9);
  EXPECT_DOUBLE_EQ(p.totalFlops, 1e12 + 2e6 + 1000);
}

TEST_F(GPUProfileTest, ParsesPtxasVerbose) {
  llvm::StringRef report =
      "ptxas info    : 0 bytes gmem\n"
      "ptxas info    : Compiling entry function 'k1' for 'sm_90a'\n"
      "ptxas info    : Function properties for k1\n"
      "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
      "ptxas info    : Used 40 registers, used 1 barriers, 8192 bytes smem\n"
      "ptxas info    : Compiling entry function 'k2' for 'sm_90a'\n"
      "ptxas info    : Function properties for k2\n"
      "    16 bytes stack frame, 12 bytes spill stores, 8 bytes spill loads\n"
      "ptxas info    : Used 255 registers, 400 bytes cmem[0]\n";
  llvm::StringMap<PtxasKernelInfo> info = parsePtxasVerbose(report);
  ASSERT_EQ(info.size(), 2u);
  EXPECT_EQ(info["k1"].registers, 40);
  EXPECT_EQ(info["k1"].spillBytes, 0);
  EXPECT_EQ(info["k2"].registers, 255);
  EXPECT_EQ(info["k2"].spillBytes, 20);
}

/// A temporary file holding `text`, removed with the object.
struct TempFile {
  explicit TempFile(llvm::StringRef text) {
    int fd;
    EXPECT_FALSE(
        llvm::sys::fs::createTemporaryFile("profile", "txt", fd, path));
    llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
    os << text;
  }
  ~TempFile() { llvm::sys::fs::remove(path); }
  llvm::SmallString<128> path;
};

TEST_F(GPUProfileTest, MeasuredAgainstTheBound) {
  GPUTargetAttr h200 = GPUTargetAttr::getKnown(&ctx, "h200");
  GPULaunchCounters gemm;
  gemm.kernel = "gemm";
  gemm.flops = gemm.tensorFlops16 = 989.4e9; // 1000 us + 2 us
  GPULaunchCounters norm;
  norm.kernel = "norm";
  norm.uniqueBytes = 48e6; // 10 us + 2 us
  GPUProfile p = buildGPUProfile({gemm, norm}, h200, {}, 0);

  // The JSON file and the printed table read back the same bounds.
  TempFile json("");
  ASSERT_FALSE(static_cast<bool>(writeGPUProfileJSON(json.path, p)));
  std::string table;
  llvm::raw_string_ostream os(table);
  printGPUProfile(os, p);
  TempFile text(table);
  for (llvm::StringRef path : {json.path.str(), text.path.str()}) {
    llvm::Expected<GPUProfile> read = readGPUProfile(path);
    ASSERT_TRUE(static_cast<bool>(read)) << llvm::toString(read.takeError());
    ASSERT_EQ(read->kernels.size(), 2u);
    EXPECT_EQ(read->kernels[0].name, "gemm");
    EXPECT_NEAR(read->kernels[0].boundUs, 1002.0, 0.01);
    EXPECT_EQ(read->kernels[0].limiter, "tensor");
    EXPECT_NEAR(read->kernels[1].boundUs, 12.0, 0.01);
    EXPECT_EQ(read->kernels[1].limiter, "dram");
  }

  std::string out;
  llvm::raw_string_ostream mos(out);
  llvm::Expected<GPUProfile> bound = readGPUProfile(json.path);
  ASSERT_TRUE(static_cast<bool>(bound));
  printMeasuredProfile(mos, {{"gemm", 1, 2004.0}, {"extra", 2, 5.0}}, &*bound);
  EXPECT_NE(out.find("gemm           1      2004.00   1002.00            2.00  "
                     "tensor\n"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("extra          2         5.00         -               -  "
                     "-\n"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("total 2009.00 us measured, 1002.00 us bound (2.00x)"),
            std::string::npos)
      << out;

  TempFile empty("no table here\n");
  llvm::Expected<GPUProfile> bad = readGPUProfile(empty.path);
  ASSERT_FALSE(static_cast<bool>(bad));
  EXPECT_NE(llvm::toString(bad.takeError()).find("has no kernel table"),
            std::string::npos);
  llvm::Expected<GPUProfile> missing = readGPUProfile("/nonexistent/p.json");
  ASSERT_FALSE(static_cast<bool>(missing));
  EXPECT_NE(llvm::toString(missing.takeError())
                .find("cannot read the profile '/nonexistent/p.json'"),
            std::string::npos);
}

} // namespace
