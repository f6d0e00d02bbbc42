//===- PagedSDPA.h - the CPU kernel of transformer.paged_sdpa ---*- C++ -*-===//
//
// Built by blockc-cpu-lower-sdpa (LowerSDPA.cpp) for every paged_sdpa;
// LowerPagedSDPA.cpp describes the kernel.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKC_LIB_CODEGEN_CPU_PAGEDSDPA_H
#define BLOCKC_LIB_CODEGEN_CPU_PAGEDSDPA_H

#include "blockc/Dialect/Transformer/IR/TransformerOps.h"

#include "mlir/IR/PatternMatch.h"

namespace blockc::cpu {

/// Replaces `op` by its CPU kernel (an scf.forall over sequences x query
/// heads on tensors).
void lowerPagedSDPA(transformer::PagedSDPAOp op, mlir::RewriterBase &rewriter);

} // namespace blockc::cpu

#endif // BLOCKC_LIB_CODEGEN_CPU_PAGEDSDPA_H
