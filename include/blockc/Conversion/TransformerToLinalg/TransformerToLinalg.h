//===- TransformerToLinalg.h - transformer to linalg ------------*- C++ -*-===//
//
// Entry point for the patterns that lower primitive transformer ops to
// linalg on tensors.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKC_CONVERSION_TRANSFORMERTOLINALG_TRANSFORMERTOLINALG_H
#define BLOCKC_CONVERSION_TRANSFORMERTOLINALG_TRANSFORMERTOLINALG_H

namespace mlir {
class RewritePatternSet;
} // namespace mlir

namespace blockc {

/// Adds the patterns that rewrite each primitive transformer op into
/// linalg/tensor/arith/math ops on tensors.
void populateTransformerToLinalgPatterns(mlir::RewritePatternSet &patterns);

} // namespace blockc

#endif // BLOCKC_CONVERSION_TRANSFORMERTOLINALG_TRANSFORMERTOLINALG_H
