//===- CPU.h - LLVM IR, assembly and object emission for the host -*- C++ -*-=//
//
// Translation of the LLVM-dialect module produced by the CPU pipeline to
// LLVM IR, host assembly and host object files (the C header that declares
// an object's entry points: Target/CHeader.h).
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKC_TARGET_CPU_H
#define BLOCKC_TARGET_CPU_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/CodeGen.h"
#include "llvm/Support/Error.h"
#include "llvm/Target/TargetMachine.h"

#include <memory>
#include <optional>
#include <string>

namespace blockc {

/// The x86 CPU that code is generated for. Code shaped for a pinned ISA is
/// generated for a fixed CPU model, never the compiling machine's, so that
/// the same module gives the same machine code on every host: `cpu` names
/// the ISA level and `tuneCPU` the scheduling model and tuning, both from
/// the ISA table (CPUISAInfo, Target/CPUISA.h). Only isa=host uses the
/// host's CPU and features (both empty).
struct CPUCodegenTarget {
  /// LLVM CPU name; empty: the host's, with the host's features.
  std::string cpu;
  /// The CPU whose scheduling model and tuning the code follows (the
  /// "tune-cpu" function attribute); empty: `cpu`'s.
  std::string tuneCPU;
  /// "+f" / "-f" features applied after the CPU's (e.g. "-avx512f").
  llvm::SmallVector<std::string> features;
};

/// A target machine for `target` on the host's architecture, generating
/// code at the aggressive optimisation level. Objects are
/// position-independent by default (they may be linked into PIE
/// executables); the JIT passes std::nullopt, the target's default model.
llvm::Expected<std::unique_ptr<llvm::TargetMachine>> createHostTargetMachine(
    std::optional<llvm::Reloc::Model> relocModel = llvm::Reloc::PIC_,
    const CPUCodegenTarget &target = {});

/// Translates an LLVM-dialect module to LLVM IR for `tm` and optimises it at
/// `optLevel` (0-3). A non-empty `tuneCPU` (CPUCodegenTarget::tuneCPU) is
/// set as every function's "tune-cpu" before optimisation.
llvm::Expected<std::unique_ptr<llvm::Module>>
translateToLLVMIR(mlir::ModuleOp module, llvm::LLVMContext &llvmContext,
                  llvm::TargetMachine &tm, unsigned optLevel,
                  llvm::StringRef tuneCPU = "");

/// LLVM's default pipeline at `optLevel` (0-3) for `tm`, except that loops
/// are unrolled only fully (blockc's kernels come unrolled): neither
/// partially nor by a runtime trip count, unless LLVM's -unroll-allow-partial
/// or -unroll-runtime was given.
llvm::Error optimizeLLVMModule(llvm::Module &llvmModule,
                               llvm::TargetMachine &tm, unsigned optLevel);

/// Whether LLVM's -unroll-allow-partial or -unroll-runtime was given: then
/// optimizeLLVMModule unrolls as LLVM's default pipeline does.
bool llvmUnrollsAsIs();

/// Emits assembly or an object file for `llvmModule`.
llvm::Error emitMachineCode(llvm::Module &llvmModule, llvm::TargetMachine &tm,
                            llvm::CodeGenFileType kind,
                            llvm::raw_pwrite_stream &os);

} // namespace blockc

#endif // BLOCKC_TARGET_CPU_H
