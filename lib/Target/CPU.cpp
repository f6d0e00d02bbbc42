//===- CPU.cpp - LLVM IR, assembly and object emission for the host -------===//
//
// Translation and code generation are upstream (mlir::translateModuleToLLVMIR,
// the optimising transformer of the ExecutionEngine utilities and LLVM's
// legacy codegen pass manager); this file only wires them to the host.
//
//===----------------------------------------------------------------------===//

#include "blockc/Target/CPU.h"
#include "blockc/Support/Error.h"

#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Transforms/Scalar/LoopUnrollPass.h"

using namespace mlir;
using namespace blockc;

llvm::Expected<std::unique_ptr<llvm::TargetMachine>>
blockc::createHostTargetMachine(std::optional<llvm::Reloc::Model> relocModel,
                                const CPUCodegenTarget &target) {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  // Kernels may carry x86 inline asm (upstream's AVX2 transpose blends).
  llvm::InitializeNativeTargetAsmParser();
  auto builder = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!builder)
    return builder.takeError();
  if (!target.cpu.empty()) {
    // A fixed CPU model: none of the host's features.
    builder->setCPU(target.cpu);
    builder->getFeatures() = llvm::SubtargetFeatures();
  }
  for (const std::string &feature : target.features)
    builder->getFeatures().AddFeature(feature);
  builder->setCodeGenOptLevel(llvm::CodeGenOptLevel::Aggressive);
  builder->setRelocationModel(relocModel);
  return builder->createTargetMachine();
}

llvm::Expected<std::unique_ptr<llvm::Module>>
blockc::translateToLLVMIR(ModuleOp module, llvm::LLVMContext &llvmContext,
                          llvm::TargetMachine &tm, unsigned optLevel,
                          llvm::StringRef tuneCPU) {
  registerBuiltinDialectTranslation(*module.getContext());
  registerLLVMDialectTranslation(*module.getContext());
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(module, llvmContext);
  if (!llvmModule)
    return makeError("translation to LLVM IR failed");
  llvmModule->setDataLayout(tm.createDataLayout());
  llvmModule->setTargetTriple(tm.getTargetTriple());
  // The scheduling model and tuning follow tuneCPU in the optimiser's cost
  // models and in code generation alike.
  if (!tuneCPU.empty())
    for (llvm::Function &f : *llvmModule)
      if (!f.isDeclaration())
        f.addFnAttr("tune-cpu", tuneCPU);
  if (llvm::Error e = optimizeLLVMModule(*llvmModule, tm, optLevel))
    return std::move(e);
  return std::move(llvmModule);
}

namespace {
/// Whether an LLVM option (by name) was given on the command line.
bool givenOnCommandLine(llvm::StringRef name) {
  auto &options = llvm::cl::getRegisteredOptions();
  auto it = options.find(name);
  return it != options.end() && it->second->getNumOccurrences() > 0;
}
} // namespace

bool blockc::llvmUnrollsAsIs() {
  return givenOnCommandLine("unroll-allow-partial") ||
         givenOnCommandLine("unroll-runtime");
}

llvm::Error blockc::optimizeLLVMModule(llvm::Module &llvmModule,
                                       llvm::TargetMachine &tm,
                                       unsigned optLevel) {
  static const llvm::OptimizationLevel levels[] = {
      llvm::OptimizationLevel::O0, llvm::OptimizationLevel::O1,
      llvm::OptimizationLevel::O2, llvm::OptimizationLevel::O3};
  if (optLevel > 3)
    return makeError("invalid LLVM optimisation level " +
                     llvm::Twine(optLevel) + " (0-3)");
  llvm::OptimizationLevel level = levels[optLevel];
  llvm::PipelineTuningOptions tuning;
  tuning.LoopInterleaving = true;
  tuning.LoopVectorization = true;
  tuning.SLPVectorization = true;
  // The kernels' loops come register-tiled and unrolled: LLVM unrolls the
  // loops it can unroll fully, as at its -O2, but neither partially nor by
  // a runtime trip count, which about doubled the code that the rest of
  // the pipeline, loop strength reduction and instruction selection work
  // through (docs/Pipelines.md, "LLVM's part"). Either of LLVM's own
  // -unroll-allow-partial / -unroll-runtime on the command line brings
  // back LLVM's unrolling as it is.
  bool fullOnly = level != llvm::OptimizationLevel::O0 && !llvmUnrollsAsIs();
  tuning.LoopUnrolling = !fullOnly;
  llvm::PassBuilder pb(&tm, tuning);
  if (fullOnly) {
    // Where the default pipeline unrolls (with tuning.LoopUnrolling): at
    // the end of the loop simplifications, and after the vectorisers.
    int speedup = level.getSpeedupLevel();
    bool forget = tuning.ForgetAllSCEVInLoopUnroll;
    pb.registerLoopOptimizerEndEPCallback([=](llvm::LoopPassManager &lpm,
                                              llvm::OptimizationLevel) {
      lpm.addPass(
          llvm::LoopFullUnrollPass(speedup, /*OnlyWhenForced=*/false, forget));
    });
    pb.registerVectorizerEndEPCallback(
        [=](llvm::FunctionPassManager &fpm, llvm::OptimizationLevel) {
          fpm.addPass(llvm::LoopUnrollPass(
              llvm::LoopUnrollOptions(speedup, /*OnlyWhenForced=*/false, forget)
                  .setPartial(false)
                  .setRuntime(false)));
        });
  }
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::ModulePassManager mpm = pb.buildPerModuleDefaultPipeline(level);
  mpm.run(llvmModule, mam);
  return llvm::Error::success();
}

llvm::Error blockc::emitMachineCode(llvm::Module &llvmModule,
                                    llvm::TargetMachine &tm,
                                    llvm::CodeGenFileType kind,
                                    llvm::raw_pwrite_stream &os) {
  llvm::legacy::PassManager pm;
  // Assembly carries the backend's comments (spills and reloads marked
  // "Spill" / "Reload", loop headers), which the no-spill tests read.
  if (kind == llvm::CodeGenFileType::AssemblyFile)
    tm.Options.MCOptions.AsmVerbose = true;
  if (tm.addPassesToEmitFile(pm, os, nullptr, kind))
    return makeError("the host target cannot emit this file type");
  pm.run(llvmModule);
  return llvm::Error::success();
}
