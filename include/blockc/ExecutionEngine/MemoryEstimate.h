//===- MemoryEstimate.h - the host memory a run needs -----------*- C++ -*-===//
//
// What a JIT run of a model needs in f32 host memory (weights, input and
// output, the largest block's live intermediates, KV caches), so that a
// driver can refuse a run that would not fit before anything large is
// allocated, and the memory the host has available.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKC_EXECUTIONENGINE_MEMORYESTIMATE_H
#define BLOCKC_EXECUTIONENGINE_MEMORYESTIMATE_H

#include "blockc/Analysis/ModelSignature.h"

#include "llvm/Support/Error.h"

#include <cstdint>

namespace blockc {

/// Bytes, by kind.
struct MemoryEstimate {
  double weights = 0, activations = 0, io = 0, kvCaches = 0;
  double total() const { return weights + activations + io + kvCaches; }
};

/// The memory of a run over `batch` sequences of `seqLen` tokens plus
/// `steps` decode steps, with KV caches of `cacheLen` tokens (0: none). The
/// activations are an estimate: per token, 6 d + 2 (H + H_kv) D + 3 d_ff
/// floats of one block (blocks run one after the other; attention keeps no
/// T x T matrix), and at least 8 d.
MemoryEstimate estimateMemory(const ModelSignature &signature, int64_t batch,
                              int64_t seqLen, int64_t steps, int64_t cacheLen);

/// Bytes of memory available to this process: MemAvailable from
/// /proc/meminfo (free memory plus reclaimable caches), else 0 (unknown).
double getAvailableMemory();

/// Refuses, before anything large is allocated, a run (as estimateMemory)
/// whose buffers would not fit in the memory available: the error names
/// the estimate's parts and the memory available.
llvm::Error checkMemoryFits(const ModelSignature &signature, int64_t batch,
                            int64_t seqLen, int64_t steps, int64_t cacheLen);

} // namespace blockc

#endif // BLOCKC_EXECUTIONENGINE_MEMORYESTIMATE_H
