//===- CPUISA.h - The CPU ISAs and their machine facts ----------*- C++ -*-===//
//
// The one table of x86 vector ISAs blockc generates CPU code for: per ISA its
// option spelling and help, f32 lanes and vector registers (what the kernels
// are shaped for), the LLVM CPU model and tuning its code is compiled for
// (fixed for a pinned ISA, so objects do not depend on the compiling
// machine; the host's only for isa=host) and the LLVM target features that
// keep code within it. Beside it the table of ISA extensions (the ISA each
// needs) and the queries of the compiling machine (which ISA and extensions
// it has, its cache sizes).
//
// The pipelines (CPUTargetConfig), blockc-cpu-select-tiles, the compile
// options and the tools read these tables; nothing else spells an ISA's
// facts.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKC_TARGET_CPUISA_H
#define BLOCKC_TARGET_CPUISA_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/CommandLine.h"

#include <cstdint>
#include <string>

namespace blockc {
namespace codegen {
// #blockc_codegen.isa (CodegenEnums.h.inc): the pinned ISAs as the codegen
// dialect spells them.
enum class ISA : uint32_t;
// #blockc_codegen.cpu_target's vendor.
enum class CPUVendor : uint32_t;
} // namespace codegen

/// The vector ISA the CPU kernels are shaped for.
enum class CPUISA {
  /// The compiling machine's (resolved by CPUTargetConfig::resolved).
  Host,
  /// 32 x 512-bit registers (16 f32 lanes).
  AVX512,
  /// 16 x 256-bit registers (8 f32 lanes), FMA.
  AVX2,
  /// 16 x 128-bit registers (4 f32 lanes): any x86-64.
  SSE,
};

/// An x86 ISA extension the CPU kernels may use beyond their CPUISA. The
/// names (stringifyCPUFeature) are LLVM's target feature names.
enum class CPUFeature {
  /// None of them (an explicit empty set: `features=none`).
  None,
  /// vdpbf16ps: bf16 pair dot products (needs AVX-512).
  AVX512BF16,
  /// vpdpbusd on zmm registers: int8 dot products (needs AVX-512).
  AVX512VNNI,
  /// VEX vpdpbusd on ymm / xmm registers (needs AVX2).
  AVXVNNI,
  /// AMX tiles with bf16 products, tdpbf16ps (needs AVX-512; the process
  /// asks Linux for the tile state).
  AMXBF16,
};

/// Whose cores the kernels are tuned for, where a choice was measured to
/// differ between them (#blockc_codegen.cpu_target's vendor).
enum class CPUVendor {
  /// The compiling machine's with isa=host, generic with a pinned ISA
  /// (resolved by CPUTargetConfig::resolved).
  Auto,
  /// Any x86-64 CPU: the choices measured on Intel's cores.
  Generic,
  Intel,
  AMD,
};

/// The spelling of `vendor` in options ("auto", "generic", "intel", "amd").
llvm::StringRef stringifyCPUVendor(CPUVendor vendor);

/// The codegen dialect's spelling of a resolved `vendor` (not Auto).
codegen::CPUVendor getCodegenCPUVendor(CPUVendor vendor);

/// An option modifier like llvm::cl::values: the vendors as the values of
/// an option of type CPUVendor.
struct CPUVendorOptionValues {
  template <class Opt> void apply(Opt &option) const {
    for (CPUVendor v : {CPUVendor::Auto, CPUVendor::Generic, CPUVendor::Intel,
                        CPUVendor::AMD})
      option.getParser().addLiteralOption(stringifyCPUVendor(v), v, getHelp(v));
  }
  static llvm::StringRef getHelp(CPUVendor vendor);
};

/// One row of the ISA table.
struct CPUISAInfo {
  CPUISA isa;
  /// The spelling in options (`isa=avx2`, `-isa=avx2`).
  llvm::StringRef name;
  /// The help of the value in pipeline options and in the compile options.
  llvm::StringRef pipelineHelp, commandLineHelp;
  /// f32 lanes per vector register and vector registers; 0 for host.
  int64_t vectorWidth, registers;
  /// The LLVM CPU model the code is compiled for: the x86-64
  /// micro-architecture level of the ISA; "" (the host's, with the host's
  /// features) for host.
  llvm::StringRef llvmCPU;
  /// The scheduling model and tuning ("tune-cpu"); "" (the host's) for host.
  llvm::StringRef llvmTuneCPU;
  /// LLVM target features applied after the CPU model's, which keep the
  /// code within the ISA (e.g. "-avx512f" for avx2); those added ("+f") are
  /// what the executing CPU must have.
  llvm::ArrayRef<llvm::StringRef> llvmFeatures;
};

/// Every row, host first.
llvm::ArrayRef<CPUISAInfo> getCPUISAs();
/// The row of `isa`.
const CPUISAInfo &getCPUISAInfo(CPUISA isa);
/// The row of the codegen dialect's (pinned) `isa`.
const CPUISAInfo &getCPUISAInfo(codegen::ISA isa);

/// The spelling of `isa` in pass and pipeline options.
llvm::StringRef stringifyCPUISA(CPUISA isa);

/// The codegen dialect's spelling of a pinned `isa` (not host).
codegen::ISA getCodegenISA(CPUISA isa);

/// Whether code for `isa` may use what `needs` provides (AVX-512 includes
/// AVX2).
bool cpuISAIncludes(CPUISA isa, CPUISA needs);

/// One row of the extension table.
struct CPUFeatureInfo {
  CPUFeature feature;
  /// LLVM's feature name, also the spelling in options.
  llvm::StringRef name;
  /// What the kernels use it for (the option help, before the ISA it
  /// needs).
  llvm::StringRef help;
  /// The smallest ISA that has it.
  CPUISA needs;
  /// The LLVM target features that enable it on a pinned ISA's CPU model.
  llvm::ArrayRef<llvm::StringRef> llvmFeatures;
};

/// Every extension (not None), in the order resolved configurations list
/// them.
llvm::ArrayRef<CPUFeatureInfo> getCPUFeatures();
/// The row of `feature` (not None).
const CPUFeatureInfo &getCPUFeatureInfo(CPUFeature feature);

/// The spelling of `feature` in options (LLVM's feature name).
llvm::StringRef stringifyCPUFeature(CPUFeature feature);

/// The ISAs an extension needs, as its option help says (e.g. "avx2 or
/// avx512").
llvm::StringRef getCPUFeatureISAs(CPUFeature feature);

/// The help of `feature` as an option value, "<help> (<prefix>isa=<ISAs>)"
/// with the prefix "" in pipeline options and "-" in the compile options.
llvm::StringRef getCPUFeatureOptionHelp(CPUFeature feature, bool commandLine);

/// An option modifier like llvm::cl::values: the ISAs (host first) as the
/// values of an option of type CPUISA, with the pipeline options' help or
/// (`commandLine`) the compile options'.
struct CPUISAOptionValues {
  bool commandLine = false;
  template <class Opt> void apply(Opt &option) const {
    for (const CPUISAInfo &info : getCPUISAs())
      option.getParser().addLiteralOption(info.name, info.isa,
                                          commandLine ? info.commandLineHelp
                                                      : info.pipelineHelp);
  }
};

/// An option modifier like llvm::cl::values: the extensions (after `none`,
/// with `noneHelp`) as the values of an option of type CPUFeature.
struct CPUFeatureOptionValues {
  bool commandLine = false;
  llvm::StringRef noneHelp;
  template <class Opt> void apply(Opt &option) const {
    addTo(option.getParser());
  }
  void addTo(llvm::cl::parser<CPUFeature> &parser) const {
    parser.addLiteralOption("none", CPUFeature::None, noneHelp);
    for (const CPUFeatureInfo &info : getCPUFeatures())
      parser.addLiteralOption(
          info.name, info.feature,
          getCPUFeatureOptionHelp(info.feature, commandLine));
  }
};

//===----------------------------------------------------------------------===//
// The compiling machine
//===----------------------------------------------------------------------===//

/// The host CPU feature that code for `isa` needs and the host lacks (e.g.
/// "avx512f" for avx512 on an AVX2-only machine), or "" when it runs here.
std::string missingHostFeature(CPUISA isa);

/// The largest pinned ISA whose code runs here.
CPUISA getHostISA();

/// Whether the host has `feature`; AMX also needs the operating system's
/// permission to use the tile state.
bool hostHasFeature(CPUFeature feature);

/// Whether the host's vdpbf16ps outruns two f32 FMAs per k pair (AMD's).
bool hostHasFastBF16Dot();

/// The host's extensions that code for `isa` (a pinned ISA) may use by
/// default: those the ISA includes, AVX512_BF16 only where it is fast or
/// AMX is there too; in getCPUFeatures' order.
llvm::SmallVector<CPUFeature> getHostFeatures(CPUISA isa);

/// The host's maker from CPUID (Intel; AMD, Hygon as AMD), else Generic.
CPUVendor getHostCPUVendor();

/// Size in bytes of the host's data or unified cache of `level` (1 or 2):
/// CPUID, else Linux sysfs, else 0.
int64_t getHostCacheBytes(int level);

} // namespace blockc

#endif // BLOCKC_TARGET_CPUISA_H
