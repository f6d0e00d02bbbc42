//===- FuzzCommon.h - shared set-up of the blockc fuzz targets --*- C++ -*-===//
//
// One MLIRContext per process with every blockc dialect loaded, and
// diagnostics swallowed: an input that is rejected with an error is a
// correct outcome, only a crash, a sanitizer report or a hang is a finding.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKC_FUZZ_FUZZCOMMON_H
#define BLOCKC_FUZZ_FUZZCOMMON_H

#include "blockc/InitAllDialects.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"

namespace blockc::fuzz {

inline mlir::MLIRContext &context() {
  static mlir::MLIRContext *ctx = [] {
    // The pipelines are textual lists of registered passes.
    blockc::registerAllPasses();
    mlir::DialectRegistry registry;
    blockc::registerAllDialects(registry);
    auto *c =
        new mlir::MLIRContext(registry, mlir::MLIRContext::Threading::DISABLED);
    c->loadAllAvailableDialects();
    c->getDiagEngine().registerHandler([](mlir::Diagnostic &) {});
    return c;
  }();
  return *ctx;
}

} // namespace blockc::fuzz

#endif // BLOCKC_FUZZ_FUZZCOMMON_H
