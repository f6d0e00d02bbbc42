//===- Passes.h - blockc conversion passes ----------------------*- C++ -*-===//
//
// Declarations generated from Conversion/Passes.td.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKC_CONVERSION_PASSES_H
#define BLOCKC_CONVERSION_PASSES_H

#include "blockc/Conversion/TransformerToLinalg/TransformerToLinalg.h"

#include "mlir/Pass/Pass.h"

namespace blockc {

#define GEN_PASS_DECL
#include "blockc/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "blockc/Conversion/Passes.h.inc"

} // namespace blockc

#endif // BLOCKC_CONVERSION_PASSES_H
