//===- blockc.cpp - the blockc compiler driver ----------------------------===//
//
//   blockc model.mlir -target=cpu -emit=<stage> [-o file] [--header=file.h]
//
// Parses a model, runs the named pipelines up to the requested stage (the
// same builder functions blockc-opt registers), and prints or writes the
// result. Accepts the usual MLIR debugging flags (--mlir-print-ir-after-all,
// --mlir-timing, ...). Output files are only kept when everything succeeded.
//
//===----------------------------------------------------------------------===//

#include "blockc/Analysis/BlockReport.h"
#include "blockc/Analysis/ModelSignature.h"
#include "blockc/Analysis/PreparedWeights.h"
#include "blockc/InitAllDialects.h"
#include "blockc/Pipelines/Pipelines.h"
#include "blockc/Target/CPU.h"
#include "blockc/Target/CudaToolkit.h"
#include "blockc/Tools/CommandLine.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Support/Timing.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/WithColor.h"

#include <cstring>
#include <string>
#include <vector>

using namespace mlir;
namespace cl = llvm::cl;

namespace {

enum class Target { CPU, NVPTX };
enum class Emit {
  Transformer,
  Linalg,
  Buffers, // loops on buffers (CPU) or gpu.launch on buffers (NVPTX)
  LLVMMLIR,
  LLVMIR,
  Asm,
  Obj,
  PTX,
  Cubin,
  Fatbin
};

cl::OptionCategory category("blockc options");

cl::opt<std::string> inputFile(cl::Positional, cl::desc("<model.mlir>"),
                               cl::init("-"), cl::cat(category));
cl::opt<std::string> outputFile("o", cl::desc("Output file ('-' = stdout)"),
                                cl::value_desc("file"), cl::cat(category));
cl::opt<Target>
    target("target", cl::desc("Code generation target"), cl::init(Target::CPU),
           cl::values(clEnumValN(Target::CPU, "cpu", "host CPU through LLVM"),
                      clEnumValN(Target::NVPTX, "nvptx", "NVIDIA GPUs (PTX)")),
           cl::cat(category));
cl::opt<Emit> emit(
    "emit", cl::desc("Stage to stop at"), cl::init(Emit::Obj),
    cl::values(clEnumValN(Emit::Transformer, "transformer",
                          "parsed and verified transformer dialect"),
               clEnumValN(Emit::Linalg, "linalg",
                          "linalg on tensors (stage 1)"),
               clEnumValN(Emit::Buffers, "buffers",
                          "loops on buffers (stage 2; NVPTX: gpu.launch)"),
               clEnumValN(Emit::Buffers, "gpu",
                          "NVPTX stage 2: gpu.launch on managed buffers"),
               clEnumValN(Emit::LLVMMLIR, "llvm-mlir",
                          "LLVM dialect (stage 3; NVPTX: with the gpu.binary)"),
               clEnumValN(Emit::LLVMMLIR, "mlir", "same as llvm-mlir"),
               clEnumValN(Emit::LLVMIR, "llvm-ir", "host LLVM IR"),
               clEnumValN(Emit::LLVMIR, "llvm", "same as llvm-ir"),
               clEnumValN(Emit::Asm, "asm", "host assembly"),
               clEnumValN(Emit::Obj, "obj",
                          "host object file plus a C header (default); NVPTX: "
                          "with the GPU binary embedded"),
               clEnumValN(Emit::PTX, "ptx", "NVPTX: PTX text (no CUDA needed)"),
               clEnumValN(Emit::Cubin, "cubin", "NVPTX: cubin (needs ptxas)"),
               clEnumValN(Emit::Fatbin, "fatbin",
                          "NVPTX: fatbin (needs ptxas and fatbinary)")),
    cl::cat(category));
cl::opt<std::string>
    headerFile("header",
               cl::desc("C header to write with -emit=obj (default: the "
                        "output file with extension .h)"),
               cl::value_desc("file"), cl::cat(category));
cl::opt<std::string> entryName("entry",
                               cl::desc("Entry function (default: @forward "
                                        "or the only function)"),
                               cl::cat(category));
cl::opt<unsigned> optLevel("O", cl::desc(blockc::kOptLevelHelp),
                           cl::init(blockc::kDefaultOptLevel), cl::Prefix,
                           cl::cat(category));
cl::opt<std::string> gpuArch("gpu-arch", cl::desc(blockc::kGPUArchHelp),
                             cl::init("sm_90"), cl::cat(category));
cl::opt<std::string> gpuChip("gpu-chip", cl::desc(blockc::kGPUChipHelp),
                             cl::init(""), cl::cat(category));
cl::opt<std::string>
    ptxFeatures("ptx-features",
                cl::desc("NVPTX: PTX ISA version feature (default: the one the "
                         "architecture needs, e.g. +ptx80 for sm_90a)"),
                cl::init(""), cl::cat(category));
cl::opt<bool> emulateGPU("emulate", cl::desc(blockc::kEmulateHelp),
                         cl::init(false), cl::cat(category));
cl::opt<bool> allowTf32("gpu-allow-tf32", cl::desc(blockc::kAllowTf32Help),
                        cl::init(false), cl::cat(category));
cl::opt<std::string> warpgroupSchedule("gpu-warpgroup-schedule",
                                       cl::desc(blockc::kWarpgroupScheduleHelp),
                                       cl::init("specialized"),
                                       cl::cat(category));
cl::opt<bool> checkBounds("check-bounds", cl::desc(blockc::kCheckBoundsHelp),
                          cl::init(false), cl::cat(category));
cl::opt<blockc::GPUBinaryFormat> gpuBinary(
    "gpu-binary",
    cl::desc("NVPTX: GPU binary embedded by -emit=llvm-mlir|llvm-ir|obj"),
    cl::init(blockc::GPUBinaryFormat::ISA),
    cl::values(clEnumValN(blockc::GPUBinaryFormat::ISA, "isa",
                          "PTX, JIT-compiled by the driver at load (default)"),
               clEnumValN(blockc::GPUBinaryFormat::Bin, "bin", "cubin"),
               clEnumValN(blockc::GPUBinaryFormat::Fatbin, "fatbin",
                          "fat binary")),
    cl::cat(category));
cl::opt<blockc::CPUISA>
    cpuIsa("isa", cl::desc("CPU: vector ISA the kernels are shaped for"),
           cl::init(blockc::CPUISA::Host), blockc::cpuISAValues(),
           cl::cat(category));
cl::list<blockc::CPUFeature> cpuFeatures("cpu-features",
                                         cl::desc(blockc::kCPUFeaturesHelp),
                                         cl::CommaSeparated,
                                         blockc::cpuFeatureValues(),
                                         cl::cat(category));
cl::opt<bool> prepareWeights(
    "prepare-weights",
    cl::desc("CPU: pack the projection weights once, in a prepare function "
             "per entry, instead of on every call (default on)"),
    cl::init(true), cl::cat(category));
// libLLVM registers a global option named "threads": ours is "num-threads"
// and main() maps --threads=N onto it (as blockc-run does).
cl::opt<unsigned> cpuThreads(
    "num-threads",
    cl::desc("CPU: threads of every parallel loop (default 0: chosen at run "
             "time by OMP_NUM_THREADS)"),
    cl::init(0), cl::cat(category));
cl::opt<bool> withDecode(
    "decode",
    cl::desc("Also compile the KV-cached decode entry <entry>_decode "
             "(transformer-derive-decode) and declare it in the C header "
             "(-target=cpu and nvptx)"),
    cl::init(false), cl::cat(category));
cl::opt<blockc::transformer::KVLayout>
    kvLayout("kv-layout", cl::desc("--decode: memory order of the KV caches"),
             cl::init(blockc::transformer::KVLayout::bhsd),
             cl::values(clEnumValN(blockc::transformer::KVLayout::bhsd, "bhsd",
                                   "[B, H_kv, L_max, D] (head-major, default)"),
                        clEnumValN(blockc::transformer::KVLayout::bshd, "bshd",
                                   "[B, L_max, H_kv, D]")),
             cl::cat(category));
cl::opt<std::string> cudaToolkit(
    "cuda-toolkit",
    cl::desc("NVPTX: CUDA toolkit directory for ptxas/fatbinary (default: "
             "PATH, $CUDA_ROOT, $CUDA_HOME, $CUDA_PATH, /usr/local/cuda)"),
    cl::value_desc("dir"), cl::cat(category));
cl::OptionCategory reportCategory("blockc --report options");
cl::opt<bool> report("report",
                     cl::desc("Print the walk of a tensor through each block "
                              "(shapes, FLOPs, parameters, bytes) instead of "
                              "compiling"),
                     cl::init(false), cl::cat(reportCategory));
cl::opt<int64_t> reportSeqLen("seq-len",
                              cl::desc("--report: tokens per pass (T)"),
                              cl::init(1), cl::cat(reportCategory));
cl::opt<int64_t>
    reportKVLen("kv-len",
                cl::desc("--report: attended keys (L; default: --seq-len)"),
                cl::init(0), cl::cat(reportCategory));
cl::opt<int64_t> reportLayers("layers",
                              cl::desc("--report: layers in the model (N)"),
                              cl::init(1), cl::cat(reportCategory));
cl::opt<blockc::ReportFormat> reportFormat(
    "format", cl::desc("--report output format"),
    cl::init(blockc::ReportFormat::Text),
    cl::values(clEnumValN(blockc::ReportFormat::Text, "text", "aligned text"),
               clEnumValN(blockc::ReportFormat::Markdown, "markdown",
                          "markdown tables"),
               clEnumValN(blockc::ReportFormat::JSON, "json",
                          "JSON (schema blockc-report/1, docs/Report.md)"),
               clEnumValN(blockc::ReportFormat::HTML, "html",
                          "a self-contained HTML page with an SVG diagram")),
    cl::cat(reportCategory));
cl::opt<int64_t> tensorParallel(
    "tensor-parallel",
    cl::desc("Split every block over N MPI ranks (Megatron-style tensor "
             "parallelism, CPU target, docs/TensorParallel.md): the object "
             "runs as one process per rank and links with the MPI library; "
             "its header lists the part of each weight a rank passes"),
    cl::init(0), cl::cat(category));
cl::opt<bool> dumpPipeline(
    "dump-pass-pipeline",
    cl::desc("Print the textual pass pipeline that -emit runs and exit"),
    cl::init(false), cl::cat(category));

int fail(const llvm::Twine &message) {
  llvm::WithColor::error(llvm::errs(), "blockc") << message << "\n";
  return 1;
}

/// The GPU binary format the NVPTX pipeline must produce for `emit`.
blockc::GPUBinaryFormat gpuFormat() {
  switch (emit) {
  case Emit::PTX:
    return blockc::GPUBinaryFormat::ISA;
  case Emit::Cubin:
    return blockc::GPUBinaryFormat::Bin;
  case Emit::Fatbin:
    return blockc::GPUBinaryFormat::Fatbin;
  default:
    return gpuBinary;
  }
}

/// The CPU target of the flags; every choice left to the host is resolved
/// by the builders (and so printed by --dump-pass-pipeline).
blockc::CPUTargetConfig cpuConfig() {
  blockc::CPUTargetConfig config;
  config.isa = cpuIsa;
  config.features.assign(cpuFeatures.begin(), cpuFeatures.end());
  config.threads = cpuThreads;
  config.prepareWeights = prepareWeights;
  return config;
}

/// Which stages buildPipeline() adds: all, or the CPU pipeline split after
/// stage 1 (where the prepare functions' records are read for the header).
enum class Stages { All, UpToLinalg, AfterLinalg };

/// Adds the pipeline stages that `emit` needs; `toolkit` is the CUDA
/// toolkit that serialises cubins and fatbins.
void buildPipeline(OpPassManager &pm, llvm::StringRef entry,
                   llvm::StringRef toolkit, Stages stages = Stages::All) {
  bool first = stages != Stages::AfterLinalg;
  bool second = stages != Stages::UpToLinalg;
  // --decode: the decode entry beside the entry, on either target (the
  // same derivation as blockc-run --decode, which compiles it alone).
  if (withDecode && first) {
    blockc::DecodeOptions decode;
    decode.entry = entry.str();
    decode.kvLayout = kvLayout;
    decode.keepPrefill = true;
    blockc::buildDeriveDecodePipeline(pm, decode);
  }
  if (target == Target::CPU) {
    blockc::CPUTargetConfig config = cpuConfig().resolved();
    if (emit >= Emit::Linalg && first)
      blockc::buildCPULowerToLinalgPipeline(pm, config);
    if (emit >= Emit::Buffers && second)
      blockc::buildCPUBufferizePipeline(pm, config);
    if (emit >= Emit::LLVMMLIR && second)
      blockc::buildCPULowerToLLVMPipeline(pm);
    return;
  }
  blockc::NVPTXPipelineOptions options;
  options.chip = gpuArch;
  options.gpu = gpuChip;
  options.features = ptxFeatures;
  options.format = gpuFormat();
  options.toolkit = toolkit.str();
  options.emulate = emulateGPU;
  options.checkBounds = checkBounds;
  options.allowTf32 = allowTf32;
  options.warpgroupSchedule = warpgroupSchedule;
  if (emit >= Emit::Linalg)
    blockc::buildNVPTXLowerToLinalgPipeline(pm, options);
  if (emit >= Emit::Buffers)
    blockc::buildNVPTXMapToGPUPipeline(pm, options);
  if (emit >= Emit::LLVMMLIR)
    blockc::buildNVPTXLowerToLLVMPipeline(pm, options);
}

std::string defaultOutput() {
  if (emit == Emit::Cubin || emit == Emit::Fatbin) {
    llvm::SmallString<256> path(llvm::sys::path::filename(
        inputFile == "-" ? std::string("model") : inputFile.getValue()));
    llvm::sys::path::replace_extension(path, emit == Emit::Cubin ? ".cubin"
                                                                 : ".fatbin");
    return std::string(path);
  }
  if (emit != Emit::Obj)
    return "-";
  if (inputFile == "-")
    return "model.o";
  llvm::SmallString<256> path(llvm::sys::path::filename(inputFile));
  llvm::sys::path::replace_extension(path, ".o");
  return std::string(path);
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM y(argc, argv);
  registerAsmPrinterCLOptions();
  registerMLIRContextCLOptions();
  registerPassManagerCLOptions();
  registerDefaultTimingManagerCLOptions();
  // Passes first, so that --mlir-print-ir-after=<pass> and friends know
  // every pass name.
  blockc::registerAllPasses();
  blockc::parseBlockcOptions(argc, argv,
                             "blockc: transformer block compiler\n");

  bool nvptx = target == Target::NVPTX;
  if (!nvptx && emit >= Emit::PTX)
    return fail("-emit=ptx|cubin|fatbin need -target=nvptx");
  if (std::string error =
          blockc::checkGPUFlags(nvptx, emulateGPU, checkBounds, allowTf32);
      !error.empty())
    return fail(error);
  if (std::string error = blockc::checkWarpgroupSchedule(warpgroupSchedule);
      !error.empty())
    return fail(error);
  if (std::string error = cpuConfig().resolved().checkFeatures();
      !error.empty())
    return fail("-cpu-features: " + error);
  if (std::string error = blockc::checkGPUTarget(nvptx, gpuArch, gpuChip);
      !error.empty())
    return fail(error);
  if (emulateGPU && emit >= Emit::PTX)
    return fail("--emulate compiles the kernels into host code: there is no "
                "GPU binary for -emit=ptx|cubin|fatbin");
  std::string toolkit;
  blockc::GPUBinaryFormat format = gpuFormat();
  if (nvptx && !emulateGPU && format != blockc::GPUBinaryFormat::ISA &&
      emit >= Emit::LLVMMLIR) {
    SmallVector<llvm::StringRef> tools = {"ptxas"};
    if (format == blockc::GPUBinaryFormat::Fatbin)
      tools.push_back("fatbinary");
    std::optional<std::string> found =
        blockc::findCudaToolkit(tools, cudaToolkit);
    if (!found)
      return fail(
          "a " +
          std::string(format == blockc::GPUBinaryFormat::Bin ? "cubin"
                                                             : "fatbin") +
          " needs '" + llvm::join(tools, "' and '") + "'" +
          " from the CUDA toolkit, which " +
          (tools.size() > 1 ? "were" : "was") + " not found " +
          (cudaToolkit.empty() ? std::string("in PATH, $CUDA_ROOT, "
                                             "$CUDA_HOME, $CUDA_PATH or "
                                             "/usr/local/cuda")
                               : "in " + cudaToolkit + "/bin") +
          "; -emit=ptx needs no toolkit");
    toolkit = *found;
  }
  if (optLevel > 3)
    return fail("-O must be 0, 1, 2 or 3");

  DialectRegistry registry;
  blockc::registerAllDialects(registry);
  MLIRContext context(registry);
  // One line per error: do not append the offending op in generic form.
  context.printOpOnDiagnostic(false);

  if (dumpPipeline) {
    // Every host-derived choice is resolved: the printed pipeline replays
    // this run's IR in blockc-opt on any machine.
    PassManager pm(&context, ModuleOp::getOperationName());
    buildPipeline(pm, entryName.empty() ? "forward" : entryName.getValue(),
                  toolkit);
    pm.printAsTextualPipeline(llvm::outs());
    llvm::outs() << "\n";
    return 0;
  }

  std::string errorMessage;
  auto input = openInputFile(inputFile, &errorMessage);
  if (!input)
    return fail(errorMessage);
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(input), llvm::SMLoc());
  SourceMgrDiagnosticHandler diagHandler(sourceMgr, &context);

  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  if (!module)
    return 1; // diagnostics already printed with file:line:col

  if (report) {
    if (reportSeqLen < 1 || reportKVLen < 0 || reportLayers < 1)
      return fail("--seq-len and --layers must be >= 1, --kv-len >= 1");
    blockc::ReportOptions options;
    options.seqLen = reportSeqLen;
    options.kvLen = reportKVLen ? reportKVLen : reportSeqLen;
    options.layers = reportLayers;
    std::vector<blockc::BlockReport> reports;
    module->walk([&](blockc::transformer::BlockOp block) {
      reports.push_back(
          blockc::buildReport(blockc::BlockShape::fromOp(block), options));
    });
    if (reports.empty())
      return fail(inputFile + ": no transformer.block to report on");
    std::string outPath = outputFile.empty() ? "-" : outputFile.getValue();
    auto output = openOutputFile(outPath, &errorMessage);
    if (!output)
      return fail(errorMessage);
    blockc::printReport(output->os(), inputFile, reports, reportFormat);
    output->keep();
    return 0;
  }

  // Tensor parallelism: the module becomes each rank's program before its
  // signature (the weights' parts) is read.
  if (tensorParallel < 0)
    return fail("--tensor-parallel must be at least 1");
  if (llvm::Error e =
          blockc::partitionForTensorParallel(*module, tensorParallel))
    return fail(llvm::toString(std::move(e)));
  if (nvptx && blockc::getTensorParallelRanks(*module) > 1)
    return fail("tensor parallelism runs on the CPU target over MPI (a GPU "
                "version would all-reduce with NCCL, docs/TensorParallel.md)");

  // The entry point must be well formed before anything is compiled.
  FailureOr<blockc::ModelSignature> signature =
      blockc::analyzeModel(*module, entryName);
  if (failed(signature))
    return 1;
  // The pipeline rewrites the entry (into llvm.func): keep its location.
  Location entryLoc = module->getLoc();
  if (auto entry = module->lookupSymbol<func::FuncOp>(signature->funcName))
    entryLoc = entry.getLoc();

  std::string outPath = outputFile.empty() ? defaultOutput() : outputFile;
  if ((emit == Emit::Obj || emit == Emit::Cubin || emit == Emit::Fatbin) &&
      outPath == "-")
    return fail("-emit=obj|cubin|fatbin need an output file (-o)");

  // An object's C header declares the prepare functions, whose records
  // stage 1 writes and stage 3 strips: the CPU pipeline runs in two parts.
  bool split = emit == Emit::Obj && target == Target::CPU;
  PassManager pm(&context, ModuleOp::getOperationName());
  buildPipeline(pm, signature->funcName, toolkit,
                split ? Stages::UpToLinalg : Stages::All);
  PassManager rest(&context, ModuleOp::getOperationName());
  if (split)
    buildPipeline(rest, signature->funcName, toolkit, Stages::AfterLinalg);
  // The decode entry's signature, for the C header: derived on a copy.
  std::optional<blockc::DecodeEntry> decodeEntry;
  if (withDecode && emit == Emit::Obj) {
    OwningOpRef<ModuleOp> derived = module->clone();
    PassManager derive(&context, ModuleOp::getOperationName());
    blockc::DecodeOptions decode;
    decode.entry = signature->funcName;
    decode.kvLayout = kvLayout;
    blockc::buildDeriveDecodePipeline(derive, decode);
    if (failed(derive.run(*derived)))
      return 1;
    decodeEntry.emplace();
    decodeEntry->funcName = signature->funcName + "_decode";
    auto decodeFunc =
        derived->lookupSymbol<func::FuncOp>(decodeEntry->funcName);
    for (const blockc::KVCacheArgument &cache :
         blockc::getKVCacheArguments(decodeFunc)) {
      decodeEntry->caches.push_back(cache.type);
      decodeEntry->headMajor = cache.headMajor;
    }
  }

  if (failed(applyPassManagerCLOptions(pm)) ||
      failed(applyPassManagerCLOptions(rest)))
    return fail("invalid pass manager options");
  DefaultTimingManager tm;
  applyDefaultTimingManagerCLOptions(tm);
  TimingScope timing = tm.getRootScope();
  pm.enableTiming(timing);
  rest.enableTiming(timing);
  if (failed(pm.run(*module)))
    return 1;
  // The prepare functions of the entry and the decode entry.
  std::optional<blockc::PrepareEntry> prepareEntry, decodePrepareEntry;
  if (split) {
    auto found = blockc::findPrepareEntry(*module, signature->funcName);
    if (failed(found))
      return 1;
    prepareEntry = std::move(*found);
    if (decodeEntry) {
      auto foundDecode =
          blockc::findPrepareEntry(*module, decodeEntry->funcName);
      if (failed(foundDecode))
        return 1;
      decodePrepareEntry = std::move(*foundDecode);
    }
    if (failed(rest.run(*module)))
      return 1;
  }

  auto output = openOutputFile(outPath, &errorMessage);
  if (!output)
    return fail(errorMessage);

  if (emit >= Emit::PTX) {
    // The GPU binaries of the module (one gpu.module after merging).
    bool found = false;
    module->walk([&](gpu::BinaryOp binary) {
      for (Attribute attr : binary.getObjects()) {
        auto object = cast<gpu::ObjectAttr>(attr);
        output->os() << object.getObject().getValue();
        found = true;
      }
    });
    if (!found) {
      // A block whose result is empty (a static zero dimension) folds away
      // entirely and launches nothing.
      mlir::emitError(entryLoc)
          << "@" << signature->funcName
          << " launches no GPU kernel (its result " << signature->resultType
          << " is empty), so there is no GPU binary to emit; -emit=obj "
             "compiles its host code";
      return 1;
    }
    output->keep();
    return 0;
  }

  if (emit <= Emit::LLVMMLIR) {
    module->print(output->os());
    output->os() << "\n";
    output->keep();
    return 0;
  }

  // The host code of an NVPTX object runs on the host; CPU kernels stay
  // within the ISA they were shaped for.
  blockc::CPUCodegenTarget codegenTarget;
  if (!nvptx)
    codegenTarget = {cpuConfig().llvmCPU().str(),
                     cpuConfig().llvmTuneCPU().str(),
                     cpuConfig().llvmTargetFeatures()};
  auto machine =
      blockc::createHostTargetMachine(llvm::Reloc::PIC_, codegenTarget);
  if (!machine)
    return fail("cannot create the host target: " +
                llvm::toString(machine.takeError()));
  llvm::LLVMContext llvmContext;
  auto llvmModule = blockc::translateToLLVMIR(*module, llvmContext, **machine,
                                              optLevel, codegenTarget.tuneCPU);
  if (!llvmModule)
    return fail(llvm::toString(llvmModule.takeError()));

  if (emit == Emit::LLVMIR) {
    (*llvmModule)->print(output->os(), nullptr);
    output->keep();
    return 0;
  }

  std::unique_ptr<llvm::ToolOutputFile> header;
  if (emit == Emit::Obj) {
    std::string headerPath = headerFile;
    if (headerPath.empty()) {
      llvm::SmallString<256> p(outPath);
      llvm::sys::path::replace_extension(p, ".h");
      headerPath = std::string(p);
    }
    header = openOutputFile(headerPath, &errorMessage);
    if (!header)
      return fail(errorMessage);
    if (decodeEntry && decodePrepareEntry)
      decodeEntry->prepare = *decodePrepareEntry;
    header->os() << blockc::emitCHeader(
        *signature, llvm::sys::path::filename(headerPath), nvptx,
        decodeEntry ? &*decodeEntry : nullptr, emulateGPU,
        prepareEntry ? &*prepareEntry : nullptr);
  }
  if (llvm::Error e = blockc::emitMachineCode(
          **llvmModule, **machine,
          emit == Emit::Asm ? llvm::CodeGenFileType::AssemblyFile
                            : llvm::CodeGenFileType::ObjectFile,
          output->os()))
    return fail(llvm::toString(std::move(e)));
  output->os().flush();
  if (output->os().has_error())
    return fail("cannot write " + outPath);
  output->keep();
  if (header)
    header->keep();
  return 0;
}
