//===- CPU.cpp - LLVM IR, assembly and object emission for the host -------===//
//
// Translation and code generation are upstream (mlir::translateModuleToLLVMIR,
// the optimising transformer of the ExecutionEngine utilities and LLVM's
// legacy codegen pass manager); this file only wires them to the host.
//
//===----------------------------------------------------------------------===//

#include "blockc/Target/CPU.h"
#include "blockc/Support/Error.h"

#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"

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
  auto transformer = makeOptimizingTransformer(optLevel, 0, &tm);
  if (llvm::Error e = transformer(llvmModule.get()))
    return std::move(e);
  return std::move(llvmModule);
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
