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

#include "mlir/Pass/PassManager.h"
#include "mlir/Support/Timing.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/WithColor.h"

#include <string>

using namespace mlir;
using blockc::CompileStage;
namespace cl = llvm::cl;

namespace {

cl::OptionCategory category("blockc options");

cl::opt<std::string> inputFile(cl::Positional, cl::desc("<model.mlir>"),
                               cl::init("-"), cl::cat(category));
cl::opt<std::string> outputFile("o", cl::desc("Output file ('-' = stdout)"),
                                cl::value_desc("file"), cl::cat(category));
cl::opt<CompileStage, false, blockc::ListingParser<CompileStage>> emit(
    "emit", cl::desc("Stage to stop at (default obj)"),
    cl::init(CompileStage::Object),
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
cl::opt<bool> withPaged(
    "paged",
    cl::desc("Also compile the ragged paged-KV-cache entry <entry>_paged "
             "(transformer-derive-paged-decode) and declare it in the C header "
             "(default off)"),
    cl::init(false), cl::cat(category));
cl::opt<int64_t>
    pageSize("page-size",
             cl::desc("--paged: tokens per page of the K/V pools (default 16)"),
             cl::init(16), cl::cat(category));
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
  std::string message = blockc::getErrorMessage(std::move(e));
  return message.empty() ? 1 : fail(message);
}

/// --report: the walk of a tensor through every block of `module`. With
/// --tensor-parallel=N (or a model partitioned already) the module is
/// partitioned first, as compiles do: each block is then one rank's part.
int printReport(ModuleOp module) {
  if (reportSeqLen < 1 || reportKVLen < 0 || reportLayers < 1)
    return fail("--seq-len and --layers must be >= 1, --kv-len >= 1");
  auto compileOptions = blockc::getCompileOptionsFromCommandLine();
  if (!compileOptions)
    return fail(compileOptions.takeError());
  blockc::ReportOptions options;
  options.seqLen = reportSeqLen;
  options.kvLen = reportKVLen ? reportKVLen : reportSeqLen;
  options.layers = reportLayers;
  if (llvm::Error e = blockc::writeModelReport(
          module, *compileOptions, options, reportFormat, inputFile,
          outputFile.empty() ? "-" : outputFile.getValue()))
    return fail(std::move(e));
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM y(argc, argv);
  registerDefaultTimingManagerCLOptions();
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
  options->paged = withPaged;
  options->pageSize = pageSize;
  if (withPaged && withDecode)
    return fail("--decode and --paged are exclusive (one derived entry per "
                "compile)");
  if (std::string error = options->verify(); !error.empty())
    return fail(error);
  if (std::string error = blockc::verifyStage(*options, emit); !error.empty())
    return fail(error);
  llvm::Expected<std::string> toolkit = blockc::findToolkit(*options, emit);
  if (!toolkit)
    return fail(toolkit.takeError());
  blockc::DecodeMode decode = withDecode || withPaged
                                  ? blockc::DecodeMode::BesideEntry
                                  : blockc::DecodeMode::None;

  blockc::ModelFile file;
  if (blockc::shouldDumpPassPipeline()) {
    // Every host-derived choice is resolved: the printed pipeline replays
    // this run's IR in blockc-opt on any machine.
    PassManager pm(&file.getContext(), ModuleOp::getOperationName());
    blockc::buildCompilePipeline(
        pm, *options, emit, options->entry.empty() ? "forward" : options->entry,
        decode, *toolkit);
    pm.printAsTextualPipeline(llvm::outs());
    llvm::outs() << "\n";
    return 0;
  }
  // Timed from the parse on (--mlir-timing); the report prints when `tm`
  // goes.
  DefaultTimingManager tm;
  applyDefaultTimingManagerCLOptions(tm);
  TimingScope timing = tm.getRootScope();
  static const char parseId = 0; // a static id, as Compiler.cpp's timers
  TimingScope parsing =
      timing.nest(&parseId, [] { return std::string("parse"); });
  llvm::Expected<ModuleOp> module = file.load(inputFile);
  parsing.stop();
  if (!module)
    return fail(module.takeError());
  if (report)
    return printReport(*module);
  // Tensor parallelism: the module becomes each rank's program before its
  // signature (the weights' parts) is read; the entry must be well formed
  // before anything is compiled.
  auto signature = blockc::prepareModel(*module, *options);
  if (!signature)
    return fail(signature.takeError());

  auto paths = blockc::getOutputPaths(inputFile, outputFile, headerFile, emit);
  if (!paths)
    return fail(paths.takeError());
  auto artefacts = blockc::compileModule(
      *module, *options, emit, *signature, decode, *toolkit,
      llvm::sys::path::filename(paths->header), &timing);
  if (!artefacts)
    return fail(artefacts.takeError());
  // Output files are only kept when everything succeeded.
  if (llvm::Error e = blockc::writeArtefacts(*artefacts, *paths, emit))
    return fail(std::move(e));
  return 0;
}
