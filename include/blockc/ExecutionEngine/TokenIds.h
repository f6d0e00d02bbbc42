//===- TokenIds.h - token id tensors for causal language models -*- C++ -*-===//
//
// The input of a causal language model's entry is token ids [B, T] (i32).
// On the host they are a HostTensor of 4-byte elements whose `data` holds
// each id's int32 bits (elementType F32, as prepared I32 words load): the
// entry's i32 buffer as it is, passed without conversion. Ids are read from
// int32 or int64 .npy files (int64 converted with a range check) and checked
// against the vocabulary before any run.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKC_EXECUTIONENGINE_TOKENIDS_H
#define BLOCKC_EXECUTIONENGINE_TOKENIDS_H

#include "blockc/Analysis/ModelSignature.h"
#include "blockc/ExecutionEngine/WeightBinding.h"
#include "blockc/Support/TensorFiles.h"

#include "llvm/Support/Error.h"

#include <cstdint>

namespace blockc {

/// Element `i` (row-major) of a token id tensor.
int32_t getTokenId(const HostTensor &ids, int64_t i);
/// Sets element `i` of a token id tensor.
void setTokenId(HostTensor &ids, int64_t i, int32_t id);
/// A zeroed token id tensor of `shape`.
HostTensor makeTokenIds(std::vector<int64_t> shape);

/// Reads a C-order .npy file of int32 or int64 ids of shape [B, T]; int64
/// ids outside the int32 range are an error naming the first.
llvm::Expected<HostTensor> readTokenIdsNpy(llvm::StringRef path);

/// Writes a token id tensor as an int32 .npy file (atomically, as
/// writeNpy).
llvm::Error writeTokenIdsNpy(llvm::StringRef path, const HostTensor &ids);

/// Checks that every id lies in [0, vocab); the error names `what` (the
/// file), the first bad id and its position.
llvm::Error checkTokenIds(const HostTensor &ids, int64_t vocab,
                          llvm::StringRef what);

/// Columns [t0, t0 + n) of every row of token ids [B, T].
HostTensor sliceTokenIds(const HostTensor &ids, int64_t t0, int64_t n);

/// loadModelInput for an entry that takes token ids: the file's ids, or
/// random ids in [0, vocab) of [batch or 1, seqLen or 16]; `checkSize` sees
/// B and T first.
llvm::Expected<ModelInput>
loadTokenInput(const ModelSignature &signature, const InputRequest &request,
               llvm::function_ref<llvm::Error(int64_t, int64_t)> checkSize);

} // namespace blockc

#endif // BLOCKC_EXECUTIONENGINE_TOKENIDS_H
