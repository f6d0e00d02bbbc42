//===- blockc-fuzz-hf-config.cpp - fuzz the config.json importer ----------===//
//
// Arbitrary bytes as a Hugging Face config.json; an imported model must
// verify. Rejections are expected; a crash, a sanitizer report or a model
// that fails verification is a finding.
//
//===----------------------------------------------------------------------===//

#include "FuzzCommon.h"

#include "blockc/Import/HFImport.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Verifier.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  mlir::MLIRContext &ctx = blockc::fuzz::context();
  llvm::StringRef text(reinterpret_cast<const char *>(data), size);
  blockc::ImportOptions options;
  options.layers = 1;
  auto module = blockc::importHFConfig(&ctx, text, "fuzz-config.json", options);
  if (!module) {
    llvm::consumeError(module.takeError());
    return 0;
  }
  if (mlir::failed(mlir::verify(module->get())))
    std::abort(); // the importer built invalid IR
  return 0;
}
