//===- blockc-fuzz-ir.cpp - fuzz the parser and verifiers -----------------===//
//
// Arbitrary bytes parsed as MLIR with the transformer dialect (and every
// upstream dialect blockc uses) and verified. Parse and verification errors
// are expected; crashes and sanitizer reports are findings.
//
//===----------------------------------------------------------------------===//

#include "FuzzCommon.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Parser/Parser.h"

#include <cstddef>
#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  mlir::MLIRContext &ctx = blockc::fuzz::context();
  std::string text(reinterpret_cast<const char *>(data), size);
  mlir::ParserConfig config(&ctx, /*verifyAfterParse=*/true);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(text, config, "fuzz-input");
  (void)module;
  return 0;
}
