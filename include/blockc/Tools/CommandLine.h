//===- CommandLine.h - command-line pieces shared by the drivers -*- C++
//-*-===//
//
// What blockc and blockc-run parse alike: the values of -isa= and the
// --threads=N spelling (libLLVM owns a global option named "threads", so
// both tools declare "num-threads" and parse through parseBlockcOptions).
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKC_TOOLS_COMMANDLINE_H
#define BLOCKC_TOOLS_COMMANDLINE_H

#include "blockc/Dialect/Codegen/IR/CodegenDialect.h"
#include "blockc/Pipelines/Pipelines.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/CommandLine.h"

#include <cstring>
#include <string>
#include <vector>

namespace blockc {

/// The drivers' default -O: LLVM -O2. -O3 did not pay for the already
/// vectorised, register-tiled kernels (docs/Pipelines.md).
inline constexpr unsigned kDefaultOptLevel = 2;
inline constexpr const char *kOptLevelHelp =
    "LLVM optimisation level (0-3, default 2)";

/// The values of the drivers' -isa= option.
inline auto cpuISAValues() {
  return llvm::cl::values(
      clEnumValN(CPUISA::Host, "host",
                 "this machine's (default; --dump-pass-pipeline prints what "
                 "it resolved to)"),
      clEnumValN(CPUISA::AVX512, "avx512", "AVX-512"),
      clEnumValN(CPUISA::AVX2, "avx2", "AVX2 + FMA"),
      clEnumValN(CPUISA::SSE, "sse", "SSE2 (any x86-64)"));
}

/// The values of the drivers' -cpu-features= option (comma-separated).
inline auto cpuFeatureValues() {
  return llvm::cl::values(
      clEnumValN(CPUFeature::None, "none",
                 "none of them (the default with a pinned -isa)"),
      clEnumValN(CPUFeature::AVX512BF16, "avx512bf16",
                 "vdpbf16ps for bf16 projections (-isa=avx512)"),
      clEnumValN(CPUFeature::AVX512VNNI, "avx512vnni",
                 "vpdpbusd on zmm registers (-isa=avx512)"),
      clEnumValN(CPUFeature::AVXVNNI, "avxvnni",
                 "vpdpbusd on ymm registers (-isa=avx2 or avx512)"),
      clEnumValN(CPUFeature::AMXBF16, "amx-bf16",
                 "AMX tiles for bf16 prefill (-isa=avx512)"));
}
inline constexpr const char *kCPUFeaturesHelp =
    "CPU: ISA extensions the kernels may use beyond -isa, comma-separated "
    "(default: this machine's with -isa=host, none with a pinned -isa)";

/// cl::ParseCommandLineOptions with --threads=N / -threads=N read as
/// --num-threads=N.
/// The help texts of the GPU emulator's flags, the same in both tools.
constexpr const char *kEmulateHelp =
    "With -target=nvptx: compile for the GPU emulator, which runs the NVPTX "
    "kernels on the host (no GPU needed; docs/GPUEmulator.md)";
constexpr const char *kAllowTf32Help =
    "With -target=nvptx (sm_80+): run f32 projections on TF32 tensor cores, "
    "their operands rounded to 10-bit mantissas (docs/GPU.md#tf32)";
constexpr const char *kWarpgroupScheduleHelp =
    "With -target=nvptx -gpu-arch=sm_90a: the projections' warpgroup-MMA "
    "kernel: specialized (default: a producer warpgroup), persistent (also "
    "one block per multiprocessor) or cooperative (docs/GPU.md)";
constexpr const char *kCheckBoundsHelp =
    "With --emulate: check the indices of every memory access inside the "
    "kernels";

constexpr const char *kGPUArchHelp = "With -target=nvptx: the GPU architecture "
                                     "(sm_75, sm_80, sm_86, sm_89, sm_90, "
                                     "sm_90a, sm_100, sm_100a)";
constexpr const char *kGPUChipHelp =
    "With -target=nvptx: the GPU whose limits and peaks the tiles and the "
    "profile assume (t4, a100, a10, l4, h100, h200, b200; default: the "
    "architecture's, docs/GPU.md#chips)";

/// The error of an unknown -gpu-arch / -gpu-chip (naming the known ones),
/// or an empty string. Checked before anything is built.
inline std::string checkGPUTarget(bool nvptx, llvm::StringRef arch,
                                  llvm::StringRef chip) {
  if (!nvptx)
    return "";
  std::string error = codegen::checkKnownGPU(arch, chip);
  return error.empty() ? "" : "-gpu-arch / -gpu-chip: " + error;
}

/// The error of a wrong combination of -target, --emulate, --check-bounds
/// and -gpu-allow-tf32, or an empty string.
inline std::string checkGPUFlags(bool nvptx, bool emulate, bool checkBounds,
                                 bool allowTf32 = false) {
  if (emulate && !nvptx)
    return "--emulate needs -target=nvptx";
  if (allowTf32 && !nvptx)
    return "-gpu-allow-tf32 needs -target=nvptx";
  if (checkBounds && !emulate)
    return "--check-bounds needs --emulate";
  return "";
}

/// The error of a -gpu-warpgroup-schedule value, or an empty string.
inline std::string checkWarpgroupSchedule(llvm::StringRef schedule) {
  if (schedule == "specialized" || schedule == "persistent" ||
      schedule == "cooperative")
    return "";
  return ("unknown -gpu-warpgroup-schedule '" + schedule +
          "' (expected specialized, persistent or cooperative)")
      .str();
}

inline void parseBlockcOptions(int argc, char **argv,
                               llvm::StringRef overview) {
  std::vector<std::string> storage(argv, argv + argc);
  for (std::string &a : storage)
    for (const char *prefix : {"--threads=", "-threads="})
      if (llvm::StringRef(a).starts_with(prefix))
        a = "--num-threads=" + a.substr(std::strlen(prefix));
  std::vector<const char *> args;
  for (const std::string &a : storage)
    args.push_back(a.c_str());
  llvm::cl::ParseCommandLineOptions(static_cast<int>(args.size()), args.data(),
                                    overview);
}

} // namespace blockc

#endif // BLOCKC_TOOLS_COMMANDLINE_H
