//===- Compiler.cpp - one compile flow under every tool -------------------===//
//
// See Compiler.h. The pipelines themselves are lib/Pipelines' builders;
// this file decides which of them a compile runs and in how many parts.
//
//===----------------------------------------------------------------------===//

#include "blockc/Compiler/Compiler.h"
#include "blockc/Dialect/Codegen/IR/CodegenDialect.h"
#include "blockc/InitAllDialects.h"
#include "blockc/Support/Error.h"
#include "blockc/Target/CudaToolkit.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassInstrumentation.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Target/TargetMachine.h"

#include <mutex>

using namespace mlir;
using namespace blockc;

char DiagnosedError::ID = 0;

namespace {
DialectRegistry allDialects() {
  DialectRegistry registry;
  registerAllDialects(registry);
  return registry;
}

/// stderr a line at a time: each complete line goes out in one write, so
/// that the diagnostics of processes sharing stderr (the ranks of a
/// tensor-parallel run under mpirun) do not interleave within a line (the
/// source manager prints a location, the severity and the message as
/// separate pieces).
class LineAtATimeErrs : public llvm::raw_ostream {
public:
  LineAtATimeErrs() { SetUnbuffered(); }
  ~LineAtATimeErrs() override {
    if (!pending.empty())
      llvm::errs().write(pending.data(), pending.size());
  }

private:
  void write_impl(const char *ptr, size_t size) override {
    written += size;
    pending.append(ptr, size);
    size_t end = pending.rfind('\n');
    if (end == std::string::npos)
      return;
    llvm::errs().write(pending.data(), end + 1);
    pending.erase(0, end + 1);
  }
  uint64_t current_pos() const override { return written; }

  std::string pending;
  uint64_t written = 0;
};

llvm::raw_ostream &diagnosticStream() {
  static LineAtATimeErrs stream;
  return stream;
}
} // namespace

ModelFile::ModelFile() : context(allDialects()) {
  // One line per error: do not append the offending op in generic form.
  context.printOpOnDiagnostic(false);
}

ModelFile::~ModelFile() = default;

llvm::Expected<ModuleOp> ModelFile::load(StringRef path) {
  // Files that are often given in the model's place.
  StringRef extension = llvm::sys::path::extension(path);
  if (extension == ".json")
    return makeError(path +
                     ": a JSON file is not a model; blockc-import "
                     "--hf-config=" +
                     path +
                     " -o model.mlir writes the module of a Hugging Face "
                     "config.json");
  if (extension == ".safetensors" || extension == ".npy")
    return makeError(path + ": a tensor file is not a model (give the .mlir "
                            "module; weights go with --weights=, an input "
                            "with --input=)");
  std::string errorMessage;
  auto input = openInputFile(path, &errorMessage);
  if (!input)
    return makeError(errorMessage);
  sourceMgr.AddNewSourceBuffer(std::move(input), llvm::SMLoc());
  handler = std::make_unique<SourceMgrDiagnosticHandler>(sourceMgr, &context,
                                                         diagnosticStream());
  module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  if (!module)
    return llvm::make_error<DiagnosedError>(
        (path + ": the model does not parse (see the diagnostics above)")
            .str());
  return *module;
}

std::string blockc::getErrorMessage(llvm::Error error) {
  std::string message;
  llvm::handleAllErrors(
      std::move(error), [](const DiagnosedError &) {},
      [&](const llvm::ErrorInfoBase &info) { message = info.message(); });
  return message;
}

std::string blockc::verifyStage(const CompileOptions &options,
                                CompileStage stage) {
  if (!options.isNVPTX() && stage >= CompileStage::PTX)
    return "-emit=ptx|cubin|fatbin need -target=nvptx";
  if (std::string error = options.verify(); !error.empty())
    return error;
  if (options.emulate && stage >= CompileStage::PTX)
    return "--emulate compiles the kernels into host code: there is no GPU "
           "binary for -emit=ptx|cubin|fatbin";
  return "";
}

llvm::Expected<OutputPaths> blockc::getOutputPaths(StringRef input,
                                                   StringRef output,
                                                   StringRef header,
                                                   CompileStage stage) {
  StringRef extension = stage == CompileStage::Object   ? ".o"
                        : stage == CompileStage::Cubin  ? ".cubin"
                        : stage == CompileStage::Fatbin ? ".fatbin"
                                                        : "";
  OutputPaths paths;
  llvm::SmallString<256> path(input == "-" ? StringRef("model")
                                           : llvm::sys::path::filename(input));
  llvm::sys::path::replace_extension(path, extension);
  paths.output = !output.empty()     ? output.str()
                 : extension.empty() ? std::string("-")
                                     : std::string(path);
  if (!extension.empty() && paths.output == "-")
    return makeError("-emit=obj|cubin|fatbin need an output file (-o)");
  path = paths.output;
  llvm::sys::path::replace_extension(path, ".h");
  paths.header = header.empty() ? std::string(path) : header.str();
  return paths;
}

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
    derive.paged = options.paged;
    derive.pageSize = options.pageSize;
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

namespace {
/// Runs the derive-decode pipeline for `derive` on `module`.
LogicalResult runDeriveDecode(ModuleOp module, const DecodeOptions &derive) {
  PassManager pm(module.getContext(), ModuleOp::getOperationName());
  buildDeriveDecodePipeline(pm, derive);
  return pm.run(module);
}
} // namespace

FailureOr<std::string> blockc::derivePagedEntry(ModuleOp module,
                                                StringRef entry,
                                                int64_t pageSize,
                                                bool keepEntry) {
  DecodeOptions derive;
  derive.entry = entry.str();
  derive.keepPrefill = keepEntry;
  derive.paged = true;
  derive.pageSize = pageSize;
  if (failed(runDeriveDecode(module, derive)))
    return failure();
  return (entry + "_paged").str();
}

FailureOr<DecodeEntry> blockc::derivePagedSignature(ModuleOp module,
                                                    StringRef entry,
                                                    int64_t pageSize) {
  FailureOr<std::string> name =
      derivePagedEntry(module, entry, pageSize, /*keepEntry=*/true);
  if (failed(name))
    return failure();
  DecodeEntry paged;
  paged.funcName = *name;
  paged.paged = true;
  auto func = module.lookupSymbol<func::FuncOp>(paged.funcName);
  PagedArguments args = getPagedArguments(func);
  for (const PagedPoolArgument &pool : args.pools)
    paged.caches.push_back(pool.type);
  paged.pageSize = args.pageSize;
  paged.pagedInput = cast<RankedTensorType>(func.getArgumentTypes().front());
  paged.pagedResult = cast<RankedTensorType>(func.getResultTypes().front());
  return paged;
}

FailureOr<DecodeEntry> blockc::deriveDecodeEntry(ModuleOp module,
                                                 StringRef entry,
                                                 transformer::KVLayout layout,
                                                 bool keepPrefill) {
  DecodeOptions derive;
  derive.entry = entry.str();
  derive.kvLayout = layout;
  derive.keepPrefill = keepPrefill;
  if (failed(runDeriveDecode(module, derive)))
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

namespace {

/// --print-kernel-configs: after each pass that chooses kernel
/// configurations (the select-tiles passes, the projection groups), every
/// configuration it left on an op, once (KernelConfigAttrInterface).
class KernelConfigPrinter : public PassInstrumentation {
public:
  explicit KernelConfigPrinter(llvm::raw_ostream &os) : os(os) {}

  void runAfterPass(Pass *pass, Operation *op) override {
    StringRef arg = pass->getArgument();
    if (!arg.ends_with("select-tiles") && arg != "blockc-cpu-group-projections")
      return;
    // Function passes run in parallel: one writer at a time.
    std::lock_guard<std::mutex> lock(mutex);
    op->walk([&](Operation *inner) {
      for (NamedAttribute attr : inner->getDiscardableAttrs()) {
        auto config =
            dyn_cast<codegen::KernelConfigAttrInterface>(attr.getValue());
        if (!config)
          continue;
        std::string line;
        llvm::raw_string_ostream ls(line);
        if (auto file = inner->getLoc()->findInstanceOf<FileLineColLoc>())
          ls << file.getFilename().getValue() << ":" << file.getLine() << ":"
             << file.getColumn();
        else
          ls << inner->getLoc();
        ls << ": '" << inner->getName() << "' " << attr.getName().getValue()
           << " = " << attr.getValue() << " (" << config.getKernelPass()
           << ")\n";
        if (printed.insert(line).second)
          os << line;
      }
    });
    os.flush();
  }

private:
  llvm::raw_ostream &os;
  std::mutex mutex;
  llvm::StringSet<> printed;
};

} // namespace

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
    if (options.printKernelConfigs)
      pm.addInstrumentation(
          std::make_unique<KernelConfigPrinter>(llvm::errs()));
    // The verifier after every pass took a third of the passes' time
    // (docs/Pipelines.md, "Compile time"): by default the IR is verified
    // once, after this part of the pipeline.
    pm.enableVerifier(options.verifyEach);
    buildCompilePipeline(pm, options, stage, entry, decode, toolkit, part);
    if (failed(pm.run(module)))
      return failedLowering();
    if (!options.verifyEach && failed(verify(module.getOperation())))
      return failedLowering();
    return llvm::Error::success();
  };

  LoweredModule lowered;
  // The decode or paged entry's signature, for the C header: derived on a
  // copy.
  if (decode == DecodeMode::BesideEntry) {
    OwningOpRef<ModuleOp> copy = module.clone();
    FailureOr<DecodeEntry> derived =
        options.paged ? derivePagedSignature(*copy, entry, options.pageSize)
                      : deriveDecodeEntry(*copy, entry, options.kvLayout,
                                          /*keepPrefill=*/true);
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

namespace {
llvm::Expected<int64_t> checkRanks(int64_t ranks,
                                   const CompileOptions &options) {
  if (options.isNVPTX() && ranks > 1)
    return makeError("tensor parallelism runs on the CPU target over MPI (a "
                     "GPU version would all-reduce with NCCL, "
                     "docs/TensorParallel.md)");
  return ranks;
}
} // namespace

llvm::Expected<int64_t> blockc::partitionModule(ModuleOp module,
                                                const CompileOptions &options) {
  if (options.tensorParallel < 0)
    return makeError("--tensor-parallel must be at least 1");
  if (llvm::Error e =
          partitionForTensorParallel(module, options.tensorParallel))
    return std::move(e);
  return checkRanks(getTensorParallelRanks(module), options);
}

llvm::Expected<int64_t>
blockc::planTensorParallel(ModuleOp module, const CompileOptions &options) {
  // A model partitioned already must be run with its rank count.
  if (getTensorParallelRanks(module) > 1)
    return partitionModule(module, options);
  return checkRanks(options.tensorParallel > 1 ? options.tensorParallel : 1,
                    options);
}

llvm::Expected<ModelSignature>
blockc::prepareModel(ModuleOp module, const CompileOptions &options) {
  if (llvm::Expected<int64_t> ranks = partitionModule(module, options); !ranks)
    return ranks.takeError();
  FailureOr<ModelSignature> signature = analyzeModel(module, options.entry);
  if (failed(signature))
    return llvm::make_error<DiagnosedError>(
        "the entry's signature is invalid (see above)");
  return std::move(*signature);
}

llvm::Expected<CompileArtefacts>
blockc::compileModule(ModuleOp module, const CompileOptions &options,
                      CompileStage stage, const ModelSignature &signature,
                      DecodeMode decode, StringRef toolkit,
                      StringRef headerName, TimingScope *timing) {
  // The pipeline rewrites the entry (into llvm.func): keep its location.
  Location entryLoc = module.getLoc();
  if (auto entry = module.lookupSymbol<func::FuncOp>(signature.funcName))
    entryLoc = entry.getLoc();
  auto lowered =
      lowerModule(module, options, stage, signature, decode, toolkit,
                  /*readPrepareRecords=*/stage == CompileStage::Object, timing);
  if (!lowered)
    return lowered.takeError();

  CompileArtefacts artefacts;
  llvm::raw_string_ostream os(artefacts.output);
  if (stage >= CompileStage::PTX) {
    artefacts.output = getGPUBinary(module);
    if (!artefacts.output.empty())
      return artefacts;
    // A block whose result is empty (a static zero dimension) folds away
    // entirely and launches nothing.
    mlir::emitError(entryLoc)
        << "@" << signature.funcName << " launches no GPU kernel (its result "
        << signature.resultType
        << " is empty), so there is no GPU binary to emit; -emit=obj "
           "compiles its host code";
    return llvm::make_error<DiagnosedError>("no GPU binary to emit");
  }
  if (stage <= CompileStage::LLVMDialect) {
    module.print(os);
    os << "\n";
    return artefacts;
  }
  // LLVM's part, timed beside the passes (--mlir-timing). The timers'
  // ids are static addresses: a name's id lives on the heap, where a
  // destroyed pass manager's pass (another timer's id) may have been.
  static const char translateId = 0, codegenId = 0;
  std::optional<TimingScope> translating;
  if (timing)
    translating = timing->nest(&translateId, [] {
      return std::string("LLVM: translation to LLVM IR, optimisation");
    });
  auto code = translateHostCode(module, options, llvm::Reloc::PIC_);
  if (translating)
    translating->stop();
  if (!code)
    return code.takeError();
  if (stage == CompileStage::LLVMIR) {
    code->module->print(os, nullptr);
    return artefacts;
  }
  if (stage == CompileStage::Object)
    artefacts.header = emitCHeader(
        signature, headerName, options.isNVPTX(),
        lowered->decode ? &*lowered->decode : nullptr, options.emulate,
        lowered->prepare ? &*lowered->prepare : nullptr);
  llvm::SmallString<0> buffer;
  llvm::raw_svector_ostream machineCode(buffer);
  std::optional<TimingScope> generating;
  if (timing)
    generating = timing->nest(
        &codegenId, [] { return std::string("LLVM: code generation"); });
  if (llvm::Error e = emitMachineCode(*code->module, *code->machine,
                                      stage == CompileStage::Asm
                                          ? llvm::CodeGenFileType::AssemblyFile
                                          : llvm::CodeGenFileType::ObjectFile,
                                      machineCode))
    return std::move(e);
  artefacts.output = std::string(buffer.str());
  return artefacts;
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

llvm::Error blockc::writeArtefacts(const CompileArtefacts &artefacts,
                                   const OutputPaths &paths,
                                   CompileStage stage) {
  std::string errorMessage;
  auto output = mlir::openOutputFile(paths.output, &errorMessage);
  if (!output)
    return makeError(errorMessage);
  output->os() << artefacts.output;
  std::unique_ptr<llvm::ToolOutputFile> header;
  if (stage == CompileStage::Object) {
    header = mlir::openOutputFile(paths.header, &errorMessage);
    if (!header)
      return makeError(errorMessage);
    header->os() << artefacts.header;
  }
  output->os().flush();
  if (output->os().has_error())
    return makeError("cannot write " + paths.output);
  output->keep();
  if (header)
    header->keep();
  return llvm::Error::success();
}

llvm::Error blockc::writeModelReport(ModuleOp module,
                                     const CompileOptions &options,
                                     ReportOptions report, ReportFormat format,
                                     StringRef title, StringRef outputPath) {
  llvm::Expected<int64_t> ranks = partitionModule(module, options);
  if (!ranks)
    return ranks.takeError();
  report.ranks = *ranks;
  std::vector<BlockReport> reports = buildReports(module, report);
  if (reports.empty())
    return makeError(title + ": no transformer.block to report on");
  std::string errorMessage;
  auto output = mlir::openOutputFile(outputPath, &errorMessage);
  if (!output)
    return makeError(errorMessage);
  ModelPartsReport parts = buildModelPartsReport(module, report);
  printReport(output->os(), title, reports, format, &parts);
  output->keep();
  return llvm::Error::success();
}
