//===- PagedAttention.h - the sizes of a paged attention -------*- C++ -*-===//
//
// What the CPU and the NVPTX kernels of transformer.paged_sdpa read from
// its types alike.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKC_CODEGEN_COMMON_PAGEDATTENTION_H
#define BLOCKC_CODEGEN_COMMON_PAGEDATTENTION_H

#include "blockc/Dialect/Transformer/IR/TransformerOps.h"

namespace blockc {

/// The static sizes of a paged_sdpa: the query [1, total, H, D] and the
/// pools [pages, S, H_kv, D].
struct PagedSDPAShape {
  mlir::RankedTensorType queryType;
  int64_t heads;    // H
  int64_t headDim;  // D
  int64_t pageSize; // S, tokens per page
  int64_t group;    // H / H_kv, query heads per K/V head

  static PagedSDPAShape of(transformer::PagedSDPAOp op) {
    mlir::RankedTensorType q = op.getQuery().getType();
    mlir::RankedTensorType pool = op.getKeyPool().getType();
    return {q, q.getDimSize(2), q.getDimSize(3), pool.getDimSize(1),
            q.getDimSize(2) / pool.getDimSize(2)};
  }
};

} // namespace blockc

#endif // BLOCKC_CODEGEN_COMMON_PAGEDATTENTION_H
