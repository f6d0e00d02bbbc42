//===- CpuJit.h - compile and run a model on the host CPU -------*- C++ -*-===//
//
// Wraps mlir::ExecutionEngine: runs the CPU pipeline (the same builder
// functions as blockc), JIT-compiles for the host (AVX-512 when present) and
// invokes the C interface of the entry function with host tensors.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKC_EXECUTIONENGINE_CPUJIT_H
#define BLOCKC_EXECUTIONENGINE_CPUJIT_H

#include "blockc/ExecutionEngine/ModelSignature.h"
#include "blockc/Support/TensorFiles.h"

#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/Error.h"

#include <memory>

namespace blockc {

class CpuJit {
public:
  /// Lowers a clone of `module` with the CPU pipeline and JIT-compiles it.
  /// Pass-manager command-line options (--mlir-print-ir-after-all,
  /// --mlir-timing) apply. Pipeline errors are reported as diagnostics.
  static llvm::Expected<std::unique_ptr<CpuJit>>
  compile(mlir::ModuleOp module, const ModelSignature &signature,
          unsigned optLevel = 3);

  /// Runs the entry function: `args` in signature order (input first), the
  /// result written to `out`, whose shape must already be set.
  llvm::Error run(llvm::ArrayRef<const HostTensor *> args, HostTensor &out);

private:
  CpuJit() = default;
  std::unique_ptr<mlir::ExecutionEngine> engine;
  std::string entry;
};

} // namespace blockc

#endif // BLOCKC_EXECUTIONENGINE_CPUJIT_H
