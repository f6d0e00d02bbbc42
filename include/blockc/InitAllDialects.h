//===- InitAllDialects.h - register every dialect blockc uses ---*- C++ -*-===//
//
// One registration point for all tools, so that blockc, blockc-opt and
// blockc-run parse and run exactly the same IR.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKC_INITALLDIALECTS_H
#define BLOCKC_INITALLDIALECTS_H

namespace mlir {
class DialectRegistry;
class MLIRContext;
} // namespace mlir

namespace blockc {

/// Registers the blockc dialects, the upstream dialects the pipelines produce
/// and their external interface models (bufferization, LLVM translation).
void registerAllDialects(mlir::DialectRegistry &registry);

/// Registers every blockc pass and pipeline with the global registry.
void registerAllPasses();

} // namespace blockc

#endif // BLOCKC_INITALLDIALECTS_H
