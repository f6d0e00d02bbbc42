//===- CompileOptions.h - what every blockc compile is asked for -*- C++
//-*-===//
//
// One CompileOptions describes a compile for every tool and library that
// drives one (blockc, blockc-run, BlockJit, DecodeSession): the target, the
// CPU's ISA and extensions or the GPU's architecture and chip, the
// optimisation level, the KV-cache layout of a decode entry and the
// tensor-parallel ranks. Its command-line options are declared once, here,
// in one category (registerCompileOptions); the tools add only their own.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKC_COMPILER_COMPILEOPTIONS_H
#define BLOCKC_COMPILER_COMPILEOPTIONS_H

#include "blockc/Pipelines/Pipelines.h"
#include "blockc/Target/CPU.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace blockc {

/// The code generation target of a compile.
enum class CompileTarget { CPU, NVPTX };

/// The tools' default -O: LLVM -O2. -O3 did not pay for the already
/// vectorised, register-tiled kernels (docs/Pipelines.md).
inline constexpr unsigned kDefaultOptLevel = 2;

struct CompileOptions {
  CompileTarget target = CompileTarget::CPU;
  /// The entry function; empty: @forward or the only function.
  std::string entry;
  /// LLVM optimisation level of the host code (0-3).
  unsigned optLevel = kDefaultOptLevel;

  /// CPU: the vector ISA and extensions the kernels are shaped for, the
  /// threads of every parallel loop and whether the projections read
  /// weights packed once by a prepare function (host-derived choices are
  /// resolved by getCPUConfig).
  CPUTargetConfig cpu;

  /// NVPTX: architecture, chip, PTX features, the embedded GPU binary and
  /// the kernels' variants (NVPTXPipelineOptions documents each).
  std::string gpuArch = "sm_90";
  std::string gpuChip;
  std::string ptxFeatures;
  GPUBinaryFormat gpuBinary = GPUBinaryFormat::ISA;
  bool emulate = false;
  bool checkBounds = false;
  bool allowTf32 = false;
  std::string warpgroupSchedule = "specialized";
  /// sm_90a projections' epilogue: "tma" (a TMA store of each output tile
  /// where the shared memory fits) or "elements".
  std::string warpgroupEpilogue = "tma";
  /// sm_90a projections with a TMA store: apply the RoPE that reads the
  /// rounded Q / K in the epilogue where the tiles cover whole heads.
  bool warpgroupRope = true;
  /// mma.sync projections (sm_80 and newer): apply the RoPE that reads the
  /// rounded Q / K in the epilogue (on a shared-memory staging tile) where
  /// the tiles cover whole heads.
  bool mmaRope = true;
  /// sm_90a attention: consumer warpgroups per block of the warpgroup
  /// kernel (2: warp-specialised where it fits, 1: one warpgroup).
  int64_t attentionConsumers = 2;
  /// sm_90a attention: K/V ring stages of the warp-specialised kernel
  /// (3: where its shared memory fits, else 2; 2: always 2).
  int64_t attentionStages = 3;
  /// sm_90a attention: the warp-specialised consumers' intra-warpgroup
  /// overlap (false: one key tile at a time).
  bool attentionOverlap = true;
  /// Decode projections: RoPE and the KV-cache append in the
  /// weight-streaming kernel's epilogue (false: separate kernels).
  bool gemvRopeAppend = true;
  /// Decode projections: the weight-streaming kernel computes the norm
  /// of its input (false: the norm's kernel).
  bool gemvNormPrologue = true;
  /// Independent neighbouring weight-streaming kernels as one launch.
  bool mergeLaunches = true;
  /// With `emulate`: count each kernel's work for the emulator's profile.
  bool profile = false;
  /// The CUDA toolkit directory for ptxas and fatbinary (-cuda-toolkit);
  /// empty: searched (findToolkit in Compiler.h).
  std::string cudaToolkit;

  /// Memory order of the KV caches of a derived decode entry.
  transformer::KVLayout kvLayout = transformer::KVLayout::bhsd;
  /// The derived entry is the ragged paged one (<entry>_paged,
  /// transformer-derive-paged-decode) with pages of `pageSize` tokens,
  /// instead of the dense decode entry (CPU only for now).
  bool paged = false;
  int64_t pageSize = 16;

  /// Split every block over this many ranks (0 or 1: as the model says).
  int64_t tensorParallel = 0;

  /// Print each kernel configuration (codegen::KernelConfigAttrInterface)
  /// on stderr after the pass that chose it (--print-kernel-configs).
  bool printKernelConfigs = false;

  /// Verify the IR after every pass (--verify-each), as blockc-opt does,
  /// instead of once after each part of the pipeline.
  bool verifyEach = false;

  bool isNVPTX() const { return target == CompileTarget::NVPTX; }

  /// The CPU pipeline's target, every host-derived choice resolved.
  CPUTargetConfig getCPUConfig() const { return cpu.resolved(); }
  /// Sets the NVPTX pipeline's options (`toolkit`: where ptxas is).
  void getNVPTXOptions(NVPTXPipelineOptions &options,
                       llvm::StringRef toolkit = "") const;
  /// The machine the host code is generated for: the CPU ISA's for the
  /// CPU target, the host's for the host code of an NVPTX module.
  CPUCodegenTarget getCodegenTarget() const;

  /// The first error of a combination of options (e.g. "--emulate needs
  /// -target=nvptx"), or an empty string. Checked before anything is read.
  std::string verify() const;
};

/// The parser of an enum option whose error for an unknown value lists the
/// valid ones: "unknown value 'x' (valid: a, b, c)" (cl::parser says only
/// "Cannot find option named 'x'!").
template <typename T> struct ListingParser : public llvm::cl::parser<T> {
  using llvm::cl::parser<T>::parser;
  bool parse(llvm::cl::Option &option, llvm::StringRef name,
             llvm::StringRef arg, T &value) {
    llvm::StringRef given = option.hasArgStr() ? arg : name;
    std::string valid;
    for (const auto &entry : this->Values) {
      if (entry.Name == given) {
        value = entry.V.getValue();
        return false;
      }
      valid += (valid.empty() ? "" : ", ") + entry.Name.str();
    }
    return option.error("unknown value '" + given + "' (valid: " + valid + ")");
  }
};

/// The category of the options registerCompileOptions() declares.
llvm::cl::OptionCategory &getCompileOptionsCategory();

/// Declares the command-line options of CompileOptions (-target, -isa,
/// -cpu-features, -gpu-arch, -O, ...) once for every tool, with MLIR's
/// printing, context and pass-manager options and every pass (so that
/// --mlir-print-ir-after=<pass> knows them); call it before parsing.
void registerCompileOptions();

/// The options the command line gave (registerCompileOptions() must have
/// been called). Fails on a value a parser cannot check (-target).
llvm::Expected<CompileOptions> getCompileOptionsFromCommandLine();

/// Whether the command line gave -dump-pass-pipeline (print the pipeline
/// the tool would compile with, every host-derived choice resolved, and
/// exit).
bool shouldDumpPassPipeline();

/// Prints blockc's version, the commit it was configured from and the LLVM
/// it uses (what --version prints).
void printVersion(llvm::raw_ostream &os);

/// Parses the command line of a blockc tool: --threads=N is read as
/// --num-threads=N (libLLVM owns a global option named "threads"),
/// --help lists the compile options and `toolCategories` only
/// (--help-hidden lists all), and --version prints printVersion().
void parseCommandLine(
    int argc, char **argv, llvm::StringRef overview,
    llvm::ArrayRef<const llvm::cl::OptionCategory *> toolCategories);

} // namespace blockc

#endif // BLOCKC_COMPILER_COMPILEOPTIONS_H
