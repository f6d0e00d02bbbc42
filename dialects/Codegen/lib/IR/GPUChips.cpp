//===- GPUChips.cpp - The table of known GPU chips ------------------------===//
//
// The known chips (datasheet figures) and architectures, and the
// GPUTargetAttr built from them; docs/GPU.md#chips cites the sources.
//
//===----------------------------------------------------------------------===//

#include "blockc/Dialect/Codegen/IR/CodegenDialect.h"

#include "llvm/ADT/Twine.h"

#include <algorithm>

using namespace mlir;
using namespace blockc::codegen;

namespace {

/// One known chip: its own architecture and datasheet figures (dense peaks,
/// boost clock). Sources: docs/GPU.md#chips.
struct KnownChip {
  const char *name;
  const char *arch;
  int64_t sms, clockMHz, bf16, tf32, fp32, memoryGBps, sharedPerSM,
      sharedPerBlock, threadsPerSM, blocksPerSM;
};

constexpr int64_t KiB = 1024;
constexpr KnownChip kKnownChips[] = {
    // T4: f16 tensor cores only (mma.sync m16n8k8; blockc's tensor-core
    // kernels need sm_80), no TF32.
    {"t4", "sm_75", 40, 1590, 65000, 0, 8100, 320, 64 * KiB, 64 * KiB, 1024,
     16},
    // A100 SXM4 80 GB.
    {"a100", "sm_80", 108, 1410, 312000, 156000, 19500, 2039, 164 * KiB,
     163 * KiB, 2048, 32},
    // A10 (sm_86, like the RTX 30 series).
    {"a10", "sm_86", 72, 1695, 125000, 62500, 31200, 600, 100 * KiB, 99 * KiB,
     1536, 16},
    // L4.
    {"l4", "sm_89", 58, 2040, 121000, 60000, 30300, 300, 100 * KiB, 99 * KiB,
     1536, 24},
    // H100 SXM5 80 GB.
    {"h100", "sm_90a", 132, 1980, 989400, 494700, 66900, 3350, 228 * KiB,
     227 * KiB, 2048, 32},
    // H200 SXM 141 GB: H100's SMs with HBM3e.
    {"h200", "sm_90a", 132, 1980, 989400, 494700, 66900, 4800, 228 * KiB,
     227 * KiB, 2048, 32},
    // B200 (HGX): tcgen05 tensor cores (not used by blockc's kernels).
    {"b200", "sm_100a", 148, 1965, 2250000, 1125000, 75000, 8000, 228 * KiB,
     227 * KiB, 2048, 32},
};

/// The architectures blockc generates code for, the PTX ISA version its
/// code is emitted as (sm_80: 7.5, which blockc's kernels were first
/// checked with; otherwise the version that introduced the architecture)
/// and the chip it defaults to.
struct KnownArch {
  const char *arch;
  int64_t ptx;
  const char *chip;
};
constexpr KnownArch kKnownArchs[] = {
    {"sm_75", 63, "t4"},    {"sm_80", 75, "a100"},   {"sm_86", 71, "a10"},
    {"sm_89", 78, "l4"},    {"sm_90", 80, "h100"},   {"sm_90a", 80, "h100"},
    {"sm_100", 86, "b200"}, {"sm_100a", 86, "b200"},
};

} // namespace

std::pair<int64_t, bool> blockc::codegen::parseGPUArch(StringRef arch) {
  bool specific = arch.consume_back("a");
  int64_t sm = 0;
  arch.consume_front("sm_");
  (void)arch.getAsInteger(10, sm);
  return {sm, specific};
}

namespace {

/// The known architecture and chip of (arch, name), or null with `error`
/// set (GPUTargetAttr::lookup).
std::pair<const KnownArch *, const KnownChip *>
findKnown(StringRef arch, StringRef name, std::string &error) {
  const KnownArch *knownArch = nullptr;
  for (const KnownArch &a : kKnownArchs)
    if (arch == a.arch)
      knownArch = &a;
  if (!arch.empty() && !knownArch) {
    error = ("unknown GPU architecture '" + arch +
             "' (known: " + GPUTargetAttr::knownArchs() + ")")
                .str();
    return {};
  }
  if (name.empty()) {
    if (!knownArch) {
      error = "no GPU architecture or chip given";
      return {};
    }
    name = knownArch->chip;
  }
  const KnownChip *chip = nullptr;
  for (const KnownChip &c : kKnownChips)
    if (name == c.name)
      chip = &c;
  if (!chip) {
    error = ("unknown GPU chip '" + name +
             "' (known: " + GPUTargetAttr::knownChips() + ")")
                .str();
    return {};
  }
  if (!knownArch)
    for (const KnownArch &a : kKnownArchs)
      if (StringRef(a.arch) == chip->arch)
        knownArch = &a;
  auto [sm, specific] = parseGPUArch(knownArch->arch);
  int64_t chipSM = parseGPUArch(chip->arch).first;
  // Code for sm_N runs on chips of sm_N and newer; arch-specific code only
  // on its own generation.
  if (sm > chipSM || (specific && sm != chipSM)) {
    error = (Twine("GPU chip '") + chip->name + "' (" + chip->arch +
             ") cannot run code for " + knownArch->arch)
                .str();
    return {};
  }
  return {knownArch, chip};
}

} // namespace

std::string blockc::codegen::checkKnownGPU(StringRef arch, StringRef name) {
  std::string error;
  findKnown(arch, name, error);
  return error;
}

GPUTargetAttr GPUTargetAttr::lookup(MLIRContext *ctx, StringRef arch,
                                    StringRef name, std::string &error) {
  auto [knownArch, chip] = findKnown(arch, name, error);
  if (!chip)
    return {};
  auto [sm, specific] = parseGPUArch(knownArch->arch);
  return GPUTargetAttr::get(
      ctx, chip->name, knownArch->arch, sm, specific, knownArch->ptx, chip->sms,
      chip->clockMHz, chip->bf16, chip->tf32, chip->fp32, chip->memoryGBps,
      chip->sharedPerSM, chip->sharedPerBlock, kMaxStaticSharedBytes,
      kRegistersPerSM, kMaxRegistersPerThread, chip->threadsPerSM,
      chip->blocksPerSM);
}

int64_t blockc::codegen::getKnownArchPtxVersion(StringRef arch) {
  for (const KnownArch &a : kKnownArchs)
    if (arch == a.arch)
      return a.ptx;
  return 0;
}

GPUTargetAttr GPUTargetAttr::getKnown(MLIRContext *ctx, StringRef nameOrArch) {
  std::string error;
  if (nameOrArch.starts_with("sm_"))
    return lookup(ctx, nameOrArch, "", error);
  return lookup(ctx, "", nameOrArch, error);
}

int64_t GPUTargetAttr::maxKnownSharedPerBlock() {
  int64_t most = 0;
  for (const KnownChip &c : kKnownChips)
    most = std::max(most, c.sharedPerBlock);
  return most;
}

std::string GPUTargetAttr::knownArchs() {
  std::string text;
  for (const KnownArch &a : kKnownArchs)
    text += (text.empty() ? "" : ", ") + std::string(a.arch);
  return text;
}

std::string GPUTargetAttr::knownChips() {
  std::string text;
  for (const KnownChip &c : kKnownChips)
    text += (text.empty() ? "" : ", ") + std::string(c.name);
  return text;
}
