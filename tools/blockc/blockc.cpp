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

#include "blockc/ExecutionEngine/ModelSignature.h"
#include "blockc/InitAllDialects.h"
#include "blockc/Pipelines/Pipelines.h"
#include "blockc/Target/CPU.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Support/Timing.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/WithColor.h"

using namespace mlir;
namespace cl = llvm::cl;

namespace {

enum class Target { CPU, NVPTX };
enum class Emit { Transformer, Linalg, Buffers, LLVMMLIR, LLVMIR, Asm, Obj };

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
cl::opt<Emit>
    emit("emit", cl::desc("Stage to stop at"), cl::init(Emit::Obj),
         cl::values(
             clEnumValN(Emit::Transformer, "transformer",
                        "parsed and verified transformer dialect"),
             clEnumValN(Emit::Linalg, "linalg", "linalg on tensors (stage 1)"),
             clEnumValN(Emit::Buffers, "buffers", "loops on buffers (stage 2)"),
             clEnumValN(Emit::LLVMMLIR, "llvm-mlir", "LLVM dialect (stage 3)"),
             clEnumValN(Emit::LLVMIR, "llvm-ir", "LLVM IR"),
             clEnumValN(Emit::Asm, "asm", "host assembly"),
             clEnumValN(Emit::Obj, "obj",
                        "host object file plus a C header (default)")),
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
cl::opt<unsigned> optLevel("O", cl::desc("LLVM optimisation level (0-3)"),
                           cl::init(3), cl::Prefix, cl::cat(category));
cl::opt<bool> dumpPipeline(
    "dump-pass-pipeline",
    cl::desc("Print the textual pass pipeline that -emit runs and exit"),
    cl::init(false), cl::cat(category));

int fail(const llvm::Twine &message) {
  llvm::WithColor::error(llvm::errs(), "blockc") << message << "\n";
  return 1;
}

/// Adds the pipeline stages that `emit` needs.
void buildPipeline(OpPassManager &pm) {
  if (emit >= Emit::Linalg)
    blockc::buildLowerToLinalgPipeline(pm);
  if (emit >= Emit::Buffers)
    blockc::buildCPUBufferizePipeline(pm);
  if (emit >= Emit::LLVMMLIR)
    blockc::buildCPULowerToLLVMPipeline(pm);
}

std::string defaultOutput() {
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
  cl::ParseCommandLineOptions(argc, argv,
                              "blockc: transformer block compiler\n");

  if (target == Target::NVPTX)
    return fail("-target=nvptx is not implemented yet; use -target=cpu");
  if (optLevel > 3)
    return fail("-O must be 0, 1, 2 or 3");

  DialectRegistry registry;
  blockc::registerAllDialects(registry);
  blockc::registerAllPasses();
  MLIRContext context(registry);
  // One line per error: do not append the offending op in generic form.
  context.printOpOnDiagnostic(false);

  PassManager pm(&context, ModuleOp::getOperationName());
  buildPipeline(pm);
  if (dumpPipeline) {
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

  // The entry point must be well formed before anything is compiled.
  FailureOr<blockc::ModelSignature> signature =
      blockc::analyzeModel(*module, entryName);
  if (failed(signature))
    return 1;

  std::string outPath = outputFile.empty() ? defaultOutput() : outputFile;
  if (emit == Emit::Obj && outPath == "-")
    return fail("-emit=obj needs an output file (-o)");

  if (failed(applyPassManagerCLOptions(pm)))
    return fail("invalid pass manager options");
  DefaultTimingManager tm;
  applyDefaultTimingManagerCLOptions(tm);
  TimingScope timing = tm.getRootScope();
  pm.enableTiming(timing);
  if (failed(pm.run(*module)))
    return 1;

  auto output = openOutputFile(outPath, &errorMessage);
  if (!output)
    return fail(errorMessage);

  if (emit <= Emit::LLVMMLIR) {
    module->print(output->os());
    output->os() << "\n";
    output->keep();
    return 0;
  }

  auto machine = blockc::createHostTargetMachine();
  if (!machine)
    return fail("cannot create the host target: " +
                llvm::toString(machine.takeError()));
  llvm::LLVMContext llvmContext;
  auto llvmModule =
      blockc::translateToLLVMIR(*module, llvmContext, **machine, optLevel);
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
    header->os() << blockc::emitCHeader(*signature,
                                        llvm::sys::path::filename(headerPath));
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
