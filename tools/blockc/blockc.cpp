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
#include "blockc/Compiler/Compiler.h"
#include "blockc/InitAllDialects.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Support/Timing.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/WithColor.h"

#include <string>
#include <vector>

using namespace mlir;
using blockc::CompileStage;
namespace cl = llvm::cl;

namespace {

cl::OptionCategory category("blockc options");

cl::opt<std::string> inputFile(cl::Positional, cl::desc("<model.mlir>"),
                               cl::init("-"), cl::cat(category));
cl::opt<std::string> outputFile("o", cl::desc("Output file ('-' = stdout)"),
                                cl::value_desc("file"), cl::cat(category));
cl::opt<CompileStage> emit(
    "emit", cl::desc("Stage to stop at"), cl::init(CompileStage::Object),
    cl::values(
        clEnumValN(CompileStage::Transformer, "transformer",
                   "parsed and verified transformer dialect"),
        clEnumValN(CompileStage::Linalg, "linalg",
                   "linalg on tensors (stage 1)"),
        clEnumValN(CompileStage::Buffers, "buffers",
                   "loops on buffers (stage 2; NVPTX: gpu.launch)"),
        clEnumValN(CompileStage::Buffers, "gpu",
                   "NVPTX stage 2: gpu.launch on managed buffers"),
        clEnumValN(CompileStage::LLVMDialect, "llvm-mlir",
                   "LLVM dialect (stage 3; NVPTX: with the gpu.binary)"),
        clEnumValN(CompileStage::LLVMDialect, "mlir", "same as llvm-mlir"),
        clEnumValN(CompileStage::LLVMIR, "llvm-ir", "host LLVM IR"),
        clEnumValN(CompileStage::LLVMIR, "llvm", "same as llvm-ir"),
        clEnumValN(CompileStage::Asm, "asm", "host assembly"),
        clEnumValN(CompileStage::Object, "obj",
                   "host object file plus a C header (default); NVPTX: "
                   "with the GPU binary embedded"),
        clEnumValN(CompileStage::PTX, "ptx",
                   "NVPTX: PTX text (no CUDA needed)"),
        clEnumValN(CompileStage::Cubin, "cubin", "NVPTX: cubin (needs ptxas)"),
        clEnumValN(CompileStage::Fatbin, "fatbin",
                   "NVPTX: fatbin (needs ptxas and fatbinary)")),
    cl::cat(category));
cl::opt<std::string>
    headerFile("header",
               cl::desc("C header to write with -emit=obj (default: the "
                        "output file with extension .h)"),
               cl::value_desc("file"), cl::cat(category));
cl::opt<std::string>
    ptxFeatures("ptx-features",
                cl::desc("NVPTX: PTX ISA version feature (default: the one the "
                         "architecture needs, e.g. +ptx80 for sm_90a)"),
                cl::init(""), cl::cat(category));
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
// libLLVM registers a global option named "threads": ours is "num-threads"
// and parseCommandLine maps --threads=N onto it (as blockc-run does).
cl::opt<unsigned> cpuThreads(
    "num-threads",
    cl::desc("CPU: threads of every parallel loop (default 0: chosen at run "
             "time by OMP_NUM_THREADS)"),
    cl::init(0), cl::cat(category));
cl::opt<bool> withDecode(
    "decode",
    cl::desc("Also compile the KV-cached decode entry <entry>_decode "
             "(transformer-derive-decode) and declare it in the C header "
             "(-target=cpu and nvptx; default off)"),
    cl::init(false), cl::cat(category));
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
                              cl::desc("--report: tokens per pass (T, "
                                       "default 1)"),
                              cl::init(1), cl::cat(reportCategory));
cl::opt<int64_t>
    reportKVLen("kv-len",
                cl::desc("--report: attended keys (L; default: --seq-len)"),
                cl::init(0), cl::cat(reportCategory));
cl::opt<int64_t> reportLayers("layers",
                              cl::desc("--report: layers in the model (N, "
                                       "default 1)"),
                              cl::init(1), cl::cat(reportCategory));
cl::opt<blockc::ReportFormat> reportFormat(
    "format", cl::desc("--report output format"),
    cl::init(blockc::ReportFormat::Text),
    cl::values(clEnumValN(blockc::ReportFormat::Text, "text",
                          "aligned text (default)"),
               clEnumValN(blockc::ReportFormat::Markdown, "markdown",
                          "markdown tables"),
               clEnumValN(blockc::ReportFormat::JSON, "json",
                          "JSON (schema blockc-report/1, docs/Report.md)"),
               clEnumValN(blockc::ReportFormat::HTML, "html",
                          "a self-contained HTML page with an SVG diagram")),
    cl::cat(reportCategory));

int fail(const llvm::Twine &message) {
  llvm::WithColor::error(llvm::errs(), "blockc") << message << "\n";
  return 1;
}

/// Reports `e` unless its diagnostics were printed already.
int fail(llvm::Error e) {
  std::string message;
  llvm::handleAllErrors(
      std::move(e), [](const blockc::DiagnosedError &) {},
      [&](const llvm::ErrorInfoBase &info) { message = info.message(); });
  return message.empty() ? 1 : fail(message);
}

std::string defaultOutput() {
  if (emit == CompileStage::Cubin || emit == CompileStage::Fatbin) {
    llvm::SmallString<256> path(llvm::sys::path::filename(
        inputFile == "-" ? std::string("model") : inputFile.getValue()));
    llvm::sys::path::replace_extension(
        path, emit == CompileStage::Cubin ? ".cubin" : ".fatbin");
    return std::string(path);
  }
  if (emit != CompileStage::Object)
    return "-";
  if (inputFile == "-")
    return "model.o";
  llvm::SmallString<256> path(llvm::sys::path::filename(inputFile));
  llvm::sys::path::replace_extension(path, ".o");
  return std::string(path);
}

/// --report: the walk of a tensor through every block of `module`.
int printReport(ModuleOp module) {
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
  std::string errorMessage;
  auto output = openOutputFile(outputFile.empty() ? "-" : outputFile.getValue(),
                               &errorMessage);
  if (!output)
    return fail(errorMessage);
  blockc::printReport(output->os(), inputFile, reports, reportFormat);
  output->keep();
  return 0;
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
  blockc::registerCompileOptions();
  blockc::parseCommandLine(argc, argv, "blockc: transformer block compiler\n",
                           {&category, &reportCategory});

  auto options = blockc::getCompileOptionsFromCommandLine();
  if (!options)
    return fail(options.takeError());
  options->cpu.threads = cpuThreads;
  options->ptxFeatures = ptxFeatures;
  options->gpuBinary = gpuBinary;
  options->cudaToolkit = cudaToolkit;
  bool nvptx = options->isNVPTX();
  if (!nvptx && emit >= CompileStage::PTX)
    return fail("-emit=ptx|cubin|fatbin need -target=nvptx");
  if (std::string error = options->verify(); !error.empty())
    return fail(error);
  if (options->emulate && emit >= CompileStage::PTX)
    return fail("--emulate compiles the kernels into host code: there is no "
                "GPU binary for -emit=ptx|cubin|fatbin");
  llvm::Expected<std::string> toolkit = blockc::findToolkit(*options, emit);
  if (!toolkit)
    return fail(toolkit.takeError());
  blockc::DecodeMode decode =
      withDecode ? blockc::DecodeMode::BesideEntry : blockc::DecodeMode::None;

  DialectRegistry registry;
  blockc::registerAllDialects(registry);
  MLIRContext context(registry);
  // One line per error: do not append the offending op in generic form.
  context.printOpOnDiagnostic(false);

  if (blockc::shouldDumpPassPipeline()) {
    // Every host-derived choice is resolved: the printed pipeline replays
    // this run's IR in blockc-opt on any machine.
    PassManager pm(&context, ModuleOp::getOperationName());
    blockc::buildCompilePipeline(
        pm, *options, emit, options->entry.empty() ? "forward" : options->entry,
        decode, *toolkit);
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
  if (report)
    return printReport(*module);

  // Tensor parallelism: the module becomes each rank's program before its
  // signature (the weights' parts) is read.
  if (llvm::Expected<int64_t> ranks =
          blockc::partitionModule(*module, *options);
      !ranks)
    return fail(ranks.takeError());
  // The entry point must be well formed before anything is compiled.
  FailureOr<blockc::ModelSignature> signature =
      blockc::analyzeModel(*module, options->entry);
  if (failed(signature))
    return 1;
  // The pipeline rewrites the entry (into llvm.func): keep its location.
  Location entryLoc = module->getLoc();
  if (auto entry = module->lookupSymbol<func::FuncOp>(signature->funcName))
    entryLoc = entry.getLoc();

  std::string outPath = outputFile.empty() ? defaultOutput() : outputFile;
  if ((emit == CompileStage::Object || emit == CompileStage::Cubin ||
       emit == CompileStage::Fatbin) &&
      outPath == "-")
    return fail("-emit=obj|cubin|fatbin need an output file (-o)");

  DefaultTimingManager tm;
  applyDefaultTimingManagerCLOptions(tm);
  TimingScope timing = tm.getRootScope();
  auto lowered = blockc::lowerModule(
      *module, *options, emit, *signature, decode, *toolkit,
      /*readPrepareRecords=*/emit == CompileStage::Object, &timing);
  if (!lowered)
    return fail(lowered.takeError());

  auto output = openOutputFile(outPath, &errorMessage);
  if (!output)
    return fail(errorMessage);
  if (emit >= CompileStage::PTX) {
    std::string binary = blockc::getGPUBinary(*module);
    if (binary.empty()) {
      // A block whose result is empty (a static zero dimension) folds away
      // entirely and launches nothing.
      mlir::emitError(entryLoc)
          << "@" << signature->funcName
          << " launches no GPU kernel (its result " << signature->resultType
          << " is empty), so there is no GPU binary to emit; -emit=obj "
             "compiles its host code";
      return 1;
    }
    output->os() << binary;
    output->keep();
    return 0;
  }
  if (emit <= CompileStage::LLVMDialect) {
    module->print(output->os());
    output->os() << "\n";
    output->keep();
    return 0;
  }

  auto code = blockc::translateHostCode(*module, *options, llvm::Reloc::PIC_);
  if (!code)
    return fail(code.takeError());
  if (emit == CompileStage::LLVMIR) {
    code->module->print(output->os(), nullptr);
    output->keep();
    return 0;
  }
  std::unique_ptr<llvm::ToolOutputFile> header;
  if (emit == CompileStage::Object) {
    std::string headerPath = headerFile;
    if (headerPath.empty()) {
      llvm::SmallString<256> p(outPath);
      llvm::sys::path::replace_extension(p, ".h");
      headerPath = std::string(p);
    }
    header = openOutputFile(headerPath, &errorMessage);
    if (!header)
      return fail(errorMessage);
    header->os() << blockc::emitCHeader(
        *signature, llvm::sys::path::filename(headerPath), nvptx,
        lowered->decode ? &*lowered->decode : nullptr, options->emulate,
        lowered->prepare ? &*lowered->prepare : nullptr);
  }
  if (llvm::Error e = blockc::emitMachineCode(
          *code->module, *code->machine,
          emit == CompileStage::Asm ? llvm::CodeGenFileType::AssemblyFile
                                    : llvm::CodeGenFileType::ObjectFile,
          output->os()))
    return fail(std::move(e));
  output->os().flush();
  if (output->os().has_error())
    return fail("cannot write " + outPath);
  output->keep();
  if (header)
    header->keep();
  return 0;
}
