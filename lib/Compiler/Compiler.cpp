//===- Compiler.cpp - one compile flow under every tool -------------------===//
//
// See Compiler.h. The pipelines themselves are lib/Pipelines' builders;
// this file decides which of them a compile runs and in how many parts.
//
//===----------------------------------------------------------------------===//

#include "blockc/Compiler/Compiler.h"
#include "blockc/Target/CudaToolkit.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Target/TargetMachine.h"

using namespace mlir;
using namespace blockc;

char DiagnosedError::ID = 0;

namespace {
llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}
} // namespace

GPUBinaryFormat blockc::getGPUBinaryFormat(const CompileOptions &options,
                                           CompileStage stage) {
  switch (stage) {
  case CompileStage::PTX:
    return GPUBinaryFormat::ISA;
  case CompileStage::Cubin:
    return GPUBinaryFormat::Bin;
  case CompileStage::Fatbin:
    return GPUBinaryFormat::Fatbin;
  default:
    return options.gpuBinary;
  }
}

llvm::Expected<std::string> blockc::findToolkit(const CompileOptions &options,
                                                CompileStage stage) {
  GPUBinaryFormat format = getGPUBinaryFormat(options, stage);
  if (!options.isNVPTX() || options.emulate || format == GPUBinaryFormat::ISA ||
      stage < CompileStage::LLVMDialect)
    return std::string();
  SmallVector<StringRef> tools = {"ptxas"};
  if (format == GPUBinaryFormat::Fatbin)
    tools.push_back("fatbinary");
  if (std::optional<std::string> found =
          findCudaToolkit(tools, options.cudaToolkit))
    return *found;
  return makeError(
      llvm::Twine("a ") +
      (format == GPUBinaryFormat::Bin ? "cubin" : "fatbin") + " needs '" +
      llvm::join(tools, "' and '") + "' from the CUDA toolkit, which " +
      (tools.size() > 1 ? "were" : "was") + " not found " +
      (options.cudaToolkit.empty()
           ? std::string("in PATH, $CUDA_ROOT, $CUDA_HOME, $CUDA_PATH or "
                         "/usr/local/cuda")
           : "in " + options.cudaToolkit + "/bin") +
      "; -emit=ptx needs no toolkit");
}

void blockc::buildCompilePipeline(OpPassManager &pm,
                                  const CompileOptions &options,
                                  CompileStage stage, StringRef entry,
                                  DecodeMode decode, StringRef toolkit,
                                  PipelinePart part) {
  bool first = part != PipelinePart::AfterLinalg;
  bool second = part != PipelinePart::UpToLinalg;
  if (decode != DecodeMode::None && first) {
    DecodeOptions derive;
    derive.entry = entry.str();
    derive.kvLayout = options.kvLayout;
    derive.keepPrefill = decode == DecodeMode::BesideEntry;
    buildDeriveDecodePipeline(pm, derive);
  }
  if (!options.isNVPTX()) {
    CPUTargetConfig config = options.getCPUConfig();
    if (stage >= CompileStage::Linalg && first)
      buildCPULowerToLinalgPipeline(pm, config);
    if (stage >= CompileStage::Buffers && second)
      buildCPUBufferizePipeline(pm, config);
    if (stage >= CompileStage::LLVMDialect && second)
      buildCPULowerToLLVMPipeline(pm);
    return;
  }
  CompileOptions gpu = options;
  gpu.gpuBinary = getGPUBinaryFormat(options, stage);
  NVPTXPipelineOptions nvptx;
  gpu.getNVPTXOptions(nvptx, toolkit);
  if (stage >= CompileStage::Linalg)
    buildNVPTXLowerToLinalgPipeline(pm, nvptx);
  if (stage >= CompileStage::Buffers)
    buildNVPTXMapToGPUPipeline(pm, nvptx);
  if (stage >= CompileStage::LLVMDialect)
    buildNVPTXLowerToLLVMPipeline(pm, nvptx);
}

FailureOr<DecodeEntry> blockc::deriveDecodeEntry(ModuleOp module,
                                                 StringRef entry,
                                                 transformer::KVLayout layout,
                                                 bool keepPrefill) {
  PassManager pm(module.getContext(), ModuleOp::getOperationName());
  DecodeOptions derive;
  derive.entry = entry.str();
  derive.kvLayout = layout;
  derive.keepPrefill = keepPrefill;
  buildDeriveDecodePipeline(pm, derive);
  if (failed(pm.run(module)))
    return failure();
  DecodeEntry decode;
  decode.funcName = (entry + "_decode").str();
  auto func = module.lookupSymbol<func::FuncOp>(decode.funcName);
  for (const KVCacheArgument &cache : getKVCacheArguments(func)) {
    decode.caches.push_back(cache.type);
    decode.headMajor = cache.headMajor;
  }
  return decode;
}

llvm::Expected<LoweredModule>
blockc::lowerModule(ModuleOp module, const CompileOptions &options,
                    CompileStage stage, const ModelSignature &signature,
                    DecodeMode decode, StringRef toolkit,
                    bool readPrepareRecords, TimingScope *timing) {
  MLIRContext *context = module.getContext();
  StringRef entry = signature.funcName;
  auto failedLowering = [&] {
    return llvm::make_error<DiagnosedError>(
        std::string("lowering to ") +
        (options.isNVPTX() ? "NVPTX" : "the CPU") +
        " failed (see the diagnostics above)");
  };
  auto run = [&](PipelinePart part) -> llvm::Error {
    PassManager pm(context, ModuleOp::getOperationName());
    if (failed(applyPassManagerCLOptions(pm)))
      return makeError("invalid pass manager options");
    if (timing)
      pm.enableTiming(*timing);
    buildCompilePipeline(pm, options, stage, entry, decode, toolkit, part);
    return failed(pm.run(module)) ? failedLowering() : llvm::Error::success();
  };

  LoweredModule lowered;
  // The decode entry's signature, for the C header: derived on a copy.
  if (decode == DecodeMode::BesideEntry) {
    OwningOpRef<ModuleOp> copy = module.clone();
    FailureOr<DecodeEntry> derived =
        deriveDecodeEntry(*copy, entry, options.kvLayout, /*keepPrefill=*/true);
    if (failed(derived))
      return failedLowering();
    lowered.decode = std::move(*derived);
  }

  // An object's C header and the JIT's prepare() need the prepare
  // functions' records, which stage 1 writes and stage 3 strips: the CPU
  // pipeline runs in two parts.
  bool split = readPrepareRecords && !options.isNVPTX();
  if (!split) {
    if (llvm::Error e = run(PipelinePart::All))
      return std::move(e);
    return lowered;
  }
  if (llvm::Error e = run(PipelinePart::UpToLinalg))
    return std::move(e);
  auto readRecords = [&](StringRef func,
                         std::optional<PrepareEntry> &records) -> llvm::Error {
    FailureOr<std::optional<PrepareEntry>> found =
        findPrepareEntry(module, func);
    if (failed(found))
      return llvm::make_error<DiagnosedError>(
          ("the prepare function of @" + func +
           " is malformed (see the diagnostics above)")
              .str());
    records = std::move(*found);
    return llvm::Error::success();
  };
  if (llvm::Error e = readRecords(entry, lowered.prepare))
    return std::move(e);
  if (lowered.decode)
    if (llvm::Error e =
            readRecords(lowered.decode->funcName, lowered.decode->prepare))
      return std::move(e);
  if (llvm::Error e = run(PipelinePart::AfterLinalg))
    return std::move(e);
  return lowered;
}

llvm::Expected<int64_t> blockc::partitionModule(ModuleOp module,
                                                const CompileOptions &options) {
  if (options.tensorParallel < 0)
    return makeError("--tensor-parallel must be at least 1");
  if (llvm::Error e =
          partitionForTensorParallel(module, options.tensorParallel))
    return std::move(e);
  int64_t ranks = getTensorParallelRanks(module);
  if (options.isNVPTX() && ranks > 1)
    return makeError("tensor parallelism runs on the CPU target over MPI (a "
                     "GPU version would all-reduce with NCCL, "
                     "docs/TensorParallel.md)");
  return ranks;
}

llvm::Expected<HostCode>
blockc::translateHostCode(ModuleOp lowered, const CompileOptions &options,
                          std::optional<llvm::Reloc::Model> relocModel) {
  CPUCodegenTarget target = options.getCodegenTarget();
  auto machine = createHostTargetMachine(relocModel, target);
  if (!machine)
    return makeError("cannot create the host target: " +
                     llvm::toString(machine.takeError()));
  HostCode code;
  code.machine = std::move(*machine);
  code.context = std::make_unique<llvm::LLVMContext>();
  auto module = translateToLLVMIR(lowered, *code.context, *code.machine,
                                  options.optLevel, target.tuneCPU);
  if (!module)
    return module.takeError();
  code.module = std::move(*module);
  return std::move(code);
}

std::string blockc::getGPUBinary(ModuleOp lowered) {
  std::string binary;
  lowered.walk([&](gpu::BinaryOp op) {
    for (Attribute attr : op.getObjects())
      binary += cast<gpu::ObjectAttr>(attr).getObject().getValue().str();
  });
  return binary;
}
