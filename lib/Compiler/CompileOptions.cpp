//===- CompileOptions.cpp - the compile options and their command line ----===//
//
// The command-line options of CompileOptions live in one ManagedStatic,
// created by registerCompileOptions() (as MLIR's pass-manager options are),
// so that a tool that does not compile declares none of them.
//
//===----------------------------------------------------------------------===//

#include "blockc/Compiler/CompileOptions.h"
#include "blockc/Dialect/Codegen/IR/CodegenDialect.h"
#include "blockc/InitAllDialects.h"
#include "blockc/Revision.inc"
#include "blockc/Support/Error.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/ManagedStatic.h"
#include "llvm/Support/raw_ostream.h"

#include <cstring>

using namespace blockc;
namespace cl = llvm::cl;

namespace {

struct CompileCLOptions {
  cl::opt<std::string> target{
      "target",
      cl::desc("Code generation target: cpu (this machine through LLVM, "
               "default) or nvptx (NVIDIA GPUs)"),
      cl::init("cpu"), cl::cat(getCompileOptionsCategory())};
  cl::opt<std::string> entry{
      "entry",
      cl::desc("Entry function (default: @forward or the only function)"),
      cl::cat(getCompileOptionsCategory())};
  cl::opt<unsigned> optLevel{
      "O", cl::desc("LLVM optimisation level (0-3, default 2)"),
      cl::init(kDefaultOptLevel), cl::Prefix,
      cl::cat(getCompileOptionsCategory())};
  cl::opt<CPUISA> isa{
      "isa", cl::desc("CPU: vector ISA the kernels are shaped for"),
      cl::init(CPUISA::Host), CPUISAOptionValues{/*commandLine=*/true},
      cl::cat(getCompileOptionsCategory())};
  cl::list<CPUFeature> cpuFeatures{
      "cpu-features",
      cl::desc("CPU: ISA extensions the kernels may use beyond -isa, "
               "comma-separated (default: this machine's with -isa=host, "
               "none with a pinned -isa)"),
      cl::CommaSeparated,
      CPUFeatureOptionValues{/*commandLine=*/true,
                             "none of them (the default with a pinned -isa)"},
      cl::cat(getCompileOptionsCategory())};
  cl::opt<CPUVendor> cpuVendor{
      "cpu-vendor",
      cl::desc("CPU: whose cores the kernels are tuned for (the software "
               "prefetch distance of the projections' weight stream)"),
      cl::init(CPUVendor::Auto), CPUVendorOptionValues{},
      cl::cat(getCompileOptionsCategory())};
  cl::opt<int64_t> cpuPrefetchBytes{
      "cpu-prefetch-bytes",
      cl::desc("CPU: bytes ahead the few-row (decode) projection kernels "
               "prefetch their weight stream (default -1: by -cpu-vendor, "
               "1024 on Intel, none on AMD; 0: no prefetch; else a "
               "multiple of 64 up to 65536)"),
      cl::init(-1), cl::cat(getCompileOptionsCategory())};
  cl::opt<bool> prepareWeights{
      "prepare-weights",
      cl::desc("CPU: pack the projection weights once, in a prepare function "
               "per entry, instead of on every call (default on)"),
      cl::init(true), cl::cat(getCompileOptionsCategory())};
  cl::opt<std::string> gpuArch{
      "gpu-arch",
      cl::desc("With -target=nvptx: the GPU architecture (sm_75, sm_80, "
               "sm_86, sm_89, sm_90 (default), sm_90a, sm_100, sm_100a)"),
      cl::init("sm_90"), cl::cat(getCompileOptionsCategory())};
  cl::opt<std::string> gpuChip{
      "gpu-chip",
      cl::desc("With -target=nvptx: the GPU whose limits and peaks the tiles "
               "and the profile assume (t4, a100, a10, l4, h100, h200, b200; "
               "default: the architecture's, docs/GPU.md#chips)"),
      cl::init(""), cl::cat(getCompileOptionsCategory())};
  cl::opt<bool> emulate{
      "emulate",
      cl::desc("With -target=nvptx: compile for the GPU emulator, which runs "
               "the NVPTX kernels on the host (no GPU needed; "
               "docs/GPUEmulator.md; default off)"),
      cl::init(false), cl::cat(getCompileOptionsCategory())};
  cl::opt<bool> allowTf32{
      "gpu-allow-tf32",
      cl::desc("With -target=nvptx (sm_80+): run f32 projections on TF32 "
               "tensor cores, their operands rounded to 10-bit mantissas "
               "(docs/GPU.md#tf32; default off)"),
      cl::init(false), cl::cat(getCompileOptionsCategory())};
  cl::opt<std::string> warpgroupSchedule{
      "gpu-warpgroup-schedule",
      cl::desc("With -target=nvptx -gpu-arch=sm_90a: the projections' "
               "warpgroup-MMA kernel: specialized (default: a producer "
               "warpgroup), persistent (also one block per multiprocessor) "
               "or cooperative (docs/GPU.md)"),
      cl::init("specialized"), cl::cat(getCompileOptionsCategory())};
  cl::opt<std::string> warpgroupEpilogue{
      "gpu-warpgroup-epilogue",
      cl::desc("With -target=nvptx -gpu-arch=sm_90a: how the projections' "
               "warpgroup-MMA kernel stores its output tiles: tma (default: "
               "through shared memory and a TMA store, where it fits) or "
               "elements (per-element stores) (docs/GPU.md)"),
      cl::init("tma"), cl::cat(getCompileOptionsCategory())};
  cl::opt<bool> warpgroupRope{
      "gpu-warpgroup-rope",
      cl::desc("With -target=nvptx -gpu-arch=sm_90a: apply RoPE in the Q "
               "and K projections' TMA-store epilogue where their tiles "
               "cover whole heads (default true; false keeps the RoPE "
               "kernels) (docs/GPU.md)"),
      cl::init(true), cl::cat(getCompileOptionsCategory())};
  cl::opt<bool> mmaRope{
      "gpu-mma-rope",
      cl::desc("With -target=nvptx: apply RoPE in the epilogue of the Q and "
               "K projections' mma.sync kernels (sm_80 and newer, where no "
               "warpgroup kernel is used) where their tiles cover whole "
               "heads (default true; false keeps the RoPE kernels) "
               "(docs/GPU.md)"),
      cl::init(true), cl::cat(getCompileOptionsCategory())};
  cl::opt<int64_t> attentionConsumers{
      "gpu-attention-consumers",
      cl::desc("With -target=nvptx -gpu-arch=sm_90a: consumer warpgroups of "
               "the warpgroup attention kernel: 2 (default: a producer "
               "warpgroup and two consumers per 128 query rows where the "
               "shared memory fits) or 1 (one warpgroup per 64 rows)"),
      cl::init(2), cl::cat(getCompileOptionsCategory())};
  cl::opt<int64_t> attentionStages{
      "gpu-attention-stages",
      cl::desc("With -target=nvptx -gpu-arch=sm_90a: K/V ring stages of the "
               "warp-specialised attention kernel: 3 (default, where the "
               "shared memory fits, else 2) or 2"),
      cl::init(3), cl::cat(getCompileOptionsCategory())};
  cl::opt<bool> attentionOverlap{
      "gpu-attention-overlap",
      cl::desc("With -target=nvptx -gpu-arch=sm_90a: the warp-specialised "
               "attention's consumers issue S of key tile j with P V of "
               "tile j - 1 (default true; false: one key tile at a time) "
               "(docs/GPU.md)"),
      cl::init(true), cl::cat(getCompileOptionsCategory())};
  cl::opt<bool> gemvRopeAppend{
      "gpu-gemv-rope-append",
      cl::desc("With -target=nvptx: decode projections on the "
               "weight-streaming kernel also apply RoPE (q, k) and write "
               "k and v into the KV cache (default true; false: separate "
               "RoPE and append kernels) (docs/GPU.md)"),
      cl::init(true), cl::cat(getCompileOptionsCategory())};
  cl::opt<bool> gemvNormPrologue{
      "gpu-gemv-norm-prologue",
      cl::desc("With -target=nvptx: decode projections on the "
               "weight-streaming kernel compute the RMSNorm (or LayerNorm) "
               "of their input themselves (default true; false: the norm's "
               "kernel) (docs/GPU.md)"),
      cl::init(true), cl::cat(getCompileOptionsCategory())};
  cl::opt<bool> mergeLaunches{
      "gpu-merge-launches",
      cl::desc("With -target=nvptx: independent neighbouring "
               "weight-streaming kernels (a decode step's q, k and v "
               "projections) run as one launch (default true; false: a "
               "launch each) (docs/GPU.md)"),
      cl::init(true), cl::cat(getCompileOptionsCategory())};
  cl::opt<bool> checkBounds{
      "check-bounds",
      cl::desc("With --emulate: check the indices of every memory access "
               "inside the kernels (default off)"),
      cl::init(false), cl::cat(getCompileOptionsCategory())};
  cl::opt<transformer::KVLayout> kvLayout{
      "kv-layout", cl::desc("--decode: memory order of the KV caches"),
      cl::init(transformer::KVLayout::bhsd),
      cl::values(clEnumValN(transformer::KVLayout::bhsd, "bhsd",
                            "[B, H_kv, L_max, D] (head-major, default)"),
                 clEnumValN(transformer::KVLayout::bshd, "bshd",
                            "[B, L_max, H_kv, D] (token-major)")),
      cl::cat(getCompileOptionsCategory())};
  cl::opt<int64_t> tensorParallel{
      "tensor-parallel",
      cl::desc("Split every block over N MPI ranks (Megatron-style tensor "
               "parallelism on the CPU target, docs/TensorParallel.md): "
               "blockc's object runs as one process per rank and its header "
               "lists the part of each weight a rank passes; blockc-run runs "
               "under mpirun -np N. Default 0: as the model says (a model "
               "that blockc-import --tensor-parallel partitioned)"),
      cl::init(0), cl::cat(getCompileOptionsCategory())};
  cl::opt<bool> printKernelConfigs{
      "print-kernel-configs",
      cl::desc("Print each kernel's configuration on stderr as the "
               "heuristics choose it (the blockc_codegen tiles of every "
               "projection and attention, docs/Pipelines.md); a module "
               "that carries them keeps them"),
      cl::init(false), cl::cat(getCompileOptionsCategory())};
  cl::opt<bool> verifyEach{
      "verify-each",
      cl::desc("Verify the IR after every pass of the pipeline, naming the "
               "pass that broke it (default: once after each part of the "
               "pipeline, a third of the MLIR passes' time less)"),
      cl::init(false), cl::cat(getCompileOptionsCategory())};
  cl::opt<bool> dumpPipeline{
      "dump-pass-pipeline",
      cl::desc("Print the pass pipeline the tool would compile with (every "
               "host-derived choice resolved) and exit"),
      cl::init(false), cl::cat(getCompileOptionsCategory())};
};

llvm::ManagedStatic<CompileCLOptions> clOptions;

} // namespace

cl::OptionCategory &blockc::getCompileOptionsCategory() {
  static cl::OptionCategory category("blockc compile options");
  return category;
}

void blockc::registerCompileOptions() {
  mlir::registerAsmPrinterCLOptions();
  mlir::registerMLIRContextCLOptions();
  mlir::registerPassManagerCLOptions();
  // Passes first, so that --mlir-print-ir-after=<pass> and friends know
  // every pass name.
  registerAllPasses();
  *clOptions;
}

llvm::Expected<CompileOptions> blockc::getCompileOptionsFromCommandLine() {
  CompileOptions options;
  if (!clOptions.isConstructed())
    return options;
  const CompileCLOptions &cl = *clOptions;
  if (cl.target != "cpu" && cl.target != "nvptx")
    return makeError("unknown target '" + cl.target +
                     "' (expected cpu or nvptx)");
  options.target =
      cl.target == "nvptx" ? CompileTarget::NVPTX : CompileTarget::CPU;
  options.entry = cl.entry;
  options.optLevel = cl.optLevel;
  options.cpu.isa = cl.isa;
  options.cpu.features.assign(cl.cpuFeatures.begin(), cl.cpuFeatures.end());
  options.cpu.prepareWeights = cl.prepareWeights;
  options.cpu.vendor = cl.cpuVendor;
  options.cpu.prefetchBytes = cl.cpuPrefetchBytes;
  options.gpuArch = cl.gpuArch;
  options.gpuChip = cl.gpuChip;
  options.emulate = cl.emulate;
  options.allowTf32 = cl.allowTf32;
  options.warpgroupSchedule = cl.warpgroupSchedule;
  options.warpgroupEpilogue = cl.warpgroupEpilogue;
  options.warpgroupRope = cl.warpgroupRope;
  options.mmaRope = cl.mmaRope;
  options.attentionConsumers = cl.attentionConsumers;
  options.attentionStages = cl.attentionStages;
  options.attentionOverlap = cl.attentionOverlap;
  options.gemvRopeAppend = cl.gemvRopeAppend;
  options.gemvNormPrologue = cl.gemvNormPrologue;
  options.mergeLaunches = cl.mergeLaunches;
  options.checkBounds = cl.checkBounds;
  options.kvLayout = cl.kvLayout;
  options.tensorParallel = cl.tensorParallel;
  options.printKernelConfigs = cl.printKernelConfigs;
  options.verifyEach = cl.verifyEach;
  return options;
}

bool blockc::shouldDumpPassPipeline() {
  return clOptions.isConstructed() && clOptions->dumpPipeline;
}

void CompileOptions::getNVPTXOptions(NVPTXPipelineOptions &options,
                                     llvm::StringRef toolkit) const {
  options.chip = gpuArch;
  options.gpu = gpuChip;
  options.features = ptxFeatures;
  options.format = gpuBinary;
  options.toolkit = toolkit.str();
  options.emulate = emulate;
  options.checkBounds = checkBounds;
  options.allowTf32 = allowTf32;
  options.warpgroupSchedule = warpgroupSchedule;
  options.warpgroupEpilogue = warpgroupEpilogue;
  options.warpgroupRope = warpgroupRope;
  options.mmaRope = mmaRope;
  options.attentionConsumers = attentionConsumers;
  options.attentionStages = attentionStages;
  options.attentionOverlap = attentionOverlap;
  options.gemvRopeAppend = gemvRopeAppend;
  options.gemvNormPrologue = gemvNormPrologue;
  options.mergeLaunches = mergeLaunches;
  options.profile = profile;
}

CPUCodegenTarget CompileOptions::getCodegenTarget() const {
  // The host code of an NVPTX module runs on the host; CPU kernels stay
  // within the ISA they were shaped for.
  if (isNVPTX())
    return {};
  CPUTargetConfig config = getCPUConfig();
  const CPUISAInfo &isa = getCPUISAInfo(config.isa);
  return {isa.llvmCPU.str(), isa.llvmTuneCPU.str(),
          config.llvmTargetFeatures()};
}

std::string CompileOptions::verify() const {
  bool nvptx = isNVPTX();
  if (emulate && !nvptx)
    return "--emulate needs -target=nvptx";
  if (allowTf32 && !nvptx)
    return "-gpu-allow-tf32 needs -target=nvptx";
  if (checkBounds && !emulate)
    return "--check-bounds needs --emulate";
  if (warpgroupSchedule != "specialized" && warpgroupSchedule != "persistent" &&
      warpgroupSchedule != "cooperative")
    return "unknown -gpu-warpgroup-schedule '" + warpgroupSchedule +
           "' (expected specialized, persistent or cooperative)";
  if (warpgroupEpilogue != "tma" && warpgroupEpilogue != "elements")
    return "unknown -gpu-warpgroup-epilogue '" + warpgroupEpilogue +
           "' (expected tma or elements)";
  if (attentionConsumers != 1 && attentionConsumers != 2)
    return "-gpu-attention-consumers must be 1 or 2, got " +
           std::to_string(attentionConsumers);
  if (attentionStages != 2 && attentionStages != 3)
    return "-gpu-attention-stages must be 2 or 3, got " +
           std::to_string(attentionStages);
  if (std::string error = getCPUConfig().checkFeatures(); !error.empty())
    return "-cpu-features: " + error;
  if (std::string error = cpu.checkPrefetchBytes(); !error.empty())
    return "-cpu-prefetch-bytes " + error;
  if (nvptx)
    if (std::string error = codegen::checkKnownGPU(gpuArch, gpuChip);
        !error.empty())
      return "-gpu-arch / -gpu-chip: " + error;
  if (optLevel > 3)
    return "-O must be 0, 1, 2 or 3";
  if (tensorParallel < 0)
    return "--tensor-parallel must be at least 1";
  if (pageSize < 1)
    return "--page-size must be at least 1";
  return "";
}

void blockc::printVersion(llvm::raw_ostream &os) {
  os << "blockc version " << BLOCKC_VERSION << " (commit "
     << BLOCKC_SOURCE_REVISION << ")\n  LLVM version " << LLVM_VERSION_STRING
     << "\n";
}

void blockc::parseCommandLine(
    int argc, char **argv, llvm::StringRef overview,
    llvm::ArrayRef<const cl::OptionCategory *> toolCategories) {
  std::vector<std::string> storage(argv, argv + argc);
  for (std::string &a : storage)
    for (const char *prefix : {"--threads=", "-threads="})
      if (llvm::StringRef(a).starts_with(prefix))
        a = "--num-threads=" + a.substr(std::strlen(prefix));
  std::vector<const char *> args;
  for (const std::string &a : storage)
    args.push_back(a.c_str());
  std::vector<const cl::OptionCategory *> shown(toolCategories.begin(),
                                                toolCategories.end());
  if (clOptions.isConstructed())
    shown.push_back(&getCompileOptionsCategory());
  // As cl::HideUnrelatedOptions (which keeps --help and --version, in
  // LLVM's "Generic Options"), but Hidden rather than ReallyHidden, so that
  // --help-hidden still lists LLVM's and MLIR's options.
  for (auto &entry : cl::getRegisteredOptions()) {
    cl::Option *option = entry.second;
    if (llvm::none_of(option->Categories,
                      [&](cl::OptionCategory *c) {
                        return llvm::is_contained(shown, c) ||
                               c->getName() == "Generic Options";
                      }) &&
        option->getOptionHiddenFlag() == cl::NotHidden)
      option->setHiddenFlag(cl::Hidden);
  }
  cl::SetVersionPrinter(printVersion);
  cl::ParseCommandLineOptions(static_cast<int>(args.size()), args.data(),
                              overview);
}
